"""The cycle model of a lowered module: every launch, every block, every op instance.

Per kernel launch with ``n`` blocks: each block runs on its own core (:mod:`.core`: a clock
per pipe, ops start when their pipe, their inputs or their flags and the core's GM port
allow), the blocks share the chip's GM bandwidth (:mod:`.memory`), and the kernel takes as
long as its slowest block. Blocks whose loops run the same trip counts issue the same
instruction sequence (costs do not depend on index values), so one of them is simulated
for all — an exact shortcut, not an extrapolation: every iteration of every loop is still
walked once per distinct block shape. Each launch adds its scheduling cost, by
``CycleModelOptions.launch``: ``"sunk"`` (the default: a compiled model sunk to the device,
its tasks scheduled on the chip at the preset's ``task_overhead_us`` each) or ``"host"``
(op-by-op execution, each kernel launched from the host at ``launch_overhead_us``). A host
kernel costs its :class:`~.host.HostModel` estimate. A mix launch (decoupled presets: an
AIC and an AIV part) co-simulates each AIC core with its AIV cores through their cross-core
flags and the GM workspace between them (:mod:`.mix`). Model time = kernels + scheduling +
host kernels. A launch that has the runtime zero-fill an argument first (a soft barrier's
GM workspace, ``zero_fill``) pays one more task's scheduling per such argument: the
memset is a task on the stream (its few hundred bytes take no measurable time).

The mode (``CycleModelOptions.mode``): ``"auto"`` orders the pipes by the kernel's flags
when it has any ``set_flag`` / ``wait_flag``, by the data dependences otherwise; ``"data"``
and ``"flags"`` force one (a kernel without flags in the flags mode has no cross-pipe
ordering at all: an optimistic bound).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field, replace

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tilegraph.cost_model.cycles.core import CoreRun, run_core
from tilegraph.cost_model.cycles.host import HostModel, host_work
from tilegraph.cost_model.cycles.loops import counted_launches, device_loops, loop_control
from tilegraph.cost_model.cycles.memo import KernelPrograms, launch_key
from tilegraph.cost_model.cycles.memory import (
    GmShare,
    GmTraffic,
    L2Residency,
    gm_share,
    hbm_traffic,
)
from tilegraph.cost_model.cycles.mix import MixParts, group_members, mix_cycles, without_workspace
from tilegraph.cost_model.cycles.program import CycleModelError, KernelProgram, compile_kernel
from tilegraph.cost_model.cycles.report import DOMINANT, KernelCycles, ModelCycles
from tilegraph.cost_model.kernel_report import KernelInfo, kernel_report
from tilegraph.dialects.tile import LaunchOp
from tilegraph.dialects.tile.barrier import zero_filled
from tilegraph.dialects.tile.base import buffer_bytes, module_preset
from tilegraph.dialects.tile.sync import PIPES
from tilegraph.dialects.tile.workspace import reshape_view_base
from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.kernel_attrs import KERNEL_ATTR, TILES_ATTR

MODES = ("auto", "data", "flags")
LAUNCH_MODES = ("sunk", "host")


def scheduling_us(hw: HardwareModel, launch: str) -> float:
    """What scheduling one kernel launch costs on ``hw`` in ``launch`` mode (µs)."""
    if launch not in LAUNCH_MODES:
        raise ValueError(f"launch mode must be one of {', '.join(LAUNCH_MODES)}")
    return hw.task_overhead_us if launch == "sunk" else hw.launch_overhead_us


@dataclass(frozen=True)
class CycleModelOptions:
    """Choices of the model (see :mod:`.memory` and :mod:`.host` for what they mean)."""

    mode: str = "auto"
    l2_reuse: bool = True
    l2_bandwidth_gbps: float | None = None
    host: HostModel = field(default_factory=HostModel)
    launch: str = "sunk"
    """How kernels are scheduled: ``"sunk"`` (a compiled model on the device) or ``"host"``
    (op by op from the host); see the module docstring."""
    memo: bool = True
    """Compile each distinct kernel, and simulate each distinct launch, once (:mod:`.memo`:
    the same figures); False: by name, every kernel compiled."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"cycle model mode must be one of {', '.join(MODES)}")
        if self.launch not in LAUNCH_MODES:
            raise ValueError(f"launch mode must be one of {', '.join(LAUNCH_MODES)}")


@dataclass
class LaunchPlan:
    """One launch of a kernel, ready to simulate: which blocks stand for which."""

    program: KernelProgram
    blocks: int
    use_flags: bool
    groups: dict[int, list[int]]
    """Simulated block -> the blocks (itself included) that issue the same sequence."""
    share: GmShare
    traffic: GmTraffic

    def representative(self, block: int) -> int:
        for rep, members in self.groups.items():
            if block in members:
                return rep
        raise ValueError(f"block {block} is not in a launch of {self.blocks} blocks")


def _counts(program: KernelProgram, block: int, blocks: int, sub_blocks: int = 1) -> list[int]:
    """Instances of each record issued by ``block`` (all its ``sub_blocks``)."""
    counts = [0] * len(program.records)

    def count(i: int, reads: tuple[int, ...], writes: tuple[int, ...], offset: int) -> None:
        counts[i] += 1

    for sub in range(sub_blocks):
        program.flags(block, blocks, count, sub)
    return counts


def plan_launch(
    program: KernelProgram,
    hw: HardwareModel,
    blocks: int,
    options: CycleModelOptions,
    resident: frozenset[int] = frozenset(),
    sub_blocks: int = 1,
    written_back: int = 0,
) -> LaunchPlan:
    """Group the blocks of a launch by shape and work out its GM traffic and share;
    ``resident``: positions of the kernel's arguments whose bytes are in L2 at its start
    (:class:`~.memory.L2Residency`); ``written_back``: bytes L2 wrote to HBM for the
    launch (dirty data it reads that left L2 since it was written); ``sub_blocks``: a mix
    kernel's AIV part runs that many instances per block (its ``tile.sub_block_idx``),
    whose traffic the block's share carries."""
    use_flags = options.mode == "flags" or (options.mode == "auto" and program.has_sync)
    groups: dict[object, tuple[int, list[int], list[int]]] = {}
    for b in range(blocks):
        trips, counts = program.shape(b, blocks) if sub_blocks == 1 else (None, None)
        key: object = trips if trips is not None and program.uniform_blocks else ("block", b)
        if program.ragged and trips is not None:  # equal trips, maybe not the same records
            counts = _counts(program, b, blocks, sub_blocks)
            key = (key, tuple(counts))
        if key not in groups:
            if counts is None:
                counts = _counts(program, b, blocks, sub_blocks)
            groups[key] = (b, counts, [])
        groups[key][2].append(b)
    read = write = busiest = 0
    for _, counts, members in groups.values():
        block_read = sum(
            n * r.gm_bytes for r, n in zip(program.records, counts, strict=True) if r.gm_read
        )
        block_write = sum(
            n * r.gm_bytes for r, n in zip(program.records, counts, strict=True) if not r.gm_read
        )
        read += block_read * len(members)
        write += block_write * len(members)
        busiest = max(busiest, block_read + block_write)
    warm = frozenset(n for n, arg in enumerate(program.gm_args) if arg in resident)
    if options.l2_reuse and (read or write):
        missed, evicted = hbm_traffic(program, blocks, hw.l2_bytes, warm, sub_blocks)
        traffic = GmTraffic(read, write, missed, written_back + evicted)
    else:  # without L2 every read and write goes to HBM as it is made
        traffic = GmTraffic(read, write, read, write)
    share = gm_share(hw, blocks, traffic, busiest, options.l2_bandwidth_gbps)
    return LaunchPlan(
        program,
        blocks,
        use_flags,
        {rep: members for rep, _, members in groups.values()},
        share,
        traffic,
    )


def run_block(plan: LaunchPlan, block: int, trace: bool = False) -> CoreRun:
    """Simulate one block of a planned launch."""
    return run_core(
        plan.program, block, plan.blocks, plan.share.bytes_per_cycle, plan.use_flags, trace
    )


def _bound(run: CoreRun, cycles: float) -> str:
    pipe = max(range(len(PIPES)), key=lambda p: run.busy[p])
    return PIPES[pipe] if cycles > 0 and run.busy[pipe] >= DOMINANT * cycles else "latency"


def simulate_launch(
    program: KernelProgram,
    hw: HardwareModel,
    blocks: int,
    options: CycleModelOptions,
    ops: tuple[str, ...] = (),
    unit: str = "cube",
    resident: frozenset[int] = frozenset(),
    written_back: int = 0,
) -> KernelCycles:
    """The time of one launch of a compiled kernel on ``blocks`` cores (``resident``,
    ``written_back``: see :func:`plan_launch`)."""
    plan = plan_launch(program, hw, blocks, options, resident, written_back=written_back)
    return launch_cycles(plan, hw, unit, ops, scheduling_us(hw, options.launch))


def launch_cycles(
    plan: LaunchPlan, hw: HardwareModel, unit: str, ops: tuple[str, ...], launch_us: float
) -> KernelCycles:
    """The time of one planned launch (:func:`plan_launch`) of a kernel of ``unit``
    implementing ``ops``, scheduled at ``launch_us``."""
    program, blocks = plan.program, plan.blocks
    runs = {rep: run_block(plan, rep) for rep in plan.groups}
    slowest = max(runs, key=lambda rep: runs[rep].cycles)
    critical = runs[slowest]
    cycles = critical.cycles
    paths: dict[str, int] = {}
    macs = 0
    flops = 0
    mean_busy = [0.0] * len(PIPES)
    for rep, run in runs.items():
        weight = len(plan.groups[rep])
        for p, b in enumerate(run.busy):
            mean_busy[p] += b * weight / blocks
        for record, n in zip(program.records, run.counts, strict=True):
            if n and record.path:
                paths[record.path] = paths.get(record.path, 0) + n * weight * record.moved_bytes
            macs += n * weight * record.mac_cycles
            flops += n * weight * record.flops
    whole = int(-(-cycles // 1))
    return KernelCycles(
        name=program.name,
        unit=unit,
        ops=ops,
        blocks=blocks,
        launches=1,
        cycles=whole,
        us=cycles / hw.cycles_per_us,
        launch_us=launch_us,
        bound=_bound(critical, cycles),
        cube_utilisation=macs / (blocks * cycles) if cycles else 0.0,
        cube_flops=flops,
        mode="flags" if plan.use_flags else "data",
        bytes_per_path=dict(sorted(paths.items())),
        busy_cycles={p: round(b) for p, b in zip(PIPES, critical.busy, strict=True) if b},
        mean_busy_cycles={p: round(b) for p, b in zip(PIPES, mean_busy, strict=True) if b},
        gm_bytes_per_cycle=plan.share.bytes_per_cycle,
        hbm_fraction=plan.share.hbm_fraction,
    )


def simulate_kernel(
    fn: func.FuncOp,
    hw: HardwareModel | None = None,
    blocks: int = 1,
    options: CycleModelOptions | None = None,
) -> KernelCycles:
    """The time of one launch of the tiled kernel ``fn`` with ``blocks`` blocks (``hw``: the
    preset of the module it is in by default)."""
    hw = hw or module_preset(fn)
    if TILES_ATTR not in fn.attributes:
        raise CycleModelError(f"@{fn.sym_name.data} is not tiled (run tile-kernels first)")
    unit = fn.attributes.get(KERNEL_ATTR)
    return simulate_launch(
        compile_kernel(fn, hw),
        hw,
        blocks,
        options or CycleModelOptions(),
        unit=getattr(unit, "data", "cube"),
    )


def launches(module: ModuleOp) -> list[LaunchOp]:
    """The module's kernel launches, in program order."""
    return [op for op in module.walk() if isinstance(op, LaunchOp)]


def simulate_module(
    module: ModuleOp,
    hw: HardwareModel | None = None,
    options: CycleModelOptions | None = None,
) -> ModelCycles:
    """The cycle model of every launch of a lowered module (``O2, lower-graph-to-kernels,
    tile-kernels, ...``); ``hw`` defaults to the module's preset (``tilegraph.target``)."""
    hw = hw or module_preset(module)
    options = options or CycleModelOptions()
    functions = {f.sym_name.data: f for f in module.walk() if isinstance(f, func.FuncOp)}
    infos = {k.name: k for k in kernel_report(module)}
    programs = KernelPrograms(hw, options.memo)
    found: dict[tuple[str, int], KernelCycles] = {}
    timed: dict[Hashable, KernelCycles] = {}
    residency = L2Residency(hw.l2_bytes)
    order: list[str] = []
    for launch, times in counted_launches(module):
        name = launch.callee.string_value()
        fn, info = functions.get(name), infos.get(name)
        if fn is None or info is None:
            raise CycleModelError(f"tile.launch of @{name}: no such kernel function")
        order.append(name)
        # an alias (tile.reshape_view) is its source's bytes: L2 holds them once
        operands = [reshape_view_base(v) for v in launch.args]
        resident = residency.resident(operands) if options.l2_reuse else frozenset()
        reads, writes = _operand_access(launch, functions, programs, hw, info.unit)
        sizes = [buffer_bytes(v) for v in operands]
        written_back = (
            sum(sizes[i] for i in residency.written_back(operands, reads, resident))
            if options.l2_reuse
            else 0
        )
        key = (name, launch.block_count)
        # an equal launch of an equal kernel has the same report but for its name (.memo)
        kernels = (name,)
        if info.unit != "host":
            kernels = tuple(programs.key(functions.get(n, fn)) for n in launch.callees())
        equal = launch_key(launch, kernels, resident, written_back)
        one = timed.get(equal)
        if one is None:
            one = _launch_once(
                launch, fn, info, functions, programs, hw, options, resident, written_back
            )
            timed[equal] = one
        one = replace(one, name=name)
        fills = len(zero_filled(launch))
        if fills:  # the runtime's memset of each zero-filled argument: a task of its own
            one = replace(one, launch_us=one.launch_us + fills * scheduling_us(hw, options.launch))
        one = replace(one, launches=times)  # a launch in a device loop: once per iteration
        known = found.get(key)
        found[key] = one if known is None else _relaunched(known, one)
        residency.launched(list(zip(operands, sizes, strict=True)), {operands[i] for i in writes})
    found = {key: replace(k, nodes=infos[key[0]].nodes) for key, k in found.items()}
    task_us = scheduling_us(hw, options.launch)
    controls = [
        loop_control(loop, f"loop_control_{i}", hw, task_us)
        for i, loop in enumerate(device_loops(module))
    ]
    return ModelCycles(
        hw.name,
        hw.clock_ghz,
        [*found.values(), *controls],
        options.host.name,
        order,
        launch_mode=options.launch,
        task_us=scheduling_us(hw, options.launch),
        compiled_kernels=programs.compiled,
    )


def plan_mix(
    launch: LaunchOp,
    functions: dict[str, func.FuncOp],
    programs: KernelPrograms,
    hw: HardwareModel,
    options: CycleModelOptions,
    resident: frozenset[int] = frozenset(),
    written_back: int = 0,
) -> tuple[MixParts, LaunchPlan, LaunchPlan]:
    """A mix launch's parts ready to co-simulate (:func:`.mix.co_simulate`), and each part's
    plan (its workspace traffic left out, :func:`.mix.without_workspace`; ``resident``:
    see :func:`plan_launch`, both parts take the launch's operands; ``written_back`` is
    charged to the AIC part, which reads the launch's inputs)."""
    groups, ratio = launch.block_count, launch.aiv_block_count // max(1, launch.block_count)
    if ratio * groups != launch.aiv_block_count or ratio == 0:
        raise CycleModelError(
            f"mix launch of @{launch.callee.string_value()}: {launch.aiv_block_count} AIV "
            f"blocks are not a multiple of its {groups} AIC blocks"
        )
    plans = []
    aic_name, aiv_name = launch.callees()
    # the workspace (a region per group) stays in L2 for the whole launch: the parts' other
    # GM traffic has the rest of it
    rest = replace(hw, l2_bytes=max(0, hw.l2_bytes - buffer_bytes(launch.args[-1])))
    for name, subs, back in ((aic_name, 1, written_back), (aiv_name, ratio, 0)):
        fn = functions.get(name)
        if fn is None:
            raise CycleModelError(f"mix launch of @{name}: no such kernel function")
        program = programs.program(fn)
        # both parts run with their group's block index, as in the executors; a group's
        # AIVs (its sub-blocks) share its GM traffic
        plans.append(
            plan_launch(
                without_workspace(program), rest, groups, options, resident, subs, written_back=back
            )
        )
    aic, aiv = plans
    mix = MixParts(
        aic.program,
        aiv.program,
        groups,
        ratio,
        aic.share.bytes_per_cycle,
        aiv.share.bytes_per_cycle,
        aic.use_flags,
        aiv.use_flags,
    )
    return mix, aic, aiv


def _mix_launch(
    planned: tuple[MixParts, LaunchPlan, LaunchPlan],
    hw: HardwareModel,
    options: CycleModelOptions,
    ops: tuple[str, ...],
) -> KernelCycles:
    """A mix launch (:func:`plan_mix`): its AIC and AIV parts co-simulated group by group
    (:mod:`.mix`)."""
    parts, aic, aiv = planned
    scheduling = scheduling_us(hw, options.launch)
    alone = (
        launch_cycles(aic, hw, "cube", ops, scheduling),
        launch_cycles(aiv, hw, "vector", ops, scheduling),
    )
    return mix_cycles(parts, group_members(aic, aiv, parts.ratio), alone, hw)


def _operand_access(
    launch: LaunchOp,
    functions: dict[str, func.FuncOp],
    programs: KernelPrograms,
    hw: HardwareModel,
    unit: str,
) -> tuple[list[int], list[int]]:
    """Positions of a launch's operands its kernel (both parts of a mix kernel) reads from
    GM and writes to GM; a host kernel reads and writes them all."""
    names = launch.callees()
    count = len(launch.args)
    if unit == "host" or any(name not in functions for name in names):
        return list(range(count)), list(range(count))
    reads: set[int] = set()
    writes: set[int] = set()
    for name in names:
        fn = functions[name]
        if TILES_ATTR not in fn.attributes:
            return list(range(count)), list(range(count))
        program = programs.program(fn)
        # the program's own arguments: an equal kernel's program was compiled from another
        for position, arg in enumerate(program.fn.body.block.args):
            read, written = program.gm_buffers.get(arg, (False, False))
            if read:
                reads.add(position)
            if written:
                writes.add(position)
    return sorted(reads), sorted(writes)


def _launch_once(
    launch: LaunchOp,
    fn: func.FuncOp,
    info: KernelInfo,
    functions: dict[str, func.FuncOp],
    programs: KernelPrograms,
    hw: HardwareModel,
    options: CycleModelOptions,
    resident: frozenset[int],
    written_back: int,
) -> KernelCycles:
    """One launch of kernel ``fn`` (``resident``: its arguments in L2 at its start;
    ``written_back``: see :func:`plan_launch`)."""
    name = fn.sym_name.data
    if info.unit == "host":
        return _host_kernel(fn, hw, options.host, info.ops, info.reason)
    if TILES_ATTR not in fn.attributes:
        raise CycleModelError(f"@{name} is not tiled (run tile-kernels first)")
    program = programs.program(fn)
    if launch.aiv_callee is not None:
        planned = plan_mix(launch, functions, programs, hw, options, resident, written_back)
        return _mix_launch(planned, hw, options, info.ops)
    blocks = launch.block_count
    return simulate_launch(
        program, hw, blocks, options, info.ops, info.unit, resident, written_back
    )


def _relaunched(known: KernelCycles, again: KernelCycles) -> KernelCycles:
    """``known`` launched once more, taking ``again``: its times become the mean over the
    launches (a relaunch may find other data in L2)."""
    n, m = known.launches, again.launches
    if again.cycles == known.cycles:
        return replace(known, launches=n + m)
    return replace(
        known,
        launches=n + m,
        cycles=round((known.cycles * n + again.cycles * m) / (n + m)),
        us=(known.us * n + again.us * m) / (n + m),
        workspace_us=(known.workspace_us * n + again.workspace_us * m) / (n + m),
    )


def _host_kernel(
    fn: func.FuncOp, hw: HardwareModel, host: HostModel, ops: tuple[str, ...], reason: str | None
) -> KernelCycles:
    work = host_work(fn)
    us = host.time_us(work.flops, work.bytes)
    return KernelCycles(
        name=fn.sym_name.data,
        unit="host",
        ops=ops,
        blocks=1,
        launches=1,
        cycles=round(us * hw.cycles_per_us),
        us=us,
        launch_us=0.0,
        bound="host",
        cube_utilisation=0.0,
        mode="host",
        host_reason=reason,
    )
