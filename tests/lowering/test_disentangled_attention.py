"""DeBERTa-v2's disentangled attention (transformers' export, at graph level) through O2
and the tiles: the score-view rules (:mod:`tilegraph.passes.simplify.score_view_rules`),
``batch-merge-after-matmul``'s constant operand and ``fuse-ops``' score-bias split
(:mod:`tilegraph.passes.fuse_score_bias`) make its attention one flash kernel, the bias sum
the tail of a gather's kernel (:mod:`tilegraph.lowering.conversion.tiling.elements_tail`).

The graph as the exporter writes it: Q, K and V projections with bias, heads merged with
the batch (``[B·H, S, D]``), K divided by ``sqrt(D·3)`` (read by Q·Kᵀ) while the unscaled K
also multiplies the position queries (p2c); c2p ``Q·pos_Kᵀ`` and p2c ``K·pos_Qᵀ`` (the
position projections constant-folded per head) gathered along their last axis by constant
relative-position indices, each divided by the same scale, p2c transposed; the three terms
summed, viewed ``[B, H, S, S]``, masked by ``where`` and normalised, then ·V with the heads
merged. Both executors match the graph with NaN in every padding lane.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.lowering.test_tile_differential import assert_matches, assert_no_nan, run_levels
from tilegraph.builder import GraphBuilder
from tilegraph.passes.statistics import collecting_statistics

NAN = float("nan")


def _disentangled(batch: int, seq: int, heads: int, dim: int, span: int, seed: int = 0):
    """(module, inputs): DeBERTa-v2's attention over ``x`` [B, S, H·D] with relative
    positions in ``[0, 2·span)`` (module docstring)."""
    rng = np.random.default_rng(seed)
    hidden, bh, positions = heads * dim, batch * heads, 2 * span
    b = GraphBuilder()
    x = b.input("x", [batch, seq, hidden])
    mask = b.input("mask", [batch, 1, seq, seq], np.bool_)

    def const(*shape: int):
        return b.constant((rng.standard_normal(shape) * 0.3).astype(np.float32))

    def shape(*dims: int):
        return b.constant(np.array(dims, np.int64))

    def projected_heads(merge: bool):
        y = b.op("add", b.op("matmul", x, const(hidden, hidden)), const(hidden))
        split = b.op("reshape", y, shape(batch, seq, heads, dim))
        t = b.op("transpose", split, perm=[0, 2, 1, 3])
        return b.op("reshape", t, shape(bh, seq, dim)) if merge else t

    q, k, v = projected_heads(True), projected_heads(True), projected_heads(False)
    scale = b.constant(np.float32(np.sqrt(dim * 3.0)))
    scores = b.op("matmul", q, b.op("transpose", b.op("div", k, scale), perm=[0, 2, 1]))
    index = np.clip(
        np.arange(seq)[:, None] - np.arange(seq)[None, :] + span, 0, positions - 1
    ).astype(np.int64)
    c2p = b.op("matmul", q, const(bh, dim, positions))
    c2p = b.op(
        "gather_elements", c2p, b.constant(np.broadcast_to(index, (bh, seq, seq)).copy()), axis=-1
    )
    c2p = b.op("div", c2p, scale)
    p2c = b.op("matmul", k, const(bh, dim, positions))
    p2c = b.op(
        "gather_elements", p2c, b.constant(np.broadcast_to(index.T, (bh, seq, seq)).copy()), axis=-1
    )
    p2c = b.op("transpose", b.op("div", p2c, scale), perm=[0, 2, 1])
    scores = b.op("add", scores, b.op("add", c2p, p2c))
    scores = b.op("reshape", scores, shape(batch, heads, seq, seq))
    low = b.constant(np.float32(np.finfo(np.float32).min))
    probs = b.op("softmax", b.op("where", b.op("not", mask), low, scores), axis=-1)
    out = b.op("transpose", b.op("matmul", probs, v), perm=[0, 2, 1, 3])
    module = b.build(b.op("reshape", out, shape(batch, seq, hidden)))
    keep = rng.random((batch, 1, seq, seq)) < 0.8
    keep[..., 0] = True
    inputs = {
        "x": rng.standard_normal((batch, seq, hidden)).astype(np.float32),
        "mask": keep,
    }
    return module, inputs


CASES = {
    "debertav2": (3, 11, 4, 8, 8),  # the shapes of the exported two-layer model
    "ragged": (2, 20, 2, 12, 16),  # S and D ragged against the fractals
    # a ragged last tile of the gather with the bias sum as its tail (345 rows, 8 a tile);
    # its where group takes no bias add (UB), so the add is claimed from no group
    "ragged_tail": (5, 23, 3, 8, 16),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_disentangled_attention_is_one_flash_kernel(case: str):
    """The scores, their position terms' sum, the mask, the softmax and ·V: one flash
    kernel reading the bias sum; both executors match the graph with NaN padding."""
    module, inputs = _disentangled(*CASES[case])
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, "ascend910b", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    fuse = stats.as_dict()["fuse-ops"]
    assert fuse.get("attention-claimed") == 1, fuse
    assert fuse.get("score-bias-split", 0) == (case != "ragged_tail"), fuse
    assert fuse.get("bias-gathers-joined") == 1, fuse
    kernels = levels.tiled_kernels
    names = [k.ops for k in kernels]
    flash = [k for k in kernels if "graph.softmax" in k.ops]
    assert len(flash) == 1 and flash[0].ops.count("graph.matmul") == 2, names
    # no kernel of its own for a head split, the scores' merge or p2c's transpose
    assert not any(set(k.ops) <= {"graph.reshape", "graph.transpose"} for k in kernels), names
    assert sum(k.ops == ("graph.div",) for k in kernels) == 1, names  # K's scale only
    # the bias sum is the tail of one gather's kernel, the other gather a kernel alone
    gathers = sorted(k.ops for k in kernels if "graph.gather_elements" in k.ops)
    assert gathers == [("graph.gather_elements",), ("graph.gather_elements", "graph.add")]


def test_the_test_preset_matches():
    """The ``test`` preset (16 x 16 blocks, a small UB): whatever it claims, exact with NaN
    padding."""
    module, inputs = _disentangled(*CASES["debertav2"])
    levels = run_levels(module, inputs, "test", pad_value=NAN)
    assert_matches(levels)
