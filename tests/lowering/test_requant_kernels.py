"""Fixpipe requantisation (``graph.requant_conv2d``, made by ``fold-requant`` under O2):
the int8 convolution's int32 sum leaves L0C as int8 NC1HWC0 (C0 = 32) and the next int8
convolution reads it; each level against the one above it (the harness of
:mod:`tests.lowering.test_tile_differential`) on the ``test`` preset (ragged channel tails:
an odd last fractal fills half a C1 slice, several tiles and K steps) and on 910B / 310P.

Every level requantises the same exact int32 sum with the same float32 product and one
rounding (half to even), so they agree exactly (tolerance 0); with NaN in the float input's
padding lanes no NaN leaks. The graph before ``fold-requant`` rounds twice (dequantised
float, then the QuantizeLinear): the pass's own test checks that it moves an output by at
most one quantisation step.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.ir import SSAValue

from tests.lowering import test_tile_differential as harness
from tests.lowering.test_tile_differential import Graph
from tilegraph.dialects.graph.quantized_cube import QuantConv2dOp
from tilegraph.dialects.graph.requantized_cube import RequantConv2dOp, requantize_accumulator
from tilegraph.dialects.tile import FixpipeOp
from tilegraph.dialects.tile.base import memref_element, memref_shape
from tilegraph.passes.pipelines import run_pipeline

X_SCALE = 0.05

# name: (input shape, first weight, second weight, conv attributes)
PAIRS: dict[str, tuple[list[int], list[int], list[int], dict]] = {
    # 40 -> 36 channels: three accumulator fractals, the last half a C1 slice of 32
    "ragged_3x3": ([1, 20, 9, 9], [36, 20, 3, 3], [24, 36, 1, 1], {"pads": [1, 1, 1, 1]}),
    "stride2_64": ([2, 40, 11, 11], [64, 40, 3, 3], [40, 64, 3, 3], {"strides": [2, 2]}),
    "wide_rows": ([1, 20, 5, 70], [48, 20, 3, 3], [16, 48, 1, 1], {"pads": [1, 1, 1, 1]}),
    # depthwise over 40 channels: group blocks of 32 (int8's C0), the second ragged (8)
    "depthwise": (
        [1, 40, 7, 9],
        [40, 1, 3, 3],
        [24, 40, 1, 1],
        {"pads": [1, 1, 1, 1], "group": 40},
    ),
    # ResNeXt-style: 2 groups of 32 channels, stride 2, a block of 32 outputs each
    "grouped_2": ([2, 64, 9, 9], [64, 32, 3, 3], [16, 64, 1, 1], {"strides": [2, 2], "group": 2}),
}


def requant_pair(name: str, relu: bool, per_tensor: bool = False, zero_point: int = 0):
    """QuantizeLinear of a float input, ``quant_conv2d`` -> QuantizeLinear (with ``relu``:
    -> DequantizeLinear -> Relu -> QuantizeLinear, the same quantisation) -> a second
    ``quant_conv2d`` reading the int8 result, as ``fold-qdq`` leaves a QDQ model."""
    x_shape, w1_shape, w2_shape, attrs = PAIRS[name]

    def build(g: Graph) -> list[SSAValue]:
        x = g.input(x_shape, "NCHW")
        zero = g.b.constant(np.array(zero_point, np.int8))
        xq = g.op("quantize_linear", x, g.b.constant(np.array(X_SCALE, np.float32)), zero)

        def conv(data: SSAValue, w_shape: list[int], **extra) -> SSAValue:
            m = w_shape[0]
            w = g.b.constant(g.rng.integers(-127, 128, w_shape).astype(np.int8), "NCHW")
            bias = g.b.constant(g.rng.integers(-2000, 2000, m).astype(np.int32))
            scales = g.rng.uniform(0.5, 1.5, 1 if per_tensor else m) * 2e-3 * X_SCALE
            deq = g.b.constant(np.broadcast_to(scales, (m,)).astype(np.float32))
            pad = {"pad_value": zero_point} if zero_point else {}
            return g.op("quant_conv2d", data, w, bias, deq, **extra, **pad)

        y_scale = g.b.constant(np.array(0.1, np.float32))
        y = g.op("quantize_linear", conv(xq, w1_shape, **attrs), y_scale, zero)
        if relu:
            y = g.op("dequantize_linear", y, y_scale, zero)
            y = g.op("quantize_linear", g.op("relu", y), y_scale, zero)
        return [conv(y, w2_shape)]

    return build


def _module(build, padded: bool = False):
    g = Graph(padded)
    return g.b.build(*build(g)), g.arrays


UNITS = {"graph.requant_conv2d": harness.CUBE, "graph.quant_conv2d": harness.CUBE}


@pytest.mark.parametrize("name", list(PAIRS))
@pytest.mark.parametrize("relu", [False, True], ids=["plain", "relu"])
def test_requant_conv_kernel(name: str, relu: bool):
    """Every level agrees exactly; the first convolution requantises in fixpipe (an i8
    NC1HWC0 destination of C0 = 32, its zero point, ReLU as the flag)."""
    module, inputs = _module(requant_pair(name, relu, zero_point=-5 if relu else 0))
    levels = harness.run_levels(module, inputs, "test", precision="int8")
    harness.assert_matches(levels, rtol=0, atol=0)
    harness.assert_units(levels.tiled_kernels, UNITS, "tile-kernels{platform=test}")
    requants = [
        op
        for op in levels.module.walk()
        if isinstance(op, FixpipeOp) and str(memref_element(op.dst)) == "i8"
    ]
    assert requants and all(memref_shape(op.dst)[-1] == 32 for op in requants)
    assert all(bool(op.relu) == relu for op in requants)


@pytest.mark.parametrize("name", ["ragged_3x3", "stride2_64", "depthwise", "grouped_2"])
def test_requant_conv_kernel_nan_padding(name: str):
    """The float input held as NC1HWC0 with NaN in its padding lanes: no NaN leaks, and a
    per-tensor multiplier (repeated per channel) agrees exactly too."""
    module, inputs = _module(requant_pair(name, True, per_tensor=True), padded=True)
    levels = harness.run_levels(module, inputs, "test", precision="int8", pad_value=harness.NAN)
    harness.assert_no_nan(levels)
    harness.assert_matches(levels, rtol=0, atol=0)


@pytest.mark.parametrize("name", ["stride2_64", "depthwise"])
@pytest.mark.parametrize("platform", ["ascend910b", "ascend310p"])
def test_requant_conv_kernel_on_presets(platform: str, name: str):
    """On 910B fixpipe writes the int8 tiles to GM (a cube kernel, no AIV); on 310P (no
    L0C -> GM) through UB and MTE3."""
    module, inputs = _module(requant_pair(name, True))
    levels = harness.run_levels(module, inputs, platform, precision="int8")
    harness.assert_matches(levels, rtol=0, atol=0)
    harness.assert_units(levels.tiled_kernels, UNITS, f"tile-kernels{{platform={platform}}}")


def test_fold_requant_moves_outputs_by_at_most_one_step():
    """The graph level before and after ``fold-requant``: the requantised result differs
    from the twice-rounded one by at most one int8 step, and only on rounding boundaries."""
    module, inputs = _module(requant_pair("ragged_3x3", False))
    run_pipeline("set-target{precision=int8},fold-qdq", Context(), module)
    (conv, *_) = [op for op in module.walk() if isinstance(op, QuantConv2dOp)]
    run_pipeline("fold-requant", Context(), module)
    (requant,) = [op for op in module.walk() if isinstance(op, RequantConv2dOp)]
    assert int(requant.attr("zero_point")) == 0 and not int(requant.attr("relu"))
    rng = np.random.default_rng(1)
    acc = rng.integers(-(2**20), 2**20, (1, 36, 9, 9)).astype(np.int32)
    scale = rng.uniform(0.5, 1.5, 36).astype(np.float32) * np.float32(1e-4)
    multiplier = (scale / np.float32(0.1)).astype(np.float32)
    once = requantize_accumulator(acc, multiplier.reshape(1, -1, 1, 1), 0, False)
    dequantized = (acc.astype(np.float64) * scale.reshape(1, -1, 1, 1)).astype(np.float32)
    twice = np.clip(np.rint(dequantized / np.float32(0.1)), -128, 127).astype(np.int8)
    assert conv is not None
    assert np.abs(once.astype(int) - twice.astype(int)).max() <= 1
