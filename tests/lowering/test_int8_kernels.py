"""The int8 cube (``graph.quant_conv2d``: int8 img2col and mmad, int32 L0C, fixpipe deq),
each level against the one above it (the harness of
:mod:`tests.lowering.test_tile_differential`): graph -> macro kernels -> tiled loops on
both executors, on the ``test`` preset (ragged channel and row tails, several tiles and K
steps) and on ``ascend910b`` (a mix kernel: the quantised epilogue on the AIV).

The data reaches the convolution through a QuantizeLinear (a vector program), so its
int8 NC1HWC0 padding lanes are whatever the vector unit wrote there; the int32 sum is
exact and the dequantisation rounds the same product once at every level, so the levels
agree exactly (tolerance 0). With NaN in the float input's padding lanes, no NaN may leak
(a NaN lane quantises to some int8 value, multiplied by the weight's zero padding).
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import IntegerAttr, f16, f32, i1, i8, i32
from xdsl.ir import SSAValue
from xdsl.utils.test_value import create_ssa_value

from tests.lowering.test_tile_differential import (
    CUBE,
    NAN,
    Graph,
    assert_matches,
    assert_no_nan,
    assert_tiled,
    assert_units,
    run_levels,
)
from tilegraph.cost_model.tile_costs import cost_of
from tilegraph.dialects.tile import Load3dOp, MmadOp
from tilegraph.dialects.tile.base import scoped_memref
from tilegraph.hardware import hardware_preset

QCONV = {"graph.quant_conv2d": CUBE}
X_SCALE = 0.05

# name: (input shape, weight shape, conv attributes)
CONVS: dict[str, tuple[list[int], list[int], dict]] = {
    "3x3_pad": ([1, 20, 9, 9], [24, 20, 3, 3], {"pads": [1, 1, 1, 1]}),
    "stride2": ([1, 40, 11, 11], [36, 40, 3, 3], {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "1x1_deep": ([2, 70, 5, 7], [40, 70, 1, 1], {}),
    "7x7_rgb": ([1, 3, 17, 11], [18, 3, 7, 7], {"strides": [2, 2], "pads": [3, 3, 3, 3]}),
    "wide_rows": ([1, 20, 5, 70], [24, 20, 3, 3], {"pads": [1, 1, 1, 1]}),
}


def with_epilogue(g: Graph, y: SSAValue, epilogue: str, zero: SSAValue) -> SSAValue:
    """``y`` followed by ``epilogue``: "relu", "requantize" (the next layer's
    QuantizeLinear, on the vector unit, with zero point ``zero``) or "none"."""
    if epilogue == "relu":
        return g.op("relu", y)
    if epilogue == "requantize":
        return g.op("quantize_linear", y, g.b.constant(np.array(0.1, np.float32)), zero)
    return y


def quant_conv(name: str, epilogue: str = "relu", per_tensor: bool = False, zero_point: int = 0):
    """QuantizeLinear of a float input (with ``zero_point``), then ``quant_conv2d`` with
    int8 weights, an int32 bias and per-channel (or one repeated, ``per_tensor``) scales,
    its padding holding the zero point (``pad_value``), then ``epilogue``."""
    x_shape, w_shape, attrs = CONVS[name]
    m = w_shape[0]

    def build(g: Graph) -> list[SSAValue]:
        x = g.input(x_shape, "NCHW")
        scale = g.b.constant(np.array(X_SCALE, np.float32))
        zero = g.b.constant(np.array(zero_point, np.int8))
        xq = g.op("quantize_linear", x, scale, zero)
        w = g.b.constant(g.rng.integers(-127, 128, w_shape).astype(np.int8), "NCHW")
        bias = g.b.constant(g.rng.integers(-2000, 2000, m).astype(np.int32))
        per_channel = g.rng.uniform(0.5, 1.5, 1 if per_tensor else m) * 0.01 * X_SCALE
        deq = g.b.constant(np.broadcast_to(per_channel, (m,)).astype(np.float32))
        pad = {"pad_value": zero_point} if zero_point else {}
        y = g.op("quant_conv2d", xq, w, bias, deq, **attrs, **pad)
        return [with_epilogue(g, y, epilogue, zero)]

    return build


def _module(build, padded: bool = False):
    g = Graph(padded)
    return g.b.build(*build(g)), g.arrays


@pytest.mark.parametrize("name", list(CONVS))
def test_int8_conv_kernel(name: str):
    """Every level agrees exactly, the convolution runs on the cube, in several tiles."""
    module, inputs = _module(quant_conv(name))
    levels = run_levels(module, inputs, "test", precision="int8")
    assert_matches(levels, rtol=0, atol=0)
    assert_tiled(levels.module)
    assert_units(levels.macro_kernels, QCONV, "lower-graph-to-kernels")
    assert_units(levels.tiled_kernels, QCONV, "tile-kernels{platform=test}")
    assert levels.splits(), "the test preset should split the convolution into tiles"
    assert levels.counters.ops.get("tile.mmad", 0) > 0


@pytest.mark.parametrize("name", ["3x3_pad", "7x7_rgb"])
def test_int8_conv_kernel_nan_padding(name: str):
    """The float input held as NC1HWC0 with NaN in its padding lanes: no NaN leaks."""
    module, inputs = _module(quant_conv(name), padded=True)
    levels = run_levels(module, inputs, "test", precision="int8", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels, rtol=0, atol=0)


@pytest.mark.parametrize("name", ["3x3_pad", "7x7_rgb", "wide_rows"])
@pytest.mark.parametrize("padded", [False, True], ids=["plain", "nan_padding"])
def test_int8_conv_kernel_pads_with_the_zero_point(name: str, padded: bool):
    """An asymmetric data zero point (-37): the L1 window's padding rows (the copy's fill),
    load3d's padding columns (``pad_value``) and, with width tiles, the window's padding
    columns hold it, so the border pixels agree exactly with the graph level (which pads
    ``x`` with it); NaN in the float input's padding lanes does not leak."""
    module, inputs = _module(quant_conv(name, zero_point=-37), padded=padded)
    levels = run_levels(module, inputs, "test", precision="int8", pad_value=NAN if padded else None)
    assert_no_nan(levels)
    assert_matches(levels, rtol=0, atol=0)
    assert_units(levels.tiled_kernels, QCONV, "tile-kernels{platform=test}")
    pads = [op for op in levels.module.walk() if isinstance(op, Load3dOp)]
    assert pads and all(op.padding == -37 for op in pads)


@pytest.mark.parametrize(
    ("epilogue", "per_tensor", "platform"),
    [("requantize", False, "test"), ("none", True, "test"), ("requantize", False, "ascend910b")],
)
def test_int8_conv_epilogues(epilogue: str, per_tensor: bool, platform: str):
    """A per-tensor scale (repeated per channel), no epilogue, and the next layer's
    QuantizeLinear fused behind the fixpipe (on 910B: a mix kernel, the AIV quantises)."""
    module, inputs = _module(quant_conv("stride2", epilogue, per_tensor))
    levels = run_levels(module, inputs, platform, precision="int8")
    assert_matches(levels, rtol=0, atol=0)
    assert_units(levels.tiled_kernels, QCONV, f"tile-kernels{{platform={platform}}}")


@pytest.mark.parametrize("platform", ["ascend910b", "ascend310p"])
def test_int8_mmad_costs_half_the_fp16_cycles(platform: str):
    """The cube's int8 rate is 16 x 16 x 32 MACs a cycle, twice fp16's 16 x 16 x 16
    (docs/hardware.md): the same M, K, N take half the fractal cycles."""
    hw = hardware_preset(platform)
    m, k, n = 128, 256, 64
    flag = ConstantOp(IntegerAttr(1, i1)).result

    def cycles(element, acc, k0: int) -> int:
        a = scoped_memref((m // 16, k // k0, 16, k0), element, "L0A")
        b = scoped_memref((k // k0, n // 16, 16, k0), element, "L0B")
        c = scoped_memref((n // 16, m // 16, 16, 16), acc, "L0C")
        op = MmadOp(create_ssa_value(a), create_ssa_value(b), create_ssa_value(c), flag)
        op.verify_()
        return cost_of(op, hw) - hw.mmad_head_cycles

    assert cycles(i8, i32, 32) * 2 == cycles(f16, f32, 16)
    assert cycles(i8, i32, 32) == (m // 16) * (k // 32) * (n // 16)
