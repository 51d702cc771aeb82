"""Kernels along an axis on the AI core — cumulative sum / product
(:mod:`tilegraph.lowering.conversion.tiling.scan`), arg_max / arg_min, top_k and one_hot
(:mod:`~tilegraph.lowering.conversion.tiling.axis_select`), linear and cubic resize
(:mod:`~tilegraph.lowering.conversion.tiling.resize_taps`), and the existing strategies
the same list of issue 25 names (a where with broadcast, a transpose of any permutation) —
each level against the one
above it (the harness of :mod:`tests.lowering.test_tile_differential`): graph -> macro
kernels -> tiled loops on both executors, on the ``test`` preset (ragged tails, several
tiles, a carry across chunks), the op on the vector unit; again with the NCHW inputs held
as NC1HWC0 with NaN in their padding lanes."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from xdsl.ir import Operation, SSAValue

from tests.lowering.test_tile_differential import (
    NAN,
    VECTOR,
    Graph,
    assert_matches,
    assert_no_nan,
    assert_tiled,
    assert_units,
    run_levels,
)
from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.layout_type import TensorType


def int_input(
    g: Graph, shape: Sequence[int], low: int, high: int, dtype: type = np.int64
) -> SSAValue:
    """An integer graph input with values in [low, high)."""
    t = TensorType(list(shape), element_type_of(np.dtype(dtype)), "ND")
    arg = g.b.block.insert_arg(t, len(g.b.block.args))
    arg.name_hint = f"in{len(g.arrays)}"
    g.arrays.append(g.rng.integers(low, high, shape).astype(dtype))
    return arg


def scalar(g: Graph, value: int) -> SSAValue:
    return g.b.constant(np.array(value, np.int64))


def cum(kind: str, shape, axis: int, fmt: str = "ND", **attrs):
    def build(g: Graph) -> list[SSAValue]:
        return [g.op(kind, g.input(shape, fmt), scalar(g, axis), **attrs)]

    return build


def cum_int(shape, axis: int, **attrs):  # roberta's position ids: cumsum of an int mask
    def build(g: Graph) -> list[SSAValue]:
        return [g.op("cum_sum", int_input(g, shape, 0, 2, np.int32), scalar(g, axis), **attrs)]

    return build


def arg(kind: str, shape, axis: int, fmt: str = "ND", **attrs):
    def build(g: Graph) -> list[SSAValue]:
        return [g.op(kind, g.input(shape, fmt), axis=axis, **attrs)]

    return build


def top_k(shape, k: int, axis: int, outputs=(0, 1), fmt: str = "ND", **attrs):
    def build(g: Graph) -> list[SSAValue]:
        values = g.b.op("top_k", g.input(shape, fmt), g.ints([k]), axis=axis, **attrs)
        op = values.owner
        assert isinstance(op, Operation)
        return [op.results[i] for i in outputs]

    return build


def one_hot(shape, depth: int, axis: int):
    def build(g: Graph) -> list[SSAValue]:
        idx = int_input(g, shape, -depth, depth + 2)  # negative and out-of-range ones too
        values = g.b.constant(np.array([-0.5, 2.0], np.float32))
        return [g.op("one_hot", idx, scalar(g, depth), values, axis=axis)]

    return build


def arange(start, limit, delta, dtype: type, lengths: int = 0):
    """A Range of constants too long for constant-fold to materialise (past its growth
    limit); with ``lengths`` rows, torchaudio's resampler mask ``arange(n) < lengths``."""

    def build(g: Graph) -> list[SSAValue]:
        scalars = (g.b.constant(np.array(v, dtype)) for v in (start, limit, delta))
        seq = g.op("range", *scalars)
        if not lengths:
            return [seq]
        row = g.op("unsqueeze", seq, g.ints([0]))
        column = g.op("unsqueeze", int_input(g, [lengths], 0, int(limit)), g.ints([1]))
        return [g.op("less", row, column)]

    return build


def filled(shape: Sequence[int], value: float, dtype: type):
    """A ConstantOfShape past constant-fold's 64 KiB (tf2onnx's
    ``ones_like`` of an activation), read by a product with an input."""

    def build(g: Graph) -> list[SSAValue]:
        ones = g.op("constant_of_shape", g.ints(list(shape)), value=np.array([value], dtype))
        return [g.op("mul", g.input(shape), ones) if dtype == np.float32 else ones]

    return build


def resize(shape, scales, **attrs):
    def build(g: Graph) -> list[SSAValue]:
        s = g.b.constant(np.array([1, 1, *scales], np.float32))
        return [g.op("resize", g.input(shape, "NCHW"), None, s, None, **attrs)]

    return build


def where_broadcast(g: Graph) -> list[SSAValue]:
    """A select whose condition and branches broadcast against each other."""
    cond = g.op("greater", g.input([3, 1, 37], "ND"), g.input([1, 21, 1], "ND"))
    return [g.op("where", cond, g.input([3, 21, 37], "ND"), g.input([1, 37], "ND"))]


def transpose(perm: Sequence[int], fmt: str = "ND"):
    def build(g: Graph) -> list[SSAValue]:
        return [g.op("transpose", g.input([3, 19, 7, 10], fmt), perm=list(perm))]

    return build


Build = Callable[[Graph], list[SSAValue]]
CASES: dict[str, tuple[str, Build]] = {
    "cum_sum_last_whole": ("graph.cum_sum", cum("cum_sum", [37, 50], 1)),
    "cum_sum_carried": ("graph.cum_sum", cum("cum_sum", [2, 3, 1000], 2)),
    "cum_sum_carried_reverse_exclusive": (
        "graph.cum_sum",
        cum("cum_sum", [2, 1000], 1, exclusive=1, reverse=1),
    ),  # fmt: skip
    "cum_sum_middle_axis_nchw": ("graph.cum_sum", cum("cum_sum", [2, 19, 7, 5], 1, "NCHW")),
    "cum_sum_middle_carried_exclusive": (
        "graph.cum_sum",
        cum("cum_sum", [3, 90, 20], 1, exclusive=1),
    ),  # fmt: skip
    "cum_sum_int_positions": ("graph.cum_sum", cum_int([2, 1500], 1)),
    "cum_prod_reverse": ("graph.cum_prod", cum("cum_prod", [60, 30], 1, reverse=1)),
    "arg_max_middle": ("graph.arg_max", arg("arg_max", [3, 37, 21], 1)),
    "arg_min_last_drop_select_last": (
        "graph.arg_min",
        arg("arg_min", [50, 29], 1, keepdims=0, select_last_index=1),
    ),  # fmt: skip
    "arg_max_channels_nchw": ("graph.arg_max", arg("arg_max", [2, 19, 6, 5], 1, "NCHW")),
    "top_k_last": ("graph.top_k", top_k([40, 37], 5, -1)),
    "top_k_middle_smallest": ("graph.top_k", top_k([3, 37, 9], 4, 1, largest=0)),
    "top_k_indices_only_nchw": ("graph.top_k", top_k([2, 19, 5, 6], 3, 1, (1,), "NCHW")),
    "where_broadcast": ("graph.where", where_broadcast),
    "transpose_2031": ("graph.transpose", transpose([2, 0, 3, 1])),
    "transpose_3102_nchw": ("graph.transpose", transpose([3, 1, 0, 2], "NCHW")),
    "one_hot_last": ("graph.one_hot", one_hot([37, 5], 11, -1)),
    "one_hot_middle": ("graph.one_hot", one_hot([6, 45], 300, 1)),
    "range_int64_mask": ("graph.range", arange(0, 9001, 1, np.int64, lengths=3)),
    "range_int32_negative_step": ("graph.range", arange(7, -60000, -3, np.int32)),
    "range_float32_negative_step": ("graph.range", arange(5.0, -4245.0, -0.25, np.float32)),
    "range_float16": ("graph.range", arange(-8000.0, 8500.0, 0.5, np.float16)),
    "constant_of_shape_f32": ("graph.constant_of_shape", filled([3, 30, 201], 1.5, np.float32)),
    "constant_of_shape_int32": ("graph.constant_of_shape", filled([7, 3001], -4, np.int32)),
}
RESIZES: dict[str, tuple[list[int], list[float], dict[str, object]]] = {
    "x2_half_pixel": ([1, 5, 13, 17], [2.0, 2.0], {}),
    "align_corners": (
        [2, 3, 9, 11],
        [1.5, 0.75],
        {"coordinate_transformation_mode": "align_corners"},
    ),
    "pytorch_half_pixel_down": (
        [1, 4, 27, 31],
        [0.5, 0.5],
        {"coordinate_transformation_mode": "pytorch_half_pixel"},
    ),
    "asymmetric_antialias": (
        [1, 2, 30, 12],
        [0.4, 1.25],
        {"coordinate_transformation_mode": "asymmetric", "antialias": 1},
    ),
}
"""Bilinear resizes (mode linear); the cubic ones are below."""
CASES.update(
    (f"resize_bilinear_{name}", ("graph.resize", resize(shape, scales, mode="linear", **attrs)))
    for name, (shape, scales, attrs) in RESIZES.items()
)
CASES["resize_cubic_half_pixel"] = (
    "graph.resize",
    resize([1, 3, 11, 14], [2.0, 1.5], mode="cubic"),
)
CASES["resize_cubic_exclude_outside_half_pixel_symmetric"] = (
    "graph.resize",
    resize([1, 2, 10, 9], [1.7, 2.0], mode="cubic", exclude_outside=1, cubic_coeff_a=-0.5,
           coordinate_transformation_mode="half_pixel_symmetric"),
)  # fmt: skip


def _module(name: str, padded: bool = False):
    g = Graph(padded)
    return g.b.build(*CASES[name][1](g)), g.arrays


@pytest.mark.parametrize("name", list(CASES))
def test_axis_kernel(name: str):
    """Every level agrees, the op runs on the vector unit, in several tiles."""
    module, inputs = _module(name)
    levels = run_levels(module, inputs, "test")
    assert_matches(levels)
    assert_tiled(levels.module)
    units = {CASES[name][0]: VECTOR}
    assert_units(levels.macro_kernels, units, "lower-graph-to-kernels")
    assert_units(levels.tiled_kernels, units, "tile-kernels{platform=test}")
    assert levels.splits(), "the test preset should split the kernel into tiles"


NCHW_CASES = [n for n in CASES if "nchw" in n or n.startswith("resize")]


@pytest.mark.parametrize("name", NCHW_CASES)
def test_axis_kernel_nan_padding(name: str):
    """NCHW inputs held as NC1HWC0 with NaN in the padding lanes: no NaN may leak."""
    module, inputs = _module(name, padded=True)
    levels = run_levels(module, inputs, "test", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    assert_units(levels.tiled_kernels, {CASES[name][0]: VECTOR}, "tile-kernels{platform=test}")


def test_a_long_cumulative_axis_carries_between_chunks():
    """A cum_sum over 1000 does not fit the test preset's UB whole: a sequential chunk
    loop (not tile.parallel) carries the running total."""
    from tilegraph.dialects.tile import ScanOp

    module, inputs = _module("cum_sum_carried")
    levels = run_levels(module, inputs, "test")
    scans = [op for op in levels.module.walk() if isinstance(op, ScanOp)]
    assert scans and levels.counters.ops.get("tile.vscan", 0) > 2 * 3
