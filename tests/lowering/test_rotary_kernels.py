"""``graph.apply_rotary`` on the vector unit, each level against the one above it (the
harness of :mod:`tests.lowering.test_tile_differential`): graph -> macro kernel -> tiled
loops on both executors, with NaN in padding lanes, on the ``test`` preset (8 KiB UB:
several row tiles, a ragged last one) and the Ascend presets, in fp32 and fp16, with odd
head dims (``d / 2`` odd: the halves are not aligned to a vector block), in the half
(LLaMA) and interleaved (GPT-J) forms. The decomposed Hugging Face spellings (Slices, Neg,
Concat, two Muls, Add; GPT-J's with Unsqueezes and a Reshape) become the one kernel too."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.ir import SSAValue

from tests.lowering.test_tile_differential import (
    NAN,
    VECTOR,
    Graph,
    assert_matches,
    assert_units,
    estimated_cycles,
    run_levels,
)
from tilegraph.dialects.graph.rotary import rotate_half
from tilegraph.lowering.analysis.kernel_attrs import KERNEL_ATTR


def rotary(
    shape: Sequence[int],
    table: Sequence[int],
    decomposed: bool = False,
    interleaved: bool = False,
) -> Callable[[Graph], list[SSAValue]]:
    """``x * cos + rotate_half(x) * sin`` (``interleaved``: ``rotate_every_two``) of an
    ``x`` of ``shape`` and tables of ``table`` (broadcast to x) as the op, or as the ONNX
    chain an export spells."""

    def build(g: Graph) -> list[SSAValue]:
        x, cos, sin = g.input(shape), g.input(table), g.input(table)
        if not decomposed:
            return [g.op("apply_rotary", x, cos, sin, interleaved=int(interleaved) or None)]
        axis, end = g.ints([-1]), g.ints([2**63 - 1])
        if interleaved:  # torch.stack((-x[..., 1::2], x[..., ::2]), -1).flatten(-2)
            two = g.ints([2])
            even = g.op("slice", x, g.ints([0]), end, axis, two)
            odd = g.op("slice", x, g.ints([1]), end, axis, two)
            pairs = [g.op("unsqueeze", v, axis) for v in (g.op("neg", odd), even)]
            stacked = g.op("concat", *pairs, axis=-1)
            rotated = g.op("reshape", stacked, g.ints(list(shape)))
        else:
            half = g.ints([shape[-1] // 2])
            low = g.op("slice", x, g.ints([0]), half, axis)
            high = g.op("slice", x, half, end, axis)
            rotated = g.op("concat", g.op("neg", high), low, axis=-1)
        return [g.op("add", g.op("mul", x, cos), g.op("mul", rotated, sin))]

    return build


CASES = {
    # LLaMA's [B, heads, seq, d] with [B, 1, seq, d] tables; 70 rows: ragged row tiles
    "llama_heads": ([2, 3, 70, 16], [2, 1, 70, 16]),
    "odd_half": ([1, 2, 37, 10], [1, 1, 37, 10]),  # d / 2 = 5
    "tables_per_batch_row": ([3, 45, 6], [1, 45, 6]),
    "long_rows": ([1, 1, 5, 200], [1, 1, 5, 200]),  # one or two rows per tile on `test`
    # GPT-J's [B, seq, heads, d] with [1, seq, 1, d] tables: the tiled rows (heads) share
    # one table row
    "tables_over_heads": ([2, 7, 40, 8], [1, 7, 1, 8]),
}


def _rotary_kernels(module) -> list[func.FuncOp]:
    return [
        fn
        for fn in module.ops
        if isinstance(fn, func.FuncOp)
        and KERNEL_ATTR in fn.attributes
        and "graph.apply_rotary" in getattr(fn.attributes.get("tile.ops"), "data", "")
    ]


def _expected(inputs: list[np.ndarray], interleaved: bool = False) -> np.ndarray:
    x, cos, sin = inputs
    if interleaved:  # GPT-J's rotate_every_two written out
        every_two = np.stack([-x[..., 1::2], x[..., ::2]], axis=-1).reshape(x.shape)
        return x * cos + every_two * sin
    return x * cos + rotate_half(x) * sin


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("platform", ["test", "ascend910b", "ascend310p"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name", list(CASES))
def test_rotary_every_level_agrees(name: str, dtype: str, platform: str, interleaved: bool):
    shape, table = CASES[name]
    g = Graph(dtype=dtype)
    module = g.b.build(*rotary(shape, table, interleaved=interleaved)(g))
    levels = run_levels(module, g.arrays, platform, pad_value=NAN)
    assert_units(levels.tiled_kernels, {"graph.apply_rotary": VECTOR}, platform)
    assert len(_rotary_kernels(levels.module)) == 1
    expected = _expected(g.arrays, interleaved)
    for level, outputs in {"graph": levels.reference, **levels.outputs}.items():
        assert not np.isnan(outputs[0]).any(), f"{level}: NaN"
        np.testing.assert_array_equal(outputs[0], expected, err_msg=level)
    assert_matches(levels, 0.0, 0.0)
    if platform == "test" and name != "tables_per_batch_row":
        assert levels.splits(), "the test preset should split the kernel into row tiles"


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_the_decomposed_spelling_is_one_kernel_and_bit_exact(dtype: str, interleaved: bool):
    shape, table = CASES["llama_heads"]
    g = Graph(dtype=dtype)
    module = g.b.build(*rotary(shape, table, decomposed=True, interleaved=interleaved)(g))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    assert len(levels.tiled_kernels) == 1
    assert len(_rotary_kernels(levels.module)) == 1
    chain = _expected(g.arrays, interleaved)
    for level, outputs in levels.outputs.items():
        np.testing.assert_array_equal(outputs[0], chain, err_msg=level)


def test_rotary_cost_grows_with_the_rows():
    """The cycle model costs the kernel from its tile ops: > 0, more for more rows."""
    small = estimated_cycles(rotary([1, 4, 64, 128], [1, 1, 64, 128]))
    assert 0 < small < estimated_cycles(rotary([1, 4, 1024, 128], [1, 1, 1024, 128]))


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("platform", ["test", "ascend910b", "ascend310p"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_head_split_before_the_rotary_is_its_view(dtype: str, platform: str, interleaved: bool):
    """LLaMA's head split (``[B, S, H·D] -> reshape -> transpose -> [B, H, S, D]``) before
    the rotary op joins its kernel (``fuse-ops``' rotary claim): x's rows are read
    through the split's strided view, one kernel, bit-exact on both executors with NaN
    in the padding lanes (70 rows: ragged row tiles on ``test``; d / 2 = 5 odd)."""
    batch, seq, heads, dim = 2, 70, 3, 10
    g = Graph(dtype=dtype)
    x, cos, sin = (g.input(s) for s in ([batch, seq, heads * dim], *[[batch, 1, seq, dim]] * 2))
    split = g.op("reshape", x, g.ints([batch, seq, heads, dim]))
    per_head = g.op("transpose", split, perm=[0, 2, 1, 3])
    module = g.b.build(
        g.op("apply_rotary", per_head, cos, sin, interleaved=int(interleaved) or None)
    )
    levels = run_levels(module, g.arrays, platform, pad_value=NAN)
    kernels = levels.tiled_kernels
    assert len(kernels) == 1 and kernels[0].unit == "vector", [(k.ops, k.reason) for k in kernels]
    assert "graph.transpose" in kernels[0].ops
    x_in, cos_in, sin_in = g.arrays
    heads_x = x_in.reshape(batch, seq, heads, dim).transpose(0, 2, 1, 3)
    expected = _expected([heads_x, cos_in, sin_in], interleaved)
    for level, outputs in {"graph": levels.reference, **levels.outputs}.items():
        assert not np.isnan(outputs[0]).any(), f"{level}: NaN"
        np.testing.assert_array_equal(outputs[0], expected, err_msg=level)


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("platform", ["test", "ascend910b", "ascend310p"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("head_split", [False, True])
def test_partial_rotary_passes_the_rest_through(
    head_split: bool, dtype: str, platform: str, interleaved: bool
):
    """Phi / GPT-J's partial rotary (``rotary_dim`` 6 of a head of 10, tables 6 wide): one
    kernel rotates the first columns and copies the rest of the same rows, bit-exact with
    NaN in the padding lanes, x read directly or through its head split's view."""
    batch, seq, heads, dim, part = 2, 70, 3, 10, 6
    g = Graph(dtype=dtype)
    table = [[batch, 1, seq, part]] * 2
    x_shape = [batch, seq, heads * dim] if head_split else [batch, heads, seq, dim]
    x, cos, sin = (g.input(s) for s in (x_shape, *table))
    if head_split:
        split = g.op("reshape", x, g.ints([batch, seq, heads, dim]))
        x = g.op("transpose", split, perm=[0, 2, 1, 3])
    attrs = {"interleaved": int(interleaved) or None, "rotary_dim": part}
    module = g.b.build(g.op("apply_rotary", x, cos, sin, **attrs))
    levels = run_levels(module, g.arrays, platform, pad_value=NAN)
    kernels = levels.tiled_kernels
    assert len(kernels) == 1 and kernels[0].unit == "vector", [(k.ops, k.reason) for k in kernels]
    x_in, cos_in, sin_in = g.arrays
    if head_split:
        x_in = x_in.reshape(batch, seq, heads, dim).transpose(0, 2, 1, 3)
    rotated = _expected([x_in[..., :part], cos_in, sin_in], interleaved)
    expected = np.concatenate([rotated, x_in[..., part:]], axis=-1)
    for level, outputs in {"graph": levels.reference, **levels.outputs}.items():
        assert not np.isnan(outputs[0]).any(), f"{level}: NaN"
        np.testing.assert_array_equal(outputs[0], expected, err_msg=level)
    if platform == "test":
        assert levels.splits(), "the test preset should split the kernel into row tiles"
