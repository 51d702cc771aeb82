"""Generated reference pages are up to date with the code."""

from __future__ import annotations

from tilegraph.tools.onnx_ops_doc import DEFAULT_OUT, generate


def test_onnx_ops_table_is_current():
    assert DEFAULT_OUT.read_text() == generate(), (
        "docs/onnx-ops.md is stale: run python -m tilegraph.tools.onnx_ops_doc"
    )


def test_every_imported_op_has_a_row_and_refusals_have_reasons():
    from tilegraph.frontend import supported_onnx_ops

    text = generate()
    for op in supported_onnx_ops():
        assert f"\n| {op} | `graph." in text, op
    assert "| Bernoulli, Multinomial, RandomNormal" in text
