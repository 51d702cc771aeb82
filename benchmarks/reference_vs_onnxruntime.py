"""Reference-interpreter time on a light model next to onnxruntime and onnx.reference.

    python benchmarks/reference_vs_onnxruntime.py [--model resnet50] [--repeat 5]

Runs the same model (random weights, batch 1, fp32, same input) in:
* tilegraph's reference interpreter (numpy kernels through the xDSL interpreter),
* onnxruntime with 1 intra-op thread and with its default thread count,
* onnx.reference.ReferenceEvaluator (the model converted to opset 17 first, as for ORT).
Prints the median and min over ``--repeat`` runs (after one warm-up); these machines are
noisy, so look at the median.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from tilegraph.dialects.entry import entry_function, input_names
from tilegraph.dialects.layout_type import TensorType
from tilegraph.frontend import load_onnx
from tilegraph.frontend.light_models import LIGHT_MODELS, light_model
from tilegraph.frontend.onnxruntime_oracle import onnxruntime_session
from tilegraph.runtime import run_reference


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--model", default="resnet50", choices=LIGHT_MODELS)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--skip-onnx-reference", action="store_true")
    args = ap.parse_args()

    from onnx import version_converter

    model = light_model(args.model, seed=0)
    t0 = time.perf_counter()
    module = load_onnx(model)
    import_s = time.perf_counter() - t0
    fn = entry_function(module)
    rng = np.random.default_rng(0)
    inputs = {
        n: rng.standard_normal([int(d) for d in t.origin_shape]).astype(np.float32)
        for n, t in zip(input_names(fn), fn.function_type.inputs.data, strict=True)
        if isinstance(t, TensorType)
    }

    def ort_session(threads: int | None) -> Callable[[], object]:
        session = onnxruntime_session(model, threads)
        return lambda: session.run(None, inputs)

    rows = [
        ("tilegraph reference", timed(lambda: run_reference(module, inputs), args.repeat)),
        ("onnxruntime, 1 thread", timed(ort_session(1), args.repeat)),
        ("onnxruntime, default threads", timed(ort_session(None), args.repeat)),
    ]
    if not args.skip_onnx_reference:
        from onnx.reference import ReferenceEvaluator

        evaluator = ReferenceEvaluator(version_converter.convert_version(model, 17))
        rows.append(
            ("onnx.reference", timed(lambda: evaluator.run(None, inputs), max(1, args.repeat)))
        )
    print(f"light {args.model}, batch 1, fp32; import into tilegraph: {import_s * 1e3:.0f} ms")
    print(f"{'runtime':<32}{'median ms':>12}{'min ms':>12}")
    for name, (median, best) in rows:
        print(f"{name:<32}{median * 1e3:>12.1f}{best * 1e3:>12.1f}")


if __name__ == "__main__":
    main()
