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

A mix kernel (decoupled presets) is checked part by part (its cross-core flags left out)
and, by :func:`check_mix`, as a whole: each core of a group (the AIC and its ``r`` AIVs,
``aiv0``, ``aiv1``, ..., each AIV with its own UB) with its own pipe queues, the cross-core
flags (``tile.sync_block_set`` / ``wait``) ordering them in Ascend C's mode 2 — an AIC set
reaches every AIV of the group, an AIC wait takes a set from each AIV; counters per
(receiving core, flag id, sending core), at most 16 pending sets — and the GM workspace
accessed slot by slot from all cores (the other GM buffers, like a block's, are each
instance's own part). A removed cross-core flag shows as a workspace slot read before it
is written or overwritten while being read, a deadlock, or a flag left set.

``check_sync(module)`` checks every tiled kernel, and every launch of several blocks
across its blocks (:mod:`.barrier_check`: a missing all-core barrier between one block's
GM write and another's read); ``check_kernel(fn, blocks)`` one kernel.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from math import prod
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.tile import (
    CopyFlatOp,
    LaunchOp,
    PipeBarrierOp,
    SetFlagOp,
    TileOp,
    WaitFlagOp,
    memref_shape,
)
from tilegraph.dialects.tile.barrier import SyncAllOp
from tilegraph.dialects.tile.cross_core import (
    CROSS_CORE_MAX_PENDING,
    CrossCoreOp,
    SyncBlockSetOp,
)
from tilegraph.dialects.tile.sync import PIPES, FlagOp
from tilegraph.lowering.analysis.barrier_check import check_blocks
from tilegraph.lowering.analysis.buffers import accesses, may_alias
from tilegraph.lowering.analysis.kernel_attrs import TILES_ATTR
from tilegraph.lowering.analysis.kernel_walk import KernelWalk, WalkPlan
from tilegraph.lowering.analysis.sync_error import SyncError

Slot = int | tuple[str, int]
"""A buffer's slot; in a joint check of a mix kernel, the issuing core's own buffers are
keyed (core, slot), so that the AIVs of a group (one function, UBs of their own) meet only
in the workspace."""


@dataclass(frozen=True)
class _Issued:
    op: TileOp
    slots: tuple[tuple[SSAValue, Slot], ...]
    """(buffer, slot) of each buffer access, reads then writes."""
    reads: int
    """How many of ``slots`` are reads."""
    event: int = -1
    core: str = ""
    """The core of a mix kernel's part ("aic" / "aiv"); "" for a kernel checked alone."""

    @property
    def queue(self) -> str:
        """The queue it goes to: its pipe, qualified by its core in a joint check."""
        return _qualified(self.core, self.op.pipe())


def _qualified(core: str, pipe: str) -> str:
    return f"{core}.{pipe}" if core else pipe


def _core_of(queue: str) -> str:
    return queue.split(".")[0] if "." in queue else ""


@dataclass
class _Access:
    pipe: str
    stamp: int
    epoch: int
    op: TileOp


@dataclass
class _State:
    pipes: tuple[str, ...] = PIPES
    """The queues: the pipes, or each core's pipes in a joint check of a mix kernel."""
    clocks: dict[str, dict[str, int]] = field(default_factory=dict)
    epochs: dict[str, int] = field(default_factory=dict)
    flags: dict[tuple[str, str, int], dict[str, int]] = field(default_factory=dict)
    cross: dict[tuple[str, int, str], list[dict[str, int]]] = field(default_factory=dict)
    """Cross-core flags: (receiving core, flag id, sending core) -> the clocks its pending
    sets publish."""
    writes: dict[tuple[SSAValue, Slot], _Access] = field(default_factory=dict)
    reads: dict[tuple[SSAValue, Slot], list[_Access]] = field(default_factory=dict)
    aivs: tuple[str, ...] = ("aiv",)
    """The AIV cores of a mix kernel's group (the cross-core flags' other ends)."""

    def __post_init__(self) -> None:
        self.clocks = {p: dict.fromkeys(self.pipes, 0) for p in self.pipes}
        self.epochs = dict.fromkeys(self.pipes, 0)


def trace_kernel(
    fn: func.FuncOp,
    block: int = 0,
    blocks: int = 1,
    max_trips: int | None = None,
    sub_block: int = 0,
    plan: WalkPlan | None = None,
) -> list[_Issued]:
    """The instructions block ``block`` of ``blocks`` (sub-block ``sub_block`` of a mix
    kernel's AIV) issues, in program order, with the buffer slots they touch and the events
    their flags name. ``plan``: ``fn``'s walk plan, shared by the traces of its blocks."""
    walk = KernelWalk(fn, block, blocks, max_trips, sub_block, plan)
    return [
        _Issued(op, (), 0, event)
        if event is not None
        else _Issued(op, tuple((b, walk.slot(b)) for b in buffers), reads)
        for op, event, buffers, reads in _walked(walk)
    ]


def _walked(walk: KernelWalk) -> Iterator[tuple[TileOp, int | None, tuple[SSAValue, ...], int]]:
    """Each op ``walk`` issues with the event it names (a flag's; None for another op),
    the buffers it reads then writes and how many of them it reads — each op's facts read
    once, kept in the walk's plan."""
    facts = walk.plan.op_facts
    for op in walk:
        found = facts.get(op)
        if found is None:
            found = facts[op] = _op_facts(op)
        flag, first, second = found
        if flag:
            yield op, first + (walk.value(second) if second is not None else 0), (), 0
        else:
            yield op, None, first, second


def _op_facts(op: TileOp) -> tuple[bool, Any, Any]:
    """What a trace reads of ``op``: (True, a flag's base event, its slot operand), else
    (False, the buffers it reads then writes, how many it reads)."""
    if isinstance(op, FlagOp | CrossCoreOp):
        base = op.event_id if isinstance(op, FlagOp) else op.flag_id
        return True, base, op.slot
    reads, writes = accesses(op)
    return False, (*reads, *writes), len(reads)


def _queues(
    trace: list[_Issued], ignore: Collection[Operation], pipes: tuple[str, ...] = PIPES
) -> dict[str, deque[_Issued]]:
    """Each pipe's queue; a barrier across all pipes goes into every queue of its core."""
    queues: dict[str, deque[_Issued]] = {p: deque() for p in pipes}
    for issued in trace:
        if issued.op in ignore or (isinstance(issued.op, CrossCoreOp) and not issued.core):
            continue  # a mix kernel's part checked alone: its cross-core flags are not its own
        if _all_pipes(issued.op):
            for key, queue in queues.items():
                if _core_of(key) == issued.core:
                    queue.append(issued)
        else:
            queues[issued.queue].append(issued)
    return queues


def _all_pipes(op: TileOp) -> bool:
    """A barrier across all pipes of its core: ``pipe_barrier ALL``, and the all-core
    barrier ``tile.sync_all`` (which also waits for the other blocks: the checker takes
    every block's GM as its own, so within one core it is a barrier of every pipe)."""
    return (isinstance(op, PipeBarrierOp) and op.all_pipes) or isinstance(op, SyncAllOp)


def _describe(op: TileOp) -> str:
    text = str(op).split("\n")[0]
    return text if len(text) <= 140 else text[:137] + "..."


class _Checker:
    def __init__(
        self,
        fn: func.FuncOp,
        aliases: dict[SSAValue, list[SSAValue]],
        pipes: tuple[str, ...] = PIPES,
        aivs: tuple[str, ...] = ("aiv",),
    ):
        self.name = fn.sym_name.data
        self.state = _State(pipes, aivs=aivs)
        self.aliases = aliases

    def fail(self, message: str) -> SyncError:
        return SyncError(f"@{self.name}: {message}")

    def ordered(self, pipe: str, earlier: _Access, reads_result: bool) -> bool:
        """Whether an access on ``pipe`` now comes after ``earlier``. ``reads_result``:
        it reads what ``earlier`` wrote."""
        if earlier.pipe == pipe:
            # In order on one pipe, except that a vector op may start before the one
            # before it has written its result (without a barrier between them).
            vector = pipe.rsplit(".", 1)[-1] == "V"
            return not (vector and reads_result) or self.state.epochs[pipe] > earlier.epoch
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
                        f"{'overwrites' if writing else 'reads'} {_name(buffer)} ({_slot(slot)}) "
                        f"written by '{last.op.name}' on {last.pipe} without waiting for it\n"
                        f"  consumer: {_describe(issued.op)}\n  producer: {_describe(last.op)}"
                    )
                if writing:
                    for reader in state.reads.get(key, []):
                        if not self.ordered(pipe, reader, False):
                            raise self.fail(
                                f"'{issued.op.name}' on {pipe} overwrites {_name(buffer)} "
                                f"({_slot(slot)}) while '{reader.op.name}' on {reader.pipe} may "
                                f"still read it\n  writer: {_describe(issued.op)}\n"
                                f"  reader: {_describe(reader.op)}"
                            )
            key = (buffer, slot)
            if writing:
                state.writes[key] = now
                state.reads[key] = []
            else:
                state.reads.setdefault(key, []).append(now)

    def join_all(self, core: str = "") -> None:
        """A barrier across all pipes (of ``core``): afterwards each pipe has seen
        everything before it."""
        clocks = self.state.clocks
        pipes = [p for p in self.state.pipes if _core_of(p) == core]
        joined = {p: max(clocks[q][p] for q in pipes) for p in self.state.pipes}
        for pipe in pipes:
            clocks[pipe] = {p: max(clocks[pipe][p], joined[p]) for p in self.state.pipes}
            self.state.epochs[pipe] += 1

    def cross_core(self, pipe: str, issued: _Issued) -> bool:
        """A cross-core set (publishes ``pipe``'s clock to the flag of the other end: every
        AIV of the group for an AIC set, the AIC for an AIV's) or wait (False: stalls, a
        counter it needs has no pending set; the AIC needs one from every AIV)."""
        op = issued.op
        assert isinstance(op, CrossCoreOp)
        aivs = self.state.aivs
        me = issued.core or op.core
        if isinstance(op, SyncBlockSetOp):
            keys = [(a, issued.event, "aic") for a in aivs] if op.core == "aic" else []
            keys = keys or [("aic", issued.event, me)]
            for key in keys:
                pending = self.state.cross.setdefault(key, [])
                if len(pending) >= CROSS_CORE_MAX_PENDING:
                    raise self.fail(
                        f"cross-core flag {issued.event} of the {key[0].upper()} set "
                        f"{CROSS_CORE_MAX_PENDING + 1} times without a wait\n  {_describe(op)}"
                    )
                pending.append(dict(self.state.clocks[pipe]))
            return True
        keys = [("aic", issued.event, a) for a in aivs] if op.core == "aic" else []
        keys = keys or [(me, issued.event, "aic")]
        if any(not self.state.cross.get(key) for key in keys):
            return False
        mine = self.state.clocks[pipe]
        for key in keys:
            for p, t in self.state.cross[key].pop(0).items():
                mine[p] = max(mine[p], t)
        return True

    def run(self, queues: dict[str, deque[_Issued]]) -> None:
        state = self.state
        while any(queues.values()):
            progressed = False
            for pipe, queue in queues.items():
                while queue:
                    issued = queue[0]
                    op = issued.op
                    if _all_pipes(op):
                        mates = [q for k, q in queues.items() if _core_of(k) == issued.core]
                        if any(not q or q[0] is not issued for q in mates):
                            break  # every pipe (of its core) must reach it
                        self.join_all(issued.core)
                        for q in mates:
                            q.popleft()
                        progressed = True
                        continue
                    if isinstance(op, CrossCoreOp) and not self.cross_core(pipe, issued):
                        break  # stalls until the other core sets the flag
                    if isinstance(op, WaitFlagOp):
                        key = (*_pair(issued), issued.event)
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
                        key = (*_pair(issued), issued.event)
                        if key in state.flags:
                            raise self.fail(
                                f"event {issued.event} of {op.pair[0]} -> {op.pair[1]} raised "
                                "again before it was awaited"
                            )
                        state.flags[key] = dict(clock)
                    elif isinstance(op, PipeBarrierOp):
                        state.epochs[pipe] += 1
                    elif not isinstance(op, CrossCoreOp):
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
        left_cross = [
            f"{c.upper()} flag {f}" + (f" from {sender}" if c == "aic" else "")
            for (c, f, sender), sets in state.cross.items()
            if sets
        ]
        if left_cross:
            raise self.fail(f"cross-core flags set but never awaited: {', '.join(left_cross)}")


def _pair(issued: _Issued) -> tuple[str, str]:
    op = issued.op
    assert isinstance(op, FlagOp)
    return _qualified(issued.core, op.pair[0]), _qualified(issued.core, op.pair[1])


def _slot(slot: Slot) -> str:
    return f"{slot[0]} slot {slot[1]}" if isinstance(slot, tuple) else f"slot {slot}"


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
    sub_blocks: int = 1,
) -> None:
    """Check every block (and sub-block) of one kernel launch; raises :class:`SyncError`.
    ``max_trips`` shortens every loop (see :class:`KernelWalk`). Blocks whose traces are
    equal (the same ops on the same buffer slots and events, as blocks with equal trip
    counts issue) are checked once: the check is a function of the trace."""
    aliases = kernel_aliases(fn)
    plan = WalkPlan()  # every block's walk runs the same IR
    traces = (
        trace_kernel(fn, block, blocks, max_trips, sub, plan)
        for block in range(blocks)
        for sub in range(sub_blocks)
    )
    for trace in distinct_traces(traces):
        check_trace(fn, trace, aliases)


def distinct_traces(traces: Iterable[list[_Issued]]) -> list[list[_Issued]]:
    """The traces that differ (the same ops on the same buffer slots and events, as blocks
    with equal trip counts issue, are one): a check is a function of the trace, so each
    distinct one is checked once."""
    seen: set[tuple[tuple[object, ...], ...]] = set()
    found: list[list[_Issued]] = []
    for trace in traces:
        signature = tuple((i.op, i.slots, i.reads, i.event, i.core) for i in trace)
        if signature not in seen:
            seen.add(signature)
            found.append(trace)
    return found


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
    """Kernel name -> the most blocks a launch of it runs (a mix kernel's AIV part: the
    most groups, which its ``tile.block_idx`` counts)."""
    blocks: dict[str, int] = {}
    for op in module.walk():
        if isinstance(op, LaunchOp):
            for name in op.callees():
                blocks[name] = max(blocks.get(name, 1), op.block_count)
    return blocks


def launch_sub_blocks(module: ModuleOp) -> dict[str, int]:
    """A mix kernel's AIV part's name -> the most AIVs per group a launch of it runs."""
    found: dict[str, int] = {}
    for op in module.walk():
        if isinstance(op, LaunchOp) and (aiv := op.aiv_callee) is not None:
            found[aiv] = max(found.get(aiv, 1), op.aiv_block_count // op.block_count)
    return found


def _workspace_slot(op: TileOp, walk: KernelWalk, workspace: SSAValue) -> int:
    """The workspace slot a mix kernel's op reaches: the index operand right after the
    workspace (the workspace's first dim holds one slot per index: a fixpipe's, a copy's,
    an nd2nz's leading offset), for a ``copy_flat`` its flat offset in slots (an AIV's
    share of a slot starts inside it); 0 for an op with no such offset."""
    at = next(i for i, v in enumerate(op.operands) if v is workspace) + 1
    if at >= len(op.operands) or not isinstance(op.operands[at].type, IndexType):
        return 0
    offset = int(walk.value(op.operands[at]))
    if isinstance(op, CopyFlatOp):
        return offset // prod(memref_shape(workspace.type)[1:])
    return offset


def trace_part(
    fn: func.FuncOp,
    core: str,
    arguments: dict[SSAValue, SSAValue],
    block: int,
    blocks: int,
    max_trips: int | None = None,
    sub_block: int = 0,
    plan: WalkPlan | None = None,
) -> list[_Issued]:
    """:func:`trace_kernel` of a mix kernel's part (as sub-block ``sub_block`` of group
    ``block``), its instructions tagged with its core ("aic", "aiv0", ...); GM arguments
    are renamed through ``arguments`` (the AIV's to the AIC's) and the workspace (the last
    argument) is accessed per slot, where the cores meet; every other buffer is keyed by
    the core (each AIV has its own UB and its own part of the outputs)."""
    workspace = fn.body.block.args[-1]
    issued: list[_Issued] = []
    walk = KernelWalk(fn, block, blocks, max_trips, sub_block, plan)
    for op, event, buffers, reads in _walked(walk):
        if event is not None:
            issued.append(_Issued(op, (), 0, event, core))
            continue
        slots = tuple(
            (
                arguments.get(b, b),
                _workspace_slot(op, walk, workspace) if b is workspace else (core, walk.slot(b)),
            )
            for b in buffers
        )
        issued.append(_Issued(op, slots, reads, -1, core))
    return issued


def check_mix(
    aic: func.FuncOp,
    aiv: func.FuncOp,
    blocks: int = 1,
    max_trips: int | None = None,
    sub_blocks: int = 1,
) -> None:
    """Check a mix kernel's AIC and AIV parts together, group by group (one AIC and
    ``sub_blocks`` AIVs): each core's pipes as queues of their own, the cross-core flags
    between them (at most :data:`CROSS_CORE_MAX_PENDING` pending sets per flag, every set
    awaited), the GM workspace slots ordered between the cores. Raises
    :class:`SyncError`."""
    renamed: dict[SSAValue, SSAValue] = dict(
        zip(aiv.body.block.args, aic.body.block.args, strict=True)
    )
    aliases = {**kernel_aliases(aic), **kernel_aliases(aiv)}
    aivs = tuple(f"aiv{s}" for s in range(sub_blocks))
    pipes = tuple(_qualified(core, p) for core in ("aic", *aivs) for p in PIPES)
    aic_plan, aiv_plan = WalkPlan(), WalkPlan()
    for block in range(blocks):
        trace = trace_part(aic, "aic", {}, block, blocks, max_trips, plan=aic_plan)
        for sub, core in enumerate(aivs):
            trace += trace_part(aiv, core, renamed, block, blocks, max_trips, sub, aiv_plan)
        _Checker(aic, aliases, pipes, aivs).run(_queues(trace, (), pipes))


def check_sync(module: ModuleOp) -> int:
    """Check every tiled kernel of ``module`` with the blocks its launches run (a mix
    kernel's parts alone and together, :func:`check_mix`); returns how many kernels were
    checked."""
    blocks = launch_blocks(module)
    sub_blocks = launch_sub_blocks(module)
    checked = 0
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    for fn in functions.values():
        if TILES_ATTR in fn.attributes:
            name = fn.sym_name.data
            check_kernel(fn, blocks.get(name, 1), sub_blocks=sub_blocks.get(name, 1))
            checked += 1
    check_blocks(module)  # the blocks' GM exchange: a barrier between writer and reader
    for launch in module.walk():
        if isinstance(launch, LaunchOp) and launch.aiv_callee in functions:
            aic = functions[launch.callee.string_value()]
            groups = launch.block_count
            check_mix(
                aic,
                functions[launch.aiv_callee],
                groups,
                sub_blocks=max(1, launch.aiv_block_count // groups),
            )
    return checked
