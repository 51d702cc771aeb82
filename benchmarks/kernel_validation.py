"""The cycle model's per-kernel estimates next to measured Ascend kernel times (issue 24).

    python benchmarks/kernel_validation.py [--set seen|kept-back|all] [--json FILE]

A model-level ratio (``benchmarks/hardware_validation.py``) cannot say which kernel is
wrong; this table can, for the kernels whose device time is published. Each measured
kernel is built as a one-node ONNX graph (a ``MatMul``; a ``Transpose`` in front of it when
the measured B was stored column-major, a constant B when it was pre-formatted into NZ as
a weight), compiled with ``tilegraph.compile``'s pipeline for the preset of the chip
measured and estimated by the cycle model without running anything (what
``tilegraph-run --estimate`` does). The estimate is the kernels' time without the
scheduling cost of a sunk model's task: a profiler's Task Duration (``msprof``) is the time
from the kernel's start to its end on the device. Each figure is estimated twice: with
tilegraph's own tiling, and with the measured kernel's block (``tile-kernels{base-block}``),
which separates the cost model's error from the tiling choice. The table: kernel, shape,
dtype, platform, measured µs, estimated µs, their ratio, measured - estimated, blocks, the
same-tiles estimate and its ratio, what ran and where the figure is published.

**Figures.** Every per-kernel time of an Ascend 910B found in public sources with its
shape, data types, layouts and core count stated; all come from Ascend's matmul template
library catlass (``hicann/catlass`` at commit ``0dfcf9df304f``), measured with ``msprof``
on A2 chips. No per-kernel time of a 310P was found (docs/cycle-model.md, "Kernel-level
validation", lists the places searched).

**Which figures were looked at** (the rule was set before any ratio was computed): the
figures of catlass's matmul optimisation guide and of its tuner's README (:data:`SEEN`)
were used while this script was written; the table of the single-core split-K page
(:data:`KEPT_BACK`: four larger shapes on a 910B2, the BasicMatmul baseline and the split-K
kernel) was set aside as the check. One of its rows (2048 x 4000 x 4096) was estimated once
by a smoke run of the graph builder before the split was written down; nothing was changed
after it. Nothing here is fitted: the estimates use the presets as they are.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tilegraph.cost_model.cycles import ModelCycles, simulate_module
from tilegraph.frontend import load_onnx
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import lowering_pipeline, quoted_option, run_pipeline

BaseBlock = tuple[int, int, int]

OPSET = 17
A2_20 = "ascend910b:cube_cores=20,vector_cores=40"
"""An A2 chip with 20 cube cores (catlass's guide states the core count, not the chip)."""
A2_24 = "ascend910b"
"""An A2 chip with 24 cube cores (the 910B2 of the split-K page)."""
B_LAYOUTS = ("row", "col", "nz")
"""How the measured kernel found B in GM: ``row`` a [K, N] row-major input, ``col`` a [N,
K] row-major input (B column-major: a Transpose in front of the MatMul), ``nz`` a weight
already in the NZ fractal layout (a constant B, which tilegraph, like GE, prepares before
the model runs)."""
DTYPES = {"float16": TensorProto.FLOAT16, "float32": TensorProto.FLOAT}
PRECISION = {"float16": "fp16", "float32": "origin"}
"""fp16 data on the fp16 cube; fp32 data kept in fp32 (catlass ran the fp32 cube)."""

GUIDE = "hicann/catlass docs/en/1_Practice/11_matmul_optimization.md (0dfcf9df304f)"
TUNER = "hicann/catlass tools/tuner/README_en.md (0dfcf9df304f)"
SPLITK = (
    "hicann/catlass examples/34_single_core_splitk_matmul/34_single_splitk_matmul_en.md "
    "(0dfcf9df304f)"
)


@dataclass(frozen=True)
class Measured:
    """One published kernel time: C[m, n] = A[m, k] · B[k, n] on ``platform``."""

    m: int
    k: int
    n: int
    dtype: str
    b_layout: str
    platform: str
    us: float
    kernel: str
    """What ran: the catlass example and its tiling."""
    source: str
    block: BaseBlock | None = None
    """The measured kernel's block (baseM, baseN, baseK): its L1 tile's M and N, its L0
    tile's K; None when tilegraph has no kernel of its kind (split-K)."""

    @property
    def shape(self) -> str:
        return f"{self.m}x{self.k}x{self.n}"


_F16, _F32 = "float16", "float32"
SEEN: tuple[Measured, ...] = tuple(
    Measured(m, k, n, dtype, b, platform, us, kernel, source, block)
    for m, k, n, dtype, b, platform, us, kernel, block, source in (
        # A row-major, B column-major, fp16 in and out, 20 AIC cores
        (1024, 6144, 576, _F16, "col", A2_20, 72.5, "06_optimized 128x256", (128, 256, 64), GUIDE),
        (1024, 6144, 576, _F16, "col", A2_20, 48.6, "06_optimized 256x128", (256, 128, 64), GUIDE),
        # B in zN (a pre-formatted weight), then row-major; 20 AIC cores
        (20, 16384, 6144, _F16, "nz", A2_20, 181.4, "21_preload_zN 128x256", (128, 256, 64), GUIDE),
        (20, 16384, 6144, _F16, "nz", A2_20, 139.6, "21_preload_zN 32x320", (32, 320, 32), GUIDE),
        (20, 16384, 6144, _F16, "row", A2_20, 238.8, "21_preload 128x256", (128, 256, 64), GUIDE),
        (20, 16384, 6144, _F16, "row", A2_20, 252.4, "21_preload 32x320", (32, 320, 32), GUIDE),
        # M = 1, fp32 in and out, B column-major, 24 AIC cores
        (1, 5120, 768, _F32, "col", A2_24, 36.3, "00_basic 128x128", (128, 128, 64), GUIDE),
        (1, 5120, 768, _F32, "col", A2_24, 15.5, "00_basic 16x32", (16, 32, 256), GUIDE),
        # two block orders (swizzles) of one tiling
        (160, 2048, 6144, _F16, "nz", A2_20, 40.6, "21_preload_zN sw 3,1", (128, 256, 64), GUIDE),
        (160, 2048, 6144, _F16, "nz", A2_20, 35.3, "21_preload_zN sw 4,1", (128, 256, 64), GUIDE),
        # all row-major fp16, an A2 at its rated 1800 MHz (core count not stated: 24)
        (256, 1024, 512, _F16, "row", A2_24, 19.38, "00_basic 32x128", (32, 128, 32), TUNER),
        (256, 1024, 512, _F16, "row", A2_24, 12.74, "00_basic 64x128 best", (64, 128, 64), TUNER),
    )
)
"""The figures looked at while this benchmark was written (catlass's optimisation guide
and tuner README: the default tiling and the better one each page found)."""

KEPT_BACK: tuple[Measured, ...] = tuple(
    Measured(m, k, n, "float16", "row", A2_24, us, kernel, SPLITK, block)
    for m, k, n, basic, split in (
        (2048, 4000, 4096, 445.0, 261.0),
        (4096, 8000, 4096, 1231.0, 917.0),
        (4096, 40000, 4096, 7775.0, 4669.0),
        (2048, 80000, 4096, 57144.0, 16850.0),
    )
    for us, kernel, block in (
        (basic, "00_basic (BasicMatmul)", (128, 256, 64)),
        (split, "34_single_core_splitk", None),
    )
)
"""The check: a 910B2 (24 AIC cores), CANN 8.2.RC1, every matrix row-major fp16; the
BasicMatmul baseline (``00_basic_matmul``: L1 tile 128 x 256 x 256, L0 tile 128 x 256 x 64)
and the single-core split-K kernel of the same page (which tilegraph does not have)."""


def matmul_graph(fig: Measured) -> onnx.ModelProto:
    """The one-MatMul ONNX graph of a measured kernel (a Transpose in front for a
    column-major B, a constant B for an NZ one)."""
    if fig.b_layout not in B_LAYOUTS:
        raise ValueError(f"B layout must be one of {', '.join(B_LAYOUTS)}, not {fig.b_layout!r}")
    elem = DTYPES[fig.dtype]
    inputs = [helper.make_tensor_value_info("a", elem, [fig.m, fig.k])]
    nodes: list[onnx.NodeProto] = []
    initializers: list[onnx.TensorProto] = []
    if fig.b_layout == "row":
        inputs.append(helper.make_tensor_value_info("b", elem, [fig.k, fig.n]))
    elif fig.b_layout == "col":
        inputs.append(helper.make_tensor_value_info("b_t", elem, [fig.n, fig.k]))
        nodes.append(helper.make_node("Transpose", ["b_t"], ["b"], perm=[1, 0]))
    else:
        weight = np.full((fig.k, fig.n), 0.01, dtype=np.dtype(fig.dtype))
        initializers.append(numpy_helper.from_array(weight, "b"))
    nodes.append(helper.make_node("MatMul", ["a", "b"], ["y"]))
    output = helper.make_tensor_value_info("y", elem, [fig.m, fig.n])
    graph = helper.make_graph(nodes, f"matmul_{fig.shape}", inputs, [output], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def pipeline(fig: Measured, block: BaseBlock | None = None) -> str:
    """``tilegraph.compile``'s pipeline for ``fig`` (O2, then the lowering on its platform and
    precision), its matmul tiled with the base block ``block`` when one is given
    (``tile-kernels{base-block=...}``, docs/tuning.md)."""
    target = (
        f"set-target{{platform={quoted_option(fig.platform)} precision={PRECISION[fig.dtype]}}}"
    )
    lowering = lowering_pipeline()
    if block is not None:
        option = quoted_option(",".join(map(str, block)))
        lowering = lowering.replace("tile-kernels", f"tile-kernels{{base-block={option}}}", 1)
    return f"{target},O2,{lowering}"


def estimate(fig: Measured, block: BaseBlock | None = None) -> ModelCycles:
    """The cycle model of ``fig``'s graph on its platform (nothing runs): tilegraph's own
    tiling, or the matmul base block ``block``."""
    module = load_onnx(matmul_graph(fig))
    run_pipeline(pipeline(fig, block), make_context(), module)
    return simulate_module(module)


def row(
    fig: Measured, cycles: ModelCycles, same_tiles: ModelCycles | None, kept_back: bool
) -> dict[str, Any]:
    """Every number of one figure's comparison: against tilegraph's own tiling, and against
    the measured kernel's block (None without one)."""
    est = cycles.kernel_us
    tiles_us = same_tiles.kernel_us if same_tiles is not None else None
    return {
        "op": "MatMul",
        "shape": fig.shape,
        "dtype": fig.dtype,
        "b_layout": fig.b_layout,
        "platform": fig.platform,
        "measured_us": fig.us,
        "estimated_us": est,
        "ratio": est / fig.us,
        "residual_us": fig.us - est,
        "block": list(fig.block) if fig.block else None,
        "same_tiles_us": tiles_us,
        "same_tiles_ratio": tiles_us / fig.us if tiles_us is not None else None,
        "kernels": len(cycles.kernels),
        "blocks": max((k.blocks for k in cycles.kernels), default=0),
        "bound": ",".join(k.bound for k in cycles.kernels),
        "cube_flops": cycles.cube_flops,
        "kernel": fig.kernel,
        "source": fig.source,
        "kept_back": kept_back,
    }


def within(ratios: list[float]) -> int:
    """How many ratios lie within ±30% (unrounded)."""
    return sum(0.7 <= r <= 1.3 for r in ratios)


def run_set(figures: tuple[Measured, ...], kept_back: bool) -> list[dict[str, Any]]:
    """Estimate each figure with tilegraph's tiling and with the measured kernel's block (a
    graph and block estimated once for all the figures that share them)."""
    cache: dict[tuple[str, str, str, str, BaseBlock | None], ModelCycles] = {}

    def cached(fig: Measured, block: BaseBlock | None) -> ModelCycles:
        key = (fig.shape, fig.dtype, fig.b_layout, fig.platform, block)
        if key not in cache:
            t0 = time.perf_counter()
            cache[key] = estimate(fig, block)
            seconds = time.perf_counter() - t0
            print(f"  {fig.shape} block {block}: {seconds:.1f} s", file=sys.stderr)
        return cache[key]

    return [
        row(fig, cached(fig, None), cached(fig, fig.block) if fig.block else None, kept_back)
        for fig in figures
    ]


def render(found: list[dict[str, Any]]) -> str:
    """The text table of ``found``."""
    headers = ["op", "m x k x n", "dtype", "B", "platform", "measured", "estimated", "ratio"]
    headers += ["meas-est", "blocks", "same tiles", "ratio", "kernel", "source"]
    rows = [
        [
            f["op"],
            f["shape"],
            f["dtype"],
            f["b_layout"],
            f["platform"].replace("ascend910b:cube_cores=20,vector_cores=40", "910b 20 AIC"),
            f"{f['measured_us']:.1f}",
            f"{f['estimated_us']:.1f}",
            f"{f['ratio']:.2f}",
            f"{f['residual_us']:.1f}",
            str(f["blocks"]),
            "-" if f["same_tiles_us"] is None else f"{f['same_tiles_us']:.1f}",
            "-" if f["same_tiles_ratio"] is None else f"{f['same_tiles_ratio']:.2f}",
            f["kernel"],
            f["source"].split(" ")[1].rsplit("/", 1)[-1],
        ]
        for f in found
    ]
    cells = [headers, *rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def summary(found: list[dict[str, Any]]) -> str:
    """Within ±30% over every measured kernel, and against the fastest measured kernel of
    each shape."""
    ratios = [f["ratio"] for f in found]
    best: dict[tuple[str, str, str], dict[str, Any]] = {}
    for f in found:
        key = (f["shape"], f["b_layout"], f["platform"])
        if key not in best or f["measured_us"] < best[key]["measured_us"]:
            best[key] = f
    fastest = [f["ratio"] for f in best.values()]
    text = (
        f"{within(ratios)} of {len(ratios)} within ±30% (ratios {min(ratios):.2f}-"
        f"{max(ratios):.2f}); against the fastest kernel of each shape {within(fastest)} of "
        f"{len(fastest)}"
    )
    same = [f["same_tiles_ratio"] for f in found if f.get("same_tiles_ratio") is not None]
    if same:
        text += (
            f"; with the measured kernel's block {within(same)} of {len(same)} "
            f"(ratios {min(same):.2f}-{max(same):.2f})"
        )
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--set", choices=("seen", "kept-back", "all"), default="all")
    ap.add_argument("--json", help="write every number to this file")
    args = ap.parse_args()
    found: list[dict[str, Any]] = []
    for name, figures, kept in (("seen", SEEN, False), ("kept-back", KEPT_BACK, True)):
        if args.set not in (name, "all"):
            continue
        rows = run_set(figures, kept)
        print(f"{name} figures: estimated kernel time vs measured Task Duration (µs)")
        print(render(rows))
        print(summary(rows) + "\n")
        found += rows
    if args.json:
        Path(args.json).write_text(json.dumps(found, indent=2))


if __name__ == "__main__":
    main()
