"""A reduction along the innermost axis ends in a cross-lane instruction per result element
(``vcadd`` / ``vcmax``), whose repeats cost ``vector_cross_lane_cycles`` each (docs/
hardware.md, "DMA latencies", pypto's vector figures); a reduction over outer axes is an
elementwise pass only."""

from __future__ import annotations

from math import ceil, prod

import pytest
from xdsl.dialects.builtin import DenseArrayBase, StringAttr, f32, i32, i64
from xdsl.ir import Attribute

from tests.runtime.test_cycle_model import Kernel
from tilegraph.cost_model.tile_costs import cost_of
from tilegraph.dialects.tile import TileOp
from tilegraph.dialects.tile.vector_layout import ReduceOp
from tilegraph.hardware import hardware_preset

B910 = hardware_preset("ascend910b")
DOC_CROSS_LANE = 7
"""pypto's cycle-accurate A2/A3 pipe model: ``vecRmwDelay_``, the cycles per repeat of
``vcmax`` / ``vcmin`` and of ``vcadd`` in mode 0."""
DOC_VECTOR_BYTES = 256


def _reduce(
    src_shape: tuple[int, ...], axes: tuple[int, ...], element: Attribute = f32, kind="max"
) -> TileOp:
    kern = Kernel(B910)
    src = kern.buf(src_shape, "UB", element, name="src")
    dst_shape = tuple(1 if i in axes else d for i, d in enumerate(src_shape))
    dst = kern.buf(dst_shape, "UB", element, name="dst")
    op = ReduceOp(
        operands=[src, dst],
        properties={"kind": StringAttr(kind), "axes": DenseArrayBase.from_list(i64, axes)},
    )
    return kern.add(op)


def test_the_preset_carries_the_documented_cross_lane_cost():
    assert B910.vector_cross_lane_cycles == DOC_CROSS_LANE


@pytest.mark.parametrize(
    ("shape", "axes", "rows"),
    [((16, 512), (1,), 16), ((4, 8, 64), (1, 2), 4), ((16, 512), (0,), 0)],
)
def test_a_row_reduction_pays_one_cross_lane_repeat_per_result(shape, axes, rows):
    op = _reduce(shape, axes)
    elementwise = ceil(4 * prod(shape) / DOC_VECTOR_BYTES)
    assert cost_of(op, B910) == elementwise + rows * DOC_CROSS_LANE


@pytest.mark.parametrize("kind", ["sum", "max"])
def test_an_integer_row_reduction_folds_its_lanes_by_halving_passes(kind: str):
    """No cross-lane instruction takes int32 (``vcadd`` / ``WholeReduceSum``: half and
    float): each of 16 rows' last 64 lanes (one 256-byte repeat) halve in 6 passes of
    ``vadd`` / ``vmax`` over all rows, 16 x 32, 16, ... 1 lanes of 4 bytes."""
    op = _reduce((16, 512), (1,), i32, kind)
    elementwise = ceil(4 * 16 * 512 / DOC_VECTOR_BYTES)
    passes = sum(max(1, ceil(16 * lanes * 4 / DOC_VECTOR_BYTES)) for lanes in (32, 16, 8, 4, 2, 1))
    assert cost_of(op, B910) == elementwise + passes
    assert cost_of(op, B910) != cost_of(_reduce((16, 512), (1,), f32, kind), B910)
