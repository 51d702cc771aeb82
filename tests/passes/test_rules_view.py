"""``transpose-between-reshapes`` and ``scale-before-movement``: torch's SDPA decomposition
(``Q·√s``, ``Kᵀ·√s`` with Kᵀ as Reshape / Transpose / Reshape) becomes head-split views of
the projections, bit for bit; a Hugging Face style attention layer then runs its head
splits as matmul operand views (no movement kernel of its own)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from tests.lowering.test_tile_differential import assert_matches, run_levels
from tests.passes.test_rules_arith import _check_bitwise
from tilegraph.builder import GraphBuilder
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.simplify.view_rules import merged_groups

RNG = np.random.default_rng(5)
BETWEEN = "algebraic-simplify{only=transpose-between-reshapes},dce"
SCALE = "algebraic-simplify{only=scale-before-movement},dce"


def _ops(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


def _key_transposed(batch: int, heads: int = 4, seq: int = 11, dim: int = 8) -> ModuleOp:
    """Kᵀ as the exporter writes it: [B, H, S, D] -> [B·H, S, D] -> [B·H, D, S] -> [B, H, D, S]."""
    b = GraphBuilder()
    k = b.input("k", [batch, heads, seq, dim])
    flat = b.op("reshape", k, b.constant(np.array([batch * heads, seq, dim])))
    swapped = b.op("transpose", flat, perm=[0, 2, 1])
    return b.build(b.op("reshape", swapped, b.constant(np.array([batch, heads, dim, seq]))))


@pytest.mark.parametrize("batch", [1, 3])
def test_the_key_transpose_chain_is_one_transpose_bit_exact(batch: int):
    module = _key_transposed(batch)
    _check_bitwise(
        module, BETWEEN, {"k": RNG.standard_normal((batch, 4, 11, 8)).astype(np.float32)}
    )
    ops = _ops(module)
    assert ops["graph.transpose"] == 1 and ops["graph.reshape"] == 0
    (transpose,) = [op for op in module.walk() if op.name == "graph.transpose"]
    assert list(transpose.attr("perm")) == [0, 1, 3, 2]


def test_a_chain_that_mixes_merged_dims_stays():
    """[6, 4] -> [2, 12] (not a merge of whole dims) -> transposed -> [24]: kept."""
    b = GraphBuilder()
    x = b.input("x", [6, 4])
    mid = b.op("transpose", b.op("reshape", x, b.constant(np.array([2, 12]))), perm=[1, 0])
    module = b.build(b.op("reshape", mid, b.constant(np.array([24]))))
    run_pipeline(BETWEEN, make_context(), module)
    assert _ops(module)["graph.reshape"] == 2


def test_merged_groups():
    assert merged_groups([3, 4, 11, 8], [12, 11, 8]) == [[0, 1], [2], [3]]
    assert merged_groups([1, 4, 11, 8], [4, 11, 8]) == [[0, 1], [2], [3]]
    assert merged_groups([3, 1, 4], [3, 4]) == [[0], [1, 2]]
    assert merged_groups([3, 4], [3, 1, 4]) == [[0], [], [1]]
    assert merged_groups([6, 4], [2, 12]) is None


def _weights(b: GraphBuilder, shape: list[int]):
    return b.constant((0.2 * RNG.standard_normal(shape)).astype(np.float32))


def _head_split(b: GraphBuilder, x: SSAValue) -> SSAValue:
    """``x·W + b`` ([3, 11, 32]) split into 4 heads: Reshape to [3, 11, 4, 8], Transpose."""
    y = b.op("add", b.op("matmul", x, _weights(b, [32, 32])), _weights(b, [32]))
    return b.op(
        "transpose", b.op("reshape", y, b.constant(np.array([3, 11, 4, 8]))), perm=[0, 2, 1, 3]
    )


def _softmax_kernels(b: GraphBuilder, scores: SSAValue) -> list[tuple[str, ...]]:
    """The ops of each tiled kernel of ``softmax(scores)`` (input ``x`` [3, 11, 32]) on the
    ``test`` preset, after checking both executors against the graph."""
    module = b.build(b.op("softmax", scores, axis=-1))
    levels = run_levels(module, {"x": RNG.standard_normal((3, 11, 32)).astype(np.float32)}, "test")
    assert_matches(levels)
    return [tuple(k.ops) for k in levels.tiled_kernels]


def _scaled_split(side: int) -> ModuleOp:
    """x·W + b, head split by Reshape and Transpose, then times √s (on either side)."""
    b = GraphBuilder()
    x = b.input("x", [3, 11, 32])
    split = _head_split(b, x)
    scale = b.constant(np.float32(8**-0.25))
    return b.build(b.op("mul", *([split, scale] if side == 0 else [scale, split])))


@pytest.mark.parametrize("side", [0, 1])
def test_a_scale_moves_before_the_head_split_bit_exact(side: int):
    module = _scaled_split(side)
    _check_bitwise(module, SCALE, {"x": RNG.standard_normal((3, 11, 32)).astype(np.float32)})
    order = [
        op.name
        for op in module.walk()
        if op.name.startswith("graph.") and op.name != "graph.constant"
    ]
    assert order == ["graph.matmul", "graph.add", "graph.mul", "graph.reshape", "graph.transpose"]


def test_a_scale_of_a_movement_read_elsewhere_or_by_a_tensor_stays():
    b = GraphBuilder()
    x = b.input("x", [4, 6])
    t = b.op("transpose", x, perm=[1, 0])
    module = b.build(b.op("mul", t, b.constant(np.float32(0.5))), b.op("neg", t))
    run_pipeline(SCALE, make_context(), module)
    b = GraphBuilder()
    x = b.input("x", [4, 6])
    per_row = b.op("mul", b.op("transpose", x, perm=[1, 0]), _weights(b, [6, 1]))
    other = b.build(per_row)
    run_pipeline(SCALE, make_context(), other)
    for kept in (module, other):
        order = [op.name for op in kept.walk() if op.name in ("graph.mul", "graph.transpose")]
        assert order == ["graph.transpose", "graph.mul"]


def test_an_sdpa_decomposition_runs_its_splits_as_views():
    """Q·√s and Kᵀ·√s (the Reshape / Transpose / Reshape form) into the scores matmul: after
    O2 no kernel is a transpose or reshape of its own (the splits are operand views), and
    both executors match the graph."""
    b = GraphBuilder()
    x = b.input("x", [3, 11, 32])

    q, k = _head_split(b, x), _head_split(b, x)
    kt = b.op("reshape", k, b.constant(np.array([12, 11, 8])))
    kt = b.op("reshape", b.op("transpose", kt, perm=[0, 2, 1]), b.constant(np.array([3, 4, 8, 11])))
    scale = b.constant(np.float32(8**-0.25))
    scores = b.op("matmul", b.op("mul", q, scale), b.op("mul", kt, scale))
    kernels = _softmax_kernels(b, scores)
    alone = [
        ops
        for ops in kernels
        if set(ops) <= {"graph.transpose", "graph.reshape", "layout.trans_data", "graph.mul"}
    ]
    assert alone == [], alone


def test_a_power_of_two_scale_feeding_a_matmul_is_left_to_the_product():
    """Kᵀ·0.5 into Q·Kᵀ: ``matmul-operand-scales`` moves it onto the scores exactly (where
    the flash pattern wants it), so it does not move before the transpose."""
    b = GraphBuilder()
    q, k = b.input("q", [4, 11, 16]), b.input("k", [4, 11, 16])
    kt = b.op("mul", b.op("transpose", k, perm=[0, 2, 1]), b.constant(np.float32(0.5)))
    module = b.build(b.op("matmul", q, kt))
    run_pipeline(SCALE, make_context(), module)
    order = [op.name for op in module.walk() if op.name in ("graph.mul", "graph.transpose")]
    assert order == ["graph.transpose", "graph.mul"]


OFFSET = "algebraic-simplify{only=scale-before-movement,offset-before-movement},dce"


def _paddle_scaled_split(op: str, side: int) -> ModuleOp:
    """Paddle's query scaling: ``scale(split, s, bias)`` exports as ``Add(Mul(split, s), bias)``
    after the head split (bias +0.0 there; any one-element constant here)."""
    b = GraphBuilder()
    x = b.input("x", [3, 11, 32])
    split = _head_split(b, x)
    scaled = b.op("mul", split, b.constant(np.float32(8**-0.5)))
    bias = b.constant(np.array([0.375], np.float32))
    return b.build(b.op(op, *([scaled, bias] if side == 0 else [bias, scaled])))


@pytest.mark.parametrize(("op", "side"), [("add", 0), ("add", 1), ("sub", 0), ("sub", 1)])
def test_an_offset_moves_before_the_head_split_bit_exact(op: str, side: int):
    module = _paddle_scaled_split(op, side)
    _check_bitwise(module, OFFSET, {"x": RNG.standard_normal((3, 11, 32)).astype(np.float32)})
    order = [
        o.name for o in module.walk() if o.name.startswith("graph.") and o.name != "graph.constant"
    ]
    assert order == [
        "graph.matmul",
        "graph.add",
        "graph.mul",
        f"graph.{op}",
        "graph.reshape",
        "graph.transpose",
    ]


def test_an_offset_of_a_movement_read_elsewhere_or_by_a_tensor_stays():
    b = GraphBuilder()
    x = b.input("x", [4, 6])
    t = b.op("transpose", x, perm=[1, 0])
    shared = b.build(b.op("add", t, b.constant(np.float32(0.5))), b.op("neg", t))
    b = GraphBuilder()
    x = b.input("x", [4, 6])
    per_row = b.build(b.op("add", b.op("transpose", x, perm=[1, 0]), _weights(b, [6, 1])))
    for kept in (shared, per_row):
        run_pipeline(OFFSET, make_context(), kept)
        order = [op.name for op in kept.walk() if op.name in ("graph.add", "graph.transpose")]
        assert order == ["graph.transpose", "graph.add"]


def test_a_paddle_query_scaling_joins_the_projection_kernel():
    """The head split then reads the projection as a view: every kernel that moves data is
    a matmul's (before the rule the split was materialised for the add, and the add was a
    kernel of its own), and both executors match the graph."""
    b = GraphBuilder()
    x = b.input("x", [3, 11, 32])

    q, k = _head_split(b, x), _head_split(b, x)
    q = b.op("add", b.op("mul", q, b.constant(np.float32(0.35))), b.constant(np.float32(0.0)))
    scores = b.op("matmul", q, b.op("transpose", k, perm=[0, 1, 3, 2]))
    kernels = _softmax_kernels(b, scores)
    moving = [
        ops
        for ops in kernels
        if {"graph.transpose", "graph.reshape"} & set(ops) and "graph.matmul" not in ops
    ]
    assert moving == [], moving
    assert ("graph.add", "graph.mul", "graph.add") in kernels
