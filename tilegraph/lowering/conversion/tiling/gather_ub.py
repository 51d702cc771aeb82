"""Gathers of short rows (under 32 B) through UB: the table in, a vector gather, the rows out.

A gather whose rows (the ``inner`` elements after the gathered axis) are shorter than a
DMA block cannot copy row by row as :mod:`.gather` does: a DMA moves 32-byte blocks and
writes UB at 32-byte-aligned addresses, so one DMA per element would be the cost and
consecutive rows could not share a tile. GE's GatherV2 gathers such rows in UB instead;
so does this kernel. Viewed as ``data[outer, axis_size, inner]`` and
``out[outer, N, inner]`` (``N`` indices, flattened), each outer position's table slice
and output rows are contiguous in GM, so::

    [copy_flat indices -> idx_ub (1, N, 1); vbrc idx_ub -> pos_ub (O, N, inner)]  once
    for o in 0 .. outer step O:                                   tile.parallel
      copy_flat data[o*axis_size*inner]  -> table_ub (O, axis_size, inner)   MTE2
      vpick table_ub -> rows_ub {rows: 0..O, indices, 0..inner}   (compile-time indices)
      | vtake table_ub, pos_ub -> rows_ub {axis = 1}              (run-time indices)
      copy_flat rows_ub -> out[o*N*inner]  (O*N*inner, cut at the end)      MTE3

Compile-time indices (a ``Gather`` of a constant position: silero's state pick) become
the ``vpick`` tables; run-time ones are loaded once, before the loop, broadcast over a
tile's outer positions and inner lanes, and picked by ``vtake`` (``take_along_axis``: a
negative index counts from the end, one outside ``[-n, n)`` is an ``IndexError`` of the
executors, as with ``numpy.take`` at the graph level). The last tile of a ragged
``outer`` loads zeros past the table and its store is cut at the output's end.

``O`` is as many outer positions as fit half of UB. When not even one outer position's
table slice fits (a gather along the last axis of a long table), the kernel is not
built and says so.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod

from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.tile import BroadcastOp, CopyFlatOp, PickOp, TakeOp
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.elementwise import TilePlan, share_over_cores


def outer_tile_rows(
    outer: int, row_elements: int, ub_bytes: Callable[[int], int], budget: int, cores: int
) -> int:
    """How many outer positions a tile of a through-UB kernel takes: as many as
    ``ub_bytes(rows)`` fits in ``budget``, then fewer when that leaves vector cores idle
    (as an elementwise tile shrinks), each position ``row_elements`` output elements."""
    rows = 1
    while rows < outer and ub_bytes(rows + 1) <= budget:
        rows += 1
    return share_over_cores(TilePlan((outer, row_elements), 0, rows), cores, 1).size


def emit_ub_gather(
    b: KernelBuilder,
    table: SSAValue,
    out: SSAValue,
    indices: SSAValue | list[int],
    shape: tuple[int, ...],
    axis: int,
    count: int,
    element: Attribute,
    index_element: Attribute,
) -> str | None:
    """Gather ``count`` rows along ``axis`` of the ``shape`` table ``table`` (GM) into
    ``out`` through UB (see the module docstring); ``indices``: the index tensor in GM or
    the compile-time rows (wrapped to ``[0, axis_size)``). Returns why it cannot (None
    when emitted, or in dry-run mode when it would be)."""
    outer, axis_size, inner = prod(shape[:axis]), shape[axis], prod(shape[axis + 1 :])
    eb, ib = element_bytes(element), element_bytes(index_element)
    runtime = not isinstance(indices, list)

    def ub_bytes(rows: int) -> int:
        sizes = [rows * axis_size * inner * eb, rows * count * inner * eb]
        if runtime:  # the loaded indices and their broadcast positions
            sizes += [count * ib, rows * count * inner * ib]
        return sum(aligned_bytes(b.hw, "UB", n) for n in sizes)

    budget = b.hw.ub_bytes // 2
    if ub_bytes(1) > budget:
        return (
            f"a gather of rows under 32 B whose table slice ({axis_size} x {inner}) and "
            f"{count} picked rows do not fit UB"
        )
    rows = outer_tile_rows(outer, count * inner, ub_bytes, budget, b.hw.vector_cores)
    if b.dry_run:
        return None
    table_ub = b.buffer([rows, axis_size, inner], element, "UB", "table_ub")
    rows_ub = b.buffer([rows, count, inner], element, "UB", "rows_ub")
    idx_ub = pos_ub = None
    if runtime:
        idx_ub = b.buffer([1, count, 1], index_element, "UB", "idx_ub")
        pos_ub = b.buffer([rows, count, inner], index_element, "UB", "pos_ub")
    zero = b.index(0)
    if idx_ub is not None and pos_ub is not None:  # the same positions for every tile
        b.add(CopyFlatOp(indices, zero, idx_ub, zero, count))
        b.add(BroadcastOp(operands=[idx_ub, pos_ub]))
    with b.loop(outer, rows, "o", True) as o:
        table_at = b.affine(o, axis_size * inner)
        b.add(CopyFlatOp(table, table_at, table_ub, zero, rows * axis_size * inner))
        if isinstance(indices, list):
            b.add(PickOp(table_ub, rows_ub, [range(rows), indices, range(inner)]))
        else:
            b.add(TakeOp(table_ub, pos_ub, rows_ub, 1))
        out_at = b.affine(o, count * inner)
        b.add(CopyFlatOp(rows_ub, zero, out, out_at, rows * count * inner))
    b.tiles = -(-outer // rows)
    return None
