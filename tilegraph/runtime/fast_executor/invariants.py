"""Loop-invariant loads of a device loop's kernels: run on the loop's first step only.

A kernel launched on every step of a device loop (``tile.loop_launches``) often reads an
operand that no step writes — an LSTM's recurrent weight ``R``, a constant in GM — and
moves it GM -> L1 -> L0B on every step, as the IR states. The bytes those moves leave are
the same every step, so the fast executor keeps them instead
(:func:`find_invariants` says which; :func:`entry` / :class:`Entry` run them):

* a *frozen* array is one whose bytes cannot change: not writeable, nor any array it is a
  view of (``tile.constant`` data is such an array, :class:`~tilegraph.dialects.graph.dense.
  ArrayBlob`); a held buffer is frozen once its load has run;
* an *invariant load* is a ``tile.copy`` / ``nd2nz`` / ``load2d`` / ``load3d``
  (:data:`INVARIANT_OPS`, whose destination is a function of what they read) into a local
  buffer (``tile.alloc``, used by tile ops only, none of them making a view of it) that
  it alone writes, reading only function arguments, other
  invariant loads' buffers and index values computed from constants, the block's index and
  loop variables of such loops; every loop around it has such bounds;
* in a function launched inside a device loop, the invariant loads' buffers are held per
  (function, the bytes the frozen arguments they read view, block index, block count,
  sub-block) while a device loop runs: the loads run on the first call (then their
  buffers are frozen) and are skipped afterwards. A buffer whose bytes come from an
  argument that is not frozen (the recurrent state) is loaded on every call as usual.
  Everything held is dropped when the outermost device loop ends (:func:`in_device_loop`),
  so nothing outlives the loop that made it.

Forms derived from a frozen array (the row-major unpacking of an ``mmad`` operand,
:func:`derived`) are kept the same way. The results are the bytes the IR's loads would
leave: nothing else changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from tilegraph.dialects import index_arith
from tilegraph.dialects.tile import (
    BlockIdxOp,
    BlockNumOp,
    CopyOp,
    Load2dOp,
    Load3dOp,
    Nd2NzOp,
    SubBlockIdxOp,
    TileOp,
)
from tilegraph.dialects.tile.host import AllocOp

INVARIANT_OPS = (CopyOp, Nd2NzOp, Load2dOp, Load3dOp)
"""Moves whose destination's bytes are a function of the operands they read."""


@dataclass
class Invariants:
    """The invariant loads of one function (module doc)."""

    ops: set[TileOp]
    buffers: dict[SSAValue, int]
    """Each held buffer (a ``tile.alloc`` result) with its index in the held entry."""
    args: list[int]
    """Positions of the function arguments the loads read (the entry's key)."""
    reads: list[tuple[int, ...]]
    """Per held buffer, the arguments (indices into ``args``) its bytes come from: it is
    held when they are all frozen."""


def find_invariants(fn: func.FuncOp, excluded: Iterable[Operation] = ()) -> Invariants | None:
    """The invariant loads of ``fn`` (module doc), but those in ``excluded`` (loads the
    code generator found inside a loop it runs step by step); None when there are none."""
    block = fn.body.block
    out = set(excluded)
    candidates: dict[SSAValue, TileOp] = {}
    for op in fn.walk():
        if isinstance(op, AllocOp):
            users = [u.operation for u in op.result.uses]
            tiles = [u for u in users if isinstance(u, TileOp)]
            writers = [u for u in tiles if _writes(u, op.result)]
            # a view of the buffer (an op with a buffer result) could be written unseen
            aliased = any(isinstance(r.type, MemRefType) for u in users for r in u.results)
            plain = len(tiles) == len(users) and not aliased
            if plain and len(writers) == 1 and writers[0] not in out:
                candidates[op.result] = writers[0]
    index = _IndexValues(block)
    changed = True
    while changed:  # drop the buffers whose load reads something that is not invariant
        changed = False
        for buffer, writer in list(candidates.items()):
            if not _invariant_load(writer, buffer, candidates, index):
                del candidates[buffer]
                changed = True
    if not candidates:
        return None
    ops = set(candidates.values())
    sources: dict[SSAValue, set[int]] = {}

    def sources_of(buffer: SSAValue) -> set[int]:
        if buffer not in sources:
            sources[buffer] = found = set()
            for v in candidates[buffer].operands:
                if isinstance(v, BlockArgument) and v.block is block:
                    found.add(v.index)
                elif v in candidates and v is not buffer:
                    found |= sources_of(v)
        return sources[buffer]

    args = sorted(set().union(*(sources_of(b) for b in candidates)))
    reads = [tuple(args.index(a) for a in sorted(sources_of(b))) for b in candidates]
    buffers = {b: i for i, b in enumerate(candidates)}
    return Invariants(ops, buffers, args, reads)


def _writes(op: TileOp, buffer: SSAValue) -> bool:
    """``op`` writes ``buffer``: its destination, or an operand it does not read (an
    output besides the destination)."""
    return op.written() is buffer or buffer not in op.read()


def _invariant_load(
    op: TileOp, buffer: SSAValue, held: dict[SSAValue, TileOp], index: _IndexValues
) -> bool:
    if not isinstance(op, INVARIANT_OPS) or op.results or op.READS_DESTINATION:
        return False
    for v in op.operands:
        if v is buffer:
            continue
        if isinstance(v.type, MemRefType):
            is_arg = isinstance(v, BlockArgument) and v.block is index.entry
            if not (is_arg or v in held):
                return False
        elif not index.known(v):
            return False
    parent = op.parent_op()
    while isinstance(parent, scf.ForOp):  # loop bounds known from the call alone
        if not all(index.known(b) for b in (parent.lb, parent.ub, parent.step)):
            return False
        parent = parent.parent_op()
    return isinstance(parent, func.FuncOp)


@dataclass
class _IndexValues:
    """Index values known from the call alone: constants, block queries, variables of
    loops with such bounds, and index arithmetic on them."""

    entry: Block
    found: dict[SSAValue, bool] = field(default_factory=dict)

    def known(self, value: SSAValue) -> bool:
        if value not in self.found:
            self.found[value] = False  # a cycle (a loop-carried value) is not known
            self.found[value] = self._known(value)
        return self.found[value]

    def _known(self, value: SSAValue) -> bool:
        if isinstance(value, BlockArgument):
            loop = value.block.parent_op()
            if not isinstance(loop, scf.ForOp) or value.index != 0:
                return False  # a function argument or a loop-carried value
            return all(self.known(b) for b in (loop.lb, loop.ub, loop.step))
        op = value.owner
        assert isinstance(op, Operation)
        if isinstance(op, arith.ConstantOp):
            return index_arith.constant(op) is not None
        if isinstance(op, BlockIdxOp | BlockNumOp | SubBlockIdxOp):
            return True
        if index_arith.semantics(op) is None:
            return False
        return all(self.known(v) for v in op.operands)


# ---- at run time ---------------------------------------------------------------------------


def frozen(array: Any) -> bool:
    """Whether ``array``'s bytes cannot change: a numpy array, not writeable, and every
    array it is a view of neither (a base that is ``bytes`` is immutable too)."""
    while isinstance(array, np.ndarray):
        if array.flags.writeable:
            return False
        array = array.base
    return array is None or isinstance(array, bytes)


class Entry:
    """The held buffers of one (function, key) while a device loop runs (module doc).

    ``held[i]``: buffer ``i``'s arguments are all frozen, so its load runs on the first
    call only (``fresh``) and its bytes are kept; any other buffer is loaded on every
    call into the code generator's usual buffers."""

    def __init__(self, arrays: Sequence[Any], held: Sequence[bool]):
        self.arrays = tuple(arrays)  # kept: the bytes they view are the key
        self.held = tuple(held)
        self.fresh = True
        self.kept: dict[int, np.ndarray] = {}

    def run(self, index: int) -> bool:
        """Whether the load of buffer ``index`` runs in this call."""
        return self.fresh or not self.held[index]

    def buffer(self, index: int, make: Callable[[], tuple[np.ndarray]]) -> np.ndarray:
        """Buffer ``index`` (a ``tile.alloc``; ``make`` is its kernel)."""
        if not self.held[index]:
            return make()[0]
        found = self.kept.get(index)
        if found is None:
            found = self.kept[index] = make()[0]
        return found

    def slots(
        self,
        index: int,
        like: np.ndarray,
        batch: tuple[int, ...],
        usual: Callable[[int, np.ndarray, tuple[int, ...]], np.ndarray],
        ordinal: int,
    ) -> np.ndarray:
        """Buffer ``index`` with a slot per point of a batch (when not held, ``usual(ordinal,
        like, batch)``: the code generator's reused slots)."""
        if not self.held[index]:
            return usual(ordinal, like, batch)
        key = -1 - index
        found = self.kept.get(key)
        if found is None:
            found = self.kept[key] = np.empty((*batch, *like.shape), like.dtype)
        return found

    def freeze(self, index: int, array: np.ndarray) -> None:
        """Buffer ``index`` (``array``) was loaded: read-only from now on, if held."""
        if self.held[index]:
            array.flags.writeable = False


_MOST_ENTRIES = 1024
"""Held entries (and derived forms) at most per outermost device loop: memory bounded
whatever the loop's kernels do."""
_ENTRIES: dict[tuple[Any, ...], Entry] = {}
_DERIVED: dict[tuple[Any, ...], tuple[np.ndarray, Any]] = {}
_LOOPS = [0]  # device loops running


def entry(
    name: str, arrays: Sequence[Any], reads: tuple[tuple[int, ...], ...], *blocks: int
) -> Entry:
    """The entry of a call of the function ``name`` reading ``arrays`` as block
    ``blocks`` (index, count, sub-block), its buffers reading ``reads`` of them; outside a
    device loop, nothing held."""
    frozen_ones = tuple(bool(_LOOPS[0]) and frozen(a) for a in arrays)
    held = held_buffers(reads, frozen_ones)
    if not any(held):
        return Entry((), held)
    kept = [a for a, f in zip(arrays, frozen_ones, strict=True) if f]
    key = (name, frozen_ones, *(_bytes_of(a) for a in kept), *blocks)
    found = _ENTRIES.get(key)
    if found is None:
        if len(_ENTRIES) >= _MOST_ENTRIES:  # a loop that never repeats a key: hold nothing
            return Entry((), [False] * len(held))
        found = _ENTRIES[key] = Entry(kept, held)
    else:
        found.fresh = False
    return found


@lru_cache(maxsize=1024)
def held_buffers(
    reads: tuple[tuple[int, ...], ...], frozen_ones: tuple[bool, ...]
) -> tuple[bool, ...]:
    """Per buffer, whether every argument it reads is frozen: worked out once per
    function's reads and pattern of frozen arguments (a step of a device loop asks the
    same on every call of each kernel)."""
    return tuple(all(frozen_ones[i] for i in r) for r in reads)


def _bytes_of(array: np.ndarray) -> tuple[Any, ...]:
    """The bytes a frozen ``array`` views (a fresh view of the same bytes, made on every
    step, is the same key; the entry keeps the array, so no other takes its address)."""
    where = array.__array_interface__["data"][0]
    return (where, array.shape, array.strides, array.dtype.str)


def derived(source: np.ndarray, role: Any, make: Callable[[], Any]) -> Any | None:
    """``make()`` computed once per frozen ``source`` and ``role`` while a device loop
    runs (kept by the bytes ``source`` views); None when ``source`` is not frozen or no
    device loop runs (the caller computes it as usual)."""
    if not _LOOPS[0] or not frozen(source):
        return None
    key = (role, *_bytes_of(source))
    found = _DERIVED.get(key)
    if found is None:
        if len(_DERIVED) >= _MOST_ENTRIES:
            return None
        found = _DERIVED[key] = (source, make())  # the source kept: its bytes stay
    return found[1]


def in_device_loop(run: Callable[..., Any]) -> Callable[..., Any]:
    """``run`` (a device loop) with held loads; all dropped when the outermost ends."""

    def loop(*args: Any) -> Any:
        _LOOPS[0] += 1
        try:
            return run(*args)
        finally:
            _LOOPS[0] -= 1
            if not _LOOPS[0]:
                _ENTRIES.clear()
                _DERIVED.clear()

    return loop
