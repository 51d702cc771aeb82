"""tilegraph-run computes ONNX arithmetic as IEEE values: an overflow to inf, the log of 0
or of a negative number, a NaN cast to an integer are results the model asks for (onnxruntime
gives them too), not faults — no numpy RuntimeWarning reaches the user, on any path."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper

from tilegraph.tools.run.cli import run


def ieee_model(path: Path) -> None:
    """``big = x + x`` (overflows for |x| > 1.7e38), ``ids = Cast<int32>(Log(x))`` (−inf at
    0, NaN below), on a dynamic batch so the run also observes its dims."""
    graph = helper.make_graph(
        [
            helper.make_node("Add", ["x", "x"], ["big"]),
            helper.make_node("Log", ["x"], ["log"]),
            helper.make_node("Cast", ["log"], ["ids"], to=TP.INT32),
        ],
        "g",
        [helper.make_tensor_value_info("x", TP.FLOAT, ["n", 4])],
        [
            helper.make_tensor_value_info("big", TP.FLOAT, ["n", 4]),
            helper.make_tensor_value_info("ids", TP.INT32, ["n", 4]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


@pytest.mark.parametrize(
    "target", [[], ["--executor", "interpret"], ["--reference"]],
    ids=["tiles", "interpret", "reference"],
)  # fmt: skip
def test_overflow_and_nan_casts_are_values_not_warnings(tmp_path, target, capsys):
    ieee_model(tmp_path / "m.onnx")
    x = np.array([[3e38, -3e38, 0.0, -1.0], [1.0, np.e, 2.5e38, 4.0]], np.float32)
    np.save(tmp_path / "x.npy", x)
    args = [str(tmp_path / "m.onnx"), "--input", f"x={tmp_path / 'x.npy'}", "-q"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert run([*args, "--save-outputs", str(tmp_path / "out"), *target]) == 0
    assert [str(w.message) for w in caught if w.category is RuntimeWarning] == []
    assert "RuntimeWarning" not in capsys.readouterr().err
    big = np.load(tmp_path / "out" / "big.npy")
    np.testing.assert_array_equal(big[0, :2], [np.inf, -np.inf])
    assert big[1, 2] == np.inf
    ids = np.load(tmp_path / "out" / "ids.npy")
    np.testing.assert_array_equal(ids[1, [0, 1]], [0, 1])  # log(1) = 0, log(e) = 1
