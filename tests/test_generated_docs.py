"""Generated reference pages are up to date with the code."""

from __future__ import annotations

from tilegraph.tools.generated_docs import PAGES, stale_pages


def test_generated_pages_are_current():
    assert stale_pages() == [], "stale generated docs: run make docs"


def test_every_imported_op_and_every_pass_has_an_entry():
    from tilegraph.frontend import supported_onnx_ops
    from tilegraph.passes.registry import tilegraph_passes

    ops = PAGES["onnx-ops.md"]()
    for op in supported_onnx_ops():
        assert f"\n| {op} | `graph." in ops, op
    assert "| Bernoulli, Multinomial, RandomNormal" in ops
    passes = PAGES["passes.md"]()
    for name in tilegraph_passes():
        assert f"\n## `{name}`\n" in passes, name
    assert '| `base-block` | `str` | `""` |' in passes
    assert "Statistics: ``split-kernels``" in passes
