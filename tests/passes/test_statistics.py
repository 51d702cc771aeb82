"""Pass statistics, the rule catalogue plumbing and pass observers."""

from __future__ import annotations

import pytest

from tilegraph.passes.algebraic_simplify import AlgebraicSimplifyPass, selected_rules
from tilegraph.passes.context import make_context, parse_mlir
from tilegraph.passes.pipelines import observing_passes, run_pipeline
from tilegraph.passes.simplify.rule import SIMPLIFY_RULES, rule_catalog
from tilegraph.passes.statistics import collecting_statistics, pass_statistics, start_pass

CHAIN = """
func.func @f(%x: !layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf32> {
  %r = graph.relu %x : !layout.tensor<2x3xf32>
  %t = graph.tanh %r : !layout.tensor<2x3xf32>
  func.return %t : !layout.tensor<2x3xf32>
}
"""


def test_counters_accumulate_per_pass_inside_a_collector():
    with collecting_statistics() as collector:
        a = start_pass("p")
        a.add("ops-removed", 2)
        start_pass("p").add("ops-removed", 3)
        pass_statistics("q").maximum("largest", 4)
        pass_statistics("q").maximum("largest", 2)
    assert collector.as_dict() == {"p": {"ops-removed": 5}, "q": {"largest": 4}}
    assert collector.passes["p"].runs == 2
    text = collector.format()
    assert "p (ran 2x)" in text and "ops-removed  5" in text
    # membership asks the counters (it looped forever through __getitem__'s default)
    assert "ops-removed" in collector.passes["p"] and "missing" not in collector.passes["p"]


def test_counting_outside_a_collector_is_discarded():
    start_pass("p").add("x")
    with collecting_statistics() as collector:
        pass
    assert collector.as_dict() == {}


def test_observers_see_leaf_passes_of_nested_pipelines():
    module = parse_mlir(CHAIN)
    seen: list[str] = []
    with observing_passes(lambda p, m: seen.append(p.name)):
        run_pipeline("O0,infer-shapes,format{strategy=naive}", make_context(), module)
    assert seen[0] == "infer-shapes"
    assert "select-storage-format" in seen and "format" not in seen and "O0" not in seen
    assert seen[-1] == "format-report"


def test_unknown_rule_names_are_an_error_naming_them():
    with pytest.raises(ValueError, match="unknown rule.*no-such-rule"):
        AlgebraicSimplifyPass(only=("no-such-rule",))


def test_rule_selection_only_disable_fast_math():
    every = selected_rules((), (), fast_math=True)
    assert len(every) == len(SIMPLIFY_RULES)
    safe = selected_rules((), (), fast_math=False)
    assert all(not cls.INFO.fast_math for cls in safe)
    if SIMPLIFY_RULES:
        first = next(iter(SIMPLIFY_RULES))
        assert [c.INFO.name for c in selected_rules((first,), (), True)] == [first]
        assert first not in [c.INFO.name for c in selected_rules((), (first,), True)]


def test_catalogue_names_are_unique_and_complete():
    rules = rule_catalog()
    names = [r.name for r in rules]
    assert len(names) == len(set(names))
    for r in rules:
        assert r.pattern and r.result, r.name


def test_remarks_are_kept_per_pass_beside_the_counters():
    from tilegraph.passes.statistics import collecting_statistics, pass_statistics

    with collecting_statistics() as collector:
        first = pass_statistics("first")
        first.remark("kind-a", "node 'A'", "did a thing", n=1)
        pass_statistics("second").remark("kind-b", "", "did another")
        first.add("count")
    assert [r.message for r in collector.remarks()] == ["did a thing", "did another"]
    (remark,) = collector.remarks("first")
    assert remark.details == {"n": 1} and remark.kind == "kind-a"
    assert remark.format() == "node 'A': remark: [first] did a thing"
    assert collector.remarks("second")[0].format() == "unknown: remark: [second] did another"
    assert collector.as_dict() == {"first": {"count": 1}, "second": {}}
    # outside a collector, a remark goes nowhere
    pass_statistics("first").remark("kind-a", "", "lost")
    assert len(collector.remarks("first")) == 1
