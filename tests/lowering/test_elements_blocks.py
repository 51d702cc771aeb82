"""GatherElements and ScatterElements whose axis slice does not fit UB
(``tiling/elements_blocks.py``), each level against the one above it on the ``test``
preset (2 KiB of UB per half) with NaN in the on-chip buffers' unwritten lanes: long axes
cut into blocks (the last shifted back), outer > 1, inner > 1 (a detector's boxes),
negative and repeated indices, the reductions in row-major order, ragged index tiles; an
index out of range is an error of both executors; TAPAS's shapes leave the host."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from tests.lowering.test_elements_kernels import positions
from tests.lowering.test_gather_kernels import index_input
from tests.lowering.test_tile_differential import (
    NAN,
    VECTOR,
    Graph,
    assert_matches,
    assert_no_nan,
    assert_single_host_kernel,
    assert_units,
    run_levels,
)
from tilegraph.dialects.tile import GatherRowsOp, GetValueOp, ScatterRowsOp


def gather_long_rows(g: Graph) -> list[SSAValue]:
    """[3, 1100] along axis 1 by [3, 13] (4400 B a slice, over the test preset's 4 KiB
    budget: blocks of 512, the third shifted back to 588 .. 1100); outer 3."""
    idx = index_input(g, [3, 13], 1100, "int64")
    return [g.op("gather_elements", g.input([3, 1100]), idx, axis=1)]


def gather_boxes(g: Graph) -> list[SSAValue]:
    """YOLOv10's ``torch.gather(boxes, 1, idx.repeat(1, 1, 4))`` scaled down: a [2, 300, 4]
    table by [2, 50, 4] (inner 4), each box's index repeated over its 4 coordinates; 50
    index rows in tiles of 42, the last shifted back."""
    picks = g.rng.integers(-300, 300, (2, 50, 1))
    g.arrays.append(np.repeat(picks, 4, axis=2).astype(np.int64))
    idx = index_input(g, [2, 50, 4], 300, "int64")  # replaced by the repeated picks
    g.arrays.pop()
    return [g.op("gather_elements", g.input([2, 300, 4]), idx, axis=1)]


def gather_columns_apart(g: Graph) -> list[SSAValue]:
    """Along axis 1 of [2, 600, 3] by [2, 9, 3], every element its own index (int32)."""
    idx = index_input(g, [2, 9, 3], 600, "int32")
    return [g.op("gather_elements", g.input([2, 600, 3]), idx, axis=1)]


def segment_max_min(g: Graph) -> list[SSAValue]:
    """TAPAS's ``scatter_reduce`` segment reductions scaled down: a flat [1500] tensor
    (blocks over the cores), 33 repeated indices, max then min."""
    x = g.input([1500])
    for reduction in ("max", "min"):
        idx = index_input(g, [33], 1500 // 40, "int64")  # few segments: many repeats
        x = g.op("scatter_elements", x, idx, g.input([33]), axis=0, reduction=reduction)
    return [x]


def scatter_add_mul_inner(g: Graph) -> list[SSAValue]:
    """add, then mul, along axis 1 of [3, 400, 3] (inner 3) by [3, 200, 3] repeated
    indices: index tiles of 56 rows and a ragged last one; float sums in row-major order."""
    x = g.input([3, 400, 3])
    for reduction in ("add", "mul"):
        idx = index_input(g, [3, 200, 3], 40, "int64")
        x = g.op("scatter_elements", x, idx, g.input([3, 200, 3]), axis=1, reduction=reduction)
    return [x]


def scatter_last_wins(g: Graph) -> list[SSAValue]:
    """reduction none with repeats: among equal positions the last index row wins (numpy's
    order, the graph level's); [2, 900] along axis 1 by [2, 150]."""
    idx = index_input(g, [2, 150], 60, "int64")
    return [g.op("scatter_elements", g.input([2, 900]), idx, g.input([2, 150]), axis=1)]


def scatter_first_axis(g: Graph) -> list[SSAValue]:
    """Along axis 0 of [600, 3] (outer 1, inner 3) by distinct positions [40, 3]."""
    idx = positions(g, [40, 3], 0, 600)
    return [g.op("scatter_elements", g.input([600, 3]), idx, g.input([40, 3]), axis=0)]


def gather_flat(g: Graph) -> list[SSAValue]:
    """A flat [1500] by 20 indices (axis 0, outer 1, inner 1)."""
    return [g.op("gather_elements", g.input([1500]), index_input(g, [20], 1500, "int64"), axis=0)]  # fmt: skip


def yolo_boxes(g: Graph) -> list[SSAValue]:
    """YOLOv10's box gather at full size on ascend910b: [3, 8400, 4] by [3, 300, 4] (134 KB a
    slice over the 96 KiB budget; 3600 elements a DMA each would cost more than the
    blocks): two blocks of 4200 anchors; index tiles of 32 rows, the last shifted back."""
    picks = g.rng.integers(-8400, 8400, (3, 300, 1))
    g.arrays.append(np.repeat(picks, 4, axis=2).astype(np.int64))
    idx = index_input(g, [3, 300, 4], 8400, "int64")
    g.arrays.pop()
    return [g.op("gather_elements", g.input([3, 8400, 4]), idx, axis=1)]


def gather_long_int32(g: Graph) -> list[SSAValue]:
    """[2, 30001] along axis 1 by [2, 2000] int32 indices on ascend910b: in two blocks of
    15001, the second shifted back to 15000 .. 30001."""
    idx = index_input(g, [2, 2000], 30001, "int32")
    return [g.op("gather_elements", g.input([2, 30001]), idx, axis=1)]


CASES: dict[str, tuple[Callable[[Graph], list[SSAValue]], str]] = {
    # few elements on the test preset (no GM latency): a DMA each, the index read from GM
    "gather_long_rows": (gather_long_rows, "test"),
    "gather_boxes": (gather_boxes, "test"),
    "gather_columns_apart": (gather_columns_apart, "test"),
    "gather_flat": (gather_flat, "test"),
    "yolo_boxes": (yolo_boxes, "ascend910b"),
    "gather_long_int32": (gather_long_int32, "ascend910b"),
    "segment_max_min": (segment_max_min, "test"),
    "scatter_add_mul_inner": (scatter_add_mul_inner, "test"),
    "scatter_last_wins": (scatter_last_wins, "test"),
    "scatter_first_axis": (scatter_first_axis, "test"),
}
UNITS = {"graph.gather_elements": VECTOR, "graph.scatter_elements": VECTOR}


def _ops(module: ModuleOp, kind: type) -> list:
    return [op for op in module.walk() if isinstance(op, kind)]


def _gm_reads(module: ModuleOp) -> list[GetValueOp]:
    """The scalar unit's reads of GM (a gather's element DMAs read their indices so)."""
    return [op for op in _ops(module, GetValueOp) if op.buffer.type.memory_space.data == "GM"]


@pytest.mark.parametrize("name", list(CASES))
def test_block_elements_kernel(name: str):
    build, platform = CASES[name]
    g = Graph()
    module = g.b.build(*build(g))
    levels = run_levels(module, g.arrays, platform, pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels, rtol=0, atol=0)
    ops = {op for k in levels.tiled_kernels for op in k.ops}
    assert_units(levels.tiled_kernels, {k: v for k, v in UNITS.items() if k in ops}, platform)
    if not name.startswith(("gather", "yolo")):
        assert _ops(levels.module, ScatterRowsOp), "the axis should go in blocks"
    elif platform == "test":
        assert _gm_reads(levels.module) and not _ops(levels.module, GatherRowsOp)
    else:
        assert _ops(levels.module, GatherRowsOp) and not _gm_reads(levels.module)
    indices = [a for a in g.arrays if a.dtype.kind == "i"]
    assert any((a < 0).any() for a in indices), "the case should have negative indices"


def test_the_blocks_are_evened_and_the_last_shifted_back_not_cut():
    """[2, 30001]: two blocks of 15001 (the budget the index tile leaves holds ~23800
    floats), the second at min(15001, 30001 - 15001) = 15000; YOLOv10's 8400 anchors in two
    blocks of 4200, nothing shifted."""
    for build, block, size in ((gather_long_int32, 15001, 30001), (yolo_boxes, 4200, 8400)):
        g = Graph()
        levels = run_levels(g.b.build(*build(g)), g.arrays, "ascend910b")
        (op,) = _ops(levels.module, GatherRowsOp)
        assert op.src.type.get_shape()[0] == block and op.bound_value == size
        shifted = f"arith.minsi %j, %c{size - block} " in str(levels.module)
        assert shifted == (size % block != 0)


def test_a_scatter_repeat_is_applied_by_one_block():
    """Every position of a [1101] tensor hit twice (once spelled negative), the blocks not
    dividing the axis: an add of ones counts 2 everywhere, the shifted block's overlap
    with the one before it included (each stores the same sums, none adds twice)."""
    g = Graph()
    x = g.input([1101])
    size = 1101
    where = np.concatenate([np.arange(size), np.arange(size)[::-1] - size]).astype(np.int64)
    ones = g.b.constant(np.ones([2 * size], np.float32))
    y = g.op("scatter_elements", x, g.b.constant(where), ones, axis=0, reduction="add")
    levels = run_levels(g.b.build(y), g.arrays, "test")
    (op, *_) = _ops(levels.module, ScatterRowsOp)
    assert size % op.dst.type.get_shape()[0], "the blocks should not divide the axis"
    expected = (g.arrays[0] + np.float32(1)) + np.float32(1)  # in index order
    for executor in ("interpret", "fast"):
        np.testing.assert_array_equal(levels.outputs[executor][0], expected)


@pytest.mark.parametrize("executor", ["interpret", "fast"])
@pytest.mark.parametrize("scatter", [False, True])
def test_an_index_out_of_range_is_an_error(executor: str, scatter: bool):
    """The graph level raises; so do both executors of the block kernels (the gather: its
    element DMAs' reads of the indices)."""
    from tilegraph.runtime.tiles import run_tiles

    g = Graph()
    build = scatter_last_wins if scatter else gather_long_rows
    levels = run_levels(g.b.build(*build(g)), g.arrays, "test")
    size = 900 if scatter else 1100
    g.arrays[0][1, 5] = size  # the indices (the first input)
    with pytest.raises(IndexError, match=f"index {size} is out of range for an axis of size"):
        run_tiles(levels.module, g.arrays, executor=executor)


def test_a_position_too_wide_for_ub_stays_on_the_host():
    """One axis position of 600 floats (2400 B) is more than half the test preset's UB."""
    assert_single_host_kernel(
        lambda g: g.op(
            "gather_elements", g.input([2, 4, 600]), index_input(g, [2, 3, 600], 4, "int64"),
            axis=1,
        ),
        "do not fit UB",
    )  # fmt: skip


def _tapas(g: Graph) -> Sequence[SSAValue]:
    """TAPAS's three host ops: segment max / min over a flat [196608] tensor by 33 indices
    and a gather along axis 1 of a [3, 65536] int64 table by [3, 11]."""
    x = g.input([196608])
    for reduction in ("max", "min"):
        idx = index_input(g, [33], 196608, "int64")
        x = g.op("scatter_elements", x, idx, g.input([33]), axis=0, reduction=reduction)
    table = index_input(g, [3, 65536], 1000, "int64")  # int64 data, as TAPAS's
    picked = g.op("gather_elements", table, index_input(g, [3, 11], 65536, "int64"), axis=1)
    return [x, picked]


def test_tapas_shapes_leave_the_host_on_910b():
    """The scatters in blocks; the gather's 33 elements a DMA each (the cost model's
    figures: 33 round trips over the cores against every core loading a 512 KiB row)."""
    g = Graph()
    levels = run_levels(g.b.build(*_tapas(g)), g.arrays, "ascend910b")
    assert_matches(levels, rtol=0, atol=0)
    assert_units(levels.tiled_kernels, UNITS, "ascend910b")
    assert _gm_reads(levels.module) and not _ops(levels.module, GatherRowsOp)
    assert _ops(levels.module, ScatterRowsOp)
