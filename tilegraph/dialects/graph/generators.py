"""Ops that build or mask index-shaped tensors, and scans along an axis: Range, EyeLike,
Trilu, CumSum, CumProd, Hardmax.

None has a tile lowering yet (host ops on the tiled path). They are ND-only: their
results' dims mean positions, not channels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from tilegraph.dialects.element_conversion import convert
from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.base import (
    GraphOp,
    ShapeError,
    constant_value,
    int_attr,
    tensor_type,
)
from tilegraph.dialects.graph.elementwise import onnx_dtype_name
from tilegraph.dialects.graph.facts import ND_INJECTIVE, ND_OPAQUE
from tilegraph.dialects.graph.operand_values import known_value
from tilegraph.dialects.graph.shape_utils import nd_result, normalize_axis, require
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType
from tilegraph.formats.dims import UNKNOWN

_LOW_PRECISION = (DType.float16, DType.bfloat16)


def _scalar(value: SSAValue | None, what: str) -> TensorType:
    t = require(tensor_type(value), what)
    if t.rank > 1 or (t.rank == 1 and t.origin_shape[0] != 1):
        raise ShapeError(f"{what} must be a scalar, got shape {list(t.origin_shape)}")
    return t


_STASH_TYPES = {1: np.float32, 11: np.float64}
"""Range-27's ``stash_type`` values (ONNX float, double) -> the type float16 / bfloat16
ranges are computed in."""


@irdl_op_definition
class RangeOp(GraphOp):
    """ONNX Range: ``start, start + delta, ...`` below ``limit`` (above it for a negative
    delta); the length is ``max(ceil((limit - start) / delta), 0)``, known when the three
    scalars are constants, else an unknown dim. float16 / bfloat16 ranges (Range-27) are
    computed in ``stash_type`` (float32 by default, or float64) and rounded to the type."""

    name = "graph.range"
    ONNX_OP: ClassVar = "Range"
    start = operand_def(TensorType)
    limit = operand_def(TensorType)
    delta = operand_def(TensorType)
    output = result_def(TensorType)
    stash_type = int_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"stash_type": 1}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        types = [_scalar(v, w) for v, w in zip(operands, ("start", "limit", "delta"), strict=True)]
        if len({t.element_type for t in types}) != 1:
            raise ShapeError("start, limit and delta must have one element type")
        stash = cls.read_attr(props, "stash_type")
        if types[0].dtype in _LOW_PRECISION and stash not in _STASH_TYPES:
            raise ShapeError(f"Range's stash_type {stash} is not supported (1: float, 11: double)")
        # known_value: the scalars of a KV-cache decoder's position ids follow from the
        # bound input shapes (``Range(past, past + seq)``), constants or not
        values = [known_value(v) for v in operands]
        length = UNKNOWN
        if all(v is not None for v in values):
            start, limit, delta = (np.asarray(v).reshape(()) for v in values)  # type: ignore[arg-type]
            if delta == 0:
                raise ShapeError("Range's delta must not be 0")
            length = len(_range(start, limit, delta))
        return [TensorType([length], types[0].element_type)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        start, limit, delta = (np.asarray(x).reshape(()) for x in inputs)
        result = self.output.type
        assert isinstance(result, TensorType)
        if result.dtype not in _LOW_PRECISION:
            return (_range(start, limit, delta),)
        stash = _STASH_TYPES[int(self.attr("stash_type"))]
        values = _range(start.astype(stash), limit.astype(stash), delta.astype(stash))
        return (convert(values, result.dtype),)


def _range(start: np.ndarray, limit: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """ONNX's loop: ``start + i * delta`` for i below the count (no float drift from
    numpy.arange's own step arithmetic)."""
    count = max(int(np.ceil((float(limit) - float(start)) / float(delta))), 0)
    return (start + np.arange(count, dtype=start.dtype) * delta).astype(start.dtype)


@irdl_op_definition
class EyeLikeOp(GraphOp):
    """ONNX EyeLike: ones on the ``k``-th diagonal of a 2-D tensor shaped like the input,
    of ``dtype`` (default: the input's element type)."""

    name = "graph.eye_like"
    ONNX_OP: ClassVar = "EyeLike"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    k = int_attr()
    dtype = int_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"k": 0}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        if x.rank != 2:
            raise ShapeError(f"EyeLike takes a 2-D tensor, got rank {x.rank}")
        code = cls.read_attr(props, "dtype")
        elt = x.element_type if code is None else element_type_of(onnx_dtype_name(code))
        return [nd_result(x, x.origin_shape, elt)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        out = self.output.type
        assert isinstance(out, TensorType)
        return (np.eye(*x.shape, k=int(self.attr("k")), dtype=out.dtype.numpy),)


@irdl_op_definition
class TriluOp(GraphOp):
    """ONNX Trilu: the upper (``upper = 1``, default) or lower triangle of the last two dims,
    from the ``k``-th diagonal (optional scalar input, default 0); the rest is zero."""

    name = "graph.trilu"
    ONNX_OP: ClassVar = "Trilu"
    input = operand_def(TensorType)
    k = opt_operand_def(TensorType)
    output = result_def(TensorType)
    upper = int_attr()
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    FACTS: ClassVar = ND_INJECTIVE
    DEFAULTS: ClassVar = {"upper": 1}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        if x.rank < 2:
            raise ShapeError(f"Trilu takes a tensor of rank >= 2, got rank {x.rank}")
        if len(operands) > 1 and operands[1] is not None:
            _scalar(operands[1], "k")
        return [nd_result(x, x.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x = inputs[0]
        assert x is not None
        given = inputs[1] if len(inputs) > 1 else None
        k = 0 if given is None else int(np.asarray(given).reshape(()))
        return ((np.triu if self.attr("upper") else np.tril)(x, k).astype(x.dtype),)


class _CumulativeOp(GraphOp):
    """A running sum / product along ``axis`` (a scalar input); ``exclusive`` leaves out
    the element itself, ``reverse`` runs from the end."""

    x = operand_def(TensorType)
    axis = operand_def(TensorType)
    y = result_def(TensorType)
    exclusive = int_attr()
    reverse = int_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"exclusive": 0, "reverse": 0}
    IDENTITY: ClassVar[int] = 0

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "x")
        _scalar(operands[1], "axis")
        axis = constant_value(operands[1])
        if axis is not None:
            normalize_axis(int(np.asarray(axis).reshape(())), x.rank)
        return [nd_result(x, x.origin_shape)]

    def scan(self, x: np.ndarray, axis: int) -> np.ndarray:
        raise NotImplementedError

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, axis_value = inputs
        assert x is not None and axis_value is not None
        axis = int(np.asarray(axis_value).reshape(())) % x.ndim
        data = np.flip(x, axis) if self.attr("reverse") else x
        out = self.scan(data, axis)
        if self.attr("exclusive"):
            pad = np.full_like(np.take(out, [0], axis=axis), self.IDENTITY)
            out = np.concatenate([pad, np.delete(out, -1, axis=axis)], axis=axis)
        if self.attr("reverse"):
            out = np.flip(out, axis)
        return (np.asarray(out, order="C").astype(x.dtype),)


@irdl_op_definition
class CumSumOp(_CumulativeOp):
    """ONNX CumSum."""

    name = "graph.cum_sum"
    ONNX_OP: ClassVar = "CumSum"

    def scan(self, x: np.ndarray, axis: int) -> np.ndarray:
        return np.cumsum(x, axis=axis, dtype=x.dtype)


@irdl_op_definition
class CumProdOp(_CumulativeOp):
    """ONNX CumProd."""

    name = "graph.cum_prod"
    ONNX_OP: ClassVar = "CumProd"
    IDENTITY: ClassVar = 1

    def scan(self, x: np.ndarray, axis: int) -> np.ndarray:
        return np.cumprod(x, axis=axis, dtype=x.dtype)


@irdl_op_definition
class HardmaxOp(GraphOp):
    """ONNX Hardmax (opset 13+): 1 at the first maximum along ``axis`` (default -1), 0
    elsewhere."""

    name = "graph.hardmax"
    ONNX_OP: ClassVar = "Hardmax"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axis = int_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"axis": -1}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        normalize_axis(cls.read_attr(props, "axis"), x.rank)
        return [nd_result(x, x.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        axis = int(self.attr("axis")) % x.ndim
        first = np.expand_dims(np.argmax(x, axis=axis), axis)
        out = np.zeros_like(x)
        np.put_along_axis(out, first, 1, axis=axis)
        return (out,)


GENERATOR_OPS: list[type[GraphOp]] = [
    RangeOp,
    EyeLikeOp,
    TriluOp,
    CumSumOp,
    CumProdOp,
    HardmaxOp,
]
