"""A one-channel NCHW tensor converted to NC1HWC0 (ConvNeXt's channels-first LayerNorm:
the mean over the channels, ``[N, 1, H, W]``, meets the conv's NC1HWC0 output).

Regression: the vector chain read any one-channel NCHW input of a 5HD region as a
broadcast across C0, which it cannot load, so the lone TransData of a tensor that itself
has one channel (nothing to broadcast) ran on the host. Checked: no host kernel, both
executors against the graph with NaN in the padding lanes on three presets.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.lowering.test_tile_differential import assert_matches, assert_no_nan, run_levels
from tilegraph.builder import GraphBuilder


def _channels_first_layer_norm(channels: int):
    """conv -> (x - mean_C(x)) / sqrt(mean_C((x - mean)^2) + eps) -> conv: ConvNeXt's
    ``LayerNorm2d`` as PyTorch exports it, between two convolutions."""
    rng = np.random.default_rng(5)
    b = GraphBuilder("main")
    x = b.input("x", [2, 8, 9, 7], "float32", "NCHW")
    w1 = b.constant(rng.standard_normal((channels, 8, 3, 3)).astype(np.float32), "NCHW")
    c = b.op("conv2d", x, w1, pads=[1, 1, 1, 1])
    mean = b.op("reduce_mean", c, np.array([1], np.int64), keepdims=1)
    centred = b.op("sub", c, mean)
    var = b.op("reduce_mean", b.op("mul", centred, centred), np.array([1], np.int64), keepdims=1)
    eps = b.constant(np.float32(1e-6))
    normed = b.op("div", centred, b.op("sqrt", b.op("add", var, eps)))
    w2 = b.constant(rng.standard_normal((16, channels, 1, 1)).astype(np.float32), "NCHW")
    module = b.build(b.op("conv2d", normed, w2))
    return module, {"x": rng.standard_normal((2, 8, 9, 7)).astype(np.float32)}


@pytest.mark.parametrize("platform", ["test", "ascend910b", "ascend310p"])
@pytest.mark.parametrize("channels", [32, 20])
def test_one_channel_statistics_convert_to_5hd_on_the_ai_core(platform: str, channels: int):
    module, inputs = _channels_first_layer_norm(channels)
    levels = run_levels(module, inputs, platform, pad_value=float("nan"))
    assert_no_nan(levels)
    assert_matches(levels)
    host = [(k.name, k.reason) for k in levels.tiled_kernels if k.unit == "host"]
    assert not host, host
