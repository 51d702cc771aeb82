"""onnxruntime as the oracle of the tools: the model as it should get it, its outputs, and
the comparison of two sets of outputs (per output: shape, max abs / rel error, pass/fail).

It sits in the frontend because it reads and runs ONNX models only (``onnx``, onnxruntime,
and the importer's legacy-opset fix): nothing of the compiled module. tilegraph-run's
``--compare``, the tests and the benchmarks all check tilegraph against it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx


class OnnxruntimeMissing(RuntimeError):
    """onnxruntime is not installed (the message says how to get it)."""


def onnxruntime_model(model: onnx.ModelProto) -> bytes:
    """The model as onnxruntime should get it: opsets below 7 converted to 17 (ORT has no
    kernels for several opset-1..6 ops; from 7 on it runs a model as written, which is the
    oracle wanted: the converter changes Upsample and Resize-10's coordinate mapping), IR
    version 8, initializers not listed as inputs."""
    from onnx import version_converter

    from tilegraph.frontend.onnx_opsets import fix_legacy_prelu

    version = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 17)
    if version < 7:
        model = version_converter.convert_version(fix_legacy_prelu(model), 17)
    else:
        model = onnx.ModelProto.FromString(model.SerializeToString())
    model.ir_version = max(model.ir_version, 8)
    initializers = {t.name for t in model.graph.initializer}
    inputs = [vi for vi in model.graph.input if vi.name not in initializers]
    del model.graph.input[:]
    model.graph.input.extend(inputs)
    return model.SerializeToString()


def onnxruntime_session(model: onnx.ModelProto, threads: int | None = None) -> Any:
    try:
        import onnxruntime as ort
    except ImportError:
        raise OnnxruntimeMissing(
            "--compare needs onnxruntime (pip install 'tilegraph[test]')"
        ) from None
    options = ort.SessionOptions()
    options.log_severity_level = 3
    if threads is not None:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
    return ort.InferenceSession(
        onnxruntime_model(model), options, providers=["CPUExecutionProvider"]
    )


def onnxruntime_outputs(path: str, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Run the ONNX model at ``path`` in onnxruntime."""
    session = onnxruntime_session(onnx.load(path))
    feed_names = {i.name for i in session.get_inputs()}
    return session.run(None, {k: v for k, v in inputs.items() if k in feed_names})


def compare(
    names: Sequence[str],
    ours: Sequence[np.ndarray],
    theirs: Sequence[np.ndarray],
    rtol: float,
    atol: float,
) -> list[dict[str, Any]]:
    rows = []
    for name, a, b in zip(names, ours, theirs, strict=True):
        row: dict[str, Any] = {"output": name, "shape": list(np.shape(a))}
        if np.shape(a) != np.shape(b):
            row.update(ok=False, error=f"shape {list(np.shape(a))} vs {list(np.shape(b))}")
        else:
            a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
            diff = np.abs(a64 - b64)
            both_nan = np.isnan(a64) & np.isnan(b64)
            diff = np.where(both_nan, 0.0, diff)
            rel = diff / np.maximum(np.abs(b64), np.finfo(np.float64).tiny)
            ok = bool(np.all(diff <= atol + rtol * np.abs(b64)) or a64.size == 0)
            row.update(
                ok=ok,
                max_abs=float(diff.max(initial=0.0)),
                max_rel=float(np.where(diff > atol, rel, 0.0).max(initial=0.0)),
            )
        rows.append(row)
    return rows
