"""GatherND on the AI core (``tiling/gather_nd.py``), each level against the one above it
(the harness of :mod:`tests.lowering.test_tile_differential`) on the ``test`` preset with
NaN in the on-chip buffers' unwritten lanes: index tuples of depth 1, 2 and 3 with
negative components, a ragged last tile, compile-time indices, and CLIP's pooling as
PyTorch's dynamo exporter writes it (a Range and an ArgMax concatenated into the index
tuples). What stays on the host says why."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from xdsl.ir import SSAValue

from tests.lowering.test_gather_kernels import index_input
from tests.lowering.test_tile_differential import (
    NAN,
    VECTOR,
    Graph,
    assert_matches,
    assert_single_host_kernel,
    assert_units,
    run_levels,
)
from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.layout_type import TensorType

GATHER_ND = {"graph.gather_nd": VECTOR}


def tuples_input(g: Graph, count: Sequence[int], sizes: Sequence[int]) -> SSAValue:
    """Index tuples ``[*count, len(sizes)]`` (int64), component ``k`` in
    ``[-sizes[k], sizes[k])``."""
    shape = [*count, len(sizes)]
    t = TensorType(shape, element_type_of("int64"), "ND", None)
    arg = g.b.block.insert_arg(t, len(g.b.block.args))
    arg.name_hint = f"in{len(g.arrays)}"
    columns = [g.rng.integers(-n, n, list(count)) for n in sizes]
    g.arrays.append(np.stack(columns, axis=-1).astype(np.int64))
    return arg


def depth_two(g: Graph) -> list[SSAValue]:
    """``x[i, j]`` of [6, 9, 24]: 35 tuples (a ragged last tile), 96-byte rows."""
    return [g.op("gather_nd", g.input([6, 9, 24]), tuples_input(g, [5, 7], [6, 9]))]


def depth_three(g: Graph) -> list[SSAValue]:
    """Rows of 8 floats (32 B) picked by three indices of [4, 3, 5, 8]."""
    return [g.op("gather_nd", g.input([4, 3, 5, 8]), tuples_input(g, [11], [4, 3, 5]))]


def depth_one(g: Graph) -> list[SSAValue]:
    """One component: whole [5, 40] slabs of [7, 5, 40]."""
    return [g.op("gather_nd", g.input([7, 5, 40]), tuples_input(g, [3], [7]))]


def constant_tuples(g: Graph) -> list[SSAValue]:
    """Compile-time tuples (inlined in the kernel body), one negative component."""
    tuples = g.b.constant(np.array([[1, -2], [0, 4]], np.int64))
    return [g.op("gather_nd", g.input([2, 6, 16]), tuples)]


def clip_pooling(g: Graph) -> list[SSAValue]:
    """``x[arange(b), ids.argmax(-1)]`` as the dynamo exporter writes it."""
    hidden, ids = g.input([3, 11, 32]), index_input(g, [3, 11], 11, "int64")
    rows = g.b.constant(np.arange(3, dtype=np.int64).reshape(3, 1))
    picked = g.op("unsqueeze", g.op("arg_max", ids, axis=-1, keepdims=0), g.ints([-1]))
    return [g.op("gather_nd", hidden, g.op("concat", rows, picked, axis=-1))]


CASES = {
    "depth_two": depth_two,
    "depth_three": depth_three,
    "depth_one": depth_one,
    "constant_tuples": constant_tuples,
    "clip_pooling": clip_pooling,
}


@pytest.mark.parametrize("name", list(CASES))
def test_gather_nd_kernel(name: str):
    g = Graph()
    module = g.b.build(*CASES[name](g))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    for level, outputs in levels.outputs.items():
        for out in outputs:
            assert not np.isnan(out).any(), f"{level}: NaN from an unwritten lane"
    assert_matches(levels, rtol=0, atol=0)
    host = [(k.name, k.reason) for k in levels.tiled_kernels if k.unit == "host"]
    assert not host, host
    if name == "clip_pooling":
        return
    gets = levels.counters.ops.get("tile.get_value", 0)
    if name in ("constant_tuples", "depth_one"):  # gather-nd-as-gather: a Gather of rows
        assert_units(levels.tiled_kernels, {"graph.gather": VECTOR}, "tile-kernels")
        if name == "constant_tuples":
            assert gets == 0  # rows known when compiling
            return
    else:
        assert_units(levels.tiled_kernels, GATHER_ND, "tile-kernels{platform=test}")
    tuples = g.arrays[-1]
    assert (tuples < 0).any(), "the case should have negative components"
    assert gets >= tuples.size  # one scalar read per component (a row each for depth one)


@pytest.mark.parametrize(
    ("build", "reason"),
    [
        (
            lambda g: g.op(
                "gather_nd", g.input([2, 5, 16]), tuples_input(g, [2, 1], [5]), batch_dims=1
            ),
            "batch_dims",
        ),
    ],
    ids=["batch_dims"],
)
def test_what_stays_on_the_host_says_why(build, reason: str):
    assert_single_host_kernel(build, reason)


def test_the_gather_nd_kernel_takes_compile_time_tuples_itself():
    """With ``gather-nd-as-gather`` off, the GatherND kernel unrolls the tuples' rows (no
    scalar reads), exactly."""
    import tilegraph
    from tilegraph.runtime import run_reference

    g = Graph()
    module = g.b.build(*constant_tuples(g))
    want = run_reference(module.clone(), g.arrays)
    compiled = tilegraph.compile(module, "O2{disable=gather-nd-as-gather}", platform="test")
    np.testing.assert_array_equal(compiled(*g.arrays)[0], want[0])
    kernels = [op for op in compiled.module.walk() if "tile.ops" in op.attributes]
    ops = {op.attributes["tile.ops"].data for op in kernels}  # type: ignore[union-attr]
    assert "graph.gather_nd" in ops
    assert not any("tile.host_reason" in op.attributes for op in kernels)
