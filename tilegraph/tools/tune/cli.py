"""``tilegraph-tune MODEL``: tune a model's kernels against the cycle model.

    tilegraph-tune model.onnx --platform ascend910b               # default database, 1 worker
    tilegraph-tune model.onnx --db t.sqlite --budget 32 --workers 2 --json tuned.json
    tilegraph-tune model.onnx --ray                                # a local Ray
    tilegraph-tune model.onnx --ray 10.0.0.1:6379                  # a Ray cluster
    tilegraph-tune attention.onnx --shape x=1,16,64 --shape mask=1,16   # dynamic dims sized

First the graph-level choices (O2's options, :data:`~tilegraph.search.tune.GRAPH_GRID`;
``--no-graph`` skips them) are scored on the whole model, then every kernel's tiling
parameters under the best of them (:func:`~tilegraph.search.tune.tune_kernels`: exhaustive
up to ``--budget`` points, else a seeded evolutionary search of ``--budget`` candidates).
Everything scored goes to the database (``--db``; default
:func:`~tilegraph.lowering.tuning_db.default_db_path`), committed per result; what it
already holds is reused, not scored again. The winner is checked: the model compiled with
the database (``compile(..., tune_db=...)``), estimated (the tuned total) and run by the
fast executor on seeded random inputs against the graph level on the reference interpreter;
a difference beyond ``--rtol`` / ``--atol`` fails the run.

Prints per kernel the default µs -> tuned µs with the winning parameters (kernels scored
alone, cold L2: :mod:`tilegraph.search.evaluate`), the whole model's estimate default ->
tuned, candidates evaluated / reused, the wall time. ``--json F`` writes ``{"default_us",
"tuned_us", "evaluated", "reused", "kernels": [{"name", "default_us", "tuned_us",
"params"}, ...]}`` plus details (``pipeline``, ``graph``, ``check``, ``wall_s``...).
Progress (candidates/s, best so far, ETA) shows on stderr when it is a terminal and not
``--quiet``. Bad input prints one ``error:`` line and exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tilegraph.lowering.tuning_db import TuningDatabase, TuningDatabaseError, default_db_path
from tilegraph.progress import Task, task
from tilegraph.search.tune import (
    Progress,
    TuneOptions,
    compile_module,
    load_static,
    tune_graph,
    tune_kernels,
)
from tilegraph.search.workers import WorkersError
from tilegraph.target import PRECISIONS
from tilegraph.tools.arg_types import non_negative_float, non_negative_int
from tilegraph.tools.run.messages import error_message
from tilegraph.tools.run.progress import terminal_progress
from tilegraph.tools.run.watch import RunError
from tilegraph.tools.worker_options import add_worker_options, worker_count

OBJECTIVES = ("speed", "accuracy")
"""What the tuner searches for (``--objective``): ``speed``, the cycle model's estimate
(this module), or ``accuracy``, the ops a reduced precision must keep in float32
(:mod:`tilegraph.tools.tune.accuracy`, with its own options: ``--objective accuracy
--help``)."""


class TuneError(ValueError):
    """Bad input to tilegraph-tune, or a tuned model whose outputs differ."""


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="tilegraph-tune",
        description="tune a model's tiling parameters and fusion against the cycle model",
    )
    ap.add_argument("model", help=".onnx or .mlir file")
    ap.add_argument("--platform", default="", help="hardware preset (default: the model's)")
    ap.add_argument("--precision", choices=PRECISIONS, default="", help="the cube's input type")
    ap.add_argument("--db", metavar="FILE", help=f"tuning database (default {default_db_path()})")
    ap.add_argument("--budget", type=int, default=64, help="candidates per kernel (64)")
    add_worker_options(ap, "candidates")
    ap.add_argument("--json", metavar="FILE", help="write the result as JSON")
    ap.add_argument(
        "--seed", type=non_negative_int, default=0, help="seed of the search and the inputs"
    )
    ap.add_argument(
        "--objective",
        choices=OBJECTIVES,
        default="speed",
        help="speed (default), or accuracy (options: --objective accuracy --help)",
    )
    ap.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="NAME=D0,D1,...",
        help="an input's shape (needed for each dynamic input; repeatable)",
    )
    ap.add_argument("--no-graph", action="store_true", help="tune the kernels only, under O2")
    ap.add_argument(
        "--rtol", type=non_negative_float, default=1e-3, help="check: relative tolerance"
    )
    ap.add_argument(
        "--atol", type=non_negative_float, default=1e-4, help="check: absolute tolerance"
    )
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    return ap


def _shapes(items: Sequence[str]) -> dict[str, tuple[int, ...]]:
    shapes: dict[str, tuple[int, ...]] = {}
    for item in items:
        name, sep, dims = item.partition("=")
        try:
            if not sep or not name:
                raise ValueError
            shapes[name] = tuple(int(d) for d in dims.split(",") if d.strip())
        except ValueError:
            raise TuneError(f"--shape expects NAME=D0,D1,..., got '{item}'") from None
    return shapes


class _Display(Progress):
    """Candidates/s, the best total so far and an ETA, on the progress display."""

    def __init__(self, shown: Task, label: str):
        self.shown, self.label = shown, label
        self.planned_total = self.done = 0
        self.start = time.perf_counter()

    def planned(self, candidates: int) -> None:
        self.planned_total += candidates

    def scored(self, reused: bool, best_us: float) -> None:
        self.done += 1
        elapsed = time.perf_counter() - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = (self.planned_total - self.done) / rate if rate else 0.0
        self.shown.advance(
            1,
            f"{self.label}: {self.done}/{self.planned_total} candidates, {rate:.1f}/s, "
            f"best {best_us:.1f} µs, ETA {left:.0f} s",
        )


def tune(args: argparse.Namespace) -> dict[str, Any]:
    """Run the tuner as the command line asks; the JSON report."""
    from tilegraph.runtime.compiled import compile as compile_model
    from tilegraph.runtime.compiled import load_model
    from tilegraph.runtime.reference import run_reference
    from tilegraph.tools.random_inputs import random_inputs

    if not Path(args.model).is_file():
        raise TuneError(f"{args.model}: no such file")
    args.workers = worker_count(args)
    options = TuneOptions(args.budget, args.seed, args.workers, args.ray)
    db_path = Path(args.db) if args.db else default_db_path()
    started = time.perf_counter()
    with task(f"importing {Path(args.model).name}"):
        imported = load_model(args.model)
        inputs = random_inputs(imported, args.seed, _shapes(args.shape), {})
    with TuningDatabase(db_path) as db:
        pipeline, graph, graph_evaluated = "O2", {}, 0
        if not args.no_graph:
            with task("graph-level choices") as shown:
                pipeline, graph, graph_evaluated = tune_graph(
                    args.model, inputs, args.platform, args.precision, db, options,
                    on_score=lambda: shown.advance(1),
                )  # fmt: skip
        module = load_static(args.model, inputs, args.platform, args.precision)
        from tilegraph.passes.context import make_context
        from tilegraph.passes.pipelines import run_pipeline

        run_pipeline(f"{pipeline},lower-graph-to-kernels", make_context(), module)
        with task("tuning kernels") as shown:
            result = tune_kernels(module, db, options, _Display(shown, "tuning kernels"))
    default_us = graph.get("O2")
    if default_us is None:
        default_us = _estimate(load_static(args.model, inputs, args.platform, args.precision))
    with task("checking the tuned model"):
        bound = load_static(args.model, inputs, args.platform, args.precision)
        tuned = compile_model(bound.clone(), "O2", tune_db=db_path)
        tuned_us = _estimate(tuned.module, lowered=True)
        ours = tuned.run(inputs)
        theirs = run_reference(bound, inputs)
    check = _check(tuned.output_names, ours, theirs, args.rtol, args.atol)
    report: dict[str, Any] = {
        "model": args.model,
        "platform": args.platform or None,
        "db": str(db_path),
        "pipeline": pipeline,
        "default_us": round(default_us, 6),
        "tuned_us": round(tuned_us, 6),
        "evaluated": result.evaluated + graph_evaluated,
        "reused": result.reused + len(graph) - graph_evaluated,
        "infeasible": result.infeasible,
        "kernels_default_us": round(result.default_us, 6),
        "kernels_tuned_us": round(result.tuned_us, 6),
        "kernels": [k.to_json() for k in result.kernels],
        "graph": {spec: round(us, 6) for spec, us in graph.items()},
        "check": check,
        "budget": args.budget,
        "seed": args.seed,
        "objective": args.objective,
        "workers": args.workers if args.ray is None else None,
        "ray": args.ray,
        "wall_s": round(time.perf_counter() - started, 3),
    }
    return report


def _estimate(module: Any, lowered: bool = False) -> float:
    from tilegraph.cost_model.cycles import simulate_module

    return simulate_module(module if lowered else compile_module(module, "O2")).total_us


def _check(
    names: Sequence[str],
    ours: Sequence[np.ndarray],
    theirs: Sequence[np.ndarray],
    rtol: float,
    atol: float,
) -> dict[str, Any]:
    """The largest difference of the tuned model's outputs from the graph level's, and
    whether every element is within ``atol + rtol * max |reference|`` (relative to the
    output's largest magnitude: a different summation order moves an element near zero by
    as much as a large one)."""
    worst = 0.0
    ok = True
    for a, b in zip(ours, theirs, strict=True):
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        if a.shape != b.shape:
            return {"ok": False, "max_abs_diff": None, "error": f"shape {a.shape} vs {b.shape}"}
        diff = np.abs(a - b)
        if diff.size:
            worst = max(worst, float(np.nanmax(diff)))
        scale = float(np.nanmax(np.abs(b))) if b.size else 0.0
        ok = ok and bool(np.all(diff <= atol + rtol * scale))
    return {"ok": ok, "max_abs_diff": worst, "rtol": rtol, "atol": atol, "outputs": list(names)}


def print_report(report: Mapping[str, Any], kernels: Sequence[Mapping[str, Any]]) -> None:
    """The per-kernel table and the totals."""
    width = max([len("kernel"), *(len(k["name"]) for k in kernels)])
    print(f"{'kernel':<{width}}  {'default µs':>11}  {'tuned µs':>10}  space   params")
    for k in kernels:
        seen = f"{k['seen']}/{k['space_size']}"
        changed = k.get("changed", "-")
        print(
            f"{k['name']:<{width}}  {k['default_us']:>11.2f}  {k['tuned_us']:>10.2f}  "
            f"{seen:<7} {changed}"
        )
    print(
        f"kernels alone (cold L2): {report['kernels_default_us']:.1f} -> "
        f"{report['kernels_tuned_us']:.1f} µs"
    )
    print(
        f"model estimate: {report['default_us']:.1f} -> {report['tuned_us']:.1f} µs "
        f"(pipeline {report['pipeline']})"
    )
    check = report["check"]
    print(
        f"check vs the graph level: max |diff| {check['max_abs_diff']} "
        f"({'ok' if check['ok'] else 'FAILED'})"
    )
    print(
        f"candidates: {report['evaluated']} evaluated, {report['reused']} reused "
        f"({report['infeasible']} infeasible); wall {report['wall_s']:.1f} s; db {report['db']}"
    )


def _objective(argv: Sequence[str]) -> tuple[str, list[str]]:
    """``--objective``'s value and the other arguments."""
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--objective", choices=OBJECTIVES, default="speed")
    known, rest = ap.parse_known_args(argv)
    return known.objective, rest


def run(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    objective, rest = _objective(argv)
    if objective == "accuracy":
        from tilegraph.tools.tune import accuracy

        return accuracy.main(rest)
    args = _parser().parse_args(argv)
    try:
        with terminal_progress(args.quiet):
            report = tune(args)
        result_kernels = report["kernels"]
    except (TuneError, TuningDatabaseError, WorkersError, RunError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except ValueError as e:
        if "--budget" in str(e):
            print(f"error: {e}", file=sys.stderr)
            return 1
        print(error_message(e), file=sys.stderr)
        return 1
    except Exception as e:
        if os.environ.get("TILEGRAPH_DEBUG"):
            raise
        print(error_message(e), file=sys.stderr)
        return 1
    shown = [dict(k, changed=_changed(k)) for k in result_kernels]
    print_report(report, shown)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    if not report["check"]["ok"]:
        print(
            "error: the tuned model's outputs differ from the graph level beyond "
            f"--rtol {args.rtol} / --atol {args.atol}",
            file=sys.stderr,
        )
        return 1
    return 0


def _changed(kernel: Mapping[str, Any]) -> str:
    params = kernel["params"]
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items())) if params else "-"


def main() -> None:
    sys.exit(run())
