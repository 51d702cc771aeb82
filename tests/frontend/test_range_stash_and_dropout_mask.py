"""Range-27 on float16 / bfloat16 (computed in ``stash_type``) and Dropout's mask output at
inference, imported from single-node models and run against onnxruntime (bfloat16 against
onnx's ReferenceEvaluator: onnxruntime's Python API cannot exchange bfloat16 arrays)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.dialects.model_oracles import (
    chain_model,
    onnx_reference_outputs,
    onnxruntime_outputs,
    ours,
)
from tilegraph.dialects.graph.elementwise import DropoutMaskOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType
from tilegraph.frontend import OnnxImportError, load_onnx

RANGE = ("Range", ["start", "limit", "delta"], {})


def _scalars(dtype, start: float, limit: float, delta: float) -> dict[str, np.ndarray]:
    return {
        n: np.array(v, dtype)
        for n, v in zip(("start", "limit", "delta"), (start, limit, delta), strict=True)
    }


@pytest.mark.parametrize("stash_type", [None, 1, 11])
def test_float16_range_in_the_stash_type(stash_type):
    """2048 + i in float16: float16 accumulation would stall at 2048 (2049 is not a
    float16); computed in float32/64 and rounded, the values step by 2 above 2048."""
    attrs = {} if stash_type is None else {"stash_type": stash_type}
    inits = _scalars(np.float16, 2040, 2060, 1)
    model = chain_model([(*RANGE[:2], attrs)], {}, inits, opset=27)
    (got,), (want,) = ours(model, {}), onnxruntime_outputs(model, {})
    assert got.dtype == np.float16 and got.shape == (20,)
    np.testing.assert_array_equal(got, want)


def test_bfloat16_range():
    inits = _scalars(ml_dtypes.bfloat16, 0.5, 30.0, 0.75)
    model = chain_model([RANGE], {}, inits, opset=27)
    (got,), (want,) = ours(model, {}), onnx_reference_outputs(model, {})
    assert got.dtype == want.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


def test_range_stash_type_other_than_float_or_double_is_refused():
    model = chain_model(
        [(*RANGE[:2], {"stash_type": 10})], {}, _scalars(np.float16, 0, 5, 1), opset=27
    )
    with pytest.raises(OnnxImportError, match="stash_type 10 is not supported"):
        load_onnx(model)


@pytest.mark.parametrize("ratio", [None, 0.3])
def test_dropout_mask_at_inference_is_all_true(ratio):
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    inputs = ["x"] if ratio is None else ["x", "r"]
    inits = {} if ratio is None else {"r": np.array(ratio, np.float32)}
    model = chain_model([("Dropout", inputs, {})], {"x": x}, inits, opset=22, n_outputs=2)
    got, want = ours(model, {"x": x}), onnxruntime_outputs(model, {"x": x})
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    assert got[1].all()
    (op,) = [o for o in load_onnx(model).walk() if isinstance(o, DropoutMaskOp)]
    assert isinstance(op.mask.type, TensorType) and op.mask.type.dtype == DType.bool
