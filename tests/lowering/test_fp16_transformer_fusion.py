"""An fp16 transformer layer fuses as its fp32 twin does (issue 25: ≤ 12 kernels a layer).

One pre-norm encoder layer (LayerNorm, Q / K / V projections, a head split by
Reshape / Transpose, ``softmax(Q·Kᵀ / sqrt(d))·V``, the head merge, the output projection,
a residual, LayerNorm, fc1, the erf GELU spelled out as PyTorch exports it, fc2, a
residual), built with ``onnx.helper`` in float32 and in float16 (a ``.half()`` export:
every tensor and constant fp16, sqrt 2 held as 1.4140625, the scale as fp16's sqrt(d)).
The fp16 layer lowers to as many kernels as the fp32 one on ascend910b (one flash
attention kernel, the GELU in fc1's epilogue) and ascend310p, and its tiles match the
graph on both executors and onnxruntime within fp16's tolerance (``--compare``'s).
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx.helper as oh
import pytest
from onnx import TensorProto, numpy_helper

from tests.lowering.test_tile_differential import assert_matches, run_levels
from tilegraph.frontend import load_onnx
from tilegraph.frontend.onnxruntime_oracle import tolerance

SEQ, HIDDEN, HEADS, FFN = 17, 32, 4, 64
HEAD_DIM = HIDDEN // HEADS


def _layer(dtype: type[np.floating], seed: int = 0) -> onnx.ModelProto:
    """The layer over ``x`` [1, SEQ, HIDDEN] in ``dtype`` (the module docstring)."""
    rng = np.random.default_rng(seed)
    elem = TensorProto.FLOAT16 if dtype == np.float16 else TensorProto.FLOAT
    inits: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def const(name: str, value) -> str:
        array = np.asarray(value)
        if array.dtype.kind == "f":
            array = array.astype(dtype)
        inits.append(numpy_helper.from_array(array, name))
        return name

    def node(op: str, inputs: list[str], name: str, **attrs) -> str:
        nodes.append(oh.make_node(op, inputs, [name], name=name, **attrs))
        return name

    def weight(name: str, shape: tuple[int, ...]) -> str:
        return const(name, rng.standard_normal(shape) / np.sqrt(shape[0]))

    def linear(x: str, name: str, k: int, n: int) -> str:
        y = node("MatMul", [x, weight(f"{name}.w", (k, n))], f"{name}.mm")
        return node("Add", [const(f"{name}.b", rng.standard_normal(n) * 0.1), y], name)

    def norm(x: str, name: str) -> str:
        gamma = const(f"{name}.g", 1 + 0.1 * rng.standard_normal(HIDDEN))
        beta = const(f"{name}.b", 0.1 * rng.standard_normal(HIDDEN))
        return node("LayerNormalization", [x, gamma, beta], name, axis=-1, epsilon=1e-5)

    split = const("split_shape", np.array([1, SEQ, HEADS, HEAD_DIM], np.int64))
    merge = const("merge_shape", np.array([1, SEQ, HIDDEN], np.int64))

    def heads(x: str, name: str, perm: list[int]) -> str:
        return node("Transpose", [node("Reshape", [x, split], f"{name}.r")], name, perm=perm)

    h = norm("x", "ln1")
    q = heads(linear(h, "q", HIDDEN, HIDDEN), "qh", [0, 2, 1, 3])
    k = heads(linear(h, "k", HIDDEN, HIDDEN), "kh", [0, 2, 3, 1])
    v = heads(linear(h, "v", HIDDEN, HIDDEN), "vh", [0, 2, 1, 3])
    s = node("Div", [node("MatMul", [q, k], "qk"), const("scale", np.sqrt(HEAD_DIM))], "s")
    o = node("MatMul", [node("Softmax", [s], "p", axis=-1), v], "pv")
    o = node("Reshape", [node("Transpose", [o], "ot", perm=[0, 2, 1, 3]), merge], "om")
    x1 = node("Add", ["x", linear(o, "out", HIDDEN, HIDDEN)], "res1")
    f = linear(norm(x1, "ln2"), "fc1", HIDDEN, FFN)
    erf = node("Erf", [node("Div", [f, const("sqrt2", np.sqrt(2.0))], "gd")], "ge")
    g = node("Mul", [node("Mul", [f, node("Add", [erf, const("one", 1.0)], "g1")], "gm")], "g")
    nodes[-1].input.append(const("half", 0.5))
    y = node("Add", [x1, linear(g, "fc2", FFN, HIDDEN)], "y")
    graph = oh.make_graph(
        nodes,
        "layer",
        [oh.make_tensor_value_info("x", elem, [1, SEQ, HIDDEN])],
        [oh.make_tensor_value_info(y, elem, [1, SEQ, HIDDEN])],
        inits,
    )
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])


def _lowered(dtype: type[np.floating], platform: str):
    model = _layer(dtype)
    x = np.random.default_rng(1).standard_normal((1, SEQ, HIDDEN)).astype(dtype)
    return model, x, run_levels(load_onnx(model), {"x": x}, platform)


@pytest.mark.parametrize("platform", ["ascend910b", "ascend310p"])
def test_fp16_layer_lowers_to_the_kernels_of_fp32(platform: str):
    _, _, fp32 = _lowered(np.float32, platform)
    model, x, fp16 = _lowered(np.float16, platform)
    units = [k.unit for k in fp16.tiled_kernels]
    assert "host" not in units, [(k.name, k.reason) for k in fp16.tiled_kernels]
    assert len(fp16.tiled_kernels) == len(fp32.tiled_kernels), (
        [k.name for k in fp16.tiled_kernels],
        [k.name for k in fp32.tiled_kernels],
    )
    assert len(fp16.tiled_kernels) <= 12
    ops = [k.ops for k in fp16.tiled_kernels]
    assert any("graph.gelu" in o and "graph.matmul" in o for o in ops), ops
    if platform == "ascend910b":  # the attention is one flash (mix) kernel
        flash = [
            k
            for k in fp16.tiled_kernels
            if "graph.softmax" in k.ops and k.ops.count("graph.matmul") == 2
        ]
        assert len(flash) == 1 and flash[0].unit == "mix", ops
    # the tiles against the graph (both executors), the graph against onnxruntime
    assert_matches(fp16, rtol=1e-2, atol=4e-3)
    import onnxruntime as ort

    (out,) = ort.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    ).run(None, {"x": x})
    theirs = np.asarray(out)
    rtol, atol = tolerance(theirs)
    for level, (ours,) in fp16.outputs.items():
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, err_msg=level)
