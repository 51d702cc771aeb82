"""The non-tensor value types of the graph dialect: ONNX sequences and optionals.

* ``!graph.seq<E>`` — a sequence of tensors. ``E`` is the element tensor type
  (``!layout.tensor<...>``, ND; dims that differ between elements are ``?``) or, when not even
  the elements' rank is known (``SequenceEmpty``), a bare element type such as ``f32``.
* ``!graph.opt<T>`` — an optional value: ``T`` (a tensor or sequence type) or nothing.

At run time a sequence is a Python list of numpy arrays and an optional is ``None`` or its
value. These values never carry a storage format: ops that take or give them are ND host ops.

:func:`join_types` is the one rule that merges the types a value takes on different paths
(the two branches of ``graph.if``, a loop-carried value before and after the body).
"""

from __future__ import annotations

from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition

from tilegraph.dialects.graph.base import ShapeError
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType, Format
from tilegraph.formats.dims import UNKNOWN, Dim


@irdl_attr_definition
class SequenceType(ParametrizedAttribute, TypeAttribute):
    """``!graph.seq<E>``: a sequence of tensors of element type ``E`` (see the module doc)."""

    name = "graph.seq"
    element: Attribute

    @property
    def element_tensor(self) -> TensorType | None:
        """The elements' tensor type, or None when their rank is unknown."""
        return self.element if isinstance(self.element, TensorType) else None

    @property
    def element_type(self) -> Attribute:
        """The scalar element type (``f32``, ``i64``, ...) of every element."""
        e = self.element
        return e.element_type if isinstance(e, TensorType) else e

    @property
    def dtype(self) -> DType:
        from tilegraph.dialects.element_types import dtype_of

        return dtype_of(self.element_type)


@irdl_attr_definition
class OptionalType(ParametrizedAttribute, TypeAttribute):
    """``!graph.opt<T>``: a value of type ``T`` (a tensor or a sequence) or nothing."""

    name = "graph.opt"
    element: Attribute


def sequence_of(element: Attribute) -> SequenceType:
    """The sequence type of elements of ``element`` (a tensor type, kept ND, or a bare
    element type)."""
    if isinstance(element, TensorType):
        element = TensorType(element.origin_shape, element.element_type, Format.ND)
    return SequenceType(element)


def element_tensor(seq: SequenceType, what: str) -> TensorType:
    """The sequence's element tensor type; ShapeError when only the element type is known."""
    t = seq.element_tensor
    if t is None:
        raise ShapeError(f"{what}: the rank of the sequence's elements is unknown")
    return t


def _join_dims(a: tuple[Dim, ...], b: tuple[Dim, ...]) -> list[Dim]:
    return [x if x == y else UNKNOWN for x, y in zip(a, b, strict=True)]


def join_types(a: Attribute, b: Attribute, what: str) -> Attribute:
    """The most precise type that both ``a`` and ``b`` are instances of: equal dims stay,
    differing dims become ``?``, a sequence whose elements differ in rank forgets the rank.

    Raises ShapeError when the two cannot be one value (element types, kinds, tensor ranks
    differ)."""
    if a == b:
        return a
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        if a.element_type != b.element_type:
            raise ShapeError(f"{what}: element types {a.element_type} and {b.element_type} differ")
        if a.rank != b.rank:
            raise ShapeError(f"{what}: ranks {a.rank} and {b.rank} differ")
        return TensorType(_join_dims(a.origin_shape, b.origin_shape), a.element_type, Format.ND)
    if isinstance(a, SequenceType) and isinstance(b, SequenceType):
        if a.element_type != b.element_type:
            raise ShapeError(
                f"{what}: sequence element types {a.element_type} and {b.element_type} differ"
            )
        ea, eb = a.element_tensor, b.element_tensor
        if ea is None or eb is None or ea.rank != eb.rank:
            return SequenceType(a.element_type)
        return SequenceType(join_types(ea, eb, what))
    if isinstance(a, OptionalType) or isinstance(b, OptionalType):
        inner_a = a.element if isinstance(a, OptionalType) else a
        inner_b = b.element if isinstance(b, OptionalType) else b
        return OptionalType(join_types(inner_a, inner_b, what))
    raise ShapeError(f"{what}: types {a} and {b} cannot be one value")


def type_admits(declared: Attribute, actual: Attribute) -> bool:
    """Whether a value of type ``actual`` may flow where ``declared`` is expected: the same
    kind and element type, every known dim of ``declared`` equal in ``actual``."""
    try:
        return join_types(declared, actual, "") == declared
    except ShapeError:
        return False


def is_value_type(t: Attribute) -> bool:
    """Whether ``t`` is a type a graph value can have (tensor, sequence or optional)."""
    return isinstance(t, TensorType | SequenceType | OptionalType)


VALUE_TYPES: list[type[ParametrizedAttribute]] = [SequenceType, OptionalType]
