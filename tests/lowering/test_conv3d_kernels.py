"""3-D convolution on the cube (:mod:`tilegraph.lowering.conversion.tiling.conv3d`) and the
NCDHW <-> NDC1HWC0 TransData kernels around it (:mod:`...tiling.transdata`).

Each case runs every level (:func:`tests.lowering.test_tile_differential.run_levels`: the
graph, the macro kernels, both executors of the tiled kernels) on the ``test`` preset, with
channel counts that are not multiples of C0 and output channels that are not multiples of
16 (ragged lanes and fractals), once with the inputs in their origin layout and once held
as NDC1HWC0 with NaN in the padding lanes (no kernel may read them).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from tests.lowering.test_tile_differential import (
    CUBE,
    NAN,
    Graph,
    assert_matches,
    assert_units,
    estimated_cycles,
    run_levels,
)
from tilegraph.dialects.tile import Load3dOp, MmadOp
from tilegraph.formats import Format
from tilegraph.lowering.conversion.tiling.conv3d import DepthTaps, valid_taps
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline

# name: (input shape, weight shape, conv attributes)
CASES: dict[str, tuple[list[int], list[int], dict]] = {
    "3x3x3_same": ([1, 20, 4, 7, 9], [24, 20, 3, 3, 3], {"pads": [1, 1, 1, 1, 1, 1]}),
    "strided": (
        [2, 12, 5, 9, 11],
        [20, 12, 3, 3, 3],
        {"strides": [2, 2, 1], "pads": [1, 1, 0, 1, 1, 1]},
    ),
    "dilated_padded": (
        [1, 18, 6, 8, 8],
        [20, 18, 3, 3, 3],
        {"dilations": [2, 1, 2], "pads": [2, 1, 2, 2, 1, 2]},
    ),
    "1x1x1": ([1, 36, 3, 5, 6], [40, 36, 1, 1, 1], {}),
    "depth_only": (
        [1, 8, 7, 4, 5],
        [17, 8, 5, 1, 1],
        {"strides": [3, 1, 1], "pads": [2, 0, 0, 1, 0, 0]},
    ),
}


def _conv3d_module(
    name: str, padded: bool = False, relu: bool = True, chain: bool = False
) -> tuple[ModuleOp, list[np.ndarray]]:
    x_shape, w_shape, attrs = CASES[name]
    g = Graph(padded)
    x = g.input(x_shape, "NCDHW")
    y = g.op("conv", x, g.const(w_shape, "NCDHW"), g.const([w_shape[0]]), **attrs)
    if relu:
        y = g.op("relu", y)
    if chain:  # a second convolution on the first one's NDC1HWC0 output
        w2 = [12, w_shape[0], 3, 3, 3]
        y = g.op("relu", g.op("conv", y, g.const(w2, "NCDHW"), None, pads=[1] * 6))
    return g.b.build(y), g.arrays


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("padded", [False, True], ids=["origin", "nan_padding"])
def test_conv3d_every_level_agrees(name: str, padded: bool) -> None:
    module, inputs = _conv3d_module(name, padded)
    levels = run_levels(module, inputs, "test", pad_value=NAN if padded else None)
    assert_units(levels.tiled_kernels, {"graph.conv": CUBE}, "tile-kernels")
    assert_matches(levels)


def test_conv3d_chain_stays_in_ndc1hwc0() -> None:
    """Two 3-D convolutions: the ReLU between them shares NDC1HWC0 (it leaves the first
    through fixpipe), so the only conversion is the output's (the input is held as
    NDC1HWC0 already), a kernel of its own."""
    module, inputs = _conv3d_module("3x3x3_same", padded=True, chain=True)
    levels = run_levels(module, inputs, "test", pad_value=NAN)
    assert_units(levels.tiled_kernels, {"graph.conv": CUBE}, "tile-kernels")
    # outputs up to ~400, sums of 648 products of sums of 540 in another order: an
    # absolute tolerance of a few ulps of the largest
    assert_matches(levels, atol=2e-3)
    ops = [k.ops for k in levels.tiled_kernels]
    assert ops.count(("layout.trans_data",)) == 1, ops
    assert ops.count(("graph.conv", "graph.relu")) == 2, ops


def test_transdata_planes_round_trip() -> None:
    """NCDHW -> NDC1HWC0 -> NCDHW as vector kernels (relu on the blocked tensor between)."""
    g = Graph()
    x = g.input([2, 20, 3, 5, 7], "NCDHW")
    y = g.op("conv", x, g.const([17, 20, 1, 1, 1], "NCDHW"), None)
    levels = run_levels(g.b.build(y), g.arrays, "test")
    transdata = [k for k in levels.tiled_kernels if k.ops == ("layout.trans_data",)]
    assert len(transdata) == 2 and all(k.unit == "vector" for k in transdata), transdata
    assert_matches(levels)


def test_conv3d_taps_accumulate_into_one_l0c() -> None:
    """Every K step of every depth tap is one ``mmad`` into the same accumulator, after
    one ``load3d`` of its plane: the counts the interpreter ran are the taps' products."""
    module, inputs = _conv3d_module("depth_only", relu=False)
    levels = run_levels(module, inputs, "test")
    mmads = [op for op in levels.module.walk() if isinstance(op, MmadOp)]
    assert len({op.operands[2] for op in mmads}) == 1
    assert levels.counters.ops["tile.mmad"] == levels.counters.ops["tile.load3d"]
    x_shape, w_shape, attrs = CASES["depth_only"]
    out_depth = (x_shape[2] + 3 - 5) // 3 + 1
    assert levels.counters.ops["tile.mmad"] >= x_shape[0] * out_depth * w_shape[2]
    assert any(isinstance(op, Load3dOp) for op in levels.module.walk())


def test_valid_taps_are_the_taps_that_read_a_plane() -> None:
    """Against brute force: the taps of each output plane whose input plane lies in the
    data, and one tap (of zeros) for a plane whose window lies wholly in the padding."""
    for depth in range(1, 7):
        for k in range(1, 5):
            for stride in (1, 2, 3):
                for dilation in (1, 2):
                    for pad in range(4):
                        extent = (k - 1) * dilation + 1
                        out = (depth + 2 * pad - extent) // stride + 1
                        if out < 1:
                            continue
                        taps = DepthTaps(depth, out, k, stride, dilation, pad)
                        for d in range(out):
                            reads = [
                                t for t in range(k) if 0 <= d * stride - pad + t * dilation < depth
                            ]
                            got = valid_taps(taps, d)
                            assert list(got) == (reads or list(got)[:1]), (taps, d, got)
                            assert len(got) >= 1


def test_conv3d_skips_depth_taps_in_the_padding() -> None:
    """``depth_only`` (7 planes, 5 taps, stride 3, padding 2 in front and 1 behind): output
    plane 0 runs taps 2..4, plane 1 all five: 8 tap runs instead of 10, each the same
    number of ``mmad`` / ``load3d``; on 910B (multi-buffered, synchronised, several cores:
    the tap loop's trip count varies) every level still agrees."""
    module, inputs = _conv3d_module("depth_only", relu=False)
    levels = run_levels(module, inputs, "test")
    x_shape, w_shape, attrs = CASES["depth_only"]
    taps = DepthTaps(x_shape[2], 2, w_shape[2], 3, 1, 2)
    runs = sum(len(valid_taps(taps, d)) for d in range(2))
    assert runs == 8
    mmads = levels.counters.ops["tile.mmad"]
    assert mmads == levels.counters.ops["tile.load3d"] and mmads % runs == 0
    module, inputs = _conv3d_module("dilated_padded")
    assert_matches(run_levels(module, inputs, "ascend910b"))


def _depth_kernel(kd: int):
    def build(g: Graph) -> Sequence[SSAValue]:
        x = g.input([1, 20, 6, 7, 9], "NCDHW")
        w = g.const([24, 20, kd, 3, 3], "NCDHW")
        return [g.op("conv", x, w, None, pads=[kd // 2, 1, 1, kd // 2, 1, 1])]

    return build


def test_conv3d_estimate_grows_with_depth_taps() -> None:
    """The cycle model counts the cube's MACs of every depth tap: kd = 1, 3, 5 cost more
    and more, the growth in the cube's work dominating."""
    cycles = [estimated_cycles(_depth_kernel(kd)) for kd in (1, 3, 5)]
    assert cycles[0] < cycles[1] < cycles[2], cycles
    assert cycles[2] - cycles[1] > 0.5 * (cycles[1] - cycles[0]), cycles


# name: (input shape, weight shape, conv attributes) of grouped 3-D convolutions
GROUPED: dict[str, tuple[list[int], list[int], dict]] = {
    # depthwise, 20 channels: FRACTAL_Z_3D's groups rule puts 16 groups in a block, the
    # second block ragged (4 valid lanes)
    "depthwise": ([1, 20, 4, 7, 9], [20, 1, 3, 3, 3], {"group": 20, "pads": [1] * 6}),
    # 2 groups of 4 -> 4 channels: one block of both (e = 2), block-diagonal
    "two_groups": ([2, 8, 3, 5, 5], [8, 4, 3, 3, 3], {"group": 2, "pads": [1] * 6}),
    # 3 groups of 12 -> 8: e = 3 (lanes not aligned to C0 within the block), strided,
    # dilated in depth
    "unaligned": (
        [1, 36, 5, 6, 7],
        [24, 12, 3, 1, 3],
        {"group": 3, "strides": [2, 1, 2], "dilations": [2, 1, 1], "pads": [2, 0, 1, 2, 0, 1]},
    ),
    # 4 groups of 16 -> 16 channels: aligned, one group per block (e = 1), 4 blocks
    "aligned_blocks": ([1, 64, 3, 4, 5], [64, 16, 2, 3, 3], {"group": 4, "pads": [0, 1, 1] * 2}),
}


def _grouped_module(name: str, padded: bool) -> tuple[ModuleOp, list[np.ndarray]]:
    x_shape, w_shape, attrs = GROUPED[name]
    g = Graph(padded)
    x = g.input(x_shape, "NCDHW")
    y = g.op("conv", x, g.const(w_shape, "NCDHW"), g.const([w_shape[0]]), **attrs)
    return g.b.build(g.op("relu", y)), g.arrays


@pytest.mark.parametrize("name", sorted(GROUPED))
@pytest.mark.parametrize("padded", [False, True], ids=["origin", "nan_padding"])
def test_grouped_conv3d_every_level_agrees(name: str, padded: bool) -> None:
    """Grouped and depthwise 3-D convolutions run on the cube, one loop nest per group
    block of FRACTAL_Z_3D's groups rule (the 2-D kernel's blocks, per depth tap)."""
    module, inputs = _grouped_module(name, padded)
    levels = run_levels(module, inputs, "test", pad_value=NAN if padded else None)
    assert_units(levels.tiled_kernels, {"graph.conv": CUBE}, "tile-kernels")
    assert_matches(levels)


def test_depthwise_conv3d_estimate_is_per_block() -> None:
    """A depthwise 3-D convolution costs about its group blocks' work: 20 channels in two
    blocks of 16 groups cost less than the dense 20 -> 20 convolution of the same shape."""

    def conv(groups: int):
        def build(g: Graph) -> Sequence[SSAValue]:
            x = g.input([1, 20, 6, 7, 9], "NCDHW")
            w = g.const([20, 20 // groups, 3, 3, 3], "NCDHW")
            return [g.op("conv", x, w, None, group=groups, pads=[1] * 6)]

        return build

    depthwise, dense = estimated_cycles(conv(20)), estimated_cycles(conv(1))
    assert 0 < depthwise < dense * 1.5, (depthwise, dense)


def test_format_engine_picks_ndc1hwc0_and_fractal_z_3d() -> None:
    module, _ = _conv3d_module("3x3x3_same")
    run_pipeline("set-target{platform=test},O2", make_context(), module)
    convs = [op for op in module.walk() if op.name == "graph.conv"]
    assert convs
    x, w = (operand.type for operand in convs[0].operands[:2])
    assert x.storage_format == Format.NDC1HWC0  # type: ignore[attr-defined]
    assert w.storage_format == Format.FRACTAL_Z_3D  # type: ignore[attr-defined]
