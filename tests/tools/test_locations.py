"""Locations end to end (issue 23): every op carries the ONNX node(s) it implements, from
import through the passes to the tile ops, and the reports name those nodes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import FusedLoc, NoneAttr, UnknownLoc

from tilegraph.cost_model.cycles import launch_trace, model_trace, simulate_module
from tilegraph.dialects.graph.provenance import (
    fused_location,
    node_location,
    onnx_nodes,
    op_label,
    value_label,
)
from tilegraph.frontend import load_onnx
from tilegraph.lowering.analysis.kernel_attrs import KERNEL_ATTR
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import lowering_pipeline, run_pipeline
from tilegraph.tools.run.cli import run

INPUTS = Path(__file__).parent.parent / "filecheck" / "tools" / "Inputs"
LOWERED = "O2,lower-graph-to-kernels,tile-kernels{platform=ascend910b}"


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> str:
    """Conv -> BatchNormalization -> Relu -> MaxPool -> Flatten -> Gemm, nodes named."""
    path = tmp_path_factory.mktemp("loc") / "m.onnx"
    subprocess.run([sys.executable, str(INPUTS / "make_located_onnx.py"), str(path)], check=True)
    return str(path)


def _node_names(path: str) -> set[str]:
    return {n.name for n in onnx.load(path).graph.node}


def test_every_tile_op_names_an_onnx_node(model):
    module = load_onnx(model)
    run_pipeline(LOWERED, make_context(), module)
    nodes = _node_names(model)
    kernels = [f for f in module.ops if isinstance(f, func.FuncOp) and KERNEL_ATTR in f.attributes]
    assert len(kernels) >= 3
    for kernel in kernels:
        for op in kernel.walk():
            assert set(onnx_nodes(op.location)) & nodes, (kernel.sym_name.data, op.name)
    launched = {
        n for op in module.walk() if op.name == "tile.launch" for n in onnx_nodes(op.location)
    }
    assert launched == nodes  # every node is implemented by some kernel, and named by it


def test_after_the_whole_lowering_pipeline_every_tile_op_still_names_the_model(model):
    """plan-memory's workspace and its views included: the host function's ops name the
    nodes (or graph inputs and initializers) whose tensors they hold."""
    module = load_onnx(model)
    ctx = make_context()
    run_pipeline("O2", ctx, module)
    run_pipeline(lowering_pipeline("ascend910b"), ctx, module)
    graph = onnx.load(model).graph
    names = _node_names(model) | {v.name for v in (*graph.input, *graph.initializer)}
    tile_ops = [op for op in module.walk() if op.name.startswith("tile.")]
    assert any(op.name == "tile.view" for op in tile_ops)  # plan-memory ran
    for op in tile_ops:
        assert set(onnx_nodes(op.location)) & names, op.name


def test_folding_and_fusion_fuse_the_locations(model):
    module = load_onnx(model)
    run_pipeline("O1", make_context(), module)
    (conv,) = [op for op in module.walk() if op.name == "graph.conv2d"]
    assert isinstance(conv.location, FusedLoc)
    assert onnx_nodes(conv.location) == ["Conv_0", "BN_1"]
    run_pipeline("format{strategy=ge},fuse-ops", make_context(), module)
    fused = [op for op in module.walk() if op.name == "graph.fused"]
    assert {"BN_1", "Conv_0", "Relu_2"} <= set(onnx_nodes(fused[0].location))


def test_op_and_value_labels_read_the_location(model):
    module = load_onnx(model)
    (relu,) = [op for op in module.walk() if op.name == "graph.relu"]
    assert op_label(relu) == "node 'Relu_2' (graph.relu)"
    assert value_label(relu.results[0]) == "%r of node 'Relu_2' (graph.relu)"
    relu.location = fused_location([node_location("A"), node_location("B"), UnknownLoc()])
    assert op_label(relu) == "nodes 'A', 'B' (graph.relu)"
    relu.location = UnknownLoc()
    assert op_label(relu) == "graph.relu (%r)"


def test_fused_location_flattens_and_deduplicates():
    a, b = node_location("A", "m.onnx"), node_location("B", "m.onnx")
    assert fused_location([]) == UnknownLoc()
    assert fused_location([UnknownLoc(), a]) == a
    nested = fused_location([a, fused_location([b, a])])
    assert nested == FusedLoc((a, b), NoneAttr())
    assert onnx_nodes(nested) == ["A", "B"]


def test_run_json_kernels_list_their_nodes(model, tmp_path):
    report = tmp_path / "r.json"
    assert run([model, "--json", str(report), "--no-format-report", "-q"]) == 0
    data = json.loads(report.read_text())
    kernels = data["kernels"]
    assert all(k["nodes"] for k in kernels)
    conv = [k for k in kernels if "Conv_0" in k["nodes"]]
    assert conv and {"BN_1", "Relu_2"} <= set(conv[0]["nodes"])
    per_kernel = data["cycles"]["per_kernel"]
    assert {n for k in per_kernel for n in k["nodes"]} == _node_names(model)


def test_cycle_report_and_trace_name_the_nodes(model):
    module = load_onnx(model)
    run_pipeline(LOWERED, make_context(), module)
    cycles = simulate_module(module)
    text = cycles.render(top=3)
    assert "ONNX nodes" in text and "Conv_0" in text
    events = model_trace(cycles)["traceEvents"]
    kernel_events = [e for e in events if e.get("cat") in ("cube", "vector")]
    assert any("Conv_0" in e["args"]["nodes"] for e in kernel_events)
    slowest = max(cycles.kernels, key=lambda k: k.total_us)
    trace = launch_trace(module, slowest.name)
    (process,) = [e for e in trace["traceEvents"] if e.get("name") == "process_name"]
    assert slowest.nodes[0] in process["args"]["name"]
