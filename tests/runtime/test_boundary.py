"""Element types at the interface (:mod:`tilegraph.runtime.boundary`): arrays of every ONNX
element type go in and come back in the declared type, bit for bit where the graph only
carries them, and as onnx's reference computes them where an op narrows (Cast); the
expectations come from onnx's ``ReferenceEvaluator`` and ``ml_dtypes``."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper
from onnx.reference import ReferenceEvaluator

import tilegraph
from tilegraph.dialects.element_conversion import exact_array
from tilegraph.dialects.entry import InputError
from tilegraph.formats import DType, parse_dtype
from tilegraph.frontend import load_onnx
from tilegraph.runtime import run_reference

NARROW = [
    TP.BFLOAT16, TP.FLOAT8E4M3FN, TP.FLOAT8E4M3FNUZ, TP.FLOAT8E5M2, TP.FLOAT8E5M2FNUZ,
    TP.FLOAT8E8M0, TP.FLOAT4E2M1, TP.INT4, TP.UINT4, TP.INT2, TP.UINT2,
]  # fmt: skip
"""The ONNX element types numpy lacks (``ml_dtypes`` arrays, as onnx's ``to_array`` gives)."""

TARGETS = ["reference", "tiles"]


def single_node(op: str, x_type: int, y_type: int, n: int, **attrs: object) -> onnx.ModelProto:
    """``y = op(x)`` on ``n`` elements; ``x_type`` and ``y_type`` are ONNX element types."""
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"], **attrs)],
        "g",
        [helper.make_tensor_value_info("x", x_type, [n])],
        [helper.make_tensor_value_info("y", y_type, [n])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    model.ir_version = 11
    return model


def every_value(onnx_type: int) -> np.ndarray:
    """Every bit pattern of the type, as an array of it (NaNs with their payloads too)."""
    np_type = helper.tensor_dtype_to_np_dtype(onnx_type)
    bits = parse_dtype(np_type).bits
    return np.arange(2**bits, dtype=np.uint16 if bits == 16 else np.uint8).view(np_type)


def run(model: onnx.ModelProto, x: np.ndarray, target: str) -> np.ndarray:
    if target == "reference":
        (y,) = run_reference(load_onnx(model), {"x": x})
    else:
        (y,) = tilegraph.compile(model, "O2", target="tiles")(x=x)
    return y


def assert_same_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("onnx_type", NARROW, ids=TP.DataType.Name)
def test_every_value_of_every_type_is_carried_bit_for_bit(onnx_type):
    x = every_value(onnx_type)
    model = single_node("Identity", onnx_type, onnx_type, x.size)
    assert_same_bits(run(model, x, "reference"), x)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("onnx_type", NARROW, ids=TP.DataType.Name)
def test_a_narrow_input_through_a_graph_comes_back_in_its_type(onnx_type, target):
    """Relu on every value as onnx's reference computes it, on both executors (a NaN's
    payload aside: the tiled path's on-chip bfloat16 buffers keep NaNs as NaN, not their
    payload bits)."""
    x = every_value(onnx_type)
    model = single_node("Relu", onnx_type, onnx_type, x.size)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    got, want = run(model, x, target), np.asarray(want)
    nan = np.isnan(want.astype(np.float32))
    np.testing.assert_array_equal(np.isnan(got.astype(np.float32)), nan)
    assert_same_bits(got[~nan], want[~nan])


@pytest.mark.parametrize("target", TARGETS)
def test_a_bfloat16_sum_is_rounded_to_bfloat16_as_onnx_does(target):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(64).astype(ml_dtypes.bfloat16) for _ in range(2))
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"])],
        "g",
        [helper.make_tensor_value_info(n, TP.BFLOAT16, [64]) for n in "ab"],
        [helper.make_tensor_value_info("y", TP.BFLOAT16, [64])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    (want,) = ReferenceEvaluator(model).run(None, {"a": a, "b": b})
    if target == "reference":
        (got,) = run_reference(load_onnx(model), {"a": a, "b": b})
    else:
        (got,) = tilegraph.compile(model, "O2", target="tiles")(a=a, b=b)
    assert_same_bits(got, np.asarray(want))


CAST_SOURCE = np.array(
    [0.0, -0.0, 0.5, -1.5, 2.5, 3.0, -7.0, 7.0, 1.00390625, 1.01171875, 3.1415927,
     -2.7182817, 0.1, 300.0, -1000.0, 1e30, np.inf, -np.inf, np.nan],
    np.float32,
)  # fmt: skip


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "to", [TP.BFLOAT16, TP.INT4, TP.FLOAT8E4M3FN, TP.FLOAT8E5M2, TP.UINT4, TP.FLOAT4E2M1]
)
def test_cast_returns_the_declared_type_with_onnx_bits(to, target):
    x = CAST_SOURCE
    if not parse_dtype(helper.tensor_dtype_to_np_dtype(to)).is_float:
        x = x[np.isfinite(x) & (np.abs(x) < 8)]  # ONNX leaves out-of-range floats undefined
    model = single_node("Cast", TP.FLOAT, to, x.size, to=to)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    assert_same_bits(run(model, x, target), np.asarray(want))


def test_exact_array_carries_bfloat16_bits_and_rounds_the_rest():
    nan_payloads = np.array([0x7F81, 0xFF02, 0x7FC1], np.uint16).view(ml_dtypes.bfloat16)
    held = nan_payloads.astype(np.float32)  # widening keeps the payload
    assert_same_bits(exact_array(held, DType.bfloat16), nan_payloads)
    off_grid = np.array([1.00390625, 1.01171875, 3.1415927, 3.4e38], np.float32)
    assert_same_bits(exact_array(off_grid, DType.bfloat16), off_grid.astype(ml_dtypes.bfloat16))


@pytest.mark.parametrize("onnx_type", NARROW, ids=TP.DataType.Name)
def test_raw_bytes_of_the_declared_type_are_accepted(onnx_type, tmp_path):
    """``np.save`` + ``np.load`` of an ml_dtypes array gives a void array of its bytes (a
    float8 e5m2 file only through :func:`~tilegraph.tools.run.npy_files.load_npy`)."""
    from tilegraph.tools.run.npy_files import load_npy

    x = every_value(onnx_type)
    np.save(tmp_path / "x.npy", x)
    raw = load_npy(tmp_path / "x.npy")
    assert raw.dtype.type is np.void
    model = single_node("Identity", onnx_type, onnx_type, x.size)
    assert_same_bits(run(model, raw, "reference"), x)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("onnx_type", "given", "message"),
    [
        (TP.BFLOAT16, np.float32, "input 'x' has dtype float32, expected bfloat16 (ONNX BFLOAT16)"),
        (TP.INT4, np.int8, "input 'x' has dtype int8, expected int4 (ONNX INT4)"),
        (TP.FLOAT8E4M3FN, ml_dtypes.float8_e5m2,
         "input 'x' has dtype float8_e5m2, expected float8_e4m3fn (ONNX FLOAT8E4M3FN)"),
        (TP.BFLOAT16, np.dtype("V1"), "input 'x' has dtype |V1, expected bfloat16 (ONNX BFLOAT16)"),
        (TP.FLOAT, ml_dtypes.bfloat16, "input 'x' has dtype bfloat16, expected float32 (ONNX FLOAT)"),
    ],
)  # fmt: skip
def test_a_wrong_element_type_is_one_clear_error(onnx_type, given, message, target):
    model = single_node("Relu", onnx_type, onnx_type, 4)
    x = np.zeros(4, np.uint8).view(given) if np.dtype(given).itemsize == 1 else np.zeros(4, given)
    with pytest.raises(InputError, match=f"^{re.escape(message)}$"):
        run(model, x, target)
