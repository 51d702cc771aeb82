"""The all-core barrier of a recurrent layer shared over the cores (``tile.sync_all``):
its soft form's GM workspace is allocated, planned and reported; the checkers see a
missing barrier across blocks; both executors give wrong numbers (or a lockstep error)
without it on every preset."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from xdsl.dialects import func

from tests.lowering.test_recurrent_cores import _barriers, _lowered, noticed
from tests.lowering.test_recurrent_fences import _lstm
from tests.lowering.test_tile_differential import make_context, run_pipeline
from tilegraph.dialects.tile import LaunchOp, memref_shape
from tilegraph.lowering.analysis.barrier_check import check_blocks
from tilegraph.lowering.analysis.sync_check import SyncError, check_sync
from tilegraph.lowering.transforms.plan_memory import memory_report
from tilegraph.passes.pipelines import NPU_PASSES
from tilegraph.runtime.tile_interpreter.cross_core import CrossCoreError
from tilegraph.runtime.tiles import run_tiles
from tilegraph.tools.run.cli import run

PRESETS = ["test", "ascend910b", "ascend310p"]
KINDS = ["rnn", "gru", "lstm"]


def _shared(kind: str, platform: str):
    """A bidirectional layer over two blocks (three on 910B: hidden 48), synchronised
    and planned."""
    hidden = 48 if platform == "ascend910b" else 32
    module, inputs, reference = _lowered(kind, platform, hidden, direction="bidirectional")
    run_pipeline(",".join(NPU_PASSES), make_context(), module)
    return module, inputs, reference


@pytest.mark.parametrize("platform", PRESETS)
@pytest.mark.parametrize("kind", KINDS)
def test_the_checker_catches_every_removed_barrier(kind: str, platform: str):
    module, _, _ = _shared(kind, platform)
    assert check_sync(module) >= 1  # the kernel as lowered passes
    count = len(_barriers(module))
    assert count >= 2 * 2  # a barrier per step and direction at least
    for i in range(count):
        mutated = module.clone()
        victim = _barriers(mutated)[i]
        victim.detach()
        victim.erase()
        if i == 0:  # the whole checker (the pipes too: slow), once
            with pytest.raises(SyncError):
                check_sync(mutated)
        with pytest.raises(SyncError) as caught:  # and it is the cross-block check's finding
            check_blocks(mutated)
        message = str(caught.value)
        # the layer's kernel (its AIC part; its number is 2 after a hoisted projection)
        assert re.match(rf"@{kind}_\d+_mix_aic|@{kind}_\d+:", message), message
        assert "with no all-core barrier (tile.sync_all) between them" in message
        assert "GM %v3_out" in message or "GM %v3_out_1" in message  # Y or Y_h


def _planned(kind: str, platform: str, hidden: int):
    module, inputs, reference = _lowered(kind, platform, hidden)
    run_pipeline(",".join(NPU_PASSES), make_context(), module)
    return module


@pytest.mark.parametrize(("hidden", "blocks"), [(32, 2), (128, 8)])
def test_a_soft_barrier_gets_its_planned_workspace(hidden: int, blocks: int):
    """310P: 32 bytes per block, an argument of the kernel allocated by the host before
    its launch, placed by plan-memory among the buffers and reported."""
    module = _planned("lstm", "ascend310p", hidden)
    (launch,) = [op for op in module.walk() if isinstance(op, LaunchOp)]
    assert launch.block_count == blocks
    workspace = launch.args[-1]
    assert workspace.name_hint == "sync_workspace"
    assert tuple(memref_shape(workspace.type)) == (blocks * 8,)  # i32: 32 B per block
    kernel = next(
        f
        for f in module.ops
        if isinstance(f, func.FuncOp) and f.sym_name.data == launch.callee.string_value()
    )
    arg = kernel.body.block.args[-1]
    assert {op.workspace for op in _barriers(module)} == {arg}
    report = memory_report(module)
    assert report.barrier_workspace == 32 * blocks
    assert report.peak >= report.barrier_workspace


def test_a_hard_barrier_has_no_workspace():
    module = _planned("lstm", "ascend910b", 48)
    assert all(op.workspace is None for op in _barriers(module))
    assert memory_report(module).barrier_workspace == 0


def test_json_reports_the_barrier_workspace(tmp_path):
    model = _lstm(32, 8, "forward")  # hidden 32: two AI cores on 310P
    path, report_path = tmp_path / "lstm.onnx", tmp_path / "report.json"
    path.write_bytes(model.SerializeToString())
    args = [str(path), "--platform", "ascend310p", "--json", str(report_path)]
    assert run(args) == 0
    memory = json.loads(report_path.read_text())["memory"]
    assert memory["barrier_workspace"] == 2 * 32  # hidden 32: two AI cores


@pytest.mark.parametrize("platform", PRESETS)
@pytest.mark.parametrize("kind", KINDS)
def test_both_executors_notice_each_removed_barrier(kind: str, platform: str):
    """Each barrier removed in turn (the others kept, so the blocks still run in
    lockstep): the interpreter reports the unordered GM exchange between its interleaved
    core groups; the fast executor, which lets a group run ahead as far as its flags and
    the remaining barriers allow, reads stale columns and gives wrong numbers (or reports
    a lockstep error)."""
    module, inputs, reference = _lowered(kind, platform, 32, direction="bidirectional", seq=3)
    for executor in ("interpret", "fast"):  # the kernel as lowered is right
        for got, want in zip(run_tiles(module, inputs, executor=executor), reference, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    for i in range(len(_barriers(module))):
        mutated = module.clone()
        victim = _barriers(mutated)[i]
        victim.detach()
        victim.erase()
        with pytest.raises(CrossCoreError, match="no all-core barrier .* between them"):
            run_tiles(mutated, inputs, executor="interpret")
        assert noticed(mutated, inputs, reference, "fast"), f"fast: barrier #{i} unnoticed"


def test_the_interpreters_race_names_kernel_buffer_and_groups():
    module, inputs, _ = _lowered("lstm", "ascend910b", 32)
    for op in _barriers(module):
        op.detach()
        op.erase()
    with pytest.raises(CrossCoreError) as caught:
        run_tiles(module, inputs, executor="interpret")
    message = str(caught.value)
    assert message.startswith("@lstm_1_mix_aic: group ")
    assert "AIC reads GM %v3_out, which group " in message and "AIV" in message
