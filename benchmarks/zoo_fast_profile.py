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
"""

from __future__ import annotations

import argparse
import sys
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


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("models", nargs="+", help="zoo model names")
    ap.add_argument("--repeat", type=int, default=3, help="timed calls per path (best of)")
    ap.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads")
    ap.add_argument("--top", type=int, default=12, help="op closures listed per model")
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
            print("\n".join(profile(model, args.repeat, args.threads, args.top)), flush=True)
        except Exception as e:  # a report: the first line says what failed
            print(f"{name}: error: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
