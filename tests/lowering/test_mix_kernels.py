"""Mix kernels on decoupled presets: the AIC / AIV split, its executors and its checker.

A convolution with a vector epilogue (conv -> * per-channel -> + per-channel -> sigmoid) on
the ``test`` preset (decoupled, like 910B) lowers to a mix launch of an AIC and an AIV
function over a 2-slot GM workspace; on ``ascend310p`` (coupled) it stays one cube kernel.
Both executors give the reference's numbers; removing any one cross-core flag makes both
executors report it (a deadlock, a flag left set) or give wrong numbers, and the pipe-queue
checker catch it.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp

import tests.lowering.test_tile_differential as differential
from tilegraph.cost_model.cycles.simulate import simulate_module
from tilegraph.cost_model.kernel_report import kernel_report
from tilegraph.dialects.tile import (
    AllocOp,
    CopyFlatOp,
    LaunchOp,
    SubBlockIdxOp,
    SyncBlockSetOp,
    SyncBlockWaitOp,
    scope_of,
)
from tilegraph.dialects.tile.base import CUBE_SCOPES
from tilegraph.dialects.tile.cross_core import CrossCoreOp
from tilegraph.dialects.tile.workspace import container_bytes
from tilegraph.lowering.analysis.kernel_attrs import mix_part
from tilegraph.lowering.analysis.sync_check import SyncError, check_sync
from tilegraph.lowering.analysis.target_rules import target_violations
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import lowering_pipeline, run_pipeline
from tilegraph.runtime import run_reference
from tilegraph.runtime.tile_interpreter.cross_core import CrossCoreError
from tilegraph.runtime.tiles import run_tiles

EXECUTORS = ("interpret", "fast")


def lowered(
    platform: str, build: differential.Builder = differential.conv_per_channel_epilogue
) -> tuple[ModuleOp, list[np.ndarray], list[np.ndarray]]:
    case = differential.Case("mix", build, differential.CONV)
    module, inputs = case.module()
    run_pipeline(f"set-target{{platform={platform}}},O2", make_context(), module)
    reference = run_reference(module, inputs)
    run_pipeline(lowering_pipeline(), make_context(), module)
    return module, inputs, reference


@pytest.fixture(scope="module")
def mix() -> tuple[ModuleOp, list[np.ndarray], list[np.ndarray]]:
    return lowered("test")


def _functions(module: ModuleOp) -> dict[str, func.FuncOp]:
    return {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}


def _mix_launches(module: ModuleOp) -> list[LaunchOp]:
    return [op for op in module.walk() if isinstance(op, LaunchOp) and op.is_mix]


def test_decoupled_preset_lowers_a_mix_kernel(mix):
    module, _, _ = mix
    (launch,) = _mix_launches(module)
    functions = _functions(module)
    aic, aiv = (functions[name] for name in launch.callees())
    assert (mix_part(aic), mix_part(aiv)) == ("aic", "aiv")
    assert launch.aiv_block_count == 2 * launch.block_count  # the test preset's 1 AIC : 2 AIV
    assert any(isinstance(op, SubBlockIdxOp) for op in aiv.walk())
    assert not any(isinstance(op, SubBlockIdxOp) for op in aic.walk())
    workspace = launch.args[-1]
    assert scope_of(workspace) == "GM"
    for fn in functions.values():  # no function uses both the AIC's buffers and UB
        scopes = {scope_of(op.result) for op in fn.walk() if isinstance(op, AllocOp)}
        assert not (scopes & CUBE_SCOPES and "UB" in scopes), fn.sym_name.data
    assert target_violations(module) == []
    assert check_sync(module) >= 2


def test_coupled_preset_keeps_one_cube_kernel():
    module, _, _ = lowered("ascend310p")
    assert _mix_launches(module) == []
    assert "tile.sync_block" not in str(module)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_mix_kernel_matches_the_reference(mix, executor):
    module, inputs, reference = mix
    for got, want in zip(run_tiles(module, inputs, executor=executor), reference, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def _cross_core_ops(module: ModuleOp) -> list[CrossCoreOp]:
    return [op for op in module.walk() if isinstance(op, CrossCoreOp)]


def _describe(op: CrossCoreOp) -> str:
    kind = "set" if isinstance(op, SyncBlockSetOp) else "wait"
    return f"{kind}-{op.mode.data}-flag{op.flag_id}-{'slot' if op.slot else 'once'}"


def _without_flag(index: int) -> tuple[ModuleOp, list[np.ndarray], list[np.ndarray], str]:
    module, inputs, reference = lowered("test")
    op = _cross_core_ops(module)[index]
    what = _describe(op)
    op.detach()
    op.erase()
    return module, inputs, reference, what


FLAG_COUNT = 8
"""The mix kernel's cross-core ops: per part one set and one wait per tile (with a slot;
the AIV's reach both AIVs of the group / are set by each of them), the AIV's two starting
"free" sets, the AIC's two final waits."""


def test_the_kernel_has_every_flag_of_the_protocol(mix):
    module, _, _ = mix
    ops = _cross_core_ops(module)
    assert len(ops) == FLAG_COUNT
    assert sum(isinstance(op, SyncBlockWaitOp) for op in ops) == 4


@pytest.mark.parametrize("index", range(FLAG_COUNT))
def test_a_removed_cross_core_flag_is_caught(index):
    module, inputs, reference, what = _without_flag(index)
    with pytest.raises(SyncError):
        check_sync(module)
    for executor in EXECUTORS:
        try:
            outputs = run_tiles(module, inputs, executor=executor)
        except CrossCoreError:
            continue  # a deadlock, an overflow or a flag left set
        wrong = any(
            not np.allclose(got, want, rtol=1e-4, atol=1e-5)
            for got, want in zip(outputs, reference, strict=True)
        )
        assert wrong, f"{executor}: removing {what} went unnoticed"


def test_kernel_report_names_the_mix_kernel_and_its_parts(mix):
    module, _, _ = mix
    (entry,) = [k.as_dict() for k in kernel_report(module) if k.unit == "mix"]
    assert [(p["core"], p["unit"]) for p in entry["parts"]] == [("aic", "cube"), ("aiv", "vector")]
    assert entry["cross_core_flags"] == FLAG_COUNT
    (launch,) = _mix_launches(module)
    assert entry["workspace_bytes"] == container_bytes(launch.args[-1].type) > 0
    assert simulate_module(module).kernels  # the cycle model runs a mix launch


def _share_copies(module: ModuleOp) -> list[CopyFlatOp]:
    """The AIV part's copies of its share of a workspace slot (one per share size)."""
    return [
        op
        for op in module.walk()
        if isinstance(op, CopyFlatOp) and scope_of(op.src) == "GM" and scope_of(op.dst) == "UB"
    ]


def test_the_two_aivs_of_a_group_share_the_tile(mix):
    module, _, _ = mix
    copies = _share_copies(module)
    assert len(copies) == 2  # 3 rows of the tile: 2 for sub-block 0, 1 for sub-block 1
    (launch,) = _mix_launches(module)
    slots = 2 * launch.block_count  # two per core group
    per_slot = container_bytes(launch.args[-1].type) // 4 // slots  # f32 elements of one slot
    assert sorted(op.count.value.data for op in copies) == [per_slot // 3, 2 * per_slot // 3]


def _aivs_take_the_same_share() -> tuple[ModuleOp, list[np.ndarray], list[np.ndarray]]:
    """Every AIV computes its share as sub-block 0 would (both copy and store the first
    rows; the last rows of every tile are never written)."""
    module, inputs, reference = lowered("test")
    for query in [op for op in module.walk() if isinstance(op, SubBlockIdxOp)]:
        zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
        query.parent_block().insert_op_after(zero, query)  # type: ignore[union-attr]
        query.result.replace_all_uses_with(zero.result)
    return module, inputs, reference


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_mutated_sub_block_split_gives_wrong_numbers(executor):
    module, inputs, reference = _aivs_take_the_same_share()
    (got,) = run_tiles(module, inputs, executor=executor)
    assert not np.allclose(got, reference[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_one_element_output_runs_its_epilogue_on_the_accumulator_tile(executor):
    """A QDQ head's last Gemm ([1, 40] x [40, 1]) quantised, dequantised and through a
    sigmoid, fused on 910B: the AIVs' epilogue reads their shares of the padded 16x16
    accumulator tile, so its vector ops work on the share's shape (they once took the
    one-element output's tile, a shape error in both executors)."""
    module, inputs, reference = lowered("ascend910b", differential.linear_one_element_sigmoid)
    assert len(_mix_launches(module)) == 1
    (got,) = run_tiles(module, inputs, executor=executor)
    np.testing.assert_allclose(got, reference[0], rtol=1e-4, atol=1e-5)


def conv_scalar_weight_hard_swish(g: differential.Graph) -> list:
    """A conv's epilogue with a one-element weight, as Paddle writes hard-swish
    (``x * hard_sigmoid(x * w)``, ``w`` of shape [1]): the weight is NCHW-formatted at rank
    1 (PP-OCRv4's detector; the epilogue's channel count once read its dim 1)."""
    c = g.op("conv2d", g.input([2, 3, 16, 20], "NCHW"), g.const([8, 3, 3, 3]), pads=[1, 1, 1, 1])
    return [g.op("mul", g.op("hard_sigmoid", g.op("mul", c, g.const([1]))), c)]


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_one_element_weight_in_a_conv_epilogue(executor):
    module, inputs, reference = lowered("ascend910b", conv_scalar_weight_hard_swish)
    assert len(_mix_launches(module)) == 1
    (got,) = run_tiles(module, inputs, executor=executor)
    np.testing.assert_allclose(got, reference[0], rtol=1e-4, atol=1e-5)
