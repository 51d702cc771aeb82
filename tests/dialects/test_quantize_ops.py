"""QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear against onnxruntime, and a
QDQ-quantized conv model through the reference and the tiled path."""

from __future__ import annotations

import numpy as np
import onnx.helper as oh
import pytest
from onnx import TensorProto, numpy_helper

import tilegraph
from tests.dialects.op_harness import Const, build_op, check_op
from tilegraph.dialects.graph import ShapeError
from tilegraph.dialects.graph import quantize as qz
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
