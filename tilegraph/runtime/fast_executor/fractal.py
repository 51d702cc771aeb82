"""Batched forms of the cube path's data moves: ``tile.nd2nz`` (the whole windows of a
batch in one gather, reordered into NZ at once; cut ones through the kernel),
``tile.load2d`` (fractals of a batch of tiles), ``tile.load3d`` (img2col of one K step for
a batch of tiles) and ``tile.fixpipe`` (whole windows in one scatter, cut ones through the
kernel), built from the kernels' pieces in
:mod:`tilegraph.runtime.tile_interpreter.fractal`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tilegraph.dialects.tile.base import memref_shape
from tilegraph.dialects.tile.fixpipe import FixpipeOp
from tilegraph.dialects.tile.fractal import Load2dOp, Load3dOp, Nd2NzOp
from tilegraph.runtime.fast_executor.forms import batched_kernel
from tilegraph.runtime.fast_executor.scratch import scratch
from tilegraph.runtime.fast_executor.windows import (
    CutWindows,
    copy_cut_items,
    copy_whole_windows,
)
from tilegraph.runtime.tile_interpreter.fractal import (
    fixpipe_tiles,
    img2col_padded,
    load_fractals,
    past_valid_zeroing,
    zero_past_valid_nz,
)
from tilegraph.runtime.tile_interpreter.kernels import Kernel, kernel_of


@batched_kernel(Nd2NzOp)
def batched_nd2nz(op: Nd2NzOp, batched: Sequence[bool]) -> Kernel | None:
    """A batch of ND windows into batched NZ tiles: the windows that lie inside the source
    gathered into row-major planes at once, the cut ones (a ragged tail; a recurrent
    state of fewer rows than a fractal, every step) as the kernel pads them — the plane
    zero, then the part inside the source — in one flat gather (:class:`CutWindows`, its
    plan kept per call site), and all reordered into NZ in one copy."""
    rank = len(memref_shape(op.src))
    if batched[0] or not batched[rank + 1]:
        return None  # a batched source (never lowered so), or items writing one buffer
    given = (op.valid_rows is not None, op.valid_cols is not None)
    c1, r1, r0, c0 = memref_shape(op.dst)[-4:]
    extent = (*(1,) * (rank - 2), r1 * r0, c1 * c0)
    copy_cut_windows = CutWindows()

    def run(src: np.ndarray, *rest: Any) -> tuple[()]:
        offsets, dst = rest[:rank], rest[rank]
        count = len(dst)
        planes = scratch("nd2nz", (count, *extent), dst.dtype)
        zeros = (0,) * rank
        cut = copy_whole_windows(count, extent, src, offsets, False, planes, zeros, True)
        source, target = (src, offsets, False), (planes, zeros, True)
        copy_cut_windows(count, extent, source, target, cut, 0)  # zero padded, as the kernel
        nz = planes.reshape(count, r1, r0, c1, c0).transpose(0, 3, 1, 2, 4)
        try:
            dst.reshape(count, c1, r1, r0, c0, copy=False)[...] = nz
        except ValueError:  # a destination whose dims do not merge: through a copy
            dst[...] = nz.reshape(dst.shape)
        if any(given):  # a ragged block's rows / columns past its valid ones read as zero
            valid = iter(rest[rank + 1 :])
            rows, cols = (next(valid) if has else None for has in given)
            zero_past_valid_nz(op, dst, rows, cols)
        return ()

    return run


@batched_kernel(Load2dOp)
def batched_load2d(op: Load2dOp, batched: Sequence[bool]) -> Kernel | None:
    if batched[1] or batched[2] or not batched[3]:
        return None
    mode, lead = op.mode.data, 1 if batched[0] else 0
    zero_past_valid = past_valid_zeroing(op)

    def run(src: np.ndarray, i: int, j: int, dst: np.ndarray, *valid: Any) -> tuple[()]:
        src = src.reshape(*src.shape[:lead], *src.shape[-4:])
        load_fractals(src, i, j, dst, mode)
        # one extent per tile (or one for all): the fractals past it read as zero
        zero_past_valid(dst, valid)
        return ()

    return run


@batched_kernel(Load3dOp)
def batched_load3d(op: Load3dOp, batched: Sequence[bool]) -> Kernel | None:
    if batched[1] or any(batched[3:]) or not (batched[0] and batched[2]):
        return None  # a varying K start, valid channels or run-time pad: per value
    return img2col_padded(op)


@batched_kernel(FixpipeOp)
def batched_fixpipe(op: FixpipeOp, batched: Sequence[bool]) -> Kernel | None:
    """A batch of accumulators out through the fixpipe: the items before the first ragged
    one (fewer valid rows / columns than the tile: it writes its valid part only, as the
    last N block of a recurrent step's gates does) in one batch — whole windows in one
    scatter, cut ones by the kernel — and the items from it on by the kernel, item by
    item, in order."""
    if not batched[0]:
        return None
    tiles = fixpipe_tiles(op)
    single = kernel_of(op)
    rank = len(memref_shape(op.dst))
    has_bias = op.bias is not None
    has_deq = op.deq is not None
    dst_batched = batched[1]
    n1, m1 = memref_shape(op.src)[:2]
    valid_at = rank + has_bias + has_deq
    whole = [16 * m1] * (op.m is not None) + [16 * n1] * (op.n is not None)

    def unragged(count: int, valid: Sequence[Any]) -> int:
        """How many leading items are not ragged."""
        ragged: Any = False
        for v, w in zip(valid, whole, strict=True):
            ragged = ragged | (np.asarray(v) < w)
        if not np.any(ragged):
            return count
        return int(np.argmax(np.broadcast_to(ragged, (count,))))

    def batch(src: np.ndarray, dst: np.ndarray, *rest: Any) -> None:
        count = len(src)
        width = dst.shape[dst_batched + 3] if dst.ndim - dst_batched > 3 else 0
        bias = None
        if has_bias:
            bias = rest[rank].reshape(-1 if batched[2 + rank] else 1, src.shape[1], 1, 1, 16)
        deq = None
        if has_deq:
            at = rank + has_bias
            deq = rest[at].reshape(-1 if batched[2 + at] else 1, src.shape[1], 1, 1, 16)
        tile = tiles(src, bias, width, deq)
        zeros = [0] * rank
        cut = copy_whole_windows(
            count, tile.shape[1:], tile, zeros, True, dst, rest[:rank], dst_batched
        )
        copy_cut_items(single, (src, dst, *rest), batched, cut)

    def run(src: np.ndarray, dst: np.ndarray, *rest: Any) -> tuple[()]:
        count = len(src)
        args = (src, dst, *rest)
        first = unragged(count, rest[valid_at:])
        if first == count:
            batch(*args)
        elif first:  # a batch of the leading items: views of their operands
            batch(*(a[:first] if m else a for a, m in zip(args, batched, strict=True)))
        if first < count:
            copy_cut_items(single, args, batched, np.arange(first, count))
        return ()

    return run
