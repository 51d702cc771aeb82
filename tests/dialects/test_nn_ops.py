"""graph NN ops (tilegraph/dialects/graph/nn.py): shapes and values against onnxruntime,
shape-function errors, unknown/symbolic dims, facts and cost."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
import sympy
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import VerifyException

from tests.dialects.op_harness import build_op, check_op
from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph import FormatRole, FusionKind, GraphOp, KernelVariant, ShapeError
from tilegraph.dialects.graph.nn import (
    NN_OPS,
    BatchNormOp,
    Conv2dOp,
    ConvOp,
    ConvTransposeOp,
    InstanceNormOp,
    LogSoftmaxOp,
    LrnOp,
    SoftmaxOp,
)
from tilegraph.dialects.graph.pooling import AvgPoolOp, GlobalAvgPoolOp, GlobalMaxPoolOp, MaxPoolOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.formats.dims import UNKNOWN, shape_symbol

ort.set_default_logger_severity(3)
RNG = np.random.default_rng(0)
TOL = {"rtol": 1e-4, "atol": 1e-4}


def rand(*shape: int, dtype=np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def positive(*shape: int) -> np.ndarray:
    return (np.abs(rand(*shape)) + 0.1).astype(np.float32)


def infer(cls: type[GraphOp], *types: TensorType | None, **attrs) -> TensorType:
    """The result type the shape function gives for operands of these types."""
    block = Block(arg_types=[t for t in types if t is not None])
    args = iter(block.args)
    op = cls.make(*(None if t is None else next(args) for t in types), **attrs)
    t = op.results[0].type
    assert isinstance(t, TensorType)
    return t


def f32(*shape, fmt: Format | str = Format.ND) -> TensorType:
    return TensorType(list(shape), element_type_of(np.float32), fmt)


# ---- convolution ----------------------------------------------------------------------------

CONV2D_CASES = [
    ((1, 3, 8, 8), (4, 3, 3, 3), True, {}),
    ((2, 3, 9, 7), (5, 3, 3, 2), False, {"strides": [2, 1], "pads": [1, 0, 2, 1]}),
    ((1, 4, 10, 10), (6, 2, 3, 3), True, {"group": 2, "dilations": [2, 1], "pads": [1, 1, 1, 1]}),
    ((1, 8, 7, 7), (8, 1, 3, 3), True, {"group": 8, "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 3, 8, 7), (4, 3, 4, 3), False, {"auto_pad": "SAME_UPPER", "strides": [3, 2]}),
    ((1, 3, 8, 7), (4, 3, 4, 3), False, {"auto_pad": "SAME_LOWER", "strides": [3, 2]}),
    ((1, 3, 8, 7), (4, 3, 2, 2), True, {"auto_pad": "SAME_UPPER"}),
    ((1, 3, 8, 7), (4, 3, 2, 2), True, {"auto_pad": "SAME_LOWER"}),
    ((1, 3, 9, 9), (4, 3, 2, 3), True, {"auto_pad": "VALID", "dilations": [3, 2]}),
    ((1, 3, 8, 7), (4, 3, 3, 2), True, {"auto_pad": "VALID", "strides": [2, 2]}),
    ((2, 6, 5, 5), (3, 6, 1, 1), True, {"kernel_shape": [1, 1]}),
]


@pytest.mark.parametrize("xs, ws, bias, attrs", CONV2D_CASES)
def test_conv2d(xs, ws, bias, attrs):
    b = rand(ws[0]) if bias else None
    check_op(Conv2dOp, [rand(*xs), rand(*ws), b], attrs, **TOL)


def test_conv2d_float16_and_result_format():
    x, w = rand(1, 4, 6, 6, dtype=np.float16), rand(8, 4, 3, 3, dtype=np.float16)
    (y,) = check_op(Conv2dOp, [x, w], {"pads": [1, 1, 1, 1]}, rtol=1e-2, atol=2e-2)
    assert y.dtype == np.float16
    _, op = build_op(Conv2dOp, [x, w], {"pads": [1, 1, 1, 1]})
    assert op.results[0].type.origin_format == Format.NCHW


def test_conv2d_resnet50_layer():
    """A ResNet-50 3x3 layer at full size: fast enough and exact enough."""
    x, w, b = rand(1, 64, 56, 56), rand(64, 64, 3, 3) * 0.05, rand(64)
    check_op(Conv2dOp, [x, w, b], {"pads": [1, 1, 1, 1]}, rtol=1e-3, atol=1e-3)
    check_op(
        Conv2dOp,
        [rand(1, 3, 224, 224), rand(64, 3, 7, 7) * 0.1, None],
        {"strides": [2, 2], "pads": [3, 3, 3, 3]},
        rtol=1e-3,
        atol=1e-3,
    )


@pytest.mark.parametrize(
    "xs, ws, attrs",
    [
        ((2, 4, 11), (6, 2, 3), {"group": 2, "strides": [2], "pads": [1, 2], "dilations": [2]}),
        ((1, 3, 9), (2, 3, 4), {"auto_pad": "SAME_UPPER", "strides": [2]}),
        ((1, 2, 5, 6, 7), (3, 2, 2, 3, 2), {"strides": [1, 2, 2], "pads": [1, 0, 1, 0, 1, 1]}),
        ((1, 4, 4, 5, 6), (4, 2, 3, 3, 3), {"group": 2, "auto_pad": "SAME_LOWER"}),
    ],
)
def test_conv_1d_3d(xs, ws, attrs):
    (y,) = check_op(ConvOp, [rand(*xs), rand(*ws), rand(ws[0])], attrs, **TOL)
    _, op = build_op(ConvOp, [rand(*xs), rand(*ws)], attrs)
    assert op.results[0].type.origin_format == (Format.NCDHW if len(xs) == 5 else Format.ND)


CONV_T_CASES = [
    ((1, 4, 4, 4), (4, 3, 3, 3), {}),
    ((1, 4, 4, 4), (4, 3, 3, 3), {"strides": [2, 3]}),
    (
        (1, 4, 4, 4),
        (4, 3, 3, 3),
        {"strides": [2, 2], "pads": [1, 0, 0, 1], "output_padding": [1, 0]},
    ),
    ((2, 4, 3, 5), (4, 3, 3, 2), {"group": 2, "dilations": [2, 1], "strides": [2, 2]}),
    ((1, 4, 4, 4), (4, 3, 3, 3), {"output_shape": [10, 9], "strides": [2, 2]}),
    ((1, 4, 4, 4), (4, 3, 3, 3), {"output_shape": [7, 8], "strides": [2, 2]}),
    (
        (1, 4, 4, 4),
        (4, 3, 3, 3),
        {"output_shape": [9, 10], "strides": [2, 2], "auto_pad": "SAME_UPPER"},
    ),
    ((1, 4, 4, 4), (4, 3, 3, 3), {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    ((1, 4, 4, 4), (4, 3, 3, 3), {"auto_pad": "SAME_LOWER", "strides": [2, 3]}),
    ((1, 4, 4, 4), (4, 3, 1, 1), {"auto_pad": "SAME_LOWER", "strides": [3, 3]}),
    ((1, 4, 4, 4), (4, 3, 3, 3), {"auto_pad": "VALID", "strides": [2, 2]}),
    ((1, 2, 7), (2, 3, 4), {"strides": [3], "pads": [1, 2]}),
    ((1, 4, 3, 4, 2), (4, 1, 2, 3, 2), {"group": 2, "strides": [2, 1, 2]}),
]


@pytest.mark.parametrize("xs, ws, attrs", CONV_T_CASES)
def test_conv_transpose(xs, ws, attrs):
    m = ws[1] * attrs.get("group", 1)
    check_op(ConvTransposeOp, [rand(*xs), rand(*ws), rand(m)], attrs, **TOL)


def test_conv_transpose_without_bias():
    check_op(
        ConvTransposeOp,
        [rand(1, 8, 5, 5), rand(8, 4, 4, 4), None],
        {"strides": [2, 2], "pads": [1, 1, 1, 1]},
        **TOL,
    )


# ---- normalisation, LRN -----------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (4, 3), (2, 3, 7), (1, 3, 2, 3, 4)])
def test_batch_norm(shape):
    c = shape[1]
    ops = [rand(*shape), rand(c), rand(c), rand(c), positive(c)]
    check_op(BatchNormOp, ops, {"epsilon": 1e-3}, **TOL)
    check_op(BatchNormOp, ops, {}, **TOL)


def test_batch_norm_float16_and_format():
    ops = [rand(2, 3, 4, 5, dtype=np.float16)] + [positive(3).astype(np.float16)] * 4
    check_op(BatchNormOp, ops, {}, rtol=1e-2, atol=1e-2)
    assert infer(BatchNormOp, f32(2, 3, 4, 5), *[f32(3)] * 4).origin_format == Format.NCHW
    assert infer(BatchNormOp, f32(2, 3), *[f32(3)] * 4).origin_format == Format.ND


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3, 7), (1, 2, 3, 2, 2)])
def test_instance_norm(shape):
    check_op(InstanceNormOp, [rand(*shape), rand(shape[1]), rand(shape[1])], {}, **TOL)
    check_op(
        InstanceNormOp, [rand(*shape), rand(shape[1]), rand(shape[1])], {"epsilon": 0.01}, **TOL
    )


@pytest.mark.parametrize("size", [1, 3, 5, 9])
def test_lrn(size):
    attrs = {"size": size, "alpha": 0.1, "beta": 0.6, "bias": 2.0}
    check_op(LrnOp, [rand(2, 7, 3, 3)], attrs, **TOL)
    check_op(LrnOp, [rand(2, 5, 4, 4)], {"size": size}, **TOL)


@pytest.mark.parametrize("size", [2, 4])
def test_lrn_even_size_follows_the_spec(size):
    """onnxruntime rejects even sizes; check the spec's window by brute force."""
    x = rand(2, 6, 3)
    _, op = build_op(LrnOp, [x], {"size": size})
    (y,) = op.reference(x)
    want = np.empty_like(x)
    for c in range(6):
        lo, hi = max(0, c - (size - 1) // 2), min(5, c + size // 2)
        sq = np.square(x[:, lo : hi + 1]).sum(axis=1)
        want[:, c] = x[:, c] / (1.0 + 0.0001 / size * sq) ** 0.75
    np.testing.assert_allclose(y, want, rtol=1e-5)


# ---- pooling ----------------------------------------------------------------------------------

POOL_CASES = [
    ((1, 2, 7, 8), {"kernel_shape": [3, 3]}),
    ((2, 3, 9, 9), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 2, 6, 7), {"kernel_shape": [3, 2], "strides": [2, 1], "pads": [0, 1, 1, 0]}),
    ((1, 2, 6, 7), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    (
        (1, 2, 6, 6),
        {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1},
    ),
    (
        (1, 2, 7, 7),
        {"kernel_shape": [2, 2], "strides": [4, 3], "pads": [1, 0, 0, 1], "ceil_mode": 1},
    ),
    ((1, 2, 7, 8), {"kernel_shape": [3, 2], "strides": [2, 3], "auto_pad": "SAME_UPPER"}),
    ((1, 2, 7, 8), {"kernel_shape": [3, 2], "strides": [2, 3], "auto_pad": "SAME_LOWER"}),
    ((1, 2, 7, 8), {"kernel_shape": [3, 2], "strides": [2, 3], "auto_pad": "VALID"}),
    ((1, 2, 9), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
    (
        (1, 2, 5, 6, 7),
        {"kernel_shape": [3, 2, 2], "strides": [2, 1, 2], "pads": [1, 0, 1, 1, 1, 0]},
    ),
]


@pytest.mark.parametrize("shape, attrs", POOL_CASES)
def test_max_pool(shape, attrs):
    check_op(MaxPoolOp, [rand(*shape)], attrs)


@pytest.mark.parametrize("shape, attrs", POOL_CASES)
@pytest.mark.parametrize("count_include_pad", [0, 1])
def test_avg_pool(shape, attrs, count_include_pad):
    check_op(AvgPoolOp, [rand(*shape)], {**attrs, "count_include_pad": count_include_pad}, **TOL)


@pytest.mark.parametrize("ceil_mode", [0, 1])
def test_pool_dilations(ceil_mode):
    attrs = {
        "kernel_shape": [3, 2],
        "strides": [2, 1],
        "dilations": [2, 2],
        "pads": [1, 1, 2, 0],
        "ceil_mode": ceil_mode,
    }
    x = rand(1, 2, 9, 8)
    check_op(MaxPoolOp, [x], attrs)
    check_op(AvgPoolOp, [x], {**attrs, "count_include_pad": 1}, opset=19, **TOL)


def test_pool_dtypes():
    x8 = RNG.integers(-100, 100, (1, 2, 6, 6)).astype(np.int8)
    (y,) = check_op(MaxPoolOp, [x8], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]})
    assert y.dtype == np.int8
    x16 = rand(1, 2, 6, 6, dtype=np.float16)
    check_op(MaxPoolOp, [x16], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]})
    check_op(AvgPoolOp, [x16], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 4, 5), (1, 2, 3, 4, 2)])
def test_global_pools(shape):
    check_op(GlobalAvgPoolOp, [rand(*shape)], **TOL)
    check_op(GlobalMaxPoolOp, [rand(*shape)])


# ---- softmax ----------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [None, -1, 0, 1, 2])
@pytest.mark.parametrize("cls", [SoftmaxOp, LogSoftmaxOp])
def test_softmax(cls, axis):
    x = rand(2, 3, 4) * 30  # large logits: the max shift must keep exp finite
    check_op(cls, [x], {} if axis is None else {"axis": axis}, rtol=1e-5, atol=1e-5)


def test_softmax_float16_and_1d():
    check_op(SoftmaxOp, [rand(3, 5, dtype=np.float16)], {}, rtol=1e-3, atol=1e-3)
    check_op(LogSoftmaxOp, [rand(7)], {}, rtol=1e-5, atol=1e-5)


# ---- shape-function errors --------------------------------------------------------------------

ERROR_CASES = [
    (Conv2dOp, [f32(1, 3, 8), f32(4, 3, 3)], {}, "needs a rank 4 input, got rank 3"),
    (ConvOp, [f32(1, 3, 8, 8), f32(4, 3, 3, 3)], {}, "needs a rank 3 or 5 input"),
    (Conv2dOp, [f32(1, 3, 8, 8), f32(4, 3, 3)], {}, "weight has rank 3, the input has rank 4"),
    (Conv2dOp, [f32(1, 3, 8, 8), f32(4, 2, 3, 3)], {}, "weight expects 2 channels per group"),
    (
        Conv2dOp,
        [f32(1, 4, 8, 8), f32(6, 2, 3, 3)],
        {"group": 3},
        "input channels 4 are not divisible by group 3",
    ),
    (
        Conv2dOp,
        [f32(1, 4, 8, 8), f32(5, 2, 3, 3)],
        {"group": 2},
        "output channels 5 are not divisible by group 2",
    ),
    (Conv2dOp, [f32(1, 4, 8, 8), f32(4, 4, 3, 3)], {"group": 0}, "group must be >= 1"),
    (Conv2dOp, [f32(1, 3, 8, 8), f32(4, 3, 3, 3), f32(5)], {}, r"bias must have shape \[4\]"),
    (
        Conv2dOp,
        [f32(1, 3, 8, 8), f32(4, 3, 3, 3)],
        {"pads": [1, 1]},
        "pads has 2 values, expected 4",
    ),
    (Conv2dOp, [f32(1, 3, 8, 8), f32(4, 3, 3, 3)], {"pads": [1, 1, -1, 1]}, "pads must be >= 0"),
    (Conv2dOp, [f32(1, 3, 8, 8), f32(4, 3, 3, 3)], {"strides": [0, 1]}, "strides must be >= 1"),
    (Conv2dOp, [f32(1, 3, 8, 8), f32(4, 3, 3, 3)], {"dilations": [1]}, "dilations has 1 values"),
    (
        Conv2dOp,
        [f32(1, 3, 8, 8), f32(4, 3, 3, 3)],
        {"kernel_shape": [3, 2]},
        "kernel_shape .* does not match",
    ),
    (Conv2dOp, [f32(1, 3, 8, 8), f32(4, 3, 3, 3)], {"auto_pad": "SAME"}, "auto_pad must be one of"),
    (
        Conv2dOp,
        [f32(1, 3, 8, 8), f32(4, 3, 3, 3)],
        {"auto_pad": "VALID", "pads": [1, 1, 1, 1]},
        "cannot be used with auto_pad",
    ),
    (Conv2dOp, [f32(1, 3, 2, 8), f32(4, 3, 3, 3)], {}, "window of size 3 does not fit"),
    (
        Conv2dOp,
        [f32(1, 3, 8, 8), TensorType([4, 3, 3, 3], element_type_of(np.float16))],
        {},
        "one element type",
    ),
    (
        ConvTransposeOp,
        [f32(1, 4, 5, 5), f32(3, 2, 3, 3)],
        {},
        "weight has 3 input channels, the input has 4",
    ),
    (
        ConvTransposeOp,
        [f32(1, 4, 5, 5), f32(4, 2, 3, 3), f32(2)],
        {"group": 2},
        r"bias must have shape \[4\]",
    ),
    (
        ConvTransposeOp,
        [f32(1, 4, 5, 5), f32(4, 2, 3, 3)],
        {"output_padding": [2, 0], "strides": [2, 2]},
        "output_padding 2 must be smaller",
    ),
    (
        ConvTransposeOp,
        [f32(1, 4, 5, 5), f32(4, 2, 3, 3)],
        {"output_shape": [1, 2, 9, 9]},
        "output_shape must have 2",
    ),
    (
        ConvTransposeOp,
        [f32(1, 4, 5, 5), f32(4, 2, 3, 3)],
        {"output_shape": [12, 7]},
        "output_shape 12 is too large",
    ),
    (
        ConvTransposeOp,
        [f32(1, 4, 2, 2), f32(4, 2, 3, 3)],
        {"pads": [2, 2, 2, 2]},
        "output size 0 of spatial axis 0",
    ),
    (
        BatchNormOp,
        [f32(2, 3, 4, 4), f32(3), f32(4), f32(3), f32(3)],
        {},
        r"B must have shape \[3\]",
    ),
    (BatchNormOp, [f32(3), f32(3), f32(3), f32(3), f32(3)], {}, "rank >= 2"),
    (BatchNormOp, [f32(2, 3), *[f32(3)] * 4], {"training_mode": 1}, "training_mode = 1"),
    (InstanceNormOp, [f32(2, 3), f32(3), f32(3)], {}, "rank >= 3"),
    (InstanceNormOp, [f32(2, 3, 4), f32(3, 1), f32(3)], {}, r"scale must have shape \[3\]"),
    (LrnOp, [f32(1, 3, 4, 4)], {}, "positive 'size'"),
    (MaxPoolOp, [f32(1, 3, 4, 4)], {}, "kernel_shape is required"),
    (MaxPoolOp, [f32(3, 4)], {"kernel_shape": [2]}, "rank >= 3"),
    (MaxPoolOp, [f32(1, 3, 4, 4)], {"kernel_shape": [2]}, "kernel_shape has 1 values, expected 2"),
    (
        MaxPoolOp,
        [f32(1, 3, 4, 4)],
        {"kernel_shape": [2, 2], "pads": [2, 0, 0, 0]},
        "must be smaller than kernel_shape",
    ),
    (AvgPoolOp, [f32(1, 3, 4, 4)], {"kernel_shape": [5, 2]}, "window of size 5 does not fit"),
    (GlobalAvgPoolOp, [f32(3, 4)], {}, "rank >= 3"),
    (SoftmaxOp, [f32(3, 4)], {"axis": 2}, "axis 2 is out of range for rank 2"),
    (LogSoftmaxOp, [f32(3, 4)], {"axis": -3}, "axis -3 is out of range"),
]


@pytest.mark.parametrize("cls, types, attrs, message", ERROR_CASES)
def test_shape_errors(cls, types, attrs, message):
    with pytest.raises(ShapeError, match=message):
        infer(cls, *types, **attrs)


def test_verifier_reports_wrong_result_shape():
    block = Block(arg_types=[f32(1, 3, 8, 8), f32(4, 3, 3, 3)])
    wrong = f32(1, 4, 6, 6, fmt=Format.NCHW)
    op = Conv2dOp.make(*block.args, result_types=[wrong], pads=[1, 1, 1, 1])
    block.add_ops([op, func.ReturnOp(op.results[0])])
    fn = func.FuncOp("f", ([f32(1, 3, 8, 8), f32(4, 3, 3, 3)], [wrong]), Region(block))
    module = ModuleOp([fn])
    with pytest.raises(
        VerifyException, match=r"result #0 has shape \[1, 4, 6, 6\], expected \[1, 4, 8, 8\]"
    ):
        module.verify()


# ---- unknown and symbolic dims ----------------------------------------------------------------


def test_unknown_and_symbolic_dims():
    s0, s1 = shape_symbol("s0"), shape_symbol("s1")
    t = infer(Conv2dOp, f32(s0, 3, s1, 8), f32(4, 3, 3, 3), pads=[1, 1, 1, 1])
    assert t.origin_shape == (s0, 4, s1, 8)  # stride 1: H + 2 - 3 + 1 = H
    t = infer(Conv2dOp, f32(s0, 3, s1, 8), f32(4, 3, 3, 3), strides=[2, 2])
    assert t.origin_shape == (s0, 4, sympy.floor((s1 - 3) / 2) + 1, 3)
    t = infer(Conv2dOp, f32(1, UNKNOWN, 8, 8), f32(4, 3, UNKNOWN, 3))
    assert t.origin_shape == (1, 4, UNKNOWN, 6)
    t = infer(MaxPoolOp, f32(1, 3, s0, UNKNOWN), kernel_shape=[3, 3], auto_pad="SAME_UPPER")
    assert t.origin_shape == (1, 3, s0, UNKNOWN)
    t = infer(ConvTransposeOp, f32(1, 4, s0, 5), f32(4, 2, 3, 3), strides=[2, 2])
    assert t.origin_shape == (1, 2, 2 * s0 + 1, 11)
    t = infer(
        ConvTransposeOp, f32(1, 4, s0, 5), f32(4, 2, 3, 3), strides=[2, 2], output_shape=[7, 9]
    )
    assert t.origin_shape == (1, 2, 7, 9)
    assert infer(GlobalAvgPoolOp, f32(s0, 3, s1, 5)).origin_shape == (s0, 3, 1, 1)
    bn = infer(BatchNormOp, f32(s0, UNKNOWN, 4, 4), *[f32(8)] * 4)
    assert bn.origin_shape == (s0, UNKNOWN, 4, 4)


# ---- facts and cost ---------------------------------------------------------------------------


def test_conv2d_facts():
    facts = Conv2dOp.FACTS
    assert facts.role == FormatRole.SENSITIVE and facts.data_format == Format.NCHW
    assert facts.heavy and facts.fusion == FusionKind.OUT_ELEMWISE_FUSABLE
    assert facts.reshape_types == {2: "C"}
    F = Format
    assert facts.kernels == (
        KernelVariant((F.NC1HWC0, F.FRACTAL_Z, F.NC1HWC0), (F.NC1HWC0,), "cube"),
        KernelVariant((F.NCHW, F.NCHW, F.ND), (F.NCHW,), "plain"),
        # offered only in small-channel mode, instead of cube (tests/lowering/test_small_channel.py)
        KernelVariant(
            (F.NC1HWC0_C04, F.FRACTAL_Z_C04, F.NC1HWC0),
            (F.NC1HWC0,),
            "cube_c04",
            small_channel_of="cube",
        ),
    )
    cube3d = ConvOp.FACTS.kernels[0]
    assert ConvOp.FACTS.data_format == Format.NCDHW
    assert cube3d.operands == (F.NDC1HWC0, F.FRACTAL_Z_3D, F.NDC1HWC0)


def test_conv_ops_split_onnx_conv_by_rank():
    assert Conv2dOp.accepts_onnx([4, 4, 1]) and not ConvOp.accepts_onnx([4, 4])
    assert ConvOp.accepts_onnx([3, 3]) and ConvOp.accepts_onnx([5, 5, None])
    assert not Conv2dOp.accepts_onnx([5, 5])
    assert ConvOp.accepts_onnx([None, 3]) and Conv2dOp.accepts_onnx([None, None])
    assert not ConvOp.accepts_onnx([None, None])


def test_other_facts():
    bn = BatchNormOp.FACTS
    assert bn.role == FormatRole.SENSITIVE and bn.fusion == FusionKind.BROADCAST
    assert bn.reshape_types == {1: "C", 2: "C", 3: "C", 4: "C"}
    assert bn.kernels[0].operands == (Format.NC1HWC0,) * 5
    for cls in (MaxPoolOp, AvgPoolOp, GlobalAvgPoolOp, GlobalMaxPoolOp):
        assert cls.FACTS.data_format == Format.NCHW
        assert KernelVariant((Format.NC1HWC0,), (Format.NC1HWC0,), "5hd") in cls.FACTS.kernels
    for cls in (SoftmaxOp, LogSoftmaxOp):
        assert cls.FACTS.role == FormatRole.ND_ONLY and cls.FACTS.kernels == ()
    assert ConvTransposeOp.FACTS.heavy and not BatchNormOp.FACTS.heavy
    assert {cls.name for cls in NN_OPS} >= {"graph.conv2d", "graph.lrn", "graph.log_softmax"}
    assert all(isinstance(cls.FACTS.fusion, FusionKind) for cls in NN_OPS)


def test_conv_cost():
    # out [1, 4, 8, 8] = 256 elements, each 3 channels x 3 x 3 taps: 2 * 256 * 27 flops
    _, op = build_op(Conv2dOp, [rand(1, 3, 8, 8), rand(4, 3, 3, 3), rand(4)], {"pads": [1] * 4})
    cost = op.cost()
    assert cost.flops == 13824
    assert cost.bytes == (192 + 108 + 4 + 256) * 4
    # grouped: out [1, 6, 4, 4] = 96 elements x (4 / 2 channels) x 3 x 3 taps
    _, op = build_op(Conv2dOp, [rand(1, 4, 6, 6), rand(6, 2, 3, 3)], {"group": 2})
    assert op.cost().flops == 2 * 96 * 2 * 9
    # transposed: input [1, 4, 3, 3] = 36 elements, each scattered to 2 channels x 3 x 3 taps
    _, op = build_op(ConvTransposeOp, [rand(1, 4, 3, 3), rand(4, 2, 3, 3)], {})
    assert op.cost().flops == 2 * 36 * 2 * 9
