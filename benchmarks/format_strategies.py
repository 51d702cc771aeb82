"""Storage-format strategies on the light models: TransData count and bytes moved per strategy.

For each light model (imported with random weights, then ``infer-origin-format``): the
run-time TransData ops (activations; constants are folded at compile time) that ``naive``,
``ge`` and ``optimal`` imply, their megabytes moved (read + written, storage layouts, padding
included; 1 MB = 10**6 bytes), the optimal strategy's bound, model size and solve time.

    python benchmarks/format_strategies.py [--models resnet50 densenet121 ...]
                                           [--time-limit 60] [--check-ir]

Counts come from :meth:`SelectionProblem.cost`, the objective the strategies are judged by.
``--check-ir`` also runs the whole ``format{strategy=...}`` pipeline on a fresh import and
prints the counts of its ``format-report`` (after ``cancel-trans-data``) next to the model's.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp

import tilegraph
from tilegraph.frontend.light_models import LIGHT_MODELS, light_model
from tilegraph.passes.context import make_context
from tilegraph.passes.layout_plan import LayoutPlanner
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.storage import ge, naive, optimal
from tilegraph.passes.storage.problem import SelectionProblem

STRATEGIES: tuple[str, ...] = ("naive", "ge", "optimal")


@dataclass
class Row:
    model: str
    ops: int
    counts: dict[str, int]
    bytes: dict[str, int]
    bound: float
    status: str
    certificate_ok: bool
    variables: int
    constraints: int
    solve_seconds: float
    ir: dict[str, tuple[int, int]] | None = None


def import_model(name: str) -> ModuleOp:
    module = tilegraph.load_onnx(light_model(name))
    run_pipeline("infer-origin-format", make_context(), module)
    return module


def functions(module: ModuleOp) -> list[func.FuncOp]:
    return [op for op in module.walk() if isinstance(op, func.FuncOp)]


def measure(name: str, time_limit: float | None) -> Row:
    module = import_model(name)
    counts: dict[str, int] = dict.fromkeys(STRATEGIES, 0)
    moved: dict[str, int] = dict.fromkeys(STRATEGIES, 0)
    bound, seconds, variables, constraints, ops = 0.0, 0.0, 0, 0, 0
    statuses: list[str] = []
    certified = True
    for fn in functions(module):
        problem = SelectionProblem(fn, LayoutPlanner())
        ops += len(problem.ops)
        result = optimal.solve(problem, time_limit=time_limit)
        plans = {"naive": naive.solve(problem), "ge": ge.solve(problem), "optimal": result.plan}
        for strategy, plan in plans.items():
            cost = problem.cost(plan)
            counts[strategy] += cost.activation_count
            moved[strategy] += cost.activation_bytes
        bound += result.bound
        seconds += result.solve_seconds
        variables += result.variables
        constraints += result.constraints
        statuses.append(result.status)
        certified = certified and result.certificate_ok
    status = "optimal" if all(s == "optimal" for s in statuses) else ",".join(statuses)
    return Row(name, ops, counts, moved, bound, status, certified, variables, constraints, seconds)


def ir_counts(name: str, strategy: str, time_limit: float | None) -> tuple[int, int]:
    """(activation TransData, bytes) reported by the whole format pipeline."""
    module = tilegraph.load_onnx(light_model(name))
    limit = f" time-limit={time_limit}" if time_limit is not None else ""
    run_pipeline(f"format{{strategy={strategy}{limit}}}", make_context(), module)
    count = moved = 0
    for fn in functions(module):
        report = fn.attributes.get("layout.transdata")
        assert isinstance(report, DictionaryAttr)
        n, b = report.data["activations"], report.data["activation_bytes"]
        assert isinstance(n, IntegerAttr) and isinstance(b, IntegerAttr)
        count += n.value.data
        moved += b.value.data
    return count, moved


def mb(n: float) -> str:
    return f"{n / 1e6:.2f}"


def print_table(rows: list[Row]) -> None:
    head = (
        f"{'model':<14}{'ops':>5}  "
        + "".join(f"{s + ' #':>10}{s + ' MB':>12}" for s in STRATEGIES)
        + f"{'bound MB':>10}{'vars':>7}{'rows':>7}{'solve s':>9}  status"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        line = f"{r.model:<14}{r.ops:>5}  " + "".join(
            f"{r.counts[s]:>10}{mb(r.bytes[s]):>12}" for s in STRATEGIES
        )
        cert = "" if r.certificate_ok else " (certificate FAILED)"
        line += (
            f"{mb(r.bound):>10}{r.variables:>7}{r.constraints:>7}{r.solve_seconds:>9.2f}"
            f"  {r.status}{cert}"
        )
        print(line)
    if any(r.ir for r in rows):
        print()
        print("format pipeline (insert + cancel + fold) report: activation TransData / MB")
        for r in rows:
            if r.ir:
                cells = "  ".join(f"{s} {n} / {mb(b)}" for s, (n, b) in r.ir.items())
                print(f"  {r.model:<14}{cells}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(LIGHT_MODELS))
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--check-ir", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    for name in args.models:
        start = time.perf_counter()
        row = measure(name, args.time_limit)
        if args.check_ir:
            row.ir = {s: ir_counts(name, s, args.time_limit) for s in STRATEGIES}
        rows.append(row)
        print(f"# {name}: {time.perf_counter() - start:.1f} s", flush=True)
    print()
    print_table(rows)


if __name__ == "__main__":
    main()
