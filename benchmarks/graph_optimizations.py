"""What O1 and O2 do to the nine light models: op counts, fusion, and the numbers still right.

    python benchmarks/graph_optimizations.py [--models resnet50 ...]

For each model (random weights, batch 1): executed ops (graph/layout ops outside constants;
a fused group counts once) as imported, after O1 and after O2; the ops O1 must remove
(batch_norm, constant_of_shape, dropout, identity) still present; O2's fusion summary
(groups, ops inside them, largest group, TransData absorbed); O2's compile time; and the
largest absolute difference of O1's and O2's outputs from onnxruntime on the same input,
with onnxruntime's run time next to the reference interpreter's.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
import onnx

from tilegraph.dialects.entry import entry_function, input_names
from tilegraph.dialects.layout_type import TensorType
from tilegraph.frontend import load_onnx
from tilegraph.frontend.light_models import LIGHT_MODELS, light_model
from tilegraph.frontend.onnxruntime_oracle import onnxruntime_outputs
from tilegraph.passes.analysis import compute_op_count, fusion_summary
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.runtime import run_reference

MUST_GO = ("graph.batch_norm", "graph.constant_of_shape", "graph.dropout", "graph.identity")


def leftovers(module) -> int:  # noqa: ANN001
    names = Counter(op.name for op in module.walk())
    return sum(names[n] for n in MUST_GO)


def max_abs(ours: list[np.ndarray], theirs: list[np.ndarray]) -> float:
    return max(float(np.max(np.abs(a - b))) for a, b in zip(ours, theirs, strict=True))


def row(name: str, workdir: Path) -> str:
    model = light_model(name)
    path = workdir / f"{name}.onnx"
    onnx.save(model, str(path))
    module = load_onnx(model)
    fn = entry_function(module)
    rng = np.random.default_rng(1)
    inputs = {
        n: rng.standard_normal([int(d) for d in t.origin_shape]).astype(np.float32)
        for n, t in zip(input_names(fn), fn.function_type.inputs.data, strict=True)
        if isinstance(t, TensorType)
    }
    start = time.perf_counter()
    theirs = onnxruntime_outputs(str(path), inputs)
    t_ort = time.perf_counter() - start
    ops_in = compute_op_count(module)
    run_pipeline("O1", make_context(), module)
    ops_o1, left = compute_op_count(module), leftovers(module)
    diff_o1 = max_abs(run_reference(module, inputs), theirs)
    module = load_onnx(model)
    start = time.perf_counter()
    run_pipeline("O2", make_context(), module)
    t_o2 = time.perf_counter() - start
    ops_o2 = compute_op_count(module)
    start = time.perf_counter()
    ours = run_reference(module, inputs)
    t_ref = time.perf_counter() - start
    f = fusion_summary(module)
    return (
        f"{name:<14}{ops_in:>6}{ops_o1:>7}{ops_o2:>7}{left:>6}"
        f"{f.groups:>7}{f.fused_ops:>7}{f.largest_group:>8}{f.transdata_absorbed:>6}"
        f"{t_o2:>8.2f}{diff_o1:>10.1e}{max_abs(ours, theirs):>10.1e}{t_ref:>8.2f}{t_ort:>8.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--models", nargs="+", default=list(LIGHT_MODELS))
    args = ap.parse_args()
    print(
        f"{'model':<14}{'ops':>6}{'O1':>7}{'O2':>7}{'left':>6}"
        f"{'groups':>7}{'fused':>7}{'largest':>8}{'TD':>6}"
        f"{'O2 s':>8}{'O1 diff':>10}{'O2 diff':>10}{'ref s':>8}{'ORT s':>8}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            print(row(name, Path(tmp)), flush=True)
    print(
        "ops: executed ops (constants excluded, a fused group counts once); left: "
        "batch_norm/constant_of_shape/dropout/identity after O1; TD: TransData absorbed "
        "into groups; diff: max |tilegraph - onnxruntime| on the outputs."
    )


if __name__ == "__main__":
    main()
