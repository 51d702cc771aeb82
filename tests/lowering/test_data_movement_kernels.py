"""Data-movement kernels (slice, split, pad, expand, tile) on the AI core, each level against
the one above it (the harness of :mod:`tests.lowering.test_tile_differential`): graph ->
macro kernels -> tiled loops on both executors, on the ``test`` preset (ragged tails,
several tiles), every kernel on the vector unit; and again with the NCHW inputs held as
NC1HWC0 with NaN in their padding lanes (the TransData kernel before the data movement must
not let them through)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.ir import SSAValue

from tests.lowering.test_tile_differential import (
    NAN,
    VECTOR,
    Graph,
    assert_matches,
    assert_no_nan,
    assert_tiled,
    assert_units,
    run_levels,
)

SLICE, SPLIT, PAD = {"graph.slice": VECTOR}, {"graph.split": VECTOR}, {"graph.pad": VECTOR}


def slice_channels(g: Graph) -> list[SSAValue]:
    """YOLOv8's C2f chunk: half the channels of an NCHW map, and a strided, reversed view."""
    x = g.input([1, 20, 19, 17], "NCHW")
    half = g.op("slice", x, g.ints([10]), g.ints([20]), g.ints([1]))
    odd = g.op("slice", x, g.ints([1, 8, 6]), g.ints([19, -100, 0]), g.ints([1, 2, 3]),
               g.ints([3, -3, -2]))  # fmt: skip
    return [half, odd]


def slice_nd(g: Graph) -> list[SSAValue]:
    x = g.input([37, 45])
    return [g.op("slice", x, g.ints([-1, 2]), g.ints([-100, 45]), g.ints([0, 1]), g.ints([-2, 3]))]


def split_nd(g: Graph) -> list[SSAValue]:
    x = g.input([2, 37, 45])
    return g.b.op_results("split", x, g.ints([5, 20, 12]), axis=1)


def split_channels(g: Graph) -> list[SSAValue]:
    """A split of an NCHW map into 8 + 12 channels, one kernel with two outputs."""
    x = g.input([1, 20, 19, 17], "NCHW")
    return g.b.op_results("split", x, g.ints([8, 12]), axis=1)


def split_even(g: Graph) -> list[SSAValue]:
    x = g.input([3, 50])
    return g.b.op_results("split", x, axis=-1, num_outputs=3)


def pad_case(mode: str, pads: list[int], value: float | None = None):
    def build(g: Graph) -> list[SSAValue]:
        x = g.input([1, 20, 19, 17], "NCHW")
        fill = None if value is None else g.b.constant(np.array(value, np.float32))
        return [g.op("pad", x, g.ints(pads), fill, mode=mode)]

    return build


def expand(g: Graph) -> list[SSAValue]:
    x = g.input([3, 1, 45])
    return [g.op("expand", x, g.ints([3, 37, 45]))]


def tile(g: Graph) -> list[SSAValue]:
    x = g.input([27, 45])
    return [g.op("tile", x, g.ints([2, 3]))]


HW = [0, 0, 2, 1, 0, 0, 3, 2]  # H: 2 before, 3 after; W: 1 before, 2 after
CASES = {
    "slice_channels": (slice_channels, SLICE),
    "slice_nd_negative_steps": (slice_nd, SLICE),
    "split_nd_three_outputs": (split_nd, SPLIT),
    "split_channels": (split_channels, SPLIT),
    "split_num_outputs": (split_even, SPLIT),
    "pad_constant": (pad_case("constant", HW), PAD),
    "pad_constant_value_crop": (pad_case("constant", [0, 0, -1, 2, 0, 0, 1, -2], 1.5), PAD),
    "pad_reflect": (pad_case("reflect", HW), PAD),
    "pad_edge": (pad_case("edge", HW), PAD),
    "pad_wrap": (pad_case("wrap", HW), PAD),
    "expand": (expand, {"graph.expand": VECTOR}),
    "tile": (tile, {"graph.tile": VECTOR}),
}


def _module(name: str, padded: bool = False):
    g = Graph(padded)
    build, _ = CASES[name]
    return g.b.build(*build(g)), g.arrays


@pytest.mark.parametrize("name", list(CASES))
def test_data_movement_kernel(name: str):
    """Every level agrees, every kernel runs on the vector unit, in several tiles."""
    module, inputs = _module(name)
    levels = run_levels(module, inputs, "test")
    assert_matches(levels, rtol=0, atol=0)
    assert_tiled(levels.module)
    units = CASES[name][1]
    assert_units(levels.macro_kernels, units, "lower-graph-to-kernels")
    assert_units(levels.tiled_kernels, units, "tile-kernels{platform=test}")
    assert levels.splits(), "the test preset should split some kernel into tiles"


@pytest.mark.parametrize("name", [n for n in CASES if "channels" in n or "pad" in n])
def test_data_movement_kernel_nan_padding(name: str):
    """NCHW inputs held as NC1HWC0 with NaN in the padding lanes: no NaN may leak."""
    module, inputs = _module(name, padded=True)
    levels = run_levels(module, inputs, "test", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels, rtol=0, atol=0)
    assert_units(levels.tiled_kernels, CASES[name][1], "tile-kernels{platform=test}")


def test_a_split_is_one_kernel_with_an_output_per_part_through_the_whole_pipeline():
    """A split on ascend910b: one vector kernel launched with the input and both outputs in
    GM (plan-memory gives each its buffer), run by both executors over several blocks, in
    the kernel report and in the cycle model, whose GM traffic covers every output."""
    from tilegraph.cost_model.cycles import simulate_module
    from tilegraph.cost_model.kernel_report import kernel_report
    from tilegraph.dialects.tile import LaunchOp
    from tilegraph.passes.context import make_context
    from tilegraph.passes.pipelines import lowering_pipeline, run_pipeline
    from tilegraph.runtime.tiles import run_tiles

    g = Graph()
    x = g.input([2, 64, 40, 40], "NCHW")
    module = g.b.build(*g.b.op_results("split", x, g.ints([16, 48]), axis=1))
    ctx = make_context()
    run_pipeline("set-target{platform=ascend910b},O2", ctx, module)
    run_pipeline(lowering_pipeline(), ctx, module)
    (kernel,) = kernel_report(module)
    assert (kernel.unit, kernel.ops) == ("vector", ("graph.split",))
    (launch,) = [op for op in module.walk() if isinstance(op, LaunchOp)]
    assert len(launch.operands) == 3
    assert launch.blocks is not None and launch.blocks.value.data > 1
    want = np.split(g.arrays[0], [16], axis=1)
    for executor in ("interpret", "fast"):
        got = run_tiles(module, g.arrays, executor=executor)
        for a, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, w, err_msg=executor)
    (cycles,) = simulate_module(module).kernels
    assert cycles.unit == "vector" and cycles.cycles > 0
    assert sum(cycles.bytes_per_path.values()) >= 2 * g.arrays[0].nbytes
