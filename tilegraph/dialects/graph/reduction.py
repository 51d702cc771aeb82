"""Reduction graph ops: ReduceSum/Mean/Max/Min/Prod/L1/L2/SumSquare/LogSumExp, ArgMax/ArgMin.

All ``graph.reduce_*`` ops share :class:`ReduceOp` (opset-18 form: ``axes`` is an optional
1-D int64 operand; ``keepdims`` default 1; ``noop_with_empty_axes`` default 0) and differ only
in their numpy reducer :meth:`ReduceOp.compute`. ArgMax/ArgMin share :class:`ArgReduceOp`
(``axis``, ``keepdims``, ``select_last_index`` attributes; int64 result).

Facts: role ND_ONLY, fusion COMM_REDUCE, ``format_operands=(0,)``. The axes name origin dims,
and which storage dims realise an origin axis depends on the storage format (C is split into
C1 and C0 in NC1HWC0, with zero padding that a max/min/prod/mean over C must not see). The
kernels therefore work on origin layout only, and with ``keepdims = 0`` the result rank no
longer fits the input's format anyway; ND_ONLY makes this explicit and stops origin-format
propagation at the reduction. (SENSITIVE would need one fixed ``data_format`` per op kind,
which a reduction does not have.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, result_def, traits_def
from xdsl.traits import Pure

from tilegraph.dialects.graph.base import GraphOp, ShapeError, int_attr, tensor_type
from tilegraph.dialects.graph.facts import FormatRole, FusionKind, OpCost, OpFacts, PrecisionRole
from tilegraph.dialects.graph.operand_values import ints_operand, normalize_axes, runtime_ints
from tilegraph.dialects.graph.shape_utils import normalize_axis, require
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import UNKNOWN, Dim

_REDUCE_FACTS = OpFacts(
    role=FormatRole.ND_ONLY,
    fusion=FusionKind.COMM_REDUCE,
    format_operands=(0,),
    precision=PrecisionRole.BLACK,  # long sums overflow / lose fp16's 11 bits
)


def _reduced_shape(dims: Sequence[Dim], axes: Sequence[int], keepdims: bool) -> list[Dim]:
    if keepdims:
        return [1 if i in axes else d for i, d in enumerate(dims)]
    return [d for i, d in enumerate(dims) if i not in axes]


def _lowest(dtype: np.dtype, lowest: bool) -> float | int | bool:
    """The identity of max (``lowest``) or min: what ONNX-18 gives for an empty reduction."""
    if dtype.kind == "f":
        return -np.inf if lowest else np.inf
    if dtype.kind == "b":
        return not lowest
    info = np.iinfo(dtype)
    return int(info.min if lowest else info.max)


def _compute_dtype(x: np.ndarray) -> np.ndarray:
    """Half precision is accumulated in float32 (then cast back), as the kernels do."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


class ReduceOp(GraphOp):
    """Base of ``graph.reduce_*``: reduce ``data`` over ``axes`` (default: all dims).

    Empty or absent ``axes`` reduce every dim, or no dim when ``noop_with_empty_axes`` = 1
    (the elementwise part still applies then, as in ONNX: ReduceSumSquare gives ``x * x``).
    Non-constant ``axes`` of static length k give UNKNOWN dims: the input rank with
    ``keepdims`` = 1, ``rank - k`` with ``keepdims`` = 0 (unknown length with
    ``keepdims`` = 0 is a ShapeError: the rank is unknowable).
    """

    data = operand_def(TensorType)
    axes = opt_operand_def(TensorType)
    keepdims = int_attr()
    noop_with_empty_axes = int_attr()
    reduced = result_def(TensorType)
    traits = traits_def(Pure())
    DEFAULTS: ClassVar = {"keepdims": 1, "noop_with_empty_axes": 0}
    FACTS: ClassVar[OpFacts] = _REDUCE_FACTS

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "data")
        axes = ints_operand(operands[1] if len(operands) > 1 else None, "axes")
        keepdims = bool(cls.read_attr(props, "keepdims"))
        noop = bool(cls.read_attr(props, "noop_with_empty_axes"))
        dims = x.origin_shape
        if axes is not None and axes.values is None and axes.length != 0:
            if keepdims:
                return [TensorType([UNKNOWN] * x.rank, x.element_type)]
            if axes.length is None:
                raise ShapeError("the result rank is not known: 'axes' has an unknown size")
            if axes.length > x.rank:
                raise ShapeError(f"{axes.length} axes for a tensor of rank {x.rank}")
            return [TensorType([UNKNOWN] * (x.rank - axes.length), x.element_type)]
        given = axes.values if axes is not None and axes.values is not None else ()
        if not given:
            if noop:
                return [TensorType(dims, x.element_type)]
            return [TensorType(_reduced_shape(dims, range(x.rank), keepdims), x.element_type)]
        reduced = normalize_axes(given, x.rank)
        return [TensorType(_reduced_shape(dims, reduced, keepdims), x.element_type)]

    def compute(self, x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
        """The numpy reducer over normalised ``axes`` (empty: the noop case)."""
        raise NotImplementedError

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, axes = (list(inputs) + [None])[:2]
        assert x is not None
        given = runtime_ints(axes) or []
        if given:
            reduced = tuple(a % x.ndim for a in given)
        elif self.attr("noop_with_empty_axes"):
            reduced = ()  # reduce over no axis: ReduceL1 still gives |x|, as ONNX does
        else:
            reduced = tuple(range(x.ndim))
        out = self.compute(_compute_dtype(x), reduced, bool(self.attr("keepdims")))
        return (np.asarray(out).astype(x.dtype, copy=False),)

    def cost(self) -> OpCost:
        base = super().cost()
        n = self.data.type.num_elements() if isinstance(self.data.type, TensorType) else None
        return OpCost(flops=n if n is not None else base.flops, bytes=base.bytes)


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    name = "graph.reduce_sum"
    ONNX_OP: ClassVar = "ReduceSum"

    def compute(self, x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
        return np.sum(x, axis=axes, keepdims=keepdims, dtype=x.dtype)


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    """Mean; integer inputs give the truncated mean; an empty reduction gives 0 (as ORT)."""

    name = "graph.reduce_mean"
    ONNX_OP: ClassVar = "ReduceMean"

    def compute(self, x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
        count = int(np.prod([x.shape[a] for a in axes]))
        if x.dtype.kind in "iu":
            s = np.asarray(np.sum(x, axis=axes, keepdims=keepdims, dtype=np.int64))
            return np.sign(s) * (np.abs(s) // count) if count else s  # truncating division
        s = np.asarray(np.sum(x, axis=axes, keepdims=keepdims, dtype=x.dtype))
        return s / count if count else s


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    name = "graph.reduce_max"
    ONNX_OP: ClassVar = "ReduceMax"

    def compute(self, x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
        return np.max(x, axis=axes, keepdims=keepdims, initial=_lowest(x.dtype, True))


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    name = "graph.reduce_min"
    ONNX_OP: ClassVar = "ReduceMin"

    def compute(self, x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
        return np.min(x, axis=axes, keepdims=keepdims, initial=_lowest(x.dtype, False))


@irdl_op_definition
class ReduceProdOp(ReduceOp):
    name = "graph.reduce_prod"
    ONNX_OP: ClassVar = "ReduceProd"

    def compute(self, x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
        return np.prod(x, axis=axes, keepdims=keepdims, dtype=x.dtype)


@irdl_op_definition
class ReduceL1Op(ReduceOp):
    name = "graph.reduce_l1"
    ONNX_OP: ClassVar = "ReduceL1"

    def compute(self, x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
        return np.sum(np.abs(x), axis=axes, keepdims=keepdims, dtype=x.dtype)


@irdl_op_definition
class ReduceL2Op(ReduceOp):
    name = "graph.reduce_l2"
    ONNX_OP: ClassVar = "ReduceL2"

    def compute(self, x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
        xf = x if x.dtype.kind == "f" else x.astype(np.float64)
        return np.sqrt(np.sum(xf * xf, axis=axes, keepdims=keepdims))


@irdl_op_definition
class ReduceSumSquareOp(ReduceOp):
    name = "graph.reduce_sum_square"
    ONNX_OP: ClassVar = "ReduceSumSquare"

    def compute(self, x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
        return np.sum(x * x, axis=axes, keepdims=keepdims, dtype=x.dtype)


@irdl_op_definition
class ReduceLogSumExpOp(ReduceOp):
    """``log(sum(exp(x)))``, computed as ``m + log(sum(exp(x - m)))`` with ``m = max(x)``."""

    name = "graph.reduce_log_sum_exp"
    ONNX_OP: ClassVar = "ReduceLogSumExp"

    def compute(self, x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
        xf = x if x.dtype.kind == "f" else x.astype(np.float64)
        m = np.max(xf, axis=axes, keepdims=True, initial=-np.inf)
        m = np.where(np.isfinite(m), m, 0)
        with np.errstate(divide="ignore"):
            out = np.log(np.sum(np.exp(xf - m), axis=axes, keepdims=True)) + m
        return out if keepdims else np.squeeze(out, axis=axes)


@irdl_op_definition
class ReduceLogSumOp(ReduceOp):
    """``log(sum(x))`` (``-inf`` for a zero sum, NaN for a negative one, as numpy gives)."""

    name = "graph.reduce_log_sum"
    ONNX_OP: ClassVar = "ReduceLogSum"

    def compute(self, x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
        xf = x if x.dtype.kind == "f" else x.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(np.sum(xf, axis=axes, keepdims=keepdims))


# ---- arg_max / arg_min --------------------------------------------------------------------


class ArgReduceOp(GraphOp):
    """Base of ArgMax/ArgMin: int64 index of the extreme along ``axis``.

    Ties give the first index, or the last with ``select_last_index`` = 1.
    """

    data = operand_def(TensorType)
    axis = int_attr()
    keepdims = int_attr()
    select_last_index = int_attr()
    reduced = result_def(TensorType)
    traits = traits_def(Pure())
    DEFAULTS: ClassVar = {"axis": 0, "keepdims": 1, "select_last_index": 0}
    FACTS: ClassVar[OpFacts] = _REDUCE_FACTS

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "data")
        if x.rank == 0:
            raise ShapeError(f"{cls.name} needs data of rank >= 1")
        axis = normalize_axis(cls.read_attr(props, "axis"), x.rank)
        keepdims = bool(cls.read_attr(props, "keepdims"))
        return [TensorType(_reduced_shape(x.origin_shape, (axis,), keepdims), i64)]

    @staticmethod
    def arg(x: np.ndarray, axis: int) -> np.ndarray:
        """The first index of the extreme along ``axis``."""
        raise NotImplementedError

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        axis = self.attr("axis") % x.ndim
        if self.attr("select_last_index"):
            idx = x.shape[axis] - 1 - self.arg(np.flip(x, axis), axis)
        else:
            idx = self.arg(x, axis)
        if self.attr("keepdims"):
            idx = np.expand_dims(idx, axis)
        return (np.asarray(idx, dtype=np.int64),)


@irdl_op_definition
class ArgMaxOp(ArgReduceOp):
    name = "graph.arg_max"
    ONNX_OP: ClassVar = "ArgMax"

    @staticmethod
    def arg(x: np.ndarray, axis: int) -> np.ndarray:
        return np.argmax(x, axis=axis)


@irdl_op_definition
class ArgMinOp(ArgReduceOp):
    name = "graph.arg_min"
    ONNX_OP: ClassVar = "ArgMin"

    @staticmethod
    def arg(x: np.ndarray, axis: int) -> np.ndarray:
        return np.argmin(x, axis=axis)


REDUCTION_OPS: list[type[GraphOp]] = [
    ReduceSumOp,
    ReduceMeanOp,
    ReduceMaxOp,
    ReduceMinOp,
    ReduceProdOp,
    ReduceL2Op,
    ReduceL1Op,
    ReduceSumSquareOp,
    ReduceLogSumExpOp,
    ReduceLogSumOp,
    ArgMaxOp,
    ArgMinOp,
]
