"""The format engine's choice for graph.concat (``ConcatOp.storage_applies``).

A concat may share NC1HWC0 along H or W, or along C when every input's C is whole C0
blocks (GE's ConcatD; docs/format-engine.md); every strategy keeps the graph's semantics
with NaN in the padding lanes.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import i64

from tilegraph.builder import GraphBuilder
from tilegraph.dialects.graph.data_movement import ConcatOp
from tilegraph.dialects.graph.movement_storage import concat_storage_applies
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.passes.context import make_context
from tilegraph.passes.format_report import format_report
from tilegraph.passes.layout_plan import KernelChoice, LayoutPlanner
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.runtime import run_reference

NAN = float("nan")


def _graph(channels: tuple[int, int], axis: int = 1, dtype: str = "float32"):
    """x -> two 1x1 convs -> concat(axis) -> 1x1 conv: a channel concat between convs."""
    rng = np.random.default_rng(11)
    b = GraphBuilder("main")
    x = b.input("x", [1, 16, 6, 6], dtype, "NCHW")

    def conv(v, cin: int, cout: int):
        w = rng.standard_normal((cout, cin, 1, 1)).astype(dtype)
        return b.op("conv2d", v, b.constant(w, "NCHW"))

    joined = b.op("concat", *(conv(x, 16, c) for c in channels), axis=axis)
    cin = sum(channels) if axis == 1 else channels[0]
    return b.build(conv(joined, cin, 16))


def _concat(module) -> ConcatOp:
    return next(op for op in module.walk() if isinstance(op, ConcatOp))


@pytest.mark.parametrize(
    ("channels", "axis", "dtype", "shares_5hd"),
    [
        ((32, 48), 1, "float16", True),
        ((16, 16), 1, "float32", True),
        ((24, 40), 1, "float16", False),  # 24 stops inside a C0 block
        ((20, 20), 2, "float32", True),
        ((20, 20), 3, "float16", True),
        ((20, 20), 0, "float32", False),  # N: not among ConcatD's NC1HWC0 axes
    ],
)
def test_nc1hwc0_is_a_choice_where_whole_blocks_move(channels, axis, dtype, shares_5hd):
    choices = LayoutPlanner("ascend910b").choices(_concat(_graph(channels, axis, dtype)))
    assert KernelChoice("any") in choices  # the origin views always
    assert (KernelChoice("any", Format.NC1HWC0) in choices) is shares_5hd
    assert KernelChoice("any", Format.FRACTAL_NZ) not in choices


@pytest.mark.parametrize(
    ("strategy", "channels", "activations"),
    [
        # aligned: x into NC1HWC0 and y back, nothing around the concat (naive leaves the
        # agnostic concat in its origin view: both inputs out, its result in)
        ("naive", (32, 48), 5),
        ("ge", (32, 48), 2),
        ("optimal", (32, 48), 2),
        # unaligned: the concat needs NCHW whatever the strategy
        ("ge", (24, 40), 5),
        ("optimal", (24, 40), 5),
    ],
)
def test_strategies_convert_around_the_concat_only_when_unaligned(strategy, channels, activations):
    assert_strategy_converts(_graph(channels), strategy, activations, (1, 16, 6, 6))


def assert_strategy_converts(original, strategy: str, activations: int, shape) -> None:
    """``format{strategy}`` on a clone of ``original`` converts ``activations`` activations
    and keeps every output of the graph with NaN in the padding lanes."""
    if strategy == "optimal":
        pytest.importorskip("scipy")
    module = original.clone()
    run_pipeline(f"format{{strategy={strategy} platform=ascend910b}}", make_context(), module)
    module.verify()
    assert format_report(module)["main"]["activations"] == activations
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    want = run_reference(original, [x])
    got = run_reference(module, [x], pad_value=NAN)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def test_a_concat_of_1d_shape_vectors_is_asked_without_a_channel_axis():
    """Paddle's dynamic size computations concatenate 1-D int64 shape pieces; the rule is
    asked about them too (select-storage-format on an unbound export) and must answer,
    not index a channel axis they do not have (it raised IndexError before)."""
    piece = TensorType([2], i64)
    assert concat_storage_applies(0, [piece, piece], [TensorType([4], i64)])
