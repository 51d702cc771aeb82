"""Gather (embedding lookups) on the AI core, each level against the one above it (the
harness of :mod:`tests.lowering.test_tile_differential`): graph -> macro kernels -> tiled
loops on both executors, on the ``test`` preset (several index tiles, a ragged last one),
with NaN in the on-chip buffers' unwritten lanes; int32 and int64 indices, negative ones
(counted from the end), gathers along an inner axis, rows that are not 32-byte multiples
(a tile per row), rows larger than UB (in chunks) and rows under 32 B (through UB: a vector
gather). What stays on the host says why, and an index out of range is an error at every
level."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from xdsl.dialects.builtin import IndexType, i64
from xdsl.ir import SSAValue
from xdsl.utils.test_value import create_ssa_value

from tests.lowering.test_tile_differential import (
    NAN,
    VECTOR,
    Graph,
    assert_matches,
    assert_tiled,
    assert_units,
    estimated_cycles,
    run_levels,
)
from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import GetValueOp, scoped_memref
from tilegraph.runtime.fast_executor.forms import nest_kernel_of
from tilegraph.runtime.tile_interpreter.kernels import kernel_of

GATHER = {"graph.gather": VECTOR}


def index_input(g: Graph, shape: Sequence[int], size: int, dtype: str) -> SSAValue:
    """An index tensor input of ``dtype`` with values in ``[-size, size)``."""
    t = TensorType(list(shape), element_type_of(dtype), "ND", None)
    arg = g.b.block.insert_arg(t, len(g.b.block.args))
    arg.name_hint = f"in{len(g.arrays)}"
    g.arrays.append(g.rng.integers(-size, size, shape).astype(dtype))
    return arg


def embedding(dtype: str, table_is_input: bool = False):
    """BERT's lookup: rows of a [37, 40] table (160 B rows) by a [5, 7] index tensor: 35
    rows in tiles of 24 on the test preset (a ragged last tile of 11)."""

    def build(g: Graph) -> list[SSAValue]:
        table = g.input([37, 40]) if table_is_input else g.const([37, 40])
        return [g.op("gather", table, index_input(g, [5, 7], 37, dtype), axis=0)]

    return build


def inner_axis(g: Graph) -> list[SSAValue]:
    """Along axis 1 of [3, 11, 16]: 3 outer positions x 9 indices, tiles that divide 9."""
    x = g.input([3, 11, 16])
    return [g.op("gather", x, index_input(g, [9], 11, "int32"), axis=1)]


def unaligned_rows(g: Graph) -> list[SSAValue]:
    """40-byte rows: each its own tile (a UB row address must be 32-byte aligned)."""
    x = g.input([20, 10])
    return [g.op("gather", x, index_input(g, [2, 3], 20, "int64"), axis=0)]


def chunked_rows(g: Graph) -> list[SSAValue]:
    """Rows of 1500 floats (6000 B, over the test preset's 4 KiB budget): chunks of 750."""
    x = g.input([6, 1500])
    return [g.op("gather", x, index_input(g, [4], 6, "int64"), axis=0)]


def constant_indices(g: Graph) -> list[SSAValue]:
    """Compile-time indices (inlined in the kernel body): a CLS-token pick ``x[:, 0]`` and
    three rows, one negative, of an inner axis."""
    x = g.input([2, 9, 16])
    cls = g.op("gather", x, g.b.constant(np.array(0, np.int64)), axis=1)
    rows = g.op("gather", x, g.ints([3, -1, 0]), axis=1)
    return [cls, rows]


CASES = {
    "embedding_int64": embedding("int64"),
    "embedding_int32": embedding("int32"),
    "embedding_table_input": embedding("int64", table_is_input=True),
    "inner_axis": inner_axis,
    "unaligned_rows": unaligned_rows,
    "chunked_rows": chunked_rows,
    "constant_indices": constant_indices,
}


def _module(name: str):
    g = Graph()
    return g.b.build(*CASES[name](g)), g.arrays


@pytest.mark.parametrize("name", list(CASES))
def test_gather_kernel(name: str):
    """Every level agrees exactly (NaN in unwritten on-chip lanes), the gather runs on the
    vector unit, in several tiles."""
    module, inputs = _module(name)
    levels = run_levels(module, inputs, "test", pad_value=NAN)
    for level, outputs in levels.outputs.items():
        for out in outputs:
            assert not np.isnan(out).any(), f"{level}: NaN from an unwritten lane"
    assert_matches(levels, rtol=0, atol=0)
    assert_tiled(levels.module)
    assert_units(levels.macro_kernels, GATHER, "lower-graph-to-kernels")
    assert_units(levels.tiled_kernels, GATHER, "tile-kernels{platform=test}")
    if name == "constant_indices":
        assert "tile.get_value" not in levels.counters.ops  # offsets known when compiling
        return
    assert (inputs[-1] < 0).any(), "the case should have negative indices"
    assert levels.splits(), "the test preset should split the gather into tiles"
    assert levels.counters.ops.get("tile.get_value", 0) >= inputs[-1].size


def last_axis(g: Graph) -> list[SSAValue]:
    """Along the last axis of [300, 5] (4-byte rows): through UB, tiles of outer rows
    (the last ragged); negative run-time indices."""
    x = g.input([300, 5])
    return [g.op("gather", x, index_input(g, [3], 5, "int64"), axis=1)]


def short_rows_int32(g: Graph) -> list[SSAValue]:
    """8-byte rows along an inner axis of [40, 7, 2] by int32 [2, 2] indices."""
    x = g.input([40, 7, 2])
    return [g.op("gather", x, index_input(g, [2, 2], 7, "int32"), axis=1)]


def last_axis_constant(g: Graph) -> list[SSAValue]:
    """Silero's state pick: a constant index along a last axis of size 1 ([1, 300, 1]),
    and constant indices (one negative) along the last axis of [260, 6]."""
    state = g.op("gather", g.input([1, 300, 1]), g.b.constant(np.array(0, np.int64)), axis=2)
    rows = g.op("gather", g.input([260, 6]), g.ints([5, -6, 2]), axis=1)
    return [state, rows]


def unfold_windows(g: Graph) -> list[SSAValue]:
    """``F.unfold``'s window rows: a padded [2, 3, 10, 12] gathered along axis 2 by the
    constant [3, 8] (row ``k + h``): 48-byte rows, a tile each by DMA (24 load / store
    pairs unrolled per outer position were more events than a pipe pair has)."""
    windows = np.arange(3)[:, None] + np.arange(8)[None, :]
    return [g.op("gather", g.input([2, 3, 10, 12]), g.ints(windows.tolist()), axis=2)]


UB_CASES = {
    "unfold_windows": unfold_windows,
    "last_axis": last_axis,
    "short_rows_int32": short_rows_int32,
    "last_axis_constant": last_axis_constant,
}


@pytest.mark.parametrize("name", list(UB_CASES))
def test_short_row_gather_goes_through_ub(name: str):
    """Rows under 32 B: the table slice into UB, a vector gather (vtake / vpick), the rows
    out — no scalar reads, no DMA per row; several tiles on the test preset, exact at every
    level with NaN in unwritten on-chip lanes."""
    g = Graph()
    module = g.b.build(*UB_CASES[name](g))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    for level, outputs in levels.outputs.items():
        for out in outputs:
            assert not np.isnan(out).any(), f"{level}: NaN from an unwritten lane"
    assert_matches(levels, rtol=0, atol=0)
    assert_units(levels.tiled_kernels, GATHER, "tile-kernels{platform=test}")
    assert levels.splits(), "the test preset should split the gather into tiles"
    ops = levels.counters.ops
    assert "tile.get_value" not in ops
    picks = ops.get("tile.vtake", 0) + ops.get("tile.vpick", 0)
    assert picks >= 2, ops


def test_many_unaligned_compile_time_rows_beyond_ub_stay_on_the_host():
    """48-byte rows of a table whose slice does not fit UB, by 6 compile-time indices: a
    load and a store each, unrolled, would pass the events of a pipe pair."""
    g = Graph()
    module = g.b.build(g.op("gather", g.input([2, 300, 12]), g.ints([0, 5, 9, 2, 7, 1]), axis=1))
    levels = run_levels(module, g.arrays, "test")
    assert_matches(levels, rtol=0, atol=0)
    (kernel,) = levels.tiled_kernels
    assert kernel.unit == "host"
    assert kernel.reason is not None and "6 compile-time rows of 48 B" in kernel.reason


def test_short_row_gather_cost_grows_with_the_table():
    """The cycle model costs the UB gather from its tile ops: > 0, more for a larger table."""

    def gather_rows(outer: int):
        return lambda g: [g.op("gather", g.input([outer, 5]), g.ints([3, -1, 0]), axis=1)]

    small, large = estimated_cycles(gather_rows(100)), estimated_cycles(gather_rows(1000))
    assert 0 < small < large


@pytest.mark.parametrize("executor", ["interpret", "fast"])
def test_an_index_out_of_range_is_an_error(executor: str):
    """The graph level's numpy.take raises; so do both executors of the tiled kernel."""
    from tilegraph.runtime.tiles import run_tiles

    module, inputs = _module("embedding_int64")
    levels = run_levels(module, inputs, "test")
    assert_matches(levels, rtol=0, atol=0)
    inputs[-1][2, 3] = 37
    with pytest.raises(IndexError, match="37 is out of range"):
        run_tiles(levels.module, inputs, executor=executor)


@pytest.mark.parametrize("batched", [(True, False), (False, True), (True, True)])
def test_get_value_nest_form_equals_its_kernel_point_by_point(batched: tuple[bool, bool]):
    """The fast executor's nest form of tile.get_value (a batch of index tiles, of
    positions in one, or both) reads what the kernel reads at each point, wrapped alike."""
    tile_of, position_of = batched
    op = GetValueOp(
        create_ssa_value(scoped_memref([6], i64, "UB")), [create_ssa_value(IndexType())], 9
    )
    rng = np.random.default_rng(0)
    tiles = rng.integers(-9, 9, (3, 1, 6)) if tile_of else rng.integers(-9, 9, (6,))
    positions = np.arange(4).reshape(1, 4) if position_of else np.array(5)
    form = nest_kernel_of(op, [tile_of, position_of], 2, None)
    assert form is not None
    (got,) = form(tiles, positions if position_of else 5)
    kernel = kernel_of(op)
    for a in range(3 if tile_of else 1):
        for p in range(4 if position_of else 1):
            buffer = tiles[a, 0] if tile_of else tiles
            at = int(positions[0, p]) if position_of else int(positions)
            (want,) = kernel(buffer, at)
            assert got[a if tile_of else 0, p if position_of else 0] == want


def test_many_unaligned_compile_time_tuples_stay_on_the_host():
    """GatherND's own kernel (the rule that makes constant tuples a Gather turned off): 40-
    byte rows by 6 compile-time tuples would be 6 unrolled load / store pairs."""
    import tilegraph
    from tilegraph.runtime import run_reference

    g = Graph()
    tuples = np.stack([np.arange(6) % 3, np.arange(6) % 4], 1)
    module = g.b.build(g.op("gather_nd", g.input([3, 4, 10]), g.ints(tuples.tolist())))
    want = run_reference(module.clone(), g.arrays)
    compiled = tilegraph.compile(module, "O2{disable=gather-nd-as-gather}", platform="test")
    np.testing.assert_array_equal(compiled(*g.arrays)[0], want[0])
    reasons = [
        op.attributes["tile.host_reason"].data  # type: ignore[union-attr]
        for op in compiled.module.walk()
        if "tile.host_reason" in op.attributes
    ]
    assert reasons == [
        "a gather_nd of 6 compile-time rows of 40 B (not a multiple of 32: a tile each)"
    ]
