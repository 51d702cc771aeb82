"""Chunked reductions on the ``test`` preset (8 KiB UB): reduced axes too long for one tile.

Each case is a reduction whose reduced axes do not fit UB whole, so ``tile-kernels`` loops
over chunks of them (:mod:`tilegraph.lowering.conversion.tiling.reduction_chunks`): every
level (graph, macro kernels, tiles through both executors) must agree, in fp32 and fp16,
with NaN in the padding lanes of NC1HWC0-held inputs (``pad_value``), and the kernel must
be the chunked one (it starts its accumulators with ``tile.vdup``) on the vector unit.
Most chunk lengths leave a ragged last chunk (e.g. 1000 = 496 + 496 + 8).
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
from tilegraph.lowering.analysis.kernel_attrs import KERNEL_ATTR

TOLERANCES = {"float32": (1e-4, 1e-5), "float16": (1e-2, 2e-2)}
"""(rtol, atol) per dtype; fp16 sums of ~1000 terms are added in another order per level."""


@dataclass(frozen=True)
class ChunkCase:
    id: str
    op: str
    build: Callable[[Graph], Sequence[SSAValue]]
    inputs: Callable[[np.random.Generator, Sequence[int]], np.ndarray] | None = None
    """Replaces the standard normal input data (a product needs factors near 1)."""


def _unary(kind: str, shape: Sequence[int], fmt: str = "ND", **attrs):
    return lambda g: [g.op(kind, g.input(shape, fmt), **attrs)]


def _reduce(kind: str, shape: Sequence[int], axes: Sequence[int] | None, keepdims: int):
    def build(g: Graph) -> list[SSAValue]:
        x = g.input(shape)
        if axes is None:
            return [g.op(kind, x, keepdims=keepdims)]
        return [g.op(kind, x, g.ints(axes), keepdims=keepdims)]

    return build


def _layer_norm(shape: Sequence[int], axis: int):
    def build(g: Graph) -> list[SSAValue]:
        params = list(shape[axis:])
        x = g.input(shape)
        return [g.op("layer_norm", x, g.const(params, low=0.5), g.const(params), axis=axis)]

    return build


def _rms_norm(shape: Sequence[int], axis: int):
    def build(g: Graph) -> list[SSAValue]:
        x = g.input(shape)
        return [g.op("rms_norm", x, g.const(list(shape[axis:]), low=0.5), axis=axis)]

    return build


CASES = [
    ChunkCase("softmax_1000", "softmax", _unary("softmax", [3, 1000], axis=-1)),
    ChunkCase("softmax_middle_axis", "softmax", _unary("softmax", [2, 700, 3], axis=1)),
    # a row of 2000 does not fit even alone: chunks of the kept axis, the reduced one a loop
    ChunkCase("softmax_axis0_wide_rows", "softmax", _unary("softmax", [5, 2000], axis=0)),
    ChunkCase("log_softmax_1000", "log_softmax", _unary("log_softmax", [2, 1000], axis=-1)),
    ChunkCase("reduce_sum", "reduce_sum", _reduce("reduce_sum", [3, 2100], [1], 0)),
    ChunkCase("reduce_mean_two_axes", "reduce_mean", _reduce("reduce_mean", [2, 40, 110], [1, 2], 1)),
    ChunkCase("reduce_max", "reduce_max", _reduce("reduce_max", [4, 2100], [-1], 1)),
    ChunkCase("reduce_min_all", "reduce_min", _reduce("reduce_min", [40, 300], None, 0)),
    ChunkCase(
        "reduce_prod",
        "reduce_prod",
        _reduce("reduce_prod", [2, 2200], [1], 0),
        lambda rng, shape: 1.0 + 0.01 * rng.standard_normal(shape),
    ),
    ChunkCase("reduce_l1", "reduce_l1", _reduce("reduce_l1", [2, 2000], [1], 1)),
    ChunkCase("reduce_l2", "reduce_l2", _reduce("reduce_l2", [2, 2000], [1], 0)),
    ChunkCase(
        "reduce_sum_square", "reduce_sum_square", _reduce("reduce_sum_square", [2, 2000], [1], 0)
    ),
    ChunkCase(
        "reduce_log_sum_exp", "reduce_log_sum_exp", _reduce("reduce_log_sum_exp", [3, 1000], [1], 0)
    ),
    ChunkCase("layer_norm_1000", "layer_norm", _layer_norm([2, 1000], -1)),
    ChunkCase("layer_norm_two_axes", "layer_norm", _layer_norm([2, 30, 50], 1)),
    ChunkCase("rms_norm_1000", "rms_norm", _rms_norm([2, 1000], -1)),
    ChunkCase("rms_norm_two_axes", "rms_norm", _rms_norm([2, 30, 50], 1)),
    ChunkCase("global_avg_pool", "global_avg_pool", _unary("global_avg_pool", [1, 20, 60, 45], "NCHW")),
    ChunkCase("global_max_pool", "global_max_pool", _unary("global_max_pool", [1, 20, 60, 45], "NCHW")),
]  # fmt: skip


def _chunked_kernels(module, op: str) -> list[str]:
    """Names of the kernels computing ``op`` that start an accumulator (the chunked form)."""
    found = []
    for fn in module.ops:
        if not isinstance(fn, func.FuncOp) or KERNEL_ATTR not in fn.attributes:
            continue
        ops = fn.attributes.get("tile.ops")
        if ops is None or op not in ops.data:  # type: ignore[attr-defined]
            continue
        if any(o.name == "tile.vdup" for o in fn.walk()):
            found.append(fn.sym_name.data)
    return found


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_chunked_reduction_every_level_agrees(case: ChunkCase, dtype: str):
    g = Graph(padded=True, dtype=dtype)
    module = g.b.build(*case.build(g))
    if case.inputs is not None:
        shape = g.arrays[0].shape
        g.arrays[0] = case.inputs(g.rng, shape).astype(g.dtype)
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    op = f"graph.{case.op}"
    assert_units(levels.tiled_kernels, {op: VECTOR}, "tile-kernels{platform=test}")
    assert _chunked_kernels(levels.module, op), f"no chunked kernel computes {op}"
    for level, outputs in {"graph": levels.reference, **levels.outputs}.items():
        for i, out in enumerate(outputs):
            assert not np.isnan(out).any(), f"{level} output {i}: NaN"
    rtol, atol = TOLERANCES[dtype]
    assert_matches(levels, rtol, atol)
