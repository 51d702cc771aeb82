"""``pointwise-conv1d-as-matmul`` and ``transposed-product``: a 1x1 (grouped) Conv1d is a
group-batched channels-last MatMul that computes the convolution's numbers (graph level
and onnxruntime); a SqueezeBERT-style block (transpose, grouped 1x1 convs, residual,
LayerNorm over channels) then runs with no transpose kernel; convolutions that are not
pointwise stay."""

from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from xdsl.dialects.builtin import ModuleOp

from tilegraph.builder import GraphBuilder
from tilegraph.dialects.graph.constant_ops import ConstantOp
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.shape_ops import TransposeOp
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.runtime import run_reference
from tilegraph.runtime.compiled import compile as compile_model

RNG = np.random.default_rng(25)
RULE = "algebraic-simplify{only=pointwise-conv1d-as-matmul},dce"


def _ops(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


def _conv(shape: list[int | str], m: int, group: int, bias: bool, **attrs) -> ModuleOp:
    """The convolution of ``shape`` ``[N, C, L]`` data transposed in from a channels-last
    input ``x`` ``[N, L, C]`` (what the rule takes: the transposes then meet)."""
    b = GraphBuilder()
    rows = b.input("x", [shape[0], shape[2], shape[1]])
    x = b.op("transpose", rows, perm=[0, 2, 1])
    c = int(shape[1])
    w = b.constant(RNG.standard_normal((m, c // group, 1)).astype(np.float32))
    bv = b.constant(RNG.standard_normal(m).astype(np.float32)) if bias else None
    return b.build(b.op("conv", x, w, bv, group=group, **attrs))


@pytest.mark.parametrize(
    ("shape", "m", "group", "bias"),
    [
        ([2, 8, 5], 12, 1, True),
        ([2, 8, 5], 12, 4, True),
        ([2, 8, 5], 8, 8, False),  # depthwise-like: one channel a group
        (["n", 8, "l"], 12, 4, True),  # symbolic batch and length
        (["n", 16, "l"], 4, 1, False),
    ],
)
def test_a_pointwise_conv1d_is_a_matmul_with_the_convs_numbers(shape, m, group, bias):
    module = _conv(shape, m, group, bias, kernel_shape=[1])
    x = RNG.standard_normal((2, 5, int(shape[1]))).astype(np.float32)
    (want,) = run_reference(module, {"x": x})
    run_pipeline(RULE, make_context(), module)
    module.verify()
    ops = _ops(module)
    assert ops["graph.conv"] == 0 and ops["graph.matmul"] == 1
    (got,) = run_reference(module, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("form", ["transposed-out", "one-position"])
def test_a_pointwise_conv1d_whose_transposes_cancel_or_are_views_is_a_matmul(form: str):
    """Channels-first data in, but the result only transposed back to channels-last (a
    Conformer convolution module's last pointwise convolution), or one position (L = 1:
    silero's last convolution; the transposes move a size-1 dim): the rule fires."""
    b = GraphBuilder()
    length = 1 if form == "one-position" else 6
    x = b.op("relu", b.input("x", [2, 8, length]))
    w = b.constant(RNG.standard_normal((4, 8, 1)).astype(np.float32))
    y = b.op("conv", x, w, kernel_shape=[1])
    module = b.build(b.op("transpose", y, perm=[0, 2, 1]) if form == "transposed-out" else y)
    run_pipeline(RULE, make_context(), module)
    assert _ops(module)["graph.conv"] == 0 and _ops(module)["graph.matmul"] == 1


def test_a_pointwise_conv1d_of_channels_first_data_stays():
    """Data that is not transposed in (a 1x1 convolution between wider ones, as in DAC's
    and silero's encoders): its transposes would meet nothing, so it stays a convolution
    (conv-forms runs it on the cube in NC1HWC0 beside its neighbours)."""
    b = GraphBuilder()
    x = b.op("relu", b.input("x", [2, 8, 6]))
    w = b.constant(RNG.standard_normal((4, 8, 1)).astype(np.float32))
    module = b.build(b.op("conv", x, w, kernel_shape=[1]))
    run_pipeline(RULE, make_context(), module)
    assert _ops(module)["graph.conv"] == 1 and _ops(module)["graph.matmul"] == 0


@pytest.mark.parametrize(
    ("attrs", "why"),
    [
        ({"kernel_shape": [3], "pads": [1, 1]}, "a window of three"),
        ({"kernel_shape": [1], "strides": [2]}, "a stride"),
        ({"kernel_shape": [1], "pads": [1, 0]}, "padding"),
    ],
)
def test_convolutions_that_are_not_pointwise_stay(attrs, why):
    b = GraphBuilder()
    x = b.input("x", [2, 8, 6])
    k = attrs["kernel_shape"][0]
    w = b.constant(RNG.standard_normal((4, 8, k)).astype(np.float32))
    module = b.build(b.op("conv", x, w, **attrs))
    run_pipeline(RULE, make_context(), module)
    assert _ops(module)["graph.conv"] == 1, why


def _squeezebert_block(c: int = 32, groups: int = 4) -> onnx.ModelProto:
    """x [B, S, C] -> Transpose -> grouped 1x1 Conv -> Relu -> grouped 1x1 Conv + the
    transposed input -> Transpose -> LayerNorm: SqueezeBERT's channels-first feed-forward
    (its intermediate and output groups are equal: the first product's group merge and the
    second's group split cancel)."""
    w1 = RNG.standard_normal((2 * c, c // groups, 1)).astype(np.float32) / 4
    w2 = RNG.standard_normal((c, 2 * c // groups, 1)).astype(np.float32) / 8
    b1, b2 = (RNG.standard_normal(n).astype(np.float32) for n in (2 * c, c))
    scale, shift = np.ones(c, np.float32), np.zeros(c, np.float32)
    inits = [
        onnx.numpy_helper.from_array(a, n)
        for a, n in ((w1, "w1"), (w2, "w2"), (b1, "b1"), (b2, "b2"), (scale, "g"), (shift, "s"))
    ]
    nodes = [
        helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
        helper.make_node("Conv", ["xt", "w1", "b1"], ["h"], group=groups, kernel_shape=[1]),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Conv", ["r", "w2", "b2"], ["o"], group=groups, kernel_shape=[1]),
        helper.make_node("Add", ["o", "xt"], ["sum"]),
        helper.make_node("Transpose", ["sum"], ["st"], perm=[0, 2, 1]),
        helper.make_node("LayerNormalization", ["st", "g", "s"], ["y"], axis=-1),
    ]
    graph = helper.make_graph(
        nodes,
        "block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 11, c])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 11, c])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_squeezebert_block_runs_without_transposes_and_matches_onnxruntime():
    import onnxruntime as ort

    model = _squeezebert_block()
    x = RNG.standard_normal((3, 11, 32)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = np.asarray(session.run(None, {"x": x})[0])
    compiled = compile_model(model, platform="ascend910b")
    (got,) = compiled.run({"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    ops = Counter(op for k in compiled.kernels for op in k.ops)
    assert ops["graph.conv2d"] == 0 and ops["graph.matmul"] == 2
    assert ops["graph.squeeze"] == ops["graph.unsqueeze"] == 0
    # the transposes around the products cancel or are views the products read; one
    # movement kernel is left: the second product's group merge, which its bias add
    # keeps from being a view of its result
    movers = [k for k in compiled.kernels if set(k.ops) <= {"graph.transpose", "graph.reshape"}]
    assert len(movers) == 1, [k.ops for k in compiled.kernels]
    # ReLU in the first product's epilogue, the merge, the adds, the LayerNorm
    assert len(compiled.kernels) == 5, [k.ops for k in compiled.kernels]


def test_a_key_read_transposed_is_the_channels_first_product():
    """``transposed-product``: Transpose(MatMul(x, W) + b) read by a matmul becomes
    MatMul(Wᵀ, Transpose(x)) + bᵀ, with the same numbers."""
    b = GraphBuilder()
    x, q = b.input("x", [2, 5, 8]), b.input("q", [2, 7, 6])
    w = b.constant(RNG.standard_normal((8, 6)).astype(np.float32))
    bias = b.constant(RNG.standard_normal(6).astype(np.float32))
    product = b.op("add", b.op("matmul", x, w), bias)
    key = b.op("transpose", product, perm=[0, 2, 1])  # [2, 6, 5]
    module = b.build(b.op("matmul", q, key))
    inputs = {"x": RNG.standard_normal((2, 5, 8)).astype(np.float32),
              "q": RNG.standard_normal((2, 7, 6)).astype(np.float32)}  # fmt: skip
    (want,) = run_reference(module, inputs)
    run_pipeline("algebraic-simplify{only=transposed-product},dce", make_context(), module)
    module.verify()
    (got,) = run_reference(module, inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    products = [op for op in module.walk() if isinstance(op, MatMulOp)]
    flipped = [op for op in products if isinstance(op.lhs.owner, ConstantOp)]
    assert len(flipped) == 1 and isinstance(flipped[0].rhs.owner, TransposeOp)
