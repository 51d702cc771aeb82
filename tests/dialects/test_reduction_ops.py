"""graph reductions: shape functions, reference kernels (vs onnxruntime, opset 18), facts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import f32, i64
from xdsl.ir import Block

from tests.dialects.op_harness import Const, check_op
from tilegraph.dialects.graph import ConstantOp, FormatRole, FusionKind, GraphOp, ShapeError
from tilegraph.dialects.graph.reduction import (
    REDUCTION_OPS,
    ArgMaxOp,
    ArgMinOp,
    ArgReduceOp,
    ReduceL1Op,
    ReduceL2Op,
    ReduceLogSumExpOp,
    ReduceLogSumOp,
    ReduceMaxOp,
    ReduceMeanOp,
    ReduceMinOp,
    ReduceOp,
    ReduceProdOp,
    ReduceSumOp,
    ReduceSumSquareOp,
)
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.formats.dims import UNKNOWN, dim_from_text

REDUCE_OPS = [op for op in REDUCTION_OPS if issubclass(op, ReduceOp)]


def data(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    x = np.random.default_rng(1).uniform(0.5, 1.5, shape) * np.where(
        np.arange(int(np.prod(shape))).reshape(shape) % 3 == 0, -1, 1
    )
    return x.astype(dtype)


def axes(*values: int) -> Const:
    return Const(np.array(values, dtype=np.int64))


def make(op_cls: type[GraphOp], x: TensorType, ax: Any = None, **attrs: Any) -> TensorType:
    """The result type for an input of type ``x`` and ``ax`` = None | array | TensorType."""
    arg_types = [x] + ([ax] if isinstance(ax, TensorType) else [])
    block = Block(arg_types=arg_types)
    operands = [block.args[0]]
    if isinstance(ax, TensorType):
        operands.append(block.args[1])
    elif ax is not None:
        operands.append(ConstantOp(np.asarray(ax, dtype=np.int64)).results[0])
    op = op_cls.make(*operands, **attrs)
    return op.results[0].type  # type: ignore[return-value]


# ---- reduce_* -----------------------------------------------------------------------------


@pytest.mark.parametrize("op", REDUCE_OPS, ids=lambda op: op.name)
@pytest.mark.parametrize(
    "ax, keepdims",
    [(None, 1), (None, 0), ((1,), 1), ((1,), 0), ((-1, 0), 1), ((0, 2), 0), ((-2,), 0)],
)
def test_reduce(op: type[ReduceOp], ax: tuple[int, ...] | None, keepdims: int) -> None:
    operands = [data(2, 3, 4)] + ([] if ax is None else [axes(*ax)])
    check_op(op, operands, {"keepdims": keepdims}, opset=18, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", REDUCE_OPS, ids=lambda op: op.name)
def test_reduce_empty_axes(op: type[ReduceOp]) -> None:
    """noop_with_empty_axes reduces over no axis; ONNX still applies |x|, x*x, ... then."""
    x = data(2, 3)
    (y,) = check_op(op, [x, axes()], {"noop_with_empty_axes": 1}, opset=18, atol=1e-5)
    assert y.shape == x.shape
    (y,) = check_op(op, [x], {"noop_with_empty_axes": 1}, opset=18, atol=1e-5)
    if op not in (ReduceL1Op, ReduceL2Op, ReduceSumSquareOp, ReduceLogSumOp):
        np.testing.assert_allclose(y, x, rtol=1e-6)
    (y,) = check_op(op, [x, axes()], {"keepdims": 0}, opset=18, atol=1e-5)
    assert y.shape == ()


@pytest.mark.parametrize(
    "op", [ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp, ReduceL1Op,
           ReduceSumSquareOp], ids=lambda op: op.name,
)  # fmt: skip
def test_reduce_int32(op: type[ReduceOp]) -> None:
    x = (np.arange(24, dtype=np.int32).reshape(2, 3, 4) % 7) - 3
    (y,) = check_op(op, [x, axes(1)], {"keepdims": 0}, opset=18)
    assert y.dtype == np.int32


@pytest.mark.parametrize("op", [ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceL2Op])
def test_reduce_float16(op: type[ReduceOp]) -> None:
    (y,) = check_op(op, [data(4, 8, dtype=np.float16), axes(1)], opset=18, rtol=2e-3, atol=2e-3)
    assert y.dtype == np.float16


@pytest.mark.parametrize("op", REDUCE_OPS, ids=lambda op: op.name)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_reduce_over_empty_axis(op: type[ReduceOp], dtype: Any) -> None:
    """ONNX-18: an empty max is the lowest value, an empty sum 0, an empty product 1."""
    if op is ReduceLogSumExpOp and dtype is np.int32:
        pytest.skip("ReduceLogSumExp is float only in onnxruntime")
    check_op(op, [np.zeros((2, 0), dtype), axes(1)], opset=18)


def test_reduce_log_sum_exp_is_stable() -> None:
    x = np.array([[1000.0, 1000.0], [-1000.0, 0.0]], np.float32)
    (y,) = ReduceLogSumExpOp.make(
        Block(arg_types=[TensorType([2, 2], f32)]).args[0],
        ConstantOp(np.array([1])).results[0],
    ).reference(x, np.array([1]))
    np.testing.assert_allclose(y, [[1000 + np.log(2)], [0.0]], rtol=1e-6)


def test_reduce_shapes() -> None:
    x = TensorType([dim_from_text("s0"), 3, 4], f32)
    assert list(make(ReduceSumOp, x, [1]).origin_shape) == [dim_from_text("s0"), 1, 4]
    assert list(make(ReduceSumOp, x, [-1, 1], keepdims=0).origin_shape) == [dim_from_text("s0")]
    assert list(make(ReduceMaxOp, x).origin_shape) == [1, 1, 1]
    assert list(make(ReduceMaxOp, x, keepdims=0).origin_shape) == []
    assert make(ReduceMaxOp, x, noop_with_empty_axes=1).origin_shape == x.origin_shape
    # non-constant axes: the rank is known, the dims are not
    k2 = TensorType([2], i64)
    assert list(make(ReduceMeanOp, x, k2).origin_shape) == [UNKNOWN] * 3
    assert list(make(ReduceMeanOp, x, k2, keepdims=0).origin_shape) == [UNKNOWN]
    k0 = TensorType([0], i64)
    assert list(make(ReduceMeanOp, x, k0, keepdims=0).origin_shape) == []
    kq = TensorType([UNKNOWN], i64)
    assert list(make(ReduceMeanOp, x, kq).origin_shape) == [UNKNOWN] * 3
    # the result is ND, also for an NCHW input: reductions stop format propagation
    nchw = TensorType([1, 3, 4, 4], f32, Format.NCHW)
    assert make(ReduceSumOp, nchw, [2, 3]).origin_format == Format.ND


@pytest.mark.parametrize(
    "ax, attrs, message",
    [
        ([0, -3], {}, "contain a duplicate axis"),
        ([3], {}, "axes entry 3 is out of range for rank 3"),
        (TensorType([UNKNOWN], i64), {"keepdims": 0}, "result rank is not known"),
        (TensorType([4], i64), {"keepdims": 0}, "4 axes for a tensor of rank 3"),
        (TensorType([2], f32), {}, "axes must be int64"),
        (TensorType([2, 1], i64), {}, "axes must be a 1-D tensor"),
    ],
)
def test_reduce_errors(ax: Any, attrs: dict[str, int], message: str) -> None:
    with pytest.raises(ShapeError) as e:
        make(ReduceSumOp, TensorType([2, 3, 4], f32), ax, **attrs)
    assert message in str(e.value)


# ---- arg_max / arg_min --------------------------------------------------------------------


@pytest.mark.parametrize("op", [ArgMaxOp, ArgMinOp], ids=lambda op: op.name)
@pytest.mark.parametrize(
    "attrs",
    [
        {},
        {"axis": 1},
        {"axis": -1, "keepdims": 0},
        {"axis": 2, "select_last_index": 1},
        {"axis": 0, "keepdims": 0, "select_last_index": 1},
    ],
)
def test_arg_reduce(op: type[ArgReduceOp], attrs: dict[str, int]) -> None:
    ties = (np.arange(24).reshape(2, 3, 4) % 3).astype(np.float32)  # many equal values
    (y,) = check_op(op, [ties], attrs)
    assert y.dtype == np.int64
    check_op(op, [data(2, 3, 4)], attrs)
    check_op(op, [(np.arange(24, dtype=np.int32).reshape(2, 3, 4) % 5)], attrs)


def test_arg_reduce_shapes_and_errors() -> None:
    x = TensorType([dim_from_text("s0"), 3, 4], f32)
    t = make(ArgMaxOp, x, axis=1)
    assert list(t.origin_shape) == [dim_from_text("s0"), 1, 4] and t.element_type == i64
    assert list(make(ArgMinOp, x, axis=0, keepdims=0).origin_shape) == [3, 4]
    with pytest.raises(ShapeError, match="axis 3 is out of range for rank 3"):
        make(ArgMaxOp, x, axis=3)
    with pytest.raises(ShapeError, match="needs data of rank >= 1"):
        make(ArgMinOp, TensorType([], f32))


# ---- facts and cost -----------------------------------------------------------------------


def test_facts() -> None:
    assert len(REDUCTION_OPS) == 12
    for op in REDUCTION_OPS:
        assert op.FACTS.role == FormatRole.ND_ONLY, op.name
        assert op.FACTS.fusion == FusionKind.COMM_REDUCE, op.name
        assert op.FACTS.format_operands == (0,), op.name
        assert op.ONNX_OP is not None
    for op in REDUCE_OPS:
        assert op.DEFAULTS == {"keepdims": 1, "noop_with_empty_axes": 0}
    assert ArgMaxOp.DEFAULTS == {"axis": 0, "keepdims": 1, "select_last_index": 0}


def test_cost_counts_input_elements() -> None:
    block = Block(arg_types=[TensorType([2, 3, 4], f32)])
    op = ReduceSumOp.make(block.args[0], keepdims=0)
    assert op.cost().flops == 24
