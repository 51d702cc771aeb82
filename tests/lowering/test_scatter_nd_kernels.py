"""ScatterND on the AI core (``tiling/scatter_nd.py``, short slices through UB-resident
blocks: ``tiling/scatter_ub.py``), each level against the one above it (the harness of
:mod:`tests.lowering.test_tile_differential`) on the ``test`` preset with NaN in the
on-chip buffers' unwritten lanes: index tuples of depth 1, 2 and 3 (indices of rank 2 and
3) with negative components and duplicates, every reduction on both paths, slices of 1, 7
(28 bytes: under a DMA block, so through UB), 16 and 40 elements, a ragged last index
tile, several output blocks over the cores, and JetMoE's router rows (``index_add_`` into
an Expand of zeros). What stays on the host says why."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from xdsl.ir import SSAValue

from tests.lowering.test_gather_kernels import index_input
from tests.lowering.test_gather_nd_kernels import tuples_input
from tests.lowering.test_tile_differential import (
    NAN,
    VECTOR,
    Graph,
    assert_matches,
    assert_units,
    run_levels,
)
from tilegraph.dialects.tile import ScatterRowsOp
from tilegraph.dialects.tile.base import memref_shape

SCATTER_ND = {"graph.scatter_nd": VECTOR}
VECTOR_COMBINE = ("tile.vadd", "tile.vmul", "tile.vmax", "tile.vmin")


def scatter(
    data: Sequence[int], count: Sequence[int], depth: int, reduction: str
) -> Callable[[Graph], SSAValue]:
    """``scatter_nd(data, tuples [*count, depth], updates)``: random tuples (so duplicates
    and negative components among them) into a ``data``-shaped input."""

    def build(g: Graph) -> SSAValue:
        x = g.input(data)
        tuples = tuples_input(g, count, data[:depth])
        updates = g.input([*count, *data[depth:]])
        return g.op("scatter_nd", x, tuples, updates, reduction=reduction)

    return build


def jetmoe_rows(g: Graph) -> SSAValue:
    """JetMoE's router: ``zeros([n, D]).index_add_(0, rows, values)`` as the dynamo exporter
    writes it — ScatterND add into an Expand of zeros, indices an Unsqueeze of int64 rows."""
    zeros = g.op("expand", g.b.constant(np.zeros((1, 16), np.float32)), g.ints([12, 16]))
    rows = g.op("unsqueeze", tuples_input(g, [20], [12]), g.ints([-1]))
    rows = g.op("squeeze", rows, g.ints([-1]))
    return g.op("scatter_nd", zeros, rows, g.input([20, 16]), reduction="add")


CASES: dict[str, Callable[[Graph], SSAValue]] = {
    "rows_add": scatter([12, 16], [20], 1, "add"),
    "depth_two_none_ragged_slice": scatter([5, 6, 7], [19], 2, "none"),
    "depth_three_max": scatter([3, 4, 5, 8], [5, 8], 3, "max"),
    "indices_of_rank_three_mul": scatter([6, 40], [2, 2, 3], 1, "mul"),
    "elements_min": scatter([6, 5], [10], 2, "min"),
    "elements_none": scatter([6, 5], [4, 10], 2, "none"),
    "elements_add": scatter([6, 5], [30], 2, "add"),
    "elements_mul_depth_three": scatter([3, 4, 5], [25], 3, "mul"),
    "elements_max_rank_three": scatter([4, 3, 5], [3, 9], 3, "max"),
    "jetmoe_rows": jetmoe_rows,
}


@pytest.mark.parametrize("name", list(CASES))
def test_scatter_nd_kernel(name: str):
    g = Graph()
    module = g.b.build(CASES[name](g))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    for level, outputs in levels.outputs.items():
        for out in outputs:
            assert not np.isnan(out).any(), f"{level}: NaN from an unwritten lane"
    assert_matches(levels, rtol=0, atol=0)  # combined in the graph level's order
    assert_units(levels.tiled_kernels, SCATTER_ND, "tile-kernels{platform=test}")
    tuples = next(a for a in g.arrays if a.dtype == np.int64)
    assert (tuples < 0).any(), "the case should have negative components"
    flat = tuples.reshape(-1, tuples.shape[-1])
    flat = flat % np.asarray(levels.reference[0].shape[: flat.shape[1]])  # wrapped
    assert len({tuple(t) for t in flat}) < len(flat), "the case should have duplicates"
    combines = {op: n for op, n in levels.counters.ops.items() if op in VECTOR_COMBINE}
    data = levels.reference[0]
    if int(np.prod(data.shape[flat.shape[1] :])) * data.itemsize < 32:  # under a DMA block
        # through UB: tuples applied by the scalar loop, no slice DMA, no vector combine
        assert levels.counters.ops.get("tile.scatter_rows", 0) >= 1
        assert "tile.get_value" not in levels.counters.ops and not combines
        return
    assert levels.counters.ops.get("tile.get_value", 0) >= tuples.size
    # add / max / min: atomic stores (the DMA combines); mul: load, vmul, store
    assert combines == ({"tile.vmul": int(np.prod(tuples.shape[:-1]))} if "mul" in name else {})


@pytest.mark.parametrize("reduction", ["none", "add"])
def test_short_slices_in_blocks_with_a_ragged_tuple_tile(reduction: str):
    """A 4 KiB UB: the [40, 30] output (1200 one-element rows) in several blocks over the
    cores, 310 tuples in tiles of ``T`` and a ragged last one (its own buffers); each block
    applies every tile in order, and the levels match exactly (NaN in unwritten lanes)."""
    g = Graph()
    module = g.b.build(scatter([40, 30], [310], 2, reduction)(g))
    levels = run_levels(module, g.arrays, '"test:ub=4KiB"', pad_value=NAN)
    assert_matches(levels, rtol=0, atol=0)
    for outputs in levels.outputs.values():
        assert not np.isnan(outputs[0]).any()
    (kernel,) = [k for k in levels.tiled_kernels if k.unit == VECTOR]
    assert kernel.tiles > 1  # the output's blocks
    sizes = sorted(
        memref_shape(op.indices)[0] for op in levels.module.walk() if isinstance(op, ScatterRowsOp)
    )
    assert len(sizes) == 2 and 0 < sizes[0] == 310 % sizes[1], sizes  # a tile, the ragged one
    # every block scans all 310 tuples: the full tiles and the ragged one
    runs = levels.counters.ops["tile.scatter_rows"]
    assert runs == kernel.tiles * (310 // sizes[1] + 1)


@pytest.mark.parametrize(("rows", "through_ub"), [(40, True), (100, False)])
def test_many_blocks_a_core_keep_the_dma_per_slice(rows: int, through_ub: bool):
    """A 4 KiB UB on the ``test`` preset's 4 cores: blocks of 256 one-element rows. [40, 30]
    is 5 blocks, 2 on the busiest core, each rereading every tuple's 2 components: under the
    slice DMAs' cost per tuple. [100, 30] is 12 blocks, 3 a core: over it, so the slices go
    by DMA (scalar reads and copies per tuple), both exact."""
    g = Graph()
    module = g.b.build(scatter([rows, 30], [40], 2, "none")(g))
    levels = run_levels(module, g.arrays, '"test:ub=4KiB"', pad_value=NAN)
    assert_matches(levels, rtol=0, atol=0)
    assert ("tile.scatter_rows" in levels.counters.ops) is through_ub
    assert ("tile.get_value" in levels.counters.ops) is not through_ub


@pytest.mark.parametrize(("platform", "atomic"), [("test", True), ("ascend310p", False)])
def test_an_int32_add_is_atomic_where_the_dma_adds_int32(platform: str, atomic: bool):
    """Atlas A2 / A3's DMA adds int32 atomically (the ``test`` preset models that core);
    the 310P's AI core's does not (int16, half, float): there each slice is loaded, added
    by ``vadd`` and stored back. Both exact."""
    g = Graph()
    data, updates = index_input(g, [12, 16], 50, "int32"), index_input(g, [20, 16], 50, "int32")
    module = g.b.build(
        g.op("scatter_nd", data, tuples_input(g, [20, 1], [12]), updates, reduction="add")
    )
    levels = run_levels(module, g.arrays, platform)
    assert_matches(levels, rtol=0, atol=0)
    assert_units(levels.tiled_kernels, SCATTER_ND, f"tile-kernels{{platform={platform}}}")
    assert ("tile.vadd" in levels.counters.ops) is not atomic


def test_out_of_range_index_is_an_index_error():
    """A component outside ``[-d, d)`` is an IndexError of the tiled executors, as of the
    graph level (the hardware would write whatever lies there)."""
    import tilegraph

    g = Graph()
    module = g.b.build(scatter([4, 8], [3], 1, "none")(g))
    compiled = tilegraph.compile(module, "O2", platform="test")
    g.arrays[1][1, 0] = 4
    with pytest.raises(IndexError):
        compiled(*g.arrays)


def test_constant_data_and_updates_are_read_from_gm():
    """Speech2Text's decoder shift scatters a constant of ones into a constant of zeros
    (``[3, 9]`` int64, small enough to be a compile-time parameter elsewhere): the kernel
    DMAs data and updates like any operand, so they stay GM inputs and the scatter runs
    on the vector core (it went to the host: "a scatter_nd of a value computed inside
    the kernel")."""
    g = Graph()
    zeros = g.b.constant(np.zeros((3, 9), np.int64))
    ones = g.b.constant(np.ones(3, np.int64))
    module = g.b.build(g.op("scatter_nd", zeros, tuples_input(g, [3], [3, 9]), ones))
    levels = run_levels(module, g.arrays, "test")
    assert_matches(levels, rtol=0, atol=0)
    assert_units(levels.tiled_kernels, SCATTER_ND, "tile-kernels{platform=test}")


def test_what_stays_on_the_host_says_why():
    def int64_add(g: Graph) -> SSAValue:
        x = g.op("cast", g.input([4, 8]), to=7)
        updates = g.op("cast", g.input([3, 8]), to=7)
        return g.op("scatter_nd", x, tuples_input(g, [3], [4]), updates, reduction="add")

    g = Graph()
    levels = run_levels(g.b.build(int64_add(g)), g.arrays, "test")
    assert_matches(levels, rtol=0, atol=0)  # the host kernel runs the graph level
    reasons = [k.reason for k in levels.tiled_kernels if k.unit == "host"]
    assert reasons == ["a scatter_nd add on i64"]


@pytest.mark.parametrize("data", [[6, 3, 4], [40, 3, 50]], ids=["one_chunk", "chunks"])
def test_a_scatter_of_no_tuples_copies_its_data(data: list[int]):
    """The RoI merge of a pyramid level no box maps to (after scatter-elements-as-
    scatter-nd): no tuples, no updates; the output is the data, copied through UB in
    chunks over the cores, exact at every level with NaN in unwritten on-chip lanes."""
    g = Graph()
    module = g.b.build(scatter(data, [0], 1, "none")(g))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    assert_matches(levels, rtol=0, atol=0)
    assert_units(levels.tiled_kernels, SCATTER_ND, "tile-kernels{platform=test}")
    assert levels.counters.ops.get("tile.copy_flat", 0) >= 2
