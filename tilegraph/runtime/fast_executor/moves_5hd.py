"""Batched forms of ``tile.load_5hd`` and ``tile.store_5hd`` (the DMA moves that do
TransData's NCHW <-> NC1HWC0 work on the way): a batch of windows in one gather and one
scatter (:mod:`.windows`) around one transposition, instead of the kernel once per tile.

A load reads its windows out of the source padded once per call so that every window lies
inside it (positions outside the source read as the op's pad, channels past C as 0, as the
kernel stages them); a store writes the whole windows at once and the cut ones (ragged
tails) through the kernel, item by item. Both forms need the destination batched (a batch
writing one buffer runs in order, through the kernel).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tilegraph.dialects.tile.dma import Load5hdOp, Store5hdOp
from tilegraph.dialects.tile.padding import declines_runtime_pad
from tilegraph.runtime.fast_executor.forms import batched_kernel
from tilegraph.runtime.fast_executor.scratch import scratch
from tilegraph.runtime.fast_executor.windows import copy_cut_items, copy_whole_windows
from tilegraph.runtime.tile_interpreter.kernels import Kernel, kernel_of


def _span(offset: Any) -> tuple[int, int]:
    """The smallest and largest of an offset (an int, or an array of one per item)."""
    if isinstance(offset, np.ndarray):
        return int(offset.min()), int(offset.max())
    return int(offset), int(offset)


def _padded_source(
    src: np.ndarray, offsets: Sequence[Any], extent: Sequence[int], fill: float, dtype: Any
) -> tuple[np.ndarray, list[Any]]:
    """``src`` (NCHW) padded so that every item's ``extent`` window at ``offsets`` lies
    inside it, and the offsets into the padded array. What the kernel stages outside the
    source: ``fill``, but 0 on channels at or past C (its padding lanes). Unpadded (the
    source itself) when every window already lies inside and no cast is needed."""
    low: list[int] = []
    high: list[int] = []
    for offset, e, n in zip(offsets, extent, src.shape, strict=True):
        first, last = _span(offset)
        low.append(max(0, -first))
        high.append(max(0, last + e - n))
    if not any(low) and not any(high) and src.dtype == dtype:
        return src, list(offsets)
    shape = tuple(n + lo + hi for n, lo, hi in zip(src.shape, low, high, strict=True))
    padded = np.full(shape, fill, dtype)
    padded[:, low[1] + src.shape[1] :] = 0  # channels past C: padding lanes
    inside = tuple(slice(lo, lo + n) for lo, n in zip(low, src.shape, strict=True))
    padded[inside] = src
    return padded, [o + lo for o, lo in zip(offsets, low, strict=True)]


@batched_kernel(Load5hdOp)
def batched_load_5hd(op: Load5hdOp, batched: Sequence[bool]) -> Kernel | None:
    """Items ``t`` load their NCHW windows at per-item offsets into batched 5HD tiles."""
    if batched[0] or not batched[5] or declines_runtime_pad(op, batched):
        return (
            None  # a batched source (not GM as usual), one destination for all, or a pad per item
        )

    split_padding = op.padding_splitter()

    def run(src: np.ndarray, n: Any, c: Any, h: Any, w: Any, *args: Any) -> tuple[()]:
        (dst,), fill = split_padding(args)
        count, nn, c1, hh, ww, c0 = dst.shape
        if src.ndim == 3:
            src = src.reshape(1, *src.shape)
        extent = (nn, c1 * c0, hh, ww)
        source, offsets = _padded_source(src, (n, c, h, w), extent, fill, dst.dtype)
        staged = scratch("load_5hd", (count, *extent), dst.dtype)
        cut = copy_whole_windows(count, extent, source, offsets, False, staged, (0,) * 4, True)
        assert not cut.size, "a window outside the padded source"
        np.copyto(dst, staged.reshape(count, nn, c1, c0, hh, ww).transpose(0, 1, 2, 4, 5, 3))
        return ()

    return run


@batched_kernel(Store5hdOp)
def batched_store_5hd(op: Store5hdOp, batched: Sequence[bool]) -> Kernel | None:
    """Batched 5HD tiles ``t`` store into NCHW at per-item offsets (``tile.parallel``:
    their windows are disjoint, so whole and cut ones may go in either order)."""
    if not batched[0]:
        return None
    end = None if op.channel_end is None else op.channel_end.value.data
    dst_batched = batched[1]
    single = kernel_of(op)

    def run(src: np.ndarray, dst: np.ndarray, *offsets: Any) -> tuple[()]:
        count, nn, c1, hh, ww, c0 = src.shape
        planar = scratch("store_5hd", (count, nn, c1, c0, hh, ww), src.dtype)
        np.copyto(planar, src.transpose(0, 1, 2, 5, 3, 4))
        planar = planar.reshape(count, nn, c1 * c0, hh, ww)
        target = dst if end is None else dst[..., :end, :, :]
        zeros = (0,) * 4
        cut = copy_whole_windows(
            count, planar.shape[1:], planar, zeros, True, target, offsets, dst_batched
        )
        copy_cut_items(single, (src, dst, *offsets), batched, cut)
        return ()

    return run
