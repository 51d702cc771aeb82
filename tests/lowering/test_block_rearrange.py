"""DepthToSpace / SpaceToDepth on the AI core as their defining reshape, transpose and
reshape (``block-rearrange-as-transpose``): each level against the one above it on the
``test`` preset with NaN in the on-chip buffers' unwritten lanes, both modes, a ragged
width; an ESPCN-style PixelShuffle after a convolution; dynamic spatial sizes keep the op."""

from __future__ import annotations

import pytest
from xdsl.ir import SSAValue

from tests.lowering.test_tile_differential import (
    NAN,
    Graph,
    assert_matches,
    assert_no_nan,
    run_levels,
)


def _graph_ops(levels) -> set[str]:
    return {op for k in levels.tiled_kernels for op in k.ops}


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
@pytest.mark.parametrize("op", ["depth_to_space", "space_to_depth"])
def test_block_rearrange_runs_as_a_transpose(op: str, mode: str):
    g = Graph()
    shape = [2, 18, 5, 7] if op == "depth_to_space" else [2, 4, 9, 15]
    y = g.op(op, g.input(shape), blocksize=3, mode=mode)
    levels = run_levels(g.b.build(y), g.arrays, "test", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels, rtol=0, atol=0)
    assert f"graph.{op}" not in _graph_ops(levels)
    assert all(k.unit != "host" for k in levels.tiled_kernels)


def test_pixel_shuffle_after_a_convolution():
    """ESPCN's head: a conv to r² channels, PixelShuffle(r), a sigmoid."""
    g = Graph()
    x = g.input([1, 4, 6, 10], "NCHW")
    conv: SSAValue = g.op(
        "conv2d", x, g.const([4, 4, 3, 3]), pads=[1, 1, 1, 1], kernel_shape=[3, 3]
    )
    y = g.op("sigmoid", g.op("depth_to_space", conv, blocksize=2))
    levels = run_levels(g.b.build(y), g.arrays, "test", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels, rtol=1e-5, atol=1e-6)
    assert all(k.unit != "host" for k in levels.tiled_kernels)
