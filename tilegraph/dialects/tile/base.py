"""Shared machinery of ``tile`` ops: scoped buffers, pipes, costs and executable semantics.

Buffers are builtin memrefs whose memory space is a string naming the scope::

    memref<1x4x8x56x16xf32, "GM">     global memory (a kernel argument or a host allocation)
    memref<4x8x16x16xf32, "L0A">      the cube's left-operand buffer

Every ``tile`` op class declares, on the class:

* ``PIPE``: the pipe it runs on (MTE1, MTE2, MTE3, M, V, FIX, S) — or :meth:`TileOp.pipe`
  when it depends on the operands' scopes (DMA);
* :meth:`TileOp.cost`: cycles on one core of a :class:`~tilegraph.hardware.HardwareModel`;
* :meth:`TileOp.kernel`: its numpy semantics as a closure over the op's attributes, called
  with the runtime values of the operands (numpy arrays for memrefs, ints for indices).
  The xDSL interpreter calls these closures tile by tile; the fast executor calls them
  too, or, for loops it runs as one batch, the op's :meth:`TileOp.batched_kernel` /
  :meth:`TileOp.nest_kernel`, which must compute what the closure computes tile by tile
  (tests/runtime/test_batching.py holds each to that).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import prod
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import MemRefType, NoneAttr, StringAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.utils.exceptions import VerifyException

from tilegraph.hardware import HardwareModel
from tilegraph.target import target_of

SCOPES = ("GM", "L1", "L0A", "L0B", "L0C", "UB")
ON_CHIP = frozenset(SCOPES[1:])

Kernel = Callable[..., Any]
"""Executable semantics of one op: runtime operand values in, tuple of result values out."""


def scoped_memref(shape: Sequence[int], element_type: Attribute, scope: str) -> MemRefType:
    """``memref<shape x element_type, "scope">``."""
    if scope not in SCOPES:
        raise ValueError(f"unknown memory scope {scope!r}; scopes are {', '.join(SCOPES)}")
    return MemRefType(element_type, list(shape), NoneAttr(), StringAttr(scope))


def scope_of(value_or_type: SSAValue | Attribute) -> str:
    """The scope a memref lives in (a memref without one is GM)."""
    t = value_or_type.type if isinstance(value_or_type, SSAValue) else value_or_type
    if not isinstance(t, MemRefType):
        raise VerifyException(f"expected a memref, got {t}")
    space = t.memory_space
    if isinstance(space, StringAttr):
        return space.data
    return "GM"


def memref_shape(value: SSAValue | Attribute) -> tuple[int, ...]:
    t = value.type if isinstance(value, SSAValue) else value
    assert isinstance(t, MemRefType)
    return tuple(int(d) for d in t.get_shape())


def memref_element(value: SSAValue) -> Attribute:
    t = value.type
    assert isinstance(t, MemRefType)
    return t.element_type


def element_bytes(element_type: Attribute) -> int:
    width = getattr(element_type, "bitwidth", None)
    if width is None:
        width = getattr(element_type, "width", None)
        width = width.data if width is not None else 32
    return max(1, int(width) // 8)


def buffer_bytes(value: SSAValue | Attribute) -> int:
    t = value.type if isinstance(value, SSAValue) else value
    assert isinstance(t, MemRefType)
    return prod(memref_shape(t)) * element_bytes(t.element_type)


def module_preset(op: Operation) -> HardwareModel:
    """The hardware preset an op is compiled for: the platform of the module's
    ``tilegraph.target`` (:func:`tilegraph.target.target_of`), else the default preset.
    ``op`` may be the module itself."""
    return target_of(op).hw


def require_scope(op: Operation, value: SSAValue, allowed: Sequence[str], role: str) -> str:
    scope = scope_of(value)
    if scope not in allowed:
        raise VerifyException(
            f"'{op.name}': {role} must be in {' or '.join(allowed)}, but it is in {scope}"
        )
    return scope


class TileOp(IRDLOperation):
    """Base class of ``tile`` ops (not an op itself); see the module docstring."""

    PIPE: ClassVar[str] = "S"
    READS_DESTINATION: ClassVar[bool] = False
    """The op reads its destination too (``mmad`` accumulating into L0C)."""

    def pipe(self) -> str:
        return self.PIPE

    def cost(self, hw: HardwareModel) -> int:
        """Cycles this op occupies its pipe on one core of ``hw``."""
        return 1

    def kernel(self) -> Kernel:
        raise NotImplementedError(f"{self.name} has no executable semantics")

    def written(self) -> SSAValue | None:
        """The buffer this op writes (its destination), if any."""
        dst = getattr(self, "dst", None)
        return dst if isinstance(dst, SSAValue) else None

    def read(self) -> tuple[SSAValue, ...]:
        """The buffers this op reads: its memref operands but the one it writes (unless it
        reads that too)."""
        written = self.written()
        return tuple(
            v
            for v in self.operands
            if isinstance(v.type, MemRefType) and (v is not written or self.READS_DESTINATION)
        )

    def batched_kernel(self, batched: Sequence[bool]) -> Kernel | None:
        """Semantics over a batch of tiles at once, for executors that run the iterations
        of a parallel loop together: ``batched[i]`` says that operand ``i`` carries a
        leading batch dim (a buffer) or is an array of per-iteration values (an index).
        None: no batched form (the executor then runs the tiles one by one)."""
        return None

    def nest_kernel(self, batched: Sequence[bool], rank: int, summed: int | None) -> Kernel | None:
        """Semantics over the batch of a nest of loops (:mod:`tilegraph.runtime.batching`):
        operand ``i`` carries ``rank`` leading batch dims when ``batched[i]`` (size 1 along
        the axes it does not vary on; they broadcast), else none; ``summed``: the
        accumulation axis, for an op that sums along it. None: the executor flattens the
        batch for :meth:`batched_kernel`."""
        return None

    def moved_bytes(self) -> int:
        """Bytes this op moves (DMA ops) or touches (others); used by reports."""
        return 0

    def gm_burst_bytes(self) -> int | None:
        """Bytes of each contiguous run of GM this op reads or writes, for the rate of the
        transfer (:meth:`HardwareModel.gm_efficiency`); None: no GM access, or one run."""
        return None


def contiguous_run(window: Sequence[int], full: Sequence[int], element_bytes: int) -> int:
    """Bytes of the contiguous runs a ``window`` of a row-major ``full`` buffer is made
    of: the innermost window dims, up to and including the first that does not span
    its buffer dim."""
    run = element_bytes
    for extent, whole in zip(reversed(window), reversed(full), strict=False):
        run *= min(extent, whole)
        if extent < whole:
            break
    return run


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
    """
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
    """:func:`window` for a batch of ``count`` items at once: item ``t`` copies an
    ``extent`` window from ``src`` (item ``t`` of it when ``src_batched``) at its offsets
    into ``dst`` likewise; an offset is an int or an array of one per item. Copies (with
    the cast to ``dst``'s type) every item whose window lies wholly inside both buffers, in
    one gather and one scatter, and returns the others' indices: their windows are cut
    (ragged tails, halos), which is for the caller to do item by item."""
    src_shape = src.shape[1:] if src_batched else src.shape
    dst_shape = dst.shape[1:] if dst_batched else dst.shape
    merged = _merged_tail(
        extent, src, src_shape, src_offsets, src_batched, dst, dst_shape, dst_offsets, dst_batched
    )
    if merged is not None:
        extent, src, src_offsets, dst, dst_offsets = merged
        src_shape = src.shape[1:] if src_batched else src.shape
        dst_shape = dst.shape[1:] if dst_batched else dst.shape
    whole = np.ones(count, bool)
    for e, n_dst, n_src, od, os_ in zip(
        extent, dst_shape, src_shape, dst_offsets, src_offsets, strict=True
    ):
        whole &= (od >= 0) & (od + e <= n_dst) & (os_ >= 0) & (os_ + e <= n_src)
    items: Any = np.flatnonzero(whole)
    if count <= _FEW_WINDOWS and prod(extent) >= _LARGE_WINDOW:  # one slice copy each
        src_at = _per_item_slices(src_offsets, extent, count)
        dst_at = _per_item_slices(dst_offsets, extent, count)
        for t in items.tolist():
            target = dst[t] if dst_batched else dst
            target[dst_at[t]] = (src[t] if src_batched else src)[src_at[t]]
        return np.flatnonzero(~whole)
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
    return np.flatnonzero(~whole)


_FEW_WINDOWS, _LARGE_WINDOW = 64, 8192
"""Up to this many windows of at least this many elements, copying item by item beats one
gather (numpy's gather moves its inner dim one call at a time, a slice copy whole runs;
the loop costs a few microseconds an item)."""


def _per_item_slices(
    offsets: Sequence[Any], extent: Sequence[int], count: int
) -> list[tuple[slice, ...]]:
    """Each item's window as slices (offsets: ints, or arrays of one per item)."""
    columns = [np.broadcast_to(o, (count,)).tolist() for o in offsets]
    return [
        tuple(slice(o, o + e) for o, e in zip(starts, extent, strict=True))
        for starts in zip(*columns, strict=True)
    ]


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
        if e != n_src or e != n_dst or np.ndim(os_) or np.ndim(od) or os_ or od:
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
    if all(np.ndim(o) == 0 for o in offsets):
        at = tuple(slice(o, o + e) for o, e in zip(offsets, extent, strict=True))
        return buffer, (items, *at) if batched else at, not batched
    views = np.lib.stride_tricks.sliding_window_view(
        buffer, tuple(extent), axis=tuple(range(batched, buffer.ndim)), writeable=writeable
    )
    if isinstance(items, slice):  # advanced indices pair up item by item
        items = np.arange(np.shape(next(o for o in offsets if np.ndim(o)))[0])
    at = tuple(np.asarray(o)[items] if np.ndim(o) else o for o in offsets)
    return views, (items, *at) if batched else at, False


def copy_cut_items(
    single: Kernel, args: Sequence[Any], batched: Sequence[bool], items: np.ndarray
) -> None:
    """``single`` (an op's kernel for one item) on the ``items`` of a flat batch, in order:
    the items :func:`copy_whole_windows` left, whose windows are cut."""
    for t in items:
        single(*[a[t] if m else a for a, m in zip(args, batched, strict=True)])


_SCRATCH: dict[str, np.ndarray] = {}


def scratch(role: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A reused temporary for kernels (contents undefined), one per ``role``: a view into
    bytes kept from call to call and grown to the largest request. A large temporary
    allocated afresh on every call costs more in page faults than the arithmetic it holds.
    The array of a role is valid until the next request for that role; the bytes are the
    process's, so two executors must not run kernels at the same time in two threads."""
    dtype = np.dtype(dtype)
    size = prod(shape) * dtype.itemsize
    pool = _SCRATCH.get(role)
    if pool is None or pool.nbytes < size:
        pool = _SCRATCH[role] = np.empty(max(size, 64), np.uint8)
    return pool[:size].view(dtype).reshape(shape)


def verify_same_rank(op: Operation, a: SSAValue, b: SSAValue, what: str) -> None:
    ra, rb = len(memref_shape(a)), len(memref_shape(b))
    if ra != rb:
        raise VerifyException(f"'{op.name}': {what} have ranks {ra} and {rb}; they must match")
