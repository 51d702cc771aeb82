"""``tilegraph-sweep``: the table on stdout, the files of --out, and one ``error:`` line with
a non-zero exit for what cannot start (an unknown preset, a bad override, a missing model)."""

from __future__ import annotations

import json

import onnx
import pytest

from tests.test_hardware_overrides import relu_model
from tilegraph.tools.sweep.cli import sweep


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("models") / "tiny.onnx"
    onnx.save(relu_model((1, 8, 16, 16)), str(path))
    return str(path)


def test_the_table_and_the_files(tiny, tmp_path, capsys):
    out = tmp_path / "out"
    args = [tiny, "--presets", "test", "--override", "ub=16KiB", "--out", str(out), "--no-plot"]
    assert sweep(args) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].split()[:4] == ["model", "configuration", "total", "µs"]
    assert lines[1].split()[:2] == ["tiny", "test"]
    assert lines[2].split()[:3] == ["tiny", "test", "ub=16KiB"]
    assert "[2/2] tiny test ub=16KiB:" in captured.err
    cells = json.loads((out / "sweep.json").read_text())["cells"]
    assert [c["platform"] for c in cells] == ["test", "test:ub=16KiB"]
    assert sorted(p.name for p in out.iterdir()) == ["sweep.csv", "sweep.json"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--presets", "h100"], "error: unknown platform 'h100'; valid platforms: ascend910b"),
        (
            ["--override", "ub=1XB"],
            "error: platform 'ascend910b:ub=1XB': override 'ub': unknown unit",
        ),
        (["--override", "ub=1KiB", "size=2"], "error: --override 'size=2': unknown override key"),
        (["--dim", "seq"], "error: --dim expects NAME=N, got 'seq'"),
    ],
)
def test_what_cannot_start_is_one_line_and_a_failure(tiny, args, message, capsys):
    assert sweep([tiny, *args]) == 1
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_a_missing_model_file(tmp_path, capsys):
    assert sweep([str(tmp_path / "missing.onnx"), "-q"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "missing.onnx: no such model file" in err
    assert err.count("\n") == 1


def test_every_cell_failing_is_a_failure(tmp_path, capsys):
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model")
    assert sweep([str(broken), "--presets", "test", "-q"]) == 1
    captured = capsys.readouterr()
    assert "1 of 1 cells failed" in captured.err and "broken" in captured.out
