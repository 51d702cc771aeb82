"""A dynamically quantised *grouped* (and depthwise) convolution as ``fold-integer-ops``
leaves it, each level against the one above it (:mod:`tests.lowering.test_tile_differential`):
the int8 data quantised with a run-time uint8 zero point (re-centred on int8, generally
not 0), the convolution padding with that zero point, and the int32 bias ``Cast(z) · -Σw``
whose sums run over each output channel's own group's input channels only.

Groups aligned to C0 (32 int8 lanes), not aligned (8 channels a group) and depthwise, with
strides; the int32 sums are exact and every float step rounds the same operands once, so
the levels agree exactly; with NaN in the float input's padding lanes, none leaks.
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
# (input channels, output channels, group, strides)
CASES = {
    "aligned": (64, 64, 2, [1, 1]),
    "unaligned": (24, 36, 3, [2, 2]),
    "depthwise": (40, 40, 40, [1, 1]),
}


def grouped_dynamic_conv(g: Graph, channels: int, out: int, group: int, strides: list[int]):
    x = g.input([1, channels, 9, 9], "NCHW")
    scale, _, zero = g.b.op_results("dynamic_quantize_params", x)
    xq = g.op("quantize_linear", x, scale, zero)
    w_shape = [out, channels // group, 3, 3]
    w = g.rng.integers(-127, 128, w_shape).astype(np.int8)
    # the correction sums each output channel's weights: its group's input channels only
    sums = -w.astype(np.int32).reshape(out, -1).sum(axis=1).astype(np.int32)
    bias = g.op("mul", g.op("cast", zero, to=6), g.b.constant(sums))
    ones = g.b.constant(np.ones(out, np.float32))
    y = g.op(
        "quant_conv2d", xq, g.b.constant(w, "NCHW"), bias, ones, zero,
        strides=strides, pads=[1, 1, 1, 1], group=group,
    )  # fmt: skip
    w_scale = g.b.constant(np.array(0.004, np.float32))
    return [g.op("mul", y, g.op("mul", scale, w_scale))]


@pytest.mark.parametrize("platform", ["test", "ascend910b", "ascend310p"])
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("padded", [False, True], ids=["plain", "nan_padding"])
def test_grouped_dynamic_conv_levels_agree(platform: str, case: str, padded: bool):
    g = Graph(padded)
    module = g.b.build(*grouped_dynamic_conv(g, *CASES[case]))
    levels = run_levels(
        module, g.arrays, platform, precision="int8", pad_value=NAN if padded else None
    )
    assert_no_nan(levels)
    assert_matches(levels, rtol=0, atol=0)
    assert_units(levels.macro_kernels, QCONV, "lower-graph-to-kernels")
