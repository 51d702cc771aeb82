"""graph.matmul and graph.gemm (tilegraph/dialects/graph/linalg.py) against onnxruntime,
plus shape errors, unknown/symbolic dims, facts and cost."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.ir import Block

from tests.dialects.op_harness import build_op, check_op
from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph import FormatRole, FusionKind, GraphOp, KernelVariant, ShapeError
from tilegraph.dialects.graph.linalg import LINALG_OPS, GemmOp, MatMulOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.formats.dims import UNKNOWN, shape_symbol

RNG = np.random.default_rng(1)
TOL = {"rtol": 1e-4, "atol": 1e-5}


def rand(*shape: int, dtype=np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def f32(*shape) -> TensorType:
    return TensorType(list(shape), element_type_of(np.float32))


def infer(cls: type[GraphOp], *types: TensorType | None, **attrs) -> TensorType:
    block = Block(arg_types=[t for t in types if t is not None])
    args = iter(block.args)
    t = cls.make(*(None if t is None else next(args) for t in types), **attrs).results[0].type
    assert isinstance(t, TensorType)
    return t


@pytest.mark.parametrize(
    "a, b",
    [
        ((3, 4), (4, 5)),
        ((4,), (4, 5)),  # 1-D lhs: a row vector, its dim dropped
        ((3, 4), (4,)),  # 1-D rhs: a column vector, its dim dropped
        ((4,), (4,)),  # dot product: a scalar
        ((2, 3, 4), (4, 5)),
        ((2, 1, 3, 4), (5, 4, 6)),  # batch dims broadcast [2, 1] x [5] -> [2, 5]
        ((2, 3, 4), (4,)),
        ((4,), (2, 4, 3)),
        ((1, 16, 64), (3, 64, 32)),
    ],
)
def test_matmul(a, b):
    check_op(MatMulOp, [rand(*a), rand(*b)], **TOL)


def test_matmul_dtypes():
    (y,) = check_op(
        MatMulOp,
        [rand(8, 16, dtype=np.float16), rand(16, 4, dtype=np.float16)],
        rtol=1e-2,
        atol=2e-2,
    )
    assert y.dtype == np.float16
    ints = [RNG.integers(-5, 5, s).astype(np.int32) for s in ((3, 4), (4, 2))]
    check_op(MatMulOp, ints)


@pytest.mark.parametrize("trans_a", [0, 1])
@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("c_shape", [None, (), (5,), (1, 5), (3, 1), (3, 5)])
def test_gemm(trans_a, trans_b, c_shape):
    a = rand(4, 3) if trans_a else rand(3, 4)
    b = rand(5, 4) if trans_b else rand(4, 5)
    c = None if c_shape is None else rand(*c_shape)
    attrs = {"transA": trans_a, "transB": trans_b, "alpha": 0.5, "beta": 2.0}
    check_op(GemmOp, [a, b, c], attrs, **TOL)


def test_gemm_defaults_and_float16():
    check_op(GemmOp, [rand(2, 3), rand(3, 4), rand(4)], {}, **TOL)
    ops = [rand(2, 3, dtype=np.float16), rand(3, 4, dtype=np.float16), rand(4, dtype=np.float16)]
    check_op(GemmOp, ops, {"alpha": 2.0}, rtol=1e-2, atol=2e-2)


ERRORS = [
    (MatMulOp, [f32(3, 4), f32(5, 6)], {}, r"lhs \[3, 4\] has K = 4, rhs \[5, 6\] has K = 5"),
    (MatMulOp, [f32(4), f32(3)], {}, "contraction dims differ"),
    (MatMulOp, [f32(2, 3, 4), f32(3, 4, 5)], {}, "do not broadcast"),
    (MatMulOp, [f32(), f32(3)], {}, "rank >= 1"),
    (
        MatMulOp,
        [f32(3, 4), TensorType([4, 2], element_type_of(np.float16))],
        {},
        "one element type",
    ),
    (GemmOp, [f32(3, 4, 1), f32(4, 5)], {}, "gemm operand A must be 2-D"),
    (GemmOp, [f32(3, 4), f32(5)], {}, "gemm operand B must be 2-D"),
    (GemmOp, [f32(3, 4), f32(4, 5)], {"transA": 1}, "A' has K = 3, B' has K = 4"),
    (GemmOp, [f32(3, 4), f32(4, 5)], {"transB": 1}, "A' has K = 4, B' has K = 5"),
    (
        GemmOp,
        [f32(3, 4), f32(4, 5), f32(3)],
        {},
        r"C \[3\] does not broadcast to the result \[3, 5\]",
    ),
    (GemmOp, [f32(3, 4), f32(4, 5), f32(1, 3, 5)], {}, "does not broadcast"),
]


@pytest.mark.parametrize("cls, types, attrs, message", ERRORS)
def test_shape_errors(cls, types, attrs, message):
    with pytest.raises(ShapeError, match=message):
        infer(cls, *types, **attrs)


def test_unknown_and_symbolic_dims():
    s0 = shape_symbol("s0")
    assert infer(MatMulOp, f32(s0, 3, 4), f32(4, UNKNOWN)).origin_shape == (s0, 3, UNKNOWN)
    assert infer(MatMulOp, f32(2, UNKNOWN), f32(7, 5)).origin_shape == (2, 5)
    assert infer(MatMulOp, f32(UNKNOWN, 3, 4), f32(2, 4, 5)).origin_shape == (2, 3, 5)
    assert infer(GemmOp, f32(s0, UNKNOWN), f32(8, 5), f32(5)).origin_shape == (s0, 5)
    assert infer(GemmOp, f32(UNKNOWN, s0), f32(UNKNOWN, 5), transA=1).origin_shape == (s0, 5)


def test_facts():
    F = Format
    for cls in LINALG_OPS:
        facts = cls.FACTS
        assert facts.role == FormatRole.ND_ONLY and facts.heavy
        assert facts.fusion == FusionKind.OUT_ELEMWISE_FUSABLE
    assert MatMulOp.FACTS.kernels == (
        KernelVariant((F.FRACTAL_NZ, F.FRACTAL_NZ), (F.FRACTAL_NZ,), "cube"),
        KernelVariant((F.ND, F.ND), (F.ND,), "plain"),
    )
    assert GemmOp.FACTS.kernels == (
        KernelVariant((F.FRACTAL_NZ, F.FRACTAL_NZ, F.ND), (F.FRACTAL_NZ,), "cube"),
        KernelVariant((F.ND, F.ND, F.ND), (F.ND,), "plain"),
    )


def test_cost():
    # batch 2 x M 3 x N 5 x K 4 multiply-adds
    _, op = build_op(MatMulOp, [rand(2, 3, 4), rand(4, 5)])
    assert op.cost().flops == 2 * 2 * 3 * 5 * 4 == 240
    assert op.cost().bytes == (24 + 20 + 30) * 4
    _, op = build_op(MatMulOp, [rand(4), rand(4, 5)])  # M = 1
    assert op.cost().flops == 2 * 4 * 5
    _, op = build_op(GemmOp, [rand(4, 3), rand(5, 4), rand(5)], {"transA": 1, "transB": 1})
    assert op.cost().flops == 2 * 3 * 5 * 4
    assert op.cost().bytes == (12 + 20 + 5 + 15) * 4
