"""Replacements: a union-find of shape symbols driven by equality guards.

Each equality that held on the hints (``s0 == s1``, ``s0 == 3``, ``s2 == s0 + s1``) makes one
symbol redundant: it is replaced by a constant or an expression over the remaining symbols.
Priority follows GE's design, **constant > expression > symbol**: the representative of a
class is a constant when one is known, else an expression, else the oldest symbol.

An equality is first rewritten over representatives and brought to the canonical form
``diff == 0`` with ``diff = lhs - rhs`` expanded (so ``s0 + 1 == s1 + 2`` becomes
``s0 - s1 - 1 == 0``); then one symbol with coefficient +-1 is solved for
(``s0 == s1 + 1``). Preferred is the symbol whose solution is provably a positive integer
(shape symbols are positive, so ``s0 -> s1 + 1`` keeps what is known and ``s1 -> s0 - 1``
would lose it); among equals, the newest symbol. A lone symbol with any integer coefficient
(``2*s0 == 6``) is solved to its constant. Equalities with no such symbol
(``Mod(s0*s1, 2) == 0``) add no replacement.

No cycles: the solved symbol is a representative, and its solution is written over other
representatives only; every stored value is kept fully resolved, so :meth:`resolve` is a
single substitution.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy

from tilegraph.symbolic.reasoning import provably_positive, symbols_in


class ReplacementConflict(ValueError):
    """An equality contradicts the replacements already known (e.g. ``s0 == 2`` after
    ``s0 == 3``)."""


class Replacements:
    """Symbol -> constant or expression, kept fully resolved.

    ``age`` orders symbols by creation (larger = newer); it breaks ties so that the newer of
    two equal symbols is the one replaced.
    """

    def __init__(self, age: Callable[[sympy.Symbol], int] | None = None) -> None:
        self._map: dict[sympy.Symbol, sympy.Expr] = {}
        self._age = age or (lambda s: 0)

    def __contains__(self, symbol: sympy.Symbol) -> bool:
        return symbol in self._map

    def items(self) -> list[tuple[sympy.Symbol, sympy.Expr]]:
        return list(self._map.items())

    def resolve(self, expr: sympy.Basic) -> sympy.Basic:
        """``expr`` with every replaced symbol substituted by its representative."""
        if not self._map:
            return expr
        return expr.xreplace(self._map)  # pyright: ignore[reportArgumentType]

    def add_equality(
        self, lhs: sympy.Expr, rhs: sympy.Expr
    ) -> tuple[sympy.Symbol, sympy.Expr] | None:
        """Record ``lhs == rhs``; returns the new replacement or ``None`` if nothing new.

        Raises :class:`ReplacementConflict` if the equality is false given what is known.
        """
        diff = sympy.expand(self.resolve(sympy.sympify(lhs) - rhs))  # pyright: ignore[reportArgumentType]
        if diff == 0:
            return None
        if diff.is_number:
            raise ReplacementConflict(
                f"{sympy.sstr(lhs)} == {sympy.sstr(rhs)} contradicts known replacements "
                f"(difference {sympy.sstr(diff)})"
            )
        solved = self._solve(diff)
        if solved is None:
            return None
        symbol, value = solved
        self._insert(symbol, value)
        return symbol, value

    def _solve(self, diff: sympy.Expr) -> tuple[sympy.Symbol, sympy.Expr] | None:
        candidates: list[tuple[sympy.Symbol, sympy.Expr]] = []
        for s in symbols_in(diff):
            coeff = diff.coeff(s, 1) or sympy.Integer(0)  # None never happens for a symbol
            rest = sympy.expand(diff - coeff * s)
            if s in rest.free_symbols or not coeff.is_number:
                continue  # not linear in s
            if coeff in (1, -1):
                candidates.append((s, sympy.expand(-rest / coeff)))
            elif rest.is_number and coeff.is_integer:
                value = sympy.expand(-rest / coeff)
                if value.is_integer is not True:
                    raise ReplacementConflict(
                        f"{sympy.sstr(diff)} == 0 has no integer solution for {s.name}"
                    )
                candidates.append((s, value))
        if not candidates:
            return None
        # constant first (priority rule), then a provably positive solution, then newest
        return max(
            candidates,
            key=lambda c: (c[1].is_number, provably_positive(c[1]), self._age(c[0])),
        )

    def _insert(self, symbol: sympy.Symbol, value: sympy.Expr) -> None:
        if value.is_number and not (value.is_integer and value > 0):
            raise ReplacementConflict(
                f"{symbol.name} == {sympy.sstr(value)}, but shape symbols are positive integers"
            )
        for key, old in self._map.items():
            self._map[key] = sympy.expand(old.xreplace({symbol: value}))
        self._map[symbol] = value
