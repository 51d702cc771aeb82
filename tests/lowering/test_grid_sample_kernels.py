"""GridSample on the AI core (:mod:`tilegraph.lowering.conversion.tiling.grid_sample`), each
level against the one above it (the harness of :mod:`tests.lowering.test_tile_differential`):
graph -> macro kernels -> tiled loops on both executors, on the ``test`` preset (ragged
position tiles, several channel blocks), every mode x padding x align_corners; again with
the NCHW input held as NC1HWC0 with NaN in its padding lanes; and the cases that stay on
the host say why."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from xdsl.ir import SSAValue

from tests.lowering.test_tile_differential import (
    NAN,
    VECTOR,
    Graph,
    assert_matches,
    assert_no_nan,
    assert_single_host_kernel,
    assert_tiled,
    assert_units,
    estimated_cycles,
    run_levels,
)

GRID_SAMPLE = {"graph.grid_sample": VECTOR}


def grid_sample_case(x_shape, out_hw, spread: float = 1.3, **attrs):
    """A GridSample of an NCHW input at a grid ``[N, Ho, Wo, 2]`` of coordinates uniform in
    ``[-spread, spread]`` (beyond 1: outside the image, where the padding modes differ)."""

    def build(g: Graph) -> list[SSAValue]:
        x = g.input(x_shape, "NCHW")
        coords = g.rng.uniform(-spread, spread, (x_shape[0], *out_hw, 2)).astype(np.float32)
        grid = g.input([x_shape[0], *out_hw, 2])
        g.arrays[-1] = coords
        return [g.op("grid_sample", x, grid, **attrs)]

    return build


MODES = ("bilinear", "nearest", "bicubic")
PADDINGS = ("zeros", "border", "reflection")


def _module(build, padded: bool = False):
    g = Graph(padded)
    return g.b.build(*build(g)), g.arrays


@pytest.mark.parametrize(
    ("mode", "padding", "align"), list(itertools.product(MODES, PADDINGS, (0, 1)))
)
def test_grid_sample_kernel(mode: str, padding: str, align: int):
    """Every level agrees, the sample runs on the vector unit, in several tiles (a ragged
    last one of 7 x 9 = 63 positions)."""
    build = grid_sample_case([2, 3, 5, 6], (7, 9), mode=mode, padding_mode=padding,
                             align_corners=align)  # fmt: skip
    module, inputs = _module(build)
    levels = run_levels(module, inputs, "test")
    assert_matches(levels, rtol=1e-5, atol=1e-5)
    assert_tiled(levels.module)
    assert_units(levels.tiled_kernels, GRID_SAMPLE, "tile-kernels{platform=test}")
    assert levels.splits(), "the test preset should split the sample into tiles"
