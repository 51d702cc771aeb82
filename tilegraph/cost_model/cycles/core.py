"""One core running one block of a kernel: a clock per pipe, no data.

Every pipe (MTE1, MTE2, MTE3, M, V, FIX, S) executes its instructions in program order, one
at a time, concurrently with the other pipes; an instruction issued to a pipe starts at

    max(the pipe is free,
        [data mode]  the producers of the buffer slots it reads are done, and for the slot
                     it writes, the earlier readers and writers of it are done,
        [flags mode] the flag it waits for is raised (``wait_flag``),
        [GM ops]     the core's GM port can take its bytes)

and holds the pipe for ``cost_of(op, hw)`` cycles (:mod:`tilegraph.cost_model.tile_costs`).
A GM transfer's data arrives (or lands) its GM latency after that (``OpRecord.latency``):
the pipe issues its next op meanwhile, and what depends on the data waits for it — a
reader or writer of the slot in the data mode, a ``set_flag`` on that pipe (which completes
after everything issued to its pipe before it), a barrier, the end of the block.
The *data* mode orders the pipes by the dependences through buffers (the synchronisation a
perfect ``inject-sync`` would give); the *flags* mode orders them only by the kernel's
``set_flag`` / ``wait_flag`` (a flag is raised when its ``set_flag`` completes on the source
pipe, i.e. after everything issued to that pipe before it; ``wait_flag`` stalls the
destination pipe until then and consumes the flag) and ``pipe_barrier`` (which waits for its
pipe to drain — every pipe here is in-order and one instruction at a time, so it costs its
own cycle only). A missing flag in the flags mode gives an optimistic time; comparing the
two modes shows it. Issue queues are unbounded (the scalar unit never stalls on a full
queue).

**Scalar reads.** An op whose operand the scalar unit read from data (``tile.get_value``:
a gather's row offsets) is issued by the scalar unit after that read, so it starts no
earlier than the S pipe is free (in both modes: a register dependence, not a flag).

**GM port.** The bytes a core moves between GM and its buffers (MTE2 loads, MTE3 stores,
FIX writes to GM) share the core's slice of GM bandwidth, ``gm_bytes_per_cycle``
(:mod:`.memory`). Each GM-moving pipe keeps its own port timeline: a transfer of ``b``
bytes occupies it for ``b / rate`` cycles after that pipe's previous transfer, and the op
ends at the later of its own cost and the end of its port time, so one DMA runs at
min(path rate, GM share). The pipes' transfers overlap in time, and the core as a whole
cannot move more than the share: the block takes at least (all its GM bytes) / rate
cycles. (One timeline shared by all pipes, in program order, would make a load that a
double buffer lets MTE2 issue early wait for the store of the previous tile on FIX/MTE3,
serialising what the hardware overlaps.)

**Cross-core flags.** A mix kernel's part simulated alone issues its ``sync_block_set`` /
``sync_block_wait`` as one-cycle ops; co-simulated with the other cores of its group
(:mod:`.mix`, through :func:`core_issuer`'s ``cross``), a wait stalls its pipe until the set
it takes has completed on the other core, plus the flag's trip.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from tilegraph.cost_model.cycles.program import (
    BARRIER,
    CROSS_SET,
    CROSS_WAIT,
    FENCE,
    NORMAL,
    SET,
    WAIT,
    CycleModelError,
    Issue,
    KernelProgram,
)
from tilegraph.dialects.tile.sync import PIPES

SCALAR = PIPES.index("S")


@dataclass(frozen=True)
class Slice:
    """One op instance on a pipe, for traces: record index, start and end cycle."""

    record: int
    start: float
    end: float


@dataclass
class CoreRun:
    """What one block did on its core."""

    cycles: float
    """When its last pipe finished."""
    busy: list[float]
    """Cycles each pipe (indexed as PIPES) was executing."""
    counts: list[int]
    """Instances issued of each record of the program."""
    slices: list[Slice] = field(default_factory=list)
    """Every instance, when traced."""
    flows: list[tuple[int, int]] = field(default_factory=list)
    """(set slice, wait slice) index pairs: which ``set_flag`` each ``wait_flag`` took."""


class CrossCoreFlags(Protocol):
    """The cross-core flags between the cores of a mix launch's group (:mod:`.mix`)."""

    def put(self, core: int, flag: int, when: float) -> None:
        """Core ``core``'s ``sync_block_set`` of ``flag`` completed at ``when``."""
        ...

    def take(self, core: int, flag: int) -> float | None:
        """When core ``core``'s ``sync_block_wait`` of ``flag`` may go on (the flag's latency
        included), consuming the set; None when that set has not been issued yet."""
        ...


def core_issuer(
    program: KernelProgram,
    gm_bytes_per_cycle: float,
    use_flags: bool,
    trace: bool = False,
    cross: CrossCoreFlags | None = None,
    core: int = 0,
) -> tuple[Issue, Callable[[], CoreRun]]:
    """One core's state and the ``issue`` callback that advances it (see the module
    docstring), and what gives the :class:`CoreRun` once the program has been issued.
    Without ``cross`` a ``sync_block_set`` / ``wait`` is one cycle on its pipe; with it the
    wait stalls its pipe until ``cross.take`` says, and ``issue`` returns True (nothing
    issued) when the set it needs has not been issued yet — the stepping functions of a
    mix kernel's part retry it later (:attr:`KernelProgram.data_steps`)."""
    records = program.records
    n_pipes = len(PIPES)
    pipe_free = [0.0] * n_pipes
    landed = [0.0] * n_pipes  # when the data of every op issued to the pipe is there
    busy = [0.0] * n_pipes
    counts = [0] * len(records)
    written = [0.0] * program.keys  # when the last write of each key completes
    read = [0.0] * program.keys  # when the last read of each key completes
    raised: dict[int, list[tuple[float, int]]] = {}
    port = [0.0] * n_pipes
    moved = [0.0]
    inverse_rate = 0.0 if gm_bytes_per_cycle == float("inf") else 1.0 / gm_bytes_per_cycle
    slices: list[Slice] = []
    flows: list[tuple[int, int]] = []

    def issue(i: int, reads: tuple[int, ...], writes: tuple[int, ...], offset: int) -> bool:
        r = records[i]
        p = r.pipe
        t = pipe_free[p]
        kind = r.kind
        if kind == WAIT:
            pending = raised.get(r.flag + offset)
            if not pending:
                raise CycleModelError(
                    f"@{program.name}: '{r.op.name}' {r.op.pair} event {r.op.event_id + offset} "  # type: ignore[attr-defined]
                    "waits for a flag no earlier set_flag raised (the kernel would deadlock)"
                )
            when, setter = pending.pop(0)
            if when > t:
                t = when
            if trace:
                flows.append((setter, len(slices)))
        elif kind == FENCE:
            t = max(max(pipe_free), max(landed))
        elif kind == BARRIER and landed[p] > t:
            t = landed[p]
        if r.after_scalar and pipe_free[SCALAR] > t:
            t = pipe_free[SCALAR]  # its offset is a value the scalar unit reads first
        if kind == NORMAL and not use_flags:
            for k in reads:
                if written[k] > t:
                    t = written[k]
            for k in writes:
                if written[k] > t:
                    t = written[k]
                if read[k] > t:
                    t = read[k]
            for k in r.alias_keys:
                if written[k] > t:
                    t = written[k]
                if writes and read[k] > t:
                    t = read[k]
        elif cross is not None and kind == CROSS_WAIT:
            when = cross.take(core, r.flag + offset)
            if when is None:
                return True
            if when > t:
                t = when
        end = t + r.cost
        if r.gm_bytes:
            start = port[p] if port[p] > t else t
            port[p] = start + r.gm_bytes * inverse_rate
            moved[0] += r.gm_bytes
            if port[p] > end:
                end = port[p]
        pipe_free[p] = end
        if kind == FENCE:
            pipe_free[:] = [end] * n_pipes
        busy[p] += end - t
        counts[i] += 1
        done = end + r.latency
        if landed[p] < done:
            landed[p] = done
        if kind == NORMAL:
            for k in reads:
                if read[k] < end:
                    read[k] = end
            for k in writes:
                written[k] = done
        elif kind == SET:
            raised.setdefault(r.flag + offset, []).append((landed[p], len(slices)))
        elif cross is not None and kind == CROSS_SET:
            cross.put(core, r.flag + offset, landed[p])
        if trace:
            slices.append(Slice(i, t, end))
        return False

    def finish() -> CoreRun:
        end = max(max(pipe_free), max(landed), moved[0] * inverse_rate)
        return CoreRun(end, busy, counts, slices, flows)

    return issue, finish


def run_core(
    program: KernelProgram,
    block: int,
    blocks: int,
    gm_bytes_per_cycle: float,
    use_flags: bool,
    trace: bool = False,
) -> CoreRun:
    """Simulate block ``block`` of ``blocks`` of ``program`` on one core (a mix kernel's
    part alone: its cross-core flag ops cost a cycle and never stall)."""
    issue, finish = core_issuer(program, gm_bytes_per_cycle, use_flags, trace)
    (program.flags if use_flags else program.data)(block, blocks, issue)
    return finish()
