"""Pool and pick (nearest resize) tiles inside a batch run batched, their batch dim moved
last (:func:`tilegraph.runtime.fast_executor.vector.batched_batch_last`): no op of them
runs tile by tile, and the results are the interpreter's bit for bit."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tilegraph
from tilegraph.builder import GraphBuilder
from tilegraph.dialects.tile.vector_layout import PoolOp
from tilegraph.runtime.fast_executor.forms import batched_kernel_of
from tilegraph.runtime.tiles import fast_module, run_tiles


def _pooled(b: GraphBuilder, x: Any, op: str) -> Any:
    if op == "resize":
        scales = b.constant(np.array([1, 1, 2, 2], np.float32))
        return b.op("resize", x, None, scales, None, mode="nearest")
    return b.op(op, x, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])


@pytest.mark.parametrize("op", ["max_pool", "avg_pool", "resize"])
def test_pool_and_pick_tiles_run_batched(op: str):
    b = GraphBuilder()
    x = b.input("x", [1, 20, 23, 22], "float32", "NCHW")
    module = tilegraph.compile(b.build(_pooled(b, x, op)), platform="test").module
    fast = fast_module(module)
    assert fast.per_tile_ops == []
    source = "\n".join(fast._sources.values())
    assert "_b = _slots(" in source  # the tiles do run in a batch
    data = np.random.default_rng(0).standard_normal((1, 20, 23, 22)).astype(np.float32)
    (got,) = run_tiles(module, [data], executor="fast")
    (want,) = run_tiles(module, [data], executor="interpret")
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", ["max_pool", "avg_pool"])
def test_a_varying_origin_batches_a_max_pool_only(op: str):
    """A max pool does not read its tile's origin: a batch whose origins vary is one
    call; an average pool's divisors depend on it (its origin must not vary)."""
    b = GraphBuilder()
    x = b.input("x", [1, 20, 23, 22], "float32", "NCHW")
    module = tilegraph.compile(b.build(_pooled(b, x, op)), platform="test").module
    (pool,) = [o for o in module.walk() if isinstance(o, PoolOp)]
    varying = [True] * len(pool.operands)
    found = batched_kernel_of(pool, varying)
    assert (found is not None) == (op == "max_pool")
    assert batched_kernel_of(pool, [True, *[False] * (len(pool.operands) - 2), True])
