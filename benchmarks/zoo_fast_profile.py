"""Where the fast executor spends a zoo model's inference, next to onnxruntime's time.

    python benchmarks/zoo_fast_profile.py smart_turn openwakeword_hey_mycroft [--top 12]

Contract: for each named model of :data:`tests.zoo.zoo.MODELS` (data set 0, the zoo
entry's precision, ``ascend910b``), after one call that compiles: the fast executor's wall
time of one call and onnxruntime's (CPU provider, ``--threads`` intra-op threads), each the
best of ``--repeat``; then the ``--top`` op closures by time in one more call with
every op closure wrapped with a timer (``unit_breakdown`` of ``benchmarks/tile_execution.py``;
``flattened(batched_copy)``: a batched form; ``flattened(one_by_one(...))``: an op
run tile by tile inside a batch; a bare kernel: an op outside any batch — a kernel of
sequential loops, a mix part driven flag by flag). Last, the ops that have no batched form
where they sit and run once per tile
(:attr:`~tilegraph.runtime.fast_executor.CompiledModule.per_tile_ops`), per op name. Set
``OPENBLAS_NUM_THREADS=1`` on a shared machine. A report, not a test: exit code 0.

``--rounds R --before TREE`` compares instead (a before / after table): the fast executor
of this tree and of TREE (another checkout, e.g. a worktree at ``main``), each compiled
once in a process of its own, and onnxruntime in this one, timed in ``R`` interleaved
rounds of ``--repeat`` calls each — the three measured in the same run, so a busy
machine slows them alike. Per path the table gives a round's mean call, wall and CPU time
(the process's: the fast executor runs on one thread, onnxruntime on ``--threads``), the
minimum and the median over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tile_execution import unit_breakdown  # noqa: E402 - a sibling script (its directory is first)
from zoo_kernels import available, best_of, onnxruntime_session  # noqa: E402

from tests.zoo.zoo import MODELS, ZooModel, make_inputs  # noqa: E402


def profile(model: ZooModel, repeat: int, threads: int, top: int) -> list[str]:
    import tilegraph
    from tilegraph.runtime.tiles import fast_module

    inputs = make_inputs(model, 0)
    session = onnxruntime_session(model.path(), threads)
    session.run(None, inputs)
    compiled = tilegraph.compile(model.path(), platform="ascend910b", precision=model.precision)
    compiled(**inputs)
    fast_ms = best_of(lambda: compiled(**inputs), repeat)
    ort_ms = best_of(lambda: session.run(None, inputs), repeat)
    ordered = [inputs[name] for name in (i.name for i in session.get_inputs())]
    found = unit_breakdown(compiled, [np.asarray(a) for a in ordered])
    lines = [f"## {model.name}: fast {fast_ms:.3g} ms, onnxruntime {ort_ms:.3g} ms", ""]
    timed = found["by_op"]["total_ms"]
    lines += [f"| op closure (call timed closure by closure: {timed:.3g} ms) | calls | ms |"]
    lines += ["|---|---|---|"]
    for row in found["by_op"]["ops"][:top]:
        lines.append(f"| {row['op']} | {row['calls']} | {row['ms']:.3g} |")
    per_tile = Counter(op for _, op in fast_module(compiled.module).per_tile_ops)
    listed = ", ".join(f"{op} x{n}" for op, n in per_tile.most_common()) or "none"
    return [*lines, "", f"ops run tile by tile inside a batch: {listed}", ""]


_WORKER = """
import json, sys, time
import tilegraph
from tests.zoo.zoo import MODELS, make_inputs
model = MODELS[sys.argv[1]]
inputs = make_inputs(model, 0)
compiled = tilegraph.compile(model.path(), platform="ascend910b", precision=model.precision)
compiled(**inputs)
print("ready", flush=True)
for line in sys.stdin:
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(int(line)):
        compiled(**inputs)
    print(json.dumps([time.perf_counter() - wall, time.process_time() - cpu]), flush=True)
"""
"""A fast-executor timing process: compiles the model named by its argument with the
``tilegraph`` of its working directory, then per line read (a call count) runs that many
calls and prints their wall and CPU seconds."""


class _Worker:
    """A timing process (:data:`_WORKER`) on the checkout ``tree``."""

    def __init__(self, tree: Path, model: str):
        env = {**os.environ, "PYTHONPATH": str(tree)}
        self.process = subprocess.Popen(
            [sys.executable, "-c", _WORKER, model],
            cwd=tree, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        self._read()  # "ready": compiled, one call made

    def _read(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"timing process failed (exit code {self.process.wait()})")
        return line

    def time(self, calls: int) -> tuple[float, float]:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{calls}\n")
        self.process.stdin.flush()
        wall, cpu = json.loads(self._read())
        return wall, cpu

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait()


def compare(model: ZooModel, before: Path, rounds: int, repeat: int, threads: int) -> list[str]:
    """The before / after / onnxruntime table of one model (module doc)."""
    after = Path(__file__).resolve().parents[1]
    inputs = make_inputs(model, 0)
    session = onnxruntime_session(model.path(), threads)
    session.run(None, inputs)
    workers = {"before": _Worker(before, model.name), "after": _Worker(after, model.name)}
    times: dict[str, list[tuple[float, float]]] = {"onnxruntime": []}
    try:
        for _ in range(rounds):
            for name, worker in workers.items():
                times.setdefault(name, []).append(worker.time(repeat))
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(repeat):
                session.run(None, inputs)
            times["onnxruntime"].append((time.perf_counter() - wall, time.process_time() - cpu))
    finally:
        for worker in workers.values():
            worker.close()
    lines = [f"## {model.name}: {rounds} rounds of {repeat} calls (ms per call)", ""]
    lines += ["| path | wall min | wall median | CPU min | CPU median |", "|---|---|---|---|---|"]
    label = {"before": f"fast, {before}", "after": f"fast, {after}"}
    for name in ("before", "after", "onnxruntime"):
        walls = [1e3 * w / repeat for w, _ in times[name]]
        cpus = [1e3 * c / repeat for _, c in times[name]]
        cells = [min(walls), statistics.median(walls), min(cpus), statistics.median(cpus)]
        path = label.get(name, f"onnxruntime, {threads} threads")
        lines.append(f"| {path} | " + " | ".join(f"{v:.3g}" for v in cells) + " |")
    return [*lines, ""]


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("models", nargs="+", help="zoo model names")
    ap.add_argument("--repeat", type=int, default=3, help="timed calls per path (best of)")
    ap.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads")
    ap.add_argument("--top", type=int, default=12, help="op closures listed per model")
    ap.add_argument("--rounds", type=int, default=4, help="interleaved rounds (with --before)")
    ap.add_argument("--before", type=Path, help="compare with the checkout at this path")
    args = ap.parse_args()
    unknown = [name for name in args.models if name not in MODELS]
    if unknown:
        print(f"error: unknown zoo model(s) {', '.join(unknown)}", file=sys.stderr)
        return 2
    for name in args.models:
        model = MODELS[name]
        if not available(model):
            print(f"{name}: skipped (file not available)", file=sys.stderr)
            continue
        try:
            if args.before is not None:
                report = compare(model, args.before, args.rounds, args.repeat, args.threads)
            else:
                report = profile(model, args.repeat, args.threads, args.top)
            print("\n".join(report), flush=True)
        except Exception as e:  # a report: the first line says what failed
            print(f"{name}: error: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
