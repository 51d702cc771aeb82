"""The tiled path end to end (fast executor, interpreter) next to onnxruntime, and the conv
kernels' throughput in the fast executor.

    python benchmarks/tile_execution.py [--models resnet50 squeezenet] [--repeat 5]
        [--interpret-repeat 2] [--kernel-repeat 5] [--kernel-model resnet50] [--no-kernels]
        [--json FILE] [--profile N]

Targets (the issue's): fast executor <= 2x onnxruntime (2 threads) on ResNet-50;
interpreter within 20x. The script prints after the table whether each is met, with the
measured ratio (medians; the ratio of the minima next to it).

1. End to end, per light model (random weights, batch 1, fp32, one input drawn from a
   seeded normal): wall time of one inference, min and median over ``--repeat`` runs after
   one warm-up (``--interpret-repeat`` for the interpreter, which is slow), of
   ``tilegraph.compile(model, "O2", target="tiles")`` with ``executor="fast"`` and
   ``executor="interpret"`` (the same compiled module), of the fast executor with no
   batching (``run_tiles(..., batch=False)``: every tile by itself, as the interpreter runs
   them, with no interpretation), of ``target="reference"`` (the
   graph-level reference interpreter) and of onnxruntime with 1 and with 2 intra-op
   threads. The ratio column divides each median by onnxruntime's (2 threads); the diff
   columns are max |output - onnxruntime 2 threads| over all outputs, absolute and divided
   by max |onnxruntime output| (the models end in a softmax, so absolute differences are
   small by nature). Per model it also prints the time of ``tilegraph.compile`` (import,
   O2 and lowering) with its stages measured on a separate copy, the kernels per unit and
   their tiles, and where one fast inference spends its time: the launched kernel
   functions per unit (each wrapped with a timer for that one run) and the rest (input
   and output layout, allocations, host sequence); then, in another run, per tile op
   closure (``nest_product``, ``flattened(batched_copy(copy))``, ...), calls and time.
2. Conv kernels (``--kernel-model``, ResNet-50 by default): every kernel on the cube whose
   ops include ``graph.conv2d``, called on its own through the fast executor
   (``compile_module(module).namespace[python_name(kernel)]``) with random inputs and
   zeroed outputs of its GM argument shapes; min and median over ``--kernel-repeat`` calls
   after one warm-up, GFLOP/s from the min (for numpy too: noise only adds time).
   FLOPs = 2 * N * Cout * OH * OW * (Cin / group) * kh * kw, read from the ``graph.conv2d``
   op of the module after ``lower-graph-to-kernels`` (before ``tile-kernels`` replaces the
   body with loops; kernel names are the same). The peer is numpy's float32 ``a @ b`` on
   this machine, in the same run: for each kernel the im2col
   GEMM of the same FLOPs (M = N*OH*OW, K = Cin/group*kh*kw, N = Cout), and three fixed
   sizes (3136x576x64, 784x1152x128, 1024^3). numpy and the executor's mmad use the same
   BLAS with its default thread count.

3. What the tile program costs at numpy's speed (ResNet-50, when measured): its ``mmad``
   FLOPs as tiled (the cycle model's ``cube_flops``, padding included) at the rate numpy's
   own GEMMs reached on the same convs in section 2 (the best fixed size with
   ``--no-kernels``), plus the bytes of the DMAs that each tile makes for itself (the cycle
   model's ``bytes_per_path`` less ``GM->L1`` and ``L1->L0B``, which a batch may share) at
   numpy's contiguous copy rate measured in the same run, next to the targets' budgets;
   and the tile-by-tile row — what an executor that runs every tile by itself costs before
   any dispatch.

``--json FILE`` writes every number; ``--profile N`` adds cProfile's top N functions (by
cumulative and by own time) of one fast inference of the first model.

Timings are only as good as the machine is quiet: on a 2-core machine another busy process
slows onnxruntime's 2-thread pool (ResNet-50: ~30 ms -> ~100 ms) and numpy's threaded BLAS
(times in multiples of the 4 ms scheduler tick) far more than single-threaded Python, which
flatters the ratios. The script measures the cores other processes kept busy (/proc/stat
less its own CPU time), per row of the end-to-end table and over the whole run, and warns
when that is more than a tenth of a core (coarse for short rows: /proc/stat counts 10 ms
ticks). ``OPENBLAS_NUM_THREADS=1`` makes numpy's peer GEMMs immune to that (the executor's
small per-tile products hardly use BLAS threads: its time does not change).
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import io
import json
import os
import platform
import pstats
import re
import resource
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from math import prod
from typing import Any

import numpy as np
import onnx
import onnxruntime
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp

import tilegraph
from tilegraph.cost_model.cycles import simulate_module
from tilegraph.dialects.element_types import numpy_dtype_of
from tilegraph.dialects.entry import entry_function
from tilegraph.dialects.graph.nn import Conv2dOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import memref_shape
from tilegraph.frontend import load_onnx
from tilegraph.frontend.light_models import LIGHT_MODELS, light_model
from tilegraph.frontend.onnxruntime_oracle import onnxruntime_session
from tilegraph.hardware import DEFAULT_PRESET
from tilegraph.lowering.conversion.kernel_body import read_kernel_body
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.runtime.compiled import CompiledModel
from tilegraph.runtime.fast_executor import compile_module
from tilegraph.runtime.tiles import fast_module, host_signature, run_tiles

FAST_TARGET = 2.0
INTERPRET_TARGET = 20.0
GEMM_SIZES = ((3136, 576, 64), (784, 1152, 128), (1024, 1024, 1024))
UNITS = ("cube", "vector", "host")
SHAREABLE_PATHS = ("GM->L1", "L1->L0B")
"""DMA paths whose loads a batch of tiles may share (a weight block serves every row tile):
the floor leaves them out. The others move what one tile alone reads or writes: its img2col
slice (L1->L0A), its results (L0C->), its vector tile (GM->UB, UB->GM)."""
ONE_BY_ONE = "tiles, fast, tile by tile"
"""The fast executor with no batching: every tile by itself, no interpretation."""


def busy_cpu_seconds() -> float | None:
    """CPU seconds all processes have used since boot (Linux), or None."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class OtherLoad:
    """How many cores other processes kept busy between ``start`` and ``cores`` (Linux;
    None elsewhere): the machine's busy CPU time less this process's (all its threads)."""

    def __init__(self) -> None:
        self.busy, self.own, self.wall = busy_cpu_seconds(), own_cpu_seconds(), time.time()

    def cores(self) -> float | None:
        busy, wall = busy_cpu_seconds(), time.time() - self.wall
        if busy is None or self.busy is None or wall <= 0:
            return None
        return max(0.0, busy - self.busy - (own_cpu_seconds() - self.own)) / wall


def timed(fn: Callable[[], Any], repeat: int) -> tuple[list[float], Any]:
    """Seconds of ``repeat`` calls after one warm-up, and the warm-up's result."""
    result = fn()
    times = []
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times, result


def max_abs(ours: Sequence[np.ndarray], theirs: Sequence[np.ndarray]) -> float:
    return max(
        float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))
        for a, b in zip(ours, theirs, strict=True)
    )


def kernel_functions(module: ModuleOp) -> dict[str, func.FuncOp]:
    return {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}


# ---- compile -------------------------------------------------------------------------------


def stage_times(model: onnx.ModelProto, platform_name: str) -> tuple[dict[str, float], ModuleOp]:
    """Seconds of import, O2, lower-graph-to-kernels and tile-kernels run one by one, and
    the module between the last two (kernels with their graph-op bodies)."""
    times = {}
    start = time.perf_counter()
    module = load_onnx(model)
    times["import"] = time.perf_counter() - start
    ctx = make_context()
    for stage, spec in (
        ("O2", "O2"),
        ("lower-graph-to-kernels", "lower-graph-to-kernels"),
        ("tile-kernels", f"tile-kernels{{platform={platform_name} precision=origin}}"),
    ):
        if stage == "tile-kernels":
            before_tiling = module.clone()
        start = time.perf_counter()
        run_pipeline(spec, ctx, module)
        times[stage] = time.perf_counter() - start
    return times, before_tiling


# ---- end to end ----------------------------------------------------------------------------


def wrapped_run(
    compiled: CompiledModel, inputs: list[np.ndarray], groups: dict[str, str]
) -> tuple[float, dict[str, float], Counter[str]]:
    """One fast inference with the fast executor's namespace entries ``groups`` names
    (python name -> group) wrapped with a timer: the total seconds, seconds and calls per
    group. Uses the executor's cached compilation of the module, restored afterwards."""
    fast = fast_module(compiled.module)
    spent: dict[str, float] = dict.fromkeys(groups.values(), 0.0)
    calls: Counter[str] = Counter()
    originals = {key: fast.namespace[key] for key in groups}

    def wrap(fn: Callable[..., Any], group: str) -> Callable[..., Any]:
        def timed_call(*a: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*a)
            finally:
                spent[group] += time.perf_counter() - start
                calls[group] += 1

        return timed_call

    for key, group in groups.items():
        fast.namespace[key] = wrap(originals[key], group)
    try:
        start = time.perf_counter()
        compiled(*inputs)
        total = time.perf_counter() - start
    finally:
        fast.namespace.update(originals)
    return total, spent, calls


def op_label(fn: Callable[..., Any]) -> str:
    """What an op closure of the fast executor runs, from its qualified name: the
    registered factory that built it, ``load2d`` for ``load2d.<locals>.run``; a wrapper
    around another closure (e.g. batching's ``one_by_one``) names what it wraps:
    ``one_by_one(load2d)``."""
    parts = getattr(fn, "__qualname__", type(fn).__name__).split(".")
    while len(parts) > 1 and parts[-2] == "<locals>":
        parts = parts[:-2]
    if len(parts) == 1:
        for cell in getattr(fn, "__closure__", None) or ():
            inner = cell.cell_contents
            if callable(inner) and hasattr(inner, "__code__"):
                return f"{parts[0]}({op_label(inner)})"
    return ".".join(p for p in parts[-2:] if p != "<locals>")


def unit_breakdown(compiled: CompiledModel, inputs: list[np.ndarray]) -> dict[str, Any]:
    """Where one fast inference spends its time: per unit (the kernel functions timed), and
    per tile op class (every op closure timed, in a second run)."""
    fast = fast_module(compiled.module)
    units = {fast.python_name(k.name): k.unit for k in compiled.kernels}
    total, spent, calls = wrapped_run(compiled, inputs, units)
    ops = {
        key: op_label(value)
        for key, value in fast.namespace.items()
        if re.fullmatch(r"k\d+", key) and callable(value)
    }
    op_total, op_spent, op_calls = wrapped_run(compiled, inputs, ops)
    return {
        "total_ms": total * 1e3,
        "ms": {u: spent.get(u, 0.0) * 1e3 for u in UNITS},
        "launches": {u: calls[u] for u in UNITS},
        "rest_ms": (total - sum(spent.values())) * 1e3,
        "by_op": {
            "total_ms": op_total * 1e3,
            "ops": sorted(
                (
                    {"op": op, "calls": op_calls[op], "ms": op_spent[op] * 1e3}
                    for op in op_spent
                    if op_calls[op]
                ),
                key=lambda r: -r["ms"],
            ),
        },
    }


def end_to_end(name: str, args: argparse.Namespace) -> dict[str, Any]:
    model = light_model(name, seed=0)
    stages, before_tiling = stage_times(model, args.platform)
    start = time.perf_counter()
    fast = tilegraph.compile(model, pipeline="O2", target="tiles", platform=args.platform)
    compile_s = time.perf_counter() - start
    interpret = dataclasses.replace(fast, executor="interpret")
    reference = tilegraph.compile(model, pipeline="O2", target="reference")

    signature = host_signature(entry_function(fast.module))
    rng = np.random.default_rng(0)
    inputs = []
    for t in signature.inputs.data:
        assert isinstance(t, TensorType)
        shape = tuple(int(d) for d in t.origin_shape)
        inputs.append(rng.standard_normal(shape).astype(numpy_dtype_of(t.element_type)))

    measured: dict[str, tuple[list[float], Any]] = {}
    others: dict[str, float | None] = {}

    def measure(runner: str, fn: Callable[[], Any], repeat: int) -> None:
        load = OtherLoad()
        measured[runner] = timed(fn, repeat)
        others[runner] = load.cores()

    measure("tiles, fast executor", lambda: fast(*inputs), args.repeat)
    measure("tiles, interpreter", lambda: interpret(*inputs), args.interpret_repeat)
    measure(
        ONE_BY_ONE,
        lambda: run_tiles(fast.module, inputs, executor="fast", batch=False),
        args.interpret_repeat,
    )
    measure("reference (graph level)", lambda: reference(*inputs), args.repeat)
    by_unit = unit_breakdown(fast, inputs)
    # onnxruntime last, one session at a time: its idle pool threads spin for a while
    # after a run, which would steal a core from whatever is measured next.
    for threads in (1, 2):
        session = onnxruntime_session(model, threads)
        wanted = {i.name for i in session.get_inputs()}
        feed = {n: a for n, a in zip(fast.input_names, inputs, strict=True) if n in wanted}
        label = f"onnxruntime, {threads} thread{'s' if threads > 1 else ''}"
        measure(label, lambda s=session, f=feed: s.run(None, f), args.repeat)
        del session
    ort_times, ort_out = measured["onnxruntime, 2 threads"]
    ort_median = statistics.median(ort_times)
    ort_min = min(ort_times)
    scale = max(float(np.max(np.abs(o))) for o in ort_out) or 1.0
    rows = []
    for runner, (times, out) in measured.items():
        row: dict[str, Any] = {
            "runner": runner,
            "runs": len(times),
            "min_ms": min(times) * 1e3,
            "median_ms": statistics.median(times) * 1e3,
            "ratio": statistics.median(times) / ort_median,
            "ratio_min": min(times) / ort_min,
            "times_ms": [t * 1e3 for t in times],
            "other_processes_cores": others[runner],
        }
        if not runner.startswith("onnxruntime"):
            row["max_abs_diff"] = max_abs(out, ort_out)
            row["rel_diff"] = row["max_abs_diff"] / scale
        rows.append(row)
    units = Counter(k.unit for k in fast.kernels)
    work = simulate_module(fast.module)
    return {
        "model": name,
        "input_shapes": [list(a.shape) for a in inputs],
        "compile_s": compile_s,
        "stages_s": stages,
        "kernels": {u: units[u] for u in UNITS},
        "tiles": sum(k.tiles for k in fast.kernels),
        "max_abs_ort": scale,
        "cube_flops": work.cube_flops,
        "bytes_per_path": work.bytes_per_path(),
        "runners": rows,
        "fast_by_unit": by_unit,
        "_compiled": fast,
        "_before_tiling": before_tiling,
        "_inputs": inputs,
    }


def print_end_to_end(results: list[dict[str, Any]]) -> None:
    print("End to end: one inference, batch 1, fp32 (ratio = median / ORT 2 threads median;")
    print("diff = max |output - ORT 2 threads|, rel = diff / max |ORT output|; others = cores")
    print("kept busy by other processes meanwhile, 0.00 on a quiet machine)")
    header = (
        f"{'model':<12}{'runner':<26}{'runs':>5}{'min ms':>10}{'median ms':>11}"
        f"{'ratio':>8}{'others':>8}{'max |diff|':>12}{'rel':>10}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        for row in r["runners"]:
            cores = row["other_processes_cores"]
            others = f"{cores:>8.2f}" if cores is not None else f"{'?':>8}"
            diff = (
                f"{row['max_abs_diff']:>12.1e}{row['rel_diff']:>10.1e}" if "rel_diff" in row else ""
            )
            print(
                f"{r['model']:<12}{row['runner']:<26}{row['runs']:>5}{row['min_ms']:>10.1f}"
                f"{row['median_ms']:>11.1f}{row['ratio']:>7.1f}x{others}{diff}"
            )
    print()
    for r in results:
        s = r["stages_s"]
        k = r["kernels"]
        b = r["fast_by_unit"]
        print(
            f"{r['model']}: tilegraph.compile {r['compile_s']:.2f} s (import {s['import']:.2f}, "
            f"O2 {s['O2']:.2f}, lower-graph-to-kernels {s['lower-graph-to-kernels']:.2f}, "
            f"tile-kernels {s['tile-kernels']:.2f}); kernels: cube {k['cube']}, "
            f"vector {k['vector']}, host {k['host']}; {r['tiles']} tiles"
        )
        parts = ", ".join(f"{u} {b['ms'][u]:.0f} ms ({b['launches'][u]} launches)" for u in UNITS)
        print(
            f"  one fast inference, {b['total_ms']:.0f} ms: {parts}, "
            f"outside kernels {b['rest_ms']:.0f} ms"
        )
        by_op = b["by_op"]
        print(
            f"  by tile op (another inference, every op call timed: {by_op['total_ms']:.0f} ms, "
            "timer overhead included):"
        )
        small = [row for row in by_op["ops"] if row["ms"] < 0.01 * by_op["total_ms"]]
        for row in by_op["ops"]:
            if row in small:
                continue
            print(
                f"    {row['op']:<36}{row['calls']:>7} calls{row['ms']:>9.1f} ms"
                f"{1e3 * row['ms'] / row['calls']:>9.1f} us/call"
                f"{100 * row['ms'] / by_op['total_ms']:>6.0f}%"
            )
        if small:
            ms = sum(row["ms"] for row in small)
            print(
                f"    {f'{len(small)} others':<36}{sum(row['calls'] for row in small):>7} calls"
                f"{ms:>9.1f} ms{'':>17}{100 * ms / by_op['total_ms']:>6.0f}%"
            )
        rest = by_op["total_ms"] - sum(row["ms"] for row in by_op["ops"])
        print(
            f"    {'outside ops':<36}{'':>13}{rest:>9.1f} ms{'':>17}"
            f"{100 * rest / by_op['total_ms']:>6.0f}%  (loops, index arithmetic, layout of "
            "inputs/outputs, timers)"
        )


def targets(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = []
    for r in results:
        if r["model"] != "resnet50":
            continue
        rows = {row["runner"]: row for row in r["runners"]}
        for runner, limit in (
            ("tiles, fast executor", FAST_TARGET),
            ("tiles, interpreter", INTERPRET_TARGET),
        ):
            row = rows[runner]
            found.append(
                {
                    "target": f"{runner} <= {limit:g}x onnxruntime (2 threads) on ResNet-50",
                    "limit": limit,
                    "ratio": row["ratio"],
                    "ratio_min": row["ratio_min"],
                    "met": row["ratio"] <= limit,
                }
            )
    return found


def print_targets(found: list[dict[str, Any]]) -> None:
    if not found:
        print("Targets: not checked (run with resnet50 in --models).")
        return
    print("Targets:")
    for t in found:
        verdict = "MET" if t["met"] else "NOT MET"
        print(
            f"  {t['target']}: {verdict}, {t['ratio']:.1f}x (median; {t['ratio_min']:.1f}x by min)"
        )


# ---- conv kernels --------------------------------------------------------------------------


def numpy_gemm(m: int, k: int, n: int, repeat: int, cache: dict) -> tuple[float, float]:
    """Min and median seconds of float32 (m, k) @ (k, n)."""
    key = (m, k, n)
    if key not in cache:
        rng = np.random.default_rng(1)
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        times, _ = timed(lambda: a @ b, repeat)
        cache[key] = (min(times), statistics.median(times))
    return cache[key]


def conv_kernels(
    compiled: CompiledModel, before_tiling: ModuleOp, repeat: int, gemm_cache: dict
) -> list[dict[str, Any]]:
    fast = compile_module(compiled.module)
    tiled = kernel_functions(compiled.module)
    macro = kernel_functions(before_tiling)
    rng = np.random.default_rng(2)
    rows = []
    for info in compiled.kernels:
        if info.unit != "cube" or "graph.conv2d" not in info.ops:
            continue
        convs = [op for op in macro[info.name].walk() if isinstance(op, Conv2dOp)]
        assert len(convs) == 1, info.name
        conv = convs[0]
        out_t, w_t = conv.output.type, conv.weight.type
        assert isinstance(out_t, TensorType) and isinstance(w_t, TensorType)
        batch, cout, oh, ow = (int(d) for d in out_t.origin_shape)
        k = prod(int(d) for d in w_t.origin_shape[1:])
        flops = 2 * batch * cout * oh * ow * k
        outputs = {arg.index for _, arg in read_kernel_body(macro[info.name]).writes}
        buffers = []
        for arg in tiled[info.name].body.block.args:
            t = arg.type
            assert isinstance(t, MemRefType)
            shape, dtype = memref_shape(t), numpy_dtype_of(t.element_type)
            if arg.index in outputs:
                buffers.append(np.zeros(shape, dtype))
            else:
                buffers.append(rng.standard_normal(shape).astype(dtype))
        kernel = fast.namespace[fast.python_name(info.name)]
        times, _ = timed(lambda kernel=kernel, buffers=buffers: kernel(*buffers), repeat)
        seconds = min(times)
        np_seconds, np_median = numpy_gemm(batch * oh * ow, k, cout, max(5, repeat), gemm_cache)
        rows.append(
            {
                "kernel": info.name,
                "gemm_mkn": [batch * oh * ow, k, cout],
                "kernel_hw": [int(d) for d in w_t.origin_shape[2:]],
                "tiles": info.tiles,
                "flops": flops,
                "min_ms": seconds * 1e3,
                "median_ms": statistics.median(times) * 1e3,
                "gflops": flops / seconds / 1e9,
                "numpy_min_ms": np_seconds * 1e3,
                "numpy_median_ms": np_median * 1e3,
                "numpy_gflops": flops / np_seconds / 1e9,
            }
        )
    return rows


def print_conv_kernels(
    model: str, rows: list[dict[str, Any]], fast_min_ms: float, gemms: list[dict[str, Any]]
) -> None:
    print(f"Conv kernels of {model} in the fast executor, each called on its own (GFLOP/s from")
    print("the min; numpy = float32 a @ b of the im2col GEMM of the same FLOPs, M x K x N, its")
    print("min; 'x np' = kernel time / numpy time)")
    header = (
        f"{'kernel':<34}{'k':>4}{'M x K x N':>17}{'tiles':>6}{'MFLOP':>6}{'min ms':>8}"
        f"{'med ms':>8}{'GFLOP/s':>8}{'np ms':>8}{'np GF/s':>8}{'x np':>6}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        m, k, n = r["gemm_mkn"]
        kh, kw = r["kernel_hw"]
        print(
            f"{r['kernel']:<34}{f'{kh}x{kw}':>4}{f'{m}x{k}x{n}':>17}{r['tiles']:>6}"
            f"{r['flops'] / 1e6:>6.0f}{r['min_ms']:>8.2f}{r['median_ms']:>8.2f}"
            f"{r['gflops']:>8.1f}{r['numpy_min_ms']:>8.2f}{r['numpy_gflops']:>8.1f}"
            f"{r['min_ms'] / r['numpy_min_ms']:>6.1f}"
        )
    flops = sum(r["flops"] for r in rows)
    ms = sum(r["min_ms"] for r in rows)
    median_ms = sum(r["median_ms"] for r in rows)
    np_ms = sum(r["numpy_min_ms"] for r in rows)
    print("-" * len(header))
    print(
        f"{f'total ({len(rows)} kernels)':<34}{'':>4}{'':>17}{sum(r['tiles'] for r in rows):>6}"
        f"{flops / 1e6:>6.0f}{ms:>8.1f}{median_ms:>8.1f}{flops / ms / 1e6:>8.1f}"
        f"{np_ms:>8.1f}{flops / np_ms / 1e6:>8.1f}{ms / np_ms:>6.1f}"
    )
    print(
        f"Sum of the conv kernels' minima: {ms:.0f} ms, {100 * ms / fast_min_ms:.0f}% of the fast "
        f"executor's fastest inference ({fast_min_ms:.0f} ms); numpy does the same FLOPs as "
        f"plain GEMMs in {np_ms:.1f} ms."
    )
    print()
    print("numpy float32 a @ b on this machine:")
    for g in gemms:
        m, k, n = g["mkn"]
        print(
            f"  {m:>5} x {k:>5} x {n:>5}: min {g['min_ms']:>7.3f} ms "
            f"({g['gflops']:>6.1f} GFLOP/s), median {g['median_ms']:>7.3f} ms "
            f"({g['median_gflops']:>6.1f} GFLOP/s)"
        )


def gemm_peers(repeat: int, cache: dict) -> list[dict[str, Any]]:
    rows = []
    for m, k, n in GEMM_SIZES:
        best, median = numpy_gemm(m, k, n, repeat, cache)
        flops = 2 * m * k * n
        rows.append(
            {
                "mkn": [m, k, n],
                "min_ms": best * 1e3,
                "median_ms": median * 1e3,
                "gflops": flops / best / 1e9,
                "median_gflops": flops / median / 1e9,
            }
        )
    return rows


# ---- what the tiling costs at numpy's speed ----------------------------------------------


def copy_rate(repeat: int) -> float:
    """Bytes per second numpy copies one contiguous 64 MiB float32 array into another (the
    best case of a DMA done with numpy; a gather or a strided copy is slower)."""
    src = np.ones(16 << 20, np.float32)
    dst = np.empty_like(src)
    times, _ = timed(lambda: np.copyto(dst, src), repeat)
    return src.nbytes / min(times)


def floors(
    result: dict[str, Any],
    kernels: list[dict[str, Any]],
    gemms: list[dict[str, Any]],
    bytes_per_s: float,
) -> dict[str, Any]:
    """The least this machine's numpy needs for the tile program's work: its products (the
    ``mmad`` FLOPs as tiled, from the cycle model) at the rate numpy's own GEMMs reached on
    the model's conv shapes (else the best fixed size), and the bytes its DMAs move at
    numpy's best copy rate; and the fast executor run tile by tile."""
    if kernels:
        rate = sum(r["flops"] for r in kernels) / sum(r["numpy_min_ms"] for r in kernels) * 1e3
        rate_source = "numpy's GEMMs of the same convs (im2col, unpadded)"
        useful = sum(r["flops"] for r in kernels)
    else:
        rate = max(g["gflops"] for g in gemms) * 1e9
        rate_source = "numpy's best fixed-size GEMM"
        useful = None
    moved = sum(b for p, b in result["bytes_per_path"].items() if p not in SHAREABLE_PATHS)
    rows = {row["runner"]: row for row in result["runners"]}
    ort = rows["onnxruntime, 2 threads"]["median_ms"]
    gemm_ms = result["cube_flops"] / rate * 1e3
    copy_ms = moved / bytes_per_s * 1e3
    return {
        "model": result["model"],
        "onnxruntime_ms": ort,
        "cube_flops": result["cube_flops"],
        "useful_conv_flops": useful,
        "gemm_rate_flops": rate,
        "gemm_rate_source": rate_source,
        "gemm_ms": gemm_ms,
        "bytes_per_path": result["bytes_per_path"],
        "counted_bytes": moved,
        "copy_bytes_per_s": bytes_per_s,
        "copy_ms": copy_ms,
        "floor_ms": gemm_ms + copy_ms,
        "one_by_one_ms": rows[ONE_BY_ONE]["median_ms"],
    }


def print_floors(f: dict[str, Any]) -> None:
    ort = f["onnxruntime_ms"]

    def x(ms: float) -> str:
        return f"{ms:.0f} ms = {ms / ort:.1f}x onnxruntime"

    print(
        f"What the tile program of {f['model']} costs at numpy's speed on this machine "
        f"(onnxruntime 2 threads {ort:.1f} ms: {FAST_TARGET:g}x = "
        f"{FAST_TARGET * ort:.0f} ms, {INTERPRET_TARGET:g}x = {INTERPRET_TARGET * ort:.0f} ms):"
    )
    useful = (
        f" (the convs' own: {f['useful_conv_flops'] / 1e9:.1f})" if f["useful_conv_flops"] else ""
    )
    print(
        f"  its products, {f['cube_flops'] / 1e9:.1f} GFLOP as tiled{useful}, at "
        f"{f['gemm_rate_flops'] / 1e9:.0f} GFLOP/s ({f['gemm_rate_source']}): {x(f['gemm_ms'])}"
    )
    paths = f["bytes_per_path"]
    counted = ", ".join(f"{p} {b / 1e6:.0f}" for p, b in paths.items() if p not in SHAREABLE_PATHS)
    shared = ", ".join(f"{p} {b / 1e6:.0f}" for p, b in paths.items() if p in SHAREABLE_PATHS)
    print(
        f"  the DMAs each tile makes for itself, {f['counted_bytes'] / 1e6:.0f} MB ({counted}), "
        f"at numpy's contiguous copy rate {f['copy_bytes_per_s'] / 1e9:.1f} GB/s: "
        f"{x(f['copy_ms'])}"
    )
    print(f"    (not counted: {shared} MB, loads a batch of tiles may share)")
    print(f"  together: {x(f['floor_ms'])}")
    print(
        f"  every tile by itself with no interpretation (the fast executor, no batching): "
        f"{x(f['one_by_one_ms'])} — the interpreter runs these kernels too, plus its dispatch"
    )


# ---- profile -------------------------------------------------------------------------------


def profile(result: dict[str, Any], top: int) -> str:
    compiled, inputs = result["_compiled"], result["_inputs"]
    compiled(*inputs)  # warm (the fast executor's compilation is cached)
    profiler = cProfile.Profile()
    profiler.enable()
    compiled(*inputs)
    profiler.disable()
    out = io.StringIO()
    for key in ("cumulative", "tottime"):
        out.write(f"\n--- cProfile, one fast inference of {result['model']}, by {key} ---\n")
        pstats.Stats(profiler, stream=out).sort_stats(key).print_stats(top)
    return out.getvalue()


# ---- main ----------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    blas = "?"
    config = getattr(np, "__config__", None)
    deps = getattr(config, "CONFIG", {}).get("Build Dependencies", {}) if config else {}
    if "blas" in deps:
        blas = f"{deps['blas'].get('name', '?')} {deps['blas'].get('version', '')}".strip()
    return {
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": blas,
        "onnxruntime": onnxruntime.__version__,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["resnet50", "squeezenet"], choices=LIGHT_MODELS)
    ap.add_argument("--repeat", type=int, default=5, help="timed runs after one warm-up")
    ap.add_argument("--interpret-repeat", type=int, default=2, help="timed runs of the interpreter")
    ap.add_argument("--kernel-repeat", type=int, default=5, help="timed calls per conv kernel")
    ap.add_argument("--kernel-model", default="resnet50", choices=LIGHT_MODELS)
    ap.add_argument("--no-kernels", action="store_true", help="skip the conv kernel table")
    ap.add_argument("--platform", default=DEFAULT_PRESET)
    ap.add_argument("--json", metavar="FILE", help="write every number to FILE")
    ap.add_argument("--profile", type=int, metavar="N", help="cProfile's top N functions")
    args = ap.parse_args()

    info = machine()
    print(
        f"{info['cpus']} CPUs ({info['machine']}), Python {info['python']}, numpy "
        f"{info['numpy']} ({info['blas']}), onnxruntime {info['onnxruntime']}, "
        f"platform {args.platform}"
    )
    load = OtherLoad()
    print()
    results = [end_to_end(name, args) for name in args.models]
    print_end_to_end(results)
    print()
    found = targets(results)
    print_targets(found)

    kernels: list[dict[str, Any]] = []
    gemm_cache: dict = {}
    gemms = gemm_peers(max(5, args.repeat), gemm_cache)
    if not args.no_kernels:
        by_model = {r["model"]: r for r in results}
        source = by_model.get(args.kernel_model)
        if source is None:
            source = end_to_end(args.kernel_model, args)
        kernels = conv_kernels(
            source["_compiled"], source["_before_tiling"], args.kernel_repeat, gemm_cache
        )
        fast_row = next(r for r in source["runners"] if r["runner"] == "tiles, fast executor")
        print()
        print_conv_kernels(args.kernel_model, kernels, fast_row["min_ms"], gemms)

    found_floors = []
    bytes_per_s = copy_rate(max(5, args.repeat))
    for r in results:
        if r["model"] == "resnet50":
            own = kernels if args.kernel_model == r["model"] else []
            found_floors.append(floors(r, own, gemms, bytes_per_s))
    for f in found_floors:
        print()
        print_floors(f)

    wall, cores = time.time() - load.wall, load.cores()
    info["wall_s"], info["other_processes_cores"] = wall, cores
    if cores is not None:
        print()
        print(
            f"Other processes kept {cores:.2f} cores busy on average during these {wall:.0f} s "
            f"({os.cpu_count()} CPUs)."
        )
        if cores > 0.1:
            print(
                "WARNING: the machine was not quiet; the times include other work "
                "(onnxruntime's 2-thread row and numpy suffer the most)."
            )

    if args.profile:
        print(profile(results[0], args.profile))

    if args.json:
        report = {
            "machine": info,
            "arguments": vars(args),
            "models": [{k: v for k, v in r.items() if not k.startswith("_")} for r in results],
            "targets": found,
            "conv_kernels": {"model": args.kernel_model, "kernels": kernels} if kernels else None,
            "numpy_gemm": gemms,
            "floors": found_floors,
        }
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
