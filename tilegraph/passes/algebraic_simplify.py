"""``algebraic-simplify{disable=... only=... fast-math=false}``: the named rewrite rules.

Runs every rule registered in :mod:`tilegraph.passes.simplify` (one module per rule family)
as greedy rewrite patterns to a fixpoint. Each rule is semantics-preserving under the
legality conditions its :class:`~tilegraph.passes.simplify.rule.RuleInfo` states; rules that
change rounding (reassociation, distribution over constants) run only with
``fast-math=true``. Dead ops left behind are erased.

Options:

* ``disable=rule-a,rule-b`` — run every rule except these;
* ``only=rule-a,rule-b`` — run only these (``disable`` still subtracts);
* ``fast-math=true`` — also run the rules marked fast-math.

Unknown rule names are an error that names them. ``tilegraph-opt --list-rules`` prints the
catalogue. Statistics: ``rule.<name>`` — how often each rule fired.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

import tilegraph.passes.simplify as simplify_package
from tilegraph.dialects.graph.provenance import Located
from tilegraph.passes.registry import register_pass
from tilegraph.passes.simplify.rule import SIMPLIFY_RULES, SimplifyRule
from tilegraph.passes.statistics import start_pass


def load_rule_modules() -> None:
    """Import every rule-family module (each registers its rules on import)."""
    for info in pkgutil.iter_modules(simplify_package.__path__):
        importlib.import_module(f"{simplify_package.__name__}.{info.name}")


def _names(option: str | tuple[str, ...]) -> tuple[str, ...]:
    items = (option,) if isinstance(option, str) else option
    return tuple(n.strip() for n in items if n.strip())


def selected_rules(
    only: tuple[str, ...], disable: tuple[str, ...], fast_math: bool
) -> list[type[SimplifyRule]]:
    """The rule classes a configuration runs; ValueError names unknown rules."""
    load_rule_modules()
    unknown = sorted(set(only + disable) - set(SIMPLIFY_RULES))
    if unknown:
        raise ValueError(
            f"algebraic-simplify: unknown rule(s) {', '.join(unknown)} "
            "(tilegraph-opt --list-rules lists them)"
        )
    chosen = []
    for name, cls in SIMPLIFY_RULES.items():
        if only and name not in only:
            continue
        if name in disable or (cls.INFO.fast_math and not fast_math):
            continue
        chosen.append(cls)
    return chosen


@register_pass
@dataclass(frozen=True)
class AlgebraicSimplifyPass(ModulePass):
    """Apply the named algebraic rewrite rules to a fixpoint (see --list-rules)."""

    name = "algebraic-simplify"

    disable: str | tuple[str, ...] = ()
    only: str | tuple[str, ...] = ()
    fast_math: bool = False

    def __post_init__(self) -> None:
        selected_rules(_names(self.only), _names(self.disable), self.fast_math)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        rules = selected_rules(_names(self.only), _names(self.disable), self.fast_math)
        if not rules:
            return
        dispatch = RulesByOpType([cls(stats) for cls in rules])
        # the greedy applier also erases the ops a rewrite leaves dead
        PatternRewriteWalker(Located(GreedyRewritePatternApplier([dispatch]))).rewrite_module(op)


class RulesByOpType(RewritePattern):
    """Try only the rules whose ``ROOTS`` include the op's type, in registration order.

    With some eighty rules, asking each one about every op dominated the pass's time; the
    table per op type (built on first sight of a type) keeps the cost per op near one
    dictionary lookup when no rule applies.
    """

    def __init__(self, rules: list[SimplifyRule]):
        self.rules = rules
        self.by_type: dict[type[Operation], list[SimplifyRule]] = {}

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        kind = type(op)
        candidates = self.by_type.get(kind)
        if candidates is None:
            candidates = [r for r in self.rules if not r.ROOTS or issubclass(kind, r.ROOTS)]
            self.by_type[kind] = candidates
        for rule in candidates:
            rule.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


load_rule_modules()
