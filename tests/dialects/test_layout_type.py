"""The !layout.tensor type: accessors, derived storage shape, syntax, verification."""

from __future__ import annotations

import pytest
import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, f16, f32, i8
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

from tilegraph.dialects.graph import Graph
from tilegraph.dialects.layout import Layout, TensorType
from tilegraph.formats import Format
from tilegraph.formats.dims import shape_symbol


def parse_type(text: str) -> TensorType:
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(Layout)
    ctx.load_dialect(Graph)
    t = Parser(ctx, text).parse_type()
    assert isinstance(t, TensorType)
    return t


def test_ge_style_accessors():
    t = TensorType([8, 3, 224, 224], f16, "NCHW", "NC1HWC0")
    assert t.origin_shape == (8, 3, 224, 224)
    assert t.origin_format is Format.NCHW
    assert t.storage_format is Format.NC1HWC0
    assert t.storage_shape == (8, 1, 224, 224, 16)
    assert t.shape.origin == (8, 3, 224, 224) and t.shape.storage == (8, 1, 224, 224, 16)
    assert t.format.origin is Format.NCHW and t.format.storage is Format.NC1HWC0
    assert t.element_type == f16
    assert str(t.dtype) == "float16"


def test_storage_defaults_to_origin_and_nd():
    t = TensorType([2, 3], f32)
    assert t.origin_format is Format.ND and t.storage_format is Format.ND
    assert t.storage_shape == (2, 3)
    assert str(t) == "!layout.tensor<2x3xf32>"


def test_fractal_z_weight_shape():
    t = TensorType([64, 3, 7, 7], f16, "NCHW", "FRACTAL_Z")
    assert t.storage_shape == (49, 4, 16, 16)


def test_int8_uses_c0_32():
    t = TensorType([1, 40, 5, 5], i8, "NCHW", "NC1HWC0")
    assert t.storage_shape == (1, 2, 5, 5, 32)


def test_platform_changes_fp32_c0_and_prints_it():
    t = TensorType([1, 20, 4, 4], f32, "NCHW", "NC1HWC0", platform="ascend950")
    assert t.c0.data == 8
    assert t.storage_shape == (1, 3, 4, 4, 8)
    text = str(t)
    assert "{c0 = 8}" in text
    assert parse_type(text) == t


def test_bias_rank_expansion():
    t = TensorType([64], f16, "NCHW", "NC1HWC0", reshape_type="C")
    assert t.storage_shape == (1, 4, 1, 1, 16)
    assert str(t) == '!layout.tensor<64xf16, NCHW -> NC1HWC0{reshape_type = "C"} [1, 4, 1, 1, 16]>'


def test_unknown_and_symbolic_dims():
    t = TensorType([-1, 3, 224, 224], f16, "NCHW", "NC1HWC0")
    assert t.origin_shape[0] == -1 and t.storage_shape[0] == -1
    s0 = shape_symbol("s0")
    u = TensorType([s0, 20, 7, 7], f16, "NCHW", "NC1HWC0")
    assert u.storage_shape == (s0, 2, 7, 7, 16)
    assert u.has_symbolic_dims
    c = TensorType([1, s0, 7, 7], f16, "NCHW", "NC1HWC0")
    assert sympy.simplify(c.storage_shape[1] - sympy.ceiling(s0 / 16)) == 0


@pytest.mark.parametrize(
    "text",
    [
        "!layout.tensor<1x3x224x224xf32>",
        "!layout.tensor<1x3x224x224xf32, NCHW>",
        "!layout.tensor<1x3x224x224xf16, NCHW -> NC1HWC0 [1, 1, 224, 224, 16]>",
        "!layout.tensor<64x3x7x7xf16, NCHW -> FRACTAL_Z [49, 4, 16, 16]>",
        "!layout.tensor<32x64xf16, ND -> FRACTAL_NZ [4, 2, 16, 16]>",
        "!layout.tensor<?x3x8x8xf16, NCHW -> NC1HWC0 [?, 1, 8, 8, 16]>",
        "!layout.tensor<[s0, 3, 224, 224], f16, NCHW -> NC1HWC0 [s0, 1, 224, 224, 16]>",
        '!layout.tensor<[s0, "2*s1"], f32>',
        "!layout.tensor<f32>",
        "!layout.tensor<2x3x4x5xf32, NCHW -> NHWC [2, 4, 5, 3]>",
    ],
)
def test_print_parse_round_trip(text: str):
    t = parse_type(text)
    assert str(t) == text
    assert parse_type(str(t)) == t


def test_symbolic_channel_prints_quoted_expression():
    t = parse_type("!layout.tensor<[1, s1, 7, 7], f16, NCHW -> NC1HWC0>")
    assert str(t) == (
        '!layout.tensor<[1, s1, 7, 7], f16, NCHW -> NC1HWC0 [1, "ceiling(s1/16)", 7, 7, 16]>'
    )
    assert parse_type(str(t)) == t


def test_storage_shape_may_be_omitted_when_parsing():
    t = parse_type("!layout.tensor<8x3x224x224xf16, NCHW -> NC1HWC0>")
    assert t.storage_shape == (8, 1, 224, 224, 16)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "!layout.tensor<8x3x224x224xf16, NCHW -> NC1HWC0 [8, 3, 224, 224, 16]>",
            "does not match the shape derived",
        ),
        ("!layout.tensor<8x3xf16, BOGUS>", "unknown format"),
        ("!layout.tensor<2x3x4x5x6xf16, NCHW>", "needs rank <= 4"),
        ("!layout.tensor<2x3x4x5xf16, NC1HWC0>", "cannot be an origin format"),
        ("!layout.tensor<2x3x4x5xf16, NCHW -> FRACTAL_Z{bogus = 2}>", "unknown storage parameter"),
        ('!layout.tensor<["s0 +"], f16>', "invalid dimension expression"),
        ("!layout.tensor<[s0 +], f16>", "Expected ']'"),
    ],
)
def test_parse_errors(text: str, message: str):
    with pytest.raises(ParseError, match=message):
        parse_type(text)


def test_programmatic_verification():
    with pytest.raises(VerifyException, match="groups"):
        TensorType([4, 4, 3, 3], f16, "NCHW", "FRACTAL_Z", groups=0)


def test_with_storage_keeps_origin_view():
    t = TensorType([2, 20, 3, 3], f16, "NCHW")
    u = t.with_storage("NC1HWC0")
    assert (u.origin_shape, u.origin_format, u.element_type) == (
        t.origin_shape,
        t.origin_format,
        t.element_type,
    )
    assert u.storage_shape == (2, 2, 3, 3, 16)
    assert u.storage_bytes() == 2 * 2 * 3 * 3 * 16 * 2
