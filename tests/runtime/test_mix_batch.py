"""Mix launches run batched in the fast executor (``fast_executor/mix_batch.py``).

A mix kernel of the one-way protocol (the AIC hands tiles to the AIV through the
workspace, nothing flows back) runs its AIC tile loop batched into a workspace copy per
hand-over, then its AIV loop; the flash attention kernel (hand-overs in both directions)
keeps the generator path. Results equal the generator path's and the interpreter's to
float32 rounding of the batched products.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func

import tilegraph
from tests.lowering.test_flash_attention import _attention
from tests.runtime.test_fast_executor import assert_close, random_buffers
from tilegraph.builder import GraphBuilder
from tilegraph.lowering.analysis.kernel_attrs import mix_part
from tilegraph.runtime.fast_executor import compile_module


def _conv_epilogue():
    """A 3x3 convolution with SiLU and a residual add: one mix kernel on 910B (its
    epilogue on the AIVs, two per group sharing each tile's rows); the same every call."""
    rng = np.random.default_rng(5)
    b = GraphBuilder()
    x = b.input("x", [1, 16, 20, 20], "float32", "NCHW")
    skip = b.input("skip", [1, 32, 20, 20], "float32", "NCHW")
    w = b.constant(rng.standard_normal((32, 16, 3, 3)).astype(np.float32))
    y = b.op("conv2d", x, w, pads=[1, 1, 1, 1])
    y = b.op("add", b.op("mul", y, b.op("sigmoid", y)), skip)
    inputs = {
        "x": rng.standard_normal((1, 16, 20, 20)).astype(np.float32),
        "skip": rng.standard_normal((1, 32, 20, 20)).astype(np.float32),
    }
    return b.build(y), inputs


def _mix_pairs(module) -> list[tuple[str, str]]:
    fns = [f for f in module.ops if isinstance(f, func.FuncOp)]
    return [
        (f.sym_name.data, f.sym_name.data.removesuffix("_mix_aic") + "_mix_aiv")
        for f in fns
        if mix_part(f) == "aic"
    ]


def _buffers(module, aic: str, seed: int) -> list[np.ndarray]:
    fn = next(f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == aic)
    return random_buffers(fn, seed)


@pytest.fixture(scope="module")
def conv_model():
    graph, inputs = _conv_epilogue()
    return tilegraph.compile(graph, platform="ascend910b"), inputs


def test_a_conv_epilogue_mix_kernel_runs_batched_and_matches_the_generator_path(conv_model):
    compiled, _ = conv_model
    fast = compile_module(compiled.module)
    pairs = _mix_pairs(compiled.module)
    assert pairs
    for aic, aiv in pairs:
        assert fast.runs_batched(aic, aiv), aic
        for groups in (1, 3):  # every block with its index, as the launch gives them
            a = _buffers(compiled.module, aic, groups)
            b = [x.copy() for x in a]
            assert fast.run_mix(aic, aiv, a, groups, 2 * groups, batched=True)
            fast.run_mix(aic, aiv, b, groups, 2 * groups)
            for x, y in zip(a[:-1], b[:-1], strict=True):  # the last: the IR's workspace
                assert_close(x, y, aic)


def test_batched_mix_launches_match_the_interpreter(conv_model):
    compiled, inputs = conv_model
    fast = compile_module(compiled.module)
    assert "_mix_aic_batched" not in fast.source("main")  # launches call a runner
    assert any(fast.runs_batched(*pair) for pair in _mix_pairs(compiled.module))
    interpreted = tilegraph.compile(
        _conv_epilogue()[0], platform="ascend910b", executor="interpret"
    )
    expected = interpreted.run(inputs)[0]
    assert_close(np.asarray(compiled.run(inputs)[0]), np.asarray(expected), "model")


def test_the_flash_attention_kernel_keeps_the_generator_path():
    module, inputs = _attention(1, 20, 20, 1, 24)
    compiled = tilegraph.compile(module, platform="ascend910b")
    fast = compile_module(compiled.module)
    pairs = _mix_pairs(compiled.module)
    assert pairs
    assert not any(fast.runs_batched(aic, aiv) for aic, aiv in pairs)
    reference = tilegraph.compile(_attention(1, 20, 20, 1, 24)[0], target="reference")
    assert_close(
        np.asarray(compiled.run(inputs)[0]), np.asarray(reference.run(inputs)[0]), "attention"
    )


def test_without_batching_mix_launches_run_as_generators(conv_model):
    compiled, _ = conv_model
    one_by_one = compile_module(compiled.module, batch=False)
    assert not any(one_by_one.runs_batched(*pair) for pair in _mix_pairs(compiled.module))


def _offset_by_block(fn: func.FuncOp, uses_workspace: bool) -> None:
    """Add ``block - block`` to the first GM offset of the op using the workspace (as a
    per-group workspace region would), or of another op reading GM."""
    from xdsl.dialects import arith

    from tilegraph.dialects.tile import BlockIdxOp, TileOp, scope_of

    workspace = fn.body.block.args[-1]
    block = next(op for op in fn.walk() if isinstance(op, BlockIdxOp)).results[0]
    op = next(
        op
        for op in fn.walk()
        if isinstance(op, TileOp)
        and any(scope_of(v) == "GM" for v in (*op.read(), op.written()) if v is not None)
        and op.gm_offsets()
        and (workspace in op.operands) == uses_workspace
        and op.parent_op() is not fn
    )
    offset = op.gm_offsets()[0]
    zero = arith.SubiOp(block, block)
    moved = arith.AddiOp(offset, zero.result)
    parent = op.parent_block()
    assert parent is not None
    parent.insert_ops_before([zero, moved], op)
    op.operands = [moved.result if v is offset else v for v in op.operands]


@pytest.mark.parametrize("workspace", [True, False])
def test_groups_merge_when_the_block_index_places_only_the_workspace(workspace):
    from tilegraph.runtime.fast_executor.mix_batch import plan_batched_mix

    graph, _ = _conv_epilogue()
    module = tilegraph.compile(graph, platform="ascend910b").module
    fns = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    aic, aiv = (fns[n] for n in _mix_pairs(module)[0])
    assert plan_batched_mix(aic, aiv).merges(4)  # type: ignore[union-attr]
    _offset_by_block(aic, workspace)
    _offset_by_block(aiv, workspace)
    found = plan_batched_mix(aic, aiv)
    assert found is not None and found.merges(4) == workspace


def _matmul_erf():
    """A GEMM with an erf epilogue: one mix kernel on 910B whose AIC loops over the N
    blocks of each output tile (a loop ``tile.parallel`` does not mark) around a K loop in
    two levels (the K chunk, then its steps), handing each N block over."""
    rng = np.random.default_rng(3)
    b = GraphBuilder()
    x = b.input("x", [1, 200, 384], "float32")
    w = b.constant(rng.standard_normal((384, 768)).astype(np.float32))
    return b.build(b.op("erf", b.op("matmul", x, w))), {
        "x": rng.standard_normal((1, 200, 384)).astype(np.float32)
    }


def test_a_gemm_s_n_block_loop_runs_as_a_batch_axis_and_matches_the_interpreter():
    """The AIC's N loop starts afresh every iteration (fast_executor/fresh_loops.py): it
    runs as an axis of the batch (its index laid along the second axis), the K loop inside
    it step by step; the numbers are the interpreter's."""
    module, inputs = _matmul_erf()
    compiled = tilegraph.compile(module, platform="ascend910b")
    fast = compile_module(compiled.module)
    ((aic, aiv),) = _mix_pairs(compiled.module)
    assert fast.runs_batched(aic, aiv)
    source = fast.source(f"{aic} (batched)")
    assert ".reshape((1, -1))" in source  # the N index along axis 1 of the batch
    interpreted = tilegraph.compile(_matmul_erf()[0], platform="ascend910b", executor="interpret")
    expected = interpreted.run(inputs)[0]
    assert_close(np.asarray(compiled.run(inputs)[0]), np.asarray(expected), "matmul + erf")
