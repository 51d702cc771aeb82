"""What ``tilegraph-run`` reports: the sections it builds beside the compilation (TransData
per storage strategy, the tiles' kernels, memory plan and cycle estimate), then the run's
summary and the cycle model's profile as printed.

Lists print as tables (:mod:`.tables`): ops by type, host kernels, outputs, TransData per
storage strategy, time per stage, the comparison with onnxruntime, and the profile's
slowest kernels; single facts stay ``key: value`` lines. Everything goes to stdout.
"""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import ModuleOp

from tilegraph.dialects.entry import entry_function
from tilegraph.lowering.conversion.graph_to_kernels_remarks import lowering_lines
from tilegraph.progress import task
from tilegraph.runtime.errors import plain_words
from tilegraph.tools.tables import Col, print_table

if TYPE_CHECKING:
    from tilegraph.cost_model.cycles import ModelCycles
    from tilegraph.runtime.compiled import CompiledModel


SPLIT_GROUPS_SHOWN = 3
"""The split groups the text report names (``--verbose``: all)."""


class ReportError(Exception):
    """A section of the report cannot be made as asked (message complete, exit code 1)."""


def strategy_report(module: ModuleOp) -> dict[str, dict[str, Any]]:
    """TransData count and bytes per inference under each storage strategy (on copies),
    on the module's target."""
    out: dict[str, dict[str, Any]] = {}
    for strategy in ("naive", "ge", "optimal"):
        with task(f"format report: strategy {strategy}"):
            out[strategy] = _strategy_entry(module, strategy)
    return out


def _strategy_entry(module: ModuleOp, strategy: str) -> dict[str, Any]:
    """One strategy's entry of :func:`strategy_report` (its error when it fails)."""
    from tilegraph.passes.context import make_context
    from tilegraph.passes.format_report import format_report
    from tilegraph.passes.pipelines import run_pipeline

    copy = module.clone()
    t0 = time.perf_counter()
    try:
        run_pipeline(f"format{{strategy={strategy}}}", make_context(), copy)
    except Exception as e:  # the report must not hide the run; say what failed
        return {"error": f"strategy {strategy} failed: {plain_words(e)}"}
    reports = format_report(copy)
    entry: dict[str, Any] = dict(reports.get("main", next(iter(reports.values()))))
    entry["seconds"] = round(time.perf_counter() - t0, 4)
    fn = entry_function(copy)
    for key in ("optimal_cost", "optimal_bound", "optimal_status"):
        attr = fn.attributes.get(f"layout.{key}")
        if attr is not None:
            value = getattr(attr, "data", None)
            entry[key] = value if value is not None else attr.value.data  # type: ignore[attr-defined]
    return entry


def tiles_section(args: argparse.Namespace, compiled: CompiledModel) -> dict[str, Any]:
    """The report's tile section of a compiled model: target, kernels, host ops, the GM
    memory plan and the cycle model's part; or why it was not lowered."""
    from tilegraph.lowering.transforms.plan_memory import memory_report
    from tilegraph.target import target_of

    if compiled.not_lowered is not None:
        skipped: dict[str, Any] = {
            "target": "reference",
            "skipped": f"not lowered to tiles: {compiled.not_lowered}",
        }
        if args.profile is not None or args.trace:
            skipped["profile"] = "cycle model: not run (no tiled kernels), no trace written"
        return skipped
    module = compiled.module
    return {
        "target": "tiles",
        "platform": target_of(module).platform,
        "precision": target_of(module).precision,
        "executor": args.executor,
        "kernels": [k.as_dict() for k in compiled.kernels],
        "host_ops": compiled.host_ops,
        "memory": _memory(memory_report(module)),
        **_cycles(args, module),
    }


def _cycles(args: argparse.Namespace, module: ModuleOp) -> dict[str, Any]:
    """The cycle model's part of the report (when --profile, --trace or --json asks), with
    the kernels scheduled as --launch says."""
    if args.profile is None and not args.trace and not args.json:
        return {}
    from tilegraph.cost_model.cycles import (
        CycleModelError,
        CycleModelOptions,
        launch_trace,
        merge_traces,
        model_trace,
        simulate_module,
        write_trace,
    )

    try:
        with task("cycle model"):
            cycles = simulate_module(module, options=CycleModelOptions(launch=args.launch))
        found: dict[str, Any] = {"cycles": cycles.to_json()}
        if args.profile is not None:
            found["profile"] = (cycles, args.profile)  # printed by print_profile below
        if args.trace:
            kernel = args.trace_kernel
            if kernel is None:
                tiled = [k for k in cycles.kernels if k.unit != "host"]
                kernel = max(tiled, key=lambda k: k.total_us).name if tiled else None
            trace = model_trace(cycles)
            if kernel is not None:
                trace = merge_traces(trace, launch_trace(module, kernel))
            write_trace(trace, args.trace)
    except (CycleModelError, ValueError) as e:
        raise ReportError(f"cycle model: {e}") from None
    except OSError as e:
        raise ReportError(f"--trace {args.trace}: {e.strerror}") from None
    return found


COMPUTE_PIPES = frozenset({"V", "M"})
"""The pipes of the vector and cube units' instructions (the cycle model's names)."""


def count_dma_kernels(report: dict[str, Any]) -> None:
    """Add to the report's ``lowering`` kernels ``dma``: the vector kernels whose tiles the
    cycle model finds issuing no vector or cube instruction (DMA and scalar only: slices,
    pads, row gathers, layout copies). Nothing without both the lowering and the cycles."""
    lowering, cycles = report.get("lowering"), report.get("cycles")
    if lowering is None or cycles is None:
        return
    lowering["kernels"]["dma"] = sum(
        1
        for k in cycles["per_kernel"]
        if k["unit"] == "vector" and not COMPUTE_PIPES & set(k["busy_cycles"])
    )


def _memory(report: Any) -> dict[str, int]:
    return {
        "peak": report.peak,
        "lower_bound": report.lower_bound,
        "no_reuse": report.no_reuse,
        "constants": report.constants,
        "in_place": report.in_place,
        "barrier_workspace": report.barrier_workspace,
    }


def print_report(report: dict[str, Any], verbose: bool = False) -> None:
    """Print the report ``tilegraph-run`` builds (see :func:`tilegraph.tools.run.cli.run`):
    of the groups the lowering split, the first :data:`SPLIT_GROUPS_SHOWN` (``verbose``:
    all)."""
    print(f"model: {report['model']}")
    if report.get("pipeline"):
        print(f"pipeline: {report['pipeline']}")
    ops = report["ops"]
    print(f"ops: {ops['imported']} imported -> {ops['after_pipeline']} after the pipeline")
    by_type = sorted(ops["by_type"].items(), key=lambda kv: (-kv[1], kv[0]))
    print_table(["op", Col("count", right=True)], by_type, indent=2)
    fusion = report["fusion"]
    if fusion["groups"]:
        print(
            f"fusion: {fusion['groups']} groups of {fusion['fused_ops']} ops "
            f"(largest {fusion['largest_group']}), "
            f"{fusion['transdata_absorbed']} TransData absorbed"
        )
    if report.get("bindings"):
        print("bound to the inputs:")
        for line in report["bindings"]:
            print(f"  {line}")
    if "check_each_pass" in report:
        print(report["check_each_pass"])
    if "skipped" in report:
        print(f"tiles: {report['skipped']}; ran the reference interpreter")
    elif "kernels" in report:
        _print_kernels(report)
    if "lowering" in report:
        limit = None if verbose else SPLIT_GROUPS_SHOWN
        for line in lowering_lines(report["lowering"], limit):
            print(line)
    if report.get("estimate"):
        shapes = ", ".join(f"{n} {tuple(i['shape'])}" for n, i in report["inputs"].items())
        print(f"estimate only (nothing ran), inputs: {shapes}")
    else:
        print("outputs:")
        outputs = report["outputs"]
        rows = [(name, info["dtype"], info["shape"]) for name, info in outputs.items()]
        print_table(["output", "dtype", "shape"], rows, indent=2)
    if "transdata" in report:
        _print_transdata(report["transdata"])
    print("time per stage:")
    rows = [(stage, f"{seconds * 1e3:.1f}") for stage, seconds in report["times_s"].items()]
    print_table(["stage", Col("ms", right=True)], rows, indent=2)
    if "compare" in report:
        _print_compare(report["compare"])


def _print_kernels(report: dict[str, Any]) -> None:
    kernels = report["kernels"]
    units = {
        u: sum(1 for k in kernels if k["unit"] == u) for u in ("cube", "vector", "host", "mix")
    }
    tiles = sum(k["tiles"] for k in kernels)
    mix = f", mix {units['mix']}" if units["mix"] else ""  # AIC + AIV kernels (decoupled)
    print(
        f"kernels on {report['platform']} ({report['precision']}): {len(kernels)} "
        f"(cube {units['cube']}, vector {units['vector']}, host {units['host']}{mix}), "
        f"{tiles} tiles"
    )
    mixes = [k for k in kernels if k["unit"] == "mix"]
    if mixes:
        flags = sum(k["cross_core_flags"] for k in mixes)
        workspace = sum(k["workspace_bytes"] for k in mixes)
        print(
            f"  mix kernels: {len(mixes)} (AIC + AIV over a GM workspace): {workspace} "
            f"workspace bytes, {flags} cross-core flag ops"
        )
    host = [k for k in kernels if k["unit"] == "host"]
    if host:
        rows = [(k["name"], ", ".join(k.get("ops", [])), k.get("reason", "")) for k in host]
        print_table(["host kernel", "ops", "reason"], rows, indent=2)
    memory = report["memory"]
    print(
        f"GM workspace: {memory['peak'] / 1e6:.2f} MB planned (lower bound "
        f"{memory['lower_bound'] / 1e6:.2f} MB, no reuse {memory['no_reuse'] / 1e6:.2f} MB, "
        f"{memory['in_place']} in place); weights {memory['constants'] / 1e6:.2f} MB"
    )


def _print_transdata(transdata: dict[str, dict[str, Any]]) -> None:
    print("TransData on activations per inference (format pipeline, per strategy):")
    rows = []
    for strategy, entry in transdata.items():
        if "error" in entry:
            rows.append((strategy, "", "", "", f"error: {entry['error']}"))
            continue
        bound = entry.get("optimal_bound")
        rows.append(
            (
                strategy,
                entry["activations"],
                f"{entry['activation_bytes'] / 1e6:.3f}",
                "" if bound is None else f"{bound / 1e6:.3f}",
                entry.get("optimal_status", ""),
            )
        )
    columns = ["strategy", Col("ops", right=True), Col("MB", right=True)]
    print_table([*columns, Col("bound MB", right=True), "status"], rows, indent=2)


def _print_compare(compare: dict[str, Any]) -> None:
    outputs = compare["outputs"]
    tolerances = {(row["rtol"], row["atol"]) for row in outputs}
    per_output = len(tolerances) > 1
    if per_output:
        print("compare with onnxruntime (rtol / atol by output type and precision):")
    else:
        rtol, atol = tolerances.pop() if tolerances else (compare["rtol"], compare["atol"])
        print(f"compare with onnxruntime (rtol {rtol:.3g}, atol {atol:.3g}):")
    rows = []
    for row in outputs:
        verdict = "PASS" if row["ok"] else "FAIL"
        tolerance = (f"{row['rtol']:.3g}", f"{row['atol']:.3g}") if per_output else ()
        if "error" in row:
            rows.append((row["output"], verdict, "", "", *tolerance, row["error"]))
        else:
            measured = (f"{row['max_abs']:.3g}", f"{row['max_rel']:.3g}")
            rows.append((row["output"], verdict, *measured, *tolerance, ""))
    columns = ["output", "verdict", Col("max abs", right=True), Col("max rel", right=True)]
    if per_output:
        columns += [Col("rtol", right=True), Col("atol", right=True)]
    print_table([*columns, "error"], rows, indent=2)


def print_profile(cycles: ModelCycles, top: int | None) -> None:
    """The cycle model's estimate: the ``top`` kernels by time (all when None), then the
    totals (what :meth:`ModelCycles.render` says, as a table)."""
    from tilegraph.cost_model.cycles.report import nodes_text

    kernels = sorted(cycles.kernels, key=lambda k: -k.total_us)
    shown = kernels if top is None else kernels[:top]
    print(f"cycle model on {cycles.platform} ({cycles.clock_ghz} GHz)")
    rows = []
    for k in shown:
        gm = k.gm_bytes / 1e6
        rows.append(
            (
                k.name,
                k.unit,
                k.blocks,
                f"{k.launches * k.us:.2f}",
                f"{k.launches * k.launch_us:.1f}",
                k.bound,
                f"{100 * k.cube_utilisation:.1f}",
                f"{gm:.2f}",
                nodes_text(k.nodes),
            )
        )
    numbers = [Col(h, right=True) for h in ("µs", "+launch")]
    columns = ["kernel", "unit", Col("blocks", right=True), *numbers, "bound"]
    print_table([*columns, Col("cube%", right=True), Col("GM MB", right=True), "ONNX nodes"], rows)
    if len(kernels) > len(shown):
        print(f"... {len(kernels) - len(shown)} more kernels")
    bounds = ", ".join(f"{b} {t:.1f}" for b, t in cycles.per_bound_us().items() if t)
    units = ", ".join(f"{u} {t:.1f}" for u, t in cycles.per_unit_us().items())
    print(
        f"total {cycles.total_us:.1f} µs = kernels {cycles.kernel_us:.1f} + "
        f"{cycles.scheduling_text()} + host ops {cycles.host_us:.1f}"
    )
    print(f"per unit (µs): {units}")
    print(f"by bound (µs): {bounds}")
    print(f"TransData kernels: {cycles.transdata_us:.1f} µs")
