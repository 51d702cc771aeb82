"""slices-as-split: slices that partition one axis (a fused projection's q / k / v, as
Phi-3 exports them) become one Split; near misses stay slices."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from tests.passes.test_rules_arith import _check_bitwise
from tilegraph.builder import GraphBuilder

RNG = np.random.default_rng(11)
ONLY = "algebraic-simplify{only=slices-as-split}"


def _ops(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


def _sliced(bounds: list[tuple[int, int]], axis: int = -1, rejoin: bool = False) -> ModuleOp:
    """x [2, 3, 12] sliced along ``axis`` into ``bounds`` (ONNX bounds: negative ones from
    the end, past the end clamped); with ``rejoin`` the last part is concatenated back
    onto a rotated first part, as a partial rotary does."""
    b = GraphBuilder()
    x = b.input("x", [2, 3, 12])
    axes = b.constant(np.array([axis], np.int64))
    parts = [
        b.op("slice", x, b.constant(np.array([s], np.int64)), b.constant(np.array([e], np.int64)), axes)
        for s, e in bounds
    ]  # fmt: skip
    if rejoin:
        return b.build(b.op("concat", b.op("neg", parts[0]), parts[-1], axis=axis))
    return b.build(*[b.op("relu", p) for p in parts])


@pytest.mark.parametrize(
    ("bounds", "axis"),
    [
        ([(0, 4), (4, 8), (8, 12)], -1),  # q, k, v in order
        ([(8, 99), (0, 6), (6, -4)], -1),  # out of order, clamped and negative bounds
        ([(0, 10), (10, 12)], -1),  # unequal parts
        ([(1, 3), (0, 1)], 1),  # a middle axis
    ],
)
def test_slices_that_partition_an_axis_are_one_split(bounds, axis):
    module = _sliced(bounds, axis)
    x = RNG.standard_normal((2, 3, 12)).astype(np.float32)
    x[1, 2, 7] = np.nan  # a NaN in one part stays in that part only
    _check_bitwise(module, ONLY, {"x": x})
    ops = _ops(module)
    assert ops["graph.slice"] == 0 and ops["graph.split"] == 1


@pytest.mark.parametrize(
    ("bounds", "axis", "rejoin"),
    [
        ([(0, 4), (4, 8)], -1, False),  # a gap at the end
        ([(0, 6), (4, 12)], -1, False),  # overlapping
        ([(0, 4), (0, 4), (4, 12)], -1, False),  # a range twice
        ([(0, 4), (4, 12)], -1, True),  # a part put back by a Concat (partial rotary)
    ],
)
def test_slices_that_do_not_partition_stay(bounds, axis, rejoin):
    module = _sliced(bounds, axis, rejoin)
    _check_bitwise(module, ONLY, {"x": RNG.standard_normal((2, 3, 12)).astype(np.float32)})
    assert _ops(module)["graph.split"] == 0 and _ops(module)["graph.slice"] == len(bounds)
