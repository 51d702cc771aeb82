"""Data movement, concat, resize, pooling, gather and ScatterND (its UB-resident blocks)
kernels shared over the vector cores.

Each family's tiling sizes its tiles to UB, then (``share_over_cores``, the elementwise
strategy's rule) makes them smaller while that leaves vector cores idle, down to
``MIN_CORE_SHARE`` elements a tile; ``split-cores`` shares every nest of a kernel whose
nests pass nothing to each other through GM. Per family, a small tensor on ``ascend910b``
(48 vector cores): the kernel gets at least as many tiles as cores and its launch that many
blocks where the size allows, and both executors (which run every block; the fast one
merges them only where it proves that changes nothing) match the graph level, ragged
tails included.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr
from xdsl.ir import SSAValue

from tests.lowering.test_gather_kernels import index_input
from tests.lowering.test_gather_nd_kernels import tuples_input
from tests.lowering.test_tile_differential import Graph
from tilegraph.dialects.tile import LaunchOp
from tilegraph.hardware import hardware_preset
from tilegraph.lowering.analysis.kernel_attrs import TILES_ATTR
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import lowering_pipeline, run_pipeline
from tilegraph.runtime.reference import run_reference
from tilegraph.runtime.tiles import run_tiles

PLATFORM = "ascend910b"
CORES = hardware_preset(PLATFORM).vector_cores


def _slice(g: Graph) -> list[SSAValue]:
    x = g.input([96, 300])
    return [g.op("slice", x, g.ints([10]), g.ints([251]), g.ints([1]))]


def _split(g: Graph) -> list[SSAValue]:
    return g.b.op_results("split", g.input([4, 120, 64]), g.ints([24, 96]), axis=1)


def _pad(g: Graph) -> list[SSAValue]:
    return [g.op("pad", g.input([95, 61]), g.ints([1, 2, 0, 1]), None, mode="constant")]


def _pad_reflect(g: Graph) -> list[SSAValue]:
    return [g.op("pad", g.input([95, 64]), g.ints([2, 0, 3, 0]), None, mode="reflect")]


def _expand(g: Graph) -> list[SSAValue]:
    return [g.op("expand", g.input([4, 1, 64]), g.ints([4, 95, 64]))]


def _tile(g: Graph) -> list[SSAValue]:
    return [g.op("tile", g.input([97, 64]), g.ints([1, 2]))]


def _concat(g: Graph) -> list[SSAValue]:
    a, b = g.input([2, 384, 32]), g.input([2, 384, 32])
    return [g.op("concat", a, b, axis=1)]


def _resize(g: Graph) -> list[SSAValue]:
    x = g.input([1, 3, 24, 25], "NCHW")
    scales = g.b.constant(np.array([1, 1, 2, 2], np.float32))
    return [g.op("resize", x, None, scales, None, mode="nearest")]


def _resize_linear(g: Graph) -> list[SSAValue]:
    x = g.input([1, 3, 24, 25], "NCHW")
    scales = g.b.constant(np.array([1, 1, 2, 2], np.float32))
    return [g.op("resize", x, None, scales, None, mode="linear")]


def _max_pool(g: Graph) -> list[SSAValue]:
    x = g.input([1, 32, 41, 40], "NCHW")
    return [g.op("max_pool", x, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])]


def _avg_pool3d(g: Graph) -> list[SSAValue]:
    x = g.input([1, 4, 3, 97, 64], "NCDHW")
    return [g.op("avg_pool", x, kernel_shape=[2, 2, 2], strides=[1, 2, 2])]


def _gather(g: Graph) -> list[SSAValue]:
    return [g.op("gather", g.const([37, 40]), index_input(g, [7, 27], 37, "int64"), axis=0)]


def _gather_short_rows(g: Graph) -> list[SSAValue]:
    return [g.op("gather", g.input([521, 9, 4]), index_input(g, [3], 9, "int32"), axis=1)]


def _scatter_nd_elements(g: Graph) -> list[SSAValue]:
    """X-MOD's index_put: one-element slices, through UB-resident blocks (scatter_ub)."""
    tuples, updates = tuples_input(g, [500], [96, 64]), g.input([500])
    return [g.op("scatter_nd", g.input([96, 64]), tuples, updates, reduction="none")]


Case = tuple[Callable[[Graph], Sequence[SSAValue]], str, int]
CASES: dict[str, Case] = {
    # name: (graph, the family's op, the blocks its launch gets on ascend910b); every
    # kernel gets at least as many tiles as blocks (ragged tails). Fewer blocks than cores where split-cores finds
    # that the busiest core does no less with more: 32 channels x 2 row tiles of the
    # pooling as 32 blocks of 2 tiles; 97 rows a core's share of 3 at a time (33 tiles).
    # A concat tile keeps 2 KiB (CANN's floor): 16 rows of 32, 48 tiles per region.
    "slice": (_slice, "graph.slice", CORES),
    "split": (_split, "graph.split", CORES),
    "pad_constant": (_pad, "graph.pad", CORES),
    "pad_reflect": (_pad_reflect, "graph.pad", CORES),
    "expand": (_expand, "graph.expand", CORES),
    "tile": (_tile, "graph.tile", 33),
    "concat": (_concat, "graph.concat", CORES),
    "resize_nearest": (_resize, "graph.resize", CORES),
    "resize_linear": (_resize_linear, "graph.resize", CORES),
    "max_pool": (_max_pool, "graph.max_pool", 32),
    "avg_pool3d": (_avg_pool3d, "graph.avg_pool", CORES),
    "gather": (_gather, "graph.gather", CORES),
    "gather_short_rows": (_gather_short_rows, "graph.gather", CORES),
    "scatter_nd_elements": (_scatter_nd_elements, "graph.scatter_nd", CORES),
}


def _family_kernels(module: ModuleOp, op_name: str) -> list[tuple[int, int]]:
    """(tiles, launch blocks) of every tiled kernel that computes ``op_name``."""
    blocks = {
        launch.callee.string_value(): launch.blocks.value.data
        for launch in module.walk()
        if isinstance(launch, LaunchOp) and isinstance(launch.blocks, IntegerAttr)
    }
    found = []
    for fn in module.walk():
        ops = fn.attributes.get("tile.ops") if isinstance(fn, func.FuncOp) else None
        tiles = fn.attributes.get(TILES_ATTR) if isinstance(fn, func.FuncOp) else None
        if isinstance(fn, func.FuncOp) and isinstance(ops, StringAttr) and op_name in ops.data:
            assert isinstance(tiles, IntegerAttr)
            found.append((tiles.value.data, blocks.get(fn.sym_name.data, 1)))
    return found


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_small_tensor_spreads_over_the_vector_cores(name: str) -> None:
    build, op_name, want_blocks = CASES[name]
    g = Graph()
    module = g.b.build(*build(g))
    ctx = make_context()
    run_pipeline(f"set-target{{platform={PLATFORM} precision=origin}},O2", ctx, module)
    want = run_reference(module, g.arrays)
    run_pipeline(lowering_pipeline(), ctx, module)
    kernels = _family_kernels(module, op_name)
    assert kernels, f"no tiled kernel computes {op_name}"
    for tiles, blocks in kernels:
        assert tiles >= min(want_blocks, CORES) and blocks == want_blocks, (tiles, blocks)
    for executor in ("interpret", "fast"):
        got = run_tiles(module, g.arrays, executor=executor)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=executor)
