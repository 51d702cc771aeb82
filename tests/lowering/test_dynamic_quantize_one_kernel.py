"""DynamicQuantizeLinear as one kernel (``fuse-dynamic-quantize`` and
:mod:`tilegraph.lowering.conversion.tiling.dynamic_quantize`): every output equal to
onnxruntime's bit for bit on each preset through both executors (odd sizes, one block and
several, inputs of one sign, constant and all-zero ones); the blocks' exchange of partial
extremes across the all-core barrier, which the cross-block checker and the interpreter's
race detector accept and catch when it is removed; the per-launch workspace of the
partials; the soft barrier's GM workspace zero-filled per launch (a launch that reuses
one without the fill is caught by the interpreter), its UB workspace in the UB plan, and
the memset's task in the cycle model.

The op reads ND tensors only (its facts): no blocked input has padding lanes that could hold
NaN. A ragged chunk's lanes past the tensor are loaded as 0, which inputs of one sign check
(0 would be wrong there if the range did not include it)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnxruntime as ort
import pytest
from xdsl.dialects import func

import tilegraph
from tests.lowering.test_dynamic_quantize_kernels import _dql_model
from tilegraph.cost_model.cycles.simulate import scheduling_us, simulate_module
from tilegraph.dialects.tile import AllocOp, LaunchOp, SyncAllOp, memref_shape
from tilegraph.dialects.tile.barrier import ZERO_FILL_ATTR, zero_filled
from tilegraph.dialects.tile.base import scope_of
from tilegraph.hardware import hardware_preset
from tilegraph.lowering.analysis.barrier_check import check_blocks
from tilegraph.lowering.analysis.buffers import placement
from tilegraph.lowering.analysis.sync_check import SyncError
from tilegraph.lowering.conversion.tiling.dynamic_quantize import (
    MIN_BLOCK_ELEMENTS,
    PARTIALS_NAME,
)
from tilegraph.runtime.tile_interpreter.cross_core import CrossCoreError
from tilegraph.runtime.tiles import run_tiles

PRESETS = ["test", "ascend910b", "ascend310p"]
EXECUTORS = ["fast", "interpret"]
LARGE = [37, 1001]
"""Several blocks on every preset (odd: ragged chunks and a short last block)."""
SMALL = [3, 17]
"""One block: no barrier."""


def _input(shape: Sequence[int], kind: str) -> np.ndarray:
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(np.float32) * np.float32(3)
    if kind == "all_positive":
        return np.abs(x) + np.float32(0.5)
    if kind == "all_negative":
        return -np.abs(x) - np.float32(0.5)
    if kind == "constant":
        return np.full(shape, -0.75, np.float32)
    if kind == "all_zero":
        return np.zeros(shape, np.float32)
    return x


def _compiled(shape: Sequence[int], platform: str, executor: str = "fast"):
    return tilegraph.compile(
        _dql_model(shape), precision="int8", executor=executor, platform=platform
    )


def _kernel(module, name: str) -> func.FuncOp:
    return next(f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name)


def _launch(module) -> LaunchOp:
    (launch,) = [op for op in module.walk() if isinstance(op, LaunchOp)]
    return launch


def _assert_like_onnxruntime(shape, x, ours) -> None:
    model = _dql_model(shape)
    theirs = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    for got, want in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("platform", PRESETS)
@pytest.mark.parametrize("shape", [SMALL, LARGE], ids=["one_block", "blocks"])
def test_one_kernel_equals_onnxruntime(shape, platform: str, executor: str):
    compiled = _compiled(shape, platform, executor)
    assert [k.ops for k in compiled.kernels] == [
        ("graph.dynamic_quantize_params", "graph.quantize_linear")
    ]
    x = _input(shape, "mixed")
    _assert_like_onnxruntime(shape, x, compiled(x=x))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("platform", ["ascend910b", "ascend310p"])
@pytest.mark.parametrize("kind", ["all_positive", "all_negative", "constant", "all_zero"])
def test_one_sign_constant_and_zero_inputs(kind: str, platform: str, executor: str):
    """The zero range's scale 1 and zero point 0 (onnxruntime's), a constant's one value,
    and ranges that only 0 closes, over several blocks."""
    compiled = _compiled(LARGE, platform, executor)
    x = _input(LARGE, kind)
    _assert_like_onnxruntime(LARGE, x, compiled(x=x))


@pytest.mark.parametrize("platform", PRESETS)
def test_blocks_meet_at_the_presets_barrier(platform: str):
    """Several blocks: hard barrier of the AIVs on a decoupled preset, soft (with both
    workspaces) on 310P; the partials' workspace allocated for the launch. One block: no
    barrier, no workspace."""
    hw = hardware_preset(platform)
    module = _compiled(LARGE, platform).module
    launch = _launch(module)
    assert 1 < launch.block_count <= hw.vector_cores
    assert launch.block_count <= -(-LARGE[0] * LARGE[1] // MIN_BLOCK_ELEMENTS)
    fn = _kernel(module, launch.callee.string_value())
    (barrier,) = [op for op in fn.walk() if isinstance(op, SyncAllOp)]
    assert barrier.cores.data == "aiv"
    assert barrier.mode.data == ("soft" if hw.coupled else "hard")
    names = [a.name_hint for a in fn.body.block.args]
    assert PARTIALS_NAME in names
    partials = fn.body.block.args[names.index(PARTIALS_NAME)]
    assert tuple(memref_shape(partials.type)) == (2 * launch.block_count, 8)

    small = _compiled(SMALL, platform).module
    one = _launch(small)
    assert one.block_count == 1
    fn = _kernel(small, one.callee.string_value())
    assert not [op for op in fn.walk() if isinstance(op, SyncAllOp)]
    assert PARTIALS_NAME not in [a.name_hint for a in fn.body.block.args]


def _without_barrier(module):
    mutated = module.clone()
    for op in [op for op in mutated.walk() if isinstance(op, SyncAllOp)]:
        op.detach()
        op.erase()
    return mutated


@pytest.mark.parametrize("platform", PRESETS)
def test_checkers_catch_the_removed_barrier(platform: str):
    """The kernel as lowered passes the cross-block checker and runs in lockstep under the
    interpreter's race detector; without its barrier the checker names the partials'
    exchange, and the blocks (no longer in lockstep: one after the other) read partial
    extremes not yet written — both executors give wrong numbers."""
    module = _compiled(LARGE, platform).module
    check_blocks(module)
    x = _input(LARGE, "mixed")
    want = run_tiles(module, [x], executor="interpret")
    _assert_like_onnxruntime(LARGE, x, want)
    mutated = _without_barrier(module)
    with pytest.raises(SyncError, match="no all-core barrier") as caught:
        check_blocks(mutated)
    assert PARTIALS_NAME in str(caught.value)
    for executor in EXECUTORS:
        got = run_tiles(mutated, [x], executor=executor)
        assert any(not np.array_equal(a, b) for a, b in zip(got, want, strict=True)), executor


def _launched_twice(module, fill_again: bool):
    """The module with its launch repeated on the same workspaces (the second zero-filling
    the soft barrier's workspace or not)."""
    twice = module.clone()
    launch = _launch(twice)
    again = launch.clone()
    if not fill_again:
        del again.attributes[ZERO_FILL_ATTR]
    block = launch.parent_block()
    assert block is not None
    block.insert_op_after(again, launch)
    return twice


def test_soft_barrier_workspace_is_zero_filled_per_launch():
    """310P: the launch zero-fills its barrier's GM workspace; the same workspace launched
    again without the fill holds the first launch's arrivals, which the interpreter
    reports (with the fill, the second launch is right)."""
    module = _compiled(LARGE, "ascend310p").module
    launch = _launch(module)
    fn = _kernel(module, launch.callee.string_value())
    (position,) = zero_filled(launch)
    barrier = next(op for op in fn.walk() if isinstance(op, SyncAllOp))
    assert fn.body.block.args[position] is barrier.workspace
    x = _input(LARGE, "mixed")
    want = run_tiles(module, [x], executor="interpret")
    for executor in EXECUTORS:
        got = run_tiles(_launched_twice(module, True), [x], executor=executor)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(CrossCoreError, match="not zero-filled before the launch"):
        run_tiles(_launched_twice(module, False), [x], executor="interpret")


def test_soft_barrier_ub_workspace_is_in_the_ub_plan():
    """310P: the soft barrier's UB workspace (32 bytes per block) is a UB buffer of the
    kernel, placed by the UB plan apart from the buffers live across the barrier."""
    module = _compiled(LARGE, "ascend310p").module
    launch = _launch(module)
    fn = _kernel(module, launch.callee.string_value())
    barrier = next(op for op in fn.walk() if isinstance(op, SyncAllOp))
    ub = barrier.ub_workspace
    assert ub is not None and isinstance(ub.owner, AllocOp) and scope_of(ub) == "UB"
    assert tuple(memref_shape(ub.type)) == (8 * launch.block_count,)
    found = placement(ub)
    assert found is not None
    _, (start,), nbytes = found
    assert nbytes == 32 * launch.block_count
    # the buffers live across the barrier (the chunk the block quantises after it, the
    # extremes) keep their bytes; buffers dead there may share the workspace's
    live = {"x_ub", "lo_ub", "hi_ub"}
    kept = [
        op.result for op in fn.walk() if isinstance(op, AllocOp) and op.result.name_hint in live
    ]
    assert len(kept) == len(live)
    for value in kept:
        other = placement(value)
        assert other is not None
        for begin in other[1]:
            assert begin + other[2] <= start or start + nbytes <= begin, value.name_hint


@pytest.mark.parametrize(("platform", "tasks"), [("ascend910b", 1), ("ascend310p", 2)])
def test_the_memset_is_a_task_of_the_launch(platform: str, tasks: int):
    """The cycle model schedules the soft barrier's memset as one more task."""
    module = _compiled(LARGE, platform).module
    hw = hardware_preset(platform)
    (kernel,) = simulate_module(module).kernels
    assert kernel.launch_us == pytest.approx(tasks * scheduling_us(hw, "sunk"))
