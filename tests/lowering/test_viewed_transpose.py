"""A transpose between reshape-like ops (LLaMA's head split of Q and K before the rotary
embedding: reshape, transpose; V's before the grouped-KV repeat: reshape, transpose,
unsqueeze) runs as one transpose kernel reading and writing the reshapes as row-major
views (``tiling/reshape.py``), where it was a kernel per op. When an elementwise op reads
the result (a scale), the chain is that op's input view instead and no transpose kernel
runs (:mod:`tilegraph.lowering.analysis.elementwise_views`). Checked against the graph on
both executors with NaN in every padding lane."""

from __future__ import annotations

import numpy as np
import pytest

from tests.lowering.test_tile_differential import assert_matches, assert_no_nan, run_levels
from tilegraph.builder import GraphBuilder


def _head_split(unsqueeze: bool, scale: bool):
    """(module, inputs): x [2, 7, 32] split into 4 heads of 8, [2, 4, 7, 8] (and [2, 4, 1,
    7, 8] with ``unsqueeze``), then doubled when ``scale`` (so the split is a group of its
    own, as before LLaMA's rotary embedding)."""
    b = GraphBuilder()
    x = b.input("x", [2, 7, 32])
    heads = b.op("reshape", x, b.constant(np.array([2, 7, 4, 8], np.int64)))
    y = b.op("transpose", heads, perm=[0, 2, 1, 3])
    if unsqueeze:
        y = b.op("unsqueeze", y, b.constant(np.array([2], np.int64)))
    if scale:
        y = b.op("mul", y, b.constant(np.float32(2.0)))
    inputs = {"x": np.random.default_rng(0).standard_normal((2, 7, 32)).astype(np.float32)}
    return b.build(y), inputs


@pytest.mark.parametrize("platform", ["test", "ascend910b", "ascend310p"])
@pytest.mark.parametrize("unsqueeze", [False, True])
@pytest.mark.parametrize("scale", [False, True])
def test_transpose_between_reshapes_is_one_kernel(platform: str, unsqueeze: bool, scale: bool):
    module, inputs = _head_split(unsqueeze, scale)
    levels = run_levels(module, inputs, platform, pad_value=float("nan"))
    assert_no_nan(levels)
    assert_matches(levels)
    kernels = [k.ops for k in levels.tiled_kernels]
    moves = [ops for ops in kernels if "graph.transpose" in ops]
    assert len(moves) == 1 and "graph.reshape" in moves[0], kernels
    # without the unsqueeze the pipeline moves the scalar product ahead of the reshape
    # (it then writes the move's input: two kernels); after it, the product reads the
    # move as its input view (one kernel)
    viewed = scale and unsqueeze
    assert len(kernels) == (2 if scale and not unsqueeze else 1), kernels
    assert ("graph.mul" in moves[0]) == viewed, kernels
