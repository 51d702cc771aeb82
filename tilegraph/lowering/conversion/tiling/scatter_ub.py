"""ScatterND of short slices on a UB-resident output block, the blocks over the cores.

When an index tuple addresses (almost) every axis, its update slice is shorter than a DMA
block — one element for PyTorch's ``x[mask] = y`` / ``index_put`` with a full index
(X-MOD's adapter routing) — and :mod:`.scatter_nd`'s DMA per slice would move 2 or 4 bytes
per DMA. Here the output is viewed as ``[R, inner]`` (``R = d_0 · ... · d_{K-1}`` rows of
the slices' ``inner`` elements) and cut into blocks of ``B`` rows that fit UB; each block
is loaded once, every tuple whose row falls in it is applied on UB by the scalar unit, and
the block is stored once, as Ascend C would write it::

    for r in 0 .. R step B:                                          tile.parallel
      copy_flat data[r*inner] -> out_ub (B, inner)                   MTE2
      for t in 0 .. N step T:          (then the ragged N mod T tuples, own buffers)
        copy_flat indices[t*K]     -> idx_ub (T, K)                  MTE2
        copy_flat updates[t*inner] -> upd_ub (T, inner)              MTE2
        scatter_rows upd_ub, idx_ub -> out_ub[r] {depth, reduction}  S: GetValue / SetValue
      copy_flat out_ub -> out[r*inner] (B*inner, cut at the end)     MTE3

``tile.scatter_rows`` (:class:`~tilegraph.dialects.tile.ScatterRowsOp`) is the scalar loop
``for j: row = wrap(idx[j, 0]) · d_1 + ...; if r <= row < r + B: out_ub[row - r] = upd[j]``
(``LocalTensor::GetValue`` / ``SetValue``). The scalar form rather than the vector
``Scatter`` with a UB offset tensor: Atlas A2 / A3 (the 910B presets) have no vector
``Scatter`` (Ascend C's reference sends them to a scalar sample; docs/hardware.md), no
vector ``Scatter`` combines (a reduction would need the scalar loop anyway), its offsets
would have to be computed from int64 tuples the vector unit cannot multiply, and a scalar
loop keeps the tuples' order among equal rows (the last wins for ``none``, a reduction
combines in row-major tuple order: numpy's, the graph level's and onnxruntime's) where a
vector scatter's order among equal offsets is not documented.

Several cores: the blocks are disjoint, so the block loop is ``tile.parallel`` and
``split-cores`` deals the blocks to the vector cores. Every core reads every tuple (the
indices say nothing of which block a tuple falls in before they are read), so the blocks
shrink to leave no core idle but no further: the scan is each core's fixed cost, the
element moves and the block's DMAs are what the cores share. Order is kept per element:
one core owns each row and applies its tuples in order.

Chosen by :mod:`.scatter_nd` for slices under a DMA block when a block of one row and a
tuple tile fit UB, and while the busiest core's rescans of the tuples (one per block it
owns: ``K`` scalar reads a tuple each) cost no more than :mod:`.scatter_nd`'s work per
tuple (its reads, the update's load and the store, as the cost model charges them): a
large output of many blocks a core keeps the DMA per slice. Longer slices keep it too (a
whole DMA is no waste there).
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod

from xdsl.ir import Attribute, SSAValue

from tilegraph.cost_model.tile_costs import SCALAR_READ_CYCLES, dma_cycles, gm_latency_cycles
from tilegraph.dialects.tile import CopyFlatOp, ScatterRowsOp
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.gather_ub import outer_tile_rows


def copy_through_ub(
    b: KernelBuilder,
    src: SSAValue,
    dst: SSAValue,
    total: int,
    element: Attribute,
    chunk: int,
    parallel: bool,
) -> None:
    """Copy ``total`` elements of row-major GM ``src`` to ``dst`` through a UB buffer of
    ``chunk`` elements, the last copy cut at the end: a scatter's data before its updates
    land (one core, in order, when its scatter follows on that core: not ``parallel``), or
    the whole of a scatter of no updates (the chunks over the cores)."""
    ub, zero = b.buffer([chunk], element, "UB", "copy_ub"), b.index(0)
    with b.loop(total, chunk, "c", parallel) as c:
        b.add(CopyFlatOp(src, c, ub, zero, chunk))
        b.add(CopyFlatOp(ub, zero, dst, c, chunk))


def copy_over_cores(
    b: KernelBuilder, src: SSAValue, dst: SSAValue, total: int, element: Attribute
) -> None:
    """The kernel of a scatter of no updates (an empty index tensor: a detector's RoI
    merge for a pyramid level no box maps to): its data copied to its output unchanged, as
    GE's scatters copy ``data`` to the output before they scatter anything, in chunks as
    large as the budget over the vector cores."""
    chunk = max(1, min(-(-total // b.hw.vector_cores), b.ub_budget() // element_bytes(element)))
    if not b.dry_run:
        copy_through_ub(b, src, dst, total, element, chunk, True)
        b.tiles = -(-total // chunk)


def tuple_tile(
    count: int, room: int, per_tuple: int, tile_bytes: Callable[[int], int]
) -> int | None:
    """The most of ``count`` tuples a tile takes (``per_tuple`` bytes each unaligned) when
    ``tile_bytes(T)`` bytes of a tile and those of the ragged last tile (``count mod T``,
    its own buffers) fit ``room``; None when not even one tuple does."""
    tuples = max(1, min(count, room // per_tuple))

    def both(t: int) -> int:
        return tile_bytes(t) + (tile_bytes(count % t) if count % t else 0)

    while tuples > 1 and both(tuples) > room:
        tuples -= 1
    return tuples if both(tuples) <= room else None


def over_tuple_tiles(
    b: KernelBuilder, count: int, tuples: int, apply: Callable[[SSAValue, int], None]
) -> None:
    """``apply(t, n)`` on the tiles of ``tuples`` of ``count`` tuples in order (a loop),
    then on the ragged last ``count mod tuples`` (buffers of its own size: its loads are
    not cut): the order the last tuple wins in and a reduction combines in."""
    tail = count % tuples
    with b.loop(count - tail, tuples, "t") as t:
        apply(t, tuples)
    if tail:
        apply(b.index(count - tail), tail)


def slice_dma_cycles(b: KernelBuilder, nbytes: int, width: int) -> int:
    """What :mod:`.scatter_nd` spends per tuple on a slice of ``nbytes``: its ``width``
    scalar reads, the update's load, whose data the store waits for, and the store."""
    load, store = "GM->UB", "UB->GM"
    dma = dma_cycles(b.hw, load, nbytes) + gm_latency_cycles(b.hw, load, nbytes)
    return width * SCALAR_READ_CYCLES + dma + dma_cycles(b.hw, store, nbytes)


def emit_ub_scatter(
    b: KernelBuilder,
    operands: tuple[SSAValue, SSAValue, SSAValue, SSAValue],
    shape: tuple[int, ...],
    width: int,
    count: int,
    element: Attribute,
    index_element: Attribute,
    reduction: str,
) -> str | None:
    """ScatterND of ``count`` tuples of ``width`` components into the ``shape`` tensor
    through UB-resident blocks (see the module docstring); ``operands``: data, indices,
    updates and output in GM. Returns why it cannot (None when emitted, or in dry-run mode
    when it would be)."""
    depth, inner = shape[:width], prod(shape[width:])
    rows_total = prod(depth)
    eb, ib = element_bytes(element), element_bytes(index_element)
    half = b.ub_budget() // 2  # the tuple tile takes one half, the block the other

    def tuple_bytes(tuples: int) -> int:
        return aligned_bytes(b.hw, "UB", tuples * width * ib) + aligned_bytes(
            b.hw, "UB", tuples * inner * eb
        )

    def block_bytes(rows: int) -> int:
        return aligned_bytes(b.hw, "UB", rows * inner * eb)

    tuples = tuple_tile(count, half, width * ib + inner * eb, tuple_bytes)
    if block_bytes(1) > half or tuples is None:
        return f"a scatter_nd block of a {inner}-element row and a tuple tile do not fit UB"
    rows = outer_tile_rows(rows_total, inner, block_bytes, half, b.hw.vector_cores)
    blocks = -(-rows_total // rows)
    passes = -(-blocks // b.hw.vector_cores)  # the blocks of the busiest core
    if passes * width * SCALAR_READ_CYCLES > slice_dma_cycles(b, inner * eb, width):
        return (
            f"a scatter_nd whose {passes} output blocks a core would each read every tuple: "
            "a DMA per slice is cheaper"
        )
    if b.dry_run:
        return None
    data, indices, updates, out = operands
    zero = b.index(0)
    out_ub = b.buffer([rows, inner], element, "UB", "out_ub")
    combine = None if reduction == "none" else reduction

    with b.loop(rows_total, rows, "r", True) as r:
        at = b.affine(r, inner)
        b.add(CopyFlatOp(data, at, out_ub, zero, rows * inner))

        def apply(t: SSAValue, n: int) -> None:
            """Tuples ``t .. t + n`` loaded and applied to the block at row ``r``."""
            idx_ub = b.buffer([n, width], index_element, "UB", "idx_ub")
            upd_ub = b.buffer([n, inner], element, "UB", "upd_ub")
            b.add(CopyFlatOp(indices, b.affine(t, width), idx_ub, zero, n * width))
            b.add(CopyFlatOp(updates, b.affine(t, inner), upd_ub, zero, n * inner))
            b.add(ScatterRowsOp(upd_ub, idx_ub, out_ub, r, depth, combine))

        over_tuple_tiles(b, count, tuples, apply)
        b.add(CopyFlatOp(out_ub, zero, out, at, rows * inner))
    b.tiles = blocks
    return None
