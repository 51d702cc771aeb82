"""Logical, comparison, bitwise and integer ops added for ONNX coverage.

The broadcasting binaries are declared from one table each on
:class:`~.binary.BinaryElementwiseOp` — logical (bool -> bool), comparisons (-> bool) and
bitwise (integers) — plus the ops with attributes or more operands: Not and BitwiseNot,
BitShift (``direction``), Mod (``fmod``) and Where (three-way broadcasting). All are
format-agnostic and fuse as BROADCAST / ELEMWISE; their vector programs are in
:mod:`tilegraph.lowering.conversion.tiling.vector_ops`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure

from tilegraph.dialects.graph.base import (
    GraphOp,
    ShapeError,
    declare_table_op,
    int_attr,
    str_attr,
    tensor_type,
)
from tilegraph.dialects.graph.binary import BinaryElementwiseOp
from tilegraph.dialects.graph.elementwise import UnaryElementwiseOp, agnostic_facts
from tilegraph.dialects.graph.facts import ANY_FORMAT, FusionKind, KernelVariant, OpFacts
from tilegraph.dialects.graph.shape_utils import (
    broadcast_shapes,
    require,
    result_like,
    same_element_type,
)
from tilegraph.dialects.layout_type import TensorType

Binary = Callable[[np.ndarray, np.ndarray], np.ndarray]


class _TypedBinary(BinaryElementwiseOp):
    """A broadcasting binary whose operands must be of one kind of element type."""

    KINDS: ClassVar[str] = "biuf"
    """numpy dtype kinds the operands may have."""
    WHAT: ClassVar[str] = ""

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        a = require(tensor_type(operands[0]), "lhs")
        if a.dtype.numpy.kind not in cls.KINDS:
            raise ShapeError(f"{cls.ONNX_OP} takes {cls.WHAT} tensors, not {a.element_type}")
        return super().infer_shapes(operands, props)


class LogicalOp(_TypedBinary):
    RESULT_DTYPE: ClassVar = "bool"
    KINDS: ClassVar = "b"
    WHAT: ClassVar = "bool"


class ComparisonOp(_TypedBinary):
    RESULT_DTYPE: ClassVar = "bool"
    KINDS: ClassVar = "iuf"
    WHAT: ClassVar = "numeric"


class BitwiseOp(_TypedBinary):
    KINDS: ClassVar = "iu"
    WHAT: ClassVar = "integer"


_TABLE: list[tuple[type[GraphOp], str, Binary, str]] = [
    (LogicalOp, "And", np.logical_and, "ONNX And of bool tensors, broadcasting."),
    (LogicalOp, "Or", np.logical_or, "ONNX Or of bool tensors, broadcasting."),
    (LogicalOp, "Xor", np.logical_xor, "ONNX Xor of bool tensors, broadcasting."),
    (ComparisonOp, "GreaterOrEqual", np.greater_equal, "ONNX GreaterOrEqual, broadcasting."),
    (ComparisonOp, "LessOrEqual", np.less_equal, "ONNX LessOrEqual, broadcasting."),
    (BitwiseOp, "BitwiseAnd", np.bitwise_and, "ONNX BitwiseAnd of integer tensors."),
    (BitwiseOp, "BitwiseOr", np.bitwise_or, "ONNX BitwiseOr of integer tensors."),
    (BitwiseOp, "BitwiseXor", np.bitwise_xor, "ONNX BitwiseXor of integer tensors."),
]

TABLE_OPS: list[type[GraphOp]] = [
    declare_table_op(base, op, fn, doc, __name__) for base, op, fn, doc in _TABLE
]


def shift_bits(a: np.ndarray, b: np.ndarray, left: bool) -> np.ndarray:
    """``a`` shifted by ``b`` bits as ONNX BitShift says (see :class:`BitShiftOp`); the
    vector unit's ``tile.vshl`` / ``tile.vshr`` share it."""
    bits = a.dtype.itemsize * 8
    shift = np.asarray(b).astype(np.int64)
    valid = (shift >= 0) & (shift < bits)
    safe = np.where(valid, shift, 0)
    if not left:
        moved = np.right_shift(a, safe.astype(a.dtype))  # arithmetic for signed types
        fill = np.where(a < 0, -1, 0) if a.dtype.kind == "i" else 0
    else:
        unsigned = a.astype(np.dtype(f"u{a.dtype.itemsize}"))
        moved = np.left_shift(unsigned, safe.astype(unsigned.dtype)).astype(a.dtype)
        fill = 0
    return np.where(valid, moved, fill).astype(a.dtype)


@irdl_op_definition
class BitShiftOp(BitwiseOp):
    """ONNX BitShift (as of BitShift-28): ``direction`` "LEFT" or "RIGHT". Bits shifted out
    are lost; a signed right shift is arithmetic (sign-extending) and a signed left shift
    wraps past the sign bit; a shift that is negative or at least the width gives what the
    sign extension alone gives (-1 for a right shift of a negative value, else 0)."""

    name = "graph.bit_shift"
    ONNX_OP: ClassVar = "BitShift"
    direction = str_attr()

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        if cls.read_attr(props, "direction") not in ("LEFT", "RIGHT"):
            raise ShapeError('BitShift needs direction "LEFT" or "RIGHT"')
        return super().infer_shapes(operands, props)

    def compute(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return shift_bits(a, b, left=self.attr("direction") == "LEFT")


@irdl_op_definition
class ModOp(_TypedBinary):
    """ONNX Mod (as of Mod-28): ``fmod = 0`` is the floor remainder, with the divisor's sign
    (Python's ``%``, integers and, from Mod-28, floats), ``fmod = 1`` the C ``fmod`` with
    the dividend's sign. A zero integer divisor gives 0, as onnxruntime does."""

    name = "graph.mod"
    ONNX_OP: ClassVar = "Mod"
    KINDS: ClassVar = "iuf"
    WHAT: ClassVar = "numeric"
    fmod = int_attr()
    DEFAULTS: ClassVar = {"fmod": 0}

    def compute(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.attr("fmod"):
                out = np.fmod(a, b)
            else:
                out = np.mod(a, b)
        if a.dtype.kind in "iu":
            out = np.where(np.asarray(b) == 0, 0, out)
        return out


class _UnaryOfKind(UnaryElementwiseOp):
    KINDS: ClassVar[str] = "b"
    WHAT: ClassVar[str] = "bool"

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        if x.dtype.numpy.kind not in cls.KINDS:
            raise ShapeError(f"{cls.ONNX_OP} takes {cls.WHAT} tensors, not {x.element_type}")
        return super().infer_shapes(operands, props)


@irdl_op_definition
class NotOp(_UnaryOfKind):
    """ONNX Not of a bool tensor."""

    name = "graph.not"
    ONNX_OP: ClassVar = "Not"

    def compute(self, x: np.ndarray) -> np.ndarray:
        return np.logical_not(x)


@irdl_op_definition
class BitwiseNotOp(_UnaryOfKind):
    """ONNX BitwiseNot of an integer tensor."""

    name = "graph.bitwise_not"
    ONNX_OP: ClassVar = "BitwiseNot"
    KINDS: ClassVar = "iu"
    WHAT: ClassVar = "integer"

    def compute(self, x: np.ndarray) -> np.ndarray:
        return np.invert(x)


@irdl_op_definition
class WhereOp(GraphOp):
    """ONNX Where: ``condition ? x : y``, the three broadcast together."""

    name = "graph.where"
    ONNX_OP: ClassVar = "Where"
    condition = operand_def(TensorType)
    x = operand_def(TensorType)
    y = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    FACTS: ClassVar[OpFacts] = agnostic_facts(
        FusionKind.BROADCAST,
        KernelVariant((ANY_FORMAT, ANY_FORMAT, ANY_FORMAT), (ANY_FORMAT,), "any"),
    )

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        c = require(tensor_type(operands[0]), "condition")
        x = require(tensor_type(operands[1]), "x")
        y = require(tensor_type(operands[2]), "y")
        if c.dtype.numpy.kind != "b":
            raise ShapeError(f"Where's condition must be bool, not {c.element_type}")
        elt = same_element_type([x, y], "x and y")
        shape = broadcast_shapes(c.origin_shape, x.origin_shape, y.origin_shape)
        template = max((c, x, y), key=lambda t: t.rank)
        return [result_like(template, shape, elt)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        c, x, y = inputs
        assert c is not None and x is not None and y is not None
        return (np.where(c, x, y).astype(x.dtype, copy=False),)


LOGICAL_OPS: list[type[GraphOp]] = [
    *TABLE_OPS,
    BitShiftOp,
    ModOp,
    NotOp,
    BitwiseNotOp,
    WhereOp,
]
