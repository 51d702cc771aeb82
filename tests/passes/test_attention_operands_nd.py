"""``fuse-ops``' ``attention-operands-to-nd``: an attention whose Q, K and V come straight
from products in FRACTAL_NZ (SqueezeBERT's group-batched projections: no head split between
them) gets them in ND — each product's fixpipe writes ND, the attention converts on the way
in — so the flash kernel takes Q·Kᵀ, the softmax and ·V as one mix kernel. Both executors
against the graph."""

from __future__ import annotations

import numpy as np

from tests.lowering.test_tile_differential import assert_matches, run_levels
from tilegraph.builder import GraphBuilder
from tilegraph.passes.statistics import collecting_statistics

RNG = np.random.default_rng(25)


def _attention_over_products():
    """x [B, 4, S, 8] (four heads) times per-head weights into Q, Kᵀ and V, then
    softmax(Q·Kᵀ / √8)·V."""
    b = GraphBuilder()
    x = b.input("x", [3, 4, 11, 8])

    def weights(shape):
        return b.constant((RNG.standard_normal(shape) / 3).astype(np.float32))

    q = b.op("matmul", x, weights((4, 8, 8)))
    k = b.op("matmul", weights((4, 8, 8)), b.op("transpose", x, perm=[0, 1, 3, 2]))  # [B,4,8,S]
    v = b.op("matmul", x, weights((4, 8, 8)))
    scores = b.op("div", b.op("matmul", q, k), b.constant(np.float32(np.sqrt(8))))
    module = b.build(b.op("matmul", b.op("softmax", scores, axis=-1), v))
    return module, {"x": RNG.standard_normal((3, 4, 11, 8)).astype(np.float32)}


def test_an_attention_over_products_runs_as_one_flash_kernel():
    module, inputs = _attention_over_products()
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, "ascend910b")
    assert_matches(levels)
    fuse = stats.for_pass("fuse-ops")
    assert fuse["attention-operands-to-nd"] == 3 and fuse["attention-claimed"] == 1
    kernels = levels.tiled_kernels
    attention = [k for k in kernels if "graph.softmax" in k.ops]
    assert len(attention) == 1, [k.ops for k in kernels]
    assert attention[0].ops.count("graph.matmul") == 2  # Q·Kᵀ and ·V with the softmax
    assert len(kernels) == 4, [k.ops for k in kernels]  # three products and the attention
