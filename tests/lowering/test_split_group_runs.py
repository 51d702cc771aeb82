"""A fused group that no strategy tiles as a whole is split into runs of its ops in
program order, each the longest that a strategy still tiles, not one kernel per op.

ConvNeXt's last block: the second pointwise matmul's bias and layer scale, the permute
back, the residual add and the global mean after them are one group (``fuse-ops`` puts
the elementwise ops with the reduction); the reduction strategy refuses the group, and
the bias add and layer-scale multiply now run as one vector kernel. Checked against the
graph level with NaN in the padding lanes on three presets.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.lowering.test_tile_differential import assert_matches, assert_no_nan, run_levels
from tilegraph.builder import GraphBuilder
from tilegraph.passes.statistics import collecting_statistics


def _block_tail():
    rng = np.random.default_rng(11)
    b = GraphBuilder("main")
    x = b.input("x", [1, 64, 8, 8], "float32", "NCHW")
    hidden = b.input("hidden", [1, 8, 8, 256])
    w = b.constant((rng.standard_normal((256, 64)) * 0.1).astype(np.float32))
    bias = b.constant(rng.standard_normal(64).astype(np.float32))
    gamma = b.constant(rng.standard_normal(64).astype(np.float32))
    y = b.op("mul", b.op("add", b.op("matmul", hidden, w), bias), gamma)
    y = b.op("add", x, b.op("transpose", y, perm=[0, 3, 1, 2]))
    module = b.build(b.op("reduce_mean", y, np.array([2, 3], np.int64), keepdims=0))
    inputs = {
        "x": rng.standard_normal((1, 64, 8, 8)).astype(np.float32),
        "hidden": rng.standard_normal((1, 8, 8, 256)).astype(np.float32),
    }
    return module, inputs


@pytest.mark.parametrize("platform", ["test", "ascend910b", "ascend310p"])
def test_a_split_group_keeps_its_tileable_runs_together(platform: str):
    module, inputs = _block_tail()
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, platform, pad_value=float("nan"))
    assert_no_nan(levels)
    assert_matches(levels)
    assert stats.as_dict()["lower-graph-to-kernels"]["split-groups"] >= 1
    ops = [tuple(k.ops) for k in levels.tiled_kernels]
    assert ("graph.add", "graph.mul") in ops, ops
    assert all(k.unit != "host" for k in levels.tiled_kernels)
