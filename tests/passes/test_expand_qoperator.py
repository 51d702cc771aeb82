"""``expand-qoperator`` and ``fold-integer-ops`` (:mod:`tilegraph.passes.expand_qoperator`,
:mod:`tilegraph.passes.fold_integer_ops`): QLinearConv / QLinearMatMul become the QDQ
pattern ``fold-qdq`` folds, DynamicQuantizeLinear its function body, ``Cast(MatMulInteger)``
/ ``Cast(ConvInteger)`` int8 cube ops; per op: shapes, zero points (constant, run-time,
uint8), per-channel scales; the graph level against onnxruntime, and the tiled path (no
host op) on both executors."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import tilegraph
from tilegraph.dialects.graph.quantized_cube import QuantConv2dOp
from tilegraph.frontend import load_onnx
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.statistics import collecting_statistics
from tilegraph.runtime.reference import run_reference

RNG = np.random.default_rng(5)


def _model(nodes, inputs, arrays, opset: int = 13) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "q",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(a, n) for n, a in arrays.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def qlinear_conv(
    x_type: type = np.int8, x_zero: int = 5, per_channel: bool = True, pads: int = 1
) -> onnx.ModelProto:
    """Q -> QLinearConv(w int8 [24, 20, 3, 3], int32 bias) -> DQ on [1, 20, 7, 7]."""
    m = 24
    w_scale = (RNG.uniform(0.5, 1.5, m if per_channel else 1) * 0.01).astype(np.float32)
    x_scale = np.float32(0.05)
    arrays = {
        "x_scale": np.array(x_scale),
        "x_zero": np.array(x_zero, x_type),
        "w": RNG.integers(-127, 128, (m, 20, 3, 3)).astype(np.int8),
        "w_scale": w_scale if per_channel else w_scale.reshape(()),
        "w_zero": np.zeros(m if per_channel else (), np.int8),
        "y_scale": np.array(np.float32(0.3)),
        "y_zero": np.array(-3 if x_type == np.int8 else 120, x_type),
        "b": RNG.integers(-3000, 3000, m).astype(np.int32),
    }
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["xq"]),
        helper.make_node(
            "QLinearConv",
            ["xq", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale", "y_zero", "b"],
            ["yq"],
            kernel_shape=[3, 3],
            pads=[pads] * 4,
        ),
        helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zero"], ["y"]),
    ]
    return _model(nodes, [("x", TensorProto.FLOAT, [1, 20, 7, 7])], arrays)


def qlinear_matmul(x_type: type = np.uint8, per_column: bool = True) -> onnx.ModelProto:
    """Q -> QLinearMatMul(int8 b [40, 24]) -> DQ on [2, 5, 40]."""
    n = 24
    b_scale = (RNG.uniform(0.5, 1.5, n if per_column else 1) * 0.01).astype(np.float32)
    arrays = {
        "a_scale": np.array(np.float32(0.05)),
        "a_zero": np.array(131 if x_type == np.uint8 else -9, x_type),
        "b": RNG.integers(-127, 128, (40, n)).astype(np.int8),
        "b_scale": b_scale if per_column else b_scale.reshape(()),
        "b_zero": np.zeros(n if per_column else (), np.int8),
        "y_scale": np.array(np.float32(0.2)),
        "y_zero": np.array(100 if x_type == np.uint8 else 4, x_type),
    }
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "a_scale", "a_zero"], ["xq"]),
        helper.make_node(
            "QLinearMatMul",
            ["xq", "a_scale", "a_zero", "b", "b_scale", "b_zero", "y_scale", "y_zero"],
            ["yq"],
        ),
        helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zero"], ["y"]),
    ]
    return _model(nodes, [("x", TensorProto.FLOAT, [2, 5, 40])], arrays)


def dynamic_matmul(w_zero: int = 0, k: int = 40) -> onnx.ModelProto:
    """quantize_dynamic's pattern: DynamicQuantizeLinear -> MatMulInteger(int8 w [k, 24])
    -> Cast -> Mul(x_scale · w_scale) on [2, 5, k]."""
    arrays = {
        "w": RNG.integers(-100, 101, (k, 24)).astype(np.int8),
        "w_zero": np.array(w_zero, np.int8),
        "w_scale": np.array(np.float32(0.01)),
    }
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
        helper.make_node("Mul", ["xs", "w_scale"], ["s"]),
        helper.make_node("MatMulInteger", ["xq", "w", "xz", "w_zero"], ["acc"]),
        helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["accf", "s"], ["y"]),
    ]
    return _model(nodes, [("x", TensorProto.FLOAT, [2, 5, k])], arrays)


def conv_integer(x_zero: int | None, pads: int) -> onnx.ModelProto:
    """Q (uint8) -> ConvInteger(int8 w [16, 8, 3, 3]) -> Cast -> Mul on [1, 8, 6, 6]; the
    zero point a constant (``x_zero``) or DynamicQuantizeLinear's (None)."""
    arrays = {
        "w": RNG.integers(-100, 101, (16, 8, 3, 3)).astype(np.int8),
        "w_zero": np.array(0, np.int8),
        "scale": np.array(np.float32(0.002)),
    }
    if x_zero is None:
        nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"])]
    else:
        arrays |= {"xs": np.array(np.float32(0.04)), "xz": np.array(x_zero, np.uint8)}
        nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"])]
    nodes += [
        helper.make_node(
            "ConvInteger",
            ["xq", "w", "xz", "w_zero"],
            ["acc"],
            kernel_shape=[3, 3],
            pads=[pads] * 4,
        ),  # fmt: skip
        helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["accf", "scale"], ["y"]),
    ]
    return _model(nodes, [("x", TensorProto.FLOAT, [1, 8, 6, 6])], arrays)


def _optimised(model: onnx.ModelProto, precision: str = "int8"):
    module = load_onnx(model)
    with collecting_statistics() as stats:
        run_pipeline(
            f"set-target{{platform=ascend910b precision={precision}}},O2", make_context(), module
        )
    module.verify()
    return module, [op.name for op in module.walk()], stats


def _input(model: onnx.ModelProto) -> np.ndarray:
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    return (np.random.default_rng(1).standard_normal(shape) * 2).astype(np.float32)


def _onnxruntime(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    return np.asarray(ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0])


def _check(model: onnx.ModelProto, atol: float, tiles: bool = True) -> None:
    """The optimised graph, and the tiled model on both executors, against onnxruntime."""
    x = _input(model)
    theirs = _onnxruntime(model, x)
    module, _, _ = _optimised(model)
    (ours,) = run_reference(module, [x])
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=atol)
    if not tiles:
        return
    for executor in ("fast", "interpret"):
        compiled = tilegraph.compile(model, precision="int8", executor=executor)
        assert not compiled.host_ops
        (ours,) = compiled(x=x)
        np.testing.assert_allclose(np.asarray(ours), theirs, rtol=0, atol=atol)


@pytest.mark.parametrize(
    ("x_type", "x_zero", "per_channel", "pads"),
    [(np.int8, 5, True, 1), (np.int8, 0, False, 0), (np.uint8, 140, True, 1)],
    ids=["int8_zp5_per_channel", "int8_symmetric_per_tensor_unpadded", "uint8_zp140"],
)
def test_qlinear_conv_becomes_the_folded_qdq_pattern(x_type, x_zero, per_channel, pads):
    """One QLinearConv -> one ``graph.quant_conv2d`` (fold-qdq folds the expansion); the
    result is onnxruntime's within one output step (0.3): QDQ rounds twice."""
    model = qlinear_conv(x_type, x_zero, per_channel, pads)
    _, names, stats = _optimised(model)
    assert "graph.qlinear_conv" not in names and names.count("graph.quant_conv2d") == 1
    assert stats.for_pass("expand-qoperator").counters["expanded-qlinear-convs"] == 1
    assert stats.for_pass("fold-qdq").counters["folded-convs"] == 1
    _check(model, atol=0.3 + 1e-6)


@pytest.mark.parametrize(
    ("x_type", "per_column"), [(np.uint8, True), (np.int8, False)], ids=["uint8", "int8"]
)
def test_qlinear_matmul_becomes_the_folded_qdq_pattern(x_type, per_column):
    model = qlinear_matmul(x_type, per_column)
    _, names, stats = _optimised(model)
    assert "graph.qlinear_matmul" not in names and names.count("graph.quant_matmul") == 1
    assert stats.for_pass("expand-qoperator").counters["expanded-qlinear-matmuls"] == 1
    _check(model, atol=0.2 + 1e-6)


@pytest.mark.parametrize("precision", ["origin", "fp16"])
def test_other_precisions_keep_the_operator_ops(precision: str):
    _, names, _ = _optimised(qlinear_conv(), precision)
    assert "graph.qlinear_conv" in names and "graph.quant_conv2d" not in names


def test_dynamic_quantize_linear_is_its_function_body_bit_for_bit():
    """All three outputs of DynamicQuantizeLinear, also for an all-zero and an all-positive
    input (the range always includes 0)."""
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"])]
    graph = helper.make_graph(
        nodes,
        "dql",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 17])],
        [helper.make_tensor_value_info(n, t, None) for n, t in
         (("q", TensorProto.UINT8), ("s", TensorProto.FLOAT), ("z", TensorProto.UINT8))],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    module, names, _ = _optimised(model)
    assert "graph.dynamic_quantize_linear" not in names
    rng = np.random.default_rng(3)
    for x in (
        rng.standard_normal((3, 17)).astype(np.float32) * 3,
        np.zeros((3, 17), np.float32),
        rng.uniform(0.5, 2.0, (3, 17)).astype(np.float32),
    ):
        session = ort.InferenceSession(model.SerializeToString())
        theirs = session.run(None, {"x": x})
        for ours, want in zip(run_reference(module, [x]), theirs, strict=True):
            np.testing.assert_array_equal(ours, want)
    compiled = tilegraph.compile(model, precision="int8")
    assert not compiled.host_ops
    x = rng.standard_normal((3, 17)).astype(np.float32)
    for ours, want in zip(compiled(x=x), session.run(None, {"x": x}), strict=True):
        np.testing.assert_array_equal(np.asarray(ours), want)


@pytest.mark.parametrize(("w_zero", "k"), [(0, 40), (3, 40), (0, 300)], ids=["zw0", "zw3", "k300"])
def test_matmul_integer_runs_on_the_int8_cube_with_a_runtime_zero_point(w_zero: int, k: int):
    """DynamicQuantizeLinear's run-time uint8 zero point: re-centred on int8, its
    correction an int32 bias; a constant weight zero point comes off the weights. The
    integer sum and its Cast are exact: the result is onnxruntime's to float32 rounding."""
    model = dynamic_matmul(w_zero, k)
    _, names, stats = _optimised(model)
    assert "graph.matmul_integer" not in names and names.count("graph.quant_matmul") == 1
    assert stats.for_pass("fold-integer-ops").counters["folded-matmul-integer"] == 1
    _check(model, atol=1e-5)


@pytest.mark.parametrize(
    ("x_zero", "pads", "runtime_pad"),
    [(140, 1, 0), (None, 0, 0), (None, 1, 1)],
    ids=["constant_uint8_zp_padded", "runtime_zp_unpadded", "runtime_zp_padded"],
)
def test_conv_integer(x_zero: int | None, pads: int, runtime_pad: int):
    """A constant zero point pads with itself (``pad_value``); a run-time one, when there is
    padding, is the convolution's ``pad_zero`` operand, read by the kernel."""
    model = conv_integer(x_zero, pads)
    module, names, stats = _optimised(model)
    counters = stats.for_pass("fold-integer-ops").counters
    assert "graph.quant_conv2d" in names and "graph.conv_integer" not in names
    assert counters.get("runtime-padding", 0) == runtime_pad
    convs = [op for op in module.walk() if isinstance(op, QuantConv2dOp)]
    assert [op.pad_zero is not None for op in convs] == [bool(runtime_pad)]
    _check(model, atol=1e-5)
