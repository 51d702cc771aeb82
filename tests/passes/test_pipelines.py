"""Named pipelines: O1's fixpoint loop and the fingerprint that ends it."""

from __future__ import annotations

import gc
import weakref

import pytest

from tilegraph.passes.context import make_context, parse_mlir
from tilegraph.passes.fingerprint import module_fingerprint
from tilegraph.passes.pipelines import O1Pipeline, run_pipeline
from tilegraph.passes.statistics import collecting_statistics

TWO_RELUS = """
func.func @f(%x: !layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf32> {
  %r = graph.relu %x : !layout.tensor<2x3xf32>
  %s = graph.relu %x : !layout.tensor<2x3xf32>
  %t = graph.sub %r, %s : !layout.tensor<2x3xf32>
  func.return %t : !layout.tensor<2x3xf32>
}
"""


def test_fingerprint_sees_wiring_not_names():
    a, b = parse_mlir(TWO_RELUS), parse_mlir(TWO_RELUS.replace("%r", "%q"))
    assert module_fingerprint(a) == module_fingerprint(b)
    swapped = parse_mlir(TWO_RELUS.replace("graph.sub %r, %s", "graph.sub %s, %s"))
    assert module_fingerprint(swapped) != module_fingerprint(a)


def test_o1_stops_when_a_round_changes_nothing():
    module = parse_mlir(TWO_RELUS)
    with collecting_statistics() as collector:
        run_pipeline("O1", make_context(), module)
    # round 1 merges the two relus (cse); round 2 finds nothing more to do
    assert collector.as_dict()["O1"]["rounds"] == 2
    assert str(module).count("graph.relu") == 1
    with collecting_statistics() as collector:
        run_pipeline("O1", make_context(), module)
    assert collector.as_dict()["O1"]["rounds"] == 1


def test_o1_rounds_are_bounded():
    module = parse_mlir(TWO_RELUS)
    with collecting_statistics() as collector:
        run_pipeline("O1{max-rounds=1}", make_context(), module)
    assert collector.as_dict()["O1"]["rounds"] == 1
    with pytest.raises(ValueError, match="max-rounds"):
        O1Pipeline(max_rounds=0)


def test_a_pipeline_collects_its_own_garbage_only():
    """After the passes, one collection of the youngest generation (what the pipeline
    allocated, the collector being off meanwhile) frees the cycles they left; no full
    collection traverses every older object."""
    from tilegraph.passes.pipelines import _collector_paused  # pyright: ignore[reportPrivateUsage]

    class Node:
        link: object = None

    generations: list[int] = []

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            generations.append(info["generation"])

    gc.collect()
    gc.callbacks.append(watch)
    try:
        with _collector_paused():
            node = Node()
            node.link = node  # a cycle: only the collector frees it
            alive = weakref.ref(node)
            del node
            assert alive() is not None and not gc.isenabled()
        assert alive() is None
    finally:
        gc.callbacks.remove(watch)
    assert gc.isenabled() and generations == [0]
