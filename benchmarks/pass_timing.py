"""Compile time per pass: µs per op on the 1k/10k-op chain, seconds per stage on light models.

    python benchmarks/pass_timing.py [--sizes 1000 10000] [--models resnet50 densenet121]

Part 1 runs O2 on the chain of ``benchmarks/compile_throughput.py`` (relu/add on an NCHW
tensor, so the format engine has work) and prints, for every leaf pass of O2, its time in µs
per op at each size and the ratio 10k/1k (≤ 1.3 means linear). Part 2 imports light models
and prints seconds per stage (import, O1, format engine, fusion) and the op counts.
Timing comes from the pass observers, so it is the time each pass really took inside the
pipeline (a pass that runs in several O1 rounds is summed).
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.ir import Block, Region
from xdsl.rewriter import InsertPoint

from tilegraph.dialects.graph.binary import AddOp
from tilegraph.dialects.graph.elementwise import ReluOp
from tilegraph.dialects.layout import TensorType
from tilegraph.frontend import load_onnx
from tilegraph.frontend.light_models import light_model
from tilegraph.passes.analysis import compute_op_count
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import observing_passes, run_pipeline

STAGES = {
    "format": {
        "infer-origin-format",
        "select-storage-format",
        "insert-trans-data",
        "cancel-trans-data",
        "fold-trans-data",
        "format-report",
    },
    "fusion": {"fuse-ops"},
}


def chain(n_ops: int) -> ModuleOp:
    t = TensorType([8, 3, 224, 224], f32, "NCHW")
    block = Block(arg_types=[t])
    builder = Builder(InsertPoint.at_end(block))
    value = block.args[0]
    for i in range(n_ops - 1):
        op = ReluOp.make(value) if i % 2 == 0 else AddOp.make(value, block.args[0])
        builder.insert(op)
        value = op.results[0]
    builder.insert(func.ReturnOp(value))
    return ModuleOp([func.FuncOp("chain", ([t], [t]), Region(block))])


def timed_pipeline(module: ModuleOp, spec: str) -> dict[str, float]:
    """Seconds per leaf pass name while running ``spec``."""
    seconds: dict[str, float] = defaultdict(float)
    last = time.perf_counter()

    def observe(p, _module) -> None:  # noqa: ANN001
        nonlocal last
        now = time.perf_counter()
        seconds[p.name] += now - last
        last = now

    with observing_passes(observe):
        run_pipeline(spec, make_context(), module)
    return dict(seconds)


def chain_table(sizes: list[int]) -> None:
    timed_pipeline(chain(50), "O2")  # warm-up: lazy imports and dialect loading
    per_op = {n: {k: v * 1e6 / n for k, v in timed_pipeline(chain(n), "O2").items()} for n in sizes}
    names = list(per_op[sizes[0]])
    print(f"O2 on the relu/add chain: µs per op per pass (ratio = {sizes[-1]}/{sizes[0]})")
    print(f"{'pass':<24}" + "".join(f"{f'{n} ops':>12}" for n in sizes) + f"{'ratio':>8}")
    for name in names:
        row = [per_op[n].get(name, 0.0) for n in sizes]
        ratio = row[-1] / row[0] if row[0] else float("nan")
        print(f"{name:<24}" + "".join(f"{v:>12.1f}" for v in row) + f"{ratio:>8.2f}")
    total = [sum(per_op[n].values()) for n in sizes]
    print(
        f"{'total':<24}" + "".join(f"{v:>12.1f}" for v in total) + f"{total[-1] / total[0]:>8.2f}"
    )


def model_table(models: list[str]) -> None:
    print()
    print("Light models through O2: seconds per stage, op counts")
    header = (
        f"{'model':<14}{'import s':>9}{'O1 s':>8}{'format s':>9}{'fusion s':>9}"
        f"{'ops in':>8}{'O1 ops':>8}{'O2 ops':>8}"
    )
    print(header)
    for name in models:
        start = time.perf_counter()
        module = load_onnx(light_model(name))
        t_import = time.perf_counter() - start
        ops_in = compute_op_count(module)
        t_o1 = timed_pipeline(module, "O1")
        ops_o1 = compute_op_count(module)
        rest = timed_pipeline(module, "O2")  # O1 again is a one-round no-op, then format ...
        o1_again = sum(v for k, v in rest.items() if not any(k in s for s in STAGES.values()))
        stage = {s: sum(v for k, v in rest.items() if k in names) for s, names in STAGES.items()}
        ops_o2 = compute_op_count(module)
        print(
            f"{name:<14}{t_import:>9.2f}{sum(t_o1.values()):>8.2f}{stage['format']:>9.2f}"
            f"{stage['fusion']:>9.2f}{ops_in:>8}{ops_o1:>8}{ops_o2:>8}"
            + (f"   (second O1 round {o1_again:.2f} s)" if o1_again > 0.5 else "")
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--models", nargs="+", default=["resnet50", "densenet121"])
    args = ap.parse_args()
    chain_table(args.sizes)
    model_table(args.models)


if __name__ == "__main__":
    main()
