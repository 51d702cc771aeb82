"""``tilegraph-run --estimate``: compile the model for its tiles and report the cycle
model's estimate without running anything.

:func:`check_estimate_arguments` refuses, by name, the options that need a run;
:func:`estimate` builds the report (model, graph counts, input shapes, pipeline, the tiles
section with its cycles, the TransData report, stage times) that ``tilegraph-run`` prints.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from tilegraph.passes.analysis import compute_op_count
from tilegraph.runtime.compiled import compile
from tilegraph.tools.random_inputs import random_inputs
from tilegraph.tools.run.model_inputs import import_for, imported_model, set_target
from tilegraph.tools.run.report import strategy_report, tiles_section
from tilegraph.tools.run.shapes import shape_sets
from tilegraph.tools.run.watch import CompileWatch, RunError

_NOT_WITH_ESTIMATE = {
    "compare": "--compare",
    "save_outputs": "--save-outputs",
    "reference": "--reference",
    "check_each_pass": "--check-each-pass",
    "sweep": "--sweep",
}


def check_estimate_arguments(args: argparse.Namespace, named: list[str]) -> None:
    """``--estimate`` runs nothing: the options that need a run are refused by name."""
    refused = [flag for attr, flag in _NOT_WITH_ESTIMATE.items() if getattr(args, attr)]
    if len(named) != len(set(named)):
        refused.append("a repeated --shape")
    if refused:
        raise RunError(f"--estimate runs nothing: {', '.join(refused)} needs a run")
    if args.profile is None:
        args.profile = 15


def estimate(args: argparse.Namespace) -> dict[str, Any]:
    """Compile the model for its tiles and report the cycle model's estimate; nothing runs.
    A model whose dims or branches its inputs decide is imported for inputs of the given
    shapes (``--input`` arrays, else seeded random ones): only their shapes and the values
    that decide a size matter."""
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    given, module, bound = imported_model(args)
    times["import"] = time.perf_counter() - t0
    known = {name: tuple(a.shape) for name, a in given.items()}
    shapes = shape_sets(args, module, known, every_dim=True)[0]
    if bound is None and args.model.endswith(".onnx"):
        from tilegraph.runtime.binding import needs_binding

        if needs_binding(module):
            t0 = time.perf_counter()
            inputs = random_inputs(module, args.seed, shapes, given)
            module, bound = import_for(args, inputs)
            set_target(args, module)
            times["import for the shapes"] = time.perf_counter() - t0
    transdata = None if args.no_format_report else strategy_report(module)
    imported_ops = compute_op_count(module)
    watch = CompileWatch(args, {}, bound.env if bound is not None else None)
    compiled = compile(
        module,
        pipeline=args.pipeline,
        target="tiles",
        hooks=watch,
        reference_fallback=True,
        keep_dtype=args.keep_dtype,
        tune_db=args.tune_db,
    )
    if compiled.not_lowered is not None:
        raise RunError(f"cannot estimate: not lowered to tiles: {compiled.not_lowered}")
    times.update(watch.times)
    tiles = tiles_section(args, compiled)
    assert watch.lowering_started is not None
    times["lower to tiles and estimate"] = time.perf_counter() - watch.lowering_started
    report: dict[str, Any] = {
        "model": args.model,
        "estimate": True,
        **watch.graph_report(imported_ops),
        "inputs": {name: {"shape": list(shape)} for name, shape in shapes.items()},
        "pipeline": args.pipeline,
        **tiles,
    }
    if transdata is not None:
        report["transdata"] = transdata
    report["times_s"] = {k: round(v, 6) for k, v in times.items()}
    return report
