"""Semantics of the DMA ops (:mod:`tilegraph.dialects.tile.dma`): window copies and the
NCHW <-> NC1HWC0 moves, with :func:`window`, the cut of a window at the buffers' edges that
every data move shares."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from tilegraph.dialects.tile.base import memref_shape, scope_of
from tilegraph.dialects.tile.dma import CopyFlatOp, CopyOp, Load5hdOp, Store5hdOp
from tilegraph.runtime.tile_interpreter.kernels import Kernel, tile_kernel


def window(
    extent: Sequence[int],
    dst_shape: Sequence[int],
    src_shape: Sequence[int],
    dst_offsets: Sequence[int],
    src_offsets: Sequence[int],
) -> tuple[tuple[slice, ...], tuple[slice, ...]] | None:
    """The part of an ``extent``-sized window, placed at ``dst_offsets`` in a ``dst_shape``
    buffer and at ``src_offsets`` in a ``src_shape`` one, that lies inside both: slices
    (into dst, into src), or None when it is empty. Cutting the window at the buffers'
    edges is how tiles handle ragged tails, halos and padding.

    Remembered per arguments: a kernel's tile loop, or a recurrent step, asks for the same
    few windows thousands of times."""
    args = (tuple(extent), tuple(dst_shape), tuple(src_shape), tuple(dst_offsets))
    try:
        return _remembered_window(*args, tuple(src_offsets))
    except TypeError:  # an unhashable offset (an array): worked out afresh
        return _window(*args, tuple(src_offsets))


def _window(
    extent: tuple[int, ...],
    dst_shape: tuple[int, ...],
    src_shape: tuple[int, ...],
    dst_offsets: tuple[int, ...],
    src_offsets: tuple[int, ...],
) -> tuple[tuple[slice, ...], tuple[slice, ...]] | None:
    """:func:`window`, worked out."""
    dst_slices: list[slice] = []
    src_slices: list[slice] = []
    for e, n_dst, n_src, od, os_ in zip(
        extent, dst_shape, src_shape, dst_offsets, src_offsets, strict=True
    ):
        lo = max(0, -od, -os_)
        hi = min(e, n_dst - od, n_src - os_)
        if hi <= lo:
            return None
        dst_slices.append(slice(od + lo, od + hi))
        src_slices.append(slice(os_ + lo, os_ + hi))
    return tuple(dst_slices), tuple(src_slices)


_remembered_window = functools.lru_cache(maxsize=8192)(_window)


def cast_into(dst: np.ndarray, index: Any, values: np.ndarray) -> None:
    dst[index] = values.astype(dst.dtype, copy=False)


@tile_kernel(CopyOp)
def copy(op: CopyOp) -> Kernel:
    rank = len(memref_shape(op.src))
    loads = scope_of(op.src) == "GM" or scope_of(op.dst) == "UB"
    stores = scope_of(op.dst) == "GM"
    windows: dict[tuple[Any, ...], tuple[Any, bool]] = {}
    split_padding = op.padding_splitter()

    def run(src: np.ndarray, *args: Any) -> tuple[()]:
        rest, fill = split_padding(args)
        dst = rest[rank]
        key = (*rest[:rank], *rest[rank + 1 :])
        cached = windows.get(key)
        if cached is None:
            extent = src.shape if stores else dst.shape
            found = window(extent, dst.shape, src.shape, rest[rank + 1 :], rest[:rank])
            whole = found is not None and all(
                s.stop - s.start == n for s, n in zip(found[0], dst.shape, strict=True)
            )
            if len(windows) < 4096:
                windows[key] = (found, whole)
        else:
            found, whole = cached
        if loads and not whole:
            dst.fill(fill)
        if found is not None:
            cast_into(dst, found[0], src[found[1]])
        return ()

    return run


ATOMIC_COMBINE = {"add": np.add, "max": np.maximum, "min": np.minimum}
"""An atomic ``copy_flat``'s combination of the stored element and the one in GM."""


@tile_kernel(CopyFlatOp)
def copy_flat(op: CopyFlatOp) -> Kernel:
    count = op.count.value.data
    loads = op.partial is None and (scope_of(op.src) == "GM" or scope_of(op.dst) == "UB")
    combine = None if op.combine is None else ATOMIC_COMBINE[op.combine]

    def run(src: np.ndarray, i: int, dst: np.ndarray, j: int) -> tuple[()]:
        flat_src, flat_dst = src.reshape(-1), dst.reshape(-1)
        if loads:
            dst.fill(0)
        found = window((count,), flat_dst.shape, flat_src.shape, (j,), (i,))
        if found is None:
            return ()
        if combine is None:
            flat_dst[found[0]] = flat_src[found[1]]
        else:  # an atomic store: combined with what lies there, in the data's type
            flat_dst[found[0]] = combine(flat_dst[found[0]], flat_src[found[1]])
        return ()

    return run


@tile_kernel(Load5hdOp)
def load_5hd(op: Load5hdOp) -> Kernel:
    split_padding = op.padding_splitter()

    def run(src: np.ndarray, n: int, c: int, h: int, w: int, *args: Any) -> tuple[()]:
        (dst,), fill = split_padding(args)
        nn, c1, hh, ww, c0 = dst.shape
        if src.ndim == 3:
            src = src.reshape(1, *src.shape)
        staged = np.full((nn, c1 * c0, hh, ww), fill, dst.dtype)
        staged[:, max(0, src.shape[1] - c) :] = 0  # channels past C: padding lanes, zero
        found = window(staged.shape, staged.shape, src.shape, [0, 0, 0, 0], [n, c, h, w])
        if found is not None:
            staged[found[0]] = src[found[1]]
        dst[...] = staged.reshape(nn, c1, c0, hh, ww).transpose(0, 1, 3, 4, 2)
        return ()

    return run


@tile_kernel(Store5hdOp)
def store_5hd(op: Store5hdOp) -> Kernel:
    end = None if op.channel_end is None else op.channel_end.value.data

    def run(src: np.ndarray, dst: np.ndarray, n: int, c: int, h: int, w: int) -> tuple[()]:
        nn, c1, hh, ww, c0 = src.shape
        planar = src.transpose(0, 1, 4, 2, 3).reshape(nn, c1 * c0, hh, ww)
        target = dst if end is None else dst[:, :end]
        found = window(planar.shape, planar.shape, target.shape, [0, 0, 0, 0], [n, c, h, w])
        if found is not None:
            cast_into(target, found[1], planar[found[0]])
        return ()

    return run
