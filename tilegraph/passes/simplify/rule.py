"""Named rewrite rules: the catalogue behind ``algebraic-simplify`` and ``--list-rules``.

Every rule has a :class:`RuleInfo` — its name, the pattern it matches, what it produces, the
legality caveat, the peers that have it, and the pass that implements it. Most rules are
:class:`SimplifyRule` rewrite patterns run by ``algebraic-simplify``; some are whole passes
(``constant-fold``, ``cse``, ``fold-batchnorm``, ``cancel-trans-data``) and are listed here
by :func:`declare_rule` so that one table shows the whole rule set.

A rule module declares its rules with the :func:`simplify_rule` class decorator::

    @simplify_rule
    class AddZero(SimplifyRule):
        INFO = RuleInfo(20, "add-zero", "x + 0", "x", "only when the result type equals x's")
        ROOTS = (AddOp,)

        def rewrite(self, op: AddOp, rewriter: PatternRewriter) -> None:
            ...

``rewrite`` runs only on ops of a ``ROOTS`` type; a rule that changed the IR is counted in
the pass statistics under ``rule.<name>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from tilegraph.passes.statistics import PassStatistics

SIMPLIFY_PASS = "algebraic-simplify"


@dataclass(frozen=True)
class RuleInfo:
    """What a rule does, for people: the catalogue entry printed by ``--list-rules``."""

    number: int | None
    """The rule's number in the project's rule catalogue (issue 12); None for extras."""
    name: str
    pattern: str
    result: str
    caveat: str = ""
    """When the rule must not fire, or what it changes (IEEE signed zeros, NaN, rounding)."""
    peers: str = ""
    """Peers that have the rule: OO onnxoptimizer, ORT, TVM, GE, OM onnx-mlir, PT Inductor."""
    fast_math: bool = False
    """Changes rounding: runs only under ``algebraic-simplify{fast-math=true}``."""
    implemented_by: str = SIMPLIFY_PASS


class SimplifyRule(RewritePattern):
    """A named rewrite of ``algebraic-simplify``; see the module docstring."""

    INFO: ClassVar[RuleInfo]
    ROOTS: ClassVar[tuple[type[Operation], ...]] = ()
    """Op types the rule starts matching from (empty: every op)."""

    def __init__(self, stats: PassStatistics | None = None):
        self.stats = stats

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if self.ROOTS and not isinstance(op, self.ROOTS):
            return
        acted_before = rewriter.has_done_action
        self.rewrite(op, rewriter)
        if rewriter.has_done_action and not acted_before and self.stats is not None:
            self.stats.add(f"rule.{self.INFO.name}")

    def rewrite(self, op: Any, rewriter: PatternRewriter) -> None:
        raise NotImplementedError


SIMPLIFY_RULES: dict[str, type[SimplifyRule]] = {}
"""``algebraic-simplify``'s rules by name, in registration order (the order they are tried)."""

RULE_CATALOG: dict[str, RuleInfo] = {}
"""Every rule of every pass by name (see :func:`rule_catalog`)."""


def declare_rule(info: RuleInfo) -> RuleInfo:
    """Add a rule implemented by a pass (not a pattern) to the catalogue."""
    if info.name in RULE_CATALOG:
        raise ValueError(f"rule '{info.name}' is declared twice")
    RULE_CATALOG[info.name] = info
    return info


def simplify_rule(cls: type[SimplifyRule]) -> type[SimplifyRule]:
    """Class decorator: register an ``algebraic-simplify`` rule and catalogue it."""
    declare_rule(cls.INFO)
    SIMPLIFY_RULES[cls.INFO.name] = cls
    return cls


def rule_catalog() -> list[RuleInfo]:
    """All rules of all passes, by catalogue number (extras last, by name)."""
    from tilegraph.passes.registry import import_all_builtin_passes

    import_all_builtin_passes()  # every pass module declares its rules on import
    return sorted(
        RULE_CATALOG.values(),
        key=lambda r: (r.number is None, r.number or 0, r.name),
    )


def format_rule_markdown(rules: list[RuleInfo]) -> str:
    """The catalogue as a Markdown table (docs/graph-optimizations.md embeds it)."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = [
        "| # | rule | pattern | result | caveat | peers | pass |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rules:
        number = "" if r.number is None else str(r.number)
        name = f"`{r.name}`" + (" (fast-math)" if r.fast_math else "")
        lines.append(
            f"| {number} | {name} | {cell(r.pattern)} | {cell(r.result)} | "
            f"{cell(r.caveat)} | {cell(r.peers)} | {r.implemented_by} |"
        )
    return "\n".join(lines)
