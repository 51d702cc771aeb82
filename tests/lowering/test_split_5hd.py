"""A split / slice between convolutions runs on their NC1HWC0 outputs (no TransData).

The peer of the NC1HWC0 concat (test_concat_5hd.py): ``graph.split`` and ``graph.slice``
keep NC1HWC0 where they cut no C0 block (``movement_storage``): along N, H or W any bounds,
along C at channel offsets on block boundaries (step 1). Checked: the format engine's
choice after O2, and every level (graph, macro kernels, both tile executors) with NaN in
the padding lanes, no kernel left on the host.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from tests.lowering.test_tile_differential import assert_matches, assert_no_nan, run_levels
from tilegraph.builder import GraphBuilder
from tilegraph.dialects.graph.data_movement import SliceOp, SplitOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline

SHAPE = (2, 16, 6, 5)


def _conv_cut(dtype: str, channels: int, cut) -> tuple[ModuleOp, dict]:
    """conv -> relu; ``cut(builder, value)`` gives the pieces; a 1x1 conv on each piece."""
    rng = np.random.default_rng(5)
    np_type = np.dtype(dtype)
    b = GraphBuilder("main")
    x = b.input("x", list(SHAPE), dtype, "NCHW")

    def conv(v, cin: int, cout: int):
        w = (rng.standard_normal((cout, cin, 1, 1)) / np.sqrt(cin)).astype(np_type)
        return b.op("conv2d", v, b.constant(w, "NCHW"))

    y = b.op("relu", conv(x, SHAPE[1], channels))
    pieces = cut(b, y)
    outs = [conv(p, int(p.type.origin_shape[1]), 8) for p in pieces]
    module = b.build(*outs)
    return module, {"x": rng.standard_normal(SHAPE).astype(np_type)}


def _split(sizes: tuple[int, ...], axis: int):
    def cut(b: GraphBuilder, v):
        split = b.constant(np.array(sizes, np.int64), "ND")
        return b.op_results("split", v, split, axis=axis)

    return cut


def _slice(starts: int, ends: int, axis: int, step: int = 1):
    def cut(b: GraphBuilder, v):
        consts = [b.constant(np.array([n], np.int64), "ND") for n in (starts, ends, axis, step)]
        return [b.op("slice", v, *consts)]

    return cut


def _cut_after_o2(module: ModuleOp) -> Operation:
    clone = module.clone()
    run_pipeline('set-target{platform="ascend910b"},O2', make_context(), clone)
    (op,) = [op for op in clone.walk() if isinstance(op, SliceOp | SplitOp)]
    return op


def _stored_5hd(op: Operation) -> bool:
    """Whether the data and every result of ``op`` are NC1HWC0, the data no TransData."""
    types = [v.type for v in (op.operands[0], *op.results)]
    assert all(isinstance(t, TensorType) for t in types)
    in_5hd = all(t.storage_format == Format.NC1HWC0 for t in types)  # type: ignore[union-attr]
    return in_5hd and not isinstance(op.operands[0].owner, TransDataOp)


CASES = [
    # dtype (C0 16 for float16), channels, cut, stays NC1HWC0
    ("float16", 48, _split((32, 16), 1), True),  # whole C0 blocks
    ("float16", 40, _split((16, 24), 1), True),  # the last piece ends inside a block
    ("float16", 48, _split((24, 24), 1), False),  # 24: the second starts inside a block
    ("float16", 20, _split((3, 3), 2), True),  # H: any C
    ("float32", 20, _split((2, 3), 3), True),  # W
    ("float16", 48, _slice(16, 32, 1), True),  # one whole block
    ("float16", 40, _slice(16, 99, 1), True),  # from a block boundary to the end
    ("float16", 48, _slice(16, 40, 1), False),  # ends inside a block of the input
    ("float16", 48, _slice(8, 48, 1), False),  # starts inside a block
    ("float16", 48, _slice(0, 48, 1, 2), False),  # a strided channel slice
    ("float32", 20, _slice(1, 6, 2, 2), True),  # H, step 2
    ("float16", 20, _slice(-1, -6, 3, -1), True),  # W reversed
]


@pytest.mark.parametrize(("dtype", "channels", "cut", "in_5hd"), CASES)
def test_cut_keeps_nc1hwc0_where_whole_blocks_move(dtype, channels, cut, in_5hd):
    module, inputs = _conv_cut(dtype, channels, cut)
    assert _stored_5hd(_cut_after_o2(module)) is in_5hd
    levels = run_levels(module, inputs, "ascend910b", pad_value=float("nan"))
    assert_no_nan(levels)
    tolerance = {"rtol": 2e-2, "atol": 2e-2} if dtype == "float16" else {}
    assert_matches(levels, **tolerance)
    host = [(k.name, k.reason) for k in levels.tiled_kernels if k.unit == "host"]
    assert not host, host


@pytest.mark.parametrize("platform", ["test", "ascend310p"])
@pytest.mark.parametrize(
    "cut", [_split((16, 16, 8), 1), _slice(16, 40, 1), _slice(5, 0, 2, -2)], ids=["c", "c2", "h"]
)
def test_blocked_cuts_on_other_presets(platform: str, cut):
    """The block copies on the test preset (a small UB: regions of several tiles) and on a
    coupled preset, NaN in the padding lanes, none on the host, no TransData around them."""
    module, inputs = _conv_cut("float16", 40, cut)
    levels = run_levels(module, inputs, platform, pad_value=float("nan"))
    assert_no_nan(levels)
    assert_matches(levels, rtol=2e-2, atol=2e-2)
    assert not [k for k in levels.tiled_kernels if k.unit == "host"]
    cuts = [k for k in levels.tiled_kernels if k.ops in (("graph.split",), ("graph.slice",))]
    assert len(cuts) == 1, levels.tiled_kernels
    # only the model's input and outputs convert: nothing around the cut
    conversions = sum(k.ops.count("layout.trans_data") for k in levels.tiled_kernels)
    assert conversions == 1 + len(levels.reference), levels.tiled_kernels
