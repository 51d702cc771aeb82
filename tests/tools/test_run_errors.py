"""tilegraph-run's error messages: plain words naming the input, node or op, no exception
class names, and internal errors told apart (issue 22)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tilegraph.dialects.graph.provenance import op_label
from tilegraph.frontend import load_onnx
from tilegraph.runtime.errors import is_internal, plain_words
from tilegraph.tools.run.cli import run

CLASS_PREFIX = re.compile(r"\b[A-Z]\w*(Error|Exception|Violation|Missing):")
TARGETS = [["--reference"], []]  # the graph-level interpreter, the tiled path


def _save(path: Path, nodes, inputs, outputs, initializers=()) -> str:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return str(path)


def gather_model(path: Path) -> str:
    """y = table[idx] with a 2-row table (node 'Gather_12')."""
    table = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "table")
    return _save(
        path,
        [helper.make_node("Gather", ["table", "idx"], ["y"], name="Gather_12")],
        [helper.make_tensor_value_info("idx", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3])],
        [table],
    )


def reshape_conv_model(path: Path) -> str:
    """A Conv whose input is reshaped to a shape given as an input's values: its dims are
    unknown until the model runs."""
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
    return _save(
        path,
        [
            helper.make_node("Reshape", ["x", "s"], ["r"], name="Reshape_1"),
            helper.make_node("Conv", ["r", "w"], ["y"], name="Conv_2", pads=[1, 1, 1, 1]),
        ],
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8]),
            helper.make_tensor_value_info("s", TensorProto.INT64, [4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [w],
    )


def _error(capsys, argv: list[str]) -> str:
    """The stderr of a tilegraph-run that must fail with exit code 1 and no class name."""
    assert run([*argv, "--no-format-report", "-q"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert "Traceback" not in err
    assert CLASS_PREFIX.search(err) is None, err
    return err


@pytest.mark.parametrize("target", TARGETS)
def test_out_of_range_gather_index_names_the_node(tmp_path, capsys, target):
    np.save(tmp_path / "idx.npy", np.array([0, 1, 8, 1], np.int64))
    err = _error(
        capsys,
        [gather_model(tmp_path / "m.onnx"), "--input", f"idx={tmp_path / 'idx.npy'}", *target],
    )
    assert "node 'Gather_12' (graph.gather)" in err
    # the graph level names the gather's axis; the tiled kernel (rows under 32 B, a vtake
    # on a [rows, 2, 3] view of the table) the size of the axis it indexes
    assert "index 8 is out of range for" in err and "of size 2" in err


@pytest.mark.parametrize("target", TARGETS)
def test_wrong_input_shape_names_the_input(tmp_path, capsys, target):
    np.save(tmp_path / "idx.npy", np.array([0, 1, 1], np.int64))
    err = _error(
        capsys,
        [gather_model(tmp_path / "m.onnx"), "--input", f"idx={tmp_path / 'idx.npy'}", *target],
    )
    assert "input 'idx' has shape [3]" in err and "--input" in err


@pytest.mark.parametrize("target", TARGETS)
def test_wrong_input_dtype_names_the_input(tmp_path, capsys, target):
    np.save(tmp_path / "idx.npy", np.array([0, 1, 1, 0], np.float32))
    err = _error(
        capsys,
        [gather_model(tmp_path / "m.onnx"), "--input", f"idx={tmp_path / 'idx.npy'}", *target],
    )
    assert "input 'idx'" in err and "float32" in err and "int64" in err


def test_unknown_dim_at_run_time_names_the_node_and_what_to_do(tmp_path, capsys):
    np.save(tmp_path / "s.npy", np.array([1, 3, 8, 8], np.int64))
    model = reshape_conv_model(tmp_path / "m.onnx")
    argv = [model, "--input", f"s={tmp_path / 's.npy'}", "--reference", "-p", "O2"]
    err = _error(capsys, argv)
    assert "node 'Conv_2' (graph.conv2d), operand #0 (%r)" in err
    assert "[?, ?, ?, ?]" in err and "unknown until the model runs" in err
    assert "no -p" in err


def test_a_size_from_an_input_value_is_bound_on_the_tiles(tmp_path, capsys):
    """The tiles (the default) observe the Reshape's data-dependent size on the inputs."""
    np.save(tmp_path / "s.npy", np.array([1, 3, 8, 8], np.int64))
    model = reshape_conv_model(tmp_path / "m.onnx")
    report = tmp_path / "r.json"
    argv = [model, "--input", f"s={tmp_path / 's.npy'}", "--compare", "--json", str(report)]
    assert run([*argv, "-q"]) == 0
    data = json.loads(report.read_text())
    assert data["compare_ok"] and data["target"] == "tiles"
    assert any("observed as [1, 3, 8, 8]" in line for line in data["bindings"])


def test_unknown_dims_run_on_the_reference_without_a_pipeline(tmp_path, capsys):
    """The advice above works: the same inputs run with --reference and no -p."""
    np.save(tmp_path / "s.npy", np.array([1, 3, 8, 8], np.int64))
    model = reshape_conv_model(tmp_path / "m.onnx")
    assert run([model, "--input", f"s={tmp_path / 's.npy'}", "--reference", "-q"]) == 0


def test_malformed_model_file(tmp_path, capsys):
    path = tmp_path / "bad.onnx"
    path.write_bytes(b"\x08\x07garbage" * 10)
    err = _error(capsys, [str(path)])
    assert f"{path}: not a valid ONNX model" in err and "export or download it again" in err


def test_internal_error_is_told_apart(tmp_path, capsys, monkeypatch):
    from tilegraph.dialects.graph import GRAPH_OPS

    gather = next(c for c in GRAPH_OPS if c.name == "graph.gather")

    def broken(self, *inputs):
        return None.shape  # a bug: AttributeError

    monkeypatch.setattr(gather, "reference", broken)
    monkeypatch.delenv("TILEGRAPH_DEBUG", raising=False)
    assert run([gather_model(tmp_path / "m.onnx"), "--reference", "--no-format-report"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("internal error: node 'Gather_12' (graph.gather): ")
    assert "please report" in err and "TILEGRAPH_DEBUG=1" in err
    assert CLASS_PREFIX.search(err) is None and "Traceback" not in err
    monkeypatch.setenv("TILEGRAPH_DEBUG", "1")
    with pytest.raises(Exception, match="graph.gather"):
        run([gather_model(tmp_path / "m.onnx"), "--reference", "--no-format-report"])


def _raised(f) -> BaseException:
    try:
        f()
    except Exception as e:
        return e
    raise AssertionError("expected an exception")


def test_numpy_failures_in_plain_words():
    index = _raised(lambda: np.zeros((2, 3))[np.array([8])])
    assert plain_words(index).startswith("index 8 is out of range for axis 0 of size 2")
    assert not is_internal(index)
    broadcast = _raised(lambda: np.zeros(3) + np.zeros(4))
    assert plain_words(broadcast).startswith("shapes [3] and [4] do not broadcast")
    reshape = _raised(lambda: np.zeros(12).reshape(5, 2))
    assert plain_words(reshape).startswith("cannot reshape 12 elements into shape [5, 2]")
    assert plain_words(_raised(lambda: {}["k"])) == "no entry for 'k'"
    assert is_internal(_raised(lambda: None.shape))  # type: ignore[attr-defined]
    assert plain_words(AssertionError()) == "assertion failed"


def test_ops_keep_their_onnx_node_through_a_clone(tmp_path):
    module = load_onnx(gather_model(tmp_path / "m.onnx"))
    for copy in (module, module.clone()):
        (gather,) = [op for op in copy.walk() if op.name == "graph.gather"]
        assert op_label(gather) == "node 'Gather_12' (graph.gather)"
