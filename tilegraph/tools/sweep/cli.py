"""``tilegraph-sweep``: what a model costs on each hardware configuration (docs/sweeps.md).

    tilegraph-sweep resnet50 model.onnx --presets ascend910b ascend310p \\
        --override ub=256KiB --override ub=256KiB,l1=1MiB --out build/sweep

Configurations: every ``--presets`` name, then each ``--override`` applied to it (one more
configuration of every preset per override), each with every ``--strategies`` storage
strategy (default ge). Every model is compiled (O2) for every configuration and estimated by
the cycle model, on ``--workers N`` local processes or ``--ray [ADDRESS]``. The table goes to
stdout; ``--out DIR`` gets ``sweep.csv``, ``sweep.json`` and the plots (``sweep.png``, one
panel per model, and ``sweep_<model>.png``). A model with dynamic input axes needs their
sizes: ``--dim NAME=N`` (an ONNX dim_param), ``--shape INPUT=D0,D1,...``; a dynamic axis 0
left over is a batch of 1.

Exit status: 0 when the sweep ran (a failed cell is a row with its error; stderr counts
them), 1 when every cell failed or the sweep could not start (an unknown preset, strategy
or model, a bad override: one ``error:`` line), 2 for a malformed command line.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from tilegraph.hardware import DEFAULT_PRESET, OVERRIDE_KEYS
from tilegraph.search.sweep import (
    DEFAULT_STRATEGY,
    STRATEGIES,
    UNITS,
    SweepCell,
    SweepError,
    baseline_of,
    model_spec,
    run_sweep,
    sweep_configs,
    sweep_tasks,
    write_outputs,
)
from tilegraph.search.workers import WorkersError
from tilegraph.tools.tables import Col, print_table
from tilegraph.tools.worker_options import add_worker_options, worker_count


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="tilegraph-sweep",
        description="Estimate models on hardware presets and what-if overrides of them.",
        epilog="override keys: " + "; ".join(f"{key}: {doc}" for key, doc in OVERRIDE_KEYS.items()),
    )
    ap.add_argument("models", nargs="+", metavar="MODEL", help="ONNX files or light model names")
    ap.add_argument(
        "--presets", nargs="+", default=[DEFAULT_PRESET], metavar="NAME", help="hardware presets"
    )
    ap.add_argument(
        "--override",
        action="extend",
        nargs="+",
        default=[],
        metavar="KEY=VALUE[,KEY=VALUE]",
        help="one more configuration of every preset (e.g. ub=256KiB or ub=256KiB,l1=1MiB)",
    )
    ap.add_argument(
        "--strategies",
        nargs="+",
        default=[DEFAULT_STRATEGY],
        choices=STRATEGIES,
        help="storage strategies of select-storage-format (default: ge)",
    )
    ap.add_argument("--dim", action="append", default=[], metavar="NAME=N")
    ap.add_argument("--shape", action="append", default=[], metavar="INPUT=D0,D1,...")
    add_worker_options(ap, "cells")
    ap.add_argument("--out", type=Path, help="directory for sweep.csv, sweep.json, the PNGs")
    ap.add_argument("--no-plot", action="store_true", help="write no PNGs")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    return ap


def _dims(items: Sequence[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for item in items:
        name, equals, size = item.partition("=")
        if not equals or not name or not size.strip().isdigit():
            raise SweepError(f"--dim expects NAME=N, got '{item}'")
        found[name.strip()] = int(size)
    return found


def _shapes(items: Sequence[str]) -> dict[str, tuple[int, ...]]:
    found: dict[str, tuple[int, ...]] = {}
    for item in items:
        name, equals, sizes = item.partition("=")
        parts = [p.strip() for p in sizes.replace("x", ",").split(",")]
        if not equals or not name or not all(p.isdigit() for p in parts):
            raise SweepError(f"--shape expects INPUT=D0,D1,..., got '{item}'")
        found[name.strip()] = tuple(int(p) for p in parts)
    return found


def _delta(cells: Sequence[SweepCell], cell: SweepCell) -> str:
    base = baseline_of(cells, cell)
    if base is None or cell.error or not base.total_us:
        return ""
    return f"{100.0 * (cell.total_us / base.total_us - 1.0):+.1f}%"


def print_sweep_table(cells: Sequence[SweepCell]) -> None:
    """One row per cell: total µs, its change against the preset without override, the
    parts (:data:`~tilegraph.search.sweep.UNITS`), counts, compile time, error."""
    columns = [
        "model",
        "configuration",
        Col("total µs", right=True),
        Col("vs preset", right=True),
        *(Col(unit, right=True) for unit in UNITS),
        Col("kernels", right=True),
        Col("launches", right=True),
        Col("host ops", right=True),
        Col("compile s", right=True),
        "error",
    ]
    rows = []
    for cell in cells:
        figures = (
            [""] * (2 + len(UNITS) + 3)
            if cell.error
            else [
                f"{cell.total_us:.1f}",
                _delta(cells, cell),
                *(f"{cell.unit_us.get(unit, 0.0):.1f}" for unit in UNITS),
                cell.kernels,
                cell.launches,
                cell.host_ops,
            ]
        )
        rows.append([cell.model, cell.config_label, *figures, f"{cell.compile_s:.1f}", cell.error])
    print_table(columns, rows)


def sweep(argv: Sequence[str] | None = None) -> int:
    """The program; returns the exit status (see the module docstring)."""
    args = _parser().parse_args(argv)
    try:
        configs = sweep_configs(args.presets, args.override, args.strategies)
        dims, shapes = _dims(args.dim), _shapes(args.shape)
        models = [model_spec(m, dims, shapes) for m in args.models]
        tasks = sweep_tasks(models, configs)

        finished = 0

        def progress(index: int, cell: SweepCell) -> None:
            nonlocal finished
            finished += 1
            if args.quiet:
                return
            done = f"{cell.total_us:.1f} µs" if not cell.error else f"failed: {cell.error}"
            line = f"[{finished}/{len(tasks)}] {cell.model} {cell.config_label}: {done}"
            print(line, file=sys.stderr, flush=True)

        cells = run_sweep(tasks, workers=worker_count(args), ray=args.ray, on_cell=progress)
        print_sweep_table(cells)
        if args.out is not None:
            written = write_outputs(args.out, cells, configs, plots=not args.no_plot)
            if not args.quiet:
                print(f"wrote {', '.join(str(p) for p in written)}", file=sys.stderr)
    except (SweepError, WorkersError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    failed = sum(1 for c in cells if c.error)
    if failed:
        print(f"{failed} of {len(cells)} cells failed", file=sys.stderr)
    return 1 if cells and failed == len(cells) else 0


def main() -> None:
    sys.exit(sweep())
