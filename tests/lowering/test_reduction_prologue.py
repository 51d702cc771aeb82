"""A reduction with elementwise ops before it (and after it) in its fused group runs as one
vector kernel (:mod:`tilegraph.lowering.conversion.tiling.reduction_prologue`): every
level (graph, macro kernels, tiles through both executors) agrees, on the ``test`` preset
(8 KiB UB: ragged row tiles, the chunked form for long rows) and on ``ascend910b``.

The shapes are the zoo's: a squared distance summed (knn), a masked mean (masked
attention), a routing-weighted sum (moe), a variance (einsum), a clipped L2 norm (cosine),
a max over a reshaped input (hiera).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.ir import SSAValue

from tests.lowering.test_tile_differential import (
    NAN,
    VECTOR,
    Graph,
    assert_matches,
    assert_units,
    run_levels,
)
from tilegraph.lowering.conversion.graph_to_kernels_remarks import SPLIT_KIND, lowering_remarks
from tilegraph.passes.context import make_context, parse_mlir
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.statistics import collecting_statistics
from tilegraph.runtime.tiles import run_tiles


@dataclass(frozen=True)
class Case:
    id: str
    build: Callable[[Graph], Sequence[SSAValue]]
    ops: tuple[str, ...]
    """The one kernel's ops (``graph.`` left off)."""
    chunked: bool = False
    """The kernel takes the chunked form on the ``test`` preset."""


def _squared_distance(g: Graph) -> list[SSAValue]:
    d = g.op("sub", g.input([37, 24]), g.input([37, 24]))
    return [g.op("reduce_sum", g.op("mul", d, d), g.ints([-1]), keepdims=1)]


def _masked_mean(g: Graph) -> list[SSAValue]:
    x, mask, count = g.input([5, 12, 16]), g.input([5, 12, 1]), g.input([5, 16])
    s = g.op("reduce_sum", g.op("mul", x, mask), g.ints([1]), keepdims=0)
    return [g.op("div", s, count)]


def _weighted_sum(g: Graph) -> list[SSAValue]:
    """A sum over the entries a comparison keeps, its mask cast to float (bucketize, moe)."""
    x = g.input([6, 4, 16])
    w = g.op("cast", g.op("greater", x, g.const([16])), to=1)
    return [g.op("reduce_sum", g.op("mul", g.input([6, 4, 16]), w), g.ints([1]), keepdims=0)]


def _variance(g: Graph) -> list[SSAValue]:
    c = g.op("sub", g.input([5, 3, 50]), g.input([5, 3, 1]))
    v = g.op("reduce_mean", g.op("mul", c, c), g.ints([2]), keepdims=1)
    v = g.op("div", g.op("mul", v, g.const([1], low=0.5)), g.const([1], low=1.0))
    return [g.op("sqrt", v)]


def _clipped_l2(g: Graph) -> list[SSAValue]:
    n = g.op("reduce_l2", g.input([9, 70]), g.ints([1]), keepdims=1)
    lo = g.b.constant(np.array(1.0, np.float32))
    return [g.op("clip", n, lo)]


def _max_of_sum(g: Graph) -> list[SSAValue]:
    s = g.op("add", g.input([3, 11, 30]), g.input([30]))
    return [g.op("reduce_max", s, g.ints([1, 2]), keepdims=0)]


def _log_sum(g: Graph) -> list[SSAValue]:
    """``log(x * x)`` is -inf on a zero lane: a ragged chunk's lanes past the row (zero
    fill) would make the sum -inf."""
    x = g.input([2, 2100])
    s = g.op("reduce_sum", g.op("log", g.op("mul", x, x)), g.ints([1]), keepdims=0)
    return [g.op("neg", s)]


def _exp_sum_two_axes(g: Graph) -> list[SSAValue]:
    e = g.op("exp", g.op("mul", g.input([2, 40, 110]), g.const([110])))
    return [g.op("reduce_sum", e, g.ints([1, 2]), keepdims=1)]


def _viewed_max(g: Graph) -> list[SSAValue]:
    """Hiera's unroll pooling: a max over a reshaped input's new axis, read through a GM
    view of the input (no reshape kernel)."""
    r = g.op("reshape", g.input([2, 64, 24]), g.ints([2, 4, 16, 24]))
    return [g.op("reduce_max", r, g.ints([1]), keepdims=0)]


def _viewed_max_scaled(g: Graph) -> list[SSAValue]:
    r = g.op("reshape", g.input([2, 16, 8]), g.ints([2, 4, 4, 8]))
    m = g.op("reduce_max", r, g.ints([1]), keepdims=0)
    return [g.op("mul", m, g.input([2, 4, 8]))]


CASES = [
    Case("squared_distance", _squared_distance, ("sub", "mul", "reduce_sum")),
    Case("masked_mean", _masked_mean, ("mul", "reduce_sum", "div")),
    Case("weighted_sum", _weighted_sum, ("greater", "cast", "mul", "reduce_sum")),
    Case("variance", _variance, ("sub", "mul", "reduce_mean", "mul", "div", "sqrt")),
    Case("clipped_l2", _clipped_l2, ("reduce_l2", "clip")),
    Case("max_of_sum", _max_of_sum, ("add", "reduce_max")),
    Case("viewed_max_chunked", _viewed_max, ("reshape", "reduce_max"), chunked=True),
    Case("viewed_max_scaled", _viewed_max_scaled, ("reshape", "reduce_max", "mul")),
    Case("log_sum_chunked", _log_sum, ("mul", "log", "reduce_sum", "neg"), chunked=True),
    Case("exp_sum_two_axes_chunked", _exp_sum_two_axes, ("mul", "exp", "reduce_sum"), True),
]


def _one_kernel(levels, case: Case) -> None:
    ops = [k.ops for k in levels.tiled_kernels]
    assert ops == [tuple(f"graph.{o}" for o in case.ops)], ops
    assert_units(levels.tiled_kernels, {f"graph.{case.ops[-1]}": VECTOR}, "tile-kernels")


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_reduction_and_its_elementwise_ops_are_one_kernel(case: Case, platform: str):
    g = Graph()
    module = g.b.build(*case.build(g))
    levels = run_levels(module, g.arrays, platform, pad_value=NAN)
    _one_kernel(levels, case)
    chunked = any(o.name == "tile.vdup" for o in levels.module.walk())
    assert chunked == (case.chunked and platform == "test")
    if platform == "test" and not case.chunked:
        assert levels.splits(), "the test preset's small UB cuts the rows into tiles"
    for level, outputs in {"graph": levels.reference, **levels.outputs}.items():
        assert np.isfinite(outputs[0]).all(), level
    assert_matches(levels)


@pytest.mark.parametrize("case", [CASES[1], CASES[3], CASES[-1]], ids=lambda c: c.id)
def test_fp16_data_reduces_in_fp32_after_its_prologue(case: Case):
    """The prologue runs in the data's type, the sum in fp32 (CANN's reduce_sum)."""
    g = Graph(dtype="float16")
    module = g.b.build(*case.build(g))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    _one_kernel(levels, case)
    casts = [o for o in levels.module.walk() if o.name == "tile.vcast"]
    assert casts, "the prologue's fp16 result is cast up before the vreduce"
    assert_matches(levels, rtol=1e-2, atol=2e-2)


def _normalised(rows: int, width: int) -> str:
    """``e / sum(e)``, ``e = exp(x)``, as one hand-made group (fuse-ops does not make it)."""
    t = f"!layout.tensor<{rows}x{width}xf32>"
    r = f"!layout.tensor<{rows}x1xf32>"
    a = "!layout.tensor<1xi64>"
    return f"""
func.func @main(%x: {t}) -> {t} {{
  %a = graph.constant dense<[1]> : {a}
  %y = graph.fused "fused_exp_reduce_sum_div_0" <elemwise> (%x, %a) : ({t}, {a}) -> {t} {{
  ^bb0(%x1: {t}, %a1: {a}):
    %e = graph.exp %x1 : {t}
    %s = graph.reduce_sum %e, %a1 {{keepdims = 1 : i64}} : ({t}, {a}) -> {r}
    %d = graph.div %e, %s : ({t}, {r}) -> {t}
    graph.yield %d : {t}
  }}
  func.return %y : {t}
}}
"""


def _lowered_normalised(rows: int, width: int):
    """The module of :func:`_normalised` lowered and tiled on ``test``, the remarks of its
    lowering and its outputs (both executors) against numpy's."""
    module = parse_mlir(_normalised(rows, width))
    x = np.random.default_rng(0).standard_normal((rows, width)).astype(np.float32)
    with collecting_statistics() as stats:
        run_pipeline("set-target{platform=test},lower-graph-to-kernels", make_context(), module)
    run_pipeline("tile-kernels", make_context(), module)
    e = np.exp(x)
    for executor in ("interpret", "fast"):
        (out,) = run_tiles(module, [x], executor=executor)
        np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5, err_msg=executor)
    return module, lowering_remarks(stats)


def test_the_tail_broadcasts_the_reduced_tile_back_over_the_rows():
    """``e / sum(e)``: the tail reads the prologue's ``e`` tile (still in UB) and the
    reduced tile, broadcast along the row; one kernel over ragged row tiles (37 rows)."""
    module, remarks = _lowered_normalised(37, 30)
    assert not [r for r in remarks if r.kind == SPLIT_KIND]
    kernels = [f for f in module.ops if isinstance(f, func.FuncOp) and "tile.ops" in f.attributes]
    (kernel,) = kernels
    assert kernel.attributes["tile.tiles"].value.data > 1  # type: ignore[attr-defined]
    names = [o.name for o in kernel.walk()]
    assert names.count("tile.vexp") == 1  # e is computed once, not reloaded
    assert names.index("tile.vreduce") < names.index("tile.vdiv")


def test_a_broadcast_tail_over_rows_too_long_for_ub_is_refused_with_its_reason():
    """A row of 3000 does not fit the ``test`` preset's UB: the tail would need the row
    again after the chunks; refused by the reduction strategy, and the split kernels
    compute the graph."""
    _, remarks = _lowered_normalised(2, 3000)
    (split,) = [r for r in remarks if r.kind == SPLIT_KIND]
    assert split.details["strategy"] == "reduction"
    assert split.details["reason"] == (
        "the ops after the reduction read the reduced axes again, which do not fit UB"
    )


def test_a_prologue_over_a_prime_row_too_long_for_ub_is_refused_with_its_reason():
    """A row of 2003 (prime) on the ``test`` preset: the only chunk length dividing it
    under what fits is 1, so the group is refused (the split kernels, the reduce's own
    chunks padded with the identity) and every level still agrees."""
    g = Graph()
    e = g.op("exp", g.input([2, 2003]))
    module = g.b.build(g.op("reduce_sum", e, g.ints([1]), keepdims=0))
    with collecting_statistics() as stats:
        levels = run_levels(module, g.arrays, "test")
    (split,) = [r for r in lowering_remarks(stats) if r.kind == SPLIT_KIND]
    assert split.details["strategy"] == "reduction"
    assert split.details["reason"] == (
        "a prologue's chunks must divide the reduced axis: none near what fits UB"
    )
    assert_matches(levels)
