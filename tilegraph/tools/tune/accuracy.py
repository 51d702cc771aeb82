"""``tilegraph-tune --objective accuracy`` (``python -m tilegraph.tools.tune.accuracy``).

::

    python -m tilegraph.tools.tune.accuracy model.onnx --precision force_fp16 \\
        --tolerance 1e-2 --keep-dtype-out keep.cfg --json accuracy.json

Runs :func:`tilegraph.search.accuracy.search_keep_list` on the model with inputs from
``--inputs FILE.npz`` (arrays named like the model's inputs) or seeded random ones, confirms
the keep-list on the tiled fast executor for ``--platform``, writes it (``--keep-dtype-out``,
ATC's ``--keep_dtype`` format, node names) and prints: its size and nodes, the error of
all-float32 / all-reduced / reduced with the keep-list at graph level and on tiles, and the
cycle model's µs of the three. ``--json F`` writes the same figures
(:meth:`~tilegraph.search.accuracy.AccuracyReport.to_json`). A bad argument or model is one
``error:`` line and exit status 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tilegraph.hardware import DEFAULT_PRESET, PRESETS
from tilegraph.target import PRECISION_MODES
from tilegraph.tools.arg_types import non_negative_float, non_negative_int

GRAPH_PRECISIONS = tuple(name for name, mode in PRECISION_MODES.items() if mode.graph_type)
"""The precisions whose ops a keep-list can keep in float32."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The accuracy search's options (the model positional included)."""
    parser.add_argument("model", help=".onnx file")
    parser.add_argument(
        "--precision",
        choices=GRAPH_PRECISIONS,
        default="force_fp16",
        help="the reduced-precision mode to make accurate (default: force_fp16)",
    )
    parser.add_argument(
        "--tolerance",
        type=non_negative_float,
        default=1e-2,
        help="largest allowed max|out - fp32| / max|fp32| over the outputs (default 1e-2)",
    )
    parser.add_argument("--inputs", metavar="FILE.npz", help="inputs by name (default: random)")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="seed of random inputs")
    parser.add_argument(
        "--platform",
        choices=tuple(PRESETS),
        default=DEFAULT_PRESET,
        help=f"preset of the tiled run and the estimates (default {DEFAULT_PRESET})",
    )
    parser.add_argument(
        "--keep-dtype-out", metavar="FILE", help="write the keep-list here (ATC's --keep_dtype)"
    )
    parser.add_argument("--json", metavar="FILE", help="write the figures as JSON")


def _inputs(args: argparse.Namespace, module: object) -> dict[str, np.ndarray]:
    from tilegraph.dialects.entry import entry_function, input_names
    from tilegraph.tools.random_inputs import random_inputs

    names = input_names(entry_function(module))  # type: ignore[arg-type]
    given: dict[str, np.ndarray] = {}
    if args.inputs:
        try:
            with np.load(args.inputs) as data:
                given = {k: np.asarray(data[k]) for k in data.files}
        except (OSError, ValueError) as e:
            raise ValueError(f"cannot read inputs '{args.inputs}': {e}") from None
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise ValueError(
                f"{args.inputs}: no model input named {', '.join(unknown)} "
                f"(inputs: {', '.join(names)})"
            )
    return random_inputs(module, args.seed, {}, given)  # type: ignore[arg-type]


def _print(report: dict[str, object], keep_out: str | None) -> None:
    def text(value: object) -> str:
        return "inf" if value is None else f"{value:.3g}"

    error, tiles, us, kernel = (
        report[k] for k in ("error", "tiles_error", "estimate_us", "kernel_us")
    )
    assert isinstance(error, dict) and isinstance(tiles, dict)
    assert isinstance(us, dict) and isinstance(kernel, dict)
    keep = report["keep"]
    assert isinstance(keep, list)
    print(
        f"{report['precision']}, tolerance {report['tolerance']:g}: keep-list of {len(keep)} "
        f"of {report['candidates']} nodes ({report['evaluations']} graph-level runs)"
    )
    for node in keep:
        print(f"  {node}")
    labels = {"fp32": "all float32", "reduced": str(report["precision"]), "keep": "with keep-list"}
    for key, label in labels.items():
        print(
            f"  {label:<22} error {text(error.get(key)):>8} (tiles {text(tiles.get(key)):>8})"
            f"   {text(us.get(key)):>8} µs (kernels {text(kernel.get(key))} µs)"
        )
    if keep_out:
        print(f"keep-list written to {keep_out}")


def run(args: argparse.Namespace) -> int:
    """Run the search as ``args`` say; the exit status."""
    from tilegraph.frontend import OnnxImportError, load_onnx
    from tilegraph.passes.keep_dtype import write_keep_dtype
    from tilegraph.runtime.binding import import_bound, needs_binding
    from tilegraph.search.accuracy import AccuracySearchError, confirm_on_tiles, search_keep_list

    try:
        if not Path(args.model).is_file():
            raise ValueError(f"no such model file: {args.model}")
        module = load_onnx(args.model)
        inputs = _inputs(args, module)
        if needs_binding(module):  # dynamic dims: the tiles need the inputs' shapes
            module = import_bound(args.model, inputs, static=True).module
        # overflow to inf in the reduced runs is what the search measures, not news
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            report = search_keep_list(module, inputs, args.precision, args.tolerance)
            confirm_on_tiles(module, inputs, report, args.platform)
    except (ValueError, OnnxImportError, AccuracySearchError) as e:
        print(f"error: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
        return 1
    figures = report.to_json()
    if args.keep_dtype_out:
        header = (
            f"tilegraph accuracy search: {args.model}, {args.precision}, "
            f"tolerance {args.tolerance:g}"
        )
        write_keep_dtype(args.keep_dtype_out, report.keep, header)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    _print(figures, args.keep_dtype_out)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tilegraph.tools.tune.accuracy``."""
    parser = argparse.ArgumentParser(
        prog="tilegraph-tune --objective accuracy",
        description="find a small set of nodes to keep in float32 under a reduced precision",
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
