"""BERT's Q, K, V projections, each ``MatMul(x, Wi) + bi``, on the tiled path.

``combine-parallel`` makes them one MatMul with the concatenated biases in its epilogue and a
Split (``passes/simplify/combine_rules.py``); the Split's thirds go through the head
Reshape / Transpose into the attention's matmuls, which read them as offset views of the
combined result (as GPT-2's, ``test_shared_views.py``): no split kernel. Checked: both
executors against the graph with NaN in the padding lanes (ragged S, head dim 12), and on
``ascend910b`` the kernels: the projection and the attention.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.lowering.test_tile_differential import assert_matches, assert_no_nan, run_levels
from tilegraph.builder import GraphBuilder
from tilegraph.passes.statistics import collecting_statistics

NAN = float("nan")


def _bert_attention(rng: np.random.Generator, seq: int, scale: float | None = None):
    """(module, inputs): softmax(Q·Kᵀ)·V of two heads of 12 over ``x`` [1, seq, 24], each
    projection a MatMul and a bias Add (K's bias the Add's first operand); with ``scale``,
    Q and K are each multiplied by it after their head transpose (torch's SDPA export)."""
    b = GraphBuilder()
    x = b.input("x", [1, seq, 24])
    heads = b.constant(np.array([1, seq, 2, 12], np.int64))
    projections = []
    for i in range(3):
        w = (rng.standard_normal((24, 24)) / np.sqrt(24)).astype(np.float32)
        product = b.op("matmul", x, b.constant(w))
        bias = b.constant(rng.standard_normal(24).astype(np.float32))
        added = b.op("add", bias, product) if i == 1 else b.op("add", product, bias)
        projections.append(b.op("reshape", added, heads))
    q = b.op("transpose", projections[0], perm=[0, 2, 1, 3])
    k = b.op("transpose", projections[1], perm=[0, 2, 3, 1])
    v = b.op("transpose", projections[2], perm=[0, 2, 1, 3])
    if scale is not None:
        c = b.constant(np.array(scale, np.float32))
        q, k = b.op("mul", q, c), b.op("mul", c, k)
    scores = b.op("softmax", b.op("matmul", q, k), axis=-1)
    module = b.build(b.op("matmul", scores, v))
    return module, {"x": rng.standard_normal((1, seq, 24)).astype(np.float32)}


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
def test_biased_projections_match_the_graph(platform: str):
    """The ``test`` preset splits the kernels into many tiles (it has no fixpipe: the bias
    Add is a vector kernel of its own there, combined or not)."""
    module, inputs = _bert_attention(np.random.default_rng(3), 20)
    levels = run_levels(module, inputs, platform, pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)


@pytest.mark.parametrize("scale", [None, 12**-0.25])
def test_biased_projections_are_one_kernel_and_their_split_views(scale: float | None):
    """With SDPA's scale of Q and K too: it folds into their weight columns."""
    module, inputs = _bert_attention(np.random.default_rng(4), 20, scale)
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, "ascend910b", pad_value=NAN)
    rules = stats.as_dict()["algebraic-simplify"]
    assert rules.get("rule.combined-projection-scale", 0) == (0 if scale is None else 2)
    assert_matches(levels)
    kernels = [k.ops for k in levels.tiled_kernels]
    projections = [ops for ops in kernels if ops.count("graph.matmul") == 1 and "graph.add" in ops]
    assert len(projections) == 1, kernels
    assert len(kernels) == 2, kernels  # the projection and the attention: no split kernel
