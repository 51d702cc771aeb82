"""Deciding conditions on shape symbols without hints: the obvious facts.

Shape symbols are positive integers; a symbol may also have a larger known lower bound (from a
guard such as ``2 <= s0``). Writing each symbol as ``lower + t`` with ``t`` a non-negative
integer lets sympy's assumption system settle signs it could not settle on the symbols
themselves: ``s0 + s1 >= 2`` becomes ``t0 + t1 >= 0``, which is true.

Relations are compared by a *key* ``(relation, diff)`` meaning ``diff <relation> 0`` with
``diff`` expanded and its sign normalised, so ``2 <= s0`` and ``s0 >= 2`` (or ``s0 == s1``
and ``s1 == s0``) are the same fact.
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy
from sympy.logic.boolalg import BooleanFalse, BooleanTrue

FactKey = tuple[str, sympy.Expr]

Condition = sympy.Basic | bool
"""A condition on shape symbols: a sympy relational (``Eq(s0, s1)``, ``2 <= s0``) or a
boolean (Python or sympy)."""


def symbols_in(expr: sympy.Basic) -> list[sympy.Symbol]:
    """The symbols of an expression or condition, sorted by name."""
    return sorted(
        (s for s in expr.free_symbols if isinstance(s, sympy.Symbol)), key=lambda s: s.name
    )


def _shifted(expr: sympy.Expr, lower_bounds: Mapping[sympy.Symbol, int]) -> sympy.Expr:
    """``expr`` with every symbol ``s`` written as ``lower(s) + t_s``, ``t_s >= 0``."""
    subs = {
        s: lower_bounds.get(s, 1) + sympy.Dummy(f"t_{s.name}", integer=True, nonnegative=True)
        for s in symbols_in(expr)
    }
    return sympy.expand(expr.xreplace(subs))  # pyright: ignore[reportArgumentType]


def provably_positive(
    expr: sympy.Expr, lower_bounds: Mapping[sympy.Symbol, int] | None = None
) -> bool:
    """True when ``expr`` is positive for every value of its symbols allowed by the bounds."""
    return _shifted(sympy.sympify(expr), lower_bounds or {}).is_positive is True


def _sign_decides(rel: str, diff: sympy.Expr) -> bool | None:
    """Decide ``diff <rel> 0`` from the sign assumptions of ``diff`` alone."""
    if rel == "eq":
        return True if diff.is_zero is True else False if diff.is_zero is False else None
    if rel == "ne":
        return False if diff.is_zero is True else True if diff.is_zero is False else None
    if rel == "ge":
        return True if diff.is_nonnegative else False if diff.is_negative else None
    if rel == "gt":
        return True if diff.is_positive else False if diff.is_nonpositive else None
    return None


def relation_key(cond: sympy.Basic) -> FactKey | None:
    """The normalised ``(relation, diff)`` of a relational, or ``None`` for other booleans."""
    if not isinstance(cond, sympy.Rel):
        return None
    diff = sympy.expand(cond.lhs - cond.rhs)  # pyright: ignore[reportOperatorIssue]
    if isinstance(cond, sympy.Eq | sympy.Ne):
        if diff.could_extract_minus_sign():
            diff = -diff
        return ("eq" if isinstance(cond, sympy.Eq) else "ne", diff)
    if isinstance(cond, sympy.Ge):
        return ("ge", diff)
    if isinstance(cond, sympy.Gt):
        return ("gt", diff)
    if isinstance(cond, sympy.Le):
        return ("ge", -diff)
    if isinstance(cond, sympy.Lt):
        return ("gt", -diff)
    return None


def negated_key(key: FactKey) -> FactKey:
    rel, diff = key
    return {
        "eq": ("ne", diff),
        "ne": ("eq", diff),
        "ge": ("gt", -diff),  # not (d >= 0)  <=>  -d > 0
        "gt": ("ge", -diff),
    }[rel]


def decide(
    cond: sympy.Basic,
    lower_bounds: Mapping[sympy.Symbol, int],
    facts: set[FactKey],
) -> bool | None:
    """``True``/``False`` when ``cond`` follows from the bounds or from a known fact (a
    condition recorded as holding), ``None`` when it is not decided."""
    if isinstance(cond, BooleanTrue):
        return True
    if isinstance(cond, BooleanFalse):
        return False
    key = relation_key(cond)
    if key is None:
        return None
    if key in facts:
        return True
    if negated_key(key) in facts:
        return False
    rel, diff = key
    if diff.is_number:
        return _sign_decides(rel, diff)
    return _sign_decides(rel, _shifted(diff, lower_bounds))
