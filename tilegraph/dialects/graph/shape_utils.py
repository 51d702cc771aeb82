"""Helpers shared by shape functions: broadcasting, axis normalisation, result types."""

from __future__ import annotations

from collections.abc import Sequence

import sympy
from xdsl.ir import Attribute
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.graph.base import ShapeError, shape_text
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format, FormatError
from tilegraph.formats.dims import UNKNOWN, Dim, dim_to_text, is_unknown, normalize_dim
from tilegraph.symbolic.inference import decide
from tilegraph.symbolic.inference import require as require_condition


def broadcast_dim(a: Dim, b: Dim) -> Dim:
    """ONNX multidirectional broadcast of one dim pair (unknown stays unknown).

    Two dims that may differ (a symbol against a symbol or a constant) are decided on the
    hints of the active ShapeEnv, each branch an expect guard — equal dims (``s0 == s1``),
    then ``s0 == 1``, then ``s1 == 1`` — and dims that do not broadcast on the hints are a
    ShapeError; without an active env the result is unknown."""
    a, b = normalize_dim(a), normalize_dim(b)
    if a == 1:
        return b
    if b == 1:
        return a
    if is_unknown(a):
        return b if isinstance(b, int) else UNKNOWN
    if is_unknown(b):
        return a if isinstance(a, int) else UNKNOWN
    if isinstance(a, int) and isinstance(b, int):
        if a != b:
            raise ShapeError(f"dimensions {a} and {b} do not broadcast")
        return a
    if sympy.simplify(sympy.Integer(a) - b if isinstance(a, int) else a - b) == 0:
        return a
    equal = decide(sympy.Eq(a, b), "broadcast: equal dims")
    if equal is None:
        return UNKNOWN  # undecidable without guards
    if equal:
        return b if isinstance(b, int) else a
    if decide(sympy.Eq(a, 1), "broadcast: the left dim is 1"):
        return b
    if decide(sympy.Eq(b, 1), "broadcast: the right dim is 1"):
        return a
    raise ShapeError(f"dimensions {dim_to_text(a)} and {dim_to_text(b)} do not broadcast")


def require_equal_dims(a: Dim, b: Dim, what: str) -> None:
    """``a == b`` for a hard constraint (MatMul's K, Concat's other axes): a ShapeError when
    they differ statically or on the hints (an assert guard); unknown dims pass."""
    a, b = normalize_dim(a), normalize_dim(b)
    if is_unknown(a) or is_unknown(b):
        return
    if isinstance(a, int) and isinstance(b, int):
        if a != b:
            raise ShapeError(f"{what}: {a} != {b}")
        return
    require_condition(sympy.Eq(a, b), what)


def broadcast_shapes(*shapes: Sequence[Dim]) -> list[Dim]:
    """ONNX/numpy broadcasting of several shapes."""
    rank = max((len(s) for s in shapes), default=0)
    out: list[Dim] = [1] * rank
    for s in shapes:
        padded = [1] * (rank - len(s)) + list(s)
        try:
            out = [broadcast_dim(x, y) for x, y in zip(out, padded, strict=True)]
        except ShapeError as e:
            raise ShapeError(
                f"shapes {', '.join(shape_text(x) for x in shapes)} do not broadcast: {e}"
            ) from None
    return out


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """Map a possibly negative ONNX axis into ``[0, rank)``."""
    if not -rank <= axis < rank:
        raise ShapeError(f"{what} {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def result_like(
    template: TensorType, shape: Sequence[Dim], element_type: Attribute | None = None
) -> TensorType:
    """A result type with ``shape`` that keeps as much of the template's views as fits.

    Same rank: the origin format and the storage view are kept (an elementwise op on an
    NC1HWC0 tensor gives an NC1HWC0 tensor). Another rank: the dims no longer mean what the
    template's format says, so the result is ND.
    """
    elt = template.element_type if element_type is None else element_type
    if len(shape) == template.rank:
        try:
            return TensorType(
                shape,
                elt,
                template.origin_format,
                template.storage_format,
                groups=template.groups.data,
                c0=template.c0.data or None,
                reshape_type=template.reshape_type.data or None,
            )
        except (FormatError, VerifyException, ValueError):
            pass
    return TensorType(shape, elt, Format.ND)


def nd_result(
    template: TensorType, shape: Sequence[Dim], element_type: Attribute | None = None
) -> TensorType:
    """An ND result: for ops that change what the dims mean (reshape, transpose, gather)."""
    elt = template.element_type if element_type is None else element_type
    return TensorType(shape, elt, Format.ND)


def require(t: TensorType | None, what: str) -> TensorType:
    if t is None:
        raise ShapeError(f"missing {what}")
    return t


def same_element_type(types: Sequence[TensorType], what: str = "operands") -> Attribute:
    first = types[0].element_type
    for t in types[1:]:
        if t.element_type != first:
            raise ShapeError(f"{what} must have one element type, got {first} and {t.element_type}")
    return first
