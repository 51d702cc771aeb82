"""The shape environment: symbols for unknown input dims, their hints, guards, replacements.

One :class:`ShapeEnv` serves one compilation. The importer (or a Session) asks it for a
dimension per unknown input axis (:meth:`ShapeEnv.create_symbol`), giving the size seen in the
first concrete inputs as the *hint*. Shape functions then decide branches on the hints with
:meth:`ShapeEnv.expect` / :meth:`ShapeEnv.assert_`, which record the guards the compiled
artifact relies on; :meth:`ShapeEnv.check` evaluates them on the sizes of a later call.

Every call of :meth:`create_symbol` makes a *source symbol* ``sK`` for that input axis, so the
sizes of a later call bind every guard. What the caller gets back depends on the mode:

- ``dynamic``: the symbol itself.
- ``duck``: the symbol of an earlier axis with the same hint, if any (as PyTorch does); the
  sharing is an expect guard ``sK == sJ``.
- ``static``: the hint as a constant; the guard ``sK == hint`` makes any other size recompile.

With ``specialize_zero_one`` a hint of 1 becomes the constant 1 (expect guard ``sK == 1``). A
hint of 0 always becomes 0: shape symbols are positive integers, so no symbol can stand for an
empty axis.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

import sympy
from sympy.logic.boolalg import BooleanFalse, BooleanTrue

from tilegraph.formats.dims import Dim, normalize_dim, shape_symbol
from tilegraph.symbolic.guards import (
    Bindings,
    Guard,
    GuardError,
    GuardFailures,
    GuardKind,
    check_guards,
    condition_text,
    evaluate_condition,
)
from tilegraph.symbolic.reasoning import Condition, FactKey, decide, relation_key, symbols_in
from tilegraph.symbolic.replacements import Replacements

Mode = Literal["dynamic", "duck", "static"]
MODES: tuple[Mode, ...] = ("dynamic", "duck", "static")

_INPUT_OP = "<inputs>"
"""The op name of guards recorded while creating symbols (no graph op needed them)."""


class ShapeEnv:
    """Symbols, hints, guards and replacements of one compilation (see the module docstring)."""

    def __init__(self, mode: Mode = "dynamic", specialize_zero_one: bool = True) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown shape mode '{mode}' (expected one of {', '.join(MODES)})")
        self.mode: Mode = mode
        self.specialize_zero_one = specialize_zero_one
        self.guards: list[Guard] = []
        self._hints: dict[sympy.Symbol, int] = {}
        self._sources: dict[sympy.Symbol, str] = {}
        self._order: dict[sympy.Symbol, int] = {}
        self._named: dict[str, sympy.Symbol] = {}
        self._duck: dict[int, sympy.Symbol] = {}
        self._counter = 0
        self.replacements = Replacements(age=lambda s: self._order.get(s, -1))

    # ---- symbols and hints -------------------------------------------------------------

    @property
    def symbols(self) -> list[sympy.Symbol]:
        """Every source symbol, in creation order."""
        return list(self._order)

    def source(self, symbol: sympy.Symbol | str) -> str:
        """Where a symbol came from, e.g. ``"input 'x' axis 2"``."""
        s = shape_symbol(symbol) if isinstance(symbol, str) else symbol
        if s not in self._sources:
            raise KeyError(f"symbol {s.name} was not created by this ShapeEnv")
        return self._sources[s]

    def sources(self) -> dict[str, str]:
        """Symbol name -> source, for messages."""
        return {s.name: src for s, src in self._sources.items()}

    def create_symbol(self, hint: int, source: str, name: str | None = None) -> Dim:
        """The dimension for one unknown input axis whose first concrete size is ``hint``.

        ``source`` says where the axis is (``"input 'x' axis 2"``) for error messages. ``name``
        (an ONNX dim_param) makes equal names the same dimension: a second axis with the same
        name returns the first one's dimension, and a different hint for it is a
        :class:`GuardError`.
        """
        hint = int(hint)
        if hint < 0:
            raise GuardError(f"{source}: size {hint} is negative")
        if name is not None and name in self._named:
            return self._same_named(name, hint, source)
        symbol = self._new_symbol(hint, source, name)
        if hint == 0 or (hint == 1 and self.specialize_zero_one):
            reason = f"{source} specialised to {hint}"
            self._record(
                GuardKind.EXPECT, sympy.Eq(symbol, hint, evaluate=False), _INPUT_OP, reason
            )
            return hint
        if self.mode == "static":
            reason = f"static shapes: {source} is {hint}"
            self._record(GuardKind.EXPECT, sympy.Eq(symbol, hint), _INPUT_OP, reason)
            return hint
        if self.mode == "duck" and name is None:
            earlier = self._duck.get(hint)
            if earlier is not None:
                reason = f"duck sizing: {source} has the size of {self._sources[earlier]}"
                self._record(GuardKind.EXPECT, sympy.Eq(symbol, earlier), _INPUT_OP, reason)
                return earlier
            self._duck[hint] = symbol
        return symbol

    def _new_symbol(self, hint: int, source: str, name: str | None) -> sympy.Symbol:
        if name is None:
            while (
                f"s{self._counter}" in self._named
                or shape_symbol(f"s{self._counter}") in self._order
            ):
                self._counter += 1
            name = f"s{self._counter}"
        symbol = shape_symbol(name)
        if symbol in self._order:
            raise GuardError(
                f"{source}: symbol name '{name}' is already used by {self._sources[symbol]}"
            )
        self._named[name] = symbol
        self._order[symbol] = len(self._order)
        self._hints[symbol] = hint
        self._sources[symbol] = source
        return symbol

    def _same_named(self, name: str, hint: int, source: str) -> Dim:
        symbol = self._named[name]
        if self._hints[symbol] != hint:
            raise GuardError(
                f"{source}: size {hint}, but dimension '{name}' is {self._hints[symbol]} "
                f"({self._sources[symbol]})"
            )
        if hint == 0:  # specialised on its first axis; zero never becomes a replacement
            return 0
        return self.simplify(symbol)

    def hint(self, expr: Dim | sympy.Basic) -> int:
        """The value of a dimension expression on the hints."""
        e = sympy.sympify(expr)
        missing = [s.name for s in symbols_in(e) if s not in self._hints]
        if missing:
            raise GuardError(f"no hint for {', '.join(missing)} in {sympy.sstr(e)}")
        value = e.xreplace({s: sympy.Integer(v) for s, v in self._hints.items()})
        if not isinstance(value, sympy.Integer):
            raise GuardError(f"{sympy.sstr(e)} is not an integer on the hints ({value})")
        return int(value)

    def hints(self) -> dict[str, int]:
        """Symbol name -> hint, for every source symbol."""
        return {s.name: v for s, v in self._hints.items()}

    # ---- guards ------------------------------------------------------------------------

    def expect(self, cond: Condition, *, op: str, reason: str) -> bool:
        """Decide a branch on the hints; record an expect guard with the condition as it held.

        A condition already decided by :meth:`static_check` is returned without a guard.
        """
        return self._evaluate(GuardKind.EXPECT, cond, op, reason)

    def assert_(self, cond: Condition, *, op: str, reason: str) -> bool:
        """Like :meth:`expect` for a hard constraint: an assert guard, and a
        :class:`GuardError` naming the op, the condition and the values when it is false."""
        return self._evaluate(GuardKind.ASSERT, cond, op, reason)

    def _evaluate(self, kind: GuardKind, condition: Condition, op: str, reason: str) -> bool:
        cond = sympy.sympify(condition)
        known = self.static_check(cond)
        value = known if known is not None else self._on_hints(cond)
        if kind is GuardKind.ASSERT and not value:
            raise GuardError(self._violation(cond, op, reason))
        if known is None:
            self._record(kind, cond if value else _negate(cond), op, reason)
        return value

    def _on_hints(self, cond: sympy.Basic) -> bool:
        return evaluate_condition(cond, self.hints(), self.sources())

    def _violation(self, cond: sympy.Basic, op: str, reason: str) -> str:
        names = symbols_in(cond)
        values = ", ".join(
            f"{s.name} = {self._hints[s]} ({self._sources[s]})" for s in names if s in self._hints
        )
        return f"op '{op}': {reason}: {condition_text(cond)} does not hold" + (
            f" ({values})" if values else ""
        )

    def _record(self, kind: GuardKind, cond: sympy.Basic, op: str, reason: str) -> None:
        guard = Guard(kind, cond, op, reason)
        if any(g.kind is kind and g.cond == cond for g in self.guards):
            return
        self.guards.append(guard)
        if isinstance(cond, sympy.Eq) and not _is_zero_specialisation(cond):
            self.replacements.add_equality(cond.lhs, cond.rhs)  # pyright: ignore[reportArgumentType]

    def guards_of(self, kind: GuardKind) -> list[Guard]:
        return [g for g in self.guards if g.kind is kind]

    def check(self, bindings: Bindings) -> GuardFailures:
        """The guards false under ``bindings`` (symbol or name -> size), asserts first."""
        return check_guards(self.guards, bindings, self.sources())

    # ---- replacements, simplification, static reasoning --------------------------------

    def simplify(self, expr: Dim | sympy.Basic) -> Dim:
        """``expr`` with the replacements applied (a constant comes back as ``int``)."""
        e = sympy.sympify(expr)
        return normalize_dim(sympy.expand(self.replacements.resolve(e)))

    def static_check(self, cond: Condition) -> bool | None:
        """``True``/``False`` when ``cond`` follows from the replacements, the recorded guards
        and the facts that symbols are positive integers (with lower bounds from guards such as
        ``2 <= s0``); ``None`` when it does not. Never records a guard."""
        resolved = self.replacements.resolve(sympy.sympify(cond))
        facts = set(self._facts())
        return decide(resolved, self._lower_bounds(facts), facts)  # pyright: ignore[reportArgumentType]

    def _facts(self) -> Iterator[FactKey]:
        for g in self.guards:
            if _is_zero_specialisation(g.cond):
                continue
            key = relation_key(self.replacements.resolve(g.cond))  # pyright: ignore[reportArgumentType]
            if key is not None:
                yield key

    def _lower_bounds(self, facts: set[FactKey]) -> dict[sympy.Symbol, int]:
        """Symbol -> smallest value allowed by facts ``s >= c`` / ``s > c`` (default 1)."""
        bounds: dict[sympy.Symbol, int] = {}
        for rel, diff in facts:
            symbols = symbols_in(diff)
            if rel not in ("ge", "gt") or len(symbols) != 1:
                continue
            (s,) = symbols
            rest = diff - s
            if rest.is_number and rest.is_integer:
                low = int(-rest) + (1 if rel == "gt" else 0)
                bounds[s] = max(bounds.get(s, 1), low)
        return bounds


def _negate(cond: sympy.Basic) -> sympy.Basic:
    if isinstance(cond, BooleanTrue | BooleanFalse):
        return ~cond
    if isinstance(cond, sympy.Rel):
        return cond.negated
    return sympy.Not(cond)


def _is_zero_specialisation(cond: sympy.Basic) -> bool:
    """``sK == 0`` of a zero-size input axis: true of the input, not of a positive symbol, so
    it must not feed replacements or facts."""
    return isinstance(cond, sympy.Eq) and cond.rhs == 0 and isinstance(cond.lhs, sympy.Symbol)
