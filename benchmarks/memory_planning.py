"""Global-memory planning (``plan-memory``) on the light models: peak, bound, no reuse.

For each light model (random weights, batch 1, O2, lowered and tiled for ``--platform``):
the planned workspace peak, the max-live lower bound, the no-reuse total (every
intermediate in its own place), the constant region (weights, counted apart), peak /
lower bound, the saving against no reuse, the number of outputs written in place, the
peak the plan would have without in-place writes, and the planning time. 1 MB = 10**6 B.

    python benchmarks/memory_planning.py [--models resnet50 ...] [--platform ascend910b]
                                         [--run]

``--run`` also runs the fast executor before and after planning and reports whether the
outputs are bit-identical. Every plan is checked with ``check_memory_plan``.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp

import tilegraph
from tilegraph.dialects.layout_type import TensorType
from tilegraph.frontend.light_models import LIGHT_MODELS, light_model
from tilegraph.lowering.analysis.host_liveness import host_function
from tilegraph.lowering.transforms.plan_memory import (
    MemoryReport,
    PlanMemoryPass,
    check_memory_plan,
    memory_report,
    plan_function,
)
from tilegraph.passes.context import make_context
from tilegraph.runtime.tiles import run_tiles


@dataclass
class Row:
    model: str
    report: MemoryReport
    peak_without_in_place: int
    plan_ms: float
    identical: bool | None


def inputs_for(module: ModuleOp) -> list[np.ndarray]:
    sig = host_function(module).attributes["tile.signature"]
    rng = np.random.default_rng(1)
    shapes = [t.origin_shape for t in sig.inputs.data if isinstance(t, TensorType)]  # type: ignore[attr-defined]
    return [rng.standard_normal([int(d) for d in s]).astype(np.float32) for s in shapes]


def measure(name: str, platform: str, run: bool) -> Row:
    module = tilegraph.compile(light_model(name), platform=platform).module
    without = plan_function(host_function(module), module, in_place=False).report.peak
    before = run_tiles(module, inputs_for(module), executor="fast") if run else None
    start = time.perf_counter()
    PlanMemoryPass().apply(make_context(), module)
    plan_ms = 1e3 * (time.perf_counter() - start)
    check_memory_plan(module)
    identical = None
    if before is not None:
        after = run_tiles(module, inputs_for(module), executor="fast")
        identical = all(np.array_equal(a, b) for a, b in zip(after, before, strict=True))
    return Row(name, memory_report(module), without, plan_ms, identical)


def mb(n: float) -> str:
    return f"{n / 1e6:.2f}"


def print_table(rows: list[Row]) -> None:
    head = (
        f"{'model':<14}{'bufs':>5}{'in-place':>9}{'peak MB':>9}{'bound MB':>10}"
        f"{'no reuse MB':>12}{'const MB':>10}{'peak/bound':>11}{'saving':>8}"
        f"{'no-in-place MB':>15}{'plan ms':>9}"
    )
    if any(r.identical is not None for r in rows):
        head += "  outputs"
    print(head)
    print("-" * len(head))
    for r in rows:
        p = r.report
        line = (
            f"{r.model:<14}{p.buffers:>5}{p.in_place:>9}{mb(p.peak):>9}{mb(p.lower_bound):>10}"
            f"{mb(p.no_reuse):>12}{mb(p.constants):>10}{p.ratio:>11.3f}{p.saving:>8.1%}"
            f"{mb(r.peak_without_in_place):>15}{r.plan_ms:>9.1f}"
        )
        if r.identical is not None:
            line += "  " + ("identical" if r.identical else "DIFFER")
        print(line)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(LIGHT_MODELS))
    parser.add_argument("--platform", default="ascend910b")
    parser.add_argument("--run", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    for name in args.models:
        start = time.perf_counter()
        rows.append(measure(name, args.platform, args.run))
        print(f"# {name}: {time.perf_counter() - start:.1f} s", flush=True)
    print()
    print_table(rows)


if __name__ == "__main__":
    main()
