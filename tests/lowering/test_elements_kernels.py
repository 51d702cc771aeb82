"""GatherElements and ScatterElements on the AI core (``tiling/elements.py``), each level
against the one above it (the harness of :mod:`tests.lowering.test_tile_differential`) on
the ``test`` preset with NaN in the on-chip buffers' unwritten lanes: gathers and scatters
along the last, a middle and the first axis, negative indices, ragged last tiles, onnx-asr's
Kaldi front end's edge copy (a gather and a scatter of the same row), scatters that combine
repeated positions (add, as a graph network's message sum, mul, max, min); the scalar scatter a
910B charges, and every core for a combining one; what stays on the host says why; an index out of range is an error."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType, StringAttr, f32, i64
from xdsl.ir import Block, SSAValue

from tests.lowering.test_gather_kernels import index_input
from tests.lowering.test_tile_differential import (
    NAN,
    VECTOR,
    Graph,
    assert_matches,
    assert_no_nan,
    assert_single_host_kernel,
    assert_units,
    run_levels,
)
from tilegraph.cost_model.tile_costs import put
from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import PutOp
from tilegraph.hardware import hardware_preset


def positions(g: Graph, shape: Sequence[int], axis: int, size: int) -> SSAValue:
    """Distinct positions along ``axis`` per line (a scatter's writes do not collide),
    half of them spelled negative."""
    t = TensorType(list(shape), element_type_of("int64"), "ND", None)
    arg = g.b.block.insert_arg(t, len(g.b.block.args))
    arg.name_hint = f"in{len(g.arrays)}"
    lines = np.moveaxis(np.zeros(shape, np.int64), axis, -1)
    for index in np.ndindex(lines.shape[:-1]):
        lines[index] = g.rng.permutation(size)[: shape[axis]]
    values = np.moveaxis(lines, -1, axis)
    flip = g.rng.random(values.shape) < 0.5
    g.arrays.append(np.where(flip, values - size, values))
    return arg


def gather_last(g: Graph) -> list[SSAValue]:
    """[13, 50] along axis 1 by [13, 17]: 13 rows over the test preset's cores."""
    return [g.op("gather_elements", g.input([13, 50]), index_input(g, [13, 17], 50, "int64"), axis=1)]  # fmt: skip


def gather_middle(g: Graph) -> list[SSAValue]:
    """[5, 9, 6] along axis 1 (inner 6), int32 indices, more picks than the axis holds."""
    idx = index_input(g, [5, 12, 6], 9, "int32")
    return [g.op("gather_elements", g.input([5, 9, 6]), idx, axis=1)]


def gather_first(g: Graph) -> list[SSAValue]:
    """Along axis 0 (outer 1): the whole [7, 11] in one tile."""
    return [g.op("gather_elements", g.input([7, 11]), index_input(g, [4, 11], 7, "int64"), axis=0)]  # fmt: skip


def scatter_last(g: Graph) -> list[SSAValue]:
    """[11, 40] along axis 1: 15 distinct positions a row, updates from an input."""
    idx = positions(g, [11, 15], 1, 40)
    return [g.op("scatter_elements", g.input([11, 40]), idx, g.input([11, 15]), axis=1)]


def scatter_middle(g: Graph) -> list[SSAValue]:
    """[3, 10, 5] along axis 1 (inner 5)."""
    idx = positions(g, [3, 4, 5], 1, 10)
    return [g.op("scatter_elements", g.input([3, 10, 5]), idx, g.input([3, 4, 5]), axis=1)]


def kaldi_edges(g: Graph) -> list[SSAValue]:
    """onnx-asr's Kaldi front end: a row's samples copied to other positions of it
    (``ScatterElements(x, to, GatherElements(x, from))``), then a ReLU after."""
    x = g.input([2, 64])
    picked = g.op("gather_elements", x, index_input(g, [2, 8], 64, "int64"), axis=1)
    moved = g.op("scatter_elements", x, positions(g, [2, 8], 1, 64), picked, axis=1)
    return [g.op("relu", moved)]


def colliding(g: Graph, shape: Sequence[int], axis: int, size: int) -> SSAValue:
    """Positions along ``axis`` with repeats (more picks than the axis's ``size``), some
    negative (:func:`index_input`'s ``[-size, size)``)."""
    assert shape[axis] > size
    return index_input(g, list(shape), size, "int64")


def scatter_add_messages(g: Graph) -> list[SSAValue]:
    """A graph network's message sum (torch ``scatter_add`` along axis 0): 24 messages of 8
    features into 5 nodes, every node hit several times, float sums in index order."""
    idx = colliding(g, [24, 8], 0, 5)
    return [g.op("scatter_elements", g.input([5, 8]), idx, g.input([24, 8]), axis=0, reduction="add")]  # fmt: skip


def scatter_reductions(g: Graph) -> list[SSAValue]:
    """mul, max and min along a middle axis (inner 5) with repeated positions, chained."""
    x = g.input([3, 10, 5])
    for reduction in ("mul", "max", "min"):
        idx = colliding(g, [3, 14, 5], 1, 10)
        x = g.op("scatter_elements", x, idx, g.input([3, 14, 5]), axis=1, reduction=reduction)
    return [x]


def constant_positions(g: Graph) -> list[SSAValue]:
    """Positions known when compiling (piper's tashkeel model scatters by a constant): a
    small integer constant, which a kernel would otherwise take into its body, goes to the
    kernel in GM as the indices' tile source; one of them negative."""
    where = np.array([[0, -1, 4], [8, 2, 3], [1, 5, 7], [6, 0, 2]], np.int64)
    x, updates = g.input([4, 9]), g.input([4, 3])
    return [g.op("scatter_elements", x, g.b.constant(where), updates, axis=1)]


CASES = {
    "gather_last": gather_last,
    "gather_middle": gather_middle,
    "gather_first": gather_first,
    "scatter_last": scatter_last,
    "scatter_middle": scatter_middle,
    "kaldi_edges": kaldi_edges,
    "constant_positions": constant_positions,
    "scatter_add_messages": scatter_add_messages,
    "scatter_reductions": scatter_reductions,
}
UNITS = {"graph.gather_elements": VECTOR, "graph.scatter_elements": VECTOR}


@pytest.mark.parametrize("name", list(CASES))
def test_elements_kernel(name: str):
    g = Graph()
    module = g.b.build(*CASES[name](g))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels, rtol=0, atol=0)
    ops = {op for k in levels.tiled_kernels for op in k.ops}
    assert_units(levels.tiled_kernels, {k: v for k, v in UNITS.items() if k in ops}, "test")
    assert any(k.ops == ("graph.gather_elements",) or k.ops == ("graph.scatter_elements",)
               for k in levels.tiled_kernels)  # fmt: skip
    if name != "constant_positions":  # whose constant holds a -1
        indices = [a for a in g.arrays if a.dtype.kind == "i"]
        assert any((a < 0).any() for a in indices), "the case should have negative indices"


@pytest.mark.parametrize(
    ("build", "reason"),
    [
        (
            lambda g: g.op(
                "gather_elements", g.input([6, 9]), index_input(g, [3, 4], 9, "int64"), axis=1
            ),
            "smaller than the data",
        ),
        (
            lambda g: g.op(
                "gather_elements", g.input([2, 4, 600]), index_input(g, [2, 3, 600], 4, "int64"),
                axis=1,
            ),
            "do not fit UB",
        ),
    ],
    ids=["cropped_indices", "position_too_wide"],
)  # fmt: skip
def test_what_stays_on_the_host_says_why(build, reason: str):
    assert_single_host_kernel(build, reason)


@pytest.mark.parametrize("executor", ["interpret", "fast"])
def test_an_index_out_of_range_is_an_error(executor: str):
    """The graph level raises; so do both executors of the tiled kernel."""
    from tilegraph.runtime.tiles import run_tiles

    g = Graph()
    module = g.b.build(*gather_last(g))
    levels = run_levels(module, g.arrays, "test")
    g.arrays[1][3, 5] = 50
    with pytest.raises(IndexError, match="index 50 is out of range for an axis of size 50"):
        run_tiles(levels.module, g.arrays, executor=executor)


def _ub(shape: list[int], element) -> SSAValue:
    return Block(arg_types=[MemRefType(element, shape, memory_space=StringAttr("UB"))]).args[0]


def test_a_910b_scatters_on_its_scalar_unit():
    """No vector Scatter on Atlas A2 / A3: per element on the scalar unit (30 cycles each),
    where the 310P's vector unit takes the tile in a few repeats."""
    op = PutOp(_ub([8, 64], f32), _ub([8, 64], i64), _ub([8, 128], f32), 1)
    scalar, vector = put(op, hardware_preset("ascend910b")), put(op, hardware_preset("ascend310p"))
    assert scalar == 8 * 64 * 30 and vector < scalar / 10


def test_a_scatter_that_combines_runs_on_the_scalar_unit_everywhere():
    """Ascend C's vector Scatter writes, it does not combine: a reduction is 40 cycles an
    element (position, value and destination read, result written) on every preset."""
    dst, src, idx = _ub([8, 128], f32), _ub([8, 64], f32), _ub([8, 64], i64)
    for preset in ("ascend910b", "ascend310p"):
        op = PutOp(src, idx, dst, 1, "add")
        assert put(op, hardware_preset(preset)) == 8 * 64 * 40


def test_a_vput_reduction_is_checked():
    from xdsl.utils.exceptions import VerifyException

    op = PutOp(_ub([8, 64], f32), _ub([8, 64], i64), _ub([8, 128], f32), 1, "sum")
    with pytest.raises(VerifyException, match="reduction must be one of add, mul, max, min"):
        op.verify()


@pytest.mark.parametrize("shape", [[11, 40], [40, 3, 50]], ids=["one_chunk", "chunks"])
def test_a_scatter_of_no_updates_copies_its_data(shape: list[int]):
    """torchvision's RoI merge scatters each pyramid level's boxes into a zero tensor; a
    level no box maps to scatters an empty index tensor: the output is the data, copied
    through UB in chunks over the cores (several on the test preset for the larger one),
    exact at every level with NaN in unwritten on-chip lanes."""
    g = Graph()
    empty = [0, *shape[1:]]
    idx = positions(g, empty, 0, shape[0])
    module = g.b.build(g.op("scatter_elements", g.input(shape), idx, g.input(empty), axis=0))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels, rtol=0, atol=0)
    assert_units(levels.tiled_kernels, {"graph.scatter_elements": VECTOR}, "test")
    assert levels.counters.ops.get("tile.copy_flat", 0) >= 2
