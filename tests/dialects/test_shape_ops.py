"""graph shape and data-movement ops: shape functions, reference kernels (vs onnxruntime), facts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from xdsl.builder import Builder
from xdsl.dialects.builtin import i32, i64
from xdsl.ir import Block, SSAValue
from xdsl.rewriter import InsertPoint

from tests.dialects.op_harness import Const, check_op
from tilegraph.dialects.graph import (
    ANY_FORMAT,
    ConstantOp,
    FormatRole,
    FusionKind,
    GraphOp,
    ShapeError,
)
from tilegraph.dialects.graph.shape_ops import (
    SHAPE_OPS,
    ConcatOp,
    ExpandOp,
    FlattenOp,
    GatherOp,
    PadOp,
    ReshapeOp,
    SliceOp,
    SplitOp,
    SqueezeOp,
    TileOp,
    TransposeOp,
    UnsqueezeOp,
)
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import UNKNOWN, dim_from_text

F32 = np.float32
I64 = np.int64


def arange(*shape: int, dtype: Any = F32) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def rand(*shape: int) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(shape).astype(F32)


def c(*values: int, dtype: Any = I64) -> Const:
    return Const(np.array(values, dtype=dtype))


def tt(dims: Sequence[Any], elt: Any = None) -> TensorType:
    from xdsl.dialects.builtin import f32

    return TensorType([dim_from_text(d) if isinstance(d, str) else d for d in dims], elt or f32)


def infer(op_cls: type[GraphOp], operands: Sequence[Any], **attrs: Any) -> list[TensorType]:
    """Result types of ``op_cls`` built on operands given as types (function arguments),
    numpy arrays (graph.constant) or None (absent)."""
    block = Block(arg_types=[o for o in operands if isinstance(o, TensorType)])
    builder = Builder(InsertPoint.at_end(block))
    args = iter(block.args)
    values: list[SSAValue | None] = []
    for o in operands:
        if o is None:
            values.append(None)
        elif isinstance(o, TensorType):
            values.append(next(args))
        else:
            values.append(builder.insert(ConstantOp(np.asarray(o))).results[0])
    op = op_cls.make(*values, **attrs)
    op.verify()
    return [r.type for r in op.results]  # type: ignore[misc]


def shape_of(t: TensorType) -> list[Any]:
    return list(t.origin_shape)


# ---- reshape ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, attrs",
    [
        ((4, -1), {}),
        ((0, -1), {}),
        ((2, 0, 2, 2), {}),
        ((-1,), {}),
        ((3, 8), {"allowzero": 1}),
        ((1, 1, 24), {"allowzero": 0}),
    ],
)
def test_reshape(shape: tuple[int, ...], attrs: dict[str, int]) -> None:
    check_op(ReshapeOp, [rand(2, 3, 4), c(*shape)], attrs)


def test_reshape_allowzero_keeps_zero() -> None:
    (y,) = check_op(ReshapeOp, [np.zeros((0, 3), F32), c(3, 0)], {"allowzero": 1})
    assert y.shape == (3, 0)


def test_reshape_symbolic() -> None:
    (t,) = infer(ReshapeOp, [tt(["s0", 3, 4]), np.array([0, -1])])
    assert shape_of(t) == [dim_from_text("s0"), 12]
    (t,) = infer(ReshapeOp, [tt(["s0", 3, 4]), np.array([-1])])
    assert shape_of(t) == [dim_from_text("12*s0")]


@pytest.mark.parametrize(
    "data, shape, attrs, message",
    [
        ((2, 3), (-1, -1), {}, "more than one -1"),
        ((2, 3), (4, 2), {}, "(6 elements) into [4, 2] (8 elements)"),
        ((2, 3), (4, -1), {}, "6 is not a multiple of 4"),
        ((2, 3), (0, -1), {"allowzero": 1}, "cannot have both 0 and -1"),
        ((2, 3), (1, 6, 0), {}, "copies dim 2 (a 0) but the data has rank 2"),
        ((2, 3), (-2, 3), {}, "invalid dim"),
    ],
)
def test_reshape_errors(
    data: tuple[int, ...], shape: tuple[int, ...], attrs: dict[str, int], message: str
) -> None:
    with pytest.raises(ShapeError) as e:
        infer(ReshapeOp, [tt(data), np.array(shape, I64)], **attrs)
    assert message in str(e.value)


def test_reshape_non_constant_shape() -> None:
    (t,) = infer(ReshapeOp, [tt([2, 3, 4]), tt([3], i64)])
    assert shape_of(t) == [UNKNOWN] * 3
    with pytest.raises(ShapeError, match="result rank is not known"):
        infer(ReshapeOp, [tt([2, 3, 4]), tt([UNKNOWN], i64)])
    with pytest.raises(ShapeError, match="shape must be int64"):
        infer(ReshapeOp, [tt([2, 3, 4]), tt([3], i32)])
    with pytest.raises(ShapeError, match="shape must be a 1-D tensor"):
        infer(ReshapeOp, [tt([2, 3, 4]), tt([3, 1], i64)])


# ---- flatten ------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -3])
def test_flatten(axis: int) -> None:
    check_op(FlattenOp, [rand(2, 3, 4)], {"axis": axis})


def test_flatten_default_and_errors() -> None:
    (y,) = check_op(FlattenOp, [rand(2, 3, 4)], {})
    assert y.shape == (2, 12)
    (t,) = infer(FlattenOp, [tt(["s0", 3, 4])], axis=2)
    assert shape_of(t) == [dim_from_text("3*s0"), 4]
    with pytest.raises(ShapeError, match=r"axis 4 is out of range \[-3, 3\]"):
        infer(FlattenOp, [tt([2, 3, 4])], axis=4)


# ---- transpose ----------------------------------------------------------------------------


@pytest.mark.parametrize("perm", [None, (0, 2, 1), (2, 0, 1), (0, 1, 2)])
def test_transpose(perm: tuple[int, ...] | None) -> None:
    attrs = {} if perm is None else {"perm": perm}
    check_op(TransposeOp, [rand(2, 3, 4)], attrs)


@pytest.mark.parametrize("perm", [(0, 1), (0, 1, 1), (0, 1, 3)])
def test_transpose_errors(perm: tuple[int, ...]) -> None:
    with pytest.raises(ShapeError, match="is not a permutation of the 3 dims"):
        infer(TransposeOp, [tt([2, 3, 4])], perm=perm)


# ---- concat -------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(axis: int) -> None:
    shapes = {0: [(1, 3, 4), (2, 3, 4)], 1: [(2, 1, 4), (2, 5, 4)], -1: [(2, 3, 1), (2, 3, 2)]}
    inputs = [rand(*s) for s in shapes[axis]] + [rand(*shapes[axis][0])]
    check_op(ConcatOp, inputs, {"axis": axis})


def test_concat_single_and_symbolic() -> None:
    check_op(ConcatOp, [rand(2, 3)], {"axis": 0})
    (t,) = infer(ConcatOp, [tt(["s0", 3]), tt(["s0", 5]), tt([UNKNOWN, 1])], axis=1)
    assert shape_of(t) == [dim_from_text("s0"), 9]
    (t,) = infer(ConcatOp, [tt(["s0", 3]), tt(["s1", 3])], axis=0)
    assert shape_of(t) == [dim_from_text("s0 + s1"), 3]


@pytest.mark.parametrize(
    "shapes, attrs, message",
    [
        (
            [(2, 3), (2, 4)],
            {"axis": 0},
            "differs from [2, 3] in dim 1 (only the axis 0 may differ)",
        ),
        ([(2, 3), (2, 3, 1)], {"axis": 0}, "input #1 has rank 3, input #0 has rank 2"),
        ([(2, 3), (2, 3)], {}, "concat needs the 'axis' attribute"),
        ([(2, 3), (2, 3)], {"axis": 2}, "axis 2 is out of range for rank 2"),
    ],
)
def test_concat_errors(shapes: list[tuple[int, ...]], attrs: dict[str, int], message: str) -> None:
    with pytest.raises(ShapeError) as e:
        infer(ConcatOp, [tt(s) for s in shapes], **attrs)
    assert message in str(e.value)


def test_concat_element_types_must_agree() -> None:
    with pytest.raises(ShapeError, match="one element type"):
        infer(ConcatOp, [tt([2]), tt([2], i64)], axis=0)


# ---- squeeze / unsqueeze ------------------------------------------------------------------


@pytest.mark.parametrize("axes", [None, (0,), (0, -1), (2,)])
def test_squeeze(axes: tuple[int, ...] | None) -> None:
    x = rand(1, 3, 1, 1)
    check_op(SqueezeOp, [x] if axes is None else [x, c(*axes)])


def test_squeeze_shapes_and_errors() -> None:
    (t,) = infer(SqueezeOp, [tt([1, 3, 1]), None])
    assert shape_of(t) == [3]
    (t,) = infer(SqueezeOp, [tt([1, UNKNOWN, 1]), np.array([0, 2])])
    assert shape_of(t) == [UNKNOWN]
    (t,) = infer(SqueezeOp, [tt([1, 3, 1, 5]), tt([2], i64)])
    assert shape_of(t) == [UNKNOWN, UNKNOWN]
    with pytest.raises(ShapeError, match="cannot squeeze axis 1 of size 3"):
        infer(SqueezeOp, [tt([1, 3, 1]), np.array([1])])
    with pytest.raises(ShapeError, match="needs static dims to know the result rank"):
        infer(SqueezeOp, [tt([1, UNKNOWN])])
    with pytest.raises(ShapeError, match="contain a duplicate axis"):
        infer(SqueezeOp, [tt([1, 3, 1]), np.array([0, -3])])
    with pytest.raises(ShapeError, match="axes entry 3 is out of range for rank 3"):
        infer(SqueezeOp, [tt([1, 3, 1]), np.array([3])])
    with pytest.raises(ShapeError, match="result rank is not known"):
        infer(SqueezeOp, [tt([1, 3, 1]), tt([UNKNOWN], i64)])


@pytest.mark.parametrize("axes", [(0,), (0, 3), (-1,), (1, -1), (4, 0, 2)])
def test_unsqueeze(axes: tuple[int, ...]) -> None:
    check_op(UnsqueezeOp, [rand(2, 3), c(*axes)])


def test_unsqueeze_shapes_and_errors() -> None:
    (t,) = infer(UnsqueezeOp, [tt(["s0", 3]), np.array([0, -1])])
    assert shape_of(t) == [1, dim_from_text("s0"), 3, 1]
    (t,) = infer(UnsqueezeOp, [tt([2, 3]), tt([2], i64)])
    assert shape_of(t) == [UNKNOWN] * 4
    with pytest.raises(ShapeError, match="duplicate"):
        infer(UnsqueezeOp, [tt([2, 3]), np.array([1, -3])])
    with pytest.raises(ShapeError, match="axes entry 4 is out of range for rank 4"):
        infer(UnsqueezeOp, [tt([2, 3]), np.array([0, 4])])


# ---- slice --------------------------------------------------------------------------------

INT64_MAX = np.iinfo(np.int64).max


@pytest.mark.parametrize(
    "starts, ends, axes, steps",
    [
        ((1, 0), (2, 3), None, None),
        ((0, 1), (-1, 1000), (0, 2), None),
        ((-1,), (-INT64_MAX,), (1,), (-1,)),  # full reverse
        ((4, 10), (0, -100), (1, -1), (-2, -3)),
        ((0,), (INT64_MAX,), (-1,), (2,)),
        ((-100,), (100,), (0,), (1,)),
        ((2,), (1,), (1,), (1,)),  # empty
        ((1,), (3,), None, (1,)),
    ],
)
def test_slice(
    starts: tuple[int, ...],
    ends: tuple[int, ...],
    axes: tuple[int, ...] | None,
    steps: tuple[int, ...] | None,
) -> None:
    operands = [rand(3, 5, 6), c(*starts), c(*ends), None if axes is None else c(*axes)]
    operands.append(None if steps is None else c(*steps))
    check_op(SliceOp, operands)


def test_slice_int32_indices() -> None:
    check_op(SliceOp, [rand(4, 4), c(1, dtype=np.int32), c(3, dtype=np.int32)])


def test_slice_shapes_and_errors() -> None:
    big, neg = np.array([INT64_MAX]), np.array([-INT64_MAX])
    (t,) = infer(SliceOp, [tt(["s0", 4]), np.array([0]), big, np.array([0]), None])
    assert shape_of(t) == [dim_from_text("s0"), 4]
    (t,) = infer(SliceOp, [tt(["s0", 4]), np.array([-1]), neg, np.array([0]), np.array([-1])])
    assert shape_of(t) == [dim_from_text("s0"), 4]
    (t,) = infer(SliceOp, [tt(["s0", 4]), np.array([1]), big, np.array([0]), None])
    assert shape_of(t) == [UNKNOWN, 4]
    (t,) = infer(SliceOp, [tt([5, 4]), tt([1], i64), np.array([3]), np.array([1]), None])
    assert shape_of(t) == [5, UNKNOWN]
    (t,) = infer(SliceOp, [tt([5, 4]), np.array([1]), np.array([3]), tt([1], i64), None])
    assert shape_of(t) == [UNKNOWN, UNKNOWN]
    with pytest.raises(ShapeError, match="steps must not be 0"):
        infer(SliceOp, [tt([5]), np.array([0]), np.array([3]), None, np.array([0])])
    with pytest.raises(ShapeError, match="starts has 2 entries but ends has 1"):
        infer(SliceOp, [tt([5, 4]), np.array([0, 0]), np.array([3])])
    with pytest.raises(ShapeError, match="axes entry 2 is out of range for rank 2"):
        infer(SliceOp, [tt([5, 4]), np.array([0]), np.array([3]), np.array([2])])
    with pytest.raises(ShapeError, match="axes .* contain a duplicate axis"):
        infer(SliceOp, [tt([5, 4]), np.array([0, 0]), np.array([3, 3]), np.array([0, -2])])


# ---- pad ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pads, mode",
    [
        ((1, 2, 0, 3), "constant"),
        ((0, -1, 1, 2), "constant"),
        ((1, 2, 1, 1), "reflect"),
        ((2, 0, 1, 3), "edge"),
        ((0, 0, 0, 0), "reflect"),
    ],
)
def test_pad_modes(pads: tuple[int, ...], mode: str) -> None:
    check_op(PadOp, [rand(3, 4), c(*pads)], {"mode": mode})


def test_pad_constant_value_axes_wrap() -> None:
    x = rand(2, 3, 4)
    check_op(PadOp, [x, c(1, 1, 2, 0, 0, 1), Const(np.array(7.5, F32))])
    (y,) = check_op(PadOp, [x, c(1, 2, 0, 3), Const(np.array(-1, F32)), c(-1, 0)], opset=18)
    assert y.shape == (7, 3, 5)
    check_op(PadOp, [x, c(1, 2), None, c(1)], opset=18)
    check_op(PadOp, [x, c(2, 1, 1, 3), None, c(2, 0)], {"mode": "wrap"}, opset=19)
    check_op(PadOp, [arange(2, 3, dtype=np.int32), c(1, 0, 0, 1), Const(np.array(9, np.int32))])


def test_pad_shapes_and_errors() -> None:
    (t,) = infer(PadOp, [tt(["s0", 4]), np.array([1, 0, 1, 0])])
    assert shape_of(t) == [dim_from_text("s0 + 2"), 4]
    (t,) = infer(PadOp, [tt([3, 4]), tt([2], i64), None, np.array([1])])
    assert shape_of(t) == [3, UNKNOWN]
    (t,) = infer(PadOp, [tt([3, 4]), tt([4], i64)])
    assert shape_of(t) == [UNKNOWN, UNKNOWN]
    with pytest.raises(ShapeError, match="pads has 2 entries, expected 2 \\* 2"):
        infer(PadOp, [tt([3, 4]), np.array([1, 1])])
    with pytest.raises(ShapeError, match="unknown pad mode 'mirror'"):
        infer(PadOp, [tt([3, 4]), np.array([1, 1, 1, 1])], mode="mirror")
    with pytest.raises(ShapeError, match="pads -2, -2 on axis 0 of size 3 give a negative size"):
        infer(PadOp, [tt([3, 4]), np.array([-2, 0, -2, 0])])
    with pytest.raises(ShapeError, match="constant_value has element type i64"):
        infer(PadOp, [tt([3, 4]), np.array([1, 1, 1, 1]), np.array(0, I64)])


# ---- split --------------------------------------------------------------------------------


def test_split_with_sizes() -> None:
    x = rand(6, 4)
    outs = check_op(SplitOp, [x, c(1, 2, 3)])
    assert [o.shape for o in outs] == [(1, 4), (2, 4), (3, 4)]
    outs = check_op(SplitOp, [x, c(3, 0, 1)], {"axis": -1})
    assert [o.shape for o in outs] == [(6, 3), (6, 0), (6, 1)]


@pytest.mark.parametrize("n, dim", [(3, 6), (3, 7), (2, 5), (1, 4)])
def test_split_num_outputs(n: int, dim: int) -> None:
    outs = check_op(SplitOp, [rand(2, dim)], {"axis": 1, "num_outputs": n}, opset=18)
    assert len(outs) == n


def test_split_opset17_without_split() -> None:
    """Opset 13-17 Split without ``split`` splits equally into its outputs: num_outputs."""
    outs = check_op(SplitOp, [rand(6, 2)], {"num_outputs": 3}, onnx_attrs={"axis": 0})
    assert [o.shape for o in outs] == [(2, 2)] * 3


def test_split_shapes_and_errors() -> None:
    types = infer(SplitOp, [tt([4, "s0"]), tt([3], i64)], axis=1)
    assert [shape_of(t) for t in types] == [[4, UNKNOWN]] * 3
    types = infer(SplitOp, [tt([4, "s0"])], axis=1, num_outputs=2)
    assert [shape_of(t) for t in types] == [[4, UNKNOWN]] * 2
    with pytest.raises(ShapeError, match=r"split sizes \[1, 2\] sum to 3, but axis 0 has size 4"):
        infer(SplitOp, [tt([4, 2]), np.array([1, 2])])
    with pytest.raises(ShapeError, match="needs the 'split' operand or the 'num_outputs'"):
        infer(SplitOp, [tt([4, 2])])
    with pytest.raises(ShapeError, match="not both"):
        infer(SplitOp, [tt([4, 2]), np.array([2, 2])], num_outputs=2)
    with pytest.raises(ShapeError, match="cannot split a dim of size 5 into 4 outputs"):
        infer(SplitOp, [tt([5, 2])], num_outputs=4)
    with pytest.raises(ShapeError, match="number of outputs is not known"):
        infer(SplitOp, [tt([5, 2]), tt([UNKNOWN], i64)])


# ---- tile / expand ------------------------------------------------------------------------


@pytest.mark.parametrize("repeats", [(1, 1), (2, 3), (0, 2), (3, 1)])
def test_tile(repeats: tuple[int, ...]) -> None:
    check_op(TileOp, [rand(2, 3), c(*repeats)])


def test_tile_shapes_and_errors() -> None:
    (t,) = infer(TileOp, [tt(["s0", 3]), np.array([2, 2])])
    assert shape_of(t) == [dim_from_text("2*s0"), 6]
    (t,) = infer(TileOp, [tt([2, 3]), tt([2], i64)])
    assert shape_of(t) == [UNKNOWN, UNKNOWN]
    with pytest.raises(ShapeError, match="repeats has 3 entries, the input rank is 2"):
        infer(TileOp, [tt([2, 3]), np.array([1, 2, 3])])
    with pytest.raises(ShapeError, match="must be >= 0"):
        infer(TileOp, [tt([2, 3]), np.array([1, -2])])


@pytest.mark.parametrize(
    "x_shape, shape",
    [((3, 1), (2, 1, 4)), ((3, 1), (3, 5)), ((2, 3), (1, 1)), ((1,), (2, 0)), ((4,), (4,))],
)
def test_expand(x_shape: tuple[int, ...], shape: tuple[int, ...]) -> None:
    check_op(ExpandOp, [rand(*x_shape), c(*shape)])


def test_expand_shapes_and_errors() -> None:
    (t,) = infer(ExpandOp, [tt([3, 1]), tt([3], i64)])
    assert shape_of(t) == [UNKNOWN, 3, UNKNOWN]
    with pytest.raises(ShapeError, match="do not broadcast"):
        infer(ExpandOp, [tt([3, 2]), np.array([3, 4])])
    with pytest.raises(ShapeError, match="result rank is not known"):
        infer(ExpandOp, [tt([3, 2]), tt([UNKNOWN], i64)])


# ---- gather -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "indices, axis",
    [
        (np.array([0, -1, 2]), 0),
        (np.array([[1, -4], [0, 3]]), 1),
        (np.array(-2), -1),
        (np.array([[2]], np.int32), 2),
    ],
)
def test_gather(indices: np.ndarray, axis: int) -> None:
    check_op(GatherOp, [rand(3, 4, 5), Const(indices)], {"axis": axis})
    check_op(GatherOp, [rand(3, 4, 5), indices], {"axis": axis})


def test_gather_shapes_and_errors() -> None:
    (t,) = infer(GatherOp, [tt(["s0", 4, 5]), tt([2, 3], i64)], axis=1)
    assert shape_of(t) == [dim_from_text("s0"), 2, 3, 5]
    with pytest.raises(ShapeError, match="index 4 is out of range for axis 1 of size 4"):
        infer(GatherOp, [tt([3, 4]), np.array([0, 4])], axis=1)
    with pytest.raises(ShapeError, match="index -5 is out of range"):
        infer(GatherOp, [tt([3, 4]), np.array([-5])], axis=1)
    with pytest.raises(ShapeError, match="indices must be int32 or int64"):
        infer(GatherOp, [tt([3, 4]), tt([2])])
    with pytest.raises(ShapeError, match="axis 2 is out of range for rank 2"):
        infer(GatherOp, [tt([3, 4]), np.array([0])], axis=2)


# ---- facts --------------------------------------------------------------------------------


def test_facts() -> None:
    reshape_like = {ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp, TransposeOp}
    for op in SHAPE_OPS:
        facts = op.FACTS
        if op not in (ConcatOp, SliceOp, SplitOp):  # these run on NC1HWC0 too, per instance
            assert facts.kernels == (), op.name  # origin formats only
        if op in reshape_like:
            assert (facts.role, facts.fusion) == (FormatRole.RESHAPE, FusionKind.INJECTIVE)
            assert facts.format_operands == (0,)
    for op in (SliceOp, PadOp, SplitOp, TileOp):
        assert (op.FACTS.role, op.FACTS.fusion) == (FormatRole.AGNOSTIC, FusionKind.INJECTIVE)
        assert op.FACTS.format_operands == (0,)
    assert (ConcatOp.FACTS.role, ConcatOp.FACTS.fusion) == (
        FormatRole.AGNOSTIC,
        FusionKind.INJECTIVE,
    )
    assert ConcatOp.FACTS.format_operands is None  # every input carries the format
    for op in (ConcatOp, SliceOp, SplitOp):  # one shared storage format for all tensors
        (variant,) = op.FACTS.kernels
        assert variant.results == (ANY_FORMAT,) and all(f is ANY_FORMAT for f in variant.operands)
    assert (ExpandOp.FACTS.role, ExpandOp.FACTS.fusion) == (
        FormatRole.AGNOSTIC,
        FusionKind.BROADCAST,
    )
    assert (GatherOp.FACTS.role, GatherOp.FACTS.fusion) == (
        FormatRole.RESHAPE,
        FusionKind.INJECTIVE,
    )
    assert GatherOp.FACTS.format_operands == (0,)
    assert {op.ONNX_OP for op in SHAPE_OPS} == {
        "Reshape", "Flatten", "Transpose", "Concat", "Squeeze", "Unsqueeze", "Slice", "Pad",
        "Split", "Tile", "Expand", "Gather",
    }  # fmt: skip


def test_format_follows_rank() -> None:
    """An NCHW input keeps its format where the rank still fits, and becomes ND otherwise."""
    from xdsl.dialects.builtin import f32

    from tilegraph.formats import Format

    x = TensorType([1, 3, 4, 4], f32, Format.NCHW)
    (t,) = infer(SliceOp, [x, np.array([1]), np.array([3]), np.array([2])])
    assert t.origin_format == Format.NCHW
    (t,) = infer(FlattenOp, [x])
    assert t.origin_format == Format.ND


def test_cost() -> None:
    block = Block(arg_types=[tt([2, 3, 4])])
    op = ReshapeOp.make(block.args[0], ConstantOp(np.array([6, 4])).results[0])
    assert op.cost().flops == 0
    op = TransposeOp.make(block.args[0])
    assert op.cost().flops == 24


def test_gather_cost_counts_the_rows_it_selects_not_the_table() -> None:
    # an embedding lookup: 30522 x 768 f32 table, 2 x 8 int64 ids -> 2 x 8 x 768
    block = Block(arg_types=[tt([30522, 768]), tt([2, 8], i64)])
    op = GatherOp.make(block.args[0], block.args[1])
    rows = 2 * 8 * 768 * 4
    assert op.cost().bytes == 2 * 8 * 8 + 2 * rows  # ids, rows read, rows written
    assert op.cost().flops == 0
