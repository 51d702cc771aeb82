"""Gathers of short rows (under 32 B) whose table slice does not fit UB: row by row, each
row in a 32-byte slot of UB, the tile packed by a ``vstride`` and stored at once
(:mod:`tilegraph.lowering.conversion.tiling.gather`). A detector's boxes picked by index
(13500 rows of 4 floats) are the case; here on the ``test`` preset, whose UB a few
thousand elements overflow. Every level agrees exactly (both executors, NaN in unwritten
on-chip lanes), ragged last tiles and negative indices included."""

from __future__ import annotations

import pytest
from xdsl.ir import SSAValue

from tests.lowering.test_gather_kernels import GATHER, index_input
from tests.lowering.test_tile_differential import (
    NAN,
    VECTOR,
    Graph,
    assert_matches,
    assert_no_nan,
    assert_units,
    run_levels,
)


def boxes(g: Graph) -> list[SSAValue]:
    """Box rows (16 B) of a [3000, 4] table by 50 int64 indices: tiles of rows, the last
    ragged."""
    return [g.op("gather", g.input([3000, 4]), index_input(g, [50], 3000, "int64"), axis=0)]


def scores(g: Graph) -> list[SSAValue]:
    """Elements of a 1-D [5000] table (4-byte rows) by a [7, 9] int32 index tensor."""
    return [g.op("gather", g.input([5000]), index_input(g, [7, 9], 5000, "int32"), axis=0)]


def last_axis(g: Graph) -> list[SSAValue]:
    """Along the last axis of [2, 3000]: 2 outer positions x 3 indices (tiles dividing 3)."""
    return [g.op("gather", g.input([2, 3000]), index_input(g, [3], 3000, "int64"), axis=1)]


def half_rows(g: Graph) -> list[SSAValue]:
    """f16 rows of 3 elements (6 B, a 16-element slot) out of a [4000, 3] table."""
    return [g.op("gather", g.input([4000, 3]), index_input(g, [40], 4000, "int32"), axis=0)]


CASES = {"boxes": boxes, "scores": scores, "last_axis": last_axis, "half_rows": half_rows}


@pytest.mark.parametrize("name", list(CASES))
def test_short_rows_of_a_table_beyond_ub_gather_row_by_row(name: str):
    g = Graph(dtype="float16" if name == "half_rows" else "float32")
    module = g.b.build(*CASES[name](g))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels, rtol=0, atol=0)
    assert_units(levels.tiled_kernels, GATHER, "tile-kernels{platform=test}")
    assert (g.arrays[-1] < 0).any(), "the case should have negative indices"
    ops = levels.counters.ops
    assert ops.get("tile.get_value", 0) >= g.arrays[-1].size  # a scalar read per row
    assert ops.get("tile.vstride", 0) >= 1, ops  # each tile packed before its store


def test_gather_nd_of_single_elements_gathers_them_in_slots():
    """GatherND picking single elements ([9, 2] index tuples into a [40, 40] table): each
    element a row in its block slot, exact at every level, on the vector unit."""
    g = Graph()
    table = g.input([40, 40])
    module = g.b.build(g.op("gather_nd", table, index_input(g, [9, 2], 40, "int64")))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels, rtol=0, atol=0)
    assert_units(levels.tiled_kernels, {"graph.gather_nd": VECTOR}, "tile-kernels{platform=test}")
    assert levels.counters.ops.get("tile.vstride", 0) >= 1
