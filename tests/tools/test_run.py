"""tilegraph-run as a user sees it: reports, comparisons, outputs, and clear failures."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tilegraph.tools.run.cli import run, safe_file_name


def has_row(text: str, *cells: str) -> bool:
    """Whether a table row of ``text`` starts with ``cells`` (columns space-separated)."""
    pattern = r"^ *" + r" +".join(re.escape(c) for c in cells) + r"( |$)"
    return re.search(pattern, text, re.M) is not None


def small_model(path: Path, op: str = "Relu") -> str:
    graph = helper.make_graph(
        [helper.make_node(op, ["in:0"], ["out/0"], name="n1")],
        "g",
        [helper.make_tensor_value_info("in:0", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("out/0", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return str(path)


def test_summary_and_compare(tmp_path, capsys):
    assert run([small_model(tmp_path / "m.onnx"), "--compare"]) == 0
    out = capsys.readouterr().out
    assert "graph.relu" in out
    assert "time per stage" in out
    assert has_row(out, "op", "count") and has_row(out, "graph.relu", "1")
    assert has_row(out, "output", "verdict", "max abs", "max rel")
    assert has_row(out, "out/0", "PASS", "0", "0")
    assert has_row(out, "output", "dtype", "shape") and has_row(out, "out/0", "float32", "[2, 3]")
    assert has_row(out, "stage", "ms") and has_row(out, "import")
    assert has_row(out, "strategy", "ops", "MB", "bound MB", "status")
    assert has_row(out, "optimal", "0", "0.000", "0.000", "optimal")


def test_given_inputs_save_outputs_and_json(tmp_path):
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    np.save(tmp_path / "x.npy", x)
    report = tmp_path / "r.json"
    code = run(
        [
            small_model(tmp_path / "m.onnx"),
            "--input", f"in:0={tmp_path / 'x.npy'}",
            "--save-outputs", str(tmp_path / "out"),
            "--json", str(report),
        ]
    )  # fmt: skip
    assert code == 0
    saved = np.load(tmp_path / "out" / "out_0.npy")
    np.testing.assert_array_equal(saved, np.maximum(x, 0))
    data = json.loads(report.read_text())
    assert data["ops"] == {"imported": 1, "after_pipeline": 1, "by_type": {"graph.relu": 1}}
    assert data["fusion"]["groups"] == 0
    assert data["outputs"]["out/0"]["shape"] == [2, 3]


def test_pb_inputs(tmp_path):
    x = np.ones((2, 3), np.float32)
    (tmp_path / "x.pb").write_bytes(numpy_helper.from_array(x).SerializeToString())
    assert run([small_model(tmp_path / "m.onnx"), "--input", f"in:0={tmp_path / 'x.pb'}"]) == 0


def test_safe_file_names():
    assert safe_file_name("gpu_0/softmax:0") == "gpu_0_softmax_0"
    assert safe_file_name("a.b-c") == "a.b-c"


def test_mismatch_exits_1(tmp_path, monkeypatch, capsys):
    import tilegraph.frontend.onnxruntime_oracle as oracle

    monkeypatch.setattr(oracle, "_run", lambda model, inputs: [np.full((2, 3), 7.0, np.float32)])
    assert run([small_model(tmp_path / "m.onnx"), "--compare"]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_mlir_input_and_pipeline(tmp_path, capsys):
    path = tmp_path / "m.mlir"
    path.write_text(
        "func.func @main(%x: !layout.tensor<2xf32>) -> !layout.tensor<2xf32> {\n"
        "  %y = graph.neg %x : !layout.tensor<2xf32>\n"
        "  func.return %y : !layout.tensor<2xf32>\n}\n"
    )
    assert run([str(path), "-p", "O1"]) == 0
    assert "pipeline: O1" in capsys.readouterr().out


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("tilegraph-run")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "tilegraph.tools.run"]
    env = {k: v for k, v in os.environ.items() if k != "TILEGRAPH_DEBUG"}
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env)


def _one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_cli_corrupt_file(tmp_path):
    path = tmp_path / "bad.onnx"
    path.write_bytes(b"\x08\x07garbage" * 10)
    line = _one_error_line(_cli(str(path)))
    assert "not a valid ONNX model" in line


def test_cli_unknown_op(tmp_path):
    line = _one_error_line(_cli(small_model(tmp_path / "m.onnx", op="Frobnicate")))
    assert "unsupported operators: Frobnicate (node 'n1')" in line


def test_cli_wrong_input_shape(tmp_path):
    np.save(tmp_path / "x.npy", np.ones((3, 3), np.float32))
    line = _one_error_line(
        _cli(small_model(tmp_path / "m.onnx"), "--input", f"in:0={tmp_path / 'x.npy'}")
    )
    assert "input 'in:0' has shape [3, 3], expected [2, 3]" in line


def test_cli_unknown_input_name(tmp_path):
    np.save(tmp_path / "x.npy", np.ones((2, 3), np.float32))
    line = _one_error_line(
        _cli(small_model(tmp_path / "m.onnx"), "--input", f"nope={tmp_path / 'x.npy'}")
    )
    assert "unknown input(s) ['nope']" in line


def test_cli_bad_suffix(tmp_path):
    path = tmp_path / "m.txt"
    path.write_text("hello")
    assert "expected a .onnx or .mlir file" in _one_error_line(_cli(str(path)))


def test_cli_malformed_mlir_points_at_the_place(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text("func.func @f( {")
    proc = _cli(str(path))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"error: {path}:1:15")
    assert "Expected argument or type" in proc.stderr


def conv_model(path: Path) -> str:
    w = numpy_helper.from_array(np.ones((16, 16, 3, 3), np.float32) * 0.1, "w")
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 8, 8])],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return str(path)


def test_json_reports_transdata_per_strategy(tmp_path):
    report = tmp_path / "r.json"
    assert run([conv_model(tmp_path / "c.onnx"), "--json", str(report)]) == 0
    transdata = json.loads(report.read_text())["transdata"]
    assert set(transdata) == {"naive", "ge", "optimal"}
    # one conv followed by relu: naive converts around the conv and leaves relu in NCHW
    # (2 conversions); ge and optimal carry relu in NC1HWC0 (still 2: input and output)
    assert transdata["naive"]["activations"] == 2
    assert transdata["ge"]["activations"] == 2
    assert transdata["optimal"]["activation_bytes"] <= transdata["ge"]["activation_bytes"]
    assert transdata["optimal"]["optimal_status"] == "optimal"
    assert transdata["optimal"]["optimal_bound"] >= transdata["optimal"]["optimal_cost"] - 1


def test_run_with_format_pipeline_compares(tmp_path, capsys):
    code = run([conv_model(tmp_path / "c.onnx"), "-p", "format{strategy=optimal}", "--compare"])
    assert code == 0
    out = capsys.readouterr().out
    assert "layout.trans_data" in out
    assert has_row(out, "y", "PASS")


def test_json_reports_ops_fusion_and_statistics(tmp_path):
    report = tmp_path / "r.json"
    model = conv_model(tmp_path / "c.onnx")
    assert run([model, "-p", "O2", "--no-format-report", "--json", str(report)]) == 0
    data = json.loads(report.read_text())
    # conv + relu imported; O2 converts in and out and fuses all four into one kernel
    assert data["ops"]["imported"] == 2
    assert data["ops"]["after_pipeline"] == 1
    assert data["fusion"] == {
        "groups": 1,
        "fused_ops": 4,
        "largest_group": 4,
        "transdata_absorbed": 2,
    }
    assert data["statistics"]["fuse-ops"]["groups"] == 1
    assert data["statistics"]["O1"]["rounds"] >= 1


def test_check_each_pass_names_the_pass(tmp_path, capsys):
    model = conv_model(tmp_path / "c.onnx")
    assert run([model, "-p", "O2", "--no-format-report", "--check-each-pass"]) == 0
    assert "check-each-pass:" in capsys.readouterr().out
    # the BN fold rounds differently: with zero tolerance it is named as the culprit
    source = Path(__file__).parents[1] / "filecheck" / "tools" / "check_each_pass.mlir"
    strict = ["--check-rtol", "0", "--check-atol", "0"]
    code = run([str(source), "-p", "dce,fold-batchnorm", "--check-each-pass", *strict])
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: check-each-pass: pass 'fold-batchnorm' changed output")


def test_check_each_pass_needs_a_pipeline(tmp_path, capsys):
    """With --reference there is no default pipeline (the tiled path defaults to O2)."""
    assert run([small_model(tmp_path / "m.onnx"), "--reference", "--check-each-pass"]) == 1
    assert "needs a pipeline" in capsys.readouterr().err


def cube_vector_model(path: Path) -> str:
    """Conv (bias) -> Relu -> MaxPool -> Softmax over the flattened result: cube and vector."""
    rng = np.random.default_rng(0)
    w = helper.make_tensor("w", TensorProto.FLOAT, [8, 3, 3, 3], rng.standard_normal(216))
    b = helper.make_tensor("b", TensorProto.FLOAT, [8], rng.standard_normal(8))
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Softmax", ["f"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 128])],
        initializer=[w, b],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return str(path)


@pytest.mark.parametrize("executor", ["fast", "interpret"])
def test_tiled_path_json_lists_kernels_and_host_ops(tmp_path, capsys, executor):
    report_path = tmp_path / "r.json"
    model = cube_vector_model(tmp_path / "m.onnx")
    args = [model, "--compare", "--executor", executor, "--json", str(report_path)]
    assert run([*args, "--no-format-report"]) == 0
    out = capsys.readouterr().out
    assert "kernels on ascend910b (origin)" in out and has_row(out, "y", "PASS")
    report = json.loads(report_path.read_text())
    assert report["target"] == "tiles" and report["executor"] == executor
    units = {k["unit"] for k in report["kernels"]}
    assert "cube" in units and "vector" in units
    conv = next(k for k in report["kernels"] if "graph.conv2d" in k["ops"])
    assert conv["unit"] == "cube" and conv["tiles"] >= 1
    assert report["host_ops"] == []
    assert all(set(k) >= {"name", "unit", "ops", "tiles"} for k in report["kernels"])
    memory = report["memory"]
    assert 0 < memory["lower_bound"] <= memory["peak"] <= memory["no_reuse"]
    assert memory["constants"] > 0 and "GM workspace:" in out


def test_tiled_path_reports_host_ops_with_reasons(tmp_path):
    """An op with no tile lowering (Hardmax) runs on the host and the report says why."""
    graph = helper.make_graph(
        [helper.make_node("Hardmax", ["x"], ["y"], axis=-1)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "m.onnx"))
    report_path = tmp_path / "r.json"
    args = [str(tmp_path / "m.onnx"), "--compare", "--json", str(report_path)]
    assert run([*args, "--no-format-report"]) == 0
    report = json.loads(report_path.read_text())
    assert report["host_ops"] and report["host_ops"][0]["op"] == "graph.hardmax"
    assert "hardmax" in report["host_ops"][0]["reason"]


def test_reference_flag_skips_the_tiles(tmp_path):
    report_path = tmp_path / "r.json"
    args = [cube_vector_model(tmp_path / "m.onnx"), "--reference", "-p", "O1"]
    assert run([*args, "--json", str(report_path), "--no-format-report"]) == 0
    report = json.loads(report_path.read_text())
    assert "kernels" not in report and report["pipeline"] == "O1"


def test_precision_fp16_within_its_tolerance(tmp_path, capsys):
    args = [cube_vector_model(tmp_path / "m.onnx"), "--precision", "fp16", "--compare"]
    assert run([*args, "--rtol", "1e-2", "--atol", "1e-3", "--no-format-report"]) == 0
    assert "kernels on ascend910b (fp16)" in capsys.readouterr().out


def test_symbolic_model_is_specialised_to_the_inputs_and_runs_on_the_tiles(tmp_path, capsys):
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "m.onnx"))
    assert run([str(tmp_path / "m.onnx"), "--dim", "N=2", "--no-format-report"]) == 0
    out = capsys.readouterr().out
    assert "kernels on ascend910b" in out and has_row(out, "y", "float32", "[2, 3]")


def test_profile_trace_and_json_cycles(tmp_path, capsys):
    model = cube_vector_model(tmp_path / "m.onnx")
    report_path, trace_path = tmp_path / "r.json", tmp_path / "t.json"
    args = [model, "--no-format-report", "--json", str(report_path)]
    assert run([*args, "--profile", "5", "--trace", str(trace_path)]) == 0
    out = capsys.readouterr().out
    assert "cycle model on ascend910b" in out and "total " in out and "by bound" in out
    cycles = json.loads(report_path.read_text())["cycles"]
    kernels = cycles["per_kernel"]
    assert {k["name"] for k in kernels} == {
        k["name"] for k in json.loads(report_path.read_text())["kernels"]
    }
    assert cycles["total"] >= sum(k["us"] for k in kernels) > 0
    events = json.loads(trace_path.read_text())["traceEvents"]
    threads = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert {"MTE2", "M", "FIX"} <= threads  # the pipes of the slowest (conv) kernel's core
    assert any(e.get("ph") == "X" and e.get("dur", 0) > 0 for e in events)


def test_trace_to_an_unwritable_path_is_one_error(tmp_path, capsys):
    model = cube_vector_model(tmp_path / "m.onnx")
    bad = tmp_path / "missing" / "t.json"
    assert run([model, "--no-format-report", "--trace", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: --trace") and "Traceback" not in err


def test_profile_of_a_model_that_is_not_lowered_says_why(tmp_path, capsys):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3, 8, 8])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path, trace = tmp_path / "dyn.onnx", tmp_path / "t.json"
    onnx.save(model, str(path))
    args = [str(path), "--no-format-report", "--profile", "--trace", str(trace)]
    assert run([*args, "--reference"]) == 0
    out = capsys.readouterr().out
    assert "cycle model: not run (--reference: no tiled kernels), no trace written" in out
    assert not trace.exists()
    assert run(args) == 0  # a dynamic batch (1 here) is specialised and lowered
    assert "cycle model on ascend910b" in capsys.readouterr().out and trace.exists()
