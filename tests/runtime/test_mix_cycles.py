"""The cycle model of a mix launch: AIC and AIV co-simulated through the 2-slot workspace.

The kernel: a 1x1 convolution with a sigmoid epilogue on the ``test`` preset (decoupled),
which lowers to a mix launch of 2 groups, each AIC fixpiping 8 accumulator tiles into the
workspace and its AIV copying them out and running the sigmoid. Slowing the vector unit's
transcendental rate (a field of the preset) makes the AIV side as slow as we like without
touching the AIC side.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

import tests.lowering.test_tile_differential as differential
from tilegraph.cost_model.cycles.memo import KernelPrograms
from tilegraph.cost_model.cycles.mix import GroupRun, co_simulate, without_workspace
from tilegraph.cost_model.cycles.program import CycleModelError, KernelProgram, compile_kernel
from tilegraph.cost_model.cycles.simulate import (
    CycleModelOptions,
    launch_cycles,
    plan_launch,
    plan_mix,
    simulate_module,
)
from tilegraph.dialects.tile import CopyFlatOp, FixpipeOp, LaunchOp, SyncBlockSetOp, SyncBlockWaitOp
from tilegraph.dialects.tile.cross_core import CrossCoreOp
from tilegraph.dialects.tile.sync import PIPES
from tilegraph.hardware import HardwareModel, hardware_preset
from tilegraph.lowering.analysis.buffers import accesses
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import lowering_pipeline, run_pipeline

TEST = hardware_preset("test")
TILES = 8
"""Accumulator tiles per group: 24 rows of 3 per tile (the test preset's small L0C)."""
SLOWDOWNS = (32, 4, 1)
"""Transcendental elements per cycle of the vector unit: the preset's, then slower."""


def _conv_sigmoid(g: differential.Graph) -> list:
    x = g.input([1, 20, 24, 9], "NCHW")
    return [g.op("sigmoid", g.op("conv2d", x, g.const([24, 20, 1, 1], "NCHW")))]


def _lowered() -> ModuleOp:
    module, _ = differential.Case("mix", _conv_sigmoid, differential.CONV).module()
    run_pipeline("set-target{platform=test},O2", make_context(), module)
    run_pipeline(lowering_pipeline(), make_context(), module)
    return module


@pytest.fixture(scope="module")
def module() -> ModuleOp:
    return _lowered()


def _slow(rate: int) -> HardwareModel:
    return replace(TEST, vector_transcendental_elems_per_cycle=rate)


def _launch(module: ModuleOp) -> tuple[LaunchOp, dict[str, func.FuncOp]]:
    (launch,) = [op for op in module.walk() if isinstance(op, LaunchOp) and op.is_mix]
    return launch, {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}


def _group(module: ModuleOp, hw: HardwareModel, group: int = 0) -> GroupRun:
    launch, functions = _launch(module)
    parts, _, _ = plan_mix(launch, functions, KernelPrograms(hw), hw, CycleModelOptions())
    return co_simulate(parts, group, hw.cross_core_flag_cycles, trace=True)


def _alone(module: ModuleOp, hw: HardwareModel) -> tuple[float, float]:
    """Cycles of the AIC and of the AIV part, each simulated alone."""
    launch, functions = _launch(module)
    _, aic, aiv = plan_mix(launch, functions, KernelPrograms(hw), hw, CycleModelOptions())
    return launch_cycles(aic, hw, "cube", (), 0.0).cycles, launch_cycles(
        aiv, hw, "vector", (), 0.0
    ).cycles


def _instances(run, program: KernelProgram, kind: type) -> list[tuple[float, float]]:
    """(start, end) of every instance of the workspace access of type ``kind``."""
    workspace = program.fn.body.block.args[-1]
    return [
        (s.start, s.end)
        for s in run.slices
        if isinstance(op := program.records[s.record].op, kind)
        and workspace in (*accesses(op)[0], *accesses(op)[1])
    ]


def _programs(module: ModuleOp, hw: HardwareModel) -> tuple[KernelProgram, KernelProgram]:
    launch, functions = _launch(module)
    aic, aiv = launch.callees()
    return compile_kernel(functions[aic], hw), compile_kernel(functions[aiv], hw)


@pytest.mark.parametrize("rate", SLOWDOWNS)
def test_the_aic_runs_at_most_two_tiles_ahead_of_the_aiv(module, rate):
    """Tile k's fixpipe into slot k % 2 waits for "free" of tile k - 2 (set right after its
    copy out, on MTE2): it starts no earlier than that copy's end plus the flag's trip; the
    AIV's copy of tile k waits for "ready" of tile k, set right after its fixpipe."""
    hw = _slow(rate)
    run = _group(module, hw)
    aic, aiv = _programs(module, hw)
    fixpipes = _instances(run.aic, aic, FixpipeOp)
    # the test preset's groups are 1 AIC : 2 AIV, each AIV copying its share of each tile
    copies = [_instances(a, aiv, CopyFlatOp) for a in run.aivs]
    assert len(copies) == TEST.aiv_per_aic == 2
    assert len(fixpipes) == TILES and all(len(c) == TILES for c in copies)
    trip = hw.cross_core_flag_cycles
    for k in range(TILES):
        assert all(c[k][0] >= fixpipes[k][1] + trip for c in copies)
        if k >= 2:  # "free" of a slot takes both AIVs' sets
            assert fixpipes[k][0] >= max(c[k - 2][1] for c in copies) + trip
    # the AIC ends waiting for both slots' last "free": after the last copies, plus the trip
    # and the wait's own cycle
    assert run.aic.cycles >= max(c[-1][1] for c in copies) + trip + 1


def test_a_slow_aiv_makes_the_aic_wait(module):
    """The AIC part alone does not depend on the vector unit; co-simulated, the AIC's end
    grows with the AIV's cost. A bound by hand: the AIV's UB tile is double-buffered, so
    its copy of the last tile waits for the sigmoid of tile TILES - 3, after the sigmoids
    of TILES - 2 tiles in a row on V; the AIC ends after that copy (its final wait for
    "free"), so past (TILES - 2) tiles' worth of V time."""
    aic_alone = {rate: _alone(module, _slow(rate))[0] for rate in SLOWDOWNS}
    assert len(set(aic_alone.values())) == 1
    runs = {rate: _group(module, _slow(rate)) for rate in SLOWDOWNS}
    ends = [runs[rate].aic.cycles for rate in SLOWDOWNS]
    assert ends == sorted(ends) and ends[-1] > ends[0]
    slowest = runs[SLOWDOWNS[-1]]
    assert slowest.aic.cycles > aic_alone[SLOWDOWNS[-1]]
    per_tile = slowest.aivs[0].busy[PIPES.index("V")] / TILES
    assert slowest.aic.cycles > (TILES - 2) * per_tile


@pytest.mark.parametrize("rate", SLOWDOWNS)
@pytest.mark.parametrize("latency", [0, 100, 1000])
def test_a_mix_launch_takes_between_its_slower_part_and_both_parts_plus_the_flags(
    module, rate, latency
):
    """max(AIC alone, AIV alone) <= mix <= AIC alone + AIV alone + one trip per cross-core
    wait of a group (the AIC's TILES + 2, the AIV's TILES); ``workspace_us`` is the gap to
    the lower bound."""
    hw = replace(_slow(rate), cross_core_flag_cycles=latency)
    aic, aiv = _alone(module, hw)
    (kernel,) = simulate_module(module, hw=hw).kernels
    assert kernel.unit == "mix"
    waits = (TILES + 2) + TILES
    assert max(aic, aiv) <= kernel.cycles <= aic + aiv + waits * (latency + 1)
    assert kernel.workspace_us == pytest.approx(
        kernel.us - max(aic, aiv) / hw.cycles_per_us, abs=2e-3
    )
    assert kernel.workspace_us >= 0.0
    assert simulate_module(module, hw=hw).workspace_us == kernel.workspace_us


def test_the_workspace_is_not_hbm_traffic(module):
    """The workspace's bytes (each part moves TILES tiles of it per group) leave the launch's
    GM traffic; the other buffers' stay."""
    aic, aiv = _programs(module, TEST)
    options = CycleModelOptions()
    for program, direction in ((aic, "write"), (aiv, "read")):
        workspace = program.fn.body.block.args[-1]
        # the AIV part has one copy per share size; sub-block 0 (the one planned, with
        # blocks = groups) copies the larger share, ceil(3 rows / 2)
        charged = max(
            r.gm_bytes
            for r in program.records
            if workspace in (*accesses(r.op)[0], *accesses(r.op)[1])
            and isinstance(r.op, FixpipeOp | CopyFlatOp)
        )
        blocks = 2
        before = plan_launch(program, TEST, blocks, options).traffic
        after = plan_launch(without_workspace(program), TEST, blocks, options).traffic
        assert getattr(before, direction) - getattr(after, direction) == blocks * TILES * charged
        other = "read" if direction == "write" else "write"
        assert getattr(before, other) == getattr(after, other)


def _without(module: ModuleOp, kind: type, core: str) -> ModuleOp:
    """``module`` without the first cross-core op of type ``kind`` issued on ``core``."""
    flags = [o for o in module.walk() if isinstance(o, CrossCoreOp)]
    op = next(o for o in flags if isinstance(o, kind) and o.core == core)
    op.detach()
    op.erase()
    return module


@pytest.mark.parametrize(
    ("kind", "core", "says"),
    [
        (SyncBlockSetOp, "aiv", "no sync_block_set releases"),  # the first "free": AIC hangs
        (SyncBlockSetOp, "aic", "no sync_block_set releases"),  # a "ready": the AIV hangs
        (SyncBlockWaitOp, "aic", "never waited for"),  # a "free" left set
    ],
)
def test_unbalanced_flags_are_a_clear_error_naming_the_kernel(kind, core, says):
    module = _without(_lowered(), kind, core)
    launch, _ = _launch(module)
    with pytest.raises(CycleModelError, match=says) as error:
        simulate_module(module)
    assert launch.callee.string_value() in str(error.value)


def test_a_groups_two_aivs_both_count_in_its_gm_traffic(module):
    """Each AIV of a group copies its share of every tile out of the workspace: sub-block 0
    the first ceil(3 / 2) = 2 rows of a 3-row tile, sub-block 1 the last one. Planned with
    both sub-blocks, the AIV part reads 3/2 of what sub-block 0 alone reads."""
    _, aiv = _programs(module, TEST)
    options = CycleModelOptions()
    alone = plan_launch(aiv, TEST, 2, options).traffic.read
    both = plan_launch(aiv, TEST, 2, options, sub_blocks=2).traffic.read
    assert both == pytest.approx(alone * 3 / 2, rel=1e-3)
