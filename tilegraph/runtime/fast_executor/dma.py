"""Batched forms of ``tile.copy`` (the whole windows of a batch in one gather and one
scatter, the cut ones clipped once per call site and offsets, :mod:`.windows`) and
``tile.copy_flat`` (one gather and one scatter of a batch of runs that lie inside their
buffers, else the kernel per item)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tilegraph.dialects.tile.base import memref_shape, scope_of
from tilegraph.dialects.tile.dma import CopyFlatOp, CopyOp
from tilegraph.dialects.tile.padding import declines_runtime_pad
from tilegraph.runtime.fast_executor.forms import batched_kernel
from tilegraph.runtime.fast_executor.windows import (
    CutWindows,
    copy_cut_items,
    copy_whole_windows,
    window_views,
)
from tilegraph.runtime.tile_interpreter.kernels import Kernel, kernel_of


@batched_kernel(CopyOp)
def batched_copy(op: CopyOp, batched: Sequence[bool]) -> Kernel | None:
    if declines_runtime_pad(op, batched):
        return None
    rank = len(memref_shape(op.src))
    src_batched, dst_batched = batched[0], batched[rank + 1]
    stores = scope_of(op.dst) == "GM"
    loads = scope_of(op.src) == "GM" or scope_of(op.dst) == "UB"
    single = kernel_of(op)
    split_padding = op.padding_splitter()
    copy_cut_windows = CutWindows()

    def run(src: np.ndarray, *rest: Any) -> tuple[()]:
        # the whole windows need no fill; the cut ones are filled (a load) and clipped
        src_offsets, dst, dst_offsets = rest[:rank], rest[rank], rest[rank + 1 : 2 * rank + 1]
        count = next(len(a) for a, m in zip((src, *rest), batched, strict=True) if m)
        item = src.shape[src_batched:] if stores else dst.shape[dst_batched:]
        cut = copy_whole_windows(
            count, item, src, src_offsets, src_batched, dst, dst_offsets, dst_batched
        )
        if loads and not dst_batched:  # each item refills the one buffer: in order
            copy_cut_items(single, (src, *rest), batched, cut)
            return ()
        fill = split_padding(rest)[1] if loads else None
        source, target = (src, src_offsets, src_batched), (dst, dst_offsets, dst_batched)
        copy_cut_windows(count, item, source, target, cut, fill)
        return ()

    return run


@batched_kernel(CopyFlatOp)
def batched_copy_flat(op: CopyFlatOp, batched: Sequence[bool]) -> Kernel | None:
    """A batch of flat runs into a batched destination (each item its own)."""
    src_batched, dst_batched = batched[0], batched[2]
    if not dst_batched or op.atomic is not None:
        return None  # items writing one buffer, or combining with it: in order, by the kernel
    count = op.count.value.data
    loads = op.partial is None and (scope_of(op.src) == "GM" or scope_of(op.dst) == "UB")
    single = kernel_of(op)

    def one_target(src: np.ndarray, i: Any, dst: np.ndarray, j: int) -> bool:
        """The batch's runs into one target offset of every item (the usual case: a
        tile's start), in one slice copy or one gather; False when a run is cut."""
        items = len(dst)
        sources = src.reshape(items if src_batched else 1, -1)
        starts = i.reshape(-1) if isinstance(i, np.ndarray) and i.ndim else None
        if starts is not None and starts.size != items:
            return False
        lo, hi = (int(i), int(i)) if starts is None else (int(starts.min()), int(starts.max()))
        room = dst[0].size
        if not dst.flags.c_contiguous or lo < 0 or j < 0 or hi + count > sources.shape[1]:
            return False
        if j + count > room:
            return False
        rows = dst.reshape(items, room)
        if loads:
            rows.fill(0)
        if starts is None or lo == hi:
            rows[:, j : j + count] = sources[:, lo : lo + count]
        else:  # each item's run from its own start (a hand-over's slot, a lockstep
            # launch's groups' regions): one gather of a view of every run of ``sources``
            # (an index per element would cost fifty times as much)
            runs = window_views(sources, (count,), True, False)
            rows[:, j : j + count] = runs[np.arange(items) if src_batched else 0, starts]
        return True

    def run(src: np.ndarray, i: Any, dst: np.ndarray, j: Any) -> tuple[()]:
        if not (isinstance(j, np.ndarray) and j.ndim) and one_target(src, i, dst, int(j)):
            return ()
        items = len(dst)
        sources = src.reshape(items if src_batched else 1, -1)
        starts, targets = (np.broadcast_to(np.asarray(v).reshape(-1), (items,)) for v in (i, j))
        inside = (
            dst.flags.c_contiguous
            and starts.min() >= 0
            and targets.min() >= 0
            and starts.max() + count <= sources.shape[1]
            and targets.max() + count <= dst[0].size
        )
        if not inside:  # a run cut at an edge: the kernel, item by item
            for t in range(items):
                single(src[t] if src_batched else src, int(starts[t]), dst[t], int(targets[t]))
            return ()
        rows = dst.reshape(items, -1)
        if loads:
            rows.fill(0)
        # the items of each (start, target) pair at once, their runs as slices (a batch's
        # runs take a few offsets: a workspace slot's, a sub-block's share)
        pairs = starts * (rows.shape[1] + 1) + targets
        alike = bool((pairs == pairs[0]).all())
        for pair in [int(pairs[0])] if alike else np.unique(pairs).tolist():
            chosen = np.flatnonzero(pairs == pair)
            i0, j0 = int(starts[chosen[0]]), int(targets[chosen[0]])
            if chosen.size == items:
                chosen = slice(None)
            source = sources[chosen if src_batched else 0, i0 : i0 + count]
            rows[chosen, j0 : j0 + count] = source
        return ()

    return run
