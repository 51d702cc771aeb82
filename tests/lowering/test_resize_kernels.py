"""Nearest resize on the AI core (:mod:`tilegraph.lowering.conversion.tiling.resize`), each
level against the one above it (the harness of :mod:`tests.lowering.test_tile_differential`):
graph -> macro kernels -> tiled loops on both executors, on the ``test`` preset (ragged
tails, several tiles), the resize on the vector unit; again with the NCHW inputs held as
NC1HWC0 with NaN in their padding lanes; and the modes that stay on the host say why."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.ir import SSAValue

from tests.lowering.test_tile_differential import (
    NAN,
    VECTOR,
    Graph,
    assert_matches,
    assert_no_nan,
    assert_tiled,
    assert_units,
    run_levels,
)
from tilegraph.lowering.conversion.tiling.resize import row_nests

RESIZE = {"graph.resize": VECTOR}


def resize_case(shape, scales=None, sizes=None, **attrs):
    """A Resize of an NCHW input by ``scales`` (H, W) or to ``sizes`` (H, W)."""

    def build(g: Graph) -> list[SSAValue]:
        x = g.input(shape, "NCHW")
        s = None if scales is None else g.b.constant(np.array([1, 1, *scales], np.float32))
        n = None if sizes is None else g.ints([*shape[:2], *sizes])
        return [g.op("resize", x, None, s, n, mode="nearest", **attrs)]

    return build


CASES = {
    # YOLOv8's upsampling: x2, asymmetric, floor; planes larger than UB: rows split
    "x2_asymmetric_floor": resize_case(
        [1, 5, 13, 17],
        [2.0, 2.0],
        coordinate_transformation_mode="asymmetric",
        nearest_mode="floor",
    ),  # fmt: skip
    "x0.5_half_pixel_round_prefer_floor": resize_case([2, 3, 27, 31], [0.5, 0.5]),
    "x1.5_align_corners_ceil": resize_case(
        [2, 7, 5, 6],
        [1.5, 1.5],
        coordinate_transformation_mode="align_corners",
        nearest_mode="ceil",
    ),  # fmt: skip
    "x1.5_asymmetric_round_prefer_ceil_tall": resize_case(
        [1, 2, 37, 9],
        [1.5, 1.5],
        coordinate_transformation_mode="asymmetric",
        nearest_mode="round_prefer_ceil",
    ),  # fmt: skip
    "sizes_pytorch_half_pixel_floor": resize_case(
        [1, 13, 11, 10],
        sizes=[17, 4],
        coordinate_transformation_mode="pytorch_half_pixel",
        nearest_mode="floor",
    ),  # fmt: skip
    "mixed_half_pixel_symmetric": resize_case(
        [1, 4, 9, 12], [2.5, 0.75], coordinate_transformation_mode="half_pixel_symmetric"
    ),
}


def _module(name: str, padded: bool = False):
    g = Graph(padded)
    return g.b.build(*CASES[name](g)), g.arrays


@pytest.mark.parametrize("name", list(CASES))
def test_resize_kernel(name: str):
    """Every level agrees exactly, the resize runs on the vector unit, in several tiles."""
    module, inputs = _module(name)
    levels = run_levels(module, inputs, "test")
    assert_matches(levels, rtol=0, atol=0)
    assert_tiled(levels.module)
    assert_units(levels.macro_kernels, RESIZE, "lower-graph-to-kernels")
    assert_units(levels.tiled_kernels, RESIZE, "tile-kernels{platform=test}")
    assert levels.splits(), "the test preset should split the resize into tiles"


@pytest.mark.parametrize("name", list(CASES))
def test_resize_kernel_nan_padding(name: str):
    """NCHW inputs held as NC1HWC0 with NaN in the padding lanes: no NaN may leak."""
    module, inputs = _module(name, padded=True)
    levels = run_levels(module, inputs, "test", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels, rtol=0, atol=0)
    assert_units(levels.tiled_kernels, RESIZE, "tile-kernels{platform=test}")


def test_row_tiles_of_a_periodic_table_become_one_loop():
    """x1.5 repeats its table every 3 output rows: tiles of 6 rows are one loop whose
    windows advance by 4 input rows, and the ragged last tile is a nest of its own."""
    table = np.floor(np.arange(20) / 1.5).astype(np.int64)
    first, last = row_nests(table, 6)
    assert (first.count, first.rows, first.src_step, first.height) == (3, 6, 4, 4)
    assert first.table == (0, 0, 1, 2, 2, 3)
    assert (last.out_start, last.rows, last.src_start, last.count) == (18, 2, 12, 1)


@pytest.mark.parametrize(
    ("attrs", "reason"),
    [
        ({"coordinate_transformation_mode": "tf_crop_and_resize"}, "tf_crop_and_resize"),
        ({"mode": "linear", "integer": True}, "a linear resize of i32"),
    ],
)
def test_resizes_without_a_kernel_stay_on_the_host_with_their_reason(attrs, reason):
    """(Linear and cubic resizes of float tensors run on the vector unit:
    tests/lowering/test_axis_kernels.py.)"""
    from tilegraph.dialects.element_types import element_type_of
    from tilegraph.dialects.layout_type import TensorType
    from tilegraph.passes.context import make_context
    from tilegraph.passes.pipelines import run_pipeline

    attrs = dict(attrs)
    integer = attrs.pop("integer", False)
    g = Graph()
    if integer:
        t = TensorType([1, 2, 6, 6], element_type_of(np.dtype(np.int32)), "NCHW")
        x = g.b.block.insert_arg(t, 0)
    else:
        x = g.input([1, 2, 6, 6], "NCHW")
    roi = None
    if attrs.get("coordinate_transformation_mode") == "tf_crop_and_resize":
        roi = g.b.constant(np.array([0, 0, 0.1, 0.1, 1, 1, 0.9, 0.9], np.float32))
    scales = g.b.constant(np.array([1, 1, 2, 2], np.float32))
    module = g.b.build(g.op("resize", x, roi, scales, None, **{"mode": "nearest", **attrs}))
    ctx = make_context()
    run_pipeline("set-target{platform=test},O2,lower-graph-to-kernels", ctx, module)
    from tilegraph.cost_model.kernel_report import kernel_report

    (kernel,) = [k for k in kernel_report(module) if "graph.resize" in k.ops]
    assert kernel.unit == "host" and reason in (kernel.reason or ""), kernel.reason
