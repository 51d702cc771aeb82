"""Running a zoo model the ways a user does, and comparing with onnxruntime.

Contract: every ``run_*`` function returns a :class:`Outcome`: the outputs (in the model's
output order) or the first line of the error, plus what that path reports (host ops of
the tiled lowering, the Session's stats). Nothing here raises for a failing model: the
caller (the pytest harness, or ``benchmarks/model_zoo.py``) decides. The CLI runs as a
subprocess (``tilegraph-run`` next to this interpreter, else ``python -m
tilegraph.tools.run``) with the repository on ``PYTHONPATH``; the in-process paths
(``compile``, ``Session``) run in a child process when ``timeout`` is given, so a hung or
very slow case is stopped.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tests.zoo.wheels import ROOT
from tests.zoo.zoo import ZooModel, make_inputs
from tilegraph.frontend.onnxruntime_oracle import half_precision, tolerance


@dataclass
class Outcome:
    """What one run of one path gave."""

    outputs: list[np.ndarray] | None = None
    error: str | None = None
    host_ops: int | None = None
    target: str | None = None
    compiles: int | None = None
    stats: str | None = None
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def first_line(text: str) -> str:
    """The first non-empty line of ``text`` (an error message's headline)."""
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return "(no message)"


def cli_error(stderr: str) -> str:
    """The CLI's ``error: ...`` line without its prefix (warnings printed before it are
    skipped); the first line when there is none (a crash)."""
    for line in stderr.splitlines():
        if line.startswith("error: "):
            return line.removeprefix("error: ").strip()
    return first_line(stderr)


def onnxruntime_outputs(path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """onnxruntime's outputs for ``inputs`` (CPU provider)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return [np.asarray(o) for o in session.run(None, inputs)]


def max_abs_diff(ours: list[np.ndarray], theirs: list[np.ndarray]) -> float:
    """The largest ``|ours - theirs|`` over all outputs; inf when shapes differ."""
    worst = 0.0
    if len(ours) != len(theirs):
        return float("inf")
    for a, b in zip(ours, theirs, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return float("inf")
        if a.size:
            worst = max(worst, float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))))
    return worst


def model_mismatch(model: ZooModel, ours: list[np.ndarray], theirs: list[np.ndarray]) -> str | None:
    """:func:`mismatch` at the model's tolerance: its own, or (``None``) the one
    ``tilegraph-run --compare`` picks for the model's precision."""
    precision = None
    if model.rtol is None or model.atol is None:
        import onnx

        precision = half_precision(onnx.load(model.path()))
    return mismatch(ours, theirs, model.rtol, model.atol, precision)


def mismatch(
    ours: list[np.ndarray],
    theirs: list[np.ndarray],
    rtol: float | None,
    atol: float | None,
    precision: str | None = None,
) -> str | None:
    """None when every output is within ``atol + rtol * |theirs|``, else what differs; a
    tolerance of ``None`` is the one ``tilegraph-run --compare`` picks for the output's type
    or the model's 16-bit ``precision``."""
    if len(ours) != len(theirs):
        return f"{len(ours)} outputs, onnxruntime gives {len(theirs)}"
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return f"output {i}: shape {a.shape}, onnxruntime gives {b.shape}"
        r, t = tolerance(b, rtol, atol, precision)
        if not np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=r, atol=t):
            d = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))
            return f"output {i}: max |diff| {d:.3g} over atol {t:.3g} + rtol {r:.3g}"
    return None


def _cli_command() -> list[str]:
    exe = Path(sys.executable).with_name("tilegraph-run")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "tilegraph.tools.run"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    return env


def run_cli(
    model: ZooModel, index: int, flags: tuple[str, ...] = (), timeout: float | None = None
) -> Outcome:
    """``tilegraph-run MODEL --input name=file.npy ... --json F --save-outputs DIR`` plus
    ``flags``. The outputs are read back from DIR in the report's output order. A tiled
    run whose lowering was skipped (report ``target`` is not ``tiles``) is an error when
    no ``--reference`` flag was given."""
    inputs = make_inputs(model, index)
    with tempfile.TemporaryDirectory(prefix="zoo-") as tmp:
        tmpdir = Path(tmp)
        args = [*_cli_command(), str(model.path())]
        if model.precision:
            args += ["--precision", model.precision]
        for name, array in inputs.items():
            file = tmpdir / f"in_{len(args)}.npy"
            np.save(file, array)
            args += ["--input", f"{name}={file}"]
        report_file, out_dir = tmpdir / "report.json", tmpdir / "out"
        args += ["--json", str(report_file), "--save-outputs", str(out_dir), *flags]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(args, capture_output=True, text=True, env=_env(), timeout=timeout)
        except subprocess.TimeoutExpired:
            return Outcome(error=f"timeout after {timeout:.0f} s", seconds=float(timeout or 0))
        seconds = time.perf_counter() - t0
        if proc.returncode != 0:
            message = cli_error(proc.stderr or proc.stdout)
            return Outcome(error=message, seconds=seconds)
        report = json.loads(report_file.read_text())
        from tilegraph.tools.run.cli import safe_file_name

        names = list(report["outputs"])
        outputs = [np.load(out_dir / f"{safe_file_name(n)}.npy") for n in names]
    host_ops = report.get("host_ops")
    outcome = Outcome(
        outputs=outputs,
        host_ops=len(host_ops) if host_ops is not None else None,
        target=report.get("target"),
        seconds=seconds,
        extra={"report": report},
    )
    if "--reference" not in flags and report.get("target") != "tiles":
        outcome.error = first_line(str(report.get("skipped", "the tiled path did not run")))
    return outcome


def _compile_case(model: ZooModel, index: int) -> Outcome:
    import tilegraph

    compiled = tilegraph.compile(model.path(), precision=model.precision)
    outputs = compiled(**make_inputs(model, index))
    return Outcome(outputs=[np.asarray(o) for o in outputs], host_ops=len(compiled.host_ops))


def _session_case(model: ZooModel, order: tuple[int, ...]) -> Outcome:
    """A tiles Session called on the data sets in ``order``; the outputs of every call,
    concatenated in order (compared with onnxruntime's, called the same way)."""
    import tilegraph

    session = tilegraph.Session(model.path(), target="tiles", precision=model.precision)
    outputs: list[np.ndarray] = []
    for index in order:
        outputs += [np.asarray(o) for o in session(**make_inputs(model, index))]
    return Outcome(
        outputs=outputs,
        compiles=session.stats.compiles,
        stats=session.stats.summary(),
        extra={"tilings": session.stats.tilings, "hits": session.stats.hits},
    )


def _guarded(fn: Any, args: tuple[Any, ...]) -> Outcome:
    t0 = time.perf_counter()
    try:
        outcome: Outcome = fn(*args)
    except Exception as e:  # the caller wants the message, not the exception
        outcome = Outcome(error=first_line(f"{type(e).__name__}: {e}"))
        outcome.extra["traceback"] = traceback.format_exc()
    outcome.seconds = time.perf_counter() - t0
    return outcome


def _child(conn: Any, fn: Any, args: tuple[Any, ...]) -> None:
    conn.send(_guarded(fn, args))
    conn.close()


def _in_child(fn: Any, args: tuple[Any, ...], timeout: float | None) -> Outcome:
    if timeout is None:
        return _guarded(fn, args)
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, args))
    proc.start()
    child.close()
    if parent.poll(timeout):
        outcome: Outcome = parent.recv()
        proc.join()
        return outcome
    proc.kill()
    proc.join()
    return Outcome(error=f"timeout after {timeout:.0f} s", seconds=timeout)


def run_compile(model: ZooModel, index: int, timeout: float | None = None) -> Outcome:
    """``tilegraph.compile(path)`` (O2, tiles, fast executor, the model's precision) called
    on data set ``index``."""
    return _in_child(_compile_case, (model, index), timeout)


def run_session(
    model: ZooModel, order: tuple[int, ...] = (0, 1, 0), timeout: float | None = None
) -> Outcome:
    """``tilegraph.Session(path, target="tiles")`` called on the data sets in ``order``."""
    return _in_child(_session_case, (model, order), timeout)
