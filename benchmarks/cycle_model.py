"""The cycle model against published figures, and what it says about the light models.

    python benchmarks/cycle_model.py [--sections a b c d e] [--models resnet50 ...]
        [--time-limit 20] [--json FILE] [--png resnet50_kernels.png]

(a) Per-instruction costs next to the formulas of docs/hardware.md (the unit tests in
    tests/runtime/test_cycle_model.py assert them).
(b) The Ascend C matmul tuning case: M=4096, N=5120, K=4096, fp16 in, on 20 cube cores (the
    910B preset with ``cube_cores = 20``): 4 -> 20 cores (published 12045 -> 2532 µs,
    4.75x), base block (64, 64, 256) -> (128, 256, 64) (published MTE2 2452 -> 808 µs,
    3.0x), cube utilisation after tuning (published >= 80%). Two IRs of each case:
    * ``compiler``: ONNX MatMul -> O1 -> lower-graph-to-kernels -> tile-kernels{base-block}
      -> multi-buffer -> split-cores{cores} -> inject-sync (what tilegraph builds today);
    * ``Ascend C style``: the same tiles written by hand the way Ascend C's matmul runs them
      — one loop over all (m, n) output blocks shared round robin by the cores (its
      usedCoreNum = M/singleCoreM x N/singleCoreN split), L1 and L0 double-buffered along K,
      one base K step per GM -> L1 load (the compiler IR brings 4 per load: stepKa/stepKb).
    The output is fp16 (ONNX MatMul keeps the input type; the published case writes fp32:
    FIX moves the same L0C bytes, GM receives half).
(c) Large fp16 GEMMs (5120^3 and 8192^3, base block 128x256x64, 24 cores) against ~90% of
    cube peak.
(d) A memory-bound elementwise add (2 x 64 Mi fp16 in, 64 Mi out) against bytes / GM
    bandwidth.
(e) Per light model on ascend910b: estimated time with the naive / ge / optimal storage
    strategies, with and without fusion (``O1,format{strategy=...}[,fuse-ops]`` then the
    lowering pipeline of ``tilegraph.compile``); ResNet-50's per-kernel breakdown as a PNG
    when matplotlib is importable.

Times are µs of one kernel launch without the launch overhead unless a column says so;
"MTE2 µs" is the MTE2 pipe's busy time on the slowest core (mean over cores in brackets).
"""

from __future__ import annotations

import argparse
import importlib
import json
import time
from collections.abc import Callable
from dataclasses import replace
from math import ceil
from typing import Any

import onnx
import onnx.helper as oh
from onnx import TensorProto
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IntegerAttr, StringAttr, f16, f32, i64

from tilegraph.cost_model.cycles import (
    CycleModelOptions,
    KernelCycles,
    ModelCycles,
    compile_kernel,
    simulate_launch,
    simulate_module,
)
from tilegraph.cost_model.tile_costs import cost_of
from tilegraph.dialects.tile import (
    BINARY_OPS,
    FixpipeOp,
    Load2dOp,
    MmadOp,
    Nd2NzOp,
    scoped_memref,
)
from tilegraph.frontend import load_onnx
from tilegraph.frontend.light_models import LIGHT_MODELS, light_model
from tilegraph.hardware import HardwareModel, hardware_preset
from tilegraph.lowering.analysis.buffers import mark_multi_buffer
from tilegraph.lowering.analysis.kernel_attrs import KERNEL_ATTR, PARALLEL_ATTR, TILES_ATTR
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.transforms.split_cores import split_loop
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import lowering_pipeline, run_pipeline

B910 = hardware_preset("ascend910b")
A2_20 = replace(B910, cube_cores=20)
"""The tuning guide's chip: an A2 with 20 cube cores."""
F = 16

# ---- published figures (docs/hardware.md) --------------------------------------------------
PUBLISHED_4_CORES_US, PUBLISHED_20_CORES_US = 12045.0, 2532.0
PUBLISHED_MTE2_BEFORE_US, PUBLISHED_MTE2_AFTER_US = 2452.0, 808.0
PUBLISHED_TUNED_UTILISATION = 0.80
PUBLISHED_GEMM_PEAK_FRACTION = 0.90


def table(headers: list[str], rows: list[list[Any]]) -> str:
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    out = [line, "-" * len(line)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(out)


def us(cycles: float, hw: HardwareModel = B910) -> float:
    return cycles / hw.cycles_per_us


# ---- (a) ---------------------------------------------------------------------------------
def section_a() -> dict[str, Any]:
    fn = func.FuncOp("k", ((), ()))
    b = KernelBuilder(fn.body.block, B910)
    gm = fn.body.block.insert_arg(scoped_memref((4096, 4096), f16, "GM"), 0)
    a_l1 = b.buffer((4, 8, F, F), f16, "L1", "a_l1")
    a_l0 = b.buffer((8, 4, F, F), f16, "L0A", "a")
    b_l0 = b.buffer((4, 16, F, F), f16, "L0B", "b")
    c_l0 = b.buffer((16, 8, F, F), f32, "L0C", "c")
    ub = b.buffer((64, 128), f16, "UB", "x")
    zero = b.index(0)
    cases = [
        ("mmad 128x64x256 f16", MmadOp(a_l0, b_l0, c_l0, b.flag(True)), 6 + 8 * 4 * 16),
        (  # 128-B GM runs (64-element rows): 70% of the path rate
            "nd2nz 64x128 f16 (GM->L1)",
            Nd2NzOp(gm, [zero, zero], a_l1),
            16 + ceil(16384 / (78 * 0.7)),
        ),
        ("load2d 128x64 (L1->L0A)", Load2dOp(a_l1, zero, zero, a_l0, "swap"), 26 + 16384 // 256),
        (  # CANN's two stages: 128 KiB of fp32 out of L0C, then 64 KiB of fp16 to GM
            "fixpipe 128x256 f32 -> f16 (L0C->GM)",
            FixpipeOp(c_l0, gm, [zero, zero]),
            16 + ceil(131072 / 256) + ceil(65536 / 128),
        ),
        ("vadd 64x128 f16", BINARY_OPS["vadd"](ub, ub, ub), 8 + 16384 // 256),
    ]
    rows = [
        [name, cost_of(op, B910), formula, "ok" if cost_of(op, B910) == formula else "DIFFERS"]
        for name, op, formula in cases
    ]
    print(
        "(a) per-instruction costs on ascend910b (cycles of pipe time; DMA issue head 16, "
        "MTE1 start 26, vector start-up 8; a GM transfer's round trip, 311 reading / 157 "
        "writing, follows its pipe time)"
    )
    print(table(["op", "cost()", "formula", ""], rows))
    return {name: cost for name, cost, *_ in rows}


# ---- matmul modules ------------------------------------------------------------------------
def matmul_onnx(m: int, k: int, n: int) -> onnx.ModelProto:
    graph = oh.make_graph(
        [oh.make_node("MatMul", ["a", "b"], ["c"])],
        "matmul",
        [
            oh.make_tensor_value_info("a", TensorProto.FLOAT16, [m, k]),
            oh.make_tensor_value_info("b", TensorProto.FLOAT16, [k, n]),
        ],
        [oh.make_tensor_value_info("c", TensorProto.FLOAT16, [m, n])],
    )
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])


def compiler_matmul(m: int, k: int, n: int, base: tuple[int, int, int], cores: int) -> KernelCycles:
    module = load_onnx(matmul_onnx(m, k, n))
    spec = (
        f'O1,lower-graph-to-kernels,tile-kernels{{base-block="{",".join(map(str, base))}"}},'
        f"multi-buffer,split-cores{{cores={cores}}},inject-sync"
    )
    run_pipeline(spec, make_context(), module)
    hw = replace(B910, cube_cores=max(cores, 20))
    (kernel,) = simulate_module(module, hw).kernels
    return kernel


def ascend_c_matmul(m: int, k: int, n: int, base: tuple[int, int, int]) -> func.FuncOp:
    """The tiles of Ascend C's matmul: every (m, n) base block of C in one loop (shared
    round robin by the blocks), K in steps of baseK with L1 and L0 ping-pong."""
    bm, bn, bk = (d // F for d in base)
    fn = func.FuncOp("ascend_c_matmul", ((), ()))
    fn.attributes[TILES_ATTR] = IntegerAttr(1, i64)
    fn.attributes[KERNEL_ATTR] = StringAttr("cube")
    block = fn.body.block
    a = block.insert_arg(scoped_memref((m, k), f16, "GM"), 0)
    b_gm = block.insert_arg(scoped_memref((k, n), f16, "GM"), 1)
    c = block.insert_arg(scoped_memref((m, n), f16, "GM"), 2)
    b = KernelBuilder(block, B910)
    a_l1 = b.buffer((bk, bm, F, F), f16, "L1", "a_l1")
    b_l1 = b.buffer((bn, bk, F, F), f16, "L1", "b_l1")
    a_l0 = b.buffer((bm, bk, F, F), f16, "L0A", "a_l0a")
    b_l0 = b.buffer((bk, bn, F, F), f16, "L0B", "b_l0b")
    c_l0 = b.buffer((bn, bm, F, F), f32, "L0C", "c_l0c")
    for buffer in (a_l1, b_l1, a_l0, b_l0):
        mark_multi_buffer(buffer.owner, 2)  # type: ignore[arg-type]
    n_blocks = n // base[1]
    zero = b.index(0)
    with b.loop((m // base[0]) * n_blocks, name="t", parallel=True) as t:
        row = b.add(arith.FloorDivSIOp(t, b.index(n_blocks))).results[0]
        col = b.add(arith.RemSIOp(t, b.index(n_blocks))).results[0]
        m_el, n_el = b.affine(row, base[0]), b.affine(col, base[1])
        with b.loop(k // F, bk, name="k") as kf:
            first = b.add(arith.CmpiOp(kf, zero, "eq")).results[0]
            k_el = b.affine(kf, F)
            b.add(Nd2NzOp(a, [m_el, k_el], a_l1))
            b.add(Load2dOp(a_l1, zero, zero, a_l0, "swap"))
            b.add(Nd2NzOp(b_gm, [k_el, n_el], b_l1))
            b.add(Load2dOp(b_l1, zero, zero, b_l0, "transpose"))
            b.add(MmadOp(a_l0, b_l0, c_l0, first))
        b.add(FixpipeOp(c_l0, c, [m_el, n_el]))
    b.finish()
    block.add_op(func.ReturnOp())
    (loop,) = [
        op for op in fn.walk() if isinstance(op, scf.ForOp) and PARALLEL_ATTR in op.attributes
    ]
    split_loop(loop)
    return fn


def ascend_c_cycles(
    m: int, k: int, n: int, base: tuple[int, int, int], cores: int, hw: HardwareModel = A2_20
) -> KernelCycles:
    fn = ascend_c_matmul(m, k, n, base)
    trips = (m // base[0]) * (n // base[1])
    return simulate_launch(compile_kernel(fn, hw), hw, min(cores, trips), CycleModelOptions())


def ideal_cube_us(m: int, k: int, n: int, cores: int, hw: HardwareModel = B910) -> float:
    return us(m * k * n / hw.cube_macs_per_cycle["float16"] / cores, hw)


def mte2_us(k: KernelCycles) -> str:
    return f"{us(k.busy_cycles.get('MTE2', 0)):.0f} ({us(k.mean_busy_cycles.get('MTE2', 0)):.0f})"


# ---- (b) -----------------------------------------------------------------------------------
def section_b() -> dict[str, Any]:
    m, k, n = 4096, 4096, 5120
    slow, tuned = (64, 64, 256), (128, 256, 64)
    configs = [("compiler", compiler_matmul), ("Ascend C style", None)]
    results: dict[str, dict[str, KernelCycles]] = {}
    rows = []
    for label, build in configs:
        found = {}
        for base, cores in ((slow, 4), (slow, 20), (tuned, 20)):
            if build is None:
                kc = ascend_c_cycles(m, k, n, base, cores)
            else:
                kc = build(m, k, n, base, cores)
            found[f"{base}x{cores}"] = kc
            rows.append(
                [
                    label,
                    cores,
                    str(base),
                    kc.blocks,
                    f"{kc.us:.0f}",
                    mte2_us(kc),
                    f"{us(kc.busy_cycles.get('M', 0)):.0f}",
                    kc.bound,
                    f"{100 * kc.cube_utilisation:.1f}%",
                    f"{kc.bytes_per_path.get('GM->L1', 0) / 1e9:.2f}",
                ]
            )
        results[label] = found
    print("\n(b) Ascend C matmul tuning case, M=4096 N=5120 K=4096 fp16, A2 with 20 cube cores")
    print(f"    ideal cube time on 20 cores: {ideal_cube_us(m, k, n, 20):.0f} µs (published ≈ 583)")
    print(
        table(
            [
                "IR",
                "cores",
                "base block",
                "blocks",
                "µs",
                "MTE2 µs",
                "M µs",
                "bound",
                "cube util",
                "GM->L1 GB",
            ],
            rows,
        )
    )
    ratio_rows = []
    summary: dict[str, Any] = {}
    for label, found in results.items():
        s4, s20, t20 = found[f"{slow}x4"], found[f"{slow}x20"], found[f"{tuned}x20"]
        speedup = s4.us / s20.us
        mte2_cut = s20.busy_cycles["MTE2"] / t20.busy_cycles["MTE2"]
        mte2_cut_mean = s20.mean_busy_cycles["MTE2"] / t20.mean_busy_cycles["MTE2"]
        ratio_rows += [
            [
                label,
                "4 -> 20 cores (kernel time)",
                f"{speedup:.2f}x",
                f"{PUBLISHED_4_CORES_US / PUBLISHED_20_CORES_US:.2f}x",
            ],
            [
                label,
                "base block: MTE2 time cut (slowest core / mean)",
                f"{mte2_cut:.2f}x / {mte2_cut_mean:.2f}x",
                f"{PUBLISHED_MTE2_BEFORE_US / PUBLISHED_MTE2_AFTER_US:.2f}x",
            ],
            [
                label,
                "cube utilisation, tuned",
                f"{100 * t20.cube_utilisation:.1f}%",
                f">= {100 * PUBLISHED_TUNED_UTILISATION:.0f}%",
            ],
            [label, "20 cores untuned, µs", f"{s20.us:.0f}", f"{PUBLISHED_20_CORES_US:.0f}"],
            [
                label,
                "MTE2 µs untuned -> tuned (mean per core)",
                f"{us(s20.mean_busy_cycles['MTE2']):.0f} -> {us(t20.mean_busy_cycles['MTE2']):.0f}",
                f"{PUBLISHED_MTE2_BEFORE_US:.0f} -> {PUBLISHED_MTE2_AFTER_US:.0f}",
            ],
        ]
        summary[label] = {
            "speedup_4_to_20": speedup,
            "mte2_cut": mte2_cut,
            "mte2_cut_mean": mte2_cut_mean,
            "tuned_utilisation": t20.cube_utilisation,
            "kernels": {key: kc.to_json() for key, kc in found.items()},
        }
    print(table(["IR", "ratio", "measured", "published"], ratio_rows))
    traffic = lambda bm, bn: (n / bn * m * k + m / bm * k * n) * 2  # noqa: E731
    print(
        f"    GM traffic formula (N/baseN·M·K + M/baseM·K·N): "
        f"{traffic(64, 64) / traffic(128, 256):.2f}x less with the tuned block"
    )
    return summary


# ---- (c) -----------------------------------------------------------------------------------
def section_c() -> dict[str, Any]:
    base, cores = (128, 256, 64), 24
    rows, out = [], {}
    for size in (5120, 8192):
        ideal = ideal_cube_us(size, size, size, cores)
        for label, kc in (
            ("compiler", compiler_matmul(size, size, size, base, cores)),
            ("Ascend C style", ascend_c_cycles(size, size, size, base, cores, B910)),
        ):
            peak = ideal / kc.us
            out[f"{size}/{label}"] = {"us": kc.us, "fraction_of_peak": peak, "bound": kc.bound}
            rows.append(
                [
                    f"{size}^3",
                    label,
                    kc.blocks,
                    f"{kc.us:.0f}",
                    f"{ideal:.0f}",
                    f"{100 * peak:.1f}%",
                    f"{100 * PUBLISHED_GEMM_PEAK_FRACTION:.0f}%",
                    kc.bound,
                    mte2_us(kc),
                    f"{kc.hbm_fraction:.2f}",
                ]
            )
    per_step = 2 * (base[0] + base[1]) * base[2]
    mmad = 6 + base[0] // 16 * base[2] // 16 * base[1] // 16
    load = 2 * 16 + per_step / B910.dma_bytes_per_cycle["GM->L1"]
    print(f"\n(c) fp16 GEMM, base block {base}, {cores} cores on ascend910b")
    headers = ["size", "IR", "blocks", "µs", "ideal µs", "of peak", "published", "bound"]
    print(table([*headers, "MTE2 µs", "HBM share"], rows))
    print(
        f"    per K step: mmad {mmad} cycles, its GM->L1 bytes {load:.0f} cycles at "
        f"{B910.dma_bytes_per_cycle['GM->L1']:.0f} B/cycle (full-rate runs): at most "
        f"{100 * mmad / load:.0f}% cube busy ({per_step / (mmad / 0.9):.0f} B/cycle would allow "
        f"90%); L1 reuse across output blocks needs a whole-K panel in L1 (K <= ~900)"
    )
    print(
        "    8192^3 touches 384 MB of GM, more than the 192 MiB L2: the L2 model keeps the "
        "windows re-read within their reuse distance (HBM share above)"
    )
    # L1 panel reuse (stepN / stepM) needs a whole-K panel in half of L1: K <= ~900 here
    m, k, n = 4096, 768, 5120
    kc = compiler_matmul(m, k, n, base, cores)
    ideal = ideal_cube_us(m, k, n, cores)
    per_block = (n / base[1] * m * k + m / base[0] * k * n) * 2
    moved = kc.bytes_per_path.get("GM->L1", 0)
    print(
        f"    {m}x{k}x{n} (K fits an L1 panel): {kc.us:.0f} µs, {100 * ideal / kc.us:.1f}% of "
        f"peak, {kc.bound}-bound; GM->L1 {moved / 1e9:.3f} GB vs {per_block / 1e9:.3f} GB "
        f"with both windows loaded per output block ({per_block / max(moved, 1):.2f}x less)"
    )
    out["panel"] = {"us": kc.us, "fraction_of_peak": ideal / kc.us, "gm_to_l1": moved}
    return out


# ---- (d) -----------------------------------------------------------------------------------
def section_d() -> dict[str, Any]:
    n = 1 << 26
    graph = oh.make_graph(
        [oh.make_node("Add", ["a", "b"], ["c"])],
        "add",
        [oh.make_tensor_value_info(x, TensorProto.FLOAT16, [64, n // 64]) for x in "ab"],
        [oh.make_tensor_value_info("c", TensorProto.FLOAT16, [64, n // 64])],
    )
    module = load_onnx(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)]))
    run_pipeline("O1," + lowering_pipeline("ascend910b"), make_context(), module)
    (kc,) = simulate_module(module).kernels
    moved = 3 * n * 2
    ideal = moved / (B910.gm_bandwidth_gbps * 1e3)
    print("\n(d) memory-bound elementwise add, 2 x 64 Mi fp16 in, 64 Mi out, 48 vector cores")
    print(
        table(
            ["µs", "bytes / GM bandwidth µs", "ratio", "bound", "blocks", "per-core GM B/cycle"],
            [
                [
                    f"{kc.us:.1f}",
                    f"{ideal:.1f}",
                    f"{kc.us / ideal:.3f}",
                    kc.bound,
                    kc.blocks,
                    f"{kc.gm_bytes_per_cycle:.1f}",
                ]
            ],
        )
    )
    return {"us": kc.us, "ideal_us": ideal, "ratio": kc.us / ideal}


# ---- (e) -----------------------------------------------------------------------------------
def model_cycles(name: str, strategy: str, fusion: bool, time_limit: float) -> ModelCycles:
    module = load_onnx(light_model(name))
    graph = f"O1,format{{strategy={strategy} time-limit={time_limit}}}" + (
        ",fuse-ops" if fusion else ""
    )
    run_pipeline(graph, make_context(), module)
    run_pipeline(lowering_pipeline("ascend910b"), make_context(), module)
    return simulate_module(module)


def section_e(models: list[str], time_limit: float, png: str | None) -> dict[str, Any]:
    rows, out = [], {}
    resnet: ModelCycles | None = None
    for name in models:
        for strategy in ("naive", "ge", "optimal"):
            for fusion in (True, False):
                start = time.perf_counter()
                mc = model_cycles(name, strategy, fusion, time_limit)
                took = time.perf_counter() - start
                if name == "resnet50" and strategy == "ge" and fusion:
                    resnet = mc
                bounds = mc.per_bound_us()
                td = sum(k.launches for k in mc.kernels if k.is_transdata)
                rows.append(
                    [
                        name,
                        strategy,
                        "yes" if fusion else "no",
                        mc.launches,
                        td,
                        f"{mc.total_us:.0f}",
                        f"{mc.kernel_us:.0f}",
                        f"{mc.transdata_us:.0f}",
                        f"{bounds['cube']:.0f}",
                        f"{bounds['memory']:.0f}",
                        f"{bounds['latency']:.0f}",
                        f"{mc.host_us:.0f}",
                        f"{took:.1f}",
                    ]
                )
                out[f"{name}/{strategy}/{'fused' if fusion else 'unfused'}"] = {
                    "total_us": mc.total_us,
                    "kernel_us": mc.kernel_us,
                    "transdata_us": mc.transdata_us,
                    "launches": mc.launches,
                    "per_bound_us": bounds,
                }
        print(flush=True)
    print("\n(e) light models on ascend910b (µs; total = kernels + 20 µs per launch + host)")
    print(
        table(
            [
                "model",
                "strategy",
                "fusion",
                "launches",
                "TransData k.",
                "total",
                "kernels",
                "TransData",
                "cube-bd",
                "mem-bd",
                "latency",
                "host",
                "s",
            ],
            rows,
        )
    )
    if resnet is not None:
        print("\nResNet-50 (ge, fused), top kernels:")
        print(resnet.render(12))
        if png:
            plot_breakdown(resnet, png)
    return out


def plot_breakdown(mc: ModelCycles, path: str) -> None:
    """A bar per kernel launch (µs), coloured by bound; only when matplotlib is there."""
    try:
        importlib.import_module("matplotlib").use("Agg")
        plt = importlib.import_module("matplotlib.pyplot")
    except ImportError:
        print(f"(matplotlib is not installed: no {path})")
        return
    colours = {
        "cube": "tab:blue",
        "memory": "tab:orange",
        "vector": "tab:green",
        "latency": "tab:gray",
        "host": "tab:red",
    }
    kernels = {k.name: k for k in mc.kernels}
    order = [kernels[n] for n in mc.launch_order]
    fig, ax = plt.subplots(figsize=(14, 4))
    ax.bar(range(len(order)), [k.us for k in order], color=[colours[k.bound_class] for k in order])
    ax.set_xlabel("kernel launch (program order)")
    ax.set_ylabel("µs (without the launch overhead)")
    ax.set_title(f"ResNet-50 on {mc.platform}: {mc.total_us:.0f} µs in total")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colours.values()]
    ax.legend(handles, list(colours), title="bound")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


SECTIONS: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "a": lambda args: section_a(),
    "b": lambda args: section_b(),
    "c": lambda args: section_c(),
    "d": lambda args: section_d(),
    "e": lambda args: section_e(args.models, args.time_limit, args.png),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sections", nargs="*", default=list(SECTIONS), choices=list(SECTIONS))
    parser.add_argument("--models", nargs="*", default=list(LIGHT_MODELS), choices=LIGHT_MODELS)
    parser.add_argument("--time-limit", type=float, default=20.0, help="optimal strategy's ILP")
    parser.add_argument("--json", help="write every number to this file")
    parser.add_argument("--png", default="resnet50_kernels.png", help="ResNet-50 breakdown")
    args = parser.parse_args()
    found: dict[str, Any] = {}
    for key in args.sections:
        start = time.perf_counter()
        found[key] = SECTIONS[key](args)
        print(f"    [{key}: {time.perf_counter() - start:.1f} s]", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(found, f, indent=1, default=str)


if __name__ == "__main__":
    main()
