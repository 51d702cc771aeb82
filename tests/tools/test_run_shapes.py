"""tilegraph-run on dynamic models: --shape, --dim, --sweep, --dynamic and guard errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import onnx
import onnx.helper as oh
import pytest
from onnx import TensorProto, numpy_helper

from tilegraph.tools.run.cli import run


def recogniser(path: Path) -> str:
    """x[b, 3, 48, w] -> Conv -> Relu -> MaxPool 2x2 -> Transpose -> MatMul -> Reshape."""
    rng = np.random.default_rng(1)
    nodes = [
        oh.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        oh.make_node("Relu", ["c"], ["r"]),
        oh.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        oh.make_node("Transpose", ["p"], ["t"], perm=[0, 2, 3, 1]),
        oh.make_node("MatMul", ["t", "fc"], ["m"]),
        oh.make_node("Reshape", ["m", "shape"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w"),
        numpy_helper.from_array(rng.standard_normal((8, 16)).astype(np.float32), "fc"),
        numpy_helper.from_array(np.array([0, -1, 16], np.int64), "shape"),
    ]
    graph = oh.make_graph(
        nodes,
        "recogniser",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, ["b", 3, 48, "w"])],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    onnx.save(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)]), path)
    return str(path)


def matmul(path: Path) -> str:
    graph = oh.make_graph(
        [oh.make_node("MatMul", ["a", "b"], ["y"])],
        "mm",
        [
            oh.make_tensor_value_info("a", TensorProto.FLOAT, ["m", "k"]),
            oh.make_tensor_value_info("b", TensorProto.FLOAT, ["j", "n"]),
        ],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    onnx.save(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)]), path)
    return str(path)


def test_shape_runs_the_tiles_of_a_dynamic_model_and_matches(tmp_path, capsys):
    report = tmp_path / "r.json"
    model = recogniser(tmp_path / "rec.onnx")
    argv = [model, "--shape", "x=2,3,48,100", "--compare", "--no-format-report"]
    assert run([*argv, "--json", str(report)]) == 0
    data = json.loads(report.read_text())
    assert data["outputs"]["y"]["shape"] == [2, 1200, 16]
    assert data["compare_ok"] and data["kernels"]
    # the tiles are compiled for these sizes: every dim bound before the layout decisions
    assert any("w == 100" in g for g in data["guards"])
    assert run([*argv, "--reference", "--json", str(report)]) == 0
    data = json.loads(report.read_text())
    assert any("w - 2 >= 0" in g for g in data["guards"])  # MaxPool's window must fit


def test_an_unsized_dynamic_axis_is_a_clear_error(tmp_path, capsys):
    assert run([recogniser(tmp_path / "rec.onnx"), "--no-format-report"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == (
        "error: input 'x' axis 3 is dynamic (w): give its size with --shape x=... or --dim w=N"
    )
    assert run([recogniser(tmp_path / "rec.onnx"), "--dim", "w=64", "--reference"]) == 0


def test_sweep_reports_compiles_cache_hits_and_reasons(tmp_path, capsys):
    model = recogniser(tmp_path / "rec.onnx")
    report = tmp_path / "s.json"
    argv = [model, "--sweep", "x:0=1..8", "--dim", "w=32", "--reference", "--json", str(report)]
    assert run(argv) == 0
    out = capsys.readouterr().out
    assert "8 runs: 2 compiles, 6 cache hits" in out
    assert re.search(r"^ +run +shapes +artifact +ms +reason$", out, re.M)
    runs = [line.split() for line in out.splitlines() if re.match(r" +\d+ +x\[", line)]
    assert [r[0] for r in runs] == [str(k) for k in range(1, 9)]
    assert [r[5] for r in runs] == ["compile", "compile", *["cache"] * 6]
    reason = "expect guard b == 1 failed with b = 2 (input 'x' axis 0)"
    assert [r[0] for r in runs if reason in " ".join(r)] == ["2"]
    static = tmp_path / "t.json"
    argv = [model, "--sweep", "x:0=1..3", "--dim", "w=32", "--dynamic", "static"]
    assert run([*argv, "--reference", "--json", str(static)]) == 0
    assert json.loads(static.read_text())["compiles"] == 3


def test_repeated_shapes_run_in_turn_on_the_tiles(tmp_path, capsys):
    model = recogniser(tmp_path / "rec.onnx")
    argv = [model, "--shape", "x=2,3,48,64", "--shape", "x=2,3,48,40", "--compare"]
    assert run(argv) == 0
    out = capsys.readouterr().out
    assert "2 runs: 1 compiles, 1 cache hits, 2 tilings" in out
    assert re.search(r"^ +run +shapes +artifact +ms +onnxruntime +reason$", out, re.M)
    assert len(re.findall(r"^ +[12] +x\[2, 3, 48, \d+\] .* PASS( |$)", out, re.M)) == 2


@pytest.mark.parametrize(
    "extra",
    [
        [],  # one set: compiled with these sizes bound
        ["--shape", "a=2,4", "--shape", "b=4,3"],  # two sets: the second breaks the guard
    ],
)
def test_an_assert_guard_violation_exits_1_with_one_clear_line(tmp_path, capsys, extra):
    argv = [matmul(tmp_path / "mm.onnx"), *extra, "--shape", "a=2,4", "--shape", "b=5,3"]
    assert run(argv) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    if extra:  # the Session's symbolic artifact checks its assert guard on the second set
        assert "k == j" in err and "j = 5 (input 'b' axis 0)" in err and "k = 4" in err
    else:  # one run on the tiles: imported with the sizes bound, the MatMul itself refuses
        assert "node 'y' (MatMul)" in err and "K = 4" in err and "K = 5" in err


def test_malformed_shape_arguments(tmp_path, capsys):
    model = recogniser(tmp_path / "rec.onnx")
    assert run([model, "--shape", "x=2,three"]) == 1
    assert "--shape expects NAME=D0,D1,... (sizes), got 'x=2,three'" in capsys.readouterr().err
    assert run([model, "--sweep", "x=1..4"]) == 1
    assert "--sweep expects NAME:AXIS=LO..HI" in capsys.readouterr().err
    assert run([model, "--shape", "x=2,4,48,64"]) == 1
    assert "--shape x: axis 1 is 4, the model says 3" in capsys.readouterr().err


def test_dim_names_a_symbol_of_the_inputs_as_the_model_spells_it(tmp_path, capsys):
    """Paddle2ONNX names a batch ``DynamicDimension.0`` (imported as ``DynamicDimension_0``):
    both spellings size it; a name that is no input dim is an error listing the dims (it
    was ignored, and the batch silently ran at 1)."""
    graph = oh.make_graph(
        [oh.make_node("Relu", ["x"], ["y"])],
        "g",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, ["DynamicDimension.0", 4])],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = str(tmp_path / "paddle_batch.onnx")
    onnx.save(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)]), model)
    report = tmp_path / "r.json"
    for spelling in ("DynamicDimension.0", "DynamicDimension_0"):
        argv = [model, "--dim", f"{spelling}=3", "--no-format-report", "--json", str(report)]
        assert run(argv) == 0
        assert json.loads(report.read_text())["outputs"]["y"]["shape"] == [3, 4]
    capsys.readouterr()
    assert run([model, "--dim", "batch=3", "--no-format-report"]) == 1
    assert capsys.readouterr().err.strip() == (
        "error: --dim batch: no input dim is named 'batch'; the inputs' dims: DynamicDimension_0"
    )


def rate_and_shape_if(path: Path) -> str:
    """x[n, c, 8], sr: If (sr == 16000 and c == 1): Squeeze axis 1 (rank 2) else Identity
    (rank 3) — the branch depends on sr's value and x's shape (old Silero VAD's nesting)."""
    then_g = oh.make_graph(
        [oh.make_node("Squeeze", ["x", "one"], ["t"])], "then", [],
        [oh.make_tensor_value_info("t", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([1], np.int64), "one")],
    )  # fmt: skip
    else_g = oh.make_graph(
        [oh.make_node("Identity", ["x"], ["e"])], "else", [],
        [oh.make_tensor_value_info("e", TensorProto.FLOAT, None)],
    )  # fmt: skip
    nodes = [
        oh.make_node("Equal", ["sr", "rate"], ["is_16k"]),
        oh.make_node("Shape", ["x"], ["shape"], start=1, end=2),
        oh.make_node("Equal", ["shape", "one_channel"], ["one_c"]),
        oh.make_node("Squeeze", ["one_c"], ["one_c0"]),
        oh.make_node("And", ["is_16k", "one_c0"], ["both"]),
        oh.make_node("If", ["both"], ["y"], name="If", then_branch=then_g, else_branch=else_g),
    ]
    graph = oh.make_graph(
        nodes,
        "rate_and_shape",
        [
            oh.make_tensor_value_info("x", TensorProto.FLOAT, ["n", "c", 8]),
            oh.make_tensor_value_info("sr", TensorProto.INT64, []),
        ],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [
            numpy_helper.from_array(np.array(16000, np.int64), "rate"),
            numpy_helper.from_array(np.array([1], np.int64), "one_channel"),
        ],
    )
    onnx.save(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)]), path)
    return str(path)


def test_an_if_on_a_value_and_a_shape_needs_only_the_value_given(tmp_path, capsys):
    model = rate_and_shape_if(tmp_path / "m.onnx")
    sr = tmp_path / "sr.npy"
    np.save(sr, np.array(16000, np.int64))
    argv = [model, "--input", f"sr={sr}", "--shape", "x=2,1,8", "--compare", "--no-format-report"]
    assert run(argv) == 0
    assert re.search(r"y\s+PASS", capsys.readouterr().out)
    assert run([model, "--shape", "x=2,1,8", "--no-format-report"]) == 1  # sr's value decides
    assert "give sr with --input: their values decide" in capsys.readouterr().err
