"""A GatherElements whose result indexes a row lookup (Data2VecText's and X-MOD's token
type ids picked by position, then embedded): one vector kernel, the ids read from UB on
the scalar unit — every level agrees exactly on both executors with NaN in the unwritten
on-chip lanes, negative ids and positions, a ragged last tile on the ``test`` preset.
Rows that are not a multiple of 32 B keep the two kernels, with the reason."""

from __future__ import annotations

import pytest
from xdsl.ir import SSAValue

from tests.lowering.test_gather_kernels import index_input
from tests.lowering.test_gather_views import one_exact_gather_kernel
from tests.lowering.test_tile_differential import NAN, Graph, assert_matches, run_levels


def token_types(g: Graph, row: int = 32, table_is_input: bool = False) -> list[SSAValue]:
    """Ids of [7, 40] (in [-2, 2): two types) picked by [7, 5] positions (in [-40, 40)),
    then rows of ``row`` floats of a [2, row] table."""
    ids = g.op("gather_elements", index_input(g, [7, 40], 2, "int64"), index_input(g, [7, 5], 40, "int64"), axis=1)  # fmt: skip
    table = g.input([2, row]) if table_is_input else g.const([2, row])
    return [g.op("gather", table, ids, axis=0)]


CASES = {
    "constant_table": lambda g: token_types(g),
    "input_table": lambda g: token_types(g, 16, table_is_input=True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_lookup_of_gathered_ids_is_one_kernel(name: str):
    """One vector kernel of both ops, exact, in several tiles (the last ragged), the ids
    read on the scalar unit (a read per id)."""
    g, levels = one_exact_gather_kernel(CASES[name])
    (kernel,) = levels.tiled_kernels
    assert kernel.ops == ("graph.gather_elements", "graph.gather"), kernel.ops
    assert levels.splits(), "the test preset should split the lookup into tiles"
    assert levels.counters.ops.get("tile.get_value", 0) == 7 * 5
    assert any((a < 0).any() for a in g.arrays if a.dtype.kind == "i"), "negatives expected"


def test_unaligned_rows_stay_two_kernels():
    """Rows of 20 B (5 floats): each would be a tile of its own; the two kernels stay,
    still exact."""
    g = Graph()
    module = g.b.build(*token_types(g, 5))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    assert_matches(levels, rtol=0, atol=0)
    assert len(levels.tiled_kernels) == 2, levels.tiled_kernels
