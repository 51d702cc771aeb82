"""``fuse-ops``' ``views-cloned``: a view op read by several matmuls as their operands is
cloned into each, so each matmul reads the tensor in place (``tile.strided_view``) and no
kernel copies the view; a view that something else also reads stays one kernel. Both
executors against the graph, with NaN in the padding lanes."""

from __future__ import annotations

import numpy as np

from tests.lowering.test_tile_differential import assert_matches, assert_no_nan, run_levels
from tilegraph.builder import GraphBuilder
from tilegraph.passes.statistics import collecting_statistics

RNG = np.random.default_rng(21)
VIEWS = {"graph.reshape", "graph.transpose"}


def _group_split_read_twice(also_relu: bool):
    """x [B, S, C] split into 4 groups ``[B, 4, S, C/4]`` (Reshape, Transpose) and read by
    two group-batched products (SqueezeBERT's Q and V); with ``also_relu`` a ReLU reads the
    split as well."""
    b = GraphBuilder()
    x = b.input("x", [3, 11, 32])
    split = b.op(
        "transpose",
        b.op("reshape", x, b.constant(np.array([3, 11, 4, 8], np.int64))),
        perm=[0, 2, 1, 3],
    )
    w1, w2 = (b.constant(RNG.standard_normal((4, 8, 8)).astype(np.float32)) for _ in range(2))
    outs = [b.op("matmul", split, w1), b.op("matmul", split, w2)]
    if also_relu:
        outs.append(b.op("relu", split))
    module = b.build(*outs)
    return module, {"x": RNG.standard_normal((3, 11, 32)).astype(np.float32)}


def test_a_view_read_by_two_matmuls_is_each_ones_prologue():
    module, inputs = _group_split_read_twice(also_relu=False)
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, "ascend910b", pad_value=float("nan"))
    assert_no_nan(levels)
    assert_matches(levels)
    kernels = levels.tiled_kernels
    assert not [k.ops for k in kernels if set(k.ops) <= VIEWS], [k.ops for k in kernels]
    assert len(kernels) == 2, [k.ops for k in kernels]
    assert stats.for_pass("fuse-ops")["views-cloned"] == 2  # the reshape and the transpose


def test_a_view_read_by_another_op_too_stays_one_kernel():
    module, inputs = _group_split_read_twice(also_relu=True)
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, "ascend910b", pad_value=float("nan"))
    assert_matches(levels)
    assert stats.for_pass("fuse-ops")["views-cloned"] == 0
    assert any(set(k.ops) == VIEWS for k in levels.tiled_kernels)  # the split, copied once
