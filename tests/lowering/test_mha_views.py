"""nn.MultiheadAttention's dynamo export: packed in_proj selects and q / k scales.

torch's exporter writes the packed in_proj as one matmul, a reshape / transpose to
``[3, H, S, D]``, three constant-index ``Gather``s (q, k, v) and SDPA's decomposition with
``a = D ** -0.25`` on q and on k. Built here with the graph builder (D = 16, so ``a = 0.5``
and the exact ``matmul-operand-scales`` applies): the selects become one split
(``selects-as-split``), the split and the view chain before it are copied into each matmul
that reads them (``fuse-ops``), and the attention is the flash kernel. Checked against the
graph on both executors with NaN in the padding lanes.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.lowering.test_tile_differential import assert_matches, assert_no_nan, run_levels
from tilegraph.builder import GraphBuilder

VIEWS = {"graph.reshape", "graph.transpose", "graph.squeeze", "graph.split", "graph.gather"}


def _mha(seq: int, heads: int, dim: int):
    rng = np.random.default_rng(3)
    hidden = heads * dim
    b = GraphBuilder()
    x = b.input("x", [seq, hidden])
    w = b.constant((rng.standard_normal((hidden, 3 * hidden)) / hidden**0.5).astype(np.float32))
    bias = b.constant(rng.standard_normal(3 * hidden).astype(np.float32))
    packed = b.op("add", b.op("matmul", x, w), bias)
    packed = b.op("reshape", packed, b.constant(np.array([seq, 3, heads, dim], np.int64)))
    packed = b.op("transpose", packed, perm=[1, 2, 0, 3])  # [3, H, S, D]
    q, k, v = (b.op("gather", packed, b.constant(np.array(i, np.int64)), axis=0) for i in range(3))
    a = b.constant(np.float32(dim**-0.25))
    scores = b.op("matmul", b.op("mul", q, a), b.op("mul", b.op("transpose", k, perm=[0, 2, 1]), a))
    out = b.op("matmul", b.op("softmax", scores, axis=-1), v)
    module = b.build(out)
    return module, {"x": rng.standard_normal((seq, hidden)).astype(np.float32)}


@pytest.mark.parametrize("seq", [7, 20])
def test_mha_selects_are_views_nan_padding(seq: int):
    module, inputs = _mha(seq, 2, 16)
    levels = run_levels(module, inputs, "ascend910b", pad_value=float("nan"))
    assert_no_nan(levels)
    assert_matches(levels)
    kernels = levels.tiled_kernels
    # the in_proj and the flash kernel: no kernel of views, selects or scales of its own
    assert len(kernels) == 2, [k.ops for k in kernels]
    assert all(not set(k.ops) <= VIEWS | {"graph.mul"} for k in kernels)
    assert any({"graph.split", "graph.softmax"} <= set(k.ops) for k in kernels)
