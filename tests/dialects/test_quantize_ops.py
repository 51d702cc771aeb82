"""QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear against onnxruntime, and a
QDQ-quantized conv model through the reference and the tiled path."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx.helper as oh
import pytest
from onnx import TensorProto, numpy_helper

import tilegraph
from tests.dialects.model_oracles import (
    assert_same,
    chain_model,
    onnx_reference_outputs,
    onnxruntime_outputs,
    ours,
)
from tests.dialects.op_harness import Const, build_op, check_op
from tilegraph.dialects.graph import ShapeError
from tilegraph.dialects.graph import quantize as qz
from tilegraph.dialects.graph import quantized_linalg as qla
from tilegraph.frontend import load_onnx
from tilegraph.runtime import run_reference

rng = np.random.default_rng(0)
X = (rng.standard_normal((2, 3, 4)) * 4).astype(np.float32)


def test_per_tensor_and_per_axis():
    zero = Const(np.array(10, np.uint8))
    check_op(qz.QuantizeLinearOp, [X, Const(np.array(0.05, np.float32)), zero], opset=21)
    scales = Const(np.array([0.02, 0.05, 0.1], np.float32))
    zeros = Const(np.array([-3, 0, 7], np.int8))
    check_op(qz.QuantizeLinearOp, [X, scales, zeros], {"axis": 1}, opset=21)
    q = rng.integers(-128, 128, (2, 3, 4)).astype(np.int8)
    check_op(qz.DequantizeLinearOp, [q, scales, zeros], {"axis": 1}, opset=21)


def test_blocked_scales():
    x = rng.standard_normal((2, 6)).astype(np.float32)
    scales = Const(np.array([[0.01, 0.02, 0.05], [0.03, 0.04, 0.02]], np.float32))
    check_op(qz.QuantizeLinearOp, [x, scales], {"axis": 1, "block_size": 2}, opset=21)


def test_dynamic_quantize_linear():
    check_op(qz.DynamicQuantizeLinearOp, [X], opset=11)


@pytest.mark.parametrize("value", [0.0, 2.5, -0.75])
def test_dynamic_quantize_linear_of_a_constant_input(value):
    """An all-zero input has scale 1 and zero point 0 (onnxruntime's answer; the ONNX body
    would divide 0 by 0); a constant one quantises to one value."""
    check_op(qz.DynamicQuantizeLinearOp, [np.full((2, 3, 4), value, np.float32)], opset=11)


def test_a_scale_of_the_wrong_shape_is_refused():
    with pytest.raises(ShapeError, match="must be a scalar or 1-D along axis 1"):
        build_op(qz.QuantizeLinearOp, [X, Const(np.ones(4, np.float32))], {"axis": 1})


def _qdq_conv_model():
    """x -> Q -> DQ -> Conv(DQ(w_q), bias) -> Relu -> Q -> DQ: a QDQ int8 conv."""
    w = (rng.standard_normal((4, 3, 3, 3)) * 0.3).astype(np.float32)
    w_scale = np.abs(w).max(axis=(1, 2, 3)) / 127
    w_q = np.clip(np.rint(w / w_scale[:, None, None, None]), -127, 127).astype(np.int8)
    inits = [
        numpy_helper.from_array(np.array(0.03, np.float32), "xs"),
        numpy_helper.from_array(np.array(0, np.int8), "xz"),
        numpy_helper.from_array(w_q, "wq"),
        numpy_helper.from_array(w_scale.astype(np.float32), "ws"),
        numpy_helper.from_array(np.zeros(4, np.int8), "wz"),
        numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b"),
        numpy_helper.from_array(np.array(0.05, np.float32), "ys"),
        numpy_helper.from_array(np.array(0, np.int8), "yz"),
    ]
    nodes = [
        oh.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        oh.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        oh.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], axis=0),
        oh.make_node("Conv", ["xd", "wd", "b"], ["c"], pads=[1, 1, 1, 1]),
        oh.make_node("Relu", ["c"], ["r"]),
        oh.make_node("QuantizeLinear", ["r", "ys", "yz"], ["rq"]),
        oh.make_node("DequantizeLinear", ["rq", "ys", "yz"], ["y"]),
    ]
    graph = oh.make_graph(
        nodes,
        "qdq",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        inits,
    )
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 21)])


def test_a_qdq_conv_model_matches_onnxruntime():
    import onnxruntime as ort

    model = _qdq_conv_model()
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    (want,) = session.run(None, {"x": x})
    (ref,) = run_reference(load_onnx(model), [x])
    (tiled,) = tilegraph.compile(model, "O2")(x)
    # one quantization step (0.05) apart at most: a rounding tie may go either way
    for got in (ref, tiled):
        assert np.abs(got - want).max() <= 0.05 + 1e-6
        assert np.mean(got == want) > 0.95


# ---- the narrow quantized types --------------------------------------------------------------

XQ = np.concatenate([X.ravel(), [0.0, -0.0, 1e4, -1e4, np.inf, -np.inf]]).astype(np.float32)


@pytest.mark.parametrize("zero", [ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2])
@pytest.mark.parametrize("saturate", [1, 0])
def test_float8_quantization_round_trip_matches_onnxruntime(zero, saturate):
    feeds = {"x": XQ}
    inits = {"s": np.array(0.5, np.float32), "z": np.array(0, zero)}
    nodes = [
        ("QuantizeLinear", ["x", "s", "z"], {"saturate": saturate}),
        ("DequantizeLinear", ["_", "s", "z"], {}),
    ]
    model = chain_model(nodes, feeds, inits, opset=21)
    assert_same(ours(model, feeds)[0], onnxruntime_outputs(model, feeds)[0])


@pytest.mark.parametrize("zero", [ml_dtypes.int4, ml_dtypes.uint4])
def test_4bit_per_axis_round_trip_matches_onnxruntime(zero):
    feeds = {"x": X}
    inits = {"s": np.array([0.3, 0.5, 1.0], np.float32), "z": np.array([1, 0, 3], zero)}
    nodes = [
        ("QuantizeLinear", ["x", "s", "z"], {"axis": 1}),
        ("DequantizeLinear", ["_", "s", "z"], {"axis": 1}),
    ]
    model = chain_model(nodes, feeds, inits, opset=21)
    assert_same(ours(model, feeds)[0], onnxruntime_outputs(model, feeds)[0])


@pytest.mark.parametrize(
    "zero", [ml_dtypes.int2, ml_dtypes.uint2, ml_dtypes.uint4, ml_dtypes.float4_e2m1fn]
)
def test_quantize_and_dequantize_narrow_types_match_the_onnx_reference(zero):
    """onnxruntime cannot exchange these types with numpy (or lacks the kernel). No
    infinities: the reference converts them to int32 (undefined) before it saturates."""
    feeds = {"x": XQ[np.isfinite(XQ)]}
    offset = 0 if zero == ml_dtypes.float4_e2m1fn else 1
    inits = {"s": np.array(0.75, np.float32), "z": np.array(offset, zero)}
    quantize = chain_model([("QuantizeLinear", ["x", "s", "z"], {})], feeds, inits, opset=25)
    (q,) = ours(quantize, feeds)
    assert_same(q, onnx_reference_outputs(quantize, feeds)[0])
    dequantize = chain_model([("DequantizeLinear", ["q", "s", "z"], {})], {"q": q}, inits, opset=25)
    assert_same(ours(dequantize, {"q": q})[0], onnx_reference_outputs(dequantize, {"q": q})[0])


def test_dequantize_computes_in_output_dtype():
    q = rng.integers(-128, 128, (3, 5)).astype(np.int8)
    feeds = {"q": q}
    inits = {"s": np.array(0.0123, np.float32), "z": np.array(3, np.int8)}
    nodes = [("DequantizeLinear", ["q", "s", "z"], {"output_dtype": TensorProto.FLOAT16})]
    model = chain_model(nodes, feeds, inits, opset=23)
    (got,) = ours(model, feeds)
    assert got.dtype == np.float16
    assert_same(got, onnxruntime_outputs(model, feeds)[0])


def test_quantize_divides_in_precision():
    feeds = {"x": XQ[np.isfinite(XQ)]}
    inits = {"s": np.array(0.019607844, np.float32), "z": np.array(10, np.uint8)}
    nodes = [("QuantizeLinear", ["x", "s", "z"], {"precision": TensorProto.FLOAT16})]
    model = chain_model(nodes, feeds, inits, opset=25)
    assert_same(ours(model, feeds)[0], onnxruntime_outputs(model, feeds)[0])


def test_quantizing_to_float8e8m0_is_refused():
    with pytest.raises(ShapeError, match="quantizing to float8_e8m0 is not supported"):
        build_op(qz.QuantizeLinearOp, [X, Const(np.array(0.5, np.float32))],
                 {"output_dtype": TensorProto.FLOAT8E8M0})  # fmt: skip


def test_an_integer_scale_is_refused():
    with pytest.raises(ShapeError, match="the scale's type must be one of float16"):
        build_op(qz.QuantizeLinearOp, [X, Const(np.array(2, np.int32))])


# ---- integer and QLinear matmul / conv ------------------------------------------------------


def _u8(*shape: int) -> np.ndarray:
    return rng.integers(0, 256, shape).astype(np.uint8)


def _i8(*shape: int) -> np.ndarray:
    return rng.integers(-128, 128, shape).astype(np.int8)


def _scalar(value, dtype) -> Const:
    return Const(np.array(value, dtype))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (_u8(3, 4), _u8(4, 5)),
        # onnxruntime's uint8 x int8 kernel on AVX2 (vpmaddubsw) saturates each pair of
        # products at int16: int8 values within [-64, 63] keep every pair below 2**15
        (_u8(2, 3, 4), (_i8(4, 5) // 2).astype(np.int8)),
        (_i8(4), _i8(2, 4, 3)),
    ],
    ids=["2d", "3d-int8-b", "vector-a"],
)
def test_matmul_integer_matches_onnxruntime(a, b):
    zeros = [_scalar(7, a.dtype), _scalar(-3 if b.dtype == np.int8 else 9, b.dtype)]
    check_op(qla.MatMulIntegerOp, [a, b, *zeros], opset=10)
    check_op(qla.MatMulIntegerOp, [a, b], opset=10)


def test_matmul_integer_per_row_and_column_zero_points():
    """onnxruntime takes per-tensor zero points only; onnx's reference takes a's per-row
    zero points as [M, 1] (the N-D form) and the spec's M-vector must agree with it."""
    feeds = {"a": _u8(3, 4), "b": _i8(4, 2)}
    inits = {"az": np.array([[1], [2], [3]], np.uint8), "bz": np.array([-1, 4], np.int8)}
    model = chain_model([("MatMulInteger", ["a", "b", "az", "bz"], {})], feeds, inits, opset=10)
    (got,) = ours(model, feeds)
    assert_same(got, onnx_reference_outputs(model, feeds)[0])
    inits["az"] = inits["az"].ravel()
    model = chain_model([("MatMulInteger", ["a", "b", "az", "bz"], {})], feeds, inits, opset=10)
    assert_same(ours(model, feeds)[0], got)


def _qlinear_matmul_operands(a, b, scale_type=np.float32):
    zero_a, zero_b = (3 if v.dtype == np.uint8 else -2 for v in (a, b))
    return [
        a, _scalar(0.02, scale_type), _scalar(zero_a, a.dtype),
        b, _scalar(0.03, scale_type), _scalar(zero_b, b.dtype),
        _scalar(0.4, scale_type), _scalar(100 if a.dtype == np.uint8 else -5, a.dtype),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("a", "b", "scale_type"),
    [(_u8(3, 16), _u8(16, 5), np.float32), (_i8(2, 3, 16), _i8(2, 16, 4), np.float32),
     (_u8(3, 16), _u8(16, 2), np.float16)],
    ids=["uint8-2d", "int8-3d", "float16-scales"],
)  # fmt: skip
def test_qlinear_matmul_matches_onnxruntime(a, b, scale_type):
    check_op(qla.QLinearMatMulOp, _qlinear_matmul_operands(a, b, scale_type), opset=21)


def test_qlinear_matmul_per_row_and_column_and_float8_match_the_onnx_reference():
    """onnxruntime takes neither per-row/column parameters nor float8 here; onnx's
    reference takes a's per-row parameters as [M, 1] (the N-D form), which the spec's
    M-vectors must agree with."""
    feeds = {"a": _u8(3, 8), "b": _u8(8, 2)}
    inits = {
        "as": np.array([[0.01], [0.02], [0.03]], np.float32),
        "az": np.array([[1], [2], [3]], np.uint8),
        "bs": np.array([0.05, 0.04], np.float32), "bz": np.array([7, 9], np.uint8),
        "ys": np.array(0.3, np.float32), "yz": np.array(128, np.uint8),
    }  # fmt: skip
    names = ["a", "as", "az", "b", "bs", "bz", "ys", "yz"]
    model = chain_model([("QLinearMatMul", names, {})], feeds, inits, opset=21)
    (got,) = ours(model, feeds)
    assert_same(got, onnx_reference_outputs(model, feeds)[0])
    vectors = {**inits, "as": inits["as"].ravel(), "az": inits["az"].ravel()}
    model = chain_model([("QLinearMatMul", names, {})], feeds, vectors, opset=21)
    assert_same(ours(model, feeds)[0], got)


def test_float8_qlinear_matmul_matches_its_qdq_form_in_onnxruntime():
    """Neither onnxruntime nor onnx's reference has a float8 QLinearMatMul: compare with
    DequantizeLinear, MatMul, QuantizeLinear in onnxruntime, exact in float32 here (float8
    operands, power-of-two scales, K = 4), so both round the same product once."""
    f8 = ml_dtypes.float8_e4m3fn
    feeds: dict[str, np.ndarray] = {}  # onnxruntime takes no float8 feeds: constants
    inits = {
        "a": X[0].astype(f8), "b": X[1].T.astype(f8),
        "sa": np.array(0.5, np.float32), "sb": np.array(0.25, np.float32),
        "sy": np.array(2.0**-7, np.float32), "z": np.array(0, f8),
    }  # fmt: skip
    names = ["a", "sa", "z", "b", "sb", "z", "sy", "z"]
    to_float = ("Cast", ["_"], {"to": TensorProto.FLOAT})
    model = chain_model([("QLinearMatMul", names, {}), to_float], feeds, inits, opset=21)
    qdq = [
        ("DequantizeLinear", ["a", "sa", "z"], {}),
        ("DequantizeLinear", ["b", "sb", "z"], {}),
        ("MatMul", ["t0", "t1"], {}),
        ("QuantizeLinear", ["_", "sy", "z"], {}),
        to_float,
    ]
    want = onnxruntime_outputs(chain_model(qdq, feeds, inits, opset=21), feeds)[0]
    (got,) = ours(model, feeds)
    assert_same(got, want)
    assert np.abs(got).max() == 448.0  # some products saturate


CONV_ATTRS = [{"pads": [1, 1, 1, 1]}, {"strides": [2, 1], "dilations": [1, 2]}, {"group": 2}]


@pytest.mark.parametrize("attrs", CONV_ATTRS, ids=["pads", "strides-dilations", "groups"])
def test_conv_integer_matches_onnxruntime(attrs):
    x, w = _u8(2, 4, 6, 7), _u8(6, 4 // attrs.get("group", 1), 3, 3)
    check_op(qla.ConvIntegerOp, [x, w, _scalar(128, np.uint8), _scalar(5, np.uint8)], attrs,
             opset=10)  # fmt: skip


def test_conv_integer_per_channel_weight_zero_points_match_the_onnx_reference():
    """onnxruntime's ConvInteger takes per-tensor zero points only."""
    feeds = {"x": _u8(1, 3, 5, 5), "w": _i8(4, 3, 2, 2)}
    inits = {"xz": np.array(100, np.uint8), "wz": np.array([0, 1, -2, 3], np.int8)}
    nodes = [("ConvInteger", ["x", "w", "xz", "wz"], {"pads": [0, 1, 1, 0]})]
    model = chain_model(nodes, feeds, inits, opset=10)
    assert_same(ours(model, feeds)[0], onnx_reference_outputs(model, feeds)[0])


@pytest.mark.parametrize("attrs", CONV_ATTRS, ids=["pads", "strides-dilations", "groups"])
@pytest.mark.parametrize("signed", [False, True], ids=["uint8", "int8-per-channel"])
def test_qlinear_conv_matches_onnxruntime(attrs, signed):
    make, dtype = (_i8, np.int8) if signed else (_u8, np.uint8)
    x, w = make(2, 4, 6, 7), make(6, 4 // attrs.get("group", 1), 3, 3)
    w_scale = (rng.uniform(0.001, 0.01, 6) if signed else np.array(0.004)).astype(np.float32)
    operands = [
        x, _scalar(0.05, np.float32), _scalar(-3 if signed else 120, dtype),
        w, Const(w_scale), Const(np.zeros_like(w_scale, dtype) if signed else np.array(7, dtype)),
        _scalar(0.5, np.float32), _scalar(-10 if signed else 100, dtype),
        Const(rng.integers(-2000, 2000, 6).astype(np.int32)),
    ]  # fmt: skip
    check_op(qla.QLinearConvOp, operands, attrs, opset=10)


def test_qlinear_refusals_name_the_operand():
    a, b = _u8(2, 3), _u8(3, 2)
    operands = _qlinear_matmul_operands(a, b)
    operands[6] = Const(np.array([0.1, 0.2], np.float32))
    with pytest.raises(ShapeError, match="y_scale and y_zero_point must be scalars"):
        build_op(qla.QLinearMatMulOp, operands)
    operands = _qlinear_matmul_operands(a, b)
    operands[1] = Const(np.array([0.1, 0.2, 0.3], np.float32))
    with pytest.raises(
        ShapeError, match=r"the scale of a must be a scalar or 1-D per row \(size 2\)"
    ):
        build_op(qla.QLinearMatMulOp, operands)
    with pytest.raises(ShapeError, match=r"the zero point of b must have shape \[1, 2\]"):
        build_op(qla.MatMulIntegerOp, [a, b, None, Const(np.zeros((3, 2), np.uint8))])
    with pytest.raises(ShapeError, match="x must be one of int8, uint8, got float32"):
        build_op(qla.ConvIntegerOp, [X.reshape(1, 2, 3, 4), _u8(1, 2, 1, 1)])
    x, w = _u8(1, 2, 3, 3), _u8(2, 2, 1, 1)
    f32, u8 = np.float32, np.uint8
    operands = [x, _scalar(0.1, f32), _scalar(0, u8), w, _scalar(0.1, f32), _scalar(0, u8),
                _scalar(0.1, f32), _scalar(0, u8), Const(np.zeros(2, np.float32))]  # fmt: skip
    with pytest.raises(ShapeError, match="the bias must be int32"):
        build_op(qla.QLinearConvOp, operands)


def test_quant_matmul_without_a_scale_is_the_raw_int32_sum():
    """``graph.quant_matmul`` without its scale: the int32 ``a · bᵀ + bias`` itself (the
    form fold-qdq's int32 epilogue reads), batch dims broadcast; ``graph.requant_matmul``
    still needs its multipliers."""
    from tilegraph.builder import GraphBuilder
    from tilegraph.dialects.element_types import element_type_of
    from tilegraph.dialects.graph.quantized_cube import QuantMatMulOp
    from tilegraph.dialects.graph.requantized_cube import RequantMatMulOp
    from tilegraph.dialects.layout_type import TensorType

    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, (2, 5, 40)).astype(np.int8)
    b = rng.integers(-128, 128, (1, 40)).astype(np.int8)  # one row of K, broadcast
    bias = np.array([-7], np.int32)
    g = GraphBuilder()
    args = [
        g.block.insert_arg(TensorType(list(x.shape), element_type_of(str(x.dtype))), i)
        for i, x in enumerate((a, b))
    ]
    op = QuantMatMulOp.make(*args, g.constant(bias))
    out = op.results[0].type
    assert isinstance(out, TensorType) and str(out.element_type) == "i32"
    assert list(out.origin_shape) == [2, 5, 1]
    (got,) = op.reference(a, b, bias)  # type: ignore[attr-defined]
    want = np.matmul(a.astype(np.int64), b.astype(np.int64).T) + bias
    np.testing.assert_array_equal(got, want.astype(np.int32))
    assert got.dtype == np.int32
    with pytest.raises(ShapeError, match="multipliers"):
        RequantMatMulOp.make(*args, g.constant(bias))
