"""A gather of constant indices that select a strided window of its data (an affine grid:
torch's ``x[:, 0]``, ``x.select``, ``unfold``'s patch windows, an adaptive pool's
overlapping windows) followed by view ops (reshape, transpose, squeeze, static slices):
one vector kernel reading the data through the composed strided view, turned on the
vector unit when its innermost dim is not the data's — every level agrees on both
executors with NaN in the unwritten on-chip lanes, ragged tiles on the ``test`` preset.
Indices that are no affine grid (or repeat a row) leave the group to the strategies of
its parts."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue
from xdsl.parser import Parser

from tests.lowering.test_gather_views import one_exact_gather_kernel
from tests.lowering.test_tile_differential import NAN, Graph, assert_matches, run_levels
from tilegraph.lowering.analysis.operand_views import StridedView
from tilegraph.lowering.conversion.kernel_body import read_kernel_body
from tilegraph.lowering.conversion.tiling.gather_strided import (
    ViewedInput,
    affine_grid,
    gather_view,
    strided_chain,
    viewed_input,
)
from tilegraph.passes.context import make_context


def patches(g: Graph) -> list[SSAValue]:
    """PatchTST's unfold: [3, 32, 5] windows of 8 steps at stride 8 along axis 1 (a [4, 8]
    constant index), then channels first: [3, 5, 4, 8] (the innermost dim is read at a
    stride of 5: turned on the vector unit)."""
    x = g.input([3, 32, 5])
    idx = np.arange(4)[:, None] * 8 + np.arange(8)[None, :]
    rows = g.op("gather", x, g.b.constant(idx.astype(np.int64)), axis=1)
    return [g.op("transpose", rows, perm=[0, 3, 1, 2])]


def overlapping_windows(g: Graph) -> list[SSAValue]:
    """Adaptive pooling 8 -> 7 with windows of 2 (pvt v2's export): index ``i + a`` reads
    every inner row twice, then the window axes last."""
    x = g.input([8, 3, 40])
    idx = np.arange(7)[:, None] + np.arange(2)[None, :]
    rows = g.op("gather", x, g.b.constant(idx.astype(np.int64)), axis=0)
    return [g.op("transpose", rows, perm=[2, 0, 1, 3])]


def pooled_windows_2d(g: Graph) -> list[SSAValue]:
    """PVT v2's adaptive pool 8x8 -> 7x7 (windows of 2 x 2) as exported: over H and W
    merged ([64, 3, 40]), a GatherND of window tuples made a gather of 196 flat rows ``(i
    + a) * 8 + j + b`` (more than the 64 constant elements a kernel body takes in: inlined
    as an affine grid), the window axes last."""
    hw = g.input([64, 3, 40])
    i = np.arange(7).reshape(7, 1, 1, 1) + np.arange(2).reshape(1, 2, 1, 1)
    j = np.arange(7).reshape(1, 1, 7, 1) + np.arange(2).reshape(1, 1, 1, 2)
    rows = g.op("gather", hw, g.b.constant((i * 8 + j).astype(np.int64)), axis=0)
    return [g.op("transpose", rows, perm=[4, 5, 0, 1, 2, 3])]


def negative_select_reshape(g: Graph) -> list[SSAValue]:
    """TimeSformer's ``x[:, -65]`` (a negative scalar index: the axis dropped) of [6, 65,
    40], viewed [3, 2, 40] (a reshape of the strided view) and cut to its last 32 columns
    (a static slice): a plain strided copy."""
    x = g.input([6, 65, 40])
    cls = g.op("gather", x, g.b.constant(np.array(-65, np.int64)), axis=1)
    viewed = g.op("reshape", cls, g.ints([3, 2, 40]))
    return [g.op("slice", viewed, g.ints([8]), g.ints([40]), g.ints([2]))]


def select_after_transpose(g: Graph) -> list[SSAValue]:
    """A transpose, a strided pick of every other row (``[1, 3, 5]``, one negative) and a
    transpose back: views all the way."""
    x = g.input([4, 7, 48])
    t = g.op("transpose", x, perm=[1, 0, 2])
    rows = g.op("gather", t, g.ints([1, -4, 5]), axis=0)
    return [g.op("transpose", rows, perm=[1, 0, 2])]


CASES = {
    "patches": patches,
    "overlapping_windows": overlapping_windows,
    "pooled_windows_2d": pooled_windows_2d,
    "negative_select_reshape": negative_select_reshape,
    "select_after_transpose": select_after_transpose,
}


@pytest.mark.parametrize("name", list(CASES))
def test_constant_gather_chain_is_one_kernel(name: str):
    """One vector kernel holding the gather and its view ops, exact at every level with NaN
    in the on-chip lanes it does not write, in several tiles."""
    _, levels = one_exact_gather_kernel(CASES[name])
    assert levels.splits(), "the test preset should split the copy into tiles"
    # only there is the output's innermost dim not the data's: turned on the vector unit
    turned = name in ("patches", "pooled_windows_2d")
    assert ("tile.vtranspose" in levels.counters.ops) == turned, levels.counters.ops


def repeated_rows(g: Graph) -> list[SSAValue]:
    """Indices [2, 2, 2] (a repeat: no strided view) before a transpose."""
    x = g.input([4, 8, 16])
    rows = g.op("gather", x, g.ints([2, 2, 2]), axis=1)
    return [g.op("transpose", rows, perm=[0, 2, 1])]


def test_repeated_rows_stay_two_kernels():
    """A gather repeating a row is no strided view: the gather and the transpose are kernels
    of their own, still exact."""
    g = Graph()
    module = g.b.build(*repeated_rows(g))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    assert_matches(levels, rtol=0, atol=0)
    assert len(levels.tiled_kernels) == 2, levels.tiled_kernels


def test_affine_grid():
    """The start and per-dim steps of an affine grid of indices, None for anything else."""
    assert affine_grid(np.arange(4)[:, None] * 8 + np.arange(8) + 3) == (3, (8, 1))
    assert affine_grid(np.array(5)) == (5, ())
    assert affine_grid(np.array([[7]])) == (7, (0, 0))
    assert affine_grid(np.array([0, 1, 3])) is None
    assert affine_grid(np.array([3, 2, 1])) is None  # backwards: no non-negative stride
    assert affine_grid(np.array([2, 2])) is None  # a repeat
    assert affine_grid(np.zeros((0,), np.int64)) is None


def test_gather_view_strides():
    """A [3, 8] patch grid from row 1 along axis 1 of a row-major [3, 32, 5] tensor:
    strides of the patch (8 rows) and the step (1 row), each row 5 elements."""
    g = Graph()
    x = g.input([3, 32, 5])
    idx = np.arange(3)[:, None] * 8 + np.arange(8)[None, :] + 1
    op = g.op("gather", x, g.b.constant(idx.astype(np.int64)), axis=1).owner
    assert isinstance(op, Operation)
    view = gather_view(StridedView.row_major((3, 32, 5)), op)
    assert view == StridedView((3, 3, 8, 5), (160, 40, 5, 1), offset=5)
    last_rows = g.op("gather", x, g.ints([30, 31]), axis=1).owner
    assert isinstance(last_rows, Operation)
    assert gather_view(StridedView.row_major((3, 31, 5)), last_rows) is None  # 31: too far


def test_viewed_input_of_a_reduction_prologue():
    """A reduction's operand made by ``x[:, -64] -> view`` (TimeSformer's pick before its
    frame mean) is a strided view of the kernel input, the hook a reduction strategy
    reads it through; the body with the reduction is no copy kernel."""
    module = Parser(make_context(), PROLOGUE).parse_module()
    fn = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    body = read_kernel_body(fn)
    mean = body.ops[-1]
    found = viewed_input(body, mean.operands[0])
    assert isinstance(found, ViewedInput), found
    assert found.arg is fn.args[0] and found.ops == tuple(body.ops[:-1])
    assert found.view == StridedView((3, 2, 40), (5200, 2600, 1), offset=40)
    assert strided_chain(body) == "a gather with ops after it that are no views"


PROLOGUE = """
func.func @k(%in0: memref<6x65x40xf32, "GM">, %out: memref<3x1x40xf32, "GM">) attributes {tile.kernel = "vector"} {
  %i = graph.constant dense<-64> : !layout.tensor<i64>
  %s = graph.constant dense<[3, 2, 40]> : !layout.tensor<3xi64>
  %x = tile.read %in0 : memref<6x65x40xf32, "GM"> -> !layout.tensor<6x65x40xf32>
  %g = graph.gather %x, %i {axis = 1} : (!layout.tensor<6x65x40xf32>, !layout.tensor<i64>) -> !layout.tensor<6x40xf32>
  %r = graph.reshape %g, %s : (!layout.tensor<6x40xf32>, !layout.tensor<3xi64>) -> !layout.tensor<3x2x40xf32>
  %m = graph.reduce_mean %r {axes = [1], keepdims = 1} : (!layout.tensor<3x2x40xf32>) -> !layout.tensor<3x1x40xf32>
  tile.write %m to %out : !layout.tensor<3x1x40xf32> to memref<3x1x40xf32, "GM">
  func.return
}
"""
