"""Pools whose window is larger than their input (issue 22): HF EfficientNet's
``AveragePool(kernel_shape=[1280, 1280], strides=[1280, 1280], ceil_mode=1)`` over a 5x5
map. onnxruntime runs such a pool (and PyTorch's ceil_mode gives the same size); the
expectations here are onnxruntime's."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.reference
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import tilegraph
from tests.dialects.op_harness import build_op, check_op, run_onnxruntime
from tilegraph.dialects.graph import ShapeError
from tilegraph.dialects.graph.pooling import AvgPoolOp, MaxPoolOp

ort.set_default_logger_severity(3)
RNG = np.random.default_rng(0)

# (input shape, attributes): windows larger than the (padded) input, ceil_mode = 1
LARGE_WINDOWS = [
    ((1, 8, 5, 5), {"kernel_shape": [1280, 1280], "strides": [1280, 1280]}),  # EfficientNet
    ((1, 3, 5, 5), {"kernel_shape": [7, 7], "strides": [3, 3], "pads": [1, 0, 0, 1]}),
    ((1, 3, 5, 6), {"kernel_shape": [8, 9], "strides": [6, 4], "pads": [2, 1, 2, 1]}),
    ((2, 3, 4), {"kernel_shape": [9], "strides": [8], "pads": [2, 2]}),
]


def _input(shape: tuple[int, ...]) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("shape, attrs", LARGE_WINDOWS)
@pytest.mark.parametrize("count_include_pad", [0, 1])
def test_avg_pool_window_larger_than_input(shape, attrs, count_include_pad):
    attrs = {**attrs, "ceil_mode": 1, "count_include_pad": count_include_pad}
    check_op(AvgPoolOp, [_input(shape)], attrs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape, attrs", LARGE_WINDOWS)
def test_max_pool_window_larger_than_input(shape, attrs):
    check_op(MaxPoolOp, [_input(shape)], {**attrs, "ceil_mode": 1})


@pytest.mark.parametrize("cls", [AvgPoolOp, MaxPoolOp])
def test_overhang_of_a_stride_or_more_is_refused_as_onnxruntime_does(cls):
    """With stride 1 the 1280 window over 5 has no position even with ceil_mode."""
    x = _input((1, 2, 5, 5))
    attrs = {"kernel_shape": [1280, 1280], "ceil_mode": 1}
    with pytest.raises(Exception, match="negative"):
        run_onnxruntime(cls.ONNX_OP, [x], attrs)
    with pytest.raises(ShapeError, match=r"does not fit .* even with ceil_mode"):
        build_op(cls, [x], attrs)


@pytest.mark.parametrize("cls", [AvgPoolOp, MaxPoolOp])
def test_without_ceil_mode_a_larger_window_is_refused_as_the_onnx_spec_says(cls):
    """ceil_mode = 0: floor((5 - 1280) / 1280) + 1 = 0 positions by the spec's formula, which
    onnx's reference implementation follows (an empty output); onnxruntime truncates toward
    zero and returns one. tilegraph refuses the node, saying ceil_mode = 1 would take it."""
    x = _input((1, 2, 5, 5))
    attrs = {"kernel_shape": [1280, 1280], "strides": [1280, 1280], "ceil_mode": 0}
    node = helper.make_node(cls.ONNX_OP, ["x"], ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    (spec,) = onnx.reference.ReferenceEvaluator(model).run(None, {"x": x})
    assert spec.size == 0
    with pytest.raises(ShapeError, match="with ceil_mode = 0 .*ceil_mode = 1 allows"):
        build_op(cls, [x], attrs)


def _pool_model(op: str, kernel: int, channels: int, **attrs) -> onnx.ModelProto:
    node = helper.make_node(
        op,
        ["x"],
        ["y"],
        kernel_shape=[kernel, kernel],
        strides=[kernel, kernel],
        ceil_mode=1,
        **attrs,
    )
    graph = helper.make_graph(
        [node, helper.make_node("Relu", ["y"], ["z"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, 5, 5])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(
    "op, kernel, attrs, unit",
    [
        # a 1280x1280 window over 5x5: the taps past the image are cut (they see only
        # padding), the 5x5 that remain fit UB: the vector kernel pools it
        ("AveragePool", 1280, {"count_include_pad": 0}, "vector"),
        ("AveragePool", 1280, {"count_include_pad": 1}, "vector"),
        ("MaxPool", 1280, {}, "vector"),
        # a 30x30 window fits: the vector kernel pools it (its loads fill the padding)
        ("AveragePool", 30, {"count_include_pad": 1, "pads": [2, 2, 2, 2]}, "vector"),
        ("MaxPool", 30, {}, "vector"),
    ],
)
def test_large_window_on_the_tiled_path(op, kernel, attrs, unit):
    model = _pool_model(op, kernel, 32, **attrs)
    x = _input((1, 32, 5, 5))
    compiled = tilegraph.compile(model)
    (got,) = compiled(x)
    (want,) = ort.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    ).run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    pool = op.replace("AveragePool", "graph.avg_pool").replace("MaxPool", "graph.max_pool")
    (kernel_unit,) = [k.unit for k in compiled.kernels if pool in k.ops]
    assert kernel_unit == unit
