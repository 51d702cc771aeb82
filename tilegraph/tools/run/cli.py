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
ops left on the host with the reason, and the GM memory plan. ``--profile`` prints the
cycle model's estimate on the preset (top kernels by time, their bound and cube
utilisation, totals: cube- vs memory-bound time, TransData time, host ops); ``--trace FILE``
writes a Chrome / Perfetto trace (the model's kernels, and the pipes of one core of the
slowest kernel or of ``--trace-kernel``); with ``--json`` the report carries ``"cycles"``.
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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from tilegraph.cost_model.cycles.simulate import LAUNCH_MODES
from tilegraph.dialects.entry import InputError, entry_function, set_entry
from tilegraph.dialects.layout_storage import UnboundShapeError
from tilegraph.frontend import OnnxImportError
from tilegraph.frontend.onnxruntime_oracle import (
    OnnxruntimeFailed,
    OnnxruntimeMissing,
    compare_with_onnxruntime,
)
from tilegraph.passes.analysis import compute_op_count
from tilegraph.passes.pipelines import with_small_channel
from tilegraph.progress import reporting, task
from tilegraph.runtime.compiled import CompiledModel, CompileError, compile
from tilegraph.runtime.errors import plain_words
from tilegraph.runtime.interpreter import KernelError
from tilegraph.runtime.session import GuardViolation, model_io_names
from tilegraph.runtime.tiles import kernel_failure
from tilegraph.target import PRECISIONS
from tilegraph.tools.arg_types import non_negative_float, non_negative_int, positive_int
from tilegraph.tools.model_files import ModelFileError, load_module
from tilegraph.tools.random_inputs import random_inputs
from tilegraph.tools.run.npy_files import load_npy
from tilegraph.tools.run.progress import KernelProgress, terminal_progress
from tilegraph.tools.run.report import (
    ReportError,
    print_profile,
    print_report,
    strategy_report,
    tiles_section,
)
from tilegraph.tools.run.shapes import (
    ShapeArgumentError,
    add_shape_arguments,
    declared_stand_ins,
    print_shape_sets,
    run_shape_sets,
    shape_sets,
)
from tilegraph.tools.run.watch import CompileWatch, RunError


def read_array(path: str) -> np.ndarray:
    if path.endswith(".npy"):
        return load_npy(path)
    if path.endswith(".pb"):
        import onnx
        from onnx import numpy_helper

        return numpy_helper.to_array(onnx.load_tensor(path))
    raise RunError(f"{path}: inputs must be .npy or .pb files")


def _set_target(args: argparse.Namespace, module: ModuleOp) -> None:
    """``--platform`` / ``--precision`` become the module's target (:mod:`tilegraph.target`)
    before any pass runs (the format report's too); they must agree with a target the
    model already records."""
    from tilegraph.target import pin_target, target_of

    by = f"--platform {args.platform}" if args.platform else "tilegraph-run"
    try:
        pin_target(module, by, args.platform, args.precision or target_of(module).precision)
    except ValueError as e:
        raise RunError(str(e)) from None


def _rounding(compiled: CompiledModel) -> str | None:
    """The 16-bit type the run rounded a float32 model's values to (``--compare``'s
    tolerance)."""
    from tilegraph.target import precision_mode, target_of

    mode = precision_mode(target_of(compiled.module).precision)
    return mode.rounding_type(tiles=compiled.target == "tiles")


def safe_file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "_"


def run(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="tilegraph-run", description="compile and run a model with the reference interpreter"
    )
    ap.add_argument("model", help=".onnx or .mlir file")
    ap.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="an input from a .npy or ONNX .pb file (repeatable)",
    )
    add_shape_arguments(ap)
    ap.add_argument("--seed", type=non_negative_int, default=0, help="seed of random inputs")
    ap.add_argument("-p", "--pipeline", default="", help="pass pipeline (e.g. O1)")
    ap.add_argument(
        "--entry",
        metavar="NAME",
        help="the function to run in a module of several (default: main, else the one "
        "function no other function calls)",
    )
    ap.add_argument("--compare", action="store_true", help="compare with onnxruntime")
    ap.add_argument(
        "--check-each-pass",
        action="store_true",
        help="run the reference interpreter after every pass of the pipeline and name the "
        "first pass that changes the outputs beyond --check-rtol/--check-atol",
    )
    ap.add_argument("--check-rtol", type=non_negative_float, default=1e-4)
    ap.add_argument("--check-atol", type=non_negative_float, default=1e-5)
    ap.add_argument(
        "--rtol",
        type=non_negative_float,
        default=None,
        help="--compare's relative tolerance (default: by output type, 1e-3 for float32, "
        "2^-7 for float16)",
    )
    ap.add_argument(
        "--atol",
        type=non_negative_float,
        default=None,
        help="--compare's absolute tolerance (default: by output type, 1e-4 for float32, "
        "2^-8 of the largest |value| for float16)",
    )
    ap.add_argument("--save-outputs", metavar="DIR", help="write <output>.npy files")
    ap.add_argument("--json", metavar="FILE", help="write the report as JSON")
    ap.add_argument(
        "--profile",
        nargs="?",
        const=15,
        type=positive_int,
        metavar="N",
        help="print the cycle model's estimate on --platform: the N slowest kernels (15)",
    )
    ap.add_argument("--trace", metavar="FILE", help="write the cycle model's Chrome/Perfetto trace")
    ap.add_argument(
        "--trace-kernel",
        metavar="NAME",
        help="the kernel whose pipes --trace shows (default: the slowest)",
    )
    ap.add_argument(
        "--no-format-report",
        action="store_true",
        help="skip the TransData report of the naive, ge and optimal strategies",
    )
    ap.add_argument(
        "--platform",
        default="",
        help="hardware preset of the passes, the tiles and the report, set as the module's "
        "target (default: the model's tilegraph.target, else the default preset)",
    )
    ap.add_argument(
        "--reference",
        action="store_true",
        help="run the graph level with the reference interpreter (no tile lowering)",
    )
    ap.add_argument(
        "--executor",
        choices=("fast", "interpret"),
        default="fast",
        help="how the tiled kernels run: compiled to Python (fast) or interpreted op by op",
    )
    ap.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress display (it shows only when stderr is a terminal)",
    )
    ap.add_argument(
        "--no-verify-sync",
        dest="verify_sync",
        action="store_false",
        help="skip verify-sync, the pipe-queue check of every kernel's flags after lowering",
    )
    ap.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="",
        help="origin, fp16/bf16 (the cube's inputs rounded), ATC's --precision_mode values "
        "(force_fp16, allow_mix_precision*, ...: docs/precision.md) or int8 (a QDQ model's "
        "quantised convolutions and matmuls on the int8 cube); default: the module's target's",
    )
    ap.add_argument(
        "--keep-dtype",
        metavar="FILE",
        help="ATC's --keep_dtype: ops (node names, OpType::T) that keep float32 under "
        "force_fp16 / allow_mix_precision*",
    )
    ap.add_argument(
        "--launch",
        choices=LAUNCH_MODES,
        default="sunk",
        help="how the cycle model schedules the kernels: sunk (a compiled model's tasks on "
        "the device, the default) or host (launched one by one from the host)",
    )
    ap.add_argument(
        "--estimate",
        action="store_true",
        help="compile and print the cycle model's estimate without running anything "
        "(dynamic dims need --shape or --dim)",
    )
    ap.add_argument(
        "--small-channel",
        action="store_true",
        help="ATC's --enable_small_channel=1: convolutions of at most 4 input channels (an "
        "image stem) take the C04 layouts (NC1HWC0_C04 data, FRACTAL_Z_C04 weights)",
    )
    ap.add_argument(
        "--tune-db",
        metavar="FILE",
        help="apply a tuning database (tilegraph-tune): its best tiling parameters on the "
        "kernels it knows, and its graph-level choice when the pipeline is O2 (every compile "
        "of --shape / --sweep too)",
    )
    args = ap.parse_args(argv)
    if not args.reference and not args.pipeline:
        args.pipeline = "O2"
    if args.small_channel:
        try:
            args.pipeline = with_small_channel(args.pipeline or "O2")
        except ValueError as e:
            ap.error(str(e))
    debug = bool(os.environ.get("TILEGRAPH_DEBUG"))
    try:
        named = [item.partition("=")[0] for item in args.shape]
        if args.estimate:
            _check_estimate_arguments(args, named)
            with terminal_progress(args.quiet):
                report = _estimate(args)
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
    print_report(report)
    if isinstance(profile, str):
        print(profile)
    elif profile is not None:
        print_profile(*profile)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0 if report.get("compare_ok", True) else 1


_USER_ERRORS = (
    RunError,
    CompileError,
    ModelFileError,
    ReportError,
    InputError,
    ShapeArgumentError,
    GuardViolation,
    OnnxruntimeMissing,
    OnnxruntimeFailed,
)


def error_message(e: Exception, reference: bool = False) -> str:
    """The one message tilegraph-run prints for ``e``: the error in plain words, naming the
    input, node or op and what to do; a failure that can only be a bug of tilegraph as an
    internal error to report (``TILEGRAPH_DEBUG=1`` shows the traceback). ``reference``:
    the run was on the reference interpreter (the advice for unknown sizes differs)."""
    if isinstance(e, InputError):
        return f"error: {e}; give an array of the model's shape and dtype (--input NAME=FILE)"
    if isinstance(e, _USER_ERRORS):
        return f"error: {e}"
    if isinstance(e, UnboundShapeError):
        if not e.data_dependent:
            advice = "give every input (--input NAME=FILE) or its shape (--shape NAME=...)"
        elif reference:
            advice = "run without a pipeline (no -p): the layout passes need these sizes"
        else:
            advice = (
                "run it with --reference and no -p (origin layouts need no sizes), or make "
                "the inputs that decide these sizes constants of the model"
            )
        return f"error: {e}; {advice}"
    if isinstance(e, KernelError) and not e.internal:
        return f"error: {e}"
    return (
        f"internal error: {plain_words(e)}\n(this is a bug of tilegraph: please report it; "
        "set TILEGRAPH_DEBUG=1 to see the traceback)"
    )


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


_NOT_WITH_ESTIMATE = {
    "compare": "--compare",
    "save_outputs": "--save-outputs",
    "reference": "--reference",
    "check_each_pass": "--check-each-pass",
    "sweep": "--sweep",
}


def _check_estimate_arguments(args: argparse.Namespace, named: list[str]) -> None:
    """``--estimate`` runs nothing: the options that need a run are refused by name."""
    refused = [flag for attr, flag in _NOT_WITH_ESTIMATE.items() if getattr(args, attr)]
    if len(named) != len(set(named)):
        refused.append("a repeated --shape")
    if refused:
        raise RunError(f"--estimate runs nothing: {', '.join(refused)} needs a run")
    if args.profile is None:
        args.profile = 15


def _estimate(args: argparse.Namespace) -> dict[str, Any]:
    """Compile the model for its tiles and report the cycle model's estimate; nothing runs.
    A model whose dims or branches its inputs decide is imported for inputs of the given
    shapes (``--input`` arrays, else seeded random ones): only their shapes and the values
    that decide a size matter."""
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    given, module, bound = _imported(args)
    times["import"] = time.perf_counter() - t0
    known = {name: tuple(a.shape) for name, a in given.items()}
    shapes = shape_sets(args, module, known, every_dim=True)[0]
    if bound is None and args.model.endswith(".onnx"):
        from tilegraph.runtime.binding import needs_binding

        if needs_binding(module):
            t0 = time.perf_counter()
            inputs = random_inputs(module, args.seed, shapes, given)
            module, bound = _import_bound(args, inputs)
            _set_target(args, module)
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


def _run(args: argparse.Namespace) -> dict[str, Any]:
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    given, module, bound = _imported(args)
    times["import"] = time.perf_counter() - t0
    if not args.no_format_report:
        t0 = time.perf_counter()
        transdata = strategy_report(module)
        times["format report"] = time.perf_counter() - t0
    imported_ops = compute_op_count(module)
    inputs = _inputs(args, module, given)
    if bound is None:
        t0 = time.perf_counter()
        module, bound = _bound(args, module, inputs)
        _set_target(args, module)
        if bound is not None:
            times["import for the inputs"] = time.perf_counter() - t0
    bindings = list(bound.reasons) if bound is not None else []
    if bound is not None and not args.reference:
        from tilegraph.runtime.binding import observe_unknown_dims

        observed = observe_unknown_dims(module, inputs)
        bindings += [f"data-dependent size: {o}" for o in observed if o.produced]
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
    t0 = time.perf_counter()
    outputs = _execute(args, compiled, inputs)
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


def _imported(args: argparse.Namespace) -> tuple[dict[str, np.ndarray], ModuleOp, Any]:
    """The --input arrays, the model imported (:func:`_import`) with the target and entry
    the command line sets, and its :class:`BoundImport` (or None)."""
    given = _given_arrays(args)
    with task(f"importing {Path(args.model).name}"):
        module, bound = _import(args, given)
    _set_target(args, module)
    if args.entry is not None:
        set_entry(module, args.entry)
    return given, module, bound


def _import(args: argparse.Namespace, given: Mapping[str, np.ndarray]) -> tuple[ModuleOp, Any]:
    """The model as a module; an ONNX model that branches on its inputs' shapes or values
    (an If the import cannot type alone) is imported for the given arrays, which must then
    cover every input. The second item is the :class:`BoundImport` when that happened."""
    from tilegraph.frontend.onnx_errors import ValueDependentError

    if not args.model.endswith(".onnx"):
        return load_module(args.model), None
    try:
        return load_module(args.model, bindable=False), None
    except ValueDependentError as e:
        missing = [n for n in model_io_names(args.model)[0] if n not in given]
        stand_ins = None if e.value_inputs else declared_stand_ins(args, args.model)
        if missing and stand_ins is not None:  # shapes decide: --dim / --shape size them
            imported = _import_bound(args, {**stand_ins, **given})
            args.dim = []  # the module's dims are these sizes now: no symbol is left to size
            return imported
        if missing:
            raise RunError(
                f"{e}; give every input with --input to compile it (missing: {', '.join(missing)})"
            ) from None
        return _import_bound(args, given)


def _bound(
    args: argparse.Namespace, module: ModuleOp, inputs: Mapping[str, np.ndarray]
) -> tuple[ModuleOp, Any]:
    """An ONNX model whose dims or branches the inputs decide
    (:func:`~tilegraph.runtime.binding.needs_binding`), imported for them: static (every
    dim its size) for the tiles, per --dynamic for --reference; else the module as it is."""
    from tilegraph.runtime.binding import needs_binding

    if not args.model.endswith(".onnx") or not needs_binding(module):
        return module, None
    return _import_bound(args, inputs)


def _import_bound(
    args: argparse.Namespace, inputs: Mapping[str, np.ndarray]
) -> tuple[ModuleOp, Any]:
    from tilegraph.runtime.binding import import_bound

    try:
        bound = import_bound(args.model, inputs, mode=args.dynamic, static=not args.reference)
    except OnnxImportError as e:
        raise RunError(str(e)) from None
    return bound.module, bound


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
        except Exception as e:  # bad input values inside a kernel: name its nodes
            failure = kernel_failure(compiled.module, e)
            if failure is None:
                raise
            raise failure from e
        if counters is not None and counters.started:
            progress.advance(1)  # the last kernel is done too
    return outputs


def _inputs(
    args: argparse.Namespace, module: ModuleOp, given: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    sets = shape_sets(args, module, {name: tuple(a.shape) for name, a in given.items()})
    return random_inputs(module, args.seed, sets[0], given)


def _given_arrays(args: argparse.Namespace) -> dict[str, np.ndarray]:
    """The arrays of --input NAME=FILE."""
    given: dict[str, np.ndarray] = {}
    for item in args.input:
        name, sep, file = item.partition("=")
        if not sep:
            raise RunError(f"--input expects NAME=FILE, got '{item}'")
        try:
            given[name] = read_array(file)
        except FileNotFoundError:
            raise RunError(f"{file}: no such file") from None
        except ValueError as e:
            raise RunError(f"{file}: {e}") from None
    return given


def main() -> None:
    sys.exit(run())
