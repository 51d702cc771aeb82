"""What a dimension is: the one definition every layer uses.

A dim (:data:`Dim`) is one of

* a static size: an ``int >= 0``;
* unknown: the marker :data:`UNKNOWN` (``-1``, printed ``?``, as GE's ``-1`` dims);
* symbolic: a sympy expression over shape symbols, the positive-integer symbols that
  :func:`shape_symbol` makes (``s0``, ``2*s0 + 1``, ``ceiling(s0/16)``).

:func:`normalize_dim` is the gate: on input it also accepts ``None`` (unknown), numpy ints
and sympy integers, and returns the canonical form above (``None`` becomes ``UNKNOWN``, sympy
integers become ``int``). Anything else (bools, floats, ints below ``-1``, non-integer sympy
numbers, symbols that are not positive integers) raises :class:`DimError`, which names the
bad value. GE's ``[-2]`` (unknown *rank*) is a whole-shape marker, not a dim; it is handled
by :func:`tilegraph.formats.storage_shape`. User documentation: ``docs/formats-library.md``
("Dims").
"""

from __future__ import annotations

import operator
import re
from functools import cache, lru_cache
from typing import TypeAlias

import sympy

from tilegraph.formats.format import FormatError

Dim: TypeAlias = int | sympy.Expr
"""A dimension: ``int >= 0`` (static), ``UNKNOWN`` (-1) or a sympy expression."""

UNKNOWN = -1
"""The unknown-dim marker (printed ``?``)."""


class DimError(FormatError):
    """A value that is not a dimension (see the module docstring); the message names it.

    A :class:`~tilegraph.formats.FormatError`, so a ``ValueError`` too: every invalid
    request to the formats library raises FormatError, bad dims included."""


@cache
def shape_symbol(name: str) -> sympy.Symbol:
    """The symbol for a dimension name: a positive integer."""
    return sympy.Symbol(name, integer=True, positive=True)


def _invalid(d: object, why: str) -> DimError:
    return DimError(f"invalid dim {d!r}: {why}")


_WHAT_A_DIM_IS = "a dim is an int >= 0, -1 or None (unknown) or a sympy expression"


def _check_symbols(e: sympy.Expr) -> None:
    for s in e.free_symbols:
        if not (s.is_integer and s.is_positive):
            raise _invalid(
                e,
                f"its symbol {s} is not a positive integer; make dim symbols with "
                f"shape_symbol({str(s)!r})",
            )


def normalize_dim(d: object) -> Dim:
    """Check one dim and return its canonical form: ``int >= -1`` or a sympy expression.

    Accepts ints ``>= -1`` (numpy ints too), ``None`` (returned as ``UNKNOWN``), sympy
    integers (returned as ``int``) and sympy expressions over positive-integer symbols.
    :class:`DimError` naming the value for anything else: bools, floats, strings, ints below
    ``-1``, non-integer sympy numbers (``1/2``, ``nan``), symbols without the positive-integer
    assumptions.
    """
    if type(d) is int:  # the common case first
        if d >= UNKNOWN:
            return d
        raise _invalid(d, f"sizes are >= 0 and {UNKNOWN} (or None) is unknown")
    if d is None:
        return UNKNOWN
    if isinstance(d, bool):
        raise _invalid(d, _WHAT_A_DIM_IS)
    if isinstance(d, sympy.Basic):
        if d.is_Integer:
            return normalize_dim(int(d))  # type: ignore[arg-type]
        if isinstance(d, sympy.Expr) and d.is_number is not True:
            _check_symbols(d)
            return d
        raise _invalid(d, "a sympy dim is an integer or an expression over shape symbols")
    try:
        value = operator.index(d)  # type: ignore[arg-type]
    except TypeError:
        raise _invalid(d, _WHAT_A_DIM_IS) from None
    return normalize_dim(value)


def is_unknown(d: object) -> bool:
    """True for the unknown dim: ``None`` or ``-1`` (int, numpy int or sympy Integer)."""
    if d is None:
        return True
    if isinstance(d, sympy.Basic):
        return bool(d.is_Integer and d == UNKNOWN)
    if isinstance(d, bool):
        return False
    try:
        return operator.index(d) == UNKNOWN  # type: ignore[arg-type]
    except TypeError:
        return False


def is_static(d: object) -> bool:
    """True for a known size: an integer ``>= 0`` (int, numpy int or sympy Integer)."""
    if isinstance(d, sympy.Integer):
        return int(d) >= 0
    if isinstance(d, sympy.Basic | bool):
        return False
    try:
        return operator.index(d) >= 0  # type: ignore[arg-type]
    except TypeError:
        return False


def is_symbolic(d: object) -> bool:
    """True for a sympy expression that is not an integer (a symbolic dim)."""
    return isinstance(d, sympy.Expr) and not d.is_Integer


# ---- arithmetic ---------------------------------------------------------------------------


def _simplify(e: sympy.Expr) -> Dim:
    return int(e) if e.is_Integer else e  # type: ignore[arg-type]


def ceil_div(a: Dim, b: int) -> Dim:
    """``ceil(a / b)``: unknown stays ``UNKNOWN``, sympy gives ``ceiling(a / b)``."""
    if is_unknown(a):
        return UNKNOWN
    if isinstance(a, sympy.Expr):
        return _simplify(sympy.ceiling(a / b))
    assert isinstance(a, int)
    return -(-a // b)


def dim_mul(*dims: Dim) -> Dim:
    """Product of dims; ``UNKNOWN`` if any is unknown."""
    if any(is_unknown(d) for d in dims):
        return UNKNOWN
    product: int | sympy.Expr = 1
    for d in dims:
        product = product * d
    return _simplify(product) if isinstance(product, sympy.Expr) else product


def dims_compatible(a: Dim, b: Dim) -> bool:
    """False only when the two dims are provably different (unknown matches anything)."""
    a, b = normalize_dim(a), normalize_dim(b)
    if is_unknown(a) or is_unknown(b):
        return True
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    diff = sympy.simplify(sympy.Integer(a) - b if isinstance(a, int) else a - b)
    return not (diff.is_number and diff != 0)


# ---- text form ----------------------------------------------------------------------------

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ALLOWED_FUNCS = {
    "ceiling": sympy.ceiling,
    "floor": sympy.floor,
    "Mod": sympy.Mod,
    "Max": sympy.Max,
    "Min": sympy.Min,
}


@lru_cache(maxsize=4096)
def dim_from_text(text: str) -> Dim:
    """Parse ``"?"``, ``"12"``, ``"s0"`` or an expression such as ``"2*s0 + 1"``.

    Raises ``ValueError`` (:class:`DimError` when the text parses to something that is not a
    dim) on anything else; names in expressions become shape symbols.
    """
    text = text.strip()
    if text == "?":
        return UNKNOWN
    if text.isdigit():
        return int(text)
    if _IDENT.match(text):
        return shape_symbol(text)
    return normalize_dim(parse_expression(text, "dimension expression"))


def parse_expression(text: str, what: str = "expression") -> sympy.Expr:
    """A sympy expression over shape symbols (names become positive-integer symbols;
    ``ceiling``, ``floor``, ``Mod``, ``Max``, ``Min`` are functions). ValueError naming
    ``what`` on anything else."""
    names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)) - set(_ALLOWED_FUNCS)
    local = {n: shape_symbol(n) for n in names} | _ALLOWED_FUNCS
    try:
        expr = sympy.sympify(text, locals=local, rational=True)  # pyright: ignore[reportCallIssue, reportArgumentType]
    except (sympy.SympifyError, SyntaxError, TypeError) as e:
        raise ValueError(f"invalid {what} '{text.strip()}'") from e
    if not isinstance(expr, sympy.Expr):
        raise ValueError(f"invalid {what} '{text.strip()}'")
    return expr


def dim_to_text(d: Dim) -> str:
    """Inverse of :func:`dim_from_text` for printing (``?`` for unknown)."""
    d = normalize_dim(d)
    if isinstance(d, int):
        return "?" if d == UNKNOWN else str(d)
    return sympy.sstr(d)
