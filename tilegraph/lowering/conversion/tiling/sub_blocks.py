"""A cube kernel's vector epilogue shared out between the AIVs of a core group.

On a decoupled preset whose core group is one AIC and ``r`` AIVs
(:attr:`~tilegraph.hardware.HardwareModel.aiv_per_aic`: 910B's 1 : 2) a mix kernel's AIV
part (:mod:`.mix`) runs ``r`` times per accumulator tile, once per AIV of the group. Each
AIV takes a share of the tile's rows along its *split axis*, the outermost dim with more
than one row other than the last (the lanes: C0 of an NC1HWC0 tile, the columns of an ND
one): share ``s`` of ``t`` rows is rows ``[s*h, min(t, (s+1)*h))``, ``h = ceil(t / r)`` —
ragged: the last AIVs may get fewer rows, or none (a tile with no such axis is sub-block
0's alone). Every dim before the split axis is 1, so a share is one contiguous run of the
tile (and of its workspace slot).

:func:`emit_shares` emits, after the bridge (``tile.fixpipe`` L0C -> the whole tile on UB,
which :mod:`.mix` turns into the workspace hand-over), per distinct share size:

* a copy of the share from the whole tile into a UB tile of the share's shape
  (``tile.copy_flat``; in the AIV part it reads the workspace slot instead), then
* the epilogue on that tile, at the share's offsets, through ``epilogue(tile, shape,
  offsets)`` (the strategy's: loads, vector ops, the store).

Which AIVs run a share size is decided by ``tile.sub_block_idx`` through loops of zero or
one trip (``scf.for %s = %sub to %hi step r`` runs once, with ``%s`` = the sub-block, iff
``%sub < hi``), so the kernel stays straight-line loops the executors, the checkers and the
cycle model walk; shares of equal size share one body. The copies of all shares come
before every epilogue, so that the AIV part can release the slot right after them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod

from xdsl.dialects import arith
from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.tile import CopyFlatOp, SubBlockIdxOp
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder


def split_axis(tile: Sequence[int]) -> int | None:
    """The axis a tile's rows are shared out along (None: it cannot be split)."""
    for axis, size in enumerate(tile[:-1]):
        if size > 1:
            return axis
    return None


@dataclass(frozen=True)
class Share:
    """The rows ``[first * rows, ...)`` of AIVs ``lo .. hi-1`` (each its own ``rows``)."""

    lo: int
    hi: int
    rows: int
    """Rows per AIV (along the split axis; the whole tile's size when it cannot split)."""


def shares(tile: Sequence[int], sub_blocks: int) -> tuple[int | None, int, list[Share]]:
    """(split axis, rows of a full share ``h``, the shares grouped by size)."""
    axis = split_axis(tile)
    if axis is None or sub_blocks == 1:
        return axis, (tile[axis] if axis is not None else 1), [Share(0, 1, 0)]
    t = tile[axis]
    h = -(-t // sub_blocks)
    sizes = [max(0, min(h, t - s * h)) for s in range(sub_blocks)]
    found: list[Share] = []
    for s, rows in enumerate(sizes):
        if rows == 0:
            break
        if found and found[-1].rows == rows:
            found[-1] = Share(found[-1].lo, s + 1, rows)
        else:
            found.append(Share(s, s + 1, rows))
    return axis, h, found


def _guarded(b: KernelBuilder, sub: SSAValue, share: Share, sub_blocks: int, body) -> None:
    """Run ``body(s)`` on the AIVs ``share.lo <= sub < share.hi`` (``s`` = the sub-block)."""
    step = b.index(sub_blocks)
    if share.lo == 0 and share.hi == sub_blocks:
        body(sub)
        return
    if share.lo > 0:  # runs iff lo <= sub: from lo to sub + 1 in steps of r (one trip)
        upper = b.add(arith.AddiOp(sub, b.index(1))).results[0]
        with b.loop_over(b.index(share.lo), upper, step, "sub_from") as first:
            if share.hi == sub_blocks:
                body(sub)
            else:
                with b.loop_over(first, b.index(share.hi), step, "sub") as s:
                    body(s)
        return
    with b.loop_over(sub, b.index(share.hi), step, "sub") as s:  # runs iff sub < hi
        body(s)


def emit_shares(
    b: KernelBuilder,
    acc: SSAValue,
    tile: Sequence[int],
    element: Attribute,
    offsets: Sequence[SSAValue],
    epilogue: Callable[[SSAValue, list[int], list[SSAValue]], None],
) -> None:
    """After the bridge into ``acc`` (the whole ``tile`` on UB), each AIV's share: copies,
    then epilogues (see the module docstring); ``offsets`` are the tile's in the output."""
    sub_blocks = b.hw.aiv_per_aic
    axis, h, found = shares(tile, sub_blocks)
    sub_op = b.add(SubBlockIdxOp())
    sub = sub_op.results[0]
    sub.name_hint = "sub_block"
    inner = prod(tile[axis + 1 :]) if axis is not None else prod(tile)
    shaped: list[tuple[Share, SSAValue, list[int]]] = []
    for share in found:
        shape = list(tile)
        if axis is not None and sub_blocks > 1:
            shape[axis] = share.rows
        half = b.buffer(shape, element, "UB", f"share{share.rows}_ub" if share.rows else "share_ub")
        shaped.append((share, half, shape))
        count = prod(shape)

        def copy(s: SSAValue, half: SSAValue = half, count: int = count) -> None:
            start = b.affine(s, h * inner) if sub_blocks > 1 and axis is not None else b.index(0)
            b.add(CopyFlatOp(acc, start, half, b.index(0), count))

        _guarded(b, sub, share, sub_blocks, copy)
    for share, half, shape in shaped:

        def finish(s: SSAValue, half: SSAValue = half, shape: list[int] = shape) -> None:
            moved = list(offsets)
            if axis is not None and sub_blocks > 1:
                moved[axis] = b.add_index(moved[axis], b.affine(s, h))
            epilogue(half, shape, moved)

        _guarded(b, sub, share, sub_blocks, finish)
