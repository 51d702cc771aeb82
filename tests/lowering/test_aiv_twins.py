"""The AIVs of a core group and what they share in GM.

On a decoupled preset a mix launch gives each core group ``r`` AIVs (910B: 2) only where
its AIV part tells them apart (``tile.sub_block_idx``: the tiling shared each tile out);
a part that does not — a recurrent layer's, which rewrites its state ``Y_h`` / ``Y_c`` in
GM every step — runs on one AIV per group (:func:`tilegraph.dialects.tile.cores.
aivs_per_group`). Run on two, the twins race: one rewrites the state the other has yet to
read. Both checkers name that race (the cross-block checker of ``verify-sync`` and the
interpreter's vector clocks) whatever the schedule, and the fast executor, whose schedule
lets a twin run ahead, gives wrong numbers. With the twins gone, a GRU without
``linear_before_reset`` alternates its workspace slots like the other layers."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64

from tests.lowering.test_recurrent_cores import _lowered, noticed
from tests.lowering.test_recurrent_step import _part, _tiled
from tests.lowering.test_tile_differential import Graph, make_context, run_pipeline
from tilegraph.dialects.tile import LaunchOp, SyncBlockWaitOp
from tilegraph.lowering.analysis.barrier_check import check_blocks
from tilegraph.lowering.analysis.sync_check import SyncError, trace_kernel
from tilegraph.lowering.conversion.tiling.mix import FREE_FLAG
from tilegraph.runtime.tile_interpreter.cross_core import CrossCoreError
from tilegraph.runtime.tiles import run_tiles

KINDS = ["rnn", "gru", "lstm"]


def _layer_launch(module: ModuleOp) -> LaunchOp:
    (launch,) = [
        op
        for op in module.walk()
        if isinstance(op, LaunchOp)
        and op.is_mix
        and any(k in op.callee.string_value() for k in KINDS)
    ]
    return launch


def _with_twins(module: ModuleOp) -> ModuleOp:
    """``module`` with the layer's launch given two AIVs per core group."""
    twins = module.clone()
    launch = _layer_launch(twins)
    launch.aiv_blocks = IntegerAttr(2 * launch.block_count, i64)
    return twins


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_recurrent_layer_runs_one_aiv_per_group(kind: str, platform: str):
    module, _, _ = _lowered(kind, platform, 32)
    launch = _layer_launch(module)
    assert launch.aiv_block_count == launch.block_count


def test_a_shared_epilogue_keeps_two_aivs_per_group():
    """A matmul whose vector epilogue the AIVs share (``tile.sub_block_idx``) keeps the
    chip's two AIVs per group."""
    g = Graph()
    x = g.input([64, 48])
    y = g.b.op("matmul", x, g.const([48, 32]))
    module = g.b.build(g.b.op("tanh", y))
    run_pipeline(
        "set-target{platform=ascend910b},O2,lower-graph-to-kernels,tile-kernels",
        make_context(),
        module,
    )
    (launch,) = [op for op in module.walk() if isinstance(op, LaunchOp) and op.is_mix]
    assert launch.aiv_block_count == 2 * launch.block_count


@pytest.mark.parametrize("kind", KINDS)
def test_twin_aivs_are_a_race_both_checkers_name(kind: str):
    module, inputs, _ = _lowered(kind, "test", 32)
    twins = _with_twins(module)
    with pytest.raises(SyncError) as static:
        check_blocks(twins)
    first = str(static.value).split("\n")[0]
    assert "block 0 AIV1" in first and "block 0 AIV0" in first, first
    with pytest.raises(CrossCoreError) as dynamic:
        run_tiles(twins, inputs, executor="interpret")
    message = str(dynamic.value)
    assert "group 0 AIV1" in message and "group 0 AIV0" in message, message


def test_twin_aivs_give_the_fast_executor_wrong_numbers():
    """A GRU without ``linear_before_reset`` hands its state over mid-step; with slots
    alternating, the fast executor lets AIV0 rewrite ``Y_h`` before AIV1 reads it."""
    module, inputs, reference = _lowered("gru", "test", 32, direction="forward")
    for executor in ("interpret", "fast"):
        assert not noticed(module, inputs, reference, executor), executor
    assert noticed(_with_twins(module), inputs, reference, "fast")


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
def test_gru_without_linear_before_reset_alternates_its_slots(platform: str):
    """Each step's three hand-overs (r, then z and n after the state hand-over) take
    both workspace slots."""
    aic = _part(_tiled("gru", 16, 4, platform), "aic")
    waits = [
        i.event
        for i in trace_kernel(aic)
        if isinstance(i.op, SyncBlockWaitOp) and i.op.flag_id == FREE_FLAG and i.op.slot
    ]
    assert len(waits) == 3 * 4
    for step in range(4):
        assert len(set(waits[3 * step : 3 * step + 3])) == 2, waits
