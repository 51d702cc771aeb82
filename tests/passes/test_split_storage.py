"""The format engine's choice for graph.split and graph.slice (``movement_storage``).

The peers of the NC1HWC0 concat (test_concat_storage.py): a 4-D NCHW tensor cut along N, H
or W may share NC1HWC0, along C only where every channel boundary the op puts inside the
tensor is a multiple of C0 (16 for float16 and float32 here); every strategy keeps the
graph's semantics with NaN in the padding lanes.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.passes.test_concat_storage import assert_strategy_converts
from tilegraph.builder import GraphBuilder
from tilegraph.dialects.graph.cutting import SliceOp, SplitOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.passes.layout_plan import KernelChoice, LayoutPlanner

NAN = float("nan")


def _graph(channels: int, cut: str, args: tuple[int, ...], axis: int, dtype: str = "float32"):
    """x -> 1x1 conv to ``channels`` -> split (sizes ``args``) or slice (start, end, step)
    along ``axis`` -> a 1x1 conv on every piece."""
    rng = np.random.default_rng(12)
    b = GraphBuilder("main")
    x = b.input("x", [1, 16, 8, 6], dtype, "NCHW")

    def conv(v, cin: int, cout: int):
        w = rng.standard_normal((cout, cin, 1, 1)).astype(dtype)
        return b.op("conv2d", v, b.constant(w, "NCHW"))

    y = conv(x, 16, channels)
    if cut == "split":
        pieces = b.op_results("split", y, b.constant(np.array(args, np.int64)), axis=axis)
    else:
        start, end, step = (b.constant(np.array([n], np.int64)) for n in args)
        pieces = [b.op("slice", y, start, end, b.constant(np.array([axis], np.int64)), step)]
    return b.build(*(conv(p, _channels(p), 16) for p in pieces))


def _channels(value) -> int:
    t = value.type
    assert isinstance(t, TensorType)
    return int(t.origin_shape[1])


def _cut(module):
    return next(op for op in module.walk() if isinstance(op, SliceOp | SplitOp))


@pytest.mark.parametrize(
    ("channels", "cut", "args", "axis", "shares_5hd"),
    [
        (48, "split", (16, 32), 1, True),  # the second output starts at a block boundary
        (40, "split", (32, 8), 1, True),  # the last output ends where the input does
        (48, "split", (8, 40), 1, False),  # 8: inside the first block
        (48, "split", (16, 16, 16), 1, True),
        (20, "split", (4, 4), 2, True),  # H: any C, any sizes
        (20, "split", (1, 5), 3, True),  # W
        (48, "slice", (16, 48, 1), 1, True),  # from a block boundary to the end
        (48, "slice", (0, 32, 1), 1, True),  # whole blocks
        (48, "slice", (0, 24, 1), 1, False),  # ends inside a block before the end
        (48, "slice", (16, 48, 2), 1, False),  # a channel step gathers lanes
        (48, "slice", (-16, 99, 1), 1, True),  # negative start, clamped end: [32, 48)
        (20, "slice", (7, -99, -2), 2, True),  # H reversed with a step
    ],
)
def test_nc1hwc0_is_a_choice_where_whole_blocks_move(channels, cut, args, axis, shares_5hd):
    choices = LayoutPlanner("ascend910b").choices(_cut(_graph(channels, cut, args, axis)))
    assert KernelChoice("any") in choices  # the origin views always
    assert (KernelChoice("any", Format.NC1HWC0) in choices) is shares_5hd
    assert KernelChoice("any", Format.FRACTAL_NZ) not in choices


@pytest.mark.parametrize(
    ("strategy", "args", "activations"),
    [
        # aligned: x into NC1HWC0 and the two results back, nothing around the split (naive
        # leaves the agnostic split in its origin view: its input out, both outputs in)
        ("naive", (16, 32), 6),
        ("ge", (16, 32), 3),
        ("optimal", (16, 32), 3),
        # unaligned: the split needs NCHW whatever the strategy
        ("ge", (24, 24), 6),
        ("optimal", (24, 24), 6),
    ],
)
def test_strategies_convert_around_the_split_only_when_unaligned(strategy, args, activations):
    assert_strategy_converts(_graph(48, "split", args, 1), strategy, activations, (1, 16, 8, 6))
