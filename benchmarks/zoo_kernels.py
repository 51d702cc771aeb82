"""Where each zoo model runs and what it costs: kernels per unit, host ops, the cycle
model's estimate on two presets, and the fast executor's time next to onnxruntime's.

    python benchmarks/zoo_kernels.py                   # every model of tests/zoo
    python benchmarks/zoo_kernels.py bert yolov8 --markdown table.md

Contract: for each model of :data:`tests.zoo.zoo.MODELS` (data set 0), one row:
kernels per unit on ``ascend910b`` (cube / vector / mix / host, as ``tilegraph-run
--json`` lists them), the host ops of that lowering, the cycle model's estimate (sunk
launches, the zoo entry's precision: int8 for the QDQ models, else the model's own) on
``ascend910b`` and ``ascend310p``, the fast
executor's wall time of one call (the best of ``--repeat`` calls after a first call that
compiles) next to onnxruntime's (CPU provider, ``--threads`` intra-op threads, the same
best-of), and the largest ``|ours - onnxruntime|``. A model that fails on a path gets the
first line of its error in that cell; the exit code is 0 whatever happens: this is a
report, not a test. Wheel models whose wheel is not in the pip cache are skipped.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.zoo.runner import first_line, max_abs_diff  # noqa: E402 - after the path is set
from tests.zoo.zoo import MODELS, ZooModel, make_inputs  # noqa: E402

PRESETS = ("ascend910b", "ascend310p")
UNITS = ("cube", "vector", "mix", "host")
HEADER = (
    "model",
    *UNITS,
    "host ops",
    "est. 910B µs",
    "est. 310P µs",
    "fast ms",
    "onnxruntime ms",
    "max abs diff",  # no "|": the --markdown table is a pipe table
)


def best_of(call: Callable[[], Any], repeat: int) -> float:
    """The shortest wall time of ``repeat`` calls, in ms."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return 1e3 * min(times)


def onnxruntime_session(path: Path, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def estimate_us(module: Any) -> float:
    from tilegraph.cost_model.cycles import CycleModelOptions, simulate_module

    return simulate_module(module, options=CycleModelOptions(launch="sunk")).total_us


def model_row(model: ZooModel, repeat: int, threads: int) -> tuple[str, ...]:
    import tilegraph

    path = model.path()
    inputs = make_inputs(model, 0)
    session = onnxruntime_session(path, threads)
    theirs = session.run(None, inputs)
    ort_ms = best_of(lambda: session.run(None, inputs), repeat)
    cells: dict[str, str] = {}
    try:
        compiled = tilegraph.compile(path, platform="ascend910b", precision=model.precision)
        ours = compiled(**inputs)
        units = Counter(k.unit for k in compiled.kernels)
        cells.update({unit: str(units.get(unit, 0)) for unit in UNITS})
        cells["host ops"] = str(len(compiled.host_ops))
        cells["est. 910B µs"] = f"{estimate_us(compiled.module):.1f}"
        cells["fast ms"] = f"{best_of(lambda: compiled(**inputs), repeat):.3g}"
        cells["max abs diff"] = f"{max_abs_diff([np.asarray(o) for o in ours], theirs):.2g}"
    except Exception as e:  # a report row, not a crash: the first line says what failed
        cells["cube"] = f"error: {first_line(str(e) or type(e).__name__)}"
    try:
        on_310p = tilegraph.compile(path, platform="ascend310p", precision=model.precision)
        on_310p(**inputs)
        cells["est. 310P µs"] = f"{estimate_us(on_310p.module):.1f}"
    except Exception as e:
        cells["est. 310P µs"] = f"error: {first_line(str(e) or type(e).__name__)}"
    cells["onnxruntime ms"] = f"{ort_ms:.3g}"
    return (model.name, *(cells.get(column, "") for column in HEADER[1:]))


def available(model: ZooModel) -> bool:
    try:
        return model.path().exists()
    except Exception:  # a wheel model whose wheel is not in the pip cache
        return False


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("models", nargs="*", help="zoo model names (default: all)")
    ap.add_argument("--repeat", type=int, default=3, help="timed calls per path (best of)")
    ap.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads")
    ap.add_argument("--markdown", help="also write the table to this file")
    args = ap.parse_args()
    unknown = [name for name in args.models if name not in MODELS]
    if unknown:
        print(f"error: unknown zoo model(s) {', '.join(unknown)}", file=sys.stderr)
        return 2
    chosen = [MODELS[name] for name in args.models] if args.models else list(MODELS.values())
    rows = []
    for model in chosen:
        if not available(model):
            print(f"{model.name}: skipped (file not available)", file=sys.stderr)
            continue
        rows.append(model_row(model, args.repeat, args.threads))
        print(" | ".join(rows[-1]), flush=True)
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    print("\n".join(lines))
    if args.markdown:
        Path(args.markdown).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
