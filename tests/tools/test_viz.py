"""tilegraph-viz: the seed chain's TransData per strategy, fused clusters, DOT, errors."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tilegraph.passes.context import make_context, parse_mlir_file
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.tools.viz import picture, render, run, to_dot

SEED = Path(__file__).resolve().parents[2] / "examples" / "conv_block.mlir"


def _seed(pipeline: str):
    module = parse_mlir_file(SEED)
    run_pipeline(pipeline, make_context(), module)
    return module


def _kinds(p) -> dict[str, int]:
    counts: dict[str, int] = {}
    for n in p.all_nodes():
        counts[n.kind] = counts.get(n.kind, 0) + 1
    return counts


@pytest.mark.parametrize(("strategy", "transdata"), [("naive", 4), ("ge", 2)])
def test_the_seed_pictures_have_a_pair_per_conv_or_one_at_each_end(strategy, transdata):
    p = picture(_seed(f"format{{strategy={strategy}}}"))
    kinds = _kinds(p)
    assert kinds["transdata"] == transdata and kinds["heavy"] == 2
    assert kinds["input"] == 1 and kinds["output"] == 1
    text = render(_seed(f"format{{strategy={strategy}}}"), "mermaid")
    assert text.count("TransData<br/>") == transdata
    # the conv inputs are stored NC1HWC0 whatever the strategy: the edge says both views
    assert text.count("NCHW [1, 64, 112, 112] → NC1HWC0 [1, 4, 112, 112, 16]") >= 2
    assert "w1: FRACTAL_Z" in text and "w2: FRACTAL_Z" in text


def test_fused_groups_are_clusters_or_collapsed_nodes():
    module = _seed("O2")
    p = picture(module)
    assert len(p.clusters) == 2 and [len(c.nodes) for c in p.clusters] == [3, 3]
    collapsed = picture(module, collapse=True)
    assert not collapsed.clusters and _kinds(collapsed)["group"] == 2
    # every edge joins two drawn nodes
    ids = {n.id for n in p.all_nodes()}
    assert all(a in ids and b in ids for a, b, _ in p.edges)


def test_dot_is_well_formed():
    text = to_dot(picture(_seed("O2")))
    assert text.startswith("digraph tilegraph {") and text.count("{") == text.count("}")
    assert len(re.findall(r"subgraph cluster_", text)) == 2
    if shutil.which("dot") is None:
        pytest.skip("Graphviz dot is not installed: rendering not checked")
    done = subprocess.run(["dot", "-Tsvg"], input=text, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_cli_writes_a_file_and_reports_errors_in_one_line(tmp_path, capsys):
    out = tmp_path / "g.mmd"
    assert run([str(SEED), "-p", "format{strategy=naive}", "-o", str(out)]) == 0
    assert out.read_text().startswith("flowchart TD")
    assert run([str(tmp_path / "missing.mlir")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err


def test_svg_is_valid_xml_with_a_box_per_node_and_a_frame_per_group():
    import xml.etree.ElementTree as ET

    p = picture(_seed("O2"))
    root = ET.fromstring(render(_seed("O2"), "svg"))
    ns = "{http://www.w3.org/2000/svg}"
    rects = root.findall(f".//{ns}rect")
    assert len(rects) == len(list(p.all_nodes())) + len(p.clusters)
    assert len(root.findall(f".//{ns}polyline")) == len(p.edges)
    texts = "".join(t.text or "" for t in root.iter(f"{ns}text"))
    assert "TransData" in texts and "NC1HWC0 [1, 4, 112, 112, 16]" in texts


def test_png_needs_matplotlib_and_an_output_file(tmp_path, capsys):
    assert run([str(SEED), "--format", "png"]) == 1
    assert "--format png needs -o FILE" in capsys.readouterr().err
    pytest.importorskip("matplotlib", reason="PNG output needs the plot extra")
    out = tmp_path / "g.png"
    assert run([str(SEED), "-p", "O2", "--format", "png", "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
