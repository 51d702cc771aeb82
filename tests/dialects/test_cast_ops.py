"""Cast, CastLike and BitCast over every element type: float8 (saturating or not),
float8e8m0 (round modes), float4, 4- and 2-bit integers, bfloat16 rounding; the new
element types' textual form; and the refusals.

The oracle is onnxruntime where it has the kernel and can exchange the type with numpy
(float32/float16/integers; float8 only inside a model, so float8 results come back through a
second Cast); onnx's ReferenceEvaluator where it cannot (float4, float8e8m0, 2-bit types,
uint4/int4 tensors); the spec's table for the e8m0 special values the reference does not
follow.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP

import tilegraph
from tests.dialects.model_oracles import (
    assert_same,
    chain_model,
    onnx_reference_outputs,
    onnxruntime_outputs,
    ours,
)
from tests.dialects.op_harness import build_op, check_op
from tilegraph.dialects.graph import ConstantOp, ShapeError
from tilegraph.dialects.graph import elementwise as ew
from tilegraph.dialects.graph.bitcast import BitCastOp
from tilegraph.frontend import OnnxImportError, load_onnx
from tilegraph.passes.context import parse_mlir
from tilegraph.runtime import run_reference

X = np.array(
    [0.0, -0.0, 0.1, 1.5, 3.3, -3.75, 240.0, 241.0, 448.0, 449.0, 465.0, 500.0, 60000.0,
     -1e6, 1e-9, np.inf, -np.inf, np.nan],
    np.float32,
)  # fmt: skip
FLOAT8 = [TP.FLOAT8E4M3FN, TP.FLOAT8E4M3FNUZ, TP.FLOAT8E5M2, TP.FLOAT8E5M2FNUZ]


@pytest.mark.parametrize("to", FLOAT8)
@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("source", [np.float32, np.float16])
def test_cast_to_float8_and_back_matches_onnxruntime(to, saturate, source):
    feeds = {"x": X.astype(source)}
    cast = ("Cast", ["x"], {"to": to, "saturate": saturate})
    model = chain_model([cast, ("Cast", ["_"], {"to": TP.FLOAT})], feeds, opset=21)
    assert_same(ours(model, feeds)[0], onnxruntime_outputs(model, feeds)[0])


@pytest.mark.parametrize("to", FLOAT8)
def test_cast_to_float8_gives_the_bit_patterns_of_onnx(to):
    """-0, NaN and saturation down to the bits (the reference returns the float8 array)."""
    feeds = {"x": X}
    model = chain_model([("Cast", ["x"], {"to": to})], feeds, opset=21)
    got, want = ours(model, feeds)[0], onnx_reference_outputs(model, feeds)[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_cast_like_takes_saturate_and_the_target_type():
    feeds = {"x": X}
    like = {"like": np.zeros(1, ml_dtypes.float8_e5m2)}
    nodes = [("CastLike", ["x", "like"], {"saturate": 0}), ("Cast", ["_"], {"to": TP.FLOAT16})]
    model = chain_model(nodes, feeds, like, opset=21)
    (got,) = ours(model, feeds)
    assert_same(got, onnxruntime_outputs(model, feeds)[0])
    assert np.isneginf(got[X == -1e6]).all()  # not saturated: beyond e5m2's -57344


def test_cast_to_bfloat16_rounds_to_nearest_even():
    feeds = {"x": np.array([1.00390625, 1.01171875, 3.1415927, -2.7182817, 1e30], np.float32)}
    nodes = [("Cast", ["x"], {"to": TP.BFLOAT16}), ("Cast", ["_"], {"to": TP.FLOAT})]
    model = chain_model(nodes, feeds, opset=21)
    (got,) = ours(model, feeds)
    assert_same(got, onnxruntime_outputs(model, feeds)[0])
    assert got[0] == 1.0 and got[1] == 1.015625  # ties to even: 1 + 2**-8 -> 1


NARROW = {
    TP.UINT4: ml_dtypes.uint4,
    TP.INT4: ml_dtypes.int4,
    TP.UINT2: ml_dtypes.uint2,
    TP.INT2: ml_dtypes.int2,
    TP.FLOAT4E2M1: ml_dtypes.float4_e2m1fn,
}


@pytest.mark.parametrize("to", list(NARROW))
@pytest.mark.parametrize("source", [np.float32, np.float16, np.int32])
def test_cast_to_narrow_types_matches_the_onnx_reference(to, source):
    """Integers wrap, floats truncate toward zero then wrap, float4 rounds and saturates
    (onnxruntime has no numpy exchange for these types: the onnx reference judges)."""
    values = np.concatenate([np.arange(-9, 17), [2.5, -0.75, 0.25, 5.5, 7.9]])
    feeds = {"x": values.astype(source)}
    if source == np.int32:
        feeds["x"] = np.arange(-9, 17, dtype=np.int32)
    model = chain_model([("Cast", ["x"], {"to": to})], feeds, opset=25)
    assert_same(ours(model, feeds)[0], onnx_reference_outputs(model, feeds)[0])


@pytest.mark.parametrize("source", list(NARROW))
@pytest.mark.parametrize("to", [TP.FLOAT, TP.FLOAT16, TP.INT8, TP.UINT8])
def test_cast_from_narrow_types_matches_the_onnx_reference(source, to):
    x = np.array([-2, -1, 0, 1, 0.5, 1.5, 3, 6], np.float32).astype(NARROW[source])
    model = chain_model([("Cast", ["x"], {"to": to})], {"x": x}, opset=25)
    assert_same(ours(model, {"x": x})[0], onnx_reference_outputs(model, {"x": x})[0])


POWERS = np.array([0.124, 0.125, 0.2, 0.7499, 0.75, 1.1, 1.5, 3.0, 2.0**-100, 2.0**126 * 1.75],
                  np.float32)  # fmt: skip


@pytest.mark.parametrize("round_mode", ["up", "down", "nearest"])
@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("source", [np.float32, np.float16])
def test_cast_to_float8e8m0_rounds_by_round_mode(round_mode, saturate, source):
    feeds = {"x": POWERS.astype(source)}
    if source == np.float16:
        feeds["x"] = feeds["x"][np.isfinite(feeds["x"]) & (feeds["x"] > 0)]
    cast = ("Cast", ["x"], {"to": TP.FLOAT8E8M0, "round_mode": round_mode, "saturate": saturate})
    model = chain_model([cast], feeds, opset=25)
    assert_same(ours(model, feeds)[0], onnx_reference_outputs(model, feeds)[0])


def test_cast_to_float8e8m0_special_values_follow_the_spec_table():
    """Cast's table: 0, NaN, Inf, x > E8M0_MAX, x < E8M0_MIN for saturate + up and for
    non-saturate + nearest (onnx's reference maps Inf to NaN either way), and E8M0_MIN
    itself, a float32 subnormal, which the reference rounds up to 2**-126."""
    x = np.array([0.0, np.nan, np.inf, 2.0**127 * 1.5, 2.0**-140, 2.0**-127], np.float32)
    big, small = 2.0**127, 2.0**-127
    for attrs, want in (
        ({"saturate": 1, "round_mode": "up"}, [small, np.nan, big, big, small, small]),
        ({"saturate": 0, "round_mode": "nearest"}, [np.nan] * 5 + [small]),
    ):
        model = chain_model([("Cast", ["x"], {"to": TP.FLOAT8E8M0, **attrs})], {"x": x}, opset=25)
        (got,) = ours(model, {"x": x})
        np.testing.assert_array_equal(got.astype(np.float64), want)


@pytest.mark.parametrize(
    ("x", "to"),
    [
        (np.array([1.5, -0.0, np.inf, np.nan], np.float32), TP.INT32),
        (np.array([0x3FC00000, -1, 0, 7], np.int32), TP.FLOAT),
        (np.array([0.5, -2.0, np.inf], np.float64), TP.INT64),
        (np.array([1.5, -2.0, 65504], np.float16), TP.UINT16),
        (np.array([0, 1, 255, 128], np.uint8), TP.INT8),
        (np.array([[-1, 5], [0, 7]], np.int16), TP.FLOAT16),
    ],
    ids=lambda v: str(getattr(v, "dtype", v)),
)
def test_bit_cast_matches_onnxruntime(x, to):
    check_op(BitCastOp, [x], {"to": to}, opset=26, rtol=0, atol=0)


def test_bit_cast_of_bfloat16_reads_its_16_bits():
    feeds = {"x": np.array([1.0, -3.140625, 1e-3, 65280.0], np.float32)}
    nodes = [("Cast", ["x"], {"to": TP.BFLOAT16}), ("BitCast", ["_"], {"to": TP.INT16})]
    model = chain_model(nodes, feeds, opset=26)
    assert_same(ours(model, feeds)[0], onnxruntime_outputs(model, feeds)[0])


@pytest.mark.parametrize(
    ("source", "to"),
    [(TP.INT4, TP.UINT4), (TP.FLOAT4E2M1, TP.INT4), (TP.INT2, TP.UINT2),
     (TP.FLOAT8E4M3FN, TP.UINT8), (TP.UINT8, TP.FLOAT8E5M2), (TP.BOOL, TP.INT8)],
)  # fmt: skip
def test_bit_cast_of_narrow_types_matches_the_onnx_reference(source, to):
    values = np.array([-2, -1, 0, 1, 0.5, 1.5], np.float32)
    x = values.astype(NARROW.get(source) or onnx.helper.tensor_dtype_to_np_dtype(source))
    model = chain_model([("BitCast", ["x"], {"to": to})], {"x": x}, opset=26)
    assert_same(ours(model, {"x": x})[0], onnx_reference_outputs(model, {"x": x})[0])


def test_narrow_element_types_print_and_parse():
    text = """
    func.func @main(%x: !layout.tensor<4xf32>) -> !layout.tensor<4xf8E5M2FNUZ> {
      %a = graph.constant dense<[1.5, -2.0, 448.0, 0.0]> : !layout.tensor<4xf8E4M3FN>
      %b = graph.constant dense<[3, 1]> : !layout.tensor<2xui4>
      %c = graph.constant dense<[-2, 1]> : !layout.tensor<2xi2>
      %d = graph.constant dense<[0.5, 6.0]> : !layout.tensor<2xf4E2M1FN>
      %e = graph.constant dense<[0.25, 8.0]> : !layout.tensor<2xf8E8M0FNU>
      %y = graph.cast %x {to = 20 : i64, saturate = 0 : i64} : (!layout.tensor<4xf32>) -> !layout.tensor<4xf8E5M2FNUZ>
      func.return %y : !layout.tensor<4xf8E5M2FNUZ>
    }
    """  # noqa: E501
    module = parse_mlir(text)
    assert str(parse_mlir(str(module))) == str(module)
    values = [op.value.array for op in module.walk() if isinstance(op, ConstantOp)]
    assert all(v is not None for v in values)
    values = [v for v in values if v is not None]
    assert [v.dtype.name for v in values] == [
        "float8_e4m3fn", "uint4", "int2", "float4_e2m1fn", "float8_e8m0fnu"
    ]  # fmt: skip
    assert values[0].astype(np.float32).tolist() == [1.5, -2.0, 448.0, 0.0]


# ---- refusals ------------------------------------------------------------------------------


def test_cast_to_a_string_is_refused_by_name():
    with pytest.raises(ShapeError, match=r"unsupported ONNX data type 8 \(STRING\)"):
        build_op(ew.CastOp, [X], {"to": TP.STRING})


def test_cast_to_float6_is_refused_with_a_located_message():
    model = chain_model([("Cast", ["x"], {"to": TP.FLOAT6E2M3})], {"x": X}, opset=28)
    with pytest.raises(OnnxImportError, match=r"\(Cast\): unsupported ONNX data type 27"):
        load_onnx(model)


def test_an_unknown_round_mode_is_refused():
    with pytest.raises(ShapeError, match="round_mode must be one of up, down, nearest"):
        build_op(ew.CastOp, [X], {"to": TP.FLOAT8E8M0, "round_mode": "zero"})


def test_bit_cast_between_widths_is_refused():
    with pytest.raises(ShapeError, match="float32 has 32 bits, int16 has 16"):
        build_op(BitCastOp, [X], {"to": TP.INT16})


# ---- the tiled path ------------------------------------------------------------------------


def test_a_saturating_float8_cast_on_the_tiled_path_matches_onnxruntime():
    feeds = {"x": np.tile(X[np.isfinite(X)], (4, 1))}
    nodes = [("Cast", ["x"], {"to": TP.FLOAT8E4M3FN}), ("Cast", ["_"], {"to": TP.FLOAT})]
    model = chain_model(nodes, feeds, opset=21)
    (got,) = tilegraph.compile(model, "O2")(**feeds)
    assert_same(np.asarray(got), onnxruntime_outputs(model, feeds)[0])


@pytest.mark.parametrize(
    ("values", "container"),
    [(np.array([1.5, -3.0, 2.0**-10], ml_dtypes.bfloat16), np.float32),
     (np.array([-8, 7, 0], ml_dtypes.int4), np.int8),
     (np.array([0.5, -448.0], ml_dtypes.float8_e4m3fn), ml_dtypes.float8_e4m3fn)],
)  # fmt: skip
def test_initializers_are_held_in_their_types_container(values, container):
    """onnx gives bfloat16 and int4 initializers as ml_dtypes arrays; tilegraph's constant
    holds them in float32 and int8 and the result comes back in the declared type, bit for
    bit."""
    model = chain_model([("Identity", ["c"], {})], {}, {"c": values}, opset=21)
    module = load_onnx(model)
    (constant,) = [op for op in module.walk() if isinstance(op, ConstantOp)]
    held = constant.constant_array()
    assert held is not None and held.dtype == np.dtype(container)
    (got,) = run_reference(module, {})
    assert got.dtype == values.dtype
    np.testing.assert_array_equal(got.view(np.uint8), values.view(np.uint8))


def test_simplifying_a_cast_chain_keeps_saturate():
    from tilegraph.passes.context import make_context
    from tilegraph.passes.pipelines import run_pipeline
    from tilegraph.runtime import run_reference

    feeds = {"x": np.array([1.0, 500.0, -1e4, 3.3], np.float16)}
    nodes = [
        ("Cast", ["x"], {"to": TP.FLOAT}),  # exact: the chain rule skips it
        ("Cast", ["_"], {"to": TP.FLOAT8E4M3FN, "saturate": 0}),
        ("Cast", ["_"], {"to": TP.FLOAT}),
    ]
    model = chain_model(nodes, feeds, opset=21)
    module = load_onnx(model)
    run_pipeline("O2", make_context(), module)
    assert_same(run_reference(module, feeds)[0], onnxruntime_outputs(model, feeds)[0])
