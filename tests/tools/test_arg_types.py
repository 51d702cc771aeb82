"""Numbers out of range are refused where the command line is parsed: one line naming the
option and the value, exit 2 (a negative --rtol used to turn every comparison into FAIL, a
negative --seed into an internal error)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from tilegraph.tools.opt.cli import run as opt_run
from tilegraph.tools.run.cli import run as run_run
from tilegraph.tools.tune.accuracy import main as accuracy_main
from tilegraph.tools.tune.cli import run as tune_run

SMALL_CNN = str(Path(__file__).parents[1] / "zoo" / "models" / "small_cnn.onnx")

Tool = Callable[[Sequence[str]], int]
REFUSED: list[tuple[Tool, list[str], str]] = [
    (run_run, ["--rtol", "-1"], "--rtol"),
    (run_run, ["--atol", "nan"], "--atol"),
    (run_run, ["--atol", "inf"], "--atol"),
    (run_run, ["--check-rtol", "-0.5"], "--check-rtol"),
    (run_run, ["--check-atol", "tiny"], "--check-atol"),
    (run_run, ["--seed", "-1"], "--seed"),
    (run_run, ["--profile", "0"], "--profile"),
    (opt_run, ["--check-rtol", "-1"], "--check-rtol"),
    (opt_run, ["--profile", "-3"], "--profile"),
    (opt_run, ["--elide-constants-larger-than", "-1"], "--elide-constants-larger-than"),
    (tune_run, ["--seed", "-2"], "--seed"),
    (tune_run, ["--atol", "-0.001"], "--atol"),
    (accuracy_main, ["--tolerance", "-0.01"], "--tolerance"),
    (accuracy_main, ["--seed", "1.5"], "--seed"),
]


@pytest.mark.parametrize(("tool", "options", "option"), REFUSED)
def test_out_of_range_number_is_refused_by_name(
    tool: Tool, options: list[str], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = tool([SMALL_CNN, *options])
    except SystemExit as stop:  # argparse exits; tilegraph-opt returns argparse's code
        code = stop.code
    assert code == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert f"error: argument {option}: expected " in last
    assert last.endswith(f"got {options[1]!r}")
    assert "Traceback" not in err


def test_zero_tolerances_and_seed_are_accepted(capsys: pytest.CaptureFixture[str]) -> None:
    """0 is in range: an exact comparison and numpy's seed 0."""
    code = run_run([SMALL_CNN, "--dim", "batch=1", "--seed", "0", "--rtol", "0", "--atol", "0"])
    assert code == 0, capsys.readouterr().err
