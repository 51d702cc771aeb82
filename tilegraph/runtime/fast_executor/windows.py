"""Window copies over a batch of tiles at once, for the batched forms of the data moves
(``tile.copy``, ``tile.fixpipe``): the items whose windows lie wholly inside both buffers
go in one gather and one scatter, the cut ones (ragged tails, halos) item by item through
the op's own kernel."""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any

import numpy as np

from tilegraph.runtime.tile_interpreter.kernels import Kernel


def copy_whole_windows(
    count: int,
    extent: Sequence[int],
    src: np.ndarray,
    src_offsets: Sequence[Any],
    src_batched: bool,
    dst: np.ndarray,
    dst_offsets: Sequence[Any],
    dst_batched: bool,
) -> np.ndarray:
    """:func:`~tilegraph.runtime.tile_interpreter.dma.window` for a batch of ``count``
    items at once: item ``t`` copies an ``extent`` window from ``src`` (item ``t`` of it
    when ``src_batched``) at its offsets into ``dst`` likewise; an offset is an int or
    an array of one per item. Copies (with the cast to ``dst``'s type) every item whose
    window lies wholly inside both buffers, in one gather and one scatter, and returns
    the others' indices: their windows are cut (ragged tails, halos), which is for the
    caller to do item by item."""
    if src.dtype == dst.dtype and src.dtype.type.__module__ != "numpy":
        # numpy's stride tricks do not know ml_dtypes' types (float8): move their bits
        raw = np.dtype(f"u{src.dtype.itemsize}")
        src, dst = src.view(raw), dst.view(raw)
    if count <= _FEW_WINDOWS and (count <= _VERY_FEW or prod(extent) >= _LARGE_WINDOW):
        source, target = (src, src_offsets, src_batched), (dst, dst_offsets, dst_batched)
        return _copy_item_by_item(count, extent, source, target)
    src_shape = src.shape[1:] if src_batched else src.shape
    dst_shape = dst.shape[1:] if dst_batched else dst.shape
    merged = _merged_tail(
        extent, src, src_shape, src_offsets, src_batched, dst, dst_shape, dst_offsets, dst_batched
    )
    if merged is not None:
        extent, src, src_offsets, dst, dst_offsets = merged
        src_shape = src.shape[1:] if src_batched else src.shape
        dst_shape = dst.shape[1:] if dst_batched else dst.shape
    whole = _whole_items(count, extent, dst_shape, dst_offsets, src_shape, src_offsets)
    if whole is False:
        return np.arange(count)
    items: Any = np.arange(count) if whole is True else np.flatnonzero(whole)
    if items.size == count:
        items = slice(None)  # every window whole: views instead of fancy indexing
    if count and (isinstance(items, slice) or items.size):
        chosen = count if isinstance(items, slice) else len(items)
        source, key, shared = _window_key(src, src_offsets, extent, items, src_batched)
        values = source[key]
        if shared:  # one window of src serves every item
            values = np.broadcast_to(values, (chosen, *extent))
        target, key, shared = _window_key(dst, dst_offsets, extent, items, dst_batched, True)
        target[key] = values[-1] if shared else values  # shared: the last item's stays
    return _cut(whole)


_NO_ITEMS = np.empty(0, np.intp)
_NO_ITEMS.flags.writeable = False


def _whole_items(
    count: int,
    extent: Sequence[int],
    dst_shape: Sequence[int],
    dst_offsets: Sequence[Any],
    src_shape: Sequence[int],
    src_offsets: Sequence[Any],
) -> bool | np.ndarray:
    """Which of ``count`` items have their window wholly inside both buffers: True for
    all of them, False for none, else a boolean mask of one per item. A dim whose offsets are ints
    is decided in Python and one whose offsets are arrays by numpy: a batch of a few small
    windows spent most of its copy on numpy calls about int offsets."""
    mask: Any = None
    for e, n_dst, n_src, od, os_ in zip(
        extent, dst_shape, src_shape, dst_offsets, src_offsets, strict=True
    ):
        for offset, n in ((od, n_dst), (os_, n_src)):
            if isinstance(offset, np.ndarray) and offset.ndim:
                inside = (offset >= 0) & (offset <= n - e)
                mask = inside if mask is None else mask & inside
            elif not 0 <= offset <= n - e:
                return False
    if mask is None or mask.all():
        return True
    if mask.shape != (count,):
        mask = np.broadcast_to(mask, (count,))
    return mask


def _cut(whole: bool | np.ndarray) -> np.ndarray:
    """The indices of the items whose window is cut (``whole``: True, or a mask)."""
    return _NO_ITEMS if whole is True else np.flatnonzero(~whole)


_FEW_WINDOWS, _LARGE_WINDOW, _VERY_FEW = 64, 8192, 8
"""Up to ``_FEW_WINDOWS`` windows of at least ``_LARGE_WINDOW`` elements, or up to
``_VERY_FEW`` of any size, copying item by item beats one gather (numpy's gather moves its
inner dim one call at a time, a slice copy whole runs; the loop costs about a microsecond
an item, the gather's set-up — a strided view, index arrays — tens of microseconds)."""


def _ndim(offset: Any) -> int:
    """An offset's dims: 0 for an int (numpy's ``ndim`` converts it to an array first)."""
    return offset.ndim if isinstance(offset, np.ndarray) else 0


_Side = tuple[np.ndarray, Sequence[Any], bool]
"""One side of a window copy: the buffer, its offsets, whether it has an item dim."""


def _copy_item_by_item(
    count: int, extent: Sequence[int], source: _Side, target: _Side
) -> np.ndarray:
    """:func:`copy_whole_windows` one slice copy per item, in order (its result; its
    arguments, each buffer with its offsets and whether it is batched): every item's
    bounds checked and sliced in plain Python, which for a few items costs less than the
    numpy calls that set up one gather."""
    src, src_offsets, src_batched = source
    dst, dst_offsets, dst_batched = target
    src_shape = src.shape[1:] if src_batched else src.shape
    dst_shape = dst.shape[1:] if dst_batched else dst.shape
    dims = []  # per dim: extent, both sizes, both offsets (an int, or a list per item)
    for e, n_src, n_dst, os_, od in zip(
        extent, src_shape, dst_shape, src_offsets, dst_offsets, strict=True
    ):
        dims.append((e, n_src, n_dst, _per_item(os_, count), _per_item(od, count)))
    cut: list[int] = []
    for t in range(count):
        src_key: list[slice] = []
        dst_key: list[slice] = []
        for e, n_src, n_dst, os_, od in dims:
            s0 = os_ if isinstance(os_, int) else os_[t]
            d0 = od if isinstance(od, int) else od[t]
            if s0 < 0 or d0 < 0 or s0 + e > n_src or d0 + e > n_dst:
                cut.append(t)
                break
            src_key.append(slice(s0, s0 + e))
            dst_key.append(slice(d0, d0 + e))
        else:
            into = dst[t] if dst_batched else dst
            into[tuple(dst_key)] = (src[t] if src_batched else src)[tuple(src_key)]
    return np.array(cut, np.intp) if cut else _NO_ITEMS


def _per_item(offset: Any, count: int) -> int | list[int]:
    """An offset as an int, or as a list of one int per item."""
    if not _ndim(offset):
        return int(offset)
    values = offset.reshape(-1).tolist()
    return values if len(values) == count else values * count  # one value for all


def _merged_tail(
    extent: Sequence[int],
    src: np.ndarray,
    src_shape: Sequence[int],
    src_offsets: Sequence[Any],
    src_batched: bool,
    dst: np.ndarray,
    dst_shape: Sequence[int],
    dst_offsets: Sequence[Any],
    dst_batched: bool,
) -> tuple[Any, ...] | None:
    """The copy with the trailing dims that every window spans whole (in both buffers, at
    offset 0) merged into one: numpy moves the inner dim of a gather one call at a time,
    so (2, 16, 16, 16) windows go 16 times faster as (2, 16, 256). None: nothing to merge,
    or a buffer whose dims cannot merge without a copy."""
    tail = 0
    for e, n_src, n_dst, os_, od in zip(
        reversed(extent), reversed(src_shape), reversed(dst_shape), reversed(src_offsets),
        reversed(dst_offsets), strict=True,
    ):  # fmt: skip
        if e != n_src or e != n_dst or _ndim(os_) or _ndim(od) or os_ or od:
            break
        tail += 1
    if tail < 2:
        return None
    keep = len(extent) - tail
    inner = prod(extent[keep:])
    try:
        src = src.reshape(*src.shape[: src_batched + keep], inner, copy=False)
        dst = dst.reshape(*dst.shape[: dst_batched + keep], inner, copy=False)
    except ValueError:
        return None
    return (*extent[:keep], inner), src, (*src_offsets[:keep], 0), dst, (*dst_offsets[:keep], 0)


def _window_key(
    buffer: np.ndarray,
    offsets: Sequence[Any],
    extent: Sequence[int],
    items: Any,
    batched: bool,
    writeable: bool = False,
) -> tuple[np.ndarray, tuple[Any, ...], bool]:
    """``(array, key, shared)``: ``array[key]`` is the ``extent`` windows of ``items`` (an
    index array, or ``slice(None)`` for all) in ``buffer``, one per item — or, ``shared``,
    the one window of an unbatched buffer that every item's int offsets name."""
    if not any(_ndim(o) for o in offsets):
        at = tuple(slice(o, o + e) for o, e in zip(offsets, extent, strict=True))
        return buffer, (items, *at) if batched else at, not batched
    # sliding_window_view's view, built directly (its checks cost more than the copy of a
    # small batch): every window start along each dim, then the window's own dims
    own = buffer.shape[batched:]
    views = np.lib.stride_tricks.as_strided(
        buffer,
        (*buffer.shape[:batched], *(n - e + 1 for n, e in zip(own, extent, strict=True)), *extent),
        (*buffer.strides, *buffer.strides[batched:]),
        writeable=writeable,
    )
    if isinstance(items, slice):  # advanced indices pair up item by item
        items = np.arange(np.shape(next(o for o in offsets if _ndim(o)))[0])
    at = tuple(np.asarray(o)[items] if _ndim(o) else o for o in offsets)
    return views, (items, *at) if batched else at, False


def copy_cut_items(
    single: Kernel, args: Sequence[Any], batched: Sequence[bool], items: np.ndarray
) -> None:
    """``single`` (an op's kernel for one item) on the ``items`` of a flat batch, in order:
    the items :func:`copy_whole_windows` left, whose windows are cut."""
    for t in items:
        single(*[a[t] if m else a for a, m in zip(args, batched, strict=True)])
