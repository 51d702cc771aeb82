"""onnxruntime as the oracle of the tools: the model as it should get it, its outputs, and
the comparison of two sets of outputs (per output: shape, max abs / rel error, pass/fail).

It sits in the frontend because it reads and runs ONNX models only (``onnx``, onnxruntime,
and the importer's legacy-opset fix): nothing of the compiled module. tilegraph-run's
``--compare``, the tests and the benchmarks all check tilegraph against it."""

from __future__ import annotations

import re
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
    return _run(onnx.load(path), inputs)


_ORT_PREFIX = re.compile(r"^\s*\[ONNXRuntimeError\] : \d+ : \w+ : ")
"""The error-code prefix of onnxruntime's exception text."""


class OnnxruntimeFailed(RuntimeError):
    """onnxruntime refused the model or these inputs (the comparison has no peer); the
    message is onnxruntime's own status message."""


def _run(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    try:
        session = onnxruntime_session(model)
        feed_names = {i.name for i in session.get_inputs()}
        return session.run(None, {k: v for k, v in inputs.items() if k in feed_names})
    except OnnxruntimeMissing:
        raise
    except Exception as e:  # onnxruntime raises its own exception classes, not exported
        message = str(e).split("Status Message: ", 1)[-1]
        message = " ".join(_ORT_PREFIX.sub("", message).split())
        raise OnnxruntimeFailed(f"onnxruntime failed on these inputs: {message}") from e


def compare_with_onnxruntime(
    path: str,
    inputs: dict[str, np.ndarray],
    names: Sequence[str],
    ours: Sequence[np.ndarray],
    rtol: float | None = None,
    atol: float | None = None,
    rounding: str | None = None,
) -> list[dict[str, Any]]:
    """Run the ONNX model at ``path`` in onnxruntime and :func:`compare` ``ours`` with its
    outputs, at the tolerance of the model's precision when none is given: the narrower of
    the 16-bit type it computes in (:func:`half_precision`) and ``rounding``, the one the
    compilation rounded to (``--precision fp16`` on a float32 model: ``"float16"``)."""
    model = onnx.load(path)
    theirs = _run(model, inputs)
    return compare(names, ours, theirs, rtol, atol, narrower(half_precision(model), rounding))


def narrower(a: str | None, b: str | None) -> str | None:
    """The 16-bit float type of fewer significand bits among ``a`` and ``b`` (``None``:
    float32, the widest)."""
    given = [t for t in (a, b) if t is not None]
    return min(given, key=_SIGNIFICAND_BITS.__getitem__, default=None)


DEFAULT_RTOL, DEFAULT_ATOL = 1e-3, 1e-4
"""The comparison's tolerance for float32 / float64 (and integer) outputs."""

_SIGNIFICAND_BITS = {"float16": 11, "bfloat16": 8}
"""Significand bits (with the implicit one) of the 16-bit float types: their unit roundoff is
``2^-bits``."""


_ONNX_HALF_TYPES = {onnx.TensorProto.FLOAT16: "float16", onnx.TensorProto.BFLOAT16: "bfloat16"}


def half_precision(model: onnx.ModelProto) -> str | None:
    """The narrowest 16-bit float type the model computes in (``"bfloat16"`` before
    ``"float16"``), from its initializers, declared value types, Cast targets and constant
    attributes (subgraphs included); ``None`` when it has none. A model may compute in fp16
    and cast its outputs to float32 (a detector's box decoding): those outputs carry fp16's
    rounding."""
    found: set[int] = set()

    def visit(graph: onnx.GraphProto) -> None:
        found.update(t.data_type for t in graph.initializer)
        for vi in (*graph.input, *graph.output, *graph.value_info):
            found.add(vi.type.tensor_type.elem_type)
        for node in graph.node:
            for a in node.attribute:
                if node.op_type == "Cast" and a.name == "to":
                    found.add(a.i)
                elif a.type == onnx.AttributeProto.TENSOR:
                    found.add(a.t.data_type)
                elif a.type == onnx.AttributeProto.GRAPH:
                    visit(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for g in a.graphs:
                        visit(g)

    visit(model.graph)
    for code in (onnx.TensorProto.BFLOAT16, onnx.TensorProto.FLOAT16):
        if code in found:
            return _ONNX_HALF_TYPES[code]
    return None


def default_tolerance(theirs: np.ndarray, precision: str | None = None) -> tuple[float, float]:
    """``(rtol, atol)`` for an output of onnxruntime's type, or of the model's 16-bit
    ``precision`` (:func:`half_precision`) for a float output of a wider type. A 16-bit
    float result carries rounding from every op before it, in an order that differs from
    backend to backend (onnxruntime's own is typically several units of roundoff from the
    float32 evaluation of the same graph), so it gets 16 units of roundoff of each value
    plus 8 units at the output's largest magnitude: float16 ``rtol = 2^-7``, ``atol = 2^-8 ·
    max |theirs|``; bfloat16 ``2^-4`` and ``2^-5 · max``. Otherwise ``DEFAULT_RTOL``,
    ``DEFAULT_ATOL``."""
    dtype = np.asarray(theirs).dtype
    bits = _SIGNIFICAND_BITS.get(dtype.name)
    if bits is None and precision is not None and dtype.kind == "f":
        bits = _SIGNIFICAND_BITS[precision]
    if bits is None:
        return DEFAULT_RTOL, DEFAULT_ATOL
    finite = np.abs(np.asarray(theirs, np.float64))
    finite = finite[np.isfinite(finite)]
    largest = float(finite.max(initial=0.0))
    return 2.0 ** (4 - bits), 2.0 ** (3 - bits) * largest


def tolerance(
    theirs: np.ndarray,
    rtol: float | None = None,
    atol: float | None = None,
    precision: str | None = None,
) -> tuple[float, float]:
    """``(rtol, atol)``: the given ones, each one not given the output's
    (:func:`default_tolerance`)."""
    default_rtol, default_atol = default_tolerance(theirs, precision)
    return (default_rtol if rtol is None else rtol, default_atol if atol is None else atol)


def compare(
    names: Sequence[str],
    ours: Sequence[np.ndarray],
    theirs: Sequence[np.ndarray],
    rtol: float | None = None,
    atol: float | None = None,
    precision: str | None = None,
) -> list[dict[str, Any]]:
    """Per output: pass when every ``|ours - theirs| <= atol + rtol * |theirs|`` (NaN where
    both are NaN, and the same infinity on both sides, count as equal). A tolerance not
    given is the output type's, or the model's 16-bit ``precision``
    (:func:`default_tolerance`); each row says the ``rtol`` / ``atol`` it used."""
    rows = []
    for name, a, b in zip(names, ours, theirs, strict=True):
        r, t = tolerance(b, rtol, atol, precision)
        row: dict[str, Any] = {"output": name, "shape": list(np.shape(a)), "rtol": r, "atol": t}
        if np.shape(a) != np.shape(b):
            row.update(ok=False, error=f"shape {list(np.shape(a))} vs {list(np.shape(b))}")
        else:
            a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
            # NaN in both, or the same infinity (whose difference is NaN), is equal
            same = (np.isnan(a64) & np.isnan(b64)) | (a64 == b64)
            with np.errstate(invalid="ignore"):  # inf - inf, inf / inf: NaN, judged by `same`
                diff = np.where(same, 0.0, np.abs(a64 - b64))
                rel = diff / np.maximum(np.abs(b64), np.finfo(np.float64).tiny)
            finite = np.isfinite(a64) & np.isfinite(b64)  # |theirs| = inf tolerates nothing
            close = finite & (diff <= t + r * np.abs(np.where(finite, b64, 0.0)))
            ok = bool(np.all(same | close) or a64.size == 0)
            row.update(
                ok=ok,
                max_abs=float(diff.max(initial=0.0)),
                max_rel=float(np.where(diff > t, rel, 0.0).max(initial=0.0)),
            )
        rows.append(row)
    return rows
