"""tilegraph-run's ``lowering`` section: the fused groups the lowering could not run as one
kernel (ops with their ONNX nodes, the strategy that refused, its reason, the kernels made
instead) and the host kernels with their reasons, in ``--json`` and as text lines."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tilegraph.tools.run.cli import run


def block_tail_model(path: Path, tails: int = 1) -> str:
    """ConvNeXt's last block ``tails`` times over (its pointwise matmul, bias, layer scale,
    the permute back, the residual add and the global mean): fuse-ops makes one group of
    the epilogue and the mean, which no strategy tiles whole, and a Hardmax after each mean,
    which no strategy tiles at all."""
    rng = np.random.default_rng(0)
    inits, nodes, outputs = [], [], []
    for t in range(tails):
        inits += [
            numpy_helper.from_array(
                (rng.standard_normal((256, 64)) * 0.1).astype(np.float32), f"w{t}"
            ),
            numpy_helper.from_array(rng.standard_normal(64).astype(np.float32), f"bias{t}"),
            numpy_helper.from_array(rng.standard_normal(64).astype(np.float32), f"gamma{t}"),
        ]
        nodes += [
            helper.make_node("MatMul", ["hidden", f"w{t}"], [f"m{t}"], name=f"pw{t}"),
            helper.make_node("Add", [f"m{t}", f"bias{t}"], [f"b{t}"], name=f"bias_add{t}"),
            helper.make_node("Mul", [f"b{t}", f"gamma{t}"], [f"s{t}"], name=f"layer_scale{t}"),
            helper.make_node("Transpose", [f"s{t}"], [f"p{t}"], perm=[0, 3, 1, 2], name=f"perm{t}"),
            helper.make_node("Add", ["x", f"p{t}"], [f"r{t}"], name=f"residual{t}"),
            helper.make_node(
                "ReduceMean", [f"r{t}"], [f"g{t}"], axes=[2, 3], keepdims=0, name=f"mean{t}"
            ),
            helper.make_node("Hardmax", [f"g{t}"], [f"y{t}"], axis=-1, name=f"hardmax{t}"),
        ]
        outputs.append(helper.make_tensor_value_info(f"y{t}", TensorProto.FLOAT, [1, 64]))
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 8, 8]),
            helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [1, 8, 8, 256]),
        ],
        outputs,
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return str(path)


def test_json_lowering_section_names_split_groups_and_host_kernels(tmp_path, capsys):
    report_path = tmp_path / "r.json"
    model = block_tail_model(tmp_path / "m.onnx")
    args = [model, "--compare", "--no-format-report", "--json", str(report_path)]
    assert run(args) == 0
    report = json.loads(report_path.read_text())
    lowering = report["lowering"]
    kernels = lowering["kernels"]
    assert kernels["cube"] + kernels["vector"] + kernels["host"] == len(report["kernels"])
    assert lowering["groups_split"] == len(lowering["split_groups"]) == 1
    group = lowering["split_groups"][0]
    nodes = [n for op in group["ops"] for n in op["nodes"]]
    assert {"perm0", "residual0", "mean0"} <= set(nodes)
    assert group["strategy"] and group["reason"] and group["action"] == "split"
    # the kernels it names are the model's, each on a unit
    names = {k["name"]: k["unit"] for k in report["kernels"]}
    assert len(group["kernels"]) > 1
    assert all(names[k["kernel"]] == k["unit"] != "host" for k in group["kernels"])
    (host,) = lowering["host_kernels"]
    assert host["ops"] == [{"op": "graph.hardmax", "nodes": ["hardmax0"]}]
    assert host["reason"] == report["host_ops"][0]["reason"]
    assert "lower-graph-to-kernels" in lowering["statistics"]
    out = capsys.readouterr().out
    assert "fused groups 1 whole, 1 split; 1 host kernels" in out
    assert f"split: {group['group']} (" in out and f"'{nodes[0]}'" in out


def test_text_report_names_the_first_split_groups_verbose_all(tmp_path, capsys):
    model = block_tail_model(tmp_path / "m.onnx", tails=4)
    args = [model, "--no-format-report", "-q"]
    assert run(args) == 0
    out = capsys.readouterr().out
    assert out.count("  split: ") == 3
    assert "... 1 more split groups (--verbose lists all)" in out
    assert run([*args, "--verbose"]) == 0
    out = capsys.readouterr().out
    assert out.count("  split: ") == 4 and "more split groups" not in out
    for t in range(4):
        assert f"'perm{t}'" in out


def test_estimate_reports_the_lowering_too(tmp_path):
    report_path = tmp_path / "r.json"
    model = block_tail_model(tmp_path / "m.onnx")
    assert run([model, "--estimate", "--no-format-report", "--json", str(report_path)]) == 0
    assert json.loads(report_path.read_text())["lowering"]["groups_split"] == 1


def test_vector_kernels_that_run_dma_only_are_counted(tmp_path, capsys):
    """A constant Pad is a data-movement kernel (a DMA per row and a fill); the ReLU before
    it is vector work."""
    pads = numpy_helper.from_array(np.array([0, 0, 1, 3, 0, 0, 1, 3], np.int64), "pads")
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["r"], name="relu"),
            helper.make_node("Pad", ["r", "pads"], ["y"], mode="constant", name="pad"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 18, 38])],
        initializer=[pads],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "m.onnx"))
    report_path = tmp_path / "r.json"
    args = [str(tmp_path / "m.onnx"), "--no-format-report", "--json", str(report_path)]
    assert run(args) == 0
    report = json.loads(report_path.read_text())
    kernels = report["lowering"]["kernels"]
    pad = [k for k in report["kernels"] if k["ops"] == ["graph.pad"]]
    assert len(pad) == 1 and kernels["vector"] == 2 and kernels["dma"] == 1
    assert "vector 2 (1 DMA only)" in capsys.readouterr().out
