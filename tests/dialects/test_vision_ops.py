"""Vision ops (GridSample, AffineGrid, DeformConv, RoiAlign, Upsample, MaxUnpool, Col2Im,
NonMaxSuppression, NonZero, Scatter), MaxPool's Indices, SpaceToDepth CRD and
BatchNormalization in training mode against onnxruntime (onnx's reference where onnxruntime
lacks the case), and the refusals of what they do not implement."""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np
import onnx.helper as oh
import pytest
from onnx import TensorProto, numpy_helper
from onnx.reference import ReferenceEvaluator

from tests.dialects.op_harness import Const, Operand, build_op, check_op, run_onnxruntime
from tilegraph.dialects.graph import GraphOp, ShapeError
from tilegraph.dialects.graph import vision as vo
from tilegraph.dialects.graph import vision_index as vi
from tilegraph.dialects.graph.base import shapes_compatible
from tilegraph.dialects.graph.normalization import BatchNormTrainingOp
from tilegraph.dialects.graph.pooling import MaxPoolWithIndicesOp
from tilegraph.dialects.graph.rearrange import SpaceToDepthOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.frontend import load_onnx
from tilegraph.runtime import run_reference

rng = np.random.default_rng(0)


def randn(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def check_dynamic(
    op_cls: type[GraphOp], operands: list[Operand], attrs: dict[str, Any] | None = None, **kw
) -> tuple[np.ndarray, ...]:
    """:func:`check_op` for ops with data-dependent dims: the inferred shapes need only be
    compatible with the computed ones."""
    _, op = build_op(op_cls, operands, attrs)
    arrays = [o.array if isinstance(o, Const) else o for o in operands]
    ours = op.reference(*arrays)
    for got, res in zip(ours, op.results, strict=True):
        assert isinstance(res.type, TensorType)
        assert shapes_compatible(list(got.shape), res.type.origin_shape)
    assert op_cls.ONNX_OP is not None
    theirs = run_onnxruntime(op_cls.ONNX_OP, operands, attrs, n_outputs=len(ours), **kw)
    for got, want in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(got, want)
    return ours


# ---- GridSample / AffineGrid ------------------------------------------------------------


@pytest.mark.parametrize("mode", ["linear", "cubic", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_2d(mode, padding, align):
    grid = rng.uniform(-1.6, 1.6, (2, 5, 4, 2)).astype(np.float32)  # some points outside
    grid[0, 0, :, 0] = [-1.0, -0.5, 0.5, 1.0]  # nearest's halfway points
    attrs = {"mode": mode, "padding_mode": padding, "align_corners": align}
    check_op(vo.GridSampleOp, [randn(2, 3, 4, 6), grid], attrs, opset=20, atol=1e-5)


def test_grid_sample_16_names_and_5d():
    grid = rng.uniform(-1.2, 1.2, (1, 3, 4, 2)).astype(np.float32)
    check_op(vo.GridSampleOp, [randn(1, 2, 3, 5), grid], {"mode": "bicubic"}, opset=16)
    check_op(vo.GridSampleOp, [randn(1, 2, 3, 5), grid], {"mode": "bilinear"}, opset=16)
    grid3 = rng.uniform(-1.2, 1.2, (1, 2, 3, 4, 3)).astype(np.float32)
    x = randn(1, 2, 3, 4, 5)
    for mode in ("linear", "nearest"):
        check_op(vo.GridSampleOp, [x, grid3], {"mode": mode, "padding_mode": "reflection"},
                 opset=20, atol=1e-5)  # fmt: skip
    # onnxruntime has no 5-D cubic: onnx's reference (which differs from PyTorch and
    # onnxruntime for cubic near a border or reflection, not with zeros)
    _, op = build_op(vo.GridSampleOp, [x, grid3], {"mode": "cubic"})
    model = _single_node("GridSample", [x, grid3], {"mode": "cubic"})
    (want,) = ReferenceEvaluator(model).run(None, {"in0": x, "in1": grid3})
    np.testing.assert_allclose(op.reference(x, grid3)[0], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("align", [0, 1])
def test_affine_grid(align):
    size2, size3 = Const(np.array([2, 3, 4, 5], np.int64)), Const(np.array([2, 1, 3, 4, 5]))
    check_op(vo.AffineGridOp, [randn(2, 2, 3), size2], {"align_corners": align}, opset=20)
    check_op(vo.AffineGridOp, [randn(2, 3, 4), size3], {"align_corners": align}, opset=20)


# ---- DeformConv / RoiAlign ----------------------------------------------------------------


def test_deform_conv():
    x, w = randn(2, 4, 6, 7), randn(6, 2, 3, 2)
    attrs = {"group": 2, "offset_group": 2, "pads": [1, 0, 1, 1], "strides": [2, 1],
             "dilations": [1, 2]}  # fmt: skip
    out = (3, 6)
    offset, mask, b = randn(2, 2 * 6 * 2, *out), rng.random((2, 2 * 6, *out), np.float32), randn(6)
    check_op(vo.DeformConvOp, [x, w, offset, b, mask], attrs, opset=19, rtol=1e-4, atol=1e-5)
    check_op(vo.DeformConvOp, [x[:, :2], w[:3], offset[:, :12]], {"pads": attrs["pads"],
             "strides": [2, 1], "dilations": [1, 2]}, opset=19, rtol=1e-4, atol=1e-5)  # fmt: skip


@pytest.mark.parametrize("spatial, kernel", [((9,), (3,)), ((4, 5, 6), (2, 3, 2))])
def test_deform_conv_other_ranks_without_offsets_is_conv(spatial, kernel):
    """onnxruntime's DeformConv is 2-D only: with zero offsets (and integer ones, which
    shift the window) it is an ordinary convolution."""
    x, w = randn(2, 4, *spatial), randn(4, 2, *kernel)
    attrs = {"group": 2, "pads": [1] * 2 * len(spatial), "strides": [2] * len(spatial)}
    (want,) = run_onnxruntime("Conv", [x, w], attrs)
    offset = np.zeros((2, prod(kernel) * len(spatial), *want.shape[2:]), np.float32)
    _, op = build_op(vo.DeformConvOp, [x, w, offset], attrs)
    np.testing.assert_allclose(op.reference(x, w, offset)[0], want, rtol=1e-5, atol=1e-5)
    # +1 along the last axis reads x one step further: Conv of x[..., 1:] (away from the
    # first output, whose window starts in the padding)
    offset.reshape(2, prod(kernel), len(spatial), -1)[:, :, -1] = 1.0
    (shifted,) = run_onnxruntime("Conv", [x[..., 1:], w], attrs)
    n = min(shifted.shape[-1], want.shape[-1])
    got = op.reference(x, w, offset)[0]
    np.testing.assert_allclose(got[..., 1:n], shifted[..., 1:n], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("transform", ["half_pixel", "output_half_pixel"])
def test_roi_align(mode, transform):
    rois = np.array([[0, 0, 9, 9], [1.5, 2.2, 6.1, 8.7], [5, 5, 5.2, 5.1], [-2, 3, 11, 12]])
    attrs = {"mode": mode, "coordinate_transformation_mode": transform, "output_height": 3,
             "output_width": 4, "spatial_scale": 0.75}  # fmt: skip
    idx = np.array([0, 1, 1, 0], np.int64)
    check_op(vo.RoiAlignOp, [randn(2, 3, 8, 9), rois.astype(np.float32), idx], attrs,
             opset=16, rtol=1e-5, atol=1e-5)  # fmt: skip
    attrs["sampling_ratio"] = 2
    check_op(vo.RoiAlignOp, [randn(2, 3, 8, 9), rois.astype(np.float32), idx], attrs,
             opset=16, rtol=1e-5, atol=1e-5)  # fmt: skip


# ---- Upsample ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_upsample(mode):
    x = randn(1, 2, 3, 4)
    check_op(vo.UpsampleOp, [x, Const(np.array([1, 1, 2, 1.5], np.float32))], {"mode": mode},
             opset=9)  # fmt: skip
    check_op(vo.UpsampleOp, [x], {"mode": mode, "scales": [1.0, 1.0, 1.7, 2.0]}, opset=7)


def _single_node(op: str, arrays: list[np.ndarray], attrs: dict[str, Any], opset: int = 20):
    inputs = [
        oh.make_tensor_value_info(f"in{i}", numpy_helper.from_array(a).data_type, a.shape)
        for i, a in enumerate(arrays)
    ]
    node = oh.make_node(op, [i.name for i in inputs], ["y"], **attrs)
    graph = oh.make_graph([node], "g", inputs, [oh.make_empty_tensor_value_info("y")])
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset)])


# ---- index-driven ops ----------------------------------------------------------------------


def test_max_pool_indices_and_max_unpool_round_trip():
    """MaxPool's Indices address the pooled input: MaxUnpool with output_shape puts each
    maximum back where it was (onnxruntime's reading, which the spec describes)."""
    x = randn(2, 3, 5, 5)
    pool = {"kernel_shape": [2, 2], "strides": [2, 2]}
    y, idx = check_op(MaxPoolWithIndicesOp, [x], pool, opset=12)
    shape = Const(np.array(x.shape, np.int64))
    (back,) = check_op(vi.MaxUnpoolOp, [y, idx, shape], pool, opset=11)
    assert np.array_equal(back.reshape(-1)[idx.reshape(-1)], y.reshape(-1))
    check_op(vi.MaxUnpoolOp, [y, idx[:, :, :2, :2] % 16], pool, opset=11)  # inferred 4 x 4


@pytest.mark.parametrize(
    "attrs, shape",
    [
        ({"kernel_shape": [3, 2], "storage_order": 1, "pads": [1, 0, 1, 1]}, (1, 2, 5, 6)),
        ({"kernel_shape": [2, 2], "ceil_mode": 1, "strides": [2, 2]}, (2, 1, 5, 5)),
        ({"kernel_shape": [3], "dilations": [2], "pads": [2, 1]}, (1, 2, 9)),
        ({"kernel_shape": [2, 2, 2], "storage_order": 1}, (1, 2, 3, 4, 3)),
    ],
)
def test_max_pool_indices(attrs, shape):
    x = rng.integers(0, 4, shape).astype(np.float32)  # ties: the first in window order
    check_op(MaxPoolWithIndicesOp, [x], attrs, opset=12)


def test_col2im():
    image, block = Const(np.array([5, 6], np.int64)), Const(np.array([2, 3], np.int64))
    check_op(vi.Col2ImOp, [randn(2, 12, 16), image, block], opset=18)
    attrs = {"strides": [2, 1], "pads": [1, 0, 0, 2], "dilations": [1, 2]}
    check_op(vi.Col2ImOp, [randn(1, 6, 3 * 4), image, block], attrs, opset=18)
    image3, block3 = Const(np.array([3, 4, 5], np.int64)), Const(np.array([1, 2, 2], np.int64))
    check_op(vi.Col2ImOp, [randn(1, 8, 3 * 3 * 4), image3, block3], opset=18)


@pytest.mark.parametrize("center", [0, 1])
def test_non_max_suppression(center):
    corners = rng.uniform(0, 10, (2, 12, 2, 2)).astype(np.float32)
    if center:  # centre, size
        corners[..., 1] = np.abs(corners[..., 1]) / 2 + 0.5
    boxes = corners.reshape(2, 12, 4)[:, :, [1, 0, 3, 2] if center else [0, 1, 2, 3]]
    scores = rng.random((2, 3, 12)).astype(np.float32)
    scores[0, 0, 3] = scores[0, 0, 7]  # a tie
    limit = Const(np.array([4], np.int64))
    iou, score = Const(np.array([0.3], np.float32)), Const(np.array([0.2], np.float32))
    attrs = {"center_point_box": center}
    check_dynamic(vi.NonMaxSuppressionOp, [boxes, scores, limit, iou, score], attrs, opset=11)
    check_dynamic(vi.NonMaxSuppressionOp, [boxes, scores, limit], attrs, opset=11)
    rows = check_dynamic(vi.NonMaxSuppressionOp, [boxes, scores], attrs, opset=11)[0]
    assert rows.shape == (0, 3)  # max_output_boxes_per_class defaults to 0


def test_non_zero_and_scatter():
    x = (rng.random((3, 4)) > 0.5).astype(np.float32)
    check_dynamic(vi.NonZeroOp, [x], opset=13)
    _, op = build_op(vi.NonZeroOp, [Const(x)])
    assert op.results[0].type.origin_shape == (2, int(np.count_nonzero(x)))  # type: ignore[attr-defined]
    idx = np.array([[1, 0, 2], [0, 2, 1]], np.int64)
    check_op(vi.ScatterOp, [randn(3, 3), idx, randn(2, 3)], {"axis": 1}, opset=10)


# ---- SpaceToDepth CRD / BatchNormalization training -------------------------------------


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_space_to_depth_modes(mode):
    check_op(SpaceToDepthOp, [randn(2, 3, 4, 6)], {"blocksize": 2, "mode": mode}, opset=28)


def test_batch_norm_training_mode():
    x, var = randn(4, 3, 5, 2), rng.random(3).astype(np.float32) + 0.5
    attrs = {"training_mode": 1, "momentum": 0.8, "epsilon": 1e-3}
    check_op(BatchNormTrainingOp, [x, randn(3), randn(3), randn(3), var], attrs, opset=15,
             rtol=1e-4, atol=1e-5)  # fmt: skip


def test_imported_models_pick_the_multi_result_forms():
    """The importer takes graph.max_pool_with_indices / graph.batch_norm_training when the
    model uses the extra outputs, and the one-result ops otherwise."""
    x = oh.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])
    outs = [oh.make_empty_tensor_value_info(n) for n in ("y", "i", "m", "v")]
    stats = [numpy_helper.from_array(np.ones(3, np.float32), n) for n in "sbav"]
    nodes = [
        oh.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2]),
        oh.make_node("BatchNormalization", ["x", *"sbav"], ["z", "m", "v"], training_mode=1),
    ]
    graph = oh.make_graph(nodes, "g", [x], [outs[0], outs[1], outs[2], outs[3]], stats)
    module = load_onnx(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 15)]))
    names = {op.name for op in module.walk()}
    assert {"graph.max_pool_with_indices", "graph.batch_norm_training"} <= names
    feed = {"x": randn(1, 3, 4, 4)}
    y, i, m, v = run_reference(module, feed)
    want = run_onnxruntime("MaxPool", [feed["x"]], {"kernel_shape": [2, 2]}, n_outputs=2)
    np.testing.assert_array_equal(i, want[1])


# ---- refusals ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "op_cls, operands, attrs, message",
    [
        (vo.GridSampleOp, [randn(1, 1, 3, 3), randn(1, 2, 2, 2)], {"mode": "area"},
         "mode = 'area' is not supported"),
        (vo.GridSampleOp, [randn(1, 1, 3, 3), randn(1, 2, 2, 2)], {"padding_mode": "wrap"},
         "padding_mode = 'wrap'"),
        (vo.GridSampleOp, [np.ones((1, 1, 3, 3), np.int32), randn(1, 2, 2, 2)], {},
         "X of a linear GridSample must be a floating-point"),
        (vo.GridSampleOp, [randn(1, 1, 3, 3), randn(1, 2, 2, 3)], {}, "grid must have shape"),
        (vo.AffineGridOp, [randn(2, 2, 4), Const(np.array([2, 1, 3, 3]))], {}, "theta must"),
        (vo.RoiAlignOp, [randn(1, 1, 4, 4), randn(2, 4), np.zeros(2, np.int64)],
         {"mode": "median"}, "mode = 'median'"),
        (vo.UpsampleOp, [randn(1, 1, 4, 4), Const(np.array([1, 1, 0.5, 2], np.float32))], {},
         "must be 4 values >= 1"),
        (vo.UpsampleOp, [np.ones((1, 1, 2, 2), np.int32)], {"mode": "linear",
         "scales": [1.0, 1.0, 2.0, 2.0]}, "X of a linear Upsample"),
        (vo.DeformConvOp, [randn(1, 2, 5, 5), randn(3, 2, 3, 3), randn(1, 17, 3, 3)], {},
         "offset must have shape"),
        (vi.NonZeroOp, [np.array(1.0, np.float32)], {}, "NonZero of a 0-D tensor"),
        (vi.MaxUnpoolOp, [randn(1, 1, 2, 2), np.zeros((1, 1, 2, 2), np.int64)], {},
         "kernel_shape is required"),
        (vi.Col2ImOp, [randn(1, 6, 11), Const(np.array([5, 6])), Const(np.array([2, 3]))], {},
         "input has 11 blocks, the image holds 16"),
        (vi.NonMaxSuppressionOp, [randn(1, 3, 4), randn(1, 1, 3)], {"center_point_box": 2},
         "center_point_box = 2"),
        (SpaceToDepthOp, [randn(1, 1, 4, 4)], {"blocksize": 2, "mode": "RCD"}, "DCR or CRD"),
        (BatchNormTrainingOp, [randn(2, 3, 2), *[randn(3)] * 4], {},
         "only produced with training_mode = 1"),
    ],
)  # fmt: skip
def test_refusals(op_cls, operands, attrs, message):
    with pytest.raises(ShapeError, match=message):
        build_op(op_cls, operands, attrs)


@pytest.mark.parametrize(
    "mode, scales, opset", [("linear", [1, 1, 2, 2], 9), ("nearest", [1, 1, 1.5, 1.7], 9),
                            ("linear", [1.0, 1.0, 1.5, 2.5], 7)],
)  # fmt: skip
def test_upsample_models_keep_their_coordinate_mapping(mode, scales, opset):
    """An old model's Upsample imports as graph.upsample, not as the Resize onnx's version
    converter makes of it (whose half_pixel mapping changes linear and fractional results);
    needs the importer to shield Upsample from the converter."""
    x = randn(1, 2, 3, 4)
    inits, inputs, attrs = [], ["x"], {"mode": mode}
    if opset < 9:
        attrs["scales"] = scales
    else:
        inits.append(numpy_helper.from_array(np.array(scales, np.float32), "s"))
        inputs.append("s")
    node = oh.make_node("Upsample", inputs, ["y"], **attrs)
    x_info = oh.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)
    graph = oh.make_graph([node], "g", [x_info], [oh.make_empty_tensor_value_info("y")], inits)
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset)])
    module = load_onnx(model)
    assert "graph.upsample" in {op.name for op in module.walk()}
    (got,) = run_reference(module, {"x": x})
    operands: list[Operand] = [x] if opset < 9 else [x, Const(np.array(scales, np.float32))]
    (want,) = run_onnxruntime("Upsample", operands, attrs, opset=opset)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
