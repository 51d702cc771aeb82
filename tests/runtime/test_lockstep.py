"""A launch's core groups run together in the fast executor (``fast_executor/lockstep.py``):
a recurrent layer shared over the cores (an all-core barrier per step) gives what it gives
group by group and what the interpreter gives; a kernel the cross-block checker rejects (a
barrier removed inside the steps) falls back to group by group and still gives wrong
numbers; a wrong block offset run together gives wrong numbers in both executors; flash
attention's mix launch (no barrier, its work loop shared out by block) runs together."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp

import tilegraph
from tests.lowering.test_flash_attention import CASES, _attention
from tests.lowering.test_recurrent_cores import _lowered, noticed
from tilegraph.dialects import index_arith
from tilegraph.dialects.tile import BlockIdxOp, LaunchOp, SyncAllOp
from tilegraph.lowering.analysis.kernel_attrs import mix_part
from tilegraph.runtime import tiles
from tilegraph.runtime.fast_executor import compile_module, lockstep
from tilegraph.runtime.tiles import run_tiles

PLATFORM, HIDDEN = "ascend910b", 48
"""Three core groups (16 columns of ``h`` each), an AIV barrier per step."""


def _launch(module: ModuleOp) -> LaunchOp:
    (launch,) = [
        op
        for op in module.walk()
        if isinstance(op, LaunchOp) and any(k in op.callee.string_value() for k in ("gru", "lstm"))
    ]
    return launch


def _fast(module: ModuleOp, inputs, fewest: int, monkeypatch) -> list[np.ndarray]:
    """The fast executor's outputs with launches of ``fewest`` groups or more together."""
    monkeypatch.setattr(lockstep, "FEWEST_GROUPS", fewest)
    monkeypatch.setattr(tiles, "_FAST", {})  # compile afresh under this setting
    return run_tiles(module, inputs, executor="fast")


def _together(module: ModuleOp, monkeypatch) -> bool:
    monkeypatch.setattr(lockstep, "FEWEST_GROUPS", 2)
    return compile_module(module).lockstep_launch(_launch(module)) is not None


def _launches_together(module: ModuleOp, monkeypatch) -> list[LaunchOp]:
    """The mix launches whose groups run together (from two groups on)."""
    monkeypatch.setattr(lockstep, "FEWEST_GROUPS", 2)
    compiled = compile_module(module)
    launches = [op for op in module.walk() if isinstance(op, LaunchOp) and op.is_mix]
    return [op for op in launches if compiled.lockstep_launch(op) is not None]


@pytest.mark.parametrize("kind", ["gru", "lstm"])
def test_groups_together_give_what_group_by_group_gives(kind: str, monkeypatch):
    module, inputs, reference = _lowered(kind, PLATFORM, HIDDEN, seq=4)
    assert _launch(module).block_count == 3
    assert _together(module, monkeypatch)
    together = _fast(module, inputs, 2, monkeypatch)
    by_group = _fast(module, inputs, 1 << 30, monkeypatch)
    interpreted = run_tiles(module, inputs, executor="interpret")
    for t, g, i, r in zip(together, by_group, interpreted, reference, strict=True):
        np.testing.assert_allclose(t, g, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(t, i, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(t, r, rtol=1e-4, atol=1e-5)


def test_few_groups_run_group_by_group(monkeypatch):
    module, _, _ = _lowered("lstm", PLATFORM, HIDDEN, seq=2)
    monkeypatch.setattr(lockstep, "FEWEST_GROUPS", 4)
    assert compile_module(module).lockstep_launch(_launch(module)) is None


def test_a_barrier_removed_inside_the_steps_falls_back(monkeypatch):
    """The barriers left outside the step loop keep the launch a lockstep one; the
    cross-block checker finds the step's exchange unordered, so the groups run one by one
    (as far ahead as the flags let them: stale reads), and both executors notice."""
    module, inputs, reference = _lowered("lstm", PLATFORM, HIDDEN, seq=4)
    inside = [op for op in module.walk() if isinstance(op, SyncAllOp)]
    inside = [op for op in inside if isinstance(op.parent_op(), scf.ForOp)]
    assert inside
    for op in inside:
        op.detach()
        op.erase()
    assert any(isinstance(op, SyncAllOp) for op in module.walk())
    assert not _together(module, monkeypatch)
    monkeypatch.setattr(tiles, "_FAST", {})
    for executor in ("interpret", "fast"):
        assert noticed(module, inputs, reference, executor), f"{executor}: went unnoticed"


def _shift_the_aiv_blocks(module: ModuleOp, groups: int) -> None:
    """The AIV part's column offset takes block ``(b + 1) % groups`` instead of ``b``
    (its workspace region stays its group's): each group stores its columns of ``c`` and
    ``h`` where the next group's belong (disjoint, so the cross-block checker has nothing
    to say; the numbers are wrong)."""
    (aiv,) = [f for f in module.ops if isinstance(f, func.FuncOp) and mix_part(f) == "aiv"]
    (query,) = [op for op in aiv.walk() if isinstance(op, BlockIdxOp)]
    one = arith.ConstantOp(IntegerAttr(1, IndexType()))
    count = arith.ConstantOp(IntegerAttr(groups, IndexType()))
    shifted = arith.AddiOp(query.results[0], one.result)
    wrapped = arith.RemUIOp(shifted.result, count.result)
    block = query.parent_block()
    assert block is not None
    block.insert_ops_after([one, count, shifted, wrapped], query)
    width = HIDDEN // groups
    columns = [  # b * width (the workspace region is b * its size)
        use
        for use in query.results[0].uses
        if isinstance(use.operation, arith.MuliOp)
        and any(index_arith.constant(v.owner) == width for v in use.operation.operands
                if isinstance(v.owner, arith.ConstantOp))
    ]  # fmt: skip
    assert columns
    for use in columns:
        use.operation.operands[use.index] = wrapped.result


def test_a_wrong_block_offset_run_together_gives_wrong_numbers_in_both_executors(
    monkeypatch,
):
    module, inputs, reference = _lowered("lstm", PLATFORM, HIDDEN, seq=4)
    _shift_the_aiv_blocks(module, _launch(module).block_count)
    module.verify()
    assert _together(module, monkeypatch)  # the mutation runs on the batched path
    monkeypatch.setattr(tiles, "_FAST", {})
    for executor in ("interpret", "fast"):
        assert noticed(module, inputs, reference, executor), f"{executor}: went unnoticed"


@pytest.mark.parametrize("case", ["ragged", "causal"])
def test_a_mix_launch_without_barrier_runs_its_groups_together(case: str, monkeypatch):
    """Flash attention's mix kernel (hand-overs both ways: not the one-way batched mix)
    shares its (batch, head) loop out by block, every group as many trips: its groups
    run together, with what group by group and the interpreter give."""
    graph, inputs = _attention(*CASES[case])
    module = tilegraph.compile(graph, platform=PLATFORM).module
    together = _launches_together(module, monkeypatch)
    assert together
    compiled = compile_module(module)
    assert all(not compiled.has_barrier(n) for op in together for n in op.callees())
    ordered = list(inputs.values())
    both = _fast(module, ordered, 2, monkeypatch)
    by_group = _fast(module, ordered, 1 << 30, monkeypatch)
    interpreted = run_tiles(module, ordered, executor="interpret")
    for t, g, i in zip(both, by_group, interpreted, strict=True):
        np.testing.assert_allclose(t, g, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(t, i, rtol=1e-6, atol=1e-6)


def test_every_group_at_offset_zero_run_together_gives_wrong_numbers(monkeypatch):
    """Flash attention's work loop starting at item 0 in every group (a wrong block
    offset: the groups repeat the first items and skip the rest) runs together and gives
    wrong numbers in both executors."""
    graph, inputs = _attention(*CASES["ragged"])
    reference = tilegraph.compile(graph, target="reference").run(inputs)
    module = tilegraph.compile(graph, platform=PLATFORM).module
    zero = 0
    for fn in module.ops:
        if not isinstance(fn, func.FuncOp) or mix_part(fn) is None:
            continue
        for query in [op for op in fn.walk() if isinstance(op, BlockIdxOp)]:
            for use in list(query.results[0].uses):
                loop, block = use.operation, use.operation.parent_block()
                if isinstance(loop, scf.ForOp) and use.index == 0 and block is not None:
                    start = arith.ConstantOp(IntegerAttr(0, IndexType()))
                    block.insert_op_before(start, loop)
                    loop.operands[0] = start.result
                    zero += 1
    assert zero
    module.verify()
    assert _launches_together(module, monkeypatch)
    monkeypatch.setattr(tiles, "_FAST", {})
    ordered = list(inputs.values())
    for executor in ("interpret", "fast"):
        (got,) = run_tiles(module, ordered, executor=executor)
        assert not np.allclose(got, np.asarray(reference[0]), rtol=1e-4, atol=1e-5), executor
