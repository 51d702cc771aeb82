"""A split read by one elementwise kernel: its outputs are offset views of its input.

Phi-3's MLP computes ``[gate | up]`` with one projection, splits it, and multiplies
``SiLU(gate)`` by ``up``; a GLU halves its input the same way. The split joins the
elementwise kernel (``fuse-ops``: :func:`~tilegraph.passes.fuse_legality.is_view_split`)
and the kernel reads gate's and up's tiles from the projection's rows at their offsets
(``tile.strided_view``, :func:`~tilegraph.lowering.conversion.tiling.matmul_views.
split_sources`): no split kernel, no GM round trip of the halves. Checked against the graph
through both executors with NaN in the padding lanes, on ragged sizes, for splits along
the last and a middle axis, and what stays a split kernel.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.lowering.test_tile_differential import assert_matches, assert_no_nan, run_levels
from tilegraph.builder import GraphBuilder
from tilegraph.dialects.tile import StridedViewOp
from tilegraph.dialects.tile.workspace import view_offset

NAN = float("nan")


def _gated(shape: list[int], axis: int, sizes: list[int], through_matmul: bool):
    """(module, inputs): ``x`` (times a weight when ``through_matmul``) split along
    ``axis`` into ``sizes``, then ``a · sigmoid(a) · b`` of the first two parts (a third
    part, when there is one, added to the product)."""
    rng = np.random.default_rng(3)
    b = GraphBuilder()
    x = b.input("x", shape)
    source = x
    if through_matmul:
        w = b.constant(rng.standard_normal((shape[-1], shape[-1])).astype(np.float32) / 4)
        source = b.op("matmul", x, w)
    parts = b.op_results("split", source, b.constant(np.array(sizes, np.int64)), axis=axis)
    gate, up = parts[0], parts[1]
    out = b.op("mul", b.op("mul", gate, b.op("sigmoid", gate)), up)
    if len(parts) > 2:
        out = b.op("add", out, parts[2])
    module = b.build(out)
    return module, {"x": rng.standard_normal(shape).astype(np.float32)}


CASES = {
    # Phi-3's MLP: [B, S, 2I] from the projection, halves along the last axis (ragged S, I)
    "mlp": ([1, 7, 24], -1, [12, 12], True),
    # a GLU over channels: halves along a middle axis of an input
    "glu": ([1, 6, 3, 5], 1, [3, 3], False),
    # three unequal parts, the third added: every offset taken
    "three": ([3, 7, 24], 2, [8, 8, 8], False),
}


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_split_read_as_views_by_its_elementwise_kernel(platform: str, case: str):
    shape, axis, sizes, through_matmul = CASES[case]
    module, inputs = _gated(shape, axis, sizes, through_matmul)
    levels = run_levels(module, inputs, platform, pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    kernels = levels.tiled_kernels
    assert all(k.unit != "host" for k in kernels), [(k.name, k.reason) for k in kernels]
    split_kernels = [k.ops for k in kernels if "graph.split" in k.ops]
    assert len(split_kernels) == 1 and "graph.mul" in split_kernels[0], split_kernels
    assert len(kernels) == (2 if through_matmul else 1), [k.ops for k in kernels]
    # the later parts are read from their offsets along the split axis
    stride = int(np.prod(shape[axis:][1:])) if axis != -1 else 1
    want = {stride * sum(sizes[:i]) for i in range(1, len(sizes))}
    offsets = {view_offset(op.result) for op in module.walk() if isinstance(op, StridedViewOp)}
    assert want <= offsets, (want, offsets)


def test_a_split_of_a_value_computed_in_the_kernel_stays_a_kernel():
    """``(x + 1)`` split: the halves would be views of a tensor the kernel computes, which
    is no GM buffer; the add keeps its own kernel and the split joins the product's."""
    rng = np.random.default_rng(4)
    b = GraphBuilder()
    x = b.input("x", [2, 5, 16])
    shifted = b.op("add", x, b.constant(np.float32(1.0)))
    gate, up = b.op_results("split", shifted, b.constant(np.array([8, 8], np.int64)), axis=2)
    module = b.build(b.op("mul", b.op("sigmoid", gate), up))
    levels = run_levels(module, {"x": rng.standard_normal((2, 5, 16)).astype(np.float32)})
    assert_matches(levels)
    ops = sorted(k.ops for k in levels.tiled_kernels)
    assert ops == [("graph.add",), ("graph.split", "graph.sigmoid", "graph.mul")], ops


def test_a_split_read_by_two_kernels_stays_a_kernel():
    """One half read by a product, the other also by a reduction: the split's outputs do
    not all go to one elementwise kernel, so it is a split kernel of its own."""
    rng = np.random.default_rng(5)
    b = GraphBuilder()
    x = b.input("x", [4, 32])
    gate, up = b.op_results("split", x, b.constant(np.array([16, 16], np.int64)), axis=1)
    product = b.op("mul", b.op("sigmoid", gate), up)
    module = b.build(product, b.op("reduce_sum", up, b.constant(np.array([1], np.int64))))
    levels = run_levels(module, {"x": rng.standard_normal((4, 32)).astype(np.float32)})
    assert_matches(levels)
    assert ("graph.split",) in [k.ops for k in levels.tiled_kernels]
