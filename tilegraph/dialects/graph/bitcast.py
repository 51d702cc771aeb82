"""ONNX BitCast: a tensor's bit patterns reinterpreted as another type of the same width."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure

from tilegraph.dialects.element_conversion import bit_pattern, from_bit_pattern
from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.base import GraphOp, ShapeError, int_attr, tensor_type
from tilegraph.dialects.graph.elementwise import agnostic_facts, onnx_dtype_name
from tilegraph.dialects.graph.facts import FusionKind
from tilegraph.dialects.graph.shape_utils import require, result_like
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import parse_dtype


@irdl_op_definition
class BitCastOp(GraphOp):
    """ONNX BitCast: each element's bits (little endian) read as the type ONNX's ``to``
    names, which must have the input type's bit width (bool counts as 8 bits; a byte other
    than 0 or 1 read as bool is true). Strings and complex types are refused."""

    name = "graph.bit_cast"
    ONNX_OP: ClassVar = "BitCast"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    to = int_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = agnostic_facts(FusionKind.ELEMWISE)

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        to = cls.read_attr(props, "to")
        if to is None:
            raise ShapeError("graph.bit_cast needs the 'to' attribute")
        target = parse_dtype(onnx_dtype_name(to))
        if target.bits != x.dtype.bits:
            raise ShapeError(
                f"BitCast needs types of one bit width: {x.dtype.value} has {x.dtype.bits} "
                f"bits, {target.value} has {target.bits}"
            )
        return [result_like(x, x.origin_shape, element_type_of(target))]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        source, target = self.input.type, self.output.type
        assert isinstance(source, TensorType) and isinstance(target, TensorType)
        return (from_bit_pattern(bit_pattern(x, source.dtype), target.dtype),)
