"""A dynamically quantised convolution as ``fold-integer-ops`` leaves it, each level
against the one above it (:mod:`tests.lowering.test_tile_differential`): the input's
DynamicQuantizeLinear parameters, the int8 data quantised with the run-time zero point,
the zero point's int32 bias ``Cast(z) · -Σw`` (a run-time ``[C]`` vector), the
convolution padding with the zero point, the dequantising multiply by the run-time scale
product and an activation after it.

The convolution's group is one kernel (its bias converted ``[C]`` -> NC1HWC0 in the
prologue is a flat load, zeros past C; the scale product, a scalar program, computed in
its epilogue), the scalar cast joins the bias multiply, and the parameters and the
quantisation are one kernel (``fuse-dynamic-quantize``): three kernels in all. The
int32 sums are exact and every float step rounds the same operands once, so the levels
agree exactly; with NaN in the float input's padding lanes, none leaks (36 output
channels: the last channel tile's bias lanes past C are the load's zeros).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.lowering.test_tile_differential import (
    CUBE,
    NAN,
    Graph,
    assert_matches,
    assert_no_nan,
    assert_units,
    run_levels,
)

QCONV = {"graph.quant_conv2d": CUBE}
X_SHAPE, W_SHAPE = [1, 40, 9, 9], [36, 40, 3, 3]


def dynamic_conv(g: Graph):
    x = g.input(X_SHAPE, "NCHW")
    scale, _, zero = g.b.op_results("dynamic_quantize_params", x)
    xq = g.op("quantize_linear", x, scale, zero)
    w = g.rng.integers(-127, 128, W_SHAPE).astype(np.int8)
    sums = g.b.constant(-w.astype(np.int32).reshape(W_SHAPE[0], -1).sum(axis=1).astype(np.int32))
    bias = g.op("mul", g.op("cast", zero, to=6), sums)
    ones = g.b.constant(np.ones(W_SHAPE[0], np.float32))
    y = g.op(
        "quant_conv2d", xq, g.b.constant(w, "NCHW"), bias, ones, zero,
        strides=[2, 2], pads=[1, 1, 1, 1],
    )  # fmt: skip
    w_scale = g.b.constant(np.array(0.004, np.float32))
    return [g.op("relu", g.op("mul", y, g.op("mul", scale, w_scale)))]


def _conv_kernels(kernels) -> list:
    return [k for k in kernels if "graph.quant_conv2d" in k.ops]


@pytest.mark.parametrize("platform", ["test", "ascend910b", "ascend310p"])
@pytest.mark.parametrize("padded", [False, True], ids=["plain", "nan_padding"])
def test_dynamic_conv_group_is_one_kernel(platform: str, padded: bool):
    g = Graph(padded)
    module = g.b.build(*dynamic_conv(g))
    levels = run_levels(
        module, g.arrays, platform, precision="int8", pad_value=NAN if padded else None
    )
    assert_no_nan(levels)
    assert_matches(levels, rtol=0, atol=0)
    assert_units(levels.macro_kernels, QCONV, "lower-graph-to-kernels")
    (conv,) = _conv_kernels(levels.macro_kernels)
    # the scale product (a scalar program) and the dequantising multiply in the epilogue
    assert conv.ops.count("graph.mul") == 2 and "graph.relu" in conv.ops
    # the cast of the zero point runs in the bias multiply's kernel, not alone: the
    # parameters with the quantisation (fuse-dynamic-quantize), the bias, the convolution (and, with the input held
    # as NC1HWC0, its conversion for the parameters' ND reduction)
    others = [k.ops for k in levels.macro_kernels if k is not conv]
    assert [ops for ops in others if ops != ("layout.trans_data",)] == [
        ("graph.dynamic_quantize_params", "graph.quantize_linear"),
        ("graph.cast", "graph.mul"),
    ]
