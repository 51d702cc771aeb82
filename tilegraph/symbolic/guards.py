"""Guards: conditions on shape symbols that a compiled artifact relies on.

A guard is recorded when a shape decision is made on the *hints* (the sizes of the first
concrete inputs). It stores the condition **as it held** on the hints, the op that needed it
and why. Two kinds, as in GE's design:

- ``EXPECT``: a branch choice (broadcast ``s0 == s1`` vs ``s0 == 1``). Violated by new
  input sizes, the artifact is wrong for them but a recompile with the new sizes as hints fixes
  that.
- ``ASSERT``: a hard constraint (MatMul K equality, Reshape divisibility). Violated, the inputs
  are invalid for the model; recompiling does not help.

:func:`check_guards` evaluates guards on new bindings (symbol -> int) and returns the failed
ones, asserts first, each with a message naming the guard, the values, the op and where each
symbol came from.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import sympy
from sympy.logic.boolalg import BooleanFalse, BooleanTrue

from tilegraph.formats.dims import parse_expression
from tilegraph.symbolic.reasoning import symbols_in

Bindings = Mapping[str, int] | Mapping[sympy.Symbol, int]
"""Values of shape symbols, keyed by symbol or by symbol name."""


class GuardKind(enum.Enum):
    EXPECT = "expect"
    ASSERT = "assert"


class GuardError(ValueError):
    """A shape constraint does not hold: at compile time (an ``assert_`` false on the hints)
    or a guard that cannot be evaluated (unbound symbol)."""


@dataclass(frozen=True)
class Guard:
    """One recorded condition: ``cond`` held on the hints when ``op`` decided ``reason``."""

    kind: GuardKind
    cond: sympy.Basic
    op: str
    reason: str

    def __str__(self) -> str:
        return f"{self.kind.value} {condition_text(self.cond)} (op '{self.op}': {self.reason})"


@dataclass(frozen=True)
class GuardFailure:
    """A guard that is false under some bindings, with the values that made it false."""

    guard: Guard
    values: dict[str, int]
    message: str

    @property
    def kind(self) -> GuardKind:
        return self.guard.kind


class GuardFailures(list[GuardFailure]):
    """The failed guards of one :func:`check_guards` call: assert failures first.

    ``asserts`` (invalid inputs: report, do not recompile) and ``expects`` (recompile) split
    them by kind.
    """

    @property
    def asserts(self) -> list[GuardFailure]:
        return [f for f in self if f.kind is GuardKind.ASSERT]

    @property
    def expects(self) -> list[GuardFailure]:
        return [f for f in self if f.kind is GuardKind.EXPECT]


def condition_text(cond: sympy.Basic) -> str:
    """Readable text of a condition: ``s0 + s1 == s2``, ``Mod(s0*s1, 2) == 0``."""
    if isinstance(cond, sympy.Eq):
        return f"{sympy.sstr(cond.lhs)} == {sympy.sstr(cond.rhs)}"
    if isinstance(cond, sympy.Ne):
        return f"{sympy.sstr(cond.lhs)} != {sympy.sstr(cond.rhs)}"
    return sympy.sstr(cond)


def condition_from_text(text: str) -> sympy.Basic:
    """Inverse of :func:`condition_text`: ``"s0 + s1 == s2"``, ``"s0 != 1"``, ``"2 <= s0"``,
    ``"Mod(s0*s1, 2) == 0"``. Raises ``ValueError`` on anything else."""
    for op, build in _RELATIONS:
        if op in text:
            lhs, rhs = text.split(op, 1)
            return build(_expr(lhs), _expr(rhs), evaluate=False)
    raise ValueError(f"not a guard condition: '{text}' (expected a comparison)")


_RELATIONS = (
    ("==", sympy.Eq),
    ("!=", sympy.Ne),
    ("<=", sympy.Le),
    (">=", sympy.Ge),
    ("<", sympy.Lt),
    (">", sympy.Gt),
)


def _expr(text: str) -> sympy.Expr:
    return parse_expression(text, "guard expression")


def binding_map(bindings: Bindings) -> dict[str, int]:
    """Bindings keyed by symbol name, values as ``int`` (numpy integers are accepted)."""
    out: dict[str, int] = {}
    items: list[tuple[str | sympy.Symbol, int]] = list(bindings.items())
    for key, value in items:
        name = key if isinstance(key, str) else key.name
        out[name] = int(value)
    return out


def evaluate_condition(
    cond: sympy.Basic, values: Mapping[str, int], sources: Mapping[str, str] | None = None
) -> bool:
    """The truth of ``cond`` with each symbol replaced by its value.

    Raises :class:`GuardError` naming the symbol (and where it came from) when one is unbound.
    """
    symbols = symbols_in(cond)
    missing = [s for s in symbols if s.name not in values]
    if missing:
        where = sources or {}
        names = ", ".join(
            f"{s.name} ({where[s.name]})" if s.name in where else s.name for s in missing
        )
        raise GuardError(f"cannot evaluate {condition_text(cond)}: no value for {names}")
    result = cond.xreplace({s: sympy.Integer(values[s.name]) for s in symbols})
    if isinstance(result, BooleanTrue):
        return True
    if isinstance(result, BooleanFalse):
        return False
    raise GuardError(f"condition {condition_text(cond)} did not evaluate to true or false")


def _failure(guard: Guard, values: Mapping[str, int], sources: Mapping[str, str]) -> GuardFailure:
    used = [s.name for s in symbols_in(guard.cond)]
    shown = {name: values[name] for name in used}
    parts = [
        f"{name} = {value}" + (f" ({sources[name]})" if name in sources else "")
        for name, value in shown.items()
    ]
    consequence = (
        "the inputs violate the model's shape constraints"
        if guard.kind is GuardKind.ASSERT
        else "the compiled artifact does not fit these shapes: recompile"
    )
    message = (
        f"{guard.kind.value} guard {condition_text(guard.cond)} failed with "
        f"{', '.join(parts) or 'no symbols'}; needed by op '{guard.op}' ({guard.reason}); "
        f"{consequence}"
    )
    return GuardFailure(guard, shown, message)


def check_guards(
    guards: Iterable[Guard], bindings: Bindings, sources: Mapping[str, str] | None = None
) -> GuardFailures:
    """The guards that are false under ``bindings``, assert failures before expect failures.

    ``sources`` (symbol name -> "input 'x' axis 2") only makes messages more helpful.
    """
    values = binding_map(bindings)
    where = dict(sources or {})
    failed = [
        _failure(g, values, where) for g in guards if not evaluate_condition(g.cond, values, where)
    ]
    failed.sort(key=lambda f: f.kind is not GuardKind.ASSERT)
    return GuardFailures(failed)
