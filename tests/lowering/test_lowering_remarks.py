"""``lower-graph-to-kernels``'s remarks: a fused group no strategy runs whole is reported
with its ops (and their ONNX nodes), the strategy that refused it and why, and the kernels
it became; a host kernel with its reason; and the counts of :func:`lowering_section`."""

from __future__ import annotations

from xdsl.dialects import func

from tilegraph.dialects.tile import LaunchOp
from tilegraph.lowering.analysis.kernel_attrs import kernel_unit
from tilegraph.lowering.conversion.graph_to_kernels_remarks import (
    HOST_KIND,
    SPLIT_KIND,
    lowering_lines,
    lowering_remarks,
    lowering_section,
)
from tilegraph.passes.context import make_context, parse_mlir
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.statistics import collecting_statistics

# A group made unlowerable on purpose: a ReLU and a Hardmax (which no strategy tiles) in
# one group, so that the elementwise strategy refuses it; then a sigmoid group that is
# lowered whole.
GROUP = """
func.func @main(%x: !layout.tensor<4x32xf32>) -> !layout.tensor<4x32xf32> {
  %h = graph.fused "fused_relu_hardmax_0" <elemwise> (%x) : (!layout.tensor<4x32xf32>) -> !layout.tensor<4x32xf32> {
  ^bb0(%x1: !layout.tensor<4x32xf32>):
    %r = graph.relu %x1 : !layout.tensor<4x32xf32> loc("Relu_1")
    %m = graph.hardmax %r {axis = -1} : !layout.tensor<4x32xf32> loc("Hardmax_2")
    graph.yield %m : !layout.tensor<4x32xf32>
  } loc(fused["Relu_1", "Hardmax_2"])
  %s = graph.fused "fused_sigmoid_1" <elemwise> (%h) : (!layout.tensor<4x32xf32>) -> !layout.tensor<4x32xf32> {
  ^bb0(%h1: !layout.tensor<4x32xf32>):
    %y = graph.sigmoid %h1 : !layout.tensor<4x32xf32> loc("Sigmoid_3")
    graph.yield %y : !layout.tensor<4x32xf32>
  } loc("Sigmoid_3")
  func.return %s : !layout.tensor<4x32xf32>
}
"""


def _lowered():
    module = parse_mlir(GROUP)
    with collecting_statistics() as stats:
        run_pipeline("set-target{platform=test},lower-graph-to-kernels", make_context(), module)
    return module, stats


def test_a_split_group_is_reported_with_its_nodes_strategy_reason_and_kernels():
    module, stats = _lowered()
    kernels = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    launched = [op.callee.root_reference.data for op in module.walk() if isinstance(op, LaunchOp)]
    (split,) = [r for r in lowering_remarks(stats) if r.kind == SPLIT_KIND]
    details = split.details
    assert details["group"] == "fused_relu_hardmax_0"
    assert details["ops"] == [
        {"op": "graph.relu", "nodes": ["Relu_1"]},
        {"op": "graph.hardmax", "nodes": ["Hardmax_2"]},
    ]
    assert details["strategy"] == "elementwise" and "graph.hardmax" in details["reason"]
    assert details["action"] == "split"
    # the kernels it names are the ones launched before the sigmoid's, with their units
    parts = [k["kernel"] for k in details["kernels"]]
    assert parts == launched[: len(parts)] and len(launched) == len(parts) + 1
    assert [k["unit"] for k in details["kernels"]] == [kernel_unit(kernels[p]) for p in parts]
    assert [k["unit"] for k in details["kernels"]] == ["vector", "host"]
    assert split.where == "nodes 'Relu_1', 'Hardmax_2'"
    assert split.format().startswith(
        "nodes 'Relu_1', 'Hardmax_2': remark: [lower-graph-to-kernels] group fused_relu_hardmax_0"
    )


def test_host_kernels_are_reported_with_their_reason():
    module, stats = _lowered()
    (host,) = [r for r in lowering_remarks(stats) if r.kind == HOST_KIND]
    fn = next(f for f in module.ops if isinstance(f, func.FuncOp) and kernel_unit(f) == "host")
    assert host.details["kernel"] == fn.sym_name.data
    assert host.details["ops"] == [{"op": "graph.hardmax", "nodes": ["Hardmax_2"]}]
    assert host.where == "node 'Hardmax_2'" and "graph.hardmax" in host.details["reason"]


def test_lowering_section_counts_and_lines():
    _, stats = _lowered()
    section = lowering_section(stats)
    assert section["kernels"] == {"cube": 0, "vector": 2, "host": 1, "mix": 0}
    assert section["groups_whole"] == 1 and section["groups_split"] == 1
    assert section["statistics"]["lower-graph-to-kernels"]["split-groups"] == 1
    lines = lowering_lines(section)
    assert lines[0] == (
        "lowering: kernels cube 0, vector 2, host 1; fused groups 1 whole, 1 split; 1 host kernels"
    )
    assert lines[1].startswith("  split: fused_relu_hardmax_0 (relu, hardmax) at nodes ")
    assert lowering_lines(section, limit=0) == lines[:1]


def test_a_peeled_epilogue_is_reported_as_what_it_made():
    """GPT-2's layer on ``test`` (8 KiB of UB): a gemm group whose epilogue runs across a
    reshape of its rows does not fit, and is peeled into the gemm and one vector kernel."""
    from tests.lowering.test_shared_views import CASES, _gpt2_layer

    module, _ = _gpt2_layer(*CASES["batch"])
    with collecting_statistics() as stats:
        run_pipeline("set-target{platform=test},O2,lower-graph-to-kernels", make_context(), module)
    peeled = [r for r in lowering_remarks(stats) if r.details.get("action") == "peeled-epilogue"]
    assert len(peeled) == stats.as_dict()["lower-graph-to-kernels"]["peeled-epilogues"] >= 2
    units = {f.sym_name.data: kernel_unit(f) for f in module.ops if isinstance(f, func.FuncOp)}
    for remark in peeled:
        parts = remark.details["kernels"]
        assert [p["unit"] for p in parts] == ["cube", "vector"]
        assert all(units[p["kernel"]] == p["unit"] for p in parts)
        assert remark.details["strategy"] == "cube" and remark.details["reason"]
        assert "peeled-epilogue into 2 kernels (cube 1, vector 1)" in remark.message
