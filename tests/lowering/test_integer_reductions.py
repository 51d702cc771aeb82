"""Integer sums, maxima and minima on the vector unit (``tiling/reduction.py``), each level
against the one above it (the harness of :mod:`tests.lowering.test_tile_differential`) on
the ``test`` preset, exactly: int32 and int16 data reduced along the last axis (the lanes
folded by integer adds: no ``vcadd`` for integers), along a leading axis (a MoE router's
token count per expert, ``sum(one_hot, 0)``) and over every axis. int64 stays on the host
and says why; so do the reductions with no integer program (a mean)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.ir import SSAValue

from tests.lowering.test_gather_kernels import index_input
from tests.lowering.test_tile_differential import (
    VECTOR,
    Graph,
    assert_matches,
    assert_single_host_kernel,
    assert_units,
    run_levels,
)

CASES = [
    ("reduce_sum", "int32", [6, 37], [-1]),
    ("reduce_sum", "int32", [33, 4], [0]),
    ("reduce_sum", "int16", [5, 3, 40], None),
    ("reduce_max", "int32", [7, 130], [1]),
    ("reduce_min", "int16", [9, 24], [0]),
]


@pytest.mark.parametrize(("kind", "dtype", "shape", "axes"), CASES)
def test_integer_reduction_is_exact_on_the_vector_unit(
    kind: str, dtype: str, shape: list[int], axes: list[int] | None
):
    g = Graph()
    x = index_input(g, shape, 1000 if dtype == "int32" else 50, dtype)  # no int16 overflow
    out = g.op(kind, x, None if axes is None else g.ints(axes), keepdims=0)
    levels = run_levels(g.b.build(out), g.arrays, "test")
    assert_matches(levels, rtol=0, atol=0)
    assert_units(levels.tiled_kernels, {f"graph.{kind}": VECTOR}, "tile-kernels{platform=test}")
    assert levels.outputs["fast"][0].dtype == np.dtype(dtype)


def _int64_sum(g: Graph) -> SSAValue:
    return g.op("reduce_sum", index_input(g, [4, 8], 9, "int64"), g.ints([0]), keepdims=0)


def _int32_mean(g: Graph) -> SSAValue:
    return g.op("reduce_mean", index_input(g, [4, 8], 9, "int32"), g.ints([1]))


@pytest.mark.parametrize(
    ("build", "reason"),
    [(_int64_sum, "no 64-bit integer add"), (_int32_mean, "a reduction on i32")],
    ids=["int64_sum", "int32_mean"],
)
def test_what_stays_on_the_host_says_why(build, reason: str):
    assert_single_host_kernel(build, reason)
