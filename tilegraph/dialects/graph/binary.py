"""Broadcasting elementwise graph ops: binaries (Add, Sub, ..., comparisons) and variadics.

Binaries follow ONNX multidirectional broadcasting (PRelu: unidirectional, numpy style);
the variadics Sum/Max/Min/Mean broadcast all their inputs together. All are format-agnostic
(every operand and result shares one format, see :func:`.elementwise.agnostic_facts`) and
fuse as BROADCAST.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import i1
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def, var_operand_def
from xdsl.traits import Commutative, Pure

from tilegraph.dialects.graph.base import GraphOp, ShapeError, tensor_type
from tilegraph.dialects.graph.elementwise import agnostic_facts
from tilegraph.dialects.graph.facts import (
    ANY_FORMAT,
    FusionKind,
    KernelVariant,
    OpFacts,
    PrecisionRole,
    with_precision,
)
from tilegraph.dialects.graph.shape_utils import (
    broadcast_shapes,
    require,
    result_like,
    same_element_type,
)
from tilegraph.dialects.layout_type import TensorType

_SAME_FORMAT_2 = KernelVariant((ANY_FORMAT, ANY_FORMAT), (ANY_FORMAT,), "any")


# ---- binary with broadcasting -------------------------------------------------------------


class BinaryElementwiseOp(GraphOp):
    """``y = f(a, b)`` with ONNX multidirectional broadcasting."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())

    FACTS: ClassVar[OpFacts] = with_precision(
        agnostic_facts(FusionKind.BROADCAST, _SAME_FORMAT_2), PrecisionRole.WHITE
    )
    RESULT_DTYPE: ClassVar[str | None] = None
    """None: operands and result share one element type; "bool": a comparison;
    "lhs": the result takes the lhs element type and the rhs may differ (Pow)."""

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        a = require(tensor_type(operands[0]), "lhs")
        b = require(tensor_type(operands[1]), "rhs")
        elt = a.element_type if cls.RESULT_DTYPE == "lhs" else same_element_type([a, b])
        shape = broadcast_shapes(a.origin_shape, b.origin_shape)
        template = a if a.rank >= b.rank else b
        return [result_like(template, shape, i1 if cls.RESULT_DTYPE == "bool" else elt)]

    def compute(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        a, b = inputs
        assert a is not None and b is not None
        out = np.asarray(self.compute(a, b))
        return (out if self.RESULT_DTYPE == "bool" else out.astype(a.dtype, copy=False),)


class _CommutativeBinary(BinaryElementwiseOp):
    traits = traits_def(Pure(), Commutative())


@irdl_op_definition
class AddOp(_CommutativeBinary):
    name = "graph.add"
    ONNX_OP: ClassVar = "Add"

    def compute(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a + b


@irdl_op_definition
class SubOp(BinaryElementwiseOp):
    name = "graph.sub"
    ONNX_OP: ClassVar = "Sub"

    def compute(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a - b


@irdl_op_definition
class MulOp(_CommutativeBinary):
    name = "graph.mul"
    ONNX_OP: ClassVar = "Mul"

    def compute(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a * b


@irdl_op_definition
class DivOp(BinaryElementwiseOp):
    """Division; integer division truncates toward zero as in ONNX."""

    name = "graph.div"
    ONNX_OP: ClassVar = "Div"

    def compute(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.dtype.kind in "iu":
            return np.trunc(a / b).astype(a.dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            return a / b


@irdl_op_definition
class PowOp(BinaryElementwiseOp):
    """``a ** b``; the exponent may have another element type (ONNX Pow-12+)."""

    name = "graph.pow"
    ONNX_OP: ClassVar = "Pow"
    RESULT_DTYPE: ClassVar = "lhs"
    FACTS: ClassVar[OpFacts] = with_precision(BinaryElementwiseOp.FACTS, PrecisionRole.BLACK)

    def compute(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            return np.power(a, b.astype(a.dtype))


@irdl_op_definition
class PReluOp(BinaryElementwiseOp):
    """``x < 0 ? slope * x : x`` with ``slope`` broadcast to ``x`` (unidirectional, numpy
    style: a per-channel slope of an NCHW input is ``[C, 1, 1]``; the importer reshapes the
    1-D slopes of opset < 7 models to that)."""

    name = "graph.prelu"
    ONNX_OP: ClassVar = "PRelu"

    def compute(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.where(a < 0, a * b, a)


class _ComparisonOp(BinaryElementwiseOp):
    RESULT_DTYPE: ClassVar = "bool"


@irdl_op_definition
class EqualOp(_ComparisonOp):
    name = "graph.equal"
    ONNX_OP: ClassVar = "Equal"

    def compute(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.equal(a, b)


@irdl_op_definition
class LessOp(_ComparisonOp):
    name = "graph.less"
    ONNX_OP: ClassVar = "Less"

    def compute(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.less(a, b)


@irdl_op_definition
class GreaterOp(_ComparisonOp):
    name = "graph.greater"
    ONNX_OP: ClassVar = "Greater"

    def compute(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.greater(a, b)


# ---- variadic -----------------------------------------------------------------------------


class VariadicElementwiseOp(GraphOp):
    """ONNX Sum/Max/Min/Mean: an n-ary broadcasting reduction over the operand list."""

    inputs = var_operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure(), Commutative())
    FACTS: ClassVar[OpFacts] = with_precision(
        agnostic_facts(
            FusionKind.BROADCAST,
            KernelVariant((), (ANY_FORMAT,), "any"),  # every input: ANY
        ),
        PrecisionRole.WHITE,
    )

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        types = [require(tensor_type(v), "input") for v in operands]
        if not types:
            raise ShapeError(f"{cls.name} needs at least one input")
        elt = same_element_type(types)
        shape = broadcast_shapes(*(t.origin_shape for t in types))
        template = max(types, key=lambda t: t.rank)
        return [result_like(template, shape, elt)]

    FOLD: ClassVar[np.ufunc | None] = None
    """The binary ufunc folded over the inputs (np.add for Sum); subclasses without one
    override :meth:`combine`."""

    def combine(self, arrays: list[np.ndarray]) -> np.ndarray:
        assert self.FOLD is not None, f"{self.name} defines neither FOLD nor combine"
        out = arrays[0]
        for a in arrays[1:]:
            out = self.FOLD(out, a)
        return np.broadcast_to(out, np.broadcast_shapes(*(a.shape for a in arrays)))

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        arrays = [a for a in inputs if a is not None]
        return (np.asarray(self.combine(arrays)).astype(arrays[0].dtype, copy=False),)


@irdl_op_definition
class SumOp(VariadicElementwiseOp):
    name = "graph.sum"
    ONNX_OP: ClassVar = "Sum"
    FOLD: ClassVar = np.add


@irdl_op_definition
class MaxOp(VariadicElementwiseOp):
    name = "graph.max"
    ONNX_OP: ClassVar = "Max"
    FOLD: ClassVar = np.maximum


@irdl_op_definition
class MinOp(VariadicElementwiseOp):
    name = "graph.min"
    ONNX_OP: ClassVar = "Min"
    FOLD: ClassVar = np.minimum


@irdl_op_definition
class MeanOp(VariadicElementwiseOp):
    name = "graph.mean"
    ONNX_OP: ClassVar = "Mean"

    def combine(self, arrays: list[np.ndarray]) -> np.ndarray:
        out = arrays[0].astype(np.float64)
        for a in arrays[1:]:
            out = out + a
        return out / len(arrays)


BINARY_OPS: list[type[GraphOp]] = [
    AddOp, SubOp, MulOp, DivOp, PowOp, PReluOp, EqualOp, LessOp, GreaterOp,
    SumOp, MaxOp, MinOp, MeanOp,
]  # fmt: skip
