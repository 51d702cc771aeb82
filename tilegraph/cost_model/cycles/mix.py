"""A mix launch: each AIC core and its AIV cores co-simulated through their cross-core flags.

A mix launch (``tile.launch @k_mix_aic(...) {aiv = @k_mix_aiv, blocks = n, aiv_blocks = m}``,
:mod:`tilegraph.lowering.conversion.tiling.mix`) runs ``n`` core groups; group ``g`` is AIC
block ``g`` and the ``r = m / n`` AIV instances ``g·r .. g·r + r - 1`` (AIV instance ``v``
belongs to group ``v // r``). The AIC fixpipes each accumulator tile into slot ``s`` (of 2)
of its group's region of a GM workspace (:mod:`tilegraph.lowering.analysis.mix_workspace`)
between a wait for "slot ``s`` free" and a set of "slot ``s`` ready"; the AIV waits for
"ready", copies the slot GM -> UB and sets "free".

**Co-simulation.** Every core of a group is a :func:`~.core.core_issuer` (a clock per pipe,
as a kernel alone); the parts' programs are walked in lock-step by their stepping functions
(:attr:`~.program.KernelProgram.data_steps`), each one running until a ``sync_block_wait``
whose set has not been issued yet, then the next one — the way the executors run a mix
launch (:mod:`tilegraph.runtime.tile_interpreter.cross_core`). Walk order does not change
the times: an op's start depends only on earlier ops of its core and on the set its wait
takes. The flags count (Ascend C ``CrossCoreSetFlag`` mode 2, as the executors and
``check_mix`` treat them): the AIC's set of flag ``f`` adds one to ``f``'s counter on each
AIV of its group, an AIV's wait takes one; the AIC's counter of ``f`` gets one when every
AIV of the group has set ``f`` once more, and its wait takes one. A wait stalls its pipe
until ``max(pipe free, the set's completion + hw.cross_core_flag_cycles)``. A wait no set
releases (the launch would hang) or a set no wait takes (the flags do not balance) is a
:class:`~.program.CycleModelError` naming the kernel. The 16-set limit of a counter is the
checker's and the executors' business, not timed here.

Groups whose AIC block and AIV instances each have the same loop trip counts (the shapes of
:func:`~.simulate.plan_launch`) issue the same sequences, so one of them is simulated for all;
their workspace slots may be numbered the other way round (the slot is the parity of an
index affine in the block), which swaps the two slots' flags and changes no time.

**The workspace round trip.** The workspace is two tiles per group (``n x 2`` tiles in
all, a few MB at most against 910B's 192 MiB), rewritten at once, so it stays in L2 for the
whole launch, and the parts' other GM traffic has the rest of L2 (:func:`~.simulate.
plan_mix`): the AIC's fixpipe into it and the AIV's copy out of it run at their path rates (FIX's
two stages, GM -> UB) and take no share of the chip's HBM bandwidth — their bytes are left
out of each part's GM traffic (:func:`without_workspace`, before
:func:`~.simulate.plan_launch`) and do not occupy the core's GM port. (With an L2 bandwidth
figure they would be bounded by it; there is none, ``CycleModelOptions.l2_bandwidth_gbps``.)
Each part's other GM traffic shares the chip as a launch of its own blocks (the parts' HBM
traffic is not pooled).

**Report.** The launch's time is the co-simulation's critical path (its slowest group);
``workspace_us`` is that time minus the time of the slower part simulated alone (its
cross-core flags one cycle each, never stalling) with the same GM rates: what the coupling
through the workspace adds — the pipeline's fill and drain, the stalls when one side is two
tiles ahead, the flags' trips. The workspace's transfers themselves are in the parts' times.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from tilegraph.cost_model.cycles.core import CoreRun, core_issuer
from tilegraph.cost_model.cycles.program import CycleModelError, KernelProgram
from tilegraph.cost_model.cycles.report import DOMINANT, KernelCycles
from tilegraph.dialects.tile.sync import PIPES
from tilegraph.dialects.tile.workspace import gm_base
from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.buffers import accesses

if TYPE_CHECKING:  # simulate.py imports this module
    from tilegraph.cost_model.cycles.simulate import LaunchPlan

AIC = 0
"""Core index of a group's AIC; its AIV instances are 1 .. r."""


def without_workspace(program: KernelProgram) -> KernelProgram:
    """``program`` (a mix kernel's part) with its workspace accesses charged at their path
    rates only: no GM port time, not in the GM traffic or footprint of the launch (see the
    module docstring). The workspace is the part's last argument (or a view of it: the
    flash attention kernel's narrow tail of P)."""
    workspace = program.fn.body.block.args[-1]
    records = [
        replace(r, gm_bytes=0)
        if workspace in {gm_base(v) for v in (*accesses(r.op)[0], *accesses(r.op)[1])}
        else r
        for r in program.records
    ]
    buffers = {b: rw for b, rw in program.gm_buffers.items() if b is not workspace}
    return replace(program, records=records, gm_buffers=buffers)


class GroupFlags:
    """The cross-core flags of one core group: an AIC (core 0) and ``ratio`` AIVs."""

    def __init__(self, ratio: int, latency: float):
        self.ratio = ratio
        self.latency = latency
        self.to_aiv: dict[tuple[int, int], deque[float]] = {}
        """(AIV core, flag) -> completion times of the AIC's sets not yet waited for."""
        self.to_aic: dict[int, list[deque[float]]] = {}
        """flag -> per AIV, completion times of its sets the AIC has not waited for."""
        self.sets = 0
        self.blocked: dict[int, int] = {}
        """Core -> the flag its last refused wait asked for."""

    def put(self, core: int, flag: int, when: float) -> None:
        self.sets += 1
        if core == AIC:
            for aiv in range(1, self.ratio + 1):
                self.to_aiv.setdefault((aiv, flag), deque()).append(when)
        else:
            queues = self.to_aic.setdefault(flag, [deque() for _ in range(self.ratio)])
            queues[core - 1].append(when)

    def take(self, core: int, flag: int) -> float | None:
        if core == AIC:
            queues = self.to_aic.get(flag)
            if queues is None or not all(queues):
                self.blocked[core] = flag
                return None
            return max(q.popleft() for q in queues) + self.latency
        queue = self.to_aiv.get((core, flag))
        if not queue:
            self.blocked[core] = flag
            return None
        return queue.popleft() + self.latency

    def left_set(self) -> list[str]:
        """The flags set but never waited for, in words."""
        left = [
            f"flag {flag} of AIV {core - 1} ({len(q)} pending)"
            for (core, flag), q in sorted(self.to_aiv.items())
            if q
        ]
        left += [
            f"flag {flag} of the AIC ({max(len(q) for q in queues)} pending)"
            for flag, queues in sorted(self.to_aic.items())
            if any(queues)
        ]
        return left


@dataclass
class GroupRun:
    """What one core group of a mix launch did: its AIC and its AIVs."""

    aic: CoreRun
    aivs: list[CoreRun]

    @property
    def cycles(self) -> float:
        return max(self.aic.cycles, *(run.cycles for run in self.aivs))

    def critical_aiv(self) -> CoreRun:
        return max(self.aivs, key=lambda run: run.cycles)


@dataclass(frozen=True)
class MixParts:
    """A mix launch's two programs and how each runs (see :func:`co_simulate`)."""

    aic: KernelProgram
    aiv: KernelProgram
    groups: int
    ratio: int
    """AIV instances per group."""
    aic_rate: float
    """GM bytes per cycle of an AIC core (its share, :func:`~.simulate.plan_launch`)."""
    aiv_rate: float
    aic_flags: bool
    """The AIC part is run in the flags mode (else the data mode)."""
    aiv_flags: bool

    @property
    def name(self) -> str:
        return f"@{self.aic.name} / @{self.aiv.name}"


def _steps(program: KernelProgram, use_flags: bool):
    steps = program.flags_steps if use_flags else program.data_steps
    if steps is None:
        raise CycleModelError(f"@{program.name}: not a mix kernel's part (no cross-core flags)")
    return steps


def co_simulate(parts: MixParts, group: int, latency: float, trace: bool = False) -> GroupRun:
    """Simulate core group ``group`` of a mix launch: its AIC block and its AIV instances in
    lock-step through their cross-core flags (see the module docstring)."""
    flags = GroupFlags(parts.ratio, latency)
    aic_issue, aic_done = core_issuer(parts.aic, parts.aic_rate, parts.aic_flags, trace, flags, AIC)
    walks: list[Iterator[None]] = [
        _steps(parts.aic, parts.aic_flags)(group, parts.groups, aic_issue)
    ]
    finishers = [aic_done]
    aiv_steps = _steps(parts.aiv, parts.aiv_flags)
    for sub in range(parts.ratio):
        issue, done = core_issuer(parts.aiv, parts.aiv_rate, parts.aiv_flags, trace, flags, sub + 1)
        # AIV instance group * ratio + sub: its group's block index, its tile.sub_block_idx
        walks.append(aiv_steps(group, parts.groups, issue, sub))
        finishers.append(done)
    running = list(range(len(walks)))
    while running:
        sets = flags.sets
        waiting = []
        for core in running:
            try:
                next(walks[core])
                waiting.append(core)
            except StopIteration:
                pass
        if len(waiting) == len(running) and flags.sets == sets:
            stuck = "; ".join(
                f"{'the AIC' if core == AIC else f'AIV {core - 1}'} waits for flag "
                f"{flags.blocked.get(core)}"
                for core in waiting
            )
            raise CycleModelError(
                f"{parts.name}: a sync_block_wait no sync_block_set releases (group {group} "
                f"would hang): {stuck}"
            )
        running = waiting
    left = flags.left_set()
    if left:
        raise CycleModelError(
            f"{parts.name}: cross-core flags set but never waited for (they do not balance): "
            + ", ".join(left)
        )
    aic, *aivs = (done() for done in finishers)
    return GroupRun(aic, aivs)


def group_members(aic: LaunchPlan, aiv: LaunchPlan, ratio: int) -> dict[int, list[int]]:
    """Simulated group -> the groups (itself included) whose AIC block and AIV instances
    have the shapes of its own (see the module docstring)."""
    found: dict[tuple[int, tuple[int, ...]], list[int]] = {}
    for group in range(aic.blocks):
        # the AIV instances of a group run with the group's block index (co_simulate)
        key = (aic.representative(group), (aiv.representative(group),) * ratio)
        found.setdefault(key, []).append(group)
    return {members[0]: members for members in found.values()}


def _prefixed(core: str, busy: list[float]) -> dict[str, int]:
    return {f"{core}.{p}": round(b) for p, b in zip(PIPES, busy, strict=True) if b}


def mix_cycles(
    parts: MixParts,
    group_members: dict[int, list[int]],
    alone: tuple[KernelCycles, KernelCycles],
    hw: HardwareModel,
) -> KernelCycles:
    """The report of a mix launch: ``group_members`` maps each simulated group to the groups
    it stands for, ``alone`` is each part simulated alone (AIC, AIV; see the module
    docstring for how they make ``workspace_us``)."""
    runs = {g: co_simulate(parts, g, hw.cross_core_flag_cycles) for g in group_members}
    slowest = max(runs, key=lambda g: runs[g].cycles)
    critical = runs[slowest]
    cycles = critical.cycles
    aic_alone, aiv_alone = alone
    mean_aic = [0.0] * len(PIPES)
    mean_aiv = [0.0] * len(PIPES)
    for g, run in runs.items():
        weight = len(group_members[g]) / parts.groups
        for p in range(len(PIPES)):
            mean_aic[p] += run.aic.busy[p] * weight
            mean_aiv[p] += sum(aiv.busy[p] for aiv in run.aivs) * weight / parts.ratio
    busiest = [
        (b, p) for core in (critical.aic, critical.critical_aiv()) for p, b in enumerate(core.busy)
    ]
    top, pipe = max(busiest)
    paths = dict(aic_alone.bytes_per_path)
    for path, moved in aiv_alone.bytes_per_path.items():
        paths[path] = paths.get(path, 0) + moved
    us = cycles / hw.cycles_per_us
    macs = sum(
        len(group_members[g]) * n * record.mac_cycles
        for g, run in runs.items()
        for record, n in zip(parts.aic.records, run.aic.counts, strict=True)
        if n
    )
    return replace(
        aic_alone,
        unit="mix",
        cycles=int(-(-cycles // 1)),
        us=us,
        bound=PIPES[pipe] if cycles > 0 and top >= DOMINANT * cycles else "latency",
        cube_utilisation=macs / (parts.groups * cycles) if cycles else 0.0,
        bytes_per_path=dict(sorted(paths.items())),
        busy_cycles={
            **_prefixed("aic", critical.aic.busy),
            **_prefixed("aiv", critical.critical_aiv().busy),
        },
        mean_busy_cycles={**_prefixed("aic", mean_aic), **_prefixed("aiv", mean_aiv)},
        workspace_us=us - max(aic_alone.us, aiv_alone.us),
    )
