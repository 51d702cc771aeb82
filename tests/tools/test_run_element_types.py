"""tilegraph-run with inputs and outputs of the element types numpy lacks: ``.npy`` files of
``ml_dtypes`` arrays (``np.save`` writes their raw bytes) are read as the model's declared
type, outputs are saved in theirs; a file of another type is one clear error."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper
from onnx.reference import ReferenceEvaluator

from tilegraph.tools.run.cli import run
from tilegraph.tools.run.npy_files import load_npy


def relu_model(path: Path, onnx_type: int) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", onnx_type, [2, 3])],
        [helper.make_tensor_value_info("y", onnx_type, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.save(model, str(path))
    return model


@pytest.mark.parametrize("target", [[], ["--reference"]], ids=["tiles", "reference"])
@pytest.mark.parametrize(
    ("onnx_type", "np_type"),
    [(TP.BFLOAT16, ml_dtypes.bfloat16), (TP.INT4, ml_dtypes.int4),
     (TP.FLOAT8E5M2, ml_dtypes.float8_e5m2)],  # e5m2: a .npy np.load itself refuses
)  # fmt: skip
def test_an_npy_input_of_the_declared_type_runs_and_saves_that_type(
    tmp_path, onnx_type, np_type, target
):
    model = relu_model(tmp_path / "m.onnx", onnx_type)
    x = np.array([[-1.5, 2.0, -3.0], [4.0, -0.5, 6.0]], np.float32).astype(np_type)
    np.save(tmp_path / "x.npy", x)
    args = [str(tmp_path / "m.onnx"), "--input", f"x={tmp_path / 'x.npy'}"]
    assert run([*args, "--save-outputs", str(tmp_path / "out"), *target]) == 0
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    saved = load_npy(tmp_path / "out" / "y.npy")  # raw bytes, as np.save wrote them
    np.testing.assert_array_equal(saved.view(np.uint8), np.asarray(want).view(np.uint8))


def test_an_npy_input_of_another_type_is_one_error_naming_input_and_type(tmp_path, capsys):
    relu_model(tmp_path / "m.onnx", TP.BFLOAT16)
    np.save(tmp_path / "x.npy", np.ones((2, 3), np.float32))
    assert run([str(tmp_path / "m.onnx"), "--input", f"x={tmp_path / 'x.npy'}"]) == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1
    assert lines[0].startswith(
        "error: input 'x' has dtype float32, expected bfloat16 (ONNX BFLOAT16); give an array"
    )


def test_random_inputs_are_of_the_declared_type(tmp_path, capsys):
    relu_model(tmp_path / "m.onnx", TP.INT4)
    assert run([str(tmp_path / "m.onnx"), "--json", str(tmp_path / "r.json")]) == 0
    report = (tmp_path / "r.json").read_text()
    assert '"dtype": "int4"' in report and "int8" not in report


def test_load_npy_refuses_a_file_that_is_not_an_array(tmp_path):
    (tmp_path / "x.npy").write_bytes(b"\x93NUMPY\x01\x00" + b"\x10\x00{'descr': 3}    \n")
    with pytest.raises(ValueError):
        load_npy(tmp_path / "x.npy")


def test_check_each_pass_compares_bfloat16_outputs_as_floats(tmp_path, capsys):
    """NaN equals NaN and the tolerance applies to bfloat16 results as to float32 ones."""
    graph = helper.make_graph(
        [helper.make_node("Sqrt", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TP.BFLOAT16, [4])],
        [helper.make_tensor_value_info("y", TP.BFLOAT16, [4])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.save(model, str(tmp_path / "m.onnx"))
    np.save(tmp_path / "x.npy", np.array([4.0, -1.0, 2.0, 0.0], ml_dtypes.bfloat16))
    args = [str(tmp_path / "m.onnx"), "--input", f"x={tmp_path / 'x.npy'}", "--reference"]
    assert run([*args, "-p", "O1", "--no-format-report", "--check-each-pass"]) == 0
    assert "outputs unchanged" in capsys.readouterr().out
