"""``tilegraph-run --estimate``: the cycle model's report without running anything, and
``--launch sunk|host`` (how the kernels are scheduled)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.tools.test_run import conv_model
from tilegraph.hardware import hardware_preset
from tilegraph.runtime.compiled import CompiledModel
from tilegraph.tools.run.cli import run


def _save(graph: onnx.GraphProto, path: Path) -> str:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return str(path)


def token_model(path: Path) -> str:
    """BERT's embedding lookup: int64 token ids index a (vocabulary, hidden) table."""
    table = numpy_helper.from_array(np.ones((30, 32), np.float32), "table")
    graph = helper.make_graph(
        [
            helper.make_node("Gather", ["table", "ids"], ["e"]),
            helper.make_node("Relu", ["e"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16, 32])],
        [table],
    )
    return _save(graph, path)


@pytest.fixture
def nothing_runs(monkeypatch):
    """Any attempt to run the compiled model fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("--estimate ran the model")

    monkeypatch.setattr(CompiledModel, "run", refuse)


def _total(out: str) -> float:
    found = re.search(r"^total ([0-9.]+) µs", out, re.MULTILINE)
    assert found is not None, out
    return float(found[1])


def test_estimate_prints_the_cycle_model_without_running(tmp_path, capsys, nothing_runs):
    report = tmp_path / "r.json"
    args = [conv_model(tmp_path / "c.onnx"), "--estimate", "--no-format-report"]
    assert run([*args, "--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "cycle model on ascend910b" in out
    assert "estimate only (nothing ran), inputs: x (1, 16, 8, 8)" in out
    assert "outputs:" not in out
    assert "sunk: scheduled on the device" in out
    data = json.loads(report.read_text())
    assert data["estimate"] is True and "outputs" not in data
    cycles = data["cycles"]
    assert cycles["launch_mode"] == "sunk"
    assert cycles["total"] == pytest.approx(_total(out), abs=0.1)
    assert cycles["launch_overhead_us"] == pytest.approx(
        cycles["launches"] * hardware_preset("ascend910b").task_overhead_us
    )


def test_estimate_on_another_platform_and_precision(tmp_path, capsys, nothing_runs):
    args = [conv_model(tmp_path / "c.onnx"), "--estimate", "--no-format-report"]
    assert run([*args, "--platform", "ascend310p", "--precision", "fp16"]) == 0
    out = capsys.readouterr().out
    assert "kernels on ascend310p (fp16)" in out and "cycle model on ascend310p" in out


def test_estimate_on_a_what_if_preset(tmp_path, capsys, nothing_runs):
    report = tmp_path / "r.json"
    args = [conv_model(tmp_path / "c.onnx"), "--estimate", "--no-format-report"]
    # spelled loosely, reported canonically: the module's target carries the overrides
    assert run([*args, "--platform", "ascend910b:UB=256kib,l1=1MiB", "--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "cycle model on ascend910b:l1=1MiB,ub=256KiB" in out
    assert json.loads(report.read_text())["cycles"]["platform"] == "ascend910b:l1=1MiB,ub=256KiB"


def test_a_bad_override_is_one_line_and_a_failure(tmp_path, capsys, nothing_runs):
    args = [conv_model(tmp_path / "c.onnx"), "--estimate", "--no-format-report"]
    assert run([*args, "--platform", "ascend910b:ub=100"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        "error: platform 'ascend910b:ub=100': override 'ub': UB must be a positive multiple "
        "of 32 B, got 100"
    )


def test_launch_host_charges_the_host_launch_per_kernel(tmp_path, capsys):
    args = [conv_model(tmp_path / "c.onnx"), "--estimate", "--no-format-report"]
    assert run(args) == 0
    sunk = capsys.readouterr().out
    assert run([*args, "--launch", "host"]) == 0
    hosted = capsys.readouterr().out
    assert "host launch" in hosted
    launches = int(re.search(r"\((\d+) launches", sunk)[1])  # type: ignore[index]
    hw = hardware_preset("ascend910b")
    extra = launches * (hw.launch_overhead_us - hw.task_overhead_us)
    assert _total(hosted) - _total(sunk) == pytest.approx(extra, abs=0.2)


def test_launch_applies_to_a_run_profile_too(tmp_path, capsys):
    args = [conv_model(tmp_path / "c.onnx"), "--no-format-report", "--profile"]
    assert run([*args, "--launch", "host"]) == 0
    out = capsys.readouterr().out
    assert "host launch" in out and "outputs:" in out


def test_integer_inputs_that_index_a_table_estimate_fine(tmp_path, capsys, nothing_runs):
    assert run([token_model(tmp_path / "t.onnx"), "--estimate", "--no-format-report"]) == 0
    out = capsys.readouterr().out
    assert "cycle model on ascend910b" in out and "ids (2, 16)" in out


def _symbolic(path: Path) -> str:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3, 8, 8])],
    )
    return _save(graph, path)


def test_a_dynamic_dim_needs_its_size(tmp_path, capsys, nothing_runs):
    model = _symbolic(tmp_path / "dyn.onnx")
    assert run([model, "--estimate", "--no-format-report"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == (
        "error: input 'x' axis 0 is dynamic (N): give its size with --shape x=... or --dim N=N"
    )
    assert run([model, "--estimate", "--no-format-report", "--dim", "N=4"]) == 0
    assert "x (4, 3, 8, 8)" in capsys.readouterr().out
    assert run([model, "--estimate", "--no-format-report", "--shape", "x=2,3,8,8"]) == 0
    assert "x (2, 3, 8, 8)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--compare"], "--compare"),
        (["--reference"], "--reference"),
        (["--save-outputs", "out"], "--save-outputs"),
        (["--shape", "x=1,16,8,8", "--shape", "x=1,16,8,8"], "a repeated --shape"),
    ],
)
def test_options_that_need_a_run_are_refused(tmp_path, capsys, extra, named):
    model = conv_model(tmp_path / "c.onnx")
    assert run([model, "--estimate", *extra]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: --estimate runs nothing: ") and named in err
