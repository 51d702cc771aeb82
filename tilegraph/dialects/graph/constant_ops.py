"""Ops that make tensors from data or shapes: constant, constant_of_shape, shape, size."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import i64
from xdsl.interfaces import HasFolderInterface
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.base import (
    GraphOp,
    ShapeError,
    int_attr,
    tensor_type,
)
from tilegraph.dialects.graph.dense import DenseAttr, format_payload, payload_array, read_payload
from tilegraph.dialects.graph.facts import FormatRole, FusionKind, OpFacts
from tilegraph.dialects.graph.operand_values import known_value
from tilegraph.dialects.graph.shape_utils import require
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import UNKNOWN, is_static

_SOURCE = OpFacts(role=FormatRole.AGNOSTIC, fusion=FusionKind.OPAQUE)
_SHAPE_QUERY = OpFacts(role=FormatRole.ND_ONLY, fusion=FusionKind.OPAQUE, format_operands=())
_SHAPE_READER = replace(_SHAPE_QUERY, shape_only=True)
"""Shape and Size: their result is their operand's origin shape (or its product)."""


@irdl_op_definition
class ConstantOp(GraphOp, HasFolderInterface):
    """A constant tensor backed by numpy data::

        %w = graph.constant dense<[1.0, 2.0]> : !layout.tensor<2xf32>
        %w = graph.constant dense<__elided__> : !layout.tensor<64x3x7x7xf32, NCHW>

    The data is held in origin layout; ``fold-trans-data`` later stores pre-converted data
    by giving the result a storage format (the array then holds the storage layout).
    """

    name = "graph.constant"
    ONNX_OP: ClassVar = "Constant"
    value = prop_def(DenseAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure(), ConstantLike())
    FACTS: ClassVar = _SOURCE

    def __init__(self, array: np.ndarray, result_type: TensorType | None = None):
        array = np.asarray(array)
        if result_type is None:
            result_type = TensorType(array.shape, element_type_of(array.dtype))
        super().__init__(
            result_types=[result_type],
            properties={"value": DenseAttr.from_array(array, str(result_type.dtype))},
        )

    def fold(self):
        return (self.value,)

    def constant_array(self) -> np.ndarray | None:
        """The data (read-only), or None when it was elided in the text this came from."""
        return self.value.array

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        value = props.get("value")
        if not isinstance(value, DenseAttr):
            raise ShapeError("graph.constant needs a dense value")
        blob = value.data
        return [TensorType(list(blob.shape), element_type_of(blob.dtype_name))]

    def verify_(self) -> None:
        t = self.output.type
        if not isinstance(t, TensorType):
            raise VerifyException("graph.constant must produce a !layout.tensor")
        blob = self.value.data
        if str(t.dtype) != blob.dtype_name:
            raise VerifyException(
                f"constant data is {blob.dtype_name} but the result type is {t.element_type}"
            )
        expected = t.origin_shape if t.storage_format == t.origin_format else t.storage_shape
        if list(blob.shape) != list(expected):
            raise VerifyException(
                f"constant data has shape {list(blob.shape)}, the type needs {list(expected)}"
            )

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        data = self.constant_array()
        if data is None:
            raise ValueError(
                "graph.constant: the data was elided when the IR was printed; "
                "print with --print-constants to keep it"
            )
        return (data,)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        parser.parse_keyword("dense")
        parser.parse_punctuation("<")
        payload_pos = parser.pos
        payload = read_payload(parser)
        parser.parse_punctuation(">")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        type_pos = parser.pos
        t = parser.parse_type()
        if not isinstance(t, TensorType):
            parser.raise_error("graph.constant must have a !layout.tensor type", type_pos)
        data_shape = t.origin_shape if t.storage_format == t.origin_format else t.storage_shape
        if not all(is_static(d) for d in data_shape):
            parser.raise_error("graph.constant needs a static shape", type_pos)
        shape = [int(d) for d in data_shape]
        try:
            array = payload_array(payload, str(t.dtype), shape)
        except ValueError as e:
            parser.raise_error(str(e), payload_pos)
        value = (
            DenseAttr.elided(str(t.dtype), shape)
            if array is None
            else DenseAttr.from_array(array, str(t.dtype))
        )
        op = cls.create(result_types=[t], properties={"value": value})
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" dense<{format_payload(self.value.array)}>")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.output.type)


@irdl_op_definition
class ConstantOfShapeOp(GraphOp):
    """A tensor of the shape given by a 1-D int64 operand, filled with ``value``."""

    name = "graph.constant_of_shape"
    ONNX_OP: ClassVar = "ConstantOfShape"
    shape = operand_def(TensorType)
    value = opt_prop_def(DenseAttr)
    """One-element fill value; absent means float32 0 (the ONNX default)."""
    output = result_def(TensorType)
    traits = traits_def(Pure())
    FACTS: ClassVar = _SHAPE_QUERY

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        shape_t = require(tensor_type(operands[0]), "shape")
        if shape_t.rank != 1:
            raise ShapeError("constant_of_shape: the shape operand must be 1-D")
        value = props.get("value")
        if value is not None and (not isinstance(value, DenseAttr) or value.data.shape != (1,)):
            raise ShapeError("constant_of_shape: value must be a one-element dense tensor")
        elt = element_type_of(value.data.dtype_name if isinstance(value, DenseAttr) else "float32")
        known = known_value(operands[0])
        if known is not None:
            return [TensorType([int(d) for d in known.reshape(-1)], elt)]
        n = shape_t.origin_shape[0]
        if not isinstance(n, int) or n < 0:
            raise ShapeError("constant_of_shape: the result rank is not known")
        return [TensorType([UNKNOWN] * n, elt)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (shape,) = inputs
        assert shape is not None
        fill = np.zeros(1, np.float32) if self.value is None else self.value.array
        assert fill is not None
        return (np.full([int(d) for d in shape.reshape(-1)], fill.reshape(-1)[0], fill.dtype),)


@irdl_op_definition
class ShapeOp(GraphOp):
    """The origin shape of the input as a 1-D int64 tensor (``start``/``end`` as ONNX-15)."""

    name = "graph.shape"
    ONNX_OP: ClassVar = "Shape"
    input = operand_def(TensorType)
    start = int_attr()
    end = int_attr()
    output = result_def(TensorType)
    traits = traits_def(Pure())
    DEFAULTS: ClassVar = {"start": 0}
    FACTS: ClassVar = _SHAPE_READER

    @classmethod
    def _range(cls, rank: int, props: Mapping[str, Attribute]) -> tuple[int, int]:
        start = cls.read_attr(props, "start")
        end = cls.read_attr(props, "end")
        start = max(0, min(rank, start + rank if start < 0 else start))
        end = rank if end is None else max(0, min(rank, end + rank if end < 0 else end))
        return start, max(start, end)

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        start, end = cls._range(x.rank, props)
        return [TensorType([end - start], i64)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        start, end = self._range(x.ndim, self.properties)
        return (np.array(x.shape[start:end], dtype=np.int64),)


@irdl_op_definition
class SizeOp(GraphOp):
    """The number of elements of the input as an int64 scalar."""

    name = "graph.size"
    ONNX_OP: ClassVar = "Size"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    FACTS: ClassVar = _SHAPE_READER

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        require(tensor_type(operands[0]), "input")
        return [TensorType([], i64)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        return (np.array(x.size, dtype=np.int64),)


CONSTANT_OPS = [ConstantOp, ConstantOfShapeOp, ShapeOp, SizeOp]
