"""Both executors run every block of a launch with the index and count the IR gives: a
mutated ``split-cores`` (a wrong block offset, a wrong share) gives wrong numbers in the
fast executor as in the interpreter, while the unmutated split matches the reference."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp

import tilegraph
from tilegraph.builder import GraphBuilder
from tilegraph.dialects.tile import BlockIdxOp, LaunchOp
from tilegraph.runtime.fast_executor import compile_module
from tilegraph.runtime.tiles import run_tiles

rng = np.random.default_rng(7)


@pytest.fixture(scope="module")
def split_conv() -> tuple[ModuleOp, np.ndarray, np.ndarray]:
    """A convolution then a ReLU lowered on the test preset (decoupled, 2 cube and 4 vector
    cores: a mix launch, its AIC and AIV parts split alike), its input and the graph-level
    reference output."""
    return _split_conv("test")


@pytest.fixture(scope="module", params=["test", "ascend310p"])
def any_split_conv(request) -> tuple[ModuleOp, np.ndarray, np.ndarray]:
    """The same on the test preset and on ascend310p (coupled, 8 cores: a plain launch;
    its shares are one trip per block, so only the offset mutation shows there)."""
    return _split_conv(request.param)


def _split_conv(platform: str) -> tuple[ModuleOp, np.ndarray, np.ndarray]:
    b = GraphBuilder()
    x = b.input("x", [1, 16, 16, 16], "float32", "NCHW")
    w = b.constant(rng.standard_normal((32, 16, 3, 3)).astype(np.float32))
    y = b.op("relu", b.op("conv2d", x, w, pads=[1, 1, 1, 1]))
    graph = b.build(y)
    data = rng.standard_normal((1, 16, 16, 16)).astype(np.float32)
    reference = tilegraph.compile(graph, target="reference").run({"x": data})
    module = tilegraph.compile(graph, platform=platform).module
    assert any(op.block_count > 1 for op in module.walk() if isinstance(op, LaunchOp))
    return module, data, np.asarray(reference[0])


def _split_loops(module: ModuleOp) -> list[tuple[BlockIdxOp, scf.ForOp]]:
    """(block index query, work loop) of every split kernel."""
    found = []
    for fn in module.ops:
        if not isinstance(fn, func.FuncOp):
            continue
        queries = [op for op in fn.walk() if isinstance(op, BlockIdxOp)]
        for query in queries:
            for loop in fn.walk():
                if isinstance(loop, scf.ForOp) and _depends_on(loop.lb, query):
                    found.append((query, loop))
    return found


def _depends_on(value, query: BlockIdxOp) -> bool:
    owner = value.owner
    if owner is query:
        return True
    return isinstance(owner, arith.AddiOp | arith.MuliOp) and any(
        _depends_on(v, query) for v in owner.operands
    )


def _every_block_at_offset_zero(query: BlockIdxOp, loop: scf.ForOp) -> None:
    """Every block starts at block 0's first iteration (a wrong block offset)."""
    zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
    query.parent_block().insert_op_after(zero, query)  # type: ignore[union-attr]
    query.result.replace_all_uses_with(zero.result)


def _one_trip_more_per_share(query: BlockIdxOp, loop: scf.ForOp) -> None:
    """Each block strides one iteration further than its share (a wrong share)."""
    one = arith.ConstantOp(IntegerAttr(loop_step(loop), IndexType()))
    wider = arith.AddiOp(loop.step, one)
    loop.parent_block().insert_ops_before([one, wider], loop)  # type: ignore[union-attr]
    loop.operands = [loop.lb, loop.ub, wider.result, *loop.iter_args]


def loop_step(loop: scf.ForOp) -> int:
    """The step of the loop before split-cores (the stride is step x blocks)."""
    owner = loop.step.owner
    if isinstance(owner, arith.MuliOp):
        (constant,) = [v for v in owner.operands if isinstance(v.owner, arith.ConstantOp)]
        assert isinstance(constant.owner, arith.ConstantOp)
        return constant.owner.value.value.data  # type: ignore[union-attr]
    return 1


def _mismatch(actual: np.ndarray, expected: np.ndarray) -> float:
    return float(np.max(np.abs(actual - expected)))


def test_the_unmutated_split_matches_in_both_executors(split_conv):
    module, data, expected = split_conv
    for executor in ("interpret", "fast"):
        out = run_tiles(module, [data], executor=executor)[0]
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4, err_msg=executor)


@pytest.mark.parametrize("mutate", [_every_block_at_offset_zero, _one_trip_more_per_share])
def test_a_mutated_split_gives_wrong_numbers_in_both_executors(
    split_conv, mutate: Callable[[BlockIdxOp, scf.ForOp], None]
):
    module, data, expected = split_conv
    mutated = module.clone()
    loops = _split_loops(mutated)
    assert loops, "split-cores split no kernel"
    for query, loop in loops:
        mutate(query, loop)
    mutated.verify()
    scale = float(np.max(np.abs(expected)))
    for executor in ("interpret", "fast"):
        out = run_tiles(mutated, [data], executor=executor)[0]
        assert _mismatch(out, expected) > 0.1 * scale, executor


def test_the_fast_executor_merges_blocks_only_where_the_ir_proves_it(any_split_conv):
    """An unmutated split runs as one call (block 0 of 1 covers exactly the blocks' shares);
    a mutated one runs block by block, with the indices the launch gives."""
    module, _, _ = any_split_conv
    mutated = module.clone()
    for query, loop in _split_loops(mutated):
        _every_block_at_offset_zero(query, loop)
    for m, merged in ((module, True), (mutated, False)):
        compiled = compile_module(m)
        launches = [op for op in m.walk() if isinstance(op, LaunchOp) and op.block_count > 1]
        for launch in launches:
            callee = launch.callee.string_value()
            assert compiled.blocks_run_as_one(callee, launch.block_count) is merged
        host = compiled.source("main")
        if any(launch.is_mix for launch in launches):
            # a mix launch runs its core groups one by one, each with its own index
            assert all(
                f", {launch.block_count}, {launch.aiv_block_count})" in host for launch in launches
            )
        else:
            assert ("for __b in range(" in host) is not merged


def test_a_wrong_block_offset_shows_in_both_executors_on_a_plain_launch_too(any_split_conv):
    module, data, expected = any_split_conv
    mutated = module.clone()
    for query, loop in _split_loops(mutated):
        _every_block_at_offset_zero(query, loop)
    scale = float(np.max(np.abs(expected)))
    for executor in ("interpret", "fast"):
        assert _mismatch(run_tiles(module, [data], executor=executor)[0], expected) < 1e-3
        out = run_tiles(mutated, [data], executor=executor)[0]
        assert _mismatch(out, expected) > 0.1 * scale, executor
