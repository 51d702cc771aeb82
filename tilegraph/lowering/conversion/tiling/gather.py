"""Gather (embedding lookups) on the vector core: rows picked by index, DMA by DMA.

``graph.gather`` of ``data`` along axis ``a`` with an int32 / int64 index tensor of any
shape copies, for each outer position ``o`` (the dims before ``a``, ``outer`` in all) and
each index ``k`` (``N`` in all, flattened), the *row* ``data[o, indices[k], ...]`` — the
``inner`` elements of the dims after ``a``, contiguous in a row-major tensor — to the
output's row ``(o, k)``. GE's GatherV2 does this on the AI core; so does this kernel, as
Ascend C would write it::

    for o in outer:                                     tile.parallel
      for t in 0 .. N step T:                           tile.parallel (split-cores)
        copy_flat indices[t]        -> idx_ub  (T)      MTE2
        for j in 0 .. min(T, N - t):
          %row = get_value idx_ub[j] {bound = n}        S: LocalTensor::GetValue
          copy_flat data[(o*n + %row)*inner] -> rows_ub[j*inner] (inner, partial)   MTE2
        copy_flat rows_ub -> out[(o*N + t)*inner]       (T*inner, cut at the end)   MTE3

The scalar read (:class:`~tilegraph.dialects.tile.GetValueOp`) waits for the index tile
(``inject-sync`` puts an MTE2 -> S flag before it) and issues the row DMA with the offset
it read. ``bound`` gives the ONNX convention: a negative index counts from the end; one
outside ``[-n, n)`` is an ``IndexError`` of the executors, as the graph level's
``numpy.take`` raises (the hardware would read whatever lies there).

Tiles: ``T`` rows and their indices fit half of UB. The last tile of a ragged ``N`` runs
``N mod T`` rows (its row loop's bound is computed) and its store is cut at the output's
end; with ``outer > 1`` the output goes on after each outer position's rows, so ``T``
divides ``N`` there instead. A row whose bytes are not a multiple of 32 (a DMA's UB
address must be 32-byte aligned) is a tile of its own (``T = 1``); a row larger than the
budget is copied in chunks that divide it (load and store per chunk).

Compile-time indices (at most ``INLINE_CONSTANT_ELEMENTS`` of them are inlined in the
kernel body: a transformer's CLS-token pick ``hidden[:, 0]``) need no scalar reads: their
row DMAs are unrolled with constant offsets.

A row under 32 B (a gather along the last axis, or of a 1-D table) would be one DMA per
element: those go through UB instead (:mod:`.gather_ub`: the table slice in, a vector
gather, the rows out), as GE's GatherV2 does; so do compile-time rows whose size is not a
multiple of 32 B when the table slice fits (each would be a tile of its own, unrolled:
``F.unfold``'s window rows), and more than :data:`UNROLLED_ROW_TILES` of them stay on the
host when it does not.

Short rows whose table slice does not fit UB (a detector's boxes picked by index: 13500
rows of 4 floats out of a [13500, 4] table) are copied row by row here, as GatherV2's
TBE tiling mode 1 does ("paramsRowSize < 32, params not cached in UB", indices split over
the cores): each row lands in a *slot* of one 32-byte block of ``rows_ub`` (its UB
address aligned), the tile's slots are packed by a ``vstride`` window (the first
``inner`` elements of each slot) into ``packed_ub``, and the tile is stored at once::

    copy_flat data[(o*n + %row)*inner] -> rows_ub[j*slot]   (inner, partial)   MTE2
    vstride rows_ub (T, slot) -> packed_ub (T, inner)                           V
    copy_flat packed_ub -> out[(o*N + t)*inner]   (T*inner, cut at the end)     MTE3

The table, the indices and the output may be reshape-like views of the kernel's GM
buffers (``input_ids.view(-1, S)`` before an embedding): :mod:`.gather_views` finds the
buffers; the kernel addresses them flat, as it would the views.

Stays on the host (the reason is reported): a table or run-time index tensor that is not a
kernel input (or a view of one), tensors that are not row-major.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from math import prod

import numpy as np
from xdsl.dialects import arith
from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.graph.base import constant_value
from tilegraph.dialects.graph.data_movement import GatherOp
from tilegraph.dialects.tile import CopyFlatOp, GetValueOp, StrideOp
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.elementwise import TilePlan, share_over_cores
from tilegraph.lowering.conversion.tiling.gather_ub import emit_ub_gather
from tilegraph.lowering.conversion.tiling.gather_views import viewed_gather

DMA_BLOCK_BYTES = 32
"""The DMA's unit and the alignment of a UB address it writes."""

RowOf = Callable[[SSAValue], SSAValue]
"""Computes (on the scalar unit) the data row an output row (its index in the outer
position's ``count``) copies: a gather whose indices are a function, not a tensor
(ReverseSequence's, :mod:`.reverse_sequence`)."""


@dataclass(frozen=True)
class GatherPlan:
    """The loops of one gather: ``outer`` x ``count`` rows of ``inner`` elements out of an
    axis of ``axis_size``; tiles of ``rows`` rows, each row in chunks of ``chunk``.
    ``slot``: the UB elements a short row (under a DMA block) takes so that each row's
    UB address is 32-byte aligned, its tile packed before the store; None when rows
    lie back to back."""

    outer: int
    axis_size: int
    inner: int
    count: int
    rows: int
    chunk: int
    slot: int | None = None

    @property
    def tiles(self) -> int:
        return self.outer * -(-self.count // self.rows) * (self.inner // self.chunk)


UNROLLED_ROW_TILES = 4
"""The most compile-time rows of unaligned size (a load and a store each, unrolled in the
kernel body) a gather copies one by one: each pair takes two of a pipe pair's 8 events."""


def too_many_unrolled_rows(count: int, row_bytes: int) -> bool:
    """Whether ``count`` compile-time rows of ``row_bytes`` each are more unaligned rows (a
    tile each, unrolled) than :data:`UNROLLED_ROW_TILES` (GatherND's kernel asks too).
    Rows under a DMA block share their tiles (a block slot each): never too many."""
    unaligned = row_bytes > DMA_BLOCK_BYTES and row_bytes % DMA_BLOCK_BYTES != 0
    return unaligned and count > UNROLLED_ROW_TILES


def largest_divisor(n: int, at_most: int) -> int:
    """The largest divisor of ``n`` that is at most ``at_most`` (1 at least)."""
    return max(d for d in range(1, min(n, at_most) + 1) if n % d == 0)


def plan_gather(
    data_shape: tuple[int, ...],
    axis: int,
    count: int,
    eb: int,
    ib: int,
    budget: int,
    cores: int = 1,
) -> GatherPlan | str:
    """The tiles of a gather of ``count`` indices (``ib`` bytes each) along ``axis`` of a
    ``data_shape`` tensor of ``eb``-byte elements in ``budget`` bytes of UB, or why none.
    Tiles of whole rows shrink until the outer x index grid leaves none of ``cores`` idle
    (:func:`~.elementwise.share_over_cores`, the row being the unit). A row under a DMA
    block takes a slot of one block, and its tile a packed copy (the module docstring)."""
    outer, inner = prod(data_shape[:axis]), prod(data_shape[axis + 1 :])
    if inner * eb < DMA_BLOCK_BYTES:
        slot = DMA_BLOCK_BYTES // eb
        rows = min(count, budget // (slot * eb + inner * eb + ib))
        rows = share_over_cores(TilePlan((outer, count, inner), 1, rows), cores, 2).size
        if outer > 1:
            rows = largest_divisor(count, rows)
        return GatherPlan(outer, data_shape[axis], inner, count, rows, inner, slot)
    if inner * eb + ib > budget:  # one row per tile, in chunks that divide it
        chunk = largest_divisor(inner, (budget - ib) // eb)
        if chunk * eb < DMA_BLOCK_BYTES:
            return f"a gather row of {inner} elements with no chunk that fits UB"
        return GatherPlan(outer, data_shape[axis], inner, count, 1, chunk)
    rows = min(count, budget // (inner * eb + ib))
    rows = share_over_cores(TilePlan((outer, count, inner), 1, rows), cores, 2).size
    if (inner * eb) % DMA_BLOCK_BYTES:
        rows = 1  # the next row's UB address would not be 32-byte aligned
    elif outer > 1:
        rows = largest_divisor(count, rows)
    return GatherPlan(outer, data_shape[axis], inner, count, rows, inner)


def _constant_rows(op: GatherOp, axis_size: int) -> list[int] | str | None:
    """The rows a gather with compile-time indices picks (negatives wrapped), None when
    its indices are run-time data, or why they cannot be used."""
    values = constant_value(op.indices)
    if values is None:
        return None
    rows = [int(v) for v in np.asarray(values).reshape(-1)]
    if any(not -axis_size <= v < axis_size for v in rows):
        return f"a gather index out of range for an axis of {axis_size}"
    return [v + axis_size if v < 0 else v for v in rows]


def emit_gather_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a lone ``graph.gather`` as scalar reads and row DMAs; returns why it cannot
    (None when emitted). Compile-time indices (a few, inlined in the kernel body: a
    transformer's CLS-token pick) need no reads: their row DMAs are unrolled."""
    found = viewed_gather(body, GatherOp, "gather")
    if isinstance(found, str):
        return found
    op, table, written = found.op, found.table, found.out
    assert isinstance(op, GatherOp)
    data_type = tensor_of(op.data)
    shape = tuple(int(d) for d in data_type.storage_shape)
    axis = op.attr("axis") % len(shape)
    indices = found.indices or _constant_rows(op, shape[axis])
    if indices is None or isinstance(indices, str):
        return indices or "a gather of indices computed inside the kernel"
    count = prod(int(d) for d in tensor_of(op.indices).storage_shape)
    if count == 0 or prod(shape) == 0:
        return "a gather with an empty output"
    index_type = tensor_of(op.indices).element_type
    row_bytes = prod(shape[axis + 1 :]) * element_bytes(data_type.element_type)
    if row_bytes < DMA_BLOCK_BYTES or (row_bytes % DMA_BLOCK_BYTES and isinstance(indices, list)):
        # rows under a DMA block, or compile-time rows that could not share a tile (each
        # would be a load and a store of its own, unrolled): through UB (:mod:`.gather_ub`)
        through_ub = emit_ub_gather(
            b, table, written, indices, shape, axis, count, data_type.element_type, index_type
        )
        if through_ub is None:
            return None
        # a short row whose table slice does not fit: row by row, in block slots (below)
        if too_many_unrolled_rows(count, row_bytes):
            return (
                f"a gather of {count} compile-time rows of {row_bytes} B (not a multiple of "
                f"{DMA_BLOCK_BYTES}: a tile each) whose table slice does not fit UB"
            )
    plan = plan_gather(
        shape,
        axis,
        count,
        element_bytes(data_type.element_type),
        element_bytes(index_type),
        b.ub_budget(),
        1 if isinstance(indices, list) else b.hw.vector_cores,  # compile-time rows: unrolled
    )
    if isinstance(plan, str):
        return plan
    if b.dry_run:
        return None
    emit_row_gather(b, plan, table, written, indices, data_type.element_type, index_type)
    return None


def emit_row_gather(
    b: KernelBuilder,
    plan: GatherPlan,
    table: SSAValue,
    out: SSAValue,
    indices: SSAValue | list[int] | RowOf,
    element: Attribute,
    index_type: Attribute,
    depth: tuple[int, ...] = (),
) -> None:
    """The loops of ``plan``: per outer position and tile of rows, the index tile GM -> UB
    (or the compile-time ``indices``, or the rows a :data:`RowOf` computes: no index
    tile), the row DMAs and the store. ``depth``: the sizes of
    the data axes one index *tuple* addresses (GatherND: the tile holds ``len(depth)``
    indices per row, each wrapped against its axis, the row their row-major combination);
    empty for one index per row."""
    rows_ub = b.buffer([plan.rows, plan.slot or plan.chunk], element, "UB", "rows_ub")
    packed_ub = (
        None if plan.slot is None else b.buffer([plan.rows, plan.inner], element, "UB", "packed_ub")
    )
    width = max(1, len(depth))
    idx_ub = (
        None
        if isinstance(indices, list) or callable(indices)
        else b.buffer([plan.rows, width] if depth else [plan.rows], index_type, "UB", "idx_ub")
    )
    tile = _Tile(b, plan, table, out, rows_ub, depth, packed_ub)
    with b.loop(plan.outer, 1, "o", True) as o:
        if isinstance(indices, list):  # compile-time rows: every tile unrolled
            for t in range(0, plan.count, plan.rows):
                tile.emit(o, b.index(t), indices[t : t + plan.rows])
        elif callable(indices):
            with b.loop(plan.count, plan.rows, "t", True) as t:
                tile.emit(o, t, indices)
        else:
            assert idx_ub is not None
            with b.loop(plan.count, plan.rows, "t", True) as t:
                at = b.affine(t, width)
                b.add(CopyFlatOp(indices, at, idx_ub, b.index(0), plan.rows * width))
                tile.emit(o, t, idx_ub)
    b.tiles = plan.tiles


def tile_row_loop(
    b: KernelBuilder, t: SSAValue, rows: int, count: int
) -> AbstractContextManager[SSAValue]:
    """The loop over the rows of the tile of ``rows`` starting at row ``t`` of ``count``:
    the ragged last tile (``count`` not a multiple of ``rows``) runs its own number of
    rows, a bound computed on the scalar unit."""
    if count % rows == 0:
        return b.loop(rows, 1, "j")
    upper = b.add(arith.MinSIOp(b.index(rows), b.affine(t, -1, count))).results[0]
    return b.loop_over(b.index(0), upper, b.index(1), "j")


def tuple_row(b: KernelBuilder, picked: SSAValue, j: SSAValue, depth: tuple[int, ...]) -> SSAValue:
    """The row of a row-major tensor whose leading axes are ``depth`` that the ``j``-th
    index tuple of the UB tile ``picked`` (``[rows, len(depth)]``) names: each component
    read on the scalar unit and wrapped against its own axis (``GetValueOp``'s bound),
    combined row-major (GatherND reads its rows so, ScatterND writes its slices so)."""
    row: SSAValue | None = None
    for k, size in enumerate(depth):
        value = b.add(GetValueOp(picked, [j, b.index(k)], size)).results[0]
        row = value if row is None else b.add_index(b.affine(row, size), value)
    assert row is not None
    return row


@dataclass(frozen=True)
class _Tile:
    """Emits one tile of rows: its row DMAs into ``rows_ub`` and its store."""

    b: KernelBuilder
    plan: GatherPlan
    table: SSAValue
    out: SSAValue
    rows_ub: SSAValue
    depth: tuple[int, ...] = ()
    """See :func:`emit_row_gather`."""
    packed_ub: SSAValue | None = None
    """The tile's short rows packed out of their block slots (``plan.slot``), or None."""

    def read_row(self, picked: SSAValue, j: SSAValue) -> SSAValue:
        """The data row the ``j``-th index (tuple) of the UB tile ``picked`` names."""
        if not self.depth:
            return self.b.add(GetValueOp(picked, [j], self.plan.axis_size)).results[0]
        return tuple_row(self.b, picked, j, self.depth)

    def emit(self, o: SSAValue, t: SSAValue, picked: SSAValue | list[int] | RowOf) -> None:
        """The tile at index ``t`` of outer position ``o``; ``picked``: the index tile in
        UB (rows read on the scalar unit), the tile's compile-time rows, or the function
        computing each row."""
        b, plan = self.b, self.plan
        rows, inner, count = plan.rows, plan.inner, plan.count
        # the rows of tile t of outer position o start at out[(o * count + t) * inner]
        out_at = b.add_index(b.affine(o, count * inner), b.affine(t, inner))
        if isinstance(picked, list):
            for j, row in enumerate(picked):
                self.row(o, b.index(j), b.index(row), out_at)
            stored = len(picked)
        else:
            with tile_row_loop(b, t, rows, count) as j:
                row = picked(b.add_index(t, j)) if callable(picked) else self.read_row(picked, j)
                row.name_hint = "row"
                self.row(o, j, row, out_at)
            stored = rows  # cut at the output's end (a ragged tile is the last)
        if self.packed_ub is not None:  # the first inner elements of each slot
            b.add(StrideOp(self.rows_ub, self.packed_ub, [1, 1]))
            b.add(CopyFlatOp(self.packed_ub, b.index(0), self.out, out_at, stored * inner))
        elif plan.chunk == inner:
            b.add(CopyFlatOp(self.rows_ub, b.index(0), self.out, out_at, stored * inner))

    def row(self, o: SSAValue, j: SSAValue, row: SSAValue, out_at: SSAValue) -> None:
        """Row ``j`` of the tile: data row ``row`` of outer position ``o``."""
        b, plan = self.b, self.plan
        inner, chunk, zero = plan.inner, plan.chunk, b.index(0)
        src_at = b.add_index(b.affine(o, plan.axis_size * inner), b.affine(row, inner))
        if chunk == inner:
            dst_at = b.affine(j, plan.slot or inner)
            b.add(CopyFlatOp(self.table, src_at, self.rows_ub, dst_at, inner, partial=True))
            return
        with b.loop(inner, chunk, "c") as c:  # one row per tile, chunk by chunk
            b.add(CopyFlatOp(self.table, b.add_index(src_at, c), self.rows_ub, zero, chunk))
            b.add(CopyFlatOp(self.rows_ub, zero, self.out, b.add_index(out_at, c), chunk))
