"""A kernel's walk plan (:class:`~tilegraph.lowering.analysis.kernel_walk.WalkPlan`): what
the walk does at each op is worked out once per block of IR, shared by the walks of every
block of a launch, and the walks issue what they issued without it."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import Operation

from tests.runtime.test_cycle_model import _cube_kernel, _lowered, _matmul_model
from tilegraph.lowering.analysis import kernel_walk
from tilegraph.lowering.analysis.kernel_walk import KernelWalk, WalkPlan
from tilegraph.lowering.analysis.sync_check import check_kernel, launch_blocks


def _kernel() -> tuple[func.FuncOp, int]:
    """A 197-row matmul's cube kernel on ascend910b (a ragged last block, loops over K)
    and the blocks its launch runs."""
    module = _lowered(_matmul_model(197, 256, 256), "platform=ascend910b")
    fn = _cube_kernel(module)
    return fn, launch_blocks(module)[fn.sym_name.data]


def _issued(walk: KernelWalk) -> list[tuple[Operation, tuple[int, ...]]]:
    """Each op the walk issues with the integer values of its index operands then."""
    return [
        (op, tuple(v for v in map(walk.values.get, op.operands) if isinstance(v, int)))
        for op in walk
    ]


def test_walks_sharing_a_plan_issue_what_walks_of_their_own_do():
    fn, blocks = _kernel()
    assert blocks > 1
    plan = WalkPlan()
    for block in range(blocks):
        shared = _issued(KernelWalk(fn, block, blocks, plan=plan))
        alone = _issued(KernelWalk(fn, block, blocks))
        assert shared == alone and shared
    regions = 1 + sum(len(r.blocks) for op in fn.walk() for r in op.regions if op is not fn)
    assert plan.blocks_planned == regions  # each block of IR once, for every launch block


def test_the_checker_plans_each_op_once_for_all_blocks(monkeypatch):
    fn, blocks = _kernel()
    planned: list[Operation] = []
    step = kernel_walk._step  # pyright: ignore[reportPrivateUsage]

    def counted(op: Operation):  # noqa: ANN202
        planned.append(op)
        return step(op)

    monkeypatch.setattr(kernel_walk, "_step", counted)
    check_kernel(fn, blocks)
    ops = [op for op in fn.walk() if op is not fn]
    assert sorted(map(id, planned)) == sorted(map(id, ops))  # not once per block
