"""A concat between convolutions runs on their NC1HWC0 outputs (no TransData around it).

GE's ConcatD keeps NC1HWC0 when the concat axis is not C, or is C and every input's C is a
multiple of C0 (docs/format-engine.md); ``graph.concat`` refuses the other cases per
instance (``ConcatOp.storage_applies``). Checked: the format engine's choice, and every
level (graph, macro kernels, both tile executors) with NaN in the padding lanes.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from tests.lowering.test_tile_differential import assert_matches, assert_no_nan, run_levels
from tilegraph.builder import GraphBuilder
from tilegraph.dialects.graph.data_movement import ConcatOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline


def _conv_concat(dtype: str, channels: tuple[int, int], axis: int) -> tuple[ModuleOp, dict]:
    """conv -> relu, twice; concat along ``axis``; per-channel mul -> relu -> conv."""
    rng = np.random.default_rng(7)
    np_type = np.dtype(dtype)
    b = GraphBuilder("main")
    x = b.input("x", [2, 8, 6, 5], dtype, "NCHW")

    def conv(v, cin: int, cout: int):
        w = (rng.standard_normal((cout, cin, 1, 1)) / np.sqrt(cin)).astype(np_type)
        return b.op("conv2d", v, b.constant(w, "NCHW"))

    parts = [b.op("relu", conv(x, 8, c)) for c in channels]
    joined = b.op("concat", *parts, axis=axis)
    total = sum(channels) if axis == 1 else channels[0]
    scale = b.constant(rng.uniform(0.5, 1.5, (total, 1, 1)).astype(np_type), "NCHW")
    out = conv(b.op("relu", b.op("mul", joined, scale)), total, 16)
    module = b.build(out)
    return module, {"x": rng.standard_normal((2, 8, 6, 5)).astype(np_type)}


def _concat_after_o2(module: ModuleOp) -> ConcatOp:
    """The concat of ``module`` (a clone) after O2 on ascend910b."""
    clone = module.clone()
    run_pipeline('set-target{platform="ascend910b"},O2', make_context(), clone)
    (concat,) = [op for op in clone.walk() if isinstance(op, ConcatOp)]
    return concat


def _stored_5hd(concat: ConcatOp) -> bool:
    """Whether every input and the result of ``concat`` are NC1HWC0, none a TransData."""
    values = [*concat.inputs, concat.concat_result]
    types = [v.type for v in values]
    assert all(isinstance(t, TensorType) for t in types)
    return all(t.storage_format == Format.NC1HWC0 for t in types) and not any(  # type: ignore[union-attr]
        isinstance(v.owner, TransDataOp) for v in concat.inputs
    )


CASES = [
    # dtype, channels, axis, stays NC1HWC0
    ("float16", (32, 48), 1, True),  # whole C0 blocks
    ("float32", (16, 32), 1, True),
    ("float16", (24, 40), 1, False),  # 24 stops inside a block: NCHW concat, TransData
    ("float32", (20, 20), 2, True),  # along H or W any C: the blocks line up
    ("float16", (20, 20), 3, True),
    ("float32", (20, 20), 0, False),  # along N: not in GE's ConcatD formats
]


@pytest.mark.parametrize(("dtype", "channels", "axis", "in_5hd"), CASES)
def test_concat_keeps_nc1hwc0_where_whole_blocks_move(dtype, channels, axis, in_5hd):
    module, inputs = _conv_concat(dtype, channels, axis)
    assert _stored_5hd(_concat_after_o2(module)) is in_5hd
    _all_levels_match(module, inputs, dtype, "ascend910b")


@pytest.mark.parametrize("platform", ["ascend310p", "test"])
def test_aligned_channel_concat_on_other_presets(platform):
    module, inputs = _conv_concat("float16", (32, 48), 1)
    _all_levels_match(module, inputs, "float16", platform)


def _all_levels_match(module: ModuleOp, inputs: dict, dtype: str, platform: str) -> None:
    """Every level with NaN padding lanes: no NaN, all agree, no kernel on the host."""
    levels = run_levels(module, inputs, platform, pad_value=float("nan"))
    assert_no_nan(levels)
    tolerance = {"rtol": 2e-2, "atol": 2e-2} if dtype == "float16" else {}
    assert_matches(levels, **tolerance)
    host = [(k.name, k.reason) for k in levels.tiled_kernels if k.unit == "host"]
    assert not host, host


def test_an_nchw_input_converts_inside_the_concat_kernel():
    """One input arrives in NCHW (a model input; ASPP's resized pooling branch): its
    conversion to NC1HWC0 joins the concat kernel, which loads it into 5HD tiles, instead
    of running as a kernel of its own."""
    rng = np.random.default_rng(8)
    b = GraphBuilder("main")
    x = b.input("x", [2, 8, 6, 5], "float32", "NCHW")
    side = b.input("side", [2, 16, 6, 5], "float32", "NCHW")
    w = b.constant(rng.standard_normal((32, 8, 1, 1)).astype(np.float32), "NCHW")
    joined = b.op("concat", b.op("relu", b.op("conv2d", x, w)), side, axis=1)
    w2 = b.constant(rng.standard_normal((16, 48, 1, 1)).astype(np.float32), "NCHW")
    module = b.build(b.op("conv2d", joined, w2))
    inputs = {
        "x": rng.standard_normal((2, 8, 6, 5)).astype(np.float32),
        "side": rng.standard_normal((2, 16, 6, 5)).astype(np.float32),
    }
    levels = run_levels(module, inputs, "ascend910b", pad_value=float("nan"))
    assert_no_nan(levels)
    assert_matches(levels)
    concat_kernels = [k.ops for k in levels.tiled_kernels if "graph.concat" in k.ops]
    assert concat_kernels == [("layout.trans_data", "graph.concat")], concat_kernels
    assert not [k for k in levels.tiled_kernels if k.unit == "host"]
    assert len(levels.tiled_kernels) == 3  # conv + relu, concat, conv


@pytest.mark.parametrize("half", [16, 8])
def test_c2f_converts_only_where_the_split_cuts_a_block(half: int):
    """YOLOv8's C2f: conv -> split along C -> a bottleneck on the second half -> concat of
    both halves and the bottleneck -> conv. Halves of whole C0 blocks (16): the split runs
    on the conv's NC1HWC0 too (test_split_5hd.py), no conversion between the model's input
    and output ones. Halves of 8 (C0 16): the split (and the concat of 24) stay NCHW, and
    the conversions around them join the neighbouring kernels, no TransData kernel of
    their own. One kernel per op either way."""
    rng = np.random.default_rng(9)
    b = GraphBuilder("main")
    x = b.input("x", [1, 16, 8, 8], "float32", "NCHW")

    def conv(v, cin: int, cout: int):
        w = (rng.standard_normal((cout, cin, 1, 1)) / 4).astype(np.float32)
        return b.op("relu", b.op("conv2d", v, b.constant(w, "NCHW")))

    first, second = b.op_results(
        "split", conv(x, 16, 2 * half), b.constant(np.array([half, half], np.int64)), axis=1
    )
    joined = b.op("concat", first, second, conv(conv(second, half, half), half, half), axis=1)
    module = b.build(conv(joined, 3 * half, 16))
    inputs = {"x": rng.standard_normal((1, 16, 8, 8)).astype(np.float32)}
    levels = run_levels(module, inputs, "ascend910b", pad_value=float("nan"))
    assert_no_nan(levels)
    assert_matches(levels)
    kernels = [k.ops for k in levels.tiled_kernels]
    assert ("layout.trans_data",) not in kernels, kernels
    assert len(kernels) == 6, kernels  # 4 convs, the split, the concat
    inner = [ops for ops in kernels[1:-1] if "layout.trans_data" in ops]
    assert bool(inner) is (half % 16 != 0), kernels
