"""GatherElements and ScatterElements whose axis slice does not fit UB: the axis in blocks.

:mod:`.elements` holds an outer position's whole axis slice in UB. A long axis — torch's
``scatter_reduce`` segment reductions over a flat [196608] tensor (TAPAS), a
``torch.gather`` along a [3, 65536] table or over a detector's 8400 anchors — does not
fit; here the slice (``data[o]``, ``[axis_size, inner]``) is cut into blocks of ``B``
axis positions and the indices into tiles of ``T`` index rows (``[T, inner]``), each in
half of the budget (a gather's blocks take what its index tile leaves), ``B`` evened over
as many blocks (the least overlap, below). Every element has an index of its own: the
scalar unit reads it, wraps it (a negative index counts from the end, one outside
``[-axis_size, axis_size)`` is an ``IndexError`` of the executors, as the graph level
raises) and moves the element when it falls in the block, as Ascend C would write it with
``LocalTensor::GetValue`` / ``SetValue`` (:mod:`tilegraph.dialects.tile.scalar`).

Scatter: each block is loaded once, every index tile of its outer position applied by
``tile.scatter_rows {elements}`` in order, the block stored once; the blocks over the
cores (as :mod:`.scatter_ub` does for ScatterND, whose tuple tiling this shares)::

    for o in 0 .. outer:                                        tile.parallel
      for k in 0 .. axis_size step B:                           tile.parallel
        a = min(k, axis_size - B)
        copy_flat data[(o*axis_size + a)*inner] -> block_ub (B, inner)     MTE2
        for t in 0 .. n step T:        (then the ragged n mod T rows, own buffers)
          copy_flat indices[(o*n + t)*inner] -> idx_ub (T, inner)        MTE2
          copy_flat updates[(o*n + t)*inner] -> upd_ub (T, inner)        MTE2
          scatter_rows upd_ub, idx_ub -> block_ub[a] {elements}        S
        copy_flat block_ub -> out[(o*axis_size + a)*inner]  (B*inner)      MTE3

Gather: the index tiles over the cores; per tile the blocks one after the other, each
taking the elements whose index falls in it into the tile's result (``tile.gather_rows``),
the result stored once::

    for o in 0 .. outer:                                        tile.parallel
      for k in 0 .. n step T:                                   tile.parallel
        t = min(k, n - T)
        copy_flat indices[(o*n + t)*inner] -> idx_ub (T, inner)            MTE2
        for k' in 0 .. axis_size step B:
          a = min(k', axis_size - B)
          copy_flat data[(o*axis_size + a)*inner] -> block_ub (B, inner)   MTE2
          gather_rows block_ub[a], idx_ub -> rows_ub                       S
        copy_flat rows_ub -> out[(o*n + t)*inner]  (T*inner)               MTE3

A gather of few elements takes them one DMA each instead (:func:`.gather.emit_row_gather`
with rows of one element over the flat data, the elements over the cores): per element its
index read from GM on the scalar unit (``GlobalTensor::GetValue``, wrapped), the element
loaded into UB and stored. The rule, by the cost model's own figures: the elements when
the busiest core's element round trips (a GM scalar read — ``SCALAR_READ_CYCLES`` and the
GM read latency — then a load whose data the store waits for, and the store) cost fewer
cycles than its index tiles over the blocks (each block's load with its GM latency, a
scalar read per index per block, a read and a write per element taken). TAPAS's 33
elements of a [3, 65536] table on ascend910b go one DMA each; YOLOv10's 3600 of a
[3, 8400, 4] one in blocks; on the ``test`` preset (no GM latency) small gathers go one
DMA each.

The last block (and a gather's last index tile) is shifted back to end at the axis's end
rather than cut: a copy's element count is fixed when compiling, and a block cut past the
slice would store into the next outer position's. The shifted block overlaps the one
before it; both load the data, apply the same elements in the same order and store the
same values there (an equal write twice, by whichever core; the scatter reads ``data``,
never the output, so nothing is combined twice).

Order: a scatter's elements at one position share an outer position and a column, so
one block and its core apply them all, in index-row order: the last wins for ``none``,
a reduction (add, mul, max, min) combines in row-major order, as the graph level does.

Cost: every block's core reads every index of its outer position (which block an index
falls in is known only after reading it), so a scatter's blocks shrink to leave no core
idle but no further (:func:`~.gather_ub.outer_tile_rows`). A gather's index tiles shrink
the same way (a core's scalar work is its tiles' indices, read once per block), and its
blocks take all the budget the index tile leaves: each index tile reloads the whole slice,
a fixed DMA cost per tile that fewer, larger blocks do not change, and every further block
reads every index of the tile again.

Stays on the host (the reason is reported): a block of one axis position (``inner``
elements) and an index tile of one row that do not fit UB, a gather with an elementwise
tail (:mod:`.elements_tail` keeps to whole slices).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil

from xdsl.dialects import arith
from xdsl.ir import Attribute, SSAValue

from tilegraph.cost_model.tile_costs import (
    SCALAR_READ_CYCLES,
    SCALAR_WRITE_CYCLES,
    dma_cycles,
    gm_latency_cycles,
)
from tilegraph.dialects.tile import CopyFlatOp, GatherRowsOp, GetValueOp, ScatterRowsOp
from tilegraph.dialects.tile.base import element_bytes, memref_shape
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.gather import GatherPlan, emit_row_gather
from tilegraph.lowering.conversion.tiling.gather_ub import outer_tile_rows
from tilegraph.lowering.conversion.tiling.scatter_ub import (
    over_tuple_tiles,
    slice_dma_cycles,
    tuple_tile,
)


@dataclass(frozen=True)
class ElementsView:
    """A GatherElements / ScatterElements as ``data[outer, axis_size, inner]`` and
    ``indices[outer, count, inner]``, with its element types."""

    outer: int
    axis_size: int
    inner: int
    count: int
    element: Attribute
    index_element: Attribute


def _shifted(b: KernelBuilder, k: SSAValue, last: int, exact: bool) -> SSAValue:
    """``min(k, last)``: a block's (or tile's) start, the last one shifted back to end at
    the axis's end (none when the steps divide it: ``exact``)."""
    if exact:
        return k
    start = b.add(arith.MinSIOp(k, b.index(last))).results[0]
    start.name_hint = "at"
    return start


def emit_block_elements(
    b: KernelBuilder,
    view: ElementsView,
    operands: list[SSAValue],
    out: SSAValue,
    reduction: str | None,
) -> str | None:
    """Tile a GatherElements (``operands``: data, indices) or a ScatterElements (data,
    indices, updates; ``reduction`` None or add / mul / max / min) whose axis slice does
    not fit UB, in blocks of the axis (see the module docstring); returns why it cannot
    (None when emitted, or in dry-run mode when it would be)."""
    scatter = len(operands) == 3
    outer, size, inner, count = view.outer, view.axis_size, view.inner, view.count
    eb, ib = element_bytes(view.element), element_bytes(view.index_element)
    half = b.ub_budget() // 2  # the block takes one half, the index tiles the other

    def tile_bytes(rows: int) -> int:  # an index tile and its updates / results
        return aligned_bytes(b.hw, "UB", rows * inner * ib) + aligned_bytes(
            b.hw, "UB", rows * inner * eb
        )

    def block_bytes(rows: int) -> int:
        return aligned_bytes(b.hw, "UB", rows * inner * eb)

    if tile_bytes(1) > half or block_bytes(1) > half:
        return f"an axis block of {inner} elements and an index tile of one row do not fit UB"
    cores = ceil(b.hw.vector_cores / outer)  # what one outer position may keep busy
    if scatter:  # the blocks over the cores, the index tiles in order
        tuples = tuple_tile(count, half, inner * (ib + eb), tile_bytes) or 1
        block = outer_tile_rows(size, inner, block_bytes, half, cores)
    else:  # the index tiles over the cores (the last shifted back: one size), large blocks
        tuples = outer_tile_rows(count, inner, tile_bytes, half, cores)
        # the block takes what the (core-shared) index tile leaves: fewer blocks, fewer
        # reads of every index
        block = outer_tile_rows(size, inner, block_bytes, 2 * half - tile_bytes(tuples), 1)
        if _element_dmas_cheaper(b, view, tuples, block):
            if not b.dry_run:
                _emit_element_dmas(b, view, operands, out)
            return None
    block = ceil(size / ceil(size / block))  # as many blocks, evened: the least overlap
    if b.dry_run:
        return None
    data, indices, *updates = operands
    zero = b.index(0)
    block_ub = b.buffer([block, inner], view.element, "UB", "block_ub")
    blocks_end = ceil(size / block) * block
    with b.loop(outer, 1, "o", True) as o:
        slice_at, rows_at = b.affine(o, size * inner), b.affine(o, count * inner)

        def load_block(k: SSAValue) -> tuple[SSAValue, SSAValue]:
            """The block at step ``k`` loaded; its first axis position and GM offset."""
            a = _shifted(b, k, size - block, blocks_end == size)
            at = b.add_index(slice_at, b.affine(a, inner))
            b.add(CopyFlatOp(data, at, block_ub, zero, block * inner))
            return a, at

        if scatter:
            with b.loop(blocks_end, block, "k", True) as k:
                a, at = load_block(k)

                def apply(t: SSAValue, n: int) -> None:
                    """Index rows ``t .. t + n`` loaded and applied to the block at ``a``."""
                    idx_ub = b.buffer([n, inner], view.index_element, "UB", "idx_ub")
                    upd_ub = b.buffer([n, inner], view.element, "UB", "upd_ub")
                    t_at = b.add_index(rows_at, b.affine(t, inner))
                    b.add(CopyFlatOp(indices, t_at, idx_ub, zero, n * inner))
                    b.add(CopyFlatOp(updates[0], t_at, upd_ub, zero, n * inner))
                    b.add(ScatterRowsOp(upd_ub, idx_ub, block_ub, a, [size], reduction, True))

                over_tuple_tiles(b, count, tuples, apply)
                b.add(CopyFlatOp(block_ub, zero, out, at, block * inner))
            b.tiles = outer * (blocks_end // block)
        else:
            idx_ub = b.buffer([tuples, inner], view.index_element, "UB", "idx_ub")
            rows_ub = b.buffer([tuples, inner], view.element, "UB", "rows_ub")
            tiles_end = ceil(count / tuples) * tuples
            with b.loop(tiles_end, tuples, "k", True) as k:
                t = _shifted(b, k, count - tuples, tiles_end == count)
                t_at = b.add_index(rows_at, b.affine(t, inner))
                b.add(CopyFlatOp(indices, t_at, idx_ub, zero, tuples * inner))
                with b.loop(blocks_end, block, "j") as j:
                    a, _ = load_block(j)
                    b.add(GatherRowsOp(block_ub, a, idx_ub, rows_ub, size))
                b.add(CopyFlatOp(rows_ub, zero, out, t_at, tuples * inner))
            b.tiles = outer * (tiles_end // tuples)
    return None


def _element_dmas_cheaper(b: KernelBuilder, view: ElementsView, tuples: int, block: int) -> bool:
    """Whether a gather's busiest core spends fewer cycles taking its elements one DMA each
    (:func:`_emit_element_dmas`) than running its index tiles over the blocks, by the cost
    model's own figures: per element a scalar read of its index from GM and its round trip
    (load, whose data the store waits for, and store) as :func:`.scatter_ub.slice_dma_cycles`
    charges a slice; per index tile every block's load and its ``gather_rows`` (a read per
    index, a read and a write per element taken)."""
    cores, inner = b.hw.vector_cores, view.inner
    eb = element_bytes(view.element)
    elements = view.outer * view.count * inner
    per_element = SCALAR_READ_CYCLES + b.hw.gm_read_latency_cycles
    per_element += slice_dma_cycles(b, eb, 0)
    blocks = ceil(view.axis_size / block)
    load = dma_cycles(b.hw, "GM->UB", block * inner * eb) + gm_latency_cycles(
        b.hw, "GM->UB", block * inner * eb
    )
    per_tile = blocks * (load + tuples * inner * SCALAR_READ_CYCLES)
    per_tile += tuples * inner * (SCALAR_READ_CYCLES + SCALAR_WRITE_CYCLES)
    tiles = view.outer * ceil(view.count / tuples)
    return ceil(elements / cores) * per_element < ceil(tiles / cores) * per_tile


def _emit_element_dmas(
    b: KernelBuilder, view: ElementsView, operands: list[SSAValue], out: SSAValue
) -> None:
    """A gather of few elements one DMA each (:func:`.gather.emit_row_gather`'s rows of one
    element over the flat data): output element ``k`` (``(o, j, c)`` of ``[outer, count,
    inner]``) reads its index from GM on the scalar unit (``GlobalTensor::GetValue``,
    wrapped against the axis) and copies data element ``(o·axis_size + index)·inner + c``."""
    data, indices = operands
    size, inner, count = view.axis_size, view.inner, view.count
    index_shape = memref_shape(indices)

    def row_of(k: SSAValue) -> SSAValue:
        coords, rest = [], k  # k's coordinates in the index tensor, last dim first
        for extent in reversed(index_shape[1:]):
            coords.append(b.add(arith.RemSIOp(rest, b.index(extent))).results[0])
            rest = b.add(arith.FloorDivSIOp(rest, b.index(extent))).results[0]
        coords.append(rest)
        picked = b.add(GetValueOp(indices, coords[::-1], size)).results[0]
        o = b.add(arith.FloorDivSIOp(k, b.index(count * inner))).results[0]
        c = b.add(arith.RemSIOp(k, b.index(inner))).results[0] if inner > 1 else b.index(0)
        row = b.add_index(b.affine(o, size * inner), b.affine(picked, inner))
        return b.add_index(row, c)

    total = view.outer * count * inner
    plan = GatherPlan(1, view.outer * size * inner, 1, total, 1, 1)
    emit_row_gather(b, plan, data, out, row_of, view.element, view.index_element)
