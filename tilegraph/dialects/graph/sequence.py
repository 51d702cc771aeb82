"""Sequence and optional ops: ONNX's SequenceConstruct / Empty / At / Insert / Erase / Length,
SplitToSequence, ConcatFromSequence, Optional, OptionalHasElement, OptionalGetElement, and
Identity of a sequence or optional.

Their values are ``!graph.seq`` / ``!graph.opt`` (:mod:`.value_types`): Python lists of
arrays and ``None``-or-value at run time. They are ND host ops that fuse with nothing.
:class:`ValueOp` is the base of every graph op whose operands or results may be such values
(these, and the control-flow ops of :mod:`.control_flow`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, cast

import numpy as np
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.base import GraphOp, ShapeError, int_attr, tensor_type
from tilegraph.dialects.graph.elementwise import onnx_dtype_name
from tilegraph.dialects.graph.facts import ND_OPAQUE
from tilegraph.dialects.graph.shape_utils import normalize_axis, require
from tilegraph.dialects.graph.value_types import (
    OptionalType,
    SequenceType,
    element_tensor,
    join_types,
    sequence_of,
    type_admits,
)
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import UNKNOWN, Dim


class ValueOp(GraphOp):
    """A graph op whose operands or results may be sequences or optionals.

    Subclasses give :meth:`value_types` (result types from operand types, any value kind)
    instead of a tensor-only shape function; the verifier checks the results against it."""

    FACTS: ClassVar = ND_OPAQUE

    @classmethod
    def accepts_operand_types(cls, types: Sequence[Attribute | None]) -> bool:
        return True

    @classmethod
    def value_types(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[Attribute]:
        raise NotImplementedError(f"{cls.name} has no type function")

    @classmethod
    def infer_shapes(  # pyright: ignore[reportIncompatibleMethodOverride]
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[Attribute]:
        return cls.value_types(operands, props)

    def verify_(self) -> None:
        try:
            inferred = cast(list[Attribute], self.inferred_result_types())
        except ShapeError as e:
            raise VerifyException(str(e)) from e
        if len(inferred) != len(self.results):
            raise VerifyException(f"expected {len(inferred)} results, got {len(self.results)}")
        for i, (res, want) in enumerate(zip(self.results, inferred, strict=True)):
            # a result may be more general than inferred, or refined (a data-dependent
            # size bound when it is known: tilegraph.runtime.binding)
            if not (type_admits(res.type, want) or type_admits(want, res.type)):
                raise VerifyException(f"result #{i} has type {res.type}, expected {want}")


def sequence_operand(value: SSAValue | None, what: str) -> SequenceType:
    if value is None or not isinstance(value.type, SequenceType):
        got = "nothing" if value is None else str(value.type)
        raise ShapeError(f"{what} must be a sequence, got {got}")
    return value.type


def _position(position: np.ndarray | None, length: int, default: int, what: str) -> int:
    """An ONNX sequence position (negative counts from the back) as an index."""
    if position is None:
        return default
    p = int(np.asarray(position).reshape(-1)[0])
    if not -length <= p < length + (1 if default == length else 0):
        raise IndexError(f"{what} {p} is out of range for a sequence of {length}")
    return p + length if p < 0 else p


_POSITION_TYPES = ("int32", "int64")


def _check_position(value: SSAValue | None) -> None:
    t = tensor_type(value)
    # a one-element 1-D position is accepted, as onnxruntime does
    if t is not None and (t.num_elements() != 1 or t.dtype.value not in _POSITION_TYPES):
        raise ShapeError(f"the position must be an int32/int64 scalar, got {t}")


@irdl_op_definition
class SequenceConstructOp(ValueOp):
    """ONNX SequenceConstruct: the sequence of the operand tensors, in order."""

    name = "graph.sequence_construct"
    ONNX_OP: ClassVar = "SequenceConstruct"
    inputs = var_operand_def(TensorType)
    output = result_def(SequenceType)
    traits = traits_def(Pure())

    @classmethod
    def value_types(cls, operands, props):
        types = [require(tensor_type(v), "inputs") for v in operands]
        if not types:
            raise ShapeError("SequenceConstruct needs at least one tensor")
        element: Attribute = types[0]
        for t in types[1:]:
            element = join_types(element, t, "sequence elements")
        return [sequence_of(element)]

    def reference(self, *inputs):
        return ([np.asarray(x) for x in inputs],)


@irdl_op_definition
class SequenceEmptyOp(ValueOp):
    """ONNX SequenceEmpty: an empty sequence of ``dtype`` elements (float32 by default)."""

    name = "graph.sequence_empty"
    ONNX_OP: ClassVar = "SequenceEmpty"
    output = result_def(SequenceType)
    dtype = int_attr()
    DEFAULTS: ClassVar = {"dtype": 1}
    traits = traits_def(Pure())

    @classmethod
    def value_types(cls, operands, props):
        return [SequenceType(element_type_of(onnx_dtype_name(cls.read_attr(props, "dtype"))))]

    def reference(self, *inputs):
        return ([],)


@irdl_op_definition
class SequenceAtOp(ValueOp):
    """ONNX SequenceAt: the element at ``position`` (negative counts from the back)."""

    name = "graph.sequence_at"
    ONNX_OP: ClassVar = "SequenceAt"
    input_sequence = operand_def(SequenceType)
    position = operand_def(TensorType)
    tensor = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def value_types(cls, operands, props):
        seq = sequence_operand(operands[0], "input_sequence")
        _check_position(operands[1])
        return [element_tensor(seq, "SequenceAt")]

    def reference(self, *inputs):
        seq, position = inputs
        items = cast(list[np.ndarray], seq)
        return (items[_position(position, len(items), 0, "position")],)


@irdl_op_definition
class SequenceInsertOp(ValueOp):
    """ONNX SequenceInsert: ``tensor`` inserted at ``position`` (default: at the back)."""

    name = "graph.sequence_insert"
    ONNX_OP: ClassVar = "SequenceInsert"
    input_sequence = operand_def(SequenceType)
    tensor = operand_def(TensorType)
    position = opt_operand_def(TensorType)
    output_sequence = result_def(SequenceType)
    traits = traits_def(Pure())

    @classmethod
    def value_types(cls, operands, props):
        seq = sequence_operand(operands[0], "input_sequence")
        t = require(tensor_type(operands[1]), "tensor")
        _check_position(operands[2] if len(operands) > 2 else None)
        if t.element_type != seq.element_type:
            raise ShapeError(
                f"cannot insert a {t.element_type} tensor into a sequence of {seq.element_type}"
            )
        if seq.element_tensor is None:
            return [seq]
        return [join_types(seq, sequence_of(t), "SequenceInsert")]

    def reference(self, *inputs):
        seq, tensor, position = (list(inputs) + [None])[:3]
        items = list(cast(list[np.ndarray], seq))
        at = _position(position, len(items), len(items), "position")
        items.insert(at, np.asarray(tensor))
        return (items,)


@irdl_op_definition
class SequenceEraseOp(ValueOp):
    """ONNX SequenceErase: the sequence without the element at ``position`` (default: the
    last)."""

    name = "graph.sequence_erase"
    ONNX_OP: ClassVar = "SequenceErase"
    input_sequence = operand_def(SequenceType)
    position = opt_operand_def(TensorType)
    output_sequence = result_def(SequenceType)
    traits = traits_def(Pure())

    @classmethod
    def value_types(cls, operands, props):
        seq = sequence_operand(operands[0], "input_sequence")
        _check_position(operands[1] if len(operands) > 1 else None)
        return [seq]

    def reference(self, *inputs):
        seq, position = (list(inputs) + [None])[:2]
        items = list(cast(list[np.ndarray], seq))
        del items[_position(position, len(items), len(items) - 1, "position")]
        return (items,)


@irdl_op_definition
class SequenceLengthOp(ValueOp):
    """ONNX SequenceLength: the number of elements, an int64 scalar."""

    name = "graph.sequence_length"
    ONNX_OP: ClassVar = "SequenceLength"
    input_sequence = operand_def(SequenceType)
    length = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def value_types(cls, operands, props):
        sequence_operand(operands[0], "input_sequence")
        return [TensorType([], element_type_of("int64"))]

    def reference(self, *inputs):
        return (np.array(len(cast(list[np.ndarray], inputs[0])), np.int64),)


@irdl_op_definition
class SplitToSequenceOp(ValueOp):
    """ONNX SplitToSequence: ``input`` split along ``axis`` into the sequence of its parts —
    by the sizes in ``split`` (1-D), into parts of ``split`` elements (a scalar; the last
    may be smaller), or into single slices (no ``split``; ``keepdims=0`` drops the axis)."""

    name = "graph.split_to_sequence"
    ONNX_OP: ClassVar = "SplitToSequence"
    input = operand_def(TensorType)
    split = opt_operand_def(TensorType)
    output_sequence = result_def(SequenceType)
    axis = int_attr()
    keepdims = int_attr()
    DEFAULTS: ClassVar = {"axis": 0, "keepdims": 1}
    traits = traits_def(Pure())

    @classmethod
    def value_types(cls, operands, props):
        x = require(tensor_type(operands[0]), "input")
        split = tensor_type(operands[1]) if len(operands) > 1 else None
        axis = normalize_axis(cls.read_attr(props, "axis"), x.rank)
        dims: list[Dim] = list(x.origin_shape)
        if split is not None:
            if split.rank > 1 or split.dtype.value not in _POSITION_TYPES:
                raise ShapeError(f"split must be an int32/int64 scalar or 1-D tensor, got {split}")
            dims[axis] = UNKNOWN
        elif cls.read_attr(props, "keepdims"):
            dims[axis] = 1
        else:
            del dims[axis]
        return [sequence_of(TensorType(dims, x.element_type))]

    def reference(self, *inputs):
        x, split = (list(inputs) + [None])[:2]
        assert x is not None
        axis = int(self.attr("axis")) % max(x.ndim, 1)
        n = x.shape[axis]
        if split is None:
            parts = [np.take(x, [i], axis=axis) for i in range(n)]
            if not self.attr("keepdims"):
                parts = [np.squeeze(p, axis=axis) for p in parts]
            return (parts,)
        sizes = np.asarray(split).astype(np.int64)
        if sizes.ndim == 0:
            step = int(sizes)
            bounds = list(range(step, n, step))
        else:
            if int(sizes.sum()) != n:
                raise ValueError(f"split sizes {sizes.tolist()} do not add up to {n}")
            bounds = list(np.cumsum(sizes)[:-1])
        return (list(np.split(x, bounds, axis=axis)),)


@irdl_op_definition
class ConcatFromSequenceOp(ValueOp):
    """ONNX ConcatFromSequence: the elements concatenated along ``axis``, or stacked along a
    new axis at ``axis`` when ``new_axis`` is 1."""

    name = "graph.concat_from_sequence"
    ONNX_OP: ClassVar = "ConcatFromSequence"
    input_sequence = operand_def(SequenceType)
    concat_result = result_def(TensorType)
    axis = int_attr()
    new_axis = int_attr()
    DEFAULTS: ClassVar = {"new_axis": 0}
    traits = traits_def(Pure())

    @classmethod
    def value_types(cls, operands, props):
        element = element_tensor(sequence_operand(operands[0], "input_sequence"), "Concat")
        axis = cls.read_attr(props, "axis")
        if axis is None:
            raise ShapeError("ConcatFromSequence needs the 'axis' attribute")
        dims: list[Dim] = list(element.origin_shape)
        if cls.read_attr(props, "new_axis"):
            dims.insert(normalize_axis(axis, element.rank + 1), UNKNOWN)
        else:
            dims[normalize_axis(axis, element.rank)] = UNKNOWN
        return [TensorType(dims, element.element_type)]

    def reference(self, *inputs):
        items = cast(list[np.ndarray], inputs[0])
        axis = int(self.attr("axis"))
        if self.attr("new_axis"):
            return (np.stack(items, axis=axis),)
        return (np.concatenate(items, axis=axis),)


@irdl_op_definition
class OptionalOp(ValueOp):
    """ONNX Optional: ``input`` as an optional value, or an empty optional of ``type``."""

    name = "graph.optional"
    ONNX_OP: ClassVar = "Optional"
    input = opt_operand_def()
    output = result_def(OptionalType)
    type = opt_prop_def(Attribute)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure())

    @classmethod
    def value_types(cls, operands, props):
        value = operands[0] if operands else None
        declared = props.get("type")
        if value is None:
            if declared is None:
                raise ShapeError("an empty Optional needs the 'type' attribute")
            return [OptionalType(declared)]
        return [OptionalType(value.type)]

    def reference(self, *inputs):
        return (inputs[0] if inputs else None,)


@irdl_op_definition
class OptionalHasElementOp(ValueOp):
    """ONNX OptionalHasElement: whether an optional holds a value (a tensor or sequence
    always does; an absent input does not), a bool scalar."""

    name = "graph.optional_has_element"
    ONNX_OP: ClassVar = "OptionalHasElement"
    input = opt_operand_def()
    output = result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure())

    @classmethod
    def value_types(cls, operands, props):
        return [TensorType([], element_type_of("bool"))]

    def reference(self, *inputs):
        return (np.array(bool(inputs) and inputs[0] is not None),)


@irdl_op_definition
class OptionalGetElementOp(ValueOp):
    """ONNX OptionalGetElement: the value an optional holds (an error when it holds none);
    a tensor or sequence passes through."""

    name = "graph.optional_get_element"
    ONNX_OP: ClassVar = "OptionalGetElement"
    input = operand_def()
    output = result_def()
    traits = traits_def(Pure())

    @classmethod
    def value_types(cls, operands, props):
        value = operands[0]
        assert value is not None
        t = value.type
        return [t.element if isinstance(t, OptionalType) else t]

    def reference(self, *inputs):
        if inputs[0] is None:
            raise ValueError("the optional holds no value")
        return (inputs[0],)


@irdl_op_definition
class ValueIdentityOp(ValueOp):
    """ONNX Identity of a sequence or an optional (tensors use ``graph.identity``)."""

    name = "graph.value_identity"
    ONNX_OP: ClassVar = "Identity"
    input = operand_def()
    output = result_def()
    traits = traits_def(Pure())

    @classmethod
    def accepts_operand_types(cls, types: Sequence[Attribute | None]) -> bool:
        return any(t is not None and not isinstance(t, TensorType) for t in types)

    @classmethod
    def value_types(cls, operands, props):
        value = operands[0]
        assert value is not None
        return [value.type]

    def reference(self, *inputs):
        value: Any = inputs[0]
        return (list(value) if isinstance(value, list) else value,)


SEQUENCE_OPS: list[type[GraphOp]] = [
    SequenceConstructOp,
    SequenceEmptyOp,
    SequenceAtOp,
    SequenceInsertOp,
    SequenceEraseOp,
    SequenceLengthOp,
    SplitToSequenceOp,
    ConcatFromSequenceOp,
    OptionalOp,
    OptionalHasElementOp,
    OptionalGetElementOp,
    ValueIdentityOp,
]
