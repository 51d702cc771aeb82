"""The pipe-queue checker: is a kernel's synchronisation sufficient?

Each pipe of a core gets its own queue of the instructions the kernel issues to it
(:class:`~tilegraph.lowering.analysis.kernel_walk.KernelWalk`, every block of the launch).
The queues run as far ahead of one another as the flags allow — every pipe runs until it
stalls on a
``wait_flag`` whose event is not raised — which is the most any real timing could let them.
Happens-before is tracked with vector clocks: ``set_flag`` publishes its pipe's clock,
``wait_flag`` takes it in. The checker raises :class:`SyncError`, naming the kernel, the ops
and the buffer, when

* an op reads or overwrites a buffer (slot) whose last writer on another pipe it has not
  waited for, or overwrites data a reader on another pipe may still be reading;
* a vector op reads the result of an earlier one with no ``pipe_barrier`` V between them;
* an event is raised again before it was awaited (events are single flags);
* the pipes deadlock (a wait whose event is never raised), or an event is still raised when
  the kernel ends.

``check_sync(module)`` checks every tiled kernel; ``check_kernel(fn, blocks)`` one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.tile import LaunchOp, PipeBarrierOp, SetFlagOp, TileOp, WaitFlagOp
from tilegraph.dialects.tile.sync import PIPES, FlagOp
from tilegraph.lowering.analysis.buffers import accesses, may_alias
from tilegraph.lowering.analysis.kernel_attrs import TILES_ATTR
from tilegraph.lowering.analysis.kernel_walk import KernelWalk


class SyncError(AssertionError):
    """The synchronisation of a kernel is insufficient (the message says where)."""


@dataclass(frozen=True)
class _Issued:
    op: TileOp
    slots: tuple[tuple[SSAValue, int], ...]
    """(buffer, slot) of each buffer access, reads then writes."""
    reads: int
    """How many of ``slots`` are reads."""
    event: int = -1


@dataclass
class _Access:
    pipe: str
    stamp: int
    epoch: int
    op: TileOp


@dataclass
class _State:
    clocks: dict[str, dict[str, int]] = field(
        default_factory=lambda: {p: dict.fromkeys(PIPES, 0) for p in PIPES}
    )
    epochs: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PIPES, 0))
    flags: dict[tuple[str, str, int], dict[str, int]] = field(default_factory=dict)
    writes: dict[tuple[SSAValue, int], _Access] = field(default_factory=dict)
    reads: dict[tuple[SSAValue, int], list[_Access]] = field(default_factory=dict)


def trace_kernel(
    fn: func.FuncOp, block: int = 0, blocks: int = 1, max_trips: int | None = None
) -> list[_Issued]:
    """The instructions block ``block`` of ``blocks`` issues, in program order, with the
    buffer slots they touch and the events their flags name."""
    issued: list[_Issued] = []
    walk = KernelWalk(fn, block, blocks, max_trips)
    accessed: dict[TileOp, tuple[tuple[SSAValue, ...], tuple[SSAValue, ...]]] = {}
    for op in walk:
        if isinstance(op, FlagOp):
            event = op.event_id + (walk.value(op.slot) if op.slot is not None else 0)
            issued.append(_Issued(op, (), 0, event))
            continue
        found = accessed.get(op)
        if found is None:
            found = accessed[op] = accesses(op)
        reads, writes = found
        slots = tuple((b, walk.slot(b)) for b in (*reads, *writes))
        issued.append(_Issued(op, slots, len(reads)))
    return issued


def _queues(trace: list[_Issued], ignore: Collection[Operation]) -> dict[str, deque[_Issued]]:
    """Each pipe's queue; a barrier across all pipes goes into every queue."""
    queues: dict[str, deque[_Issued]] = {p: deque() for p in PIPES}
    for issued in trace:
        if issued.op in ignore:
            continue
        if isinstance(issued.op, PipeBarrierOp) and issued.op.all_pipes:
            for queue in queues.values():
                queue.append(issued)
        else:
            queues[issued.op.pipe()].append(issued)
    return queues


def _describe(op: TileOp) -> str:
    text = str(op).split("\n")[0]
    return text if len(text) <= 140 else text[:137] + "..."


class _Checker:
    def __init__(self, fn: func.FuncOp, aliases: dict[SSAValue, list[SSAValue]]):
        self.name = fn.sym_name.data
        self.state = _State()
        self.aliases = aliases

    def fail(self, message: str) -> SyncError:
        return SyncError(f"@{self.name}: {message}")

    def ordered(self, pipe: str, earlier: _Access, reads_result: bool) -> bool:
        """Whether an access on ``pipe`` now comes after ``earlier``. ``reads_result``:
        it reads what ``earlier`` wrote."""
        if earlier.pipe == pipe:
            # In order on one pipe, except that a vector op may start before the one
            # before it has written its result (without a barrier between them).
            return not (pipe == "V" and reads_result) or self.state.epochs["V"] > earlier.epoch
        return self.state.clocks[pipe][earlier.pipe] >= earlier.stamp

    def access(self, pipe: str, issued: _Issued, stamp: int) -> None:
        state = self.state
        now = _Access(pipe, stamp, state.epochs[pipe], issued.op)
        for n, (buffer, slot) in enumerate(issued.slots):
            writing = n >= issued.reads
            for other in self.aliases.get(buffer, [buffer]):
                key = (other, slot)
                last = state.writes.get(key)
                if last is not None and not self.ordered(pipe, last, not writing):
                    raise self.fail(
                        f"'{issued.op.name}' on {pipe} "
                        f"{'overwrites' if writing else 'reads'} {_name(buffer)} (slot {slot}) "
                        f"written by '{last.op.name}' on {last.pipe} without waiting for it\n"
                        f"  consumer: {_describe(issued.op)}\n  producer: {_describe(last.op)}"
                    )
                if writing:
                    for reader in state.reads.get(key, []):
                        if not self.ordered(pipe, reader, False):
                            raise self.fail(
                                f"'{issued.op.name}' on {pipe} overwrites {_name(buffer)} "
                                f"(slot {slot}) while '{reader.op.name}' on {reader.pipe} may "
                                f"still read it\n  writer: {_describe(issued.op)}\n"
                                f"  reader: {_describe(reader.op)}"
                            )
            key = (buffer, slot)
            if writing:
                state.writes[key] = now
                state.reads[key] = []
            else:
                state.reads.setdefault(key, []).append(now)

    def join_all(self) -> None:
        """A barrier across all pipes: afterwards each pipe has seen everything before it."""
        clocks = self.state.clocks
        joined = {p: max(c[p] for c in clocks.values()) for p in PIPES}
        for pipe in PIPES:
            clocks[pipe] = dict(joined)
            self.state.epochs[pipe] += 1

    def run(self, queues: dict[str, deque[_Issued]]) -> None:
        state = self.state
        while any(queues.values()):
            progressed = False
            for pipe, queue in queues.items():
                while queue:
                    issued = queue[0]
                    op = issued.op
                    if isinstance(op, PipeBarrierOp) and op.all_pipes:
                        if any(not q or q[0] is not issued for q in queues.values()):
                            break  # every pipe must reach it
                        self.join_all()
                        for q in queues.values():
                            q.popleft()
                        progressed = True
                        continue
                    if isinstance(op, WaitFlagOp):
                        key = (*op.pair, issued.event)
                        published = state.flags.pop(key, None)
                        if published is None:
                            break  # stalls until the event is raised
                        mine = state.clocks[pipe]
                        for p, t in published.items():
                            mine[p] = max(mine[p], t)
                    queue.popleft()
                    progressed = True
                    clock = state.clocks[pipe]
                    clock[pipe] += 1
                    if isinstance(op, SetFlagOp):
                        key = (*op.pair, issued.event)
                        if key in state.flags:
                            raise self.fail(
                                f"event {issued.event} of {op.pair[0]} -> {op.pair[1]} raised "
                                "again before it was awaited"
                            )
                        state.flags[key] = dict(clock)
                    elif isinstance(op, PipeBarrierOp):
                        state.epochs[pipe] += 1
                    else:
                        self.access(pipe, issued, clock[pipe])
            if not progressed:
                stuck = {p: q[0].op for p, q in queues.items() if q}
                raise self.fail(
                    "deadlock: "
                    + "; ".join(f"{p} waits at {_describe(op)}" for p, op in stuck.items())
                )
        if state.flags:
            left = ", ".join(f"{s} -> {d} event {e}" for s, d, e in state.flags)
            raise self.fail(f"events raised but never awaited: {left}")


def _name(buffer: SSAValue) -> str:
    return f"%{buffer.name_hint}" if buffer.name_hint else "a buffer"


def kernel_aliases(fn: func.FuncOp) -> dict[SSAValue, list[SSAValue]]:
    buffers: list[SSAValue] = []
    for op in fn.walk():
        if isinstance(op, TileOp):
            reads, writes = accesses(op)
            for b in (*reads, *writes):
                if b not in buffers:
                    buffers.append(b)
    return {b: [o for o in buffers if may_alias(b, o)] for b in buffers}


def check_kernel(
    fn: func.FuncOp,
    blocks: int = 1,
    max_trips: int | None = None,
) -> None:
    """Check every block of one kernel launch; raises :class:`SyncError`. ``max_trips``
    shortens every loop (see :class:`KernelWalk`)."""
    aliases = kernel_aliases(fn)
    for block in range(blocks):
        check_trace(fn, trace_kernel(fn, block, blocks, max_trips), aliases)


def check_trace(
    fn: func.FuncOp,
    trace: list[_Issued],
    aliases: dict[SSAValue, list[SSAValue]],
    ignore: Collection[Operation] = (),
) -> None:
    """Check one block's trace (:func:`trace_kernel`) as if the ops in ``ignore`` were
    removed (``inject-sync`` asks whether a flag is implied by the others)."""
    _Checker(fn, aliases).run(_queues(trace, ignore))


def launch_blocks(module: ModuleOp) -> dict[str, int]:
    """Kernel name -> the most blocks a launch of it runs."""
    blocks: dict[str, int] = {}
    for op in module.walk():
        if isinstance(op, LaunchOp):
            name = op.callee.string_value()
            blocks[name] = max(blocks.get(name, 1), op.block_count)
    return blocks


def check_sync(module: ModuleOp) -> int:
    """Check every tiled kernel of ``module`` with the blocks its launches run; returns
    how many kernels were checked."""
    blocks = launch_blocks(module)
    checked = 0
    for fn in module.ops:
        if isinstance(fn, func.FuncOp) and TILES_ATTR in fn.attributes:
            check_kernel(fn, blocks.get(fn.sym_name.data, 1))
            checked += 1
    return checked
