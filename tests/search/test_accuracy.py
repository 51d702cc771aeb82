"""The accuracy search on the model force_fp16 breaks (tests/data/precision)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tilegraph.frontend import load_onnx
from tilegraph.passes.keep_dtype import read_keep_dtype
from tilegraph.search.accuracy import (
    AccuracyReport,
    bisect_prefix,
    confirm_on_tiles,
    minimise,
    relative_error,
    search_keep_list,
)
from tilegraph.tools.tune.accuracy import main
from tilegraph.tools.tune.cli import run as tune_run

MODEL = Path(__file__).parent.parent / "data" / "precision" / "layernorm_overflow.onnx"
TOLERANCE = 1e-2


@pytest.fixture(scope="module")
def found() -> AccuracyReport:
    module = load_onnx(MODEL)
    inputs = {"x": np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32)}
    report = search_keep_list(module, inputs, "force_fp16", TOLERANCE)
    confirm_on_tiles(module, inputs, report, "ascend910b")
    return report


def test_force_fp16_breaks_it(found: AccuracyReport) -> None:
    assert found.error["reduced"] > 0.5
    assert found.tiles_error["reduced"] > 0.5


def test_the_search_finds_a_small_keep_list(found: AccuracyReport) -> None:
    assert found.keep == ["ln/ReduceSum", "ln/Variance"]  # the sum and the Div it feeds


def test_the_keep_list_meets_the_tolerance_on_both_executors(found: AccuracyReport) -> None:
    assert found.error["keep"] <= TOLERANCE
    assert found.tiles_error["keep"] <= TOLERANCE


def test_estimates(found: AccuracyReport) -> None:
    """Float16 kernels are no slower than float32 ones; float16's input and output casts
    are launches of their own, so its total is above float32's; the keep-list's casts run
    inside the reduction's kernel (its prologue and epilogue), so the keep-list costs no
    less than all-float16 and adds no launch (docs/precision.md)."""
    kernel, total = found.kernel_us, found.estimate_us
    assert kernel["reduced"] <= kernel["fp32"]
    assert kernel["keep"] >= kernel["reduced"]
    assert total["reduced"] > total["fp32"]
    assert total["keep"] == pytest.approx(
        total["reduced"], abs=kernel["keep"] - kernel["reduced"] + 1e-9
    )


def test_bisection_and_minimisation() -> None:
    nodes = list("abcdefgh")
    need = {"c", "f"}
    assert bisect_prefix(nodes, lambda keep: need <= set(keep)) == 6
    assert minimise(nodes[:6], lambda keep: need <= set(keep)) == ["c", "f"]


def test_relative_error() -> None:
    ref = [np.array([1.0, -4.0])]
    assert relative_error([np.array([1.0, -3.0])], ref) == 0.25
    assert relative_error([np.array([np.inf, -4.0])], ref) == float("inf")


def test_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # tilegraph-tune --objective accuracy: the tuner hands the other arguments to the search
    keep, figures = tmp_path / "keep.cfg", tmp_path / "acc.json"
    argv = [str(MODEL), "--objective", "accuracy", "--keep-dtype-out", str(keep)]
    assert tune_run([*argv, "--json", str(figures)]) == 0
    assert read_keep_dtype(keep) == ["ln/ReduceSum", "ln/Variance"]
    data = json.loads(figures.read_text())
    assert data["keep_size"] == 2 and data["error"]["keep"] <= TOLERANCE
    assert set(data["estimate_us"]) == {"fp32", "reduced", "keep"}
    assert "keep-list of 2 of 14 nodes" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["missing.onnx"], "error: no such model file"),
        ([str(MODEL), "--tolerance", "0"], "error: tolerance must be positive"),
        ([str(MODEL), "--inputs", "nope.npz"], "error: cannot read inputs"),
    ],
)
def test_the_command_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_inputs_from_npz(tmp_path: Path) -> None:
    inputs = tmp_path / "in.npz"
    np.savez(inputs, y=np.zeros((16, 64), np.float32))
    assert main([str(MODEL), "--inputs", str(inputs)]) == 1  # no input named y


def test_a_model_with_a_dynamic_batch_runs_at_the_inputs_shapes(tmp_path: Path) -> None:
    """The tiles need static shapes: the search binds the dynamic dims to its inputs'."""
    import onnx

    model = onnx.load(MODEL)
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    dynamic, inputs, keep = tmp_path / "dynamic.onnx", tmp_path / "in.npz", tmp_path / "k.cfg"
    onnx.save(model, dynamic)
    np.savez(inputs, x=np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32))
    argv = [str(dynamic), "--inputs", str(inputs), "--keep-dtype-out", str(keep)]
    assert main(argv) == 0
    assert read_keep_dtype(keep) == ["ln/ReduceSum", "ln/Variance"]
