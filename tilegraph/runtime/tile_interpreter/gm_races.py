"""The interpreter's check of what the cores of one launch hand to one another through GM:
a read or write of GM that another core (another group's, or an AIC / AIV of its own
group) wrote (or read) with nothing ordering the two is an error, not a schedule's luck.

The interpreter runs the core groups of a launch interleaved
(:class:`~.cross_core.MixRun`), one schedule among the many the chip may take: a kernel
whose blocks exchange data through GM (a recurrent layer over the cores) may give the
right numbers under it even without the all-core barrier it needs. So, while such a run
goes, :class:`GmRaces` keeps a vector clock per part (an AIC or AIV of a group, or a
block): a cross-core flag carries the setter's clock to the waiter, an all-core barrier
joins the clocks of every part it synchronises. Each access of a tracked GM argument is
stamped per element with its part and that part's clock; an access by *another* part
that does not happen after the stamp (its clock has not seen it) is a race, reported as a
:class:`RaceError` (a :class:`~.cross_core.CrossCoreError`) naming the kernel, the
buffer, both parts and the op. Parts of one group count too: two AIVs of a group have no
flag between them (a part that cannot tell them apart, run on both, rewrites in place
what its twin has yet to read), and an AIC and its AIVs are ordered by their flags only.

Tracked are the GM arguments the kernel both reads and writes, where data can pass from
one block to another (a mix kernel's workspace, each group's own region, is left out:
:func:`tilegraph.lowering.analysis.barrier_check.exchanged_arguments`, which its caller
passes), each accessed
through an op that says its window (:meth:`~tilegraph.dialects.tile.base.TileOp.gm_window`,
``tile.copy_flat``'s run), else the whole buffer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.ir import BlockArgument

from tilegraph.dialects.tile import CopyFlatOp, TileOp, scope_of
from tilegraph.lowering.analysis.barrier_check import exchanged_arguments
from tilegraph.lowering.analysis.buffers import accesses
from tilegraph.runtime.tile_interpreter.cross_core import CrossCoreError


class RaceError(CrossCoreError):
    """Two cores of a launch touch the same GM elements unordered (the message says
    which)."""


@dataclass(frozen=True)
class _Operand:
    index: int
    """The op's operand holding the buffer."""
    argument: int
    """Its position among the kernel's arguments."""
    writes: bool
    offsets: tuple[int, ...] | None
    """Operand indices of its window's offsets (None: the whole buffer)."""
    extent: tuple[int, ...] | None
    flat: bool
    """``tile.copy_flat``: one offset into the flattened buffer, ``extent`` its count."""


def _kernel(op: TileOp) -> func.FuncOp | None:
    fn = op.parent_op()
    while fn is not None and not isinstance(fn, func.FuncOp):
        fn = fn.parent_op()
    return fn


class _Shadow:
    """Per element of one GM buffer: its last writer (part, clock) and the clock of each
    part's last read since."""

    def __init__(self, array: np.ndarray, parts: int):
        self.size = array.size
        self.grid = np.arange(array.size).reshape(array.shape)
        self.writer = np.full(array.size, -1, np.int64)
        self.written = np.zeros(array.size, np.int64)
        self.reads = np.zeros((parts, array.size), np.int32)


class GmRaces:
    """The vector clocks of a launch's parts and the shadows of its tracked GM buffers."""

    def __init__(self, names: Sequence[str], tracked: frozenset[int]):
        self.tracked = tracked
        """Positions of the kernel arguments checked (the same in a mix kernel's parts)."""
        self.names = list(names)
        """Each part's label in messages ("group 1 AIC", "block 2")."""
        n = len(self.names)
        self.clocks = [np.eye(n, dtype=np.int64)[i] for i in range(n)]
        self.carried: dict[Any, list[np.ndarray]] = {}
        self.barriers: dict[tuple[str, int], np.ndarray] = {}
        self.shadows: dict[int, _Shadow] = {}
        self._plans: dict[int, tuple[_Operand, ...]] = {}

    # ---- happens-before ------------------------------------------------------------------
    def release(self, part: int, keys: Sequence[Any]) -> None:
        """``part`` sets a flag reaching the counters ``keys``: each carries its clock."""
        for key in keys:
            self.carried.setdefault(key, []).append(self.clocks[part].copy())
        self.clocks[part][part] += 1

    def acquire(self, part: int, keys: Sequence[Any]) -> None:
        """``part``'s wait took one set from each counter of ``keys``."""
        for key in keys:
            pending = self.carried.get(key)
            if pending:
                np.maximum(self.clocks[part], pending.pop(0), out=self.clocks[part])

    def arrive(self, part: int, cores: str, count: int) -> None:
        """``part`` arrives at its ``count``-th barrier over ``cores``."""
        key = (cores, count)
        joined = self.barriers.get(key)
        clock = self.clocks[part]
        self.barriers[key] = clock.copy() if joined is None else np.maximum(joined, clock)
        clock[part] += 1

    def depart(self, part: int, cores: str, count: int) -> None:
        """Every participant has arrived: ``part`` has seen what all did before it."""
        np.maximum(self.clocks[part], self.barriers[(cores, count)], out=self.clocks[part])

    # ---- accesses ------------------------------------------------------------------------
    def _plan(self, op: TileOp) -> tuple[_Operand, ...]:
        found = self._plans.get(id(op))
        if found is not None:
            return found
        fn = _kernel(op)
        plan: list[_Operand] = []
        if fn is not None and fn.body.blocks and self.tracked:
            tracked = self.tracked
            reads, writes = accesses(op)
            entry = fn.body.block
            gm = [v for v in (*reads, *writes) if scope_of(v) == "GM"]
            for writing, values in ((False, reads), (True, writes)):
                for value in values:
                    if not (
                        isinstance(value, BlockArgument)
                        and value.block is entry
                        and value.index in tracked
                    ):
                        continue
                    index = next(i for i, v in enumerate(op.operands) if v is value)
                    plan.append(_window_of(op, index, value.index, writing, len(gm) == 1))
        self._plans[id(op)] = result = tuple(plan)
        return result

    def access(self, part: int, op: TileOp, args: Sequence[Any]) -> None:
        """Check and record ``op``'s accesses of the tracked GM buffers (``args``: its
        operands' values)."""
        for operand in self._plan(op):
            array = args[operand.index]
            if not isinstance(array, np.ndarray):
                continue
            shadow = self.shadows.get(id(array))
            if shadow is None or shadow.size != array.size:
                shadow = self.shadows[id(array)] = _Shadow(array, len(self.names))
            where = _elements(shadow, operand, args)
            if where.size:
                self._check(part, op, operand, shadow, where)

    def _check(
        self, part: int, op: TileOp, operand: _Operand, shadow: _Shadow, where: np.ndarray
    ) -> None:
        clock = self.clocks[part]
        writers = shadow.writer[where]
        for other in np.unique(writers[writers >= 0]):
            if other == part:
                continue
            stamps = shadow.written[where][writers == other]
            if stamps.max() > clock[other]:
                self._fail(
                    op, operand, other, part, "writes", "overwrites" if operand.writes else "reads"
                )
        if operand.writes:
            for other in range(len(self.names)):
                if other == part:
                    continue
                read = shadow.reads[other, where]
                if read.max(initial=0) > clock[other]:
                    self._fail(op, operand, other, part, "reads", "overwrites")
            shadow.writer[where] = part
            shadow.written[where] = clock[part]
            shadow.reads[:, where] = 0
        else:
            shadow.reads[part, where] = clock[part]

    def _fail(
        self, op: TileOp, operand: _Operand, earlier: int, later: int, did: str, does: str
    ) -> None:
        fn = _kernel(op)
        name = fn.sym_name.data if fn is not None else "?"
        buffer = op.operands[operand.index]
        label = f"%{buffer.name_hint}" if buffer.name_hint else f"argument #{operand.argument}"
        text = str(op).split("\n")[0]
        raise RaceError(
            f"@{name}: {self.names[later]} {does} GM {label}, which {self.names[earlier]} "
            f"{did}, with no all-core barrier (tile.sync_all) or flag between them: {text}"
        )


def _window_of(op: TileOp, index: int, argument: int, writes: bool, only_gm: bool) -> _Operand:
    """Where in its buffer ``op`` reaches operand ``index``: its GM window when the op has
    one GM buffer and states it, else the whole buffer."""
    if only_gm and isinstance(op, CopyFlatOp):
        at = index + 1  # copy_flat's operands: src, its offset, dst, its offset
        return _Operand(index, argument, writes, (at,), (op.count.value.data,), True)
    extent = op.gm_window() if only_gm else None
    offsets = op.gm_offsets() if extent is not None else ()
    if extent is None or len(offsets) != len(extent):
        return _Operand(index, argument, writes, None, None, False)
    positions = tuple(next(i for i, v in enumerate(op.operands) if v is o) for o in offsets)
    return _Operand(index, argument, writes, positions, tuple(extent), False)


def _elements(shadow: _Shadow, operand: _Operand, args: Sequence[Any]) -> np.ndarray:
    """Flat indices of the elements the access touches (cut at the buffer's end)."""
    if operand.offsets is None or operand.extent is None:
        return shadow.grid.ravel()
    starts = [int(args[i]) for i in operand.offsets]
    if operand.flat:
        start = max(0, starts[0])
        return np.arange(start, min(shadow.size, start + operand.extent[0]))
    if len(starts) != shadow.grid.ndim:
        return shadow.grid.ravel()
    window = tuple(
        slice(max(0, s), max(0, s + e)) for s, e in zip(starts, operand.extent, strict=True)
    )
    return shadow.grid[window].ravel()


def launch_races(
    functions: Sequence[func.FuncOp], parts: Sequence[str], mix: bool
) -> GmRaces | None:
    """The check of a launch of the kernel ``functions`` (a mix kernel's two parts) whose
    ``parts`` are the labels of its cores ("group 1 AIV0"); None when the launch runs one
    core or its kernel exchanges nothing through GM."""
    if len(parts) < 2:
        return None
    tracked = exchanged_arguments(functions, mix)
    if not tracked:
        return None
    return GmRaces(parts, tracked)
