"""ONNX backend node test suite through tilegraph: pass / refused / failed per op type.

    python benchmarks/onnx_node_suite.py [--op Cast --op Shape] [--match REGEX]
                                         [--min-opset 22] [--failures] [--jobs 2]
                                         [--onnxruntime]

Each case of ``onnx.backend.test.case.node.collect_testcases`` is imported with ``load_onnx``
and run with ``run_reference`` (see :mod:`tests.conformance.node_suite` for the rules:
refused = the importer raised ``OnnxImportError``; failed = wrong output or any other
exception). Prints one row per op type, the totals, the refusal reasons grouped by their
first words (what to implement next), and every failure with its message.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.conformance.node_suite import (  # noqa: E402 - after the path is set
    REFUSALS_FILE,
    CaseResult,
    case_op,
    case_opset,
    node_cases,
    onnx_version,
    reason_group,
    run_case,
    run_case_onnxruntime,
    write_refusals,
)

OUTCOMES = ("passed", "refused", "failed")


def _run_index(index: int) -> CaseResult:
    return run_case(node_cases()[index])


def _run_index_onnxruntime(index: int) -> CaseResult:
    return run_case_onnxruntime(node_cases()[index])


def run_selected(
    indices: Sequence[int], jobs: int, runner: Callable[[int], CaseResult] = _run_index
) -> list[CaseResult]:
    if jobs <= 1:
        return [runner(i) for i in indices]
    with ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(runner, indices, chunksize=8))


def print_peer_totals(ours: Sequence[CaseResult], theirs: Sequence[CaseResult]) -> None:
    """Both runtimes on the same cases: all, and outside the categories refused by design."""
    design = {r.name for r in ours if "not supported by design" in r.message}
    print("\nsame cases, both runtimes:      passed refused failed")
    for label, results in (("tilegraph", ours), ("onnxruntime", theirs)):
        for scope in ("all", "outside by-design"):
            kept = [r for r in results if scope == "all" or r.name not in design]
            c = Counter(r.outcome for r in kept)
            counts = f"{c['passed']:>6} {c['refused']:>7} {c['failed']:>6}"
            print(f"  {label:<12} {scope:<18} {counts}   ({len(kept)} cases)")


def print_table(results: Sequence[CaseResult]) -> None:
    per_op: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        per_op[r.op][r.outcome] += 1
    width = max([len("op"), *(len(op) for op in per_op)])
    print(f"{'op':<{width}}  {'passed':>6}  {'refused':>7}  {'failed':>6}")
    for op in sorted(per_op):
        c = per_op[op]
        print(f"{op:<{width}}  {c['passed']:>6}  {c['refused']:>7}  {c['failed']:>6}")
    total = Counter(r.outcome for r in results)
    print(
        f"{'TOTAL':<{width}}  {total['passed']:>6}  {total['refused']:>7}  {total['failed']:>6}"
        f"   ({len(results)} cases)"
    )


def print_reasons(results: Sequence[CaseResult], outcome: str, limit: int) -> None:
    groups: dict[str, list[CaseResult]] = defaultdict(list)
    for r in results:
        if r.outcome == outcome:
            groups[reason_group(r.message)].append(r)
    if not groups:
        return
    print(f"\n{outcome} cases by reason (first words; names and numbers masked):")
    for reason, members in sorted(groups.items(), key=lambda kv: -len(kv[1]))[:limit]:
        ops = Counter(m.op for m in members)
        top = ", ".join(f"{op} {n}" for op, n in ops.most_common(6))
        more = f", ... ({len(ops)} ops)" if len(ops) > 6 else ""
        print(f"  {len(members):>5}  {reason}   [{top}{more}]")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--op", action="append", help="only cases of this op type (repeatable)")
    ap.add_argument("--match", help="only cases whose name matches this regular expression")
    ap.add_argument("--min-opset", type=int, default=0, help="only models at this opset or newer")
    ap.add_argument("--failures", action="store_true", help="print every failure's message")
    ap.add_argument("--refusals", action="store_true", help="print every refusal's message")
    ap.add_argument("--reasons", type=int, default=40, help="reason groups to print")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument(
        "--onnxruntime",
        action="store_true",
        help="also run every selected case in onnxruntime and print both totals",
    )
    ap.add_argument(
        "--write-refusals",
        action="store_true",
        help="write the refused cases of a full run to tests/conformance/node_refusals.json "
        "(the reviewed list the conformance test holds every refusal to)",
    )
    args = ap.parse_args()

    cases = node_cases()
    pattern = re.compile(args.match) if args.match else None
    indices = [
        i
        for i, c in enumerate(cases)
        if (not args.op or case_op(c).split(" ")[0] in args.op)
        and (pattern is None or pattern.search(c.name))
        and case_opset(c) >= args.min_opset
    ]
    start = time.perf_counter()
    results = run_selected(indices, args.jobs)
    elapsed = time.perf_counter() - start
    print(f"{onnx_version()}: {len(indices)} of {len(cases)} node cases, {elapsed:.1f} s\n")
    print_table(results)
    print_reasons(results, "refused", args.reasons)
    print_reasons(results, "failed", args.reasons)
    if args.onnxruntime:
        print_peer_totals(results, run_selected(indices, args.jobs, _run_index_onnxruntime))
    if args.write_refusals:
        if len(indices) != len(cases):
            raise SystemExit("--write-refusals needs a full run (no --op/--match/--min-opset)")
        print(f"\nwrote {write_refusals(results)} refusals to {REFUSALS_FILE}")
    for outcome, wanted in (("refused", args.refusals), ("failed", args.failures)):
        if wanted:
            print(f"\nevery {outcome} case:")
            for r in results:
                if r.outcome == outcome:
                    print(f"  {r.name} (opset {r.opset}): {r.message.splitlines()[0]}")


if __name__ == "__main__":
    main()
