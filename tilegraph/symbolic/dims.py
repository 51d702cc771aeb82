"""Dimension values: a static ``int``, the unknown marker ``-1``, or a sympy expression.

Symbols are positive integers (``sympy.Symbol(name, integer=True, positive=True)``), so
``ceiling(s0/16)`` and similar expressions simplify the way shape arithmetic expects.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

import sympy

Dim = int | sympy.Expr
"""A dimension: ``int >= 0`` (static), ``UNKNOWN`` (-1) or a sympy expression."""

UNKNOWN = -1

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ALLOWED_FUNCS = {
    "ceiling": sympy.ceiling,
    "floor": sympy.floor,
    "Mod": sympy.Mod,
    "Max": sympy.Max,
    "Min": sympy.Min,
}


@cache
def shape_symbol(name: str) -> sympy.Symbol:
    """The symbol for a dimension name: a positive integer."""
    return sympy.Symbol(name, integer=True, positive=True)


def is_unknown_dim(d: object) -> bool:
    return d is None or (isinstance(d, int) and d < 0)


def is_symbolic(d: object) -> bool:
    return isinstance(d, sympy.Basic) and not isinstance(d, sympy.Integer)


def is_static(d: object) -> bool:
    return isinstance(d, int | sympy.Integer) and int(d) >= 0


def normalize_dim(d: object) -> Dim:
    """Canonical form: sympy integers become ``int``, ``None`` becomes ``UNKNOWN``."""
    if d is None:
        return UNKNOWN
    if isinstance(d, bool):
        raise TypeError(f"not a dimension: {d!r}")
    if isinstance(d, int):
        return d if d >= 0 else UNKNOWN
    if isinstance(d, sympy.Integer):
        return int(d)
    if isinstance(d, sympy.Expr):
        return d
    if hasattr(d, "__index__"):  # numpy integers
        return normalize_dim(int(d))  # type: ignore[arg-type]
    raise TypeError(f"not a dimension: {d!r}")


@lru_cache(maxsize=4096)
def dim_from_text(text: str) -> Dim:
    """Parse ``"?"``, ``"12"``, ``"s0"`` or an expression such as ``"2*s0 + 1"``.

    Raises ``ValueError`` on anything else; names in expressions become shape symbols.
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
        return "?" if d < 0 else str(d)
    return sympy.sstr(d)


def dims_compatible(a: Dim, b: Dim) -> bool:
    """False only when the two dims are provably different (unknown matches anything)."""
    a, b = normalize_dim(a), normalize_dim(b)
    if is_unknown_dim(a) or is_unknown_dim(b):
        return True
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    diff = sympy.simplify(sympy.Integer(a) - b if isinstance(a, int) else a - b)
    return not (diff.is_number and diff != 0)
