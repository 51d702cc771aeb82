"""3-D pooling on the vector unit (:mod:`tilegraph.lowering.conversion.tiling.pooling3d`)
and global pooling over D, H, W of NDC1HWC0 (:mod:`...tiling.reduction`).

Each case runs every level (:func:`tests.lowering.test_tile_differential.run_levels`: the
graph, the macro kernels, both executors of the tiled kernels) on the ``test`` preset
(8 KiB of UB: wide rows are cut in column tiles), with channel counts that are not
multiples of C0 (ragged lanes), once with the input in its NCDHW origin layout and once
held as NDC1HWC0 with NaN in the padding lanes (no kernel may read them).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.ir import SSAValue

from tests.lowering.test_tile_differential import (
    NAN,
    VECTOR,
    Graph,
    assert_matches,
    assert_units,
    estimated_cycles,
    run_levels,
)
from tilegraph.dialects.graph.pooling import AvgPoolOp
from tilegraph.dialects.graph.windows import window
from tilegraph.dialects.tile import PoolOp, memref_shape
from tilegraph.lowering.conversion.tiling.pooling3d import DepthRun, depth_runs

# name: (op, input shape, attributes)
CASES: dict[str, tuple[str, list[int], dict]] = {
    "max_strided_padded": (
        "max_pool",
        [1, 20, 5, 7, 9],
        {"kernel_shape": [2, 3, 3], "strides": [2, 2, 2], "pads": [0, 1, 1, 0, 1, 1]},
    ),
    "max_depth_pads_dilated": (
        "max_pool",
        [2, 6, 6, 5, 6],
        {"kernel_shape": [3, 2, 2], "dilations": [2, 1, 1], "pads": [2, 0, 1, 2, 1, 0]},
    ),
    "max_ceil_mode": (
        "max_pool",
        [1, 18, 5, 6, 7],
        {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2], "ceil_mode": 1},
    ),
    "avg_exclude_pad": (
        "avg_pool",
        [1, 20, 5, 7, 9],
        {"kernel_shape": [3, 3, 3], "strides": [1, 2, 2], "pads": [1] * 6},
    ),
    "avg_include_pad": (
        "avg_pool",
        [2, 12, 4, 6, 6],
        {"kernel_shape": [3, 3, 3], "pads": [1] * 6, "count_include_pad": 1},
    ),
    "avg_ceil_include_pad": (
        "avg_pool",
        [1, 5, 6, 5, 5],
        {
            "kernel_shape": [3, 2, 3],
            "strides": [2, 2, 2],
            "pads": [1, 0, 1, 1, 0, 1],
            "ceil_mode": 1,
            "count_include_pad": 1,
        },
    ),
    "avg_wide_rows": (  # a 40-pixel row of 2 blocks does not fit the test preset's UB
        "avg_pool",
        [1, 20, 3, 4, 40],
        {"kernel_shape": [2, 2, 3], "pads": [1, 0, 1, 0, 1, 1]},
    ),
}


def _pool_module(name: str, blocked: bool):
    """The pooling of case ``name``; ``blocked``: its input held as NDC1HWC0 (NaN in the
    padding lanes) and a 1x1x1 convolution after it, so that it pools NDC1HWC0 into
    NDC1HWC0 (alone, the format engine pools NCDHW: one conversion either way)."""
    op, shape, attrs = CASES[name]
    g = Graph(blocked)
    y = g.op(op, g.input(shape, "NCDHW"), **attrs)
    if blocked:
        y = g.op("conv", y, g.const([16, shape[1], 1, 1, 1], "NCDHW"), None)
    return g.b.build(y), g.arrays


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("blocked", [False, True], ids=["ncdhw", "ndc1hwc0_nan_padding"])
def test_pool3d_every_level_agrees(name: str, blocked: bool) -> None:
    module, inputs = _pool_module(name, blocked)
    levels = run_levels(module, inputs, "test", pad_value=NAN if blocked else None)
    op = f"graph.{CASES[name][0]}"
    assert_units(levels.tiled_kernels, {op: VECTOR}, "tile-kernels")
    pools = [p for p in levels.module.walk() if isinstance(p, PoolOp)]
    assert pools and all(len(memref_shape(p.src)) == (5 if blocked else 4) for p in pools)
    assert_matches(levels, atol=1e-4 if blocked else 1e-5)


def test_pool3d_after_conv3d_stays_in_ndc1hwc0() -> None:
    """Conv3d + ReLU, MaxPool3d, AvgPool3d, GlobalAveragePool: the pools read and write
    NDC1HWC0 (no conversion between them), the global pool reduces D, H and W of it."""
    g = Graph(padded=True)
    x = g.input([1, 20, 6, 7, 9], "NCDHW")
    y = g.op("relu", g.op("conv", x, g.const([24, 20, 3, 3, 3], "NCDHW"), None, pads=[1] * 6))
    y = g.op("max_pool", y, kernel_shape=[1, 2, 2], strides=[1, 2, 2])
    y = g.op("avg_pool", y, kernel_shape=[2, 2, 2], strides=[2, 1, 1], pads=[0, 1, 1, 0, 0, 0])
    y = g.op("global_avg_pool", y)
    levels = run_levels(g.b.build(y), g.arrays, "test", pad_value=NAN)
    assert_units(
        levels.tiled_kernels,
        {"graph.max_pool": VECTOR, "graph.avg_pool": VECTOR, "graph.global_avg_pool": VECTOR},
        "tile-kernels",
    )
    assert_matches(levels, atol=1e-4)
    ops = [k.ops for k in levels.tiled_kernels]
    assert ops.count(("layout.trans_data",)) == 1, ops  # the output's (a [1, 24] vector)


def test_depth_runs_skip_the_taps_in_the_padding() -> None:
    """Output planes in runs of equal depth taps: kernel 3, pads 1 over 5 planes gives a
    front plane whose tap 0 lies in the padding, three interior planes, a back plane whose
    tap 2 does; with count_include_pad every plane divides by 3."""
    (axis,) = _depth_axis(5, 3, 1, 1)
    assert depth_runs(axis, include_pad=False) == [
        DepthRun(0, 1, 1, 3, 2),
        DepthRun(1, 4, 0, 3, 3),
        DepthRun(4, 5, 0, 2, 2),
    ]
    assert [r.count for r in depth_runs(axis, include_pad=True)] == [3, 3, 3]


def _depth_axis(size: int, kernel: int, stride: int, pad: int):
    """The window axis of a 1-D pooling of ``size`` positions."""
    props = {
        "kernel_shape": DenseArrayBase.from_list(i64, [kernel]),
        "strides": DenseArrayBase.from_list(i64, [stride]),
        "pads": DenseArrayBase.from_list(i64, [pad, pad]),
    }
    return window(AvgPoolOp, props, [size], [kernel])


def test_pool3d_runs_only_the_taps_inside_the_image() -> None:
    """The interpreter's ``vpool`` count is the depth taps inside the image per output
    plane and tile, not kernel depth x output planes."""
    module, inputs = _pool_module("avg_exclude_pad", False)
    levels = run_levels(module, inputs, "test")
    (kernel,) = [k for k in levels.tiled_kernels if k.ops == ("graph.avg_pool",)]
    inside = 2 + 3 * 3 + 2  # D = 5, kernel 3, pads 1: 2 + 3 + 3 + 3 + 2 taps
    per_plane_tiles = kernel.tiles // 5
    assert levels.counters.ops["tile.vpool"] == inside * per_plane_tiles, levels.counters.ops


def _pool_kernel(kd: int):
    def build(g: Graph) -> Sequence[SSAValue]:
        x = g.input([1, 20, 8, 9, 9], "NCDHW")
        return [g.op("max_pool", x, kernel_shape=[kd, 3, 3], pads=[kd // 2, 1, 1] * 2)]

    return build


def test_pool3d_estimate_grows_with_depth_taps() -> None:
    cycles = [estimated_cycles(_pool_kernel(kd)) for kd in (1, 3, 5)]
    assert cycles[0] < cycles[1] < cycles[2], cycles
