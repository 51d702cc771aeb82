"""``tilegraph-run MODEL``: compile a model to tiled kernels and run it.

    tilegraph-run model.onnx                       # O2, tiled kernels, seeded random inputs
    tilegraph-run model.onnx --input x=x.npy       # given inputs (.npy or ONNX .pb)
    tilegraph-run model.onnx --compare             # check against onnxruntime
    tilegraph-run model.onnx --executor interpret  # every tile op through xDSL's interpreter
    tilegraph-run model.onnx --reference -p O1     # the graph-level reference interpreter
    tilegraph-run model.mlir --save-outputs out/ --json report.json
    tilegraph-run model.onnx --profile 10 --trace t.json   # cycle model: table, Chrome trace
    tilegraph-run model.onnx --estimate --platform ascend310p --precision fp16
                                                   # the cycle model only: nothing runs
    tilegraph-run model.onnx --tune-db tuning.sqlite --profile   # what tilegraph-tune found

The model is compiled by :func:`tilegraph.compile` — optimised with ``-p`` (O2 when not
given), lowered to kernels and tiled loops for ``--platform`` and run by the fast executor
— which the program watches through :class:`~tilegraph.runtime.compiled.CompileHooks`
(stage times, progress, pass statistics, ``--check-each-pass``, the optimised graph's
counts). The report lists the kernels (cube / vector / host, the tiles each runs) and the
ops left on the host with the reason, what the lowering did (the ``lowering`` section:
kernels by unit, the fused groups it could not lower whole with the strategy's reason, a
line each for the first three, ``--verbose`` for all) and the GM memory plan.
``--profile`` prints the cycle model's estimate on the preset (top kernels by time, their
bound and cube utilisation, totals: cube- vs memory-bound time, TransData time, host
ops); ``--trace FILE`` writes a Chrome / Perfetto trace (the model's kernels, and the pipes
of one core of the slowest kernel or of ``--trace-kernel``); with ``--json`` the report
carries ``"cycles"``.
``--launch sunk|host`` is how the cycle model schedules the kernels: sunk (the default: a
compiled model's tasks scheduled on the device) or launched one by one from the host.
``--estimate`` compiles (pipeline and lowering) and prints the cycle model's report
without running anything: no inputs are made for a static model, so it needs shapes, not
values (every dynamic dim sized by ``--shape`` / ``--dim``, else an error naming it).
A model whose shapes are not static runs on the reference interpreter
(``compile(..., reference_fallback=True)``), and the report says so. An ONNX model whose
dims or branches its inputs decide is imported for the run's inputs first
(:mod:`tilegraph.runtime.binding`). Prints a summary (model, ops by type, kernels, time per
stage, per-output comparison; tables from :mod:`.report`). Errors (bad file, unsupported
op, wrong input) print one message and exit 1; a comparison that fails its tolerances exits
1 too.

On a terminal, stderr shows the run's progress while it lasts (stage, pass by pass, kernel
by kernel, the ``optimal`` solver, run by run for a sweep); nothing when stderr is piped
or with ``--quiet`` (:mod:`.progress`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from tilegraph.dialects.entry import entry_function
from tilegraph.frontend import OnnxImportError
from tilegraph.frontend.onnxruntime_oracle import compare_with_onnxruntime
from tilegraph.passes.analysis import compute_op_count
from tilegraph.progress import reporting, task
from tilegraph.runtime.compiled import CompiledModel, compile
from tilegraph.runtime.interpreter import ShapeChanged
from tilegraph.runtime.tiles import kernel_failure
from tilegraph.tools.model_files import load_module
from tilegraph.tools.run.arguments import parse_arguments
from tilegraph.tools.run.estimate import check_estimate_arguments, estimate
from tilegraph.tools.run.messages import error_message
from tilegraph.tools.run.model_inputs import (
    bound_to_inputs,
    import_for,
    imported_model,
    run_inputs,
    set_target,
)
from tilegraph.tools.run.progress import KernelProgress, terminal_progress
from tilegraph.tools.run.report import (
    count_dma_kernels,
    print_profile,
    print_report,
    strategy_report,
    tiles_section,
)
from tilegraph.tools.run.shapes import print_shape_sets, run_shape_sets, shape_sets
from tilegraph.tools.run.watch import CompileWatch, RunError


def _rounding(compiled: CompiledModel) -> str | None:
    """The 16-bit type the run rounded a float32 model's values to (``--compare``'s
    tolerance)."""
    from tilegraph.target import precision_mode, target_of

    mode = precision_mode(target_of(compiled.module).precision)
    return mode.rounding_type(tiles=compiled.target == "tiles")


def safe_file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "_"


def run(argv: Sequence[str] | None = None) -> int:
    args = parse_arguments(argv)
    debug = bool(os.environ.get("TILEGRAPH_DEBUG"))
    try:
        named = [item.partition("=")[0] for item in args.shape]
        if args.estimate:
            check_estimate_arguments(args, named)
            with terminal_progress(args.quiet):
                report = estimate(args)
        elif args.sweep or len(named) != len(set(named)):
            return _run_shape_sets(args)
        else:
            with terminal_progress(args.quiet):
                report = _run(args)
    except Exception as e:
        if debug:
            raise
        print(error_message(e, reference=args.reference), file=sys.stderr)
        return 1
    profile = report.pop("profile", None)
    count_dma_kernels(report)
    print_report(report, args.verbose)
    if isinstance(profile, str):
        print(profile)
    elif profile is not None:
        print_profile(*profile)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0 if report.get("compare_ok", True) else 1


def _run_shape_sets(args: argparse.Namespace) -> int:
    """Several shape sets (repeated --shape, --sweep) through one Session."""
    if not args.model.endswith(".onnx"):
        raise RunError("--sweep and repeated --shape need an .onnx model")
    module = load_module(args.model)
    try:
        with terminal_progress(args.quiet):
            report = run_shape_sets(args, module, shape_sets(args, module))
    except OnnxImportError as e:
        raise RunError(str(e)) from None
    print_shape_sets(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0 if report["compare_ok"] else 1


def _run(args: argparse.Namespace) -> dict[str, Any]:
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    given, module, bound = imported_model(args)
    times["import"] = time.perf_counter() - t0
    if not args.no_format_report:
        t0 = time.perf_counter()
        transdata = strategy_report(module)
        times["format report"] = time.perf_counter() - t0
    imported_ops = compute_op_count(module)
    inputs = run_inputs(args, module, given)
    if bound is None:
        t0 = time.perf_counter()
        module, bound = bound_to_inputs(args, module, inputs)
        set_target(args, module)
        if bound is not None:
            times["import for the inputs"] = time.perf_counter() - t0
    # the tiles may compute a data-dependent size other than the reference observed for
    # these inputs (a count that rounding tips): the model is then compiled again with the
    # sizes after it observed from the data the tiles produced, once per such value
    produced: dict[str, np.ndarray] = {}
    while True:
        bindings = list(bound.reasons) if bound is not None else []
        if bound is not None and not args.reference:
            from tilegraph.runtime.binding import observe_unknown_dims

            observed = observe_unknown_dims(module, inputs, produced)
            bindings += [f"data-dependent size: {o}" for o in observed if o.produced]
            bindings += [f"observed from the tiles' data: {label}" for label in produced]
        compiled, watch, tiles = _compile(args, module, inputs, bound, times)
        t0 = time.perf_counter()
        try:
            outputs = _execute(args, compiled, inputs)
        except ShapeChanged as e:
            if bound is None or args.reference or e.produced is None or e.value in produced:
                raise
            produced[e.value] = e.produced
            module, bound = import_for(args, inputs)
            set_target(args, module)
            continue
        break
    times[f"run (tiles, {args.executor})" if compiled.target == "tiles" else "run (reference)"] = (
        time.perf_counter() - t0
    )
    names = compiled.output_names
    graph = watch.optimised_graph
    guards = graph["guards"] + ([str(g) for g in bound.value_guards] if bound is not None else [])
    report: dict[str, Any] = {
        "model": args.model,
        **watch.graph_report(imported_ops),
        "inputs": {k: {"shape": list(v.shape), "dtype": str(v.dtype)} for k, v in inputs.items()},
        "outputs": {
            n: {"shape": list(np.shape(o)), "dtype": str(np.asarray(o).dtype)}
            for n, o in zip(names, outputs, strict=True)
        },
        "pipeline": args.pipeline or None,
    }
    if guards:
        report["guards"] = guards
    if bindings:
        report["bindings"] = bindings
    if watch.check_summary is not None:
        report["check_each_pass"] = watch.check_summary
    if tiles is not None:
        report.update(tiles)
    elif args.profile is not None or args.trace:
        report["profile"] = "cycle model: not run (--reference: no tiled kernels), no trace written"
    if not args.no_format_report:
        report["transdata"] = transdata
    if args.compare:
        if not args.model.endswith(".onnx"):
            raise RunError("--compare needs an .onnx model (onnxruntime runs the original)")
        t0 = time.perf_counter()
        with task("running onnxruntime"):
            rows = compare_with_onnxruntime(
                args.model, inputs, names, outputs, args.rtol, args.atol, _rounding(compiled)
            )
        times["onnxruntime"] = time.perf_counter() - t0
        report["compare"] = {"rtol": args.rtol, "atol": args.atol, "outputs": rows}
        report["compare_ok"] = all(r["ok"] for r in rows)
    if args.save_outputs:
        out_dir = Path(args.save_outputs)
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, array in zip(names, outputs, strict=True):
            np.save(out_dir / f"{safe_file_name(name)}.npy", np.asarray(array))
    report["times_s"] = {k: round(v, 6) for k, v in times.items()}
    return report


def _compile(
    args: argparse.Namespace,
    module: ModuleOp,
    inputs: dict[str, np.ndarray],
    bound: Any,
    times: dict[str, float],
) -> tuple[CompiledModel, CompileWatch, dict[str, Any] | None]:
    """The module compiled as the arguments ask (its stages' times added to ``times``), and
    the tiles' section of the report."""
    if args.check_each_pass and not args.pipeline:
        raise RunError("--check-each-pass needs a pipeline (-p)")
    watch = CompileWatch(args, inputs, bound.env if bound is not None else None)
    compiled = compile(
        module,  # it carries the target and the entry, set above with the CLI's messages
        pipeline=args.pipeline,
        target="reference" if args.reference else "tiles",
        executor=args.executor,
        hooks=watch,
        reference_fallback=True,
        verify_sync=args.verify_sync,
        keep_dtype=args.keep_dtype,
        tune_db=args.tune_db,
    )
    times.update(watch.times)
    tiles: dict[str, Any] | None = None
    if not args.reference:
        tiles = tiles_section(args, compiled)
        assert watch.lowering_started is not None
        times["lower to tiles"] = time.perf_counter() - watch.lowering_started
    return compiled, watch, tiles


def _execute(
    args: argparse.Namespace, compiled: CompiledModel, inputs: dict[str, np.ndarray]
) -> list[np.ndarray]:
    """Run the compiled model on the progress display (kernel by kernel for the tiles)."""
    if compiled.target != "tiles":
        with task("running the reference interpreter"):
            return compiled.run(inputs)
    from tilegraph.dialects.tile import LaunchOp

    fn = entry_function(compiled.module)
    launches = sum(1 for op in fn.walk() if isinstance(op, LaunchOp))
    label = f"running kernels ({args.executor})"
    with task(label, total=launches) as progress:
        counters = KernelProgress(progress, label) if reporting() else None
        try:
            outputs = compiled.run(inputs, counters=counters)
        except ShapeChanged:
            raise  # the caller compiles again for the size the tiles produced
        except Exception as e:  # bad input values inside a kernel: name its nodes
            failure = kernel_failure(compiled.module, e)
            if failure is None:
                raise
            raise failure from e
        if counters is not None and counters.started:
            progress.advance(1)  # the last kernel is done too
    return outputs


def main() -> None:
    sys.exit(run())
