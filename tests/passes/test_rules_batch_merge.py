"""batch-merge-after-matmul and broadcast-before-reshape: BLOOM's attention over merged
[B·H, S, D] batches multiplies the unmerged heads; values stay bit-identical, near misses
stay as they are."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from tests.passes.test_rules_arith import _check_bitwise
from tilegraph.builder import GraphBuilder
from tilegraph.dialects.layout_type import TensorType

RNG = np.random.default_rng(7)
RULES = (
    "algebraic-simplify{only=batch-merge-after-matmul,broadcast-before-reshape,"
    "scale-before-movement,transpose-compose,reshape-chain,reshape-to-same-shape}"
)
B, H, S, D = 2, 3, 5, 4


def _merged(b: GraphBuilder, x: SSAValue, shape: tuple[int, ...]) -> SSAValue:
    return b.op("reshape", x, b.constant(np.array(shape, np.int64)))


def _bloom_scores(
    *, k_dims: tuple[int, ...] = (B, H), bias_reader: bool = False, bias_view: bool = True
) -> ModuleOp:
    """baddbmm: Reshape(q [B, H, S, D], [B·H, S, D]) times Transpose(Reshape(k, [B·H, S,
    D]), [0, 2, 1]) (k's dims ``k_dims`` then [S, D], or all four), times a scale, plus the
    ALiBi bias [B·H, 1, S] (a view of [B, H, S], or an input), viewed [B, H, S, S]; with
    ``bias_reader`` the scaled scores are also an output."""
    b = GraphBuilder()
    q = b.input("q", [B, H, S, D])
    k = b.input("k", list(k_dims) if len(k_dims) == 4 else [*k_dims, S, D])
    alibi = b.input("alibi", [B, H, S] if bias_view else [B * H, 1, S])
    k3 = _merged(b, k, (B * H, S, D))
    scores = b.op("matmul", _merged(b, q, (B * H, S, D)), b.op("transpose", k3, perm=[0, 2, 1]))
    scaled = b.op("mul", scores, b.constant(np.float32(0.125)))
    bias = _merged(b, alibi, (B * H, 1, S)) if bias_view else alibi
    biased = b.op("add", bias, scaled)
    outputs = [_merged(b, biased, (B, H, S, S))]
    if bias_reader:
        outputs.append(b.op("relu", scaled))
    return b.build(*outputs)


def _inputs(module: ModuleOp) -> dict[str, np.ndarray]:
    (main,) = [op for op in module.walk() if op.name == "func.func"]
    inputs = {}
    for arg, name in zip(main.body.block.args, ("q", "k", "alibi"), strict=True):  # type: ignore[attr-defined]
        t = arg.type
        assert isinstance(t, TensorType)
        inputs[name] = RNG.standard_normal([int(d) for d in t.origin_shape]).astype(np.float32)
    return inputs


def _ops(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


def _matmul_ranks(module: ModuleOp) -> list[int]:
    return [
        len(op.results[0].type.origin_shape)  # type: ignore[attr-defined]
        for op in module.walk()
        if op.name == "graph.matmul"
    ]


def test_bloom_scores_multiply_the_unmerged_heads():
    module = _bloom_scores()
    _check_bitwise(module, RULES, _inputs(module))
    assert _matmul_ranks(module) == [4]
    # only the views of the inputs remain: q, k and the bias are read unmerged, and the
    # merge after the product cancelled against the final view
    ops = _ops(module)
    assert ops["graph.reshape"] == 1  # the bias [B, H, S] viewed [B, H, 1, S]
    assert ops["graph.transpose"] == 1  # k's last two dims swapped


def test_bias_before_a_merge_with_another_reader_stays_merged():
    """The scaled scores also read merged: the merge stays, the add reads it."""
    module = _bloom_scores(bias_reader=True)
    _check_bitwise(module, RULES, _inputs(module))
    assert _matmul_ranks(module) == [4]  # the product itself is still unmerged


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda: _bloom_scores(k_dims=(H, B)), id="other-batch-dims"),
        # k [B, H, D, S] reshaped to [B·H, S, D]: its matrices are not k's
        pytest.param(lambda: _bloom_scores(k_dims=(B, H, D, S)), id="k-matrices-reshaped"),
    ],
)
def test_near_misses_keep_the_merged_product(build):
    module = build()
    _check_bitwise(module, RULES, _inputs(module))
    assert _matmul_ranks(module) == [3]


def test_a_merge_of_the_matrix_dims_stays():
    """Reshape(x [B, H, S, D] -> [B, H·S, D]): not a batch merge."""
    b = GraphBuilder()
    x = b.input("q", [B, H, S, D])
    y = b.input("k", [B, D, S])
    module = b.build(b.op("matmul", _merged(b, x, (B, H * S, D)), y))
    before = _ops(module)
    inputs = {
        "q": RNG.standard_normal((B, H, S, D)).astype(np.float32),
        "k": RNG.standard_normal((B, D, S)).astype(np.float32),
    }
    _check_bitwise(module, RULES, inputs)
    assert _ops(module) == before


def test_a_bias_that_is_no_view_keeps_the_merged_add():
    """The bias an input [B·H, 1, S] (no view to merge with): the add reads the merged
    scores; only the product is unmerged."""
    module = _bloom_scores(bias_view=False)
    _check_bitwise(module, RULES, _inputs(module))
    assert _matmul_ranks(module) == [4]
    (add,) = [op for op in module.walk() if op.name == "graph.add"]
    assert len(add.results[0].type.origin_shape) == 3  # type: ignore[attr-defined]
