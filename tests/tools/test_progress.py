"""Progress on a terminal only, never when piped or with --quiet; the tools' tables.

The end-to-end cases run ``tilegraph-run`` with stderr on a pseudo-terminal (progress
expected) or on a pipe (none expected), and check that stdout never carries ANSI codes.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from tilegraph import progress
from tilegraph.tools.run.progress import KernelProgress, progress_wanted, terminal_progress
from tilegraph.tools.tables import Col, print_rule_catalog, render_table

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Recorder:
    """A progress sink that records what it is told."""

    def __init__(self) -> None:
        self.events: list[tuple] = []
        self.labels: dict[int, str] = {}

    def start(self, label: str, total: int | None) -> int:
        task_id = len(self.labels)
        self.labels[task_id] = label
        self.events.append(("start", label, total))
        return task_id

    def update(self, task: int, advance: int = 0, label: str | None = None) -> None:
        self.events.append(("update", self.labels[task], advance, label))

    def stop(self, task: int) -> None:
        self.events.append(("stop", self.labels[task]))


def conv_model(path: Path) -> str:
    rng = np.random.default_rng(0)
    w = helper.make_tensor(
        "w", TensorProto.FLOAT, [4, 3, 3, 3], rng.standard_normal(108).astype(np.float32)
    )
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return str(path)


def _run_tool(argv: list[str], stderr_on_tty: bool) -> tuple[int, str, str]:
    """Run ``python -m tilegraph.tools.run ARGV``: (exit code, stdout, stderr), with stdout
    on a pipe and stderr on a pseudo-terminal or a pipe."""
    cmd = [sys.executable, "-m", "tilegraph.tools.run", *argv]
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"}
    env.pop("TILEGRAPH_DEBUG", None)
    if not stderr_on_tty:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
        return proc.returncode, proc.stdout, proc.stderr
    import pty

    master, slave = pty.openpty()
    with subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL, env=env
    ) as proc:
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        assert proc.stdout is not None
        out = proc.stdout.read().decode()
        code = proc.wait(timeout=300)
    os.close(master)
    return code, out, b"".join(chunks).decode(errors="replace")


needs_pty = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


# ---- the library hook ---------------------------------------------------------------------


def test_tasks_without_a_sink_are_free_and_silent():
    assert not progress.reporting()
    with progress.task("nobody listens", total=3) as t:
        t.advance()
        t.relabel("still nobody")


def test_a_sink_sees_tasks_start_advance_and_stop():
    sink = Recorder()
    with progress.reporting_to(sink):
        assert progress.reporting()
        with progress.task("outer", total=2) as outer:
            with progress.task("inner"):
                pass
            outer.advance(2, "outer, done")
    assert sink.events == [
        ("start", "outer", 2),
        ("start", "inner", None),
        ("stop", "inner"),
        ("update", "outer", 2, "outer, done"),
        ("stop", "outer"),
    ]
    assert not progress.reporting()


def test_the_optimal_solver_reports_its_model_and_its_solve():
    from tilegraph.passes.context import make_context, parse_mlir_file
    from tilegraph.passes.pipelines import run_pipeline

    module = parse_mlir_file(Path(__file__).parents[2] / "examples" / "conv_block.mlir")
    sink = Recorder()
    with progress.reporting_to(sink):
        run_pipeline("format{strategy=optimal}", make_context(), module)
    started = [e[1] for e in sink.events if e[0] == "start"]
    assert started[0] == "optimal storage: ILP model"
    assert any(label.startswith("optimal storage: HiGHS, ") for label in started[1:])
    values = next(e[2] for e in sink.events if e[0] == "start")
    advances = [e for e in sink.events if e[0] == "update" and e[1] == started[0]]
    assert len(advances) == values > 0


def test_kernel_progress_advances_once_per_launch(tmp_path):
    from tilegraph.dialects.entry import entry_function
    from tilegraph.dialects.tile import LaunchOp
    from tilegraph.frontend import load_onnx
    from tilegraph.passes.context import make_context
    from tilegraph.passes.pipelines import lowering_pipeline, run_pipeline
    from tilegraph.runtime.tiles import run_tiles

    module = load_onnx(conv_model(tmp_path / "conv.onnx"))
    run_pipeline("O2", make_context(), module)
    run_pipeline(lowering_pipeline("ascend910b", "origin"), make_context(), module)
    launches = [op for op in entry_function(module).walk() if isinstance(op, LaunchOp)]
    sink = Recorder()
    with progress.reporting_to(sink), progress.task("kernels", total=len(launches)) as t:
        counters = KernelProgress(t, "kernels")
        x = np.ones((1, 3, 8, 8), np.float32)
        run_tiles(module, {"x": x}, executor="fast", counters=counters)
    assert counters.started == len(launches) > 0
    relabels = [e[3] for e in sink.events if e[0] == "update" and e[3]]
    assert relabels == [f"kernels: {op.callee.string_value()}" for op in launches]


# ---- the terminal display -----------------------------------------------------------------


def test_progress_is_wanted_on_a_terminal_only_and_not_when_quiet(monkeypatch):
    monkeypatch.setenv("TERM", "xterm")
    assert progress_wanted(False, FakeTerminal())
    assert not progress_wanted(True, FakeTerminal())
    assert not progress_wanted(False, io.StringIO())
    monkeypatch.setenv("TERM", "dumb")
    assert not progress_wanted(False, FakeTerminal())


def test_quiet_draws_nothing_even_on_a_terminal(monkeypatch):
    monkeypatch.setenv("TERM", "xterm")
    shown, quiet = FakeTerminal(), FakeTerminal()
    with terminal_progress(False, shown) as sink:
        assert sink is not None
        with progress.task("compiling", total=3) as t:
            t.advance()
    with terminal_progress(True, quiet) as sink:
        assert sink is None
        with progress.task("compiling", total=3) as t:
            t.advance()
    assert "compiling" in ANSI.sub("", shown.getvalue())
    assert quiet.getvalue() == ""


@needs_pty
def test_tilegraph_run_shows_progress_on_a_terminal_and_none_with_quiet(tmp_path):
    model = conv_model(tmp_path / "conv.onnx")
    code, out, err = _run_tool([model, "--no-format-report"], stderr_on_tty=True)
    assert code == 0
    text = ANSI.sub("", err)
    assert "O2" in text and "running kernels (fast)" in text
    assert not ANSI.search(out) and "model: " in out
    code, out, err = _run_tool([model, "--no-format-report", "--quiet"], stderr_on_tty=True)
    assert code == 0 and err == "" and "model: " in out


def test_piped_tilegraph_run_has_no_progress_and_no_ansi(tmp_path):
    model = conv_model(tmp_path / "conv.onnx")
    code, out, err = _run_tool([model, "--profile", "3"], stderr_on_tty=False)
    assert code == 0
    assert err == ""
    assert not ANSI.search(out)
    assert all(line == line.rstrip() for line in out.splitlines())
    lines = out.splitlines()
    header = next(line for line in lines if line.lstrip().startswith("kernel "))
    assert header.split() == [
        *(
            "kernel",
            "unit",
            "blocks",
            "µs",
            "+launch",
            "bound",
            "cube%",
            "GM",
            "MB",
            "ONNX",
            "nodes",
        )
    ]
    assert any(re.match(r"^ *strategy +ops +MB +bound MB +status$", line) for line in lines)


@needs_pty
def test_a_sweep_shows_its_runs_on_a_terminal(tmp_path):
    model = conv_model(tmp_path / "conv.onnx")
    argv = [model, "--shape", "x=1,3,8,8", "--shape", "x=1,3,8,8", "--reference"]
    code, out, err = _run_tool(argv, stderr_on_tty=True)
    assert code == 0
    assert "run 1/2: x[1, 3, 8, 8]" in ANSI.sub("", err)
    assert re.search(r"^ +run +shapes +artifact +ms +reason$", out, re.M)
    code, out, err = _run_tool([*argv, "-q"], stderr_on_tty=True)
    assert code == 0 and err == ""


# ---- tables -------------------------------------------------------------------------------


def test_a_piped_table_is_plain_unwrapped_and_has_no_trailing_spaces():
    long = "x" * 300
    text = render_table(["name", Col("n", right=True), "note"], [("a", 1, long), ("bb", 22, "")])
    lines = text.splitlines()
    assert lines[0].split() == ["name", "n", "note"]
    assert lines[1] == f"a      1  {long}"
    assert lines[2] == "bb    22"
    assert not ANSI.search(text)


def test_a_terminal_table_is_styled_and_fits_the_width():
    rows = [("op", "x" * 200)]
    text = render_table(["a", "b"], rows, terminal=True, width=60, indent=2)
    assert ANSI.search(text)
    assert all(len(ANSI.sub("", line)) <= 60 for line in text.splitlines())
    assert "x" * 200 in "".join(ANSI.sub("", line).strip() for line in text.splitlines()[1:])


def test_cells_are_text_not_markup_and_empty_columns_are_left_out():
    text = render_table(["shape", "error"], [("x[batch, 3]", ""), ("[bold]y[/bold]", None)])
    assert text.splitlines() == ["shape", "x[batch, 3]", "[bold]y[/bold]"]


def test_list_rules_is_one_row_per_rule(capsys):
    from tilegraph.passes.simplify.rule import rule_catalog

    rules = rule_catalog()
    print_rule_catalog(rules)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["#", "rule", "pass", "pattern", "result", "caveat", "peers"]
    assert len(lines) == len(rules) + 2 and lines[-1] == f"{len(rules)} rules"
    assert re.match(r"^ +1 +constant-folding +constant-fold +op\(constants\.\.\.\) ", lines[1])
