"""Input views: reshapes, transposes and static slices of a GM tensor read by an
elementwise kernel through a strided view, not run as kernels of their own; output views:
reshapes and transposes of its result, written through a view of the output.

Mamba-2 slices ``dt`` out of its projection and unsqueezes it before ``softplus(dt + b)``;
attention-free models transpose ``[B, S, H]`` before a gate; DAB-DETR cuts box coordinates
out of ``[B, Q, 4]`` before scaling them. ``fuse-ops`` takes such a chain into the
elementwise group as no work (:func:`~tilegraph.passes.fuse_legality.joins_as_input_view`)
and the elementwise strategy loads the operand's tiles through a ``tile.strided_view`` of
the chain's source (:mod:`tilegraph.lowering.analysis.elementwise_views`). Checked against
the graph through both executors with NaN in the padding lanes, on ragged sizes, and what
stays a kernel of its own.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.lowering.test_tile_differential import assert_matches, assert_no_nan, run_levels
from tilegraph.builder import GraphBuilder
from tilegraph.dialects.tile import StridedViewOp

NAN = float("nan")


def _ints(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


def _normal(rng: np.random.Generator, shape: list[int]) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _dt(b: GraphBuilder, rng: np.random.Generator):
    """Mamba-2's dt: ``softplus(unsqueeze(x[:, :, 40:48]) + bias)`` (ragged 3 x 11)."""
    x = b.input("x", [3, 11, 48])
    dt = b.op("slice", x, b.constant(_ints(40)), b.constant(_ints(48)), b.constant(_ints(2)))
    u = b.op("unsqueeze", dt, b.constant(_ints(2)))
    bias = b.constant(_normal(rng, [8]))
    return b.op("softplus", b.op("add", u, bias)), {"x": _normal(rng, [3, 11, 48])}


def _heads(b: GraphBuilder, rng: np.random.Generator):
    """A head split ``[2, 7, 32] -> [2, 4, 7, 8]`` times a tensor of its shape."""
    x = b.input("x", [2, 7, 32])
    y = b.input("y", [2, 4, 7, 8])
    heads = b.op("reshape", x, b.constant(_ints(2, 7, 4, 8)))
    t = b.op("transpose", heads, perm=[0, 2, 1, 3])
    return b.op("mul", t, y), {"x": _normal(rng, [2, 7, 32]), "y": _normal(rng, [2, 4, 7, 8])}


def _rows(b: GraphBuilder, rng: np.random.Generator):
    """Every other row of ``[5, 9, 24]`` (a step along a middle axis), minus a tensor."""
    x = b.input("x", [5, 9, 24])
    y = b.input("y", [5, 5, 24])
    s = b.op(
        "slice", x, b.constant(_ints(0)), b.constant(_ints(9)), b.constant(_ints(1)),
        b.constant(_ints(2)),
    )  # fmt: skip
    return b.op("sub", s, y), {"x": _normal(rng, [5, 9, 24]), "y": _normal(rng, [5, 5, 24])}


def _broadcast(b: GraphBuilder, rng: np.random.Generator):
    """A mask ``[3, 13]`` unsqueezed to ``[3, 1, 13]`` and broadcast over 6 heads: the view
    is stretched by its reader, which reads it like any broadcast input."""
    m = b.input("m", [3, 13])
    s = b.input("s", [3, 6, 13])
    u = b.op("unsqueeze", m, b.constant(_ints(1)))
    return b.op("mul", s, u), {"m": _normal(rng, [3, 13]), "s": _normal(rng, [3, 6, 13])}


def _merge(b: GraphBuilder, rng: np.random.Generator):
    """An output view: ``exp(x) · y`` of ``[2, 4, 7, 8]`` heads merged to ``[2, 7, 32]``
    (transpose of the middle axes, reshape), written through a view of the output."""
    x = b.input("x", [2, 4, 7, 8])
    y = b.input("y", [2, 4, 7, 8])
    t = b.op("transpose", b.op("mul", b.op("exp", x), y), perm=[0, 2, 1, 3])
    out = b.op("reshape", t, b.constant(_ints(2, 7, 32)))
    return out, {"x": _normal(rng, [2, 4, 7, 8]), "y": _normal(rng, [2, 4, 7, 8])}


def _glu(b: GraphBuilder, rng: np.random.Generator):
    """A GLU read through its view split and written through an output view (the
    Conformer's ``a · sigmoid(g)`` unsqueezed for its depthwise convolution)."""
    x = b.input("x", [2, 6, 16])
    a, g = b.op_results("split", x, b.constant(_ints(8, 8)), axis=2)
    out = b.op("unsqueeze", b.op("mul", a, b.op("sigmoid", g)), b.constant(_ints(2)))
    return out, {"x": _normal(rng, [2, 6, 16])}


CASES = {
    "dt": _dt,
    "heads": _heads,
    "rows": _rows,
    "broadcast": _broadcast,
    "merge": _merge,
    "glu": _glu,
}


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_view_chain_is_read_in_place_by_its_elementwise_kernel(platform: str, case: str):
    rng = np.random.default_rng(7)
    b = GraphBuilder()
    out, inputs = CASES[case](b, rng)
    module = b.build(out)
    levels = run_levels(module, inputs, platform, pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    kernels = levels.tiled_kernels
    assert all(k.unit == "vector" for k in kernels), [(k.name, k.reason) for k in kernels]
    assert len(kernels) == 1, [k.ops for k in kernels]
    assert any(isinstance(op, StridedViewOp) for op in module.walk())


def _two_kernels(build, platform: str = "test") -> list[tuple[str, ...]]:
    rng = np.random.default_rng(8)
    b = GraphBuilder()
    outs, inputs = build(b, rng)
    module = b.build(*outs)
    levels = run_levels(module, inputs, platform, pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    return sorted(k.ops for k in levels.tiled_kernels)


def test_a_transpose_of_the_last_axis_stays_a_kernel():
    """``x.T * y``: the view's rows would be one element long (a burst per element); the
    transpose kernel turns the tile on the vector unit instead."""

    def build(b: GraphBuilder, rng: np.random.Generator):
        x, y = b.input("x", [6, 20]), b.input("y", [20, 6])
        out = b.op("mul", b.op("transpose", x, perm=[1, 0]), y)
        return [out], {"x": _normal(rng, [6, 20]), "y": _normal(rng, [20, 6])}

    assert _two_kernels(build) == [("graph.mul",), ("graph.transpose",)]


def test_a_view_of_a_computed_value_keeps_the_producer_out():
    """``reshape(x + y) * z``: a view addresses a GM tensor, which the sum computed in the
    kernel is not; the add keeps its own kernel, the reshape joins the product's."""

    def build(b: GraphBuilder, rng: np.random.Generator):
        x, y, z = b.input("x", [4, 18]), b.input("y", [4, 18]), b.input("z", [8, 9])
        r = b.op("reshape", b.op("add", x, y), b.constant(_ints(8, 9)))
        out = b.op("mul", r, z)
        inputs = {"x": _normal(rng, [4, 18]), "y": _normal(rng, [4, 18])}
        return [out], {**inputs, "z": _normal(rng, [8, 9])}

    assert _two_kernels(build) == [("graph.add",), ("graph.reshape", "graph.mul")]


def test_a_view_read_by_two_kernels_stays_a_kernel():
    """A slice read by a product and by a reduction: not every reader is in one
    elementwise group, so it stays a slice kernel."""

    def build(b: GraphBuilder, rng: np.random.Generator):
        x, y = b.input("x", [4, 32]), b.input("y", [4, 16])
        s = b.op("slice", x, b.constant(_ints(16)), b.constant(_ints(32)), b.constant(_ints(1)))
        total = b.op("reduce_sum", s, b.constant(_ints(1)))
        return [b.op("mul", s, y), total], {"x": _normal(rng, [4, 32]), "y": _normal(rng, [4, 16])}

    kernels = _two_kernels(build)
    assert ("graph.slice",) in kernels, kernels


def test_an_anchor_keeps_its_epilogue_before_a_view():
    """``(x @ w) · reshape(r)``: the product may run in the matmul's epilogue, which reads
    no views, so the reshape does not take the product into a group of its own (the
    reshape stays a kernel, the product the matmul's)."""

    def build(b: GraphBuilder, rng: np.random.Generator):
        x, r = b.input("x", [6, 16]), b.input("r", [48])
        w = b.constant(_normal(rng, [16, 8]) / 4)
        out = b.op("mul", b.op("matmul", x, w), b.op("reshape", r, b.constant(_ints(6, 8))))
        return [out], {"x": _normal(rng, [6, 16]), "r": _normal(rng, [48])}

    kernels = _two_kernels(build, "ascend910b")
    assert any("graph.matmul" in ops and "graph.mul" in ops for ops in kernels), kernels
