"""Generated reference pages are up to date with the code."""

from __future__ import annotations

from docs.generators.generated_docs import PAGES, stale_pages


def test_generated_pages_are_current():
    assert stale_pages() == [], "stale generated docs: run make docs"


def test_every_imported_op_and_every_pass_has_an_entry():
    from tilegraph.frontend import supported_onnx_ops
    from tilegraph.passes.registry import builtin_passes

    ops = PAGES["onnx-ops.md"]()
    for op in supported_onnx_ops():
        assert f"\n| {op} | `graph." in ops, op
    assert "| Bernoulli, Multinomial, RandomNormal" in ops
    passes = PAGES["passes.md"]()
    for name in builtin_passes():
        assert f"\n## `{name}`\n" in passes, name
    assert '| `base-block` | `str` | `""` |' in passes
    assert "Statistics: ``split-kernels``" in passes


def test_op_reference_covers_every_op_with_its_facts():
    from tilegraph.dialects.graph import GRAPH_OPS, FusedOp, YieldOp
    from tilegraph.dialects.layout import TransDataOp
    from tilegraph.dialects.tile import TILE_OPS

    page = PAGES["ops.md"]()
    for cls in [*GRAPH_OPS, FusedOp, YieldOp, TransDataOp, *TILE_OPS]:
        assert f"`{cls.name}`" in page, cls.name
    header = (
        "| op | ONNX | operands → results | attributes | format | fusion | kernels | lowering |"
    )
    assert header in page
    tile_header = "| op | syntax | does | operands → results | attributes | pipe | memory scopes |"
    assert tile_header in page
    rows = {line.split(" | ")[0][2:]: line for line in page.splitlines() if line.startswith("| `")}
    conv = rows["`graph.conv2d`"]
    assert "| Conv |" in conv and '`auto_pad`: string = `"NOTSET"`' in conv
    assert "sensitive (NCHW), heavy" in conv and "OUT_ELEMWISE_FUSABLE" in conv
    assert "`cube`, `plain`" in conv and "cube: `conv.py`" in conv
    assert "- `graph.conv2d`: `cube`: NC1HWC0, FRACTAL_Z, NC1HWC0 → NC1HWC0" in page
    assert "vector: `vrelu` |" in rows["`graph.relu`"]
    assert "vector: `vmins`, `vmul`, `vrelu`, `vadd`" in rows["`graph.prelu`"]
    assert "vector: `reduction.py`" in rows["`graph.softmax`"]
    assert rows["`graph.einsum`"].endswith("| host |")
    assert "input, weight, bias? → output" in conv
    mmad = rows["`tile.mmad`"]
    assert "| M |" in mmad
    assert "the left operand: L0A; the right operand: L0B; the accumulator: L0C" in mmad
    assert "| by path (DMA paths) | a DMA path |" in rows["`tile.copy`"]
    assert "| MTE2 | the source: GM; the destination: L1, UB |" in rows["`tile.load_5hd`"]
    assert "each of args: GM" in rows["`tile.launch`"]
    assert "| its `src` pipe |" in rows["`tile.set_flag`"]
    # a family declared from one table shares a row
    assert any(line.startswith("| `tile.vadd`, `tile.vsub`") for line in page.splitlines())


def test_op_reference_anchors_resolve():
    import re

    from docs.generators.ops_doc import anchor

    page = PAGES["ops.md"]()
    anchors = {anchor(h) for h in re.findall(r"^#+ (.+)$", page, flags=re.M)}
    for target in re.findall(r"\]\(#([^)]+)\)", page):
        assert target in anchors, target
