"""Window copies over a batch of tiles at once, for the batched forms of the data moves
(``tile.copy``, ``tile.fixpipe``): the items whose windows lie wholly inside both buffers
go in one gather and one scatter; the cut ones (ragged tails, halos) either through
:func:`copy_cut_windows` (their valid parts, clipped as the interpreter's
:func:`~tilegraph.runtime.tile_interpreter.dma.window` clips them, one gather and scatter
per clipped extent) or item by item through the op's own kernel."""

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
    src, dst = _bit_views(src, dst)
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


def _bit_views(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``src`` and ``dst`` as they are, or (both of one ml_dtypes type, e.g. float8, which
    numpy's stride tricks do not know) as views of their bits."""
    if src.dtype == dst.dtype and src.dtype.type.__module__ != "numpy":
        raw = np.dtype(f"u{src.dtype.itemsize}")
        return src.view(raw), dst.view(raw)
    return src, dst


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


def _copy_key(count: int, extent: Sequence[int], source: _Side, target: _Side) -> tuple[Any, ...]:
    """What decides a batch of window copies' slices: the buffers' shapes, whether they
    carry the item dim, the extent and the offsets' values (an array's by its bytes)."""
    src, src_offsets, src_batched = source
    dst, dst_offsets, dst_batched = target
    return (
        count, tuple(extent), src.shape, src_batched, dst.shape, dst_batched,
        *(o if not _ndim(o) else (o.dtype.char, o.shape, o.tobytes()) for o in src_offsets),
        *(o if not _ndim(o) else (o.dtype.char, o.shape, o.tobytes()) for o in dst_offsets),
    )  # fmt: skip


_ItemPlan = tuple[list[tuple[int, tuple[slice, ...], tuple[slice, ...]]], np.ndarray]
_ITEM_PLANS: dict[tuple[Any, ...], _ItemPlan] = {}
""":func:`_copy_item_by_item`'s slices (item, into dst, from src) and cut items per
:func:`_copy_key`: a recurrent step or a tile loop repeats the same few batches."""


def _copy_item_by_item(
    count: int, extent: Sequence[int], source: _Side, target: _Side
) -> np.ndarray:
    """:func:`copy_whole_windows` one slice copy per item, in order (its result; its
    arguments, each buffer with its offsets and whether it is batched): every item's
    bounds checked and sliced in plain Python, which for a few items costs less than the
    numpy calls that set up one gather; the slices are remembered per :func:`_copy_key`."""
    src, dst = source[0], target[0]
    src_batched, dst_batched = source[2], target[2]
    key = _copy_key(count, extent, source, target)
    plan = _ITEM_PLANS.get(key)
    if plan is None:
        plan = _item_slices(count, extent, source, target)
        if len(_ITEM_PLANS) >= 4096:
            _ITEM_PLANS.clear()
        _ITEM_PLANS[key] = plan
    steps, cut = plan
    for t, dst_key, src_key in steps:
        into = dst[t] if dst_batched else dst
        into[dst_key] = (src[t] if src_batched else src)[src_key]
    return cut


def _item_slices(count: int, extent: Sequence[int], source: _Side, target: _Side) -> _ItemPlan:
    """:func:`_copy_item_by_item`'s plan: the slices of each whole item, and the cut ones."""
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
    steps: list[tuple[int, tuple[slice, ...], tuple[slice, ...]]] = []
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
            steps.append((t, tuple(dst_key), tuple(src_key)))
    if not cut:
        return steps, _NO_ITEMS
    items = np.array(cut, np.intp)
    items.flags.writeable = False  # remembered: every call with this key returns it
    return steps, items


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
    views = window_views(buffer, extent, batched, writeable)
    if isinstance(items, slice):  # advanced indices pair up item by item
        items = np.arange(np.shape(next(o for o in offsets if _ndim(o)))[0])
    at = tuple(np.asarray(o)[items] if _ndim(o) else o for o in offsets)
    return views, (items, *at) if batched else at, False


def window_views(
    buffer: np.ndarray, extent: Sequence[int], batched: bool, writeable: bool
) -> np.ndarray:
    """Every ``extent`` window of ``buffer`` (of each item, when ``batched``): indexed by
    (item,) window start per dim, then the window's own dims. sliding_window_view's view,
    built directly: its checks cost more than the copy of a small batch."""
    own = buffer.shape[batched:]
    return np.lib.stride_tricks.as_strided(
        buffer,
        (*buffer.shape[:batched], *(n - e + 1 for n, e in zip(own, extent, strict=True)), *extent),
        (*buffer.strides, *buffer.strides[batched:]),
        writeable=writeable,
    )


_Indices = tuple[np.ndarray, tuple[np.ndarray, ...]]
"""Elements of a buffer: their flat indices, and the same as one index array per dim."""


class CutWindows:
    """The ``cut`` items of a batch of ``count`` window copies (what
    :func:`copy_whole_windows` left), as the interpreter's kernel does each of them: fill
    the item's destination with ``fill`` first (None: a store, which fills nothing), then
    copy the part of its window inside both buffers (none, when it is empty).

    One per call site (a batched form's kernel): the clipped windows of a batch are worked
    out once per offsets and buffer shapes, as the flat element indices they read and
    write, so a call that repeats them (a recurrent step, a tile loop's ragged last
    block) is one gather and one scatter. A destination without an item dim keeps the
    last item's value where windows overlap, as :func:`copy_whole_windows` does; a load
    into one (each item fills the whole buffer) is the caller's to do item by item."""

    def __init__(self) -> None:
        self._plans: dict[tuple[Any, ...], tuple[_Indices, _Indices]] = {}

    def __call__(
        self,
        count: int,
        extent: Sequence[int],
        source: _Side,
        target: _Side,
        cut: np.ndarray,
        fill: Any,
    ) -> None:
        if not cut.size:
            return
        src, src_offsets, src_batched = source
        dst, dst_offsets, dst_batched = target
        if fill is not None:
            if not dst_batched:
                raise ValueError("a load into one unbatched buffer goes item by item")
            dst[cut] = fill
        src, dst = _bit_views(src, dst)
        key = _copy_key(count, extent, (src, src_offsets, src_batched), target)
        plan = self._plans.get(key)
        if plan is None:
            # the clipped copy run once on buffers of their own elements' flat indices
            src_index = np.arange(src.size).reshape(src.shape)
            dst_index = np.full(dst.shape, -1, np.intp)
            order = np.arange(dst.size).reshape(dst.shape)
            _copy_clipped(
                count, extent, (src_index, src_offsets, src_batched),
                (dst_index, dst_offsets, dst_batched), cut,
            )  # fmt: skip
            written = dst_index.reshape(-1) >= 0
            reads, writes = dst_index.reshape(-1)[written], order.reshape(-1)[written]
            plan = (
                (reads, np.unravel_index(reads, src.shape)),
                (writes, np.unravel_index(writes, dst.shape)),
            )
            if len(self._plans) < 1024:
                self._plans[key] = plan
        (reads, reads_at), (writes, writes_at) = plan
        # flat indices into a contiguous buffer; per-dim ones into a strided view (a slot
        # of an arena), whose flat form would be a copy
        values = src.reshape(-1)[reads] if src.flags.c_contiguous else src[reads_at]
        if dst.flags.c_contiguous:
            dst.reshape(-1)[writes] = values
        else:
            dst[writes_at] = values


def _copy_clipped(
    count: int, extent: Sequence[int], source: _Side, target: _Side, cut: np.ndarray
) -> None:
    """The part of each ``cut`` item's window inside both buffers (see :class:`CutWindows`),
    the items of one clipped extent in one gather and one scatter."""
    src, src_offsets, src_batched = source
    dst, dst_offsets, dst_batched = target
    src_shape = src.shape[1:] if src_batched else src.shape
    dst_shape = dst.shape[1:] if dst_batched else dst.shape
    sizes, src_at, dst_at = [], [], []  # per dim, one value per cut item
    for e, n_src, n_dst, os_, od in zip(
        extent, src_shape, dst_shape, src_offsets, dst_offsets, strict=True
    ):
        s0, d0 = _at_items(os_, count, cut), _at_items(od, count, cut)
        lo = np.maximum(0, np.maximum(-s0, -d0))
        hi = np.minimum(e, np.minimum(n_src - s0, n_dst - d0))
        sizes.append(hi - lo)
        src_at.append(s0 + lo)
        dst_at.append(d0 + lo)
    shape = np.stack(sizes, axis=1)
    valid = (shape > 0).all(axis=1)  # an empty window copies nothing
    if not valid.all():
        shape = shape[valid]
        cut, src_at, dst_at = cut[valid], [a[valid] for a in src_at], [a[valid] for a in dst_at]
    if not cut.size:
        return
    # a few clipped extents (the last block of a row, of a column, both), in item order
    extents, which = np.unique(shape, axis=0, return_inverse=True)
    for g, clipped in enumerate(extents.tolist()):
        chosen = np.flatnonzero(which.reshape(-1) == g)
        items = cut[chosen]
        src_key = tuple(a[chosen] for a in src_at)
        dst_key = tuple(a[chosen] for a in dst_at)
        values = window_views(src, clipped, src_batched, False)[
            (items, *src_key) if src_batched else src_key
        ]
        window_views(dst, clipped, dst_batched, True)[
            (items, *dst_key) if dst_batched else dst_key
        ] = values


def _at_items(offset: Any, count: int, items: np.ndarray) -> np.ndarray:
    """An offset (an int, or an array of one per item or one for all) at ``items``."""
    if not _ndim(offset):
        return np.full(items.size, int(offset), np.intp)
    flat = np.asarray(offset).reshape(-1)
    return flat[items] if flat.size == count else np.full(items.size, int(flat[0]), np.intp)


def copy_cut_items(
    single: Kernel, args: Sequence[Any], batched: Sequence[bool], items: np.ndarray
) -> None:
    """``single`` (an op's kernel for one item) on the ``items`` of a flat batch, in order:
    the items :func:`copy_whole_windows` left, whose windows are cut."""
    for t in items:
        single(*[a[t] if m else a for a, m in zip(args, batched, strict=True)])
