"""The score-view rules (scale-before-shared-movement, batch-split-through-elementwise,
scale-before-gather-elements, batch-merge-after-gather-elements, batch-merge-after-transpose,
transposed-gathered-product) with batch-merge-after-matmul's constant operand, on
DeBERTa-v2's attention at graph level: values stay bit-identical, every product multiplies
unmerged heads, and near misses stay."""

from __future__ import annotations

from collections import Counter

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from tests.lowering.test_disentangled_attention import CASES, _disentangled
from tests.passes.test_rules_arith import _check_bitwise
from tilegraph.builder import GraphBuilder

RULES = (
    "scale-before-shared-movement,batch-split-through-elementwise,scale-before-gather-elements,"
    "batch-merge-after-gather-elements,batch-merge-after-transpose,transposed-gathered-product,"
    "batch-merge-after-matmul,"
    "scale-before-movement,elementwise-before-movement,transpose-between-reshapes,"
    "transpose-compose,reshape-chain,reshape-to-same-shape"
)
PIPELINE = f"algebraic-simplify{{only={RULES}}},constant-fold,algebraic-simplify{{only={RULES}}}"


def _ranks(module: ModuleOp, name: str) -> list[int]:
    return [
        len(op.results[0].type.origin_shape)  # type: ignore[attr-defined]
        for op in module.walk()
        if op.name == name
    ]


def test_disentangled_attention_reads_unmerged_heads():
    """Every product, gather and sum of the scores over [B, H, ...]; the key scale on the
    projection ([B, S, H·D]); the score terms' scales on their products' results."""
    module, inputs = _disentangled(*CASES["debertav2"])
    _check_bitwise(module, PIPELINE, inputs)
    matmuls = _ranks(module, "graph.matmul")
    assert matmuls.count(4) == 4, matmuls  # Q·Kᵀ, c2p, p2c, ·V (the projections are rank 3)
    gathers = [op.attr("axis") for op in module.walk() if op.name == "graph.gather_elements"]
    assert sorted(gathers) == [2, 3]  # p2c computed transposed, gathered along its rows
    assert _ranks(module, "graph.gather_elements") == [4, 4]
    divs = [
        (op.operands[0].owner.name, len(op.results[0].type.origin_shape))  # type: ignore[attr-defined]
        for op in module.walk()
        if op.name == "graph.div"
    ]
    assert sorted(divs) == [("graph.add", 3), ("graph.matmul", 4), ("graph.matmul", 4)], divs


def test_a_scale_read_by_an_elementwise_op_stays():
    """The scaled split is also read by a ReLU: no product reads it alone, so the division
    stays after the split (and values are unchanged)."""
    b = GraphBuilder()
    k = b.input("k", [2, 5, 12])
    q = b.input("q", [6, 5, 4])
    split = b.op("reshape", k, b.constant(np.array([6, 5, 4], np.int64)))
    scaled = b.op("div", split, b.constant(np.float32(3.0)))
    module = b.build(
        b.op("matmul", q, b.op("transpose", scaled, perm=[0, 2, 1])),
        b.op("relu", scaled),
        b.op("matmul", split, b.op("transpose", q, perm=[0, 2, 1])),
    )
    rng = np.random.default_rng(3)
    inputs = {
        "k": rng.standard_normal((2, 5, 12)).astype(np.float32),
        "q": rng.standard_normal((6, 5, 4)).astype(np.float32),
    }
    _check_bitwise(module, PIPELINE, inputs)
    (div,) = [op for op in module.walk() if op.name == "graph.div"]
    assert div.operands[0].owner.name == "graph.reshape"  # type: ignore[attr-defined]


def test_a_reshape_that_does_not_undo_the_merge_stays():
    """Reshape(g(Reshape(a [2, 3, 5, 5] -> [6, 5, 5]), y), [3, 2, 5, 5]): not a's shape."""
    b = GraphBuilder()
    a = b.input("a", [2, 3, 5, 5])
    y = b.input("y", [6, 5, 5])
    merged = b.op("reshape", a, b.constant(np.array([6, 5, 5], np.int64)))
    out = b.op("reshape", b.op("add", merged, y), b.constant(np.array([3, 2, 5, 5], np.int64)))
    module = b.build(out)
    rng = np.random.default_rng(4)
    inputs = {
        "a": rng.standard_normal((2, 3, 5, 5)).astype(np.float32),
        "y": rng.standard_normal((6, 5, 5)).astype(np.float32),
    }
    before = Counter(op.name for op in module.walk())
    _check_bitwise(module, PIPELINE, inputs)
    assert Counter(op.name for op in module.walk()) == before
