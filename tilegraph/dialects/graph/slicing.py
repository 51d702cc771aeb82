"""ONNX Slice arithmetic of one axis: clamping, static lengths, symbolic lengths with guards."""

from __future__ import annotations

import sympy

from tilegraph.dialects.graph.operand_values import static_dim
from tilegraph.formats.dims import UNKNOWN, Dim, is_symbolic, normalize_dim
from tilegraph.symbolic.inference import decide
from tilegraph.symbolic.inference import require as require_condition

END_OF_DIM = 2**31 - 1
"""Slice ``ends`` at or above this (INT32_MAX, INT64_MAX as exporters write) mean "to the end"."""


def slice_bounds(dim: int, start: int, end: int, step: int) -> tuple[int, int, int]:
    """ONNX Slice clamping of one axis: (start, end, length); ``end`` may be -1 if step < 0."""
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    if step > 0:
        start = min(max(start, 0), dim)
        end = min(max(end, 0), dim)
        length = max(0, -(-(end - start) // step))
    else:
        start = min(max(start, 0), dim - 1)
        end = min(max(end, -1), dim - 1)
        length = max(0, -(-(start - end) // -step))
    return start, end, length


def slice_dim(dim: Dim, start: int, end: int, step: int) -> Dim:
    """The length of one sliced axis: exact for a static dim, the whole axis kept, an
    expression for a forward slice of a symbolic dim (with guards), else unknown."""
    n = static_dim(dim)
    if n is not None:
        return slice_bounds(n, start, end, step)[2]
    if step == 1 and start == 0 and end >= END_OF_DIM:
        return dim  # the whole axis, also for symbolic/unknown dims
    if step == -1 and (start == -1 or start >= END_OF_DIM) and end <= -END_OF_DIM:
        return dim  # the whole axis reversed
    if step > 0 and isinstance(dim, sympy.Expr) and is_symbolic(dim):
        return _symbolic_slice_dim(dim, start, end, step)
    return UNKNOWN


def _symbolic_slice_dim(n: sympy.Expr, start: int, end: int, step: int) -> Dim:
    """A forward slice of a symbolic axis: the start must lie in the axis (an assert guard:
    Slice ``[2:]`` of ``s0`` needs ``2 <= s0``); an end inside the axis and a non-empty
    result are branches on the hints (expect guards). Unknown without an active env."""
    if start >= 0:
        require_condition(sympy.Le(start, n), "Slice: the start lies in the axis")
        first: sympy.Expr = sympy.Integer(start)
    else:
        require_condition(sympy.Ge(n + start, 0), "Slice: the start lies in the axis")
        first = n + start
    if end >= END_OF_DIM:
        last: sympy.Expr = n
    elif end >= 0:
        inside = decide(sympy.Le(end, n), "Slice: the end lies in the axis")
        if inside is None:
            return UNKNOWN
        last = sympy.Integer(end) if inside else n
    else:
        inside = decide(sympy.Ge(n + end, 0), "Slice: the end lies in the axis")
        if inside is None:
            return UNKNOWN
        last = n + end if inside else sympy.Integer(0)
    nonempty = decide(sympy.Gt(last, first), "Slice: the result is not empty")
    if nonempty is None:
        return UNKNOWN
    return normalize_dim(sympy.ceiling((last - first) / step)) if nonempty else 0
