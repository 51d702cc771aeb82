"""Unary math and activation ops added for ONNX coverage: trigonometric and hyperbolic
functions, Softsign, Round, HardSwish, Mish, Celu, ThresholdedRelu, and the predicates IsNaN
and IsInf.

The attribute-free ones are declared from one table (:data:`_UNARY`: ONNX name -> numpy
function) on :class:`~.elementwise.UnaryElementwiseOp`, so adding such an op is one line.
All are format-agnostic and fuse as ELEMWISE; their vector programs are in
:mod:`tilegraph.lowering.conversion.tiling.vector_math`. Floating-point only, as their ONNX
schemas (ints are refused by the shape function, not computed wrongly).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import i1
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition

from tilegraph.dialects.graph.base import (
    GraphOp,
    ShapeError,
    declare_table_op,
    float_attr,
    int_attr,
    tensor_type,
)
from tilegraph.dialects.graph.elementwise import UnaryElementwiseOp
from tilegraph.dialects.graph.shape_utils import require, result_like
from tilegraph.dialects.layout_type import TensorType


class FloatUnaryOp(UnaryElementwiseOp):
    """A unary op of floating-point tensors (the result keeps the element type)."""

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        if x.dtype.numpy.kind != "f":
            raise ShapeError(f"{cls.ONNX_OP} takes floating-point tensors, not {x.element_type}")
        return super().infer_shapes(operands, props)

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        with np.errstate(all="ignore"):  # asin(2) is NaN by definition, as in onnxruntime
            return (np.asarray(self.compute(x.astype(np.float64))).astype(x.dtype),)


def _softsign(x: np.ndarray) -> np.ndarray:
    return x / (1 + np.abs(x))


def _hard_swish(x: np.ndarray) -> np.ndarray:
    return x * np.clip(x / 6 + 0.5, 0, 1)


def _mish(x: np.ndarray) -> np.ndarray:
    return x * np.tanh(np.logaddexp(0, x))


_UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "Sin": np.sin,
    "Cos": np.cos,
    "Tan": np.tan,
    "Asin": np.arcsin,
    "Acos": np.arccos,
    "Atan": np.arctan,
    "Sinh": np.sinh,
    "Cosh": np.cosh,
    "Asinh": np.arcsinh,
    "Acosh": np.arccosh,
    "Atanh": np.arctanh,
    "Softsign": _softsign,
    "Round": np.round,  # half to even, as ONNX says
    "HardSwish": _hard_swish,
    "Mish": _mish,
}
"""ONNX op -> its function on float64 (the result is cast back to the input type)."""


TABLE_OPS: list[type[GraphOp]] = [
    declare_table_op(
        FloatUnaryOp, op, fn, f"ONNX {op}, elementwise on floating-point tensors.", __name__
    )
    for op, fn in _UNARY.items()
]


@irdl_op_definition
class CeluOp(FloatUnaryOp):
    """ONNX Celu: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    name = "graph.celu"
    ONNX_OP: ClassVar = "Celu"
    alpha = float_attr()
    DEFAULTS: ClassVar = {"alpha": 1.0}

    def compute(self, x: np.ndarray) -> np.ndarray:
        a = float(self.attr("alpha"))
        return np.maximum(0, x) + np.minimum(0, a * np.expm1(x / a))


@irdl_op_definition
class ThresholdedReluOp(FloatUnaryOp):
    """ONNX ThresholdedRelu: ``x`` where ``x > alpha``, else 0."""

    name = "graph.thresholded_relu"
    ONNX_OP: ClassVar = "ThresholdedRelu"
    alpha = float_attr()
    DEFAULTS: ClassVar = {"alpha": 1.0}

    def compute(self, x: np.ndarray) -> np.ndarray:
        return np.where(x > float(self.attr("alpha")), x, 0)


@irdl_op_definition
class SwishOp(FloatUnaryOp):
    """ONNX Swish: ``x * sigmoid(alpha * x)``."""

    name = "graph.swish"
    ONNX_OP: ClassVar = "Swish"
    alpha = float_attr()
    DEFAULTS: ClassVar = {"alpha": 1.0}

    def compute(self, x: np.ndarray) -> np.ndarray:
        return x / (1 + np.exp(-float(self.attr("alpha")) * x))


class _FloatPredicate(FloatUnaryOp):
    """A boolean test of each element of a floating-point tensor."""

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        (x,) = super().infer_shapes(operands, props)
        return [result_like(x, x.origin_shape, i1)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        return (np.asarray(self.compute(x), dtype=np.bool_),)


@irdl_op_definition
class IsNaNOp(_FloatPredicate):
    """ONNX IsNaN."""

    name = "graph.is_nan"
    ONNX_OP: ClassVar = "IsNaN"

    def compute(self, x: np.ndarray) -> np.ndarray:
        return np.isnan(x)


@irdl_op_definition
class IsInfOp(_FloatPredicate):
    """ONNX IsInf: positive and/or negative infinities (``detect_positive``,
    ``detect_negative``, both 1 by default)."""

    name = "graph.is_inf"
    ONNX_OP: ClassVar = "IsInf"
    detect_positive = int_attr()
    detect_negative = int_attr()
    DEFAULTS: ClassVar = {"detect_positive": 1, "detect_negative": 1}

    def compute(self, x: np.ndarray) -> np.ndarray:
        positive = np.isposinf(x) if self.attr("detect_positive") else np.zeros(x.shape, bool)
        negative = np.isneginf(x) if self.attr("detect_negative") else np.zeros(x.shape, bool)
        return positive | negative


MATH_OPS: list[type[GraphOp]] = [
    *TABLE_OPS,
    CeluOp,
    ThresholdedReluOp,
    SwishOp,
    IsNaNOp,
    IsInfOp,
]
