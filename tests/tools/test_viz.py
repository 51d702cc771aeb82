"""tilegraph-viz: the seed chain's TransData per strategy, fused clusters, DOT, errors."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tilegraph.passes.context import make_context, parse_mlir_file
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.tools.viz.cli import run
from tilegraph.tools.viz.picture import picture, render, to_dot, to_mermaid

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
    _check_geometry(p, render(_seed("O2"), "svg"))


def test_png_needs_matplotlib_and_an_output_file(tmp_path, capsys):
    assert run([str(SEED), "--format", "png"]) == 1
    assert "--format png needs -o FILE" in capsys.readouterr().err
    pytest.importorskip("matplotlib", reason="PNG output needs the plot extra")
    out = tmp_path / "g.png"
    assert run([str(SEED), "-p", "O2", "--format", "png", "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---- clusters on branching graphs: an attention block (O2 fuses it into groups) and an If ----


def _attention_block():
    """x -> Q/K/V MatMuls -> MatMul(Q, K^T) -> Mul(scale) -> Add(mask) -> Softmax ->
    MatMul(., V) -> MatMul(out proj) -> Add(x) -> LayerNorm, as ONNX."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    d, s = 16, 8
    weights = [
        numpy_helper.from_array(rng.standard_normal((d, d)).astype(np.float32), n)
        for n in ("wq", "wk", "wv", "wo")
    ]
    consts = [
        numpy_helper.from_array(np.array(d**-0.5, np.float32), "scale"),
        numpy_helper.from_array(np.triu(np.full((1, s, s), -1e4, np.float32), 1), "mask"),
        numpy_helper.from_array(np.ones(d, np.float32), "gamma"),
        numpy_helper.from_array(np.zeros(d, np.float32), "beta"),
    ]
    n = helper.make_node
    nodes = [
        n("MatMul", ["x", "wq"], ["q"]),
        n("MatMul", ["x", "wk"], ["k"]),
        n("MatMul", ["x", "wv"], ["v"]),
        n("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        n("MatMul", ["q", "kt"], ["scores"]),
        n("Mul", ["scores", "scale"], ["scaled"]),
        n("Add", ["scaled", "mask"], ["masked"]),
        n("Softmax", ["masked"], ["probs"], axis=-1),
        n("MatMul", ["probs", "v"], ["ctx"]),
        n("MatMul", ["ctx", "wo"], ["proj"]),
        n("Add", ["proj", "x"], ["res"]),
        n("LayerNormalization", ["res", "gamma", "beta"], ["y"], axis=-1),
    ]
    tensor = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes,
        "attention",
        [tensor("x", TensorProto.FLOAT, [1, s, d])],
        [tensor("y", TensorProto.FLOAT, [1, s, d])],
        weights + consts,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _branchy():
    """tanh -> If(then: relu, mul, exp; else: sigmoid, neg, abs) -> add(., tanh)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    n, tensor = helper.make_node, helper.make_tensor_value_info
    two = numpy_helper.from_array(np.array(2.0, np.float32), "two")
    then = helper.make_graph(
        [n("Relu", ["h"], ["t1"]), n("Mul", ["t1", "two"], ["t2"]), n("Exp", ["t2"], ["t3"])],
        "then",
        [],
        [tensor("t3", TensorProto.FLOAT, [4])],
        [two],
    )
    other = helper.make_graph(
        [n("Sigmoid", ["h"], ["e1"]), n("Neg", ["e1"], ["e2"]), n("Abs", ["e2"], ["e3"])],
        "else",
        [],
        [tensor("e3", TensorProto.FLOAT, [4])],
    )
    nodes = [
        n("Tanh", ["x"], ["h"]),
        n("If", ["c"], ["b"], then_branch=then, else_branch=other),
        n("Add", ["b", "h"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "branchy",
        [tensor("x", TensorProto.FLOAT, [4]), tensor("c", TensorProto.BOOL, [])],
        [tensor("y", TensorProto.FLOAT, [4])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _module(model, pipeline: str = ""):
    from tilegraph.frontend import load_onnx

    module = load_onnx(model)
    if pipeline:
        run_pipeline(pipeline, make_context(), module)
    return module


def _op_name(label: str) -> str:
    """The op a node label names: ``%r = graph.mul\\nw: ND`` -> ``graph.mul``."""
    head = label.split("\\n")[0].split("<br/>")[0]
    if head.startswith("TransData"):
        return "layout.trans_data"
    return head.split(" = ")[-1]


def _ir_clusters(module) -> list[tuple[str, list[str]]]:
    """From the IR, not the picture: each fused group's and each control-flow body's title
    and sorted op names (constants and yields aside)."""
    from tilegraph.dialects.entry import entry_function
    from tilegraph.dialects.graph import ConstantOp, FusedOp, YieldOp
    from tilegraph.tools.viz.picture import _group_title, _region_names

    out = []
    for op in entry_function(module).walk():
        if isinstance(op, FusedOp):
            regions = [(_group_title(op), op.body)]
        elif op.regions and op.name != "func.func":
            regions = list(zip(_region_names(op), op.regions, strict=True))
        else:
            continue
        for title, region in regions:
            ops = [o.name for o in region.block.ops if not isinstance(o, ConstantOp | YieldOp)]
            out.append((title, sorted(ops)))
    return sorted(out)


def _dot_clusters(text: str) -> dict[str, tuple[str, set[str]]]:
    """``subgraph cluster_*`` blocks: id -> (label, the node ids declared in it, nested too)."""
    found: dict[str, tuple[str, set[str]]] = {}
    stack: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if m := re.match(r"subgraph cluster_(\w+) \{", line):
            stack.append(m.group(1))
            found[m.group(1)] = ("", set())
        elif m := re.match(r'label="([^"]*)"; style=', line):
            found[stack[-1]] = (m.group(1), found[stack[-1]][1])
        elif line == "}" and stack:
            stack.pop()
        elif (m := re.match(r"(n\d+) \[label=", line)) and stack:
            for c in stack:
                found[c][1].add(m.group(1))
    assert not stack
    return found


def _mermaid_clusters(text: str) -> dict[str, tuple[str, set[str]]]:
    found: dict[str, tuple[str, set[str]]] = {}
    stack: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if m := re.match(r'subgraph (\w+) \["([^"]*)"\]', line):
            stack.append(m.group(1))
            found[m.group(1)] = (m.group(2), set())
        elif line == "end":
            stack.pop()
        elif (m := re.match(r"(n\d+)[\[(]", line)) and stack:
            for c in stack:
                found[c][1].add(m.group(1))
    assert not stack
    return found


def _svg_rects(text: str) -> tuple[dict[str, tuple], dict[str, tuple]]:
    """The SVG's node boxes and cluster frames by id, as (x0, y0, x1, y1)."""
    import xml.etree.ElementTree as ET

    ns = "{http://www.w3.org/2000/svg}"
    nodes, frames = {}, {}
    for r in ET.fromstring(text).iter(f"{ns}rect"):
        x, y = float(r.get("x", 0)), float(r.get("y", 0))
        box = (x, y, x + float(r.get("width", 0)), y + float(r.get("height", 0)))
        (nodes if r.get("class") == "node" else frames)[r.get("id", "")] = box
    return nodes, frames


def _inside(a, b) -> bool:
    return b[0] <= a[0] and b[1] <= a[1] and a[2] <= b[2] and a[3] <= b[3]


def _disjoint(a, b) -> bool:
    return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


def _check_geometry(p, svg: str) -> None:
    nodes, frames = _svg_rects(svg)
    assert set(nodes) == {n.id for n in p.all_nodes()}
    assert set(frames) == {c.id for c in p.all_clusters()}
    ids = sorted(nodes)
    for i, a in enumerate(ids):  # no two node boxes overlap
        assert all(_disjoint(nodes[a], nodes[b]) for b in ids[i + 1 :]), a
    for c in p.all_clusters():
        members = {n.id for n in c.all_nodes()}
        for node, box in nodes.items():
            if node in members:
                assert _inside(box, frames[c.id]), (c.label, node)
            else:
                assert _disjoint(box, frames[c.id]), (c.label, node)
        for inner in c.clusters:
            assert _inside(frames[inner.id], frames[c.id])
    from tilegraph.tools.viz.svg import layout

    for c in p.all_clusters():  # an edge within a cluster stays inside its frame
        members = {n.id for n in c.all_nodes()}
        x0, y0, x1, y1 = frames[c.id]
        for a, b, _, route in layout(p).edges:
            if a in members and b in members:
                assert all(x0 <= x <= x1 and y0 <= y <= y1 for x, y in route), (c.label, a, b)
    for siblings in [p.clusters, *(c.clusters for c in p.all_clusters())]:
        for i, a in enumerate(siblings):
            for b in siblings[i + 1 :]:
                assert _disjoint(frames[a.id], frames[b.id]), (a.label, b.label)


def _check_text(p, module) -> None:
    """DOT and Mermaid list each cluster with exactly its members; the members are the ops
    of the IR's fused groups and bodies."""
    members = {c.id: (c.label, {n.id for n in c.all_nodes()}) for c in p.all_clusters()}
    assert _dot_clusters(to_dot(p)) == members
    assert _mermaid_clusters(to_mermaid(p)) == members
    labels = {n.id: n.label for n in p.all_nodes()}
    drawn = sorted(
        (c.label, sorted(_op_name(labels[n.id]) for n in c.nodes))
        for c in p.all_clusters()
        if c.kind != "control"
    )
    assert drawn == _ir_clusters(module)


def test_attention_block_groups_are_clusters_of_exactly_their_ops():
    module = _module(_attention_block(), "O2")
    p = picture(module)
    assert len(p.clusters) >= 3  # fusion made several groups on the branching graph
    _check_text(p, module)
    _check_geometry(p, render(module, "svg"))


@pytest.mark.parametrize("pipeline", ["", "O2{disable=if-as-where}"])  # O2 keeping the If
def test_if_bodies_are_nested_clusters_between_head_and_end(pipeline):
    module = _module(_branchy(), pipeline)
    p = picture(module)
    (control,) = [c for c in p.all_clusters() if c.kind == "control"]
    assert control.label == "graph.if" and [c.label for c in control.clusters] == ["then", "else"]
    head, end = control.nodes
    assert head.label == "%b = graph.if" and end.label == "end graph.if"
    then_ops = [_op_name(n.label) for n in control.clusters[0].nodes]
    assert then_ops == ["graph.relu", "graph.mul", "graph.exp"]
    # the bodies read their arguments from the head and yield into the end
    into = {b for a, b, _ in p.edges if a == head.id}
    assert into == {control.clusters[0].nodes[0].id, control.clusters[1].nodes[0].id}
    assert {a for a, b, _ in p.edges if b == end.id} == {c.nodes[-1].id for c in control.clusters}
    _check_text(p, module)
    _check_geometry(p, render(module, "svg"))
    assert not picture(module, collapse=True).clusters
