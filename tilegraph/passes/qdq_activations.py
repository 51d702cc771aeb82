"""What ``fold-qdq`` does with quantised *activations* beyond the data operand of a cube op
with a constant weight: matmuls of two activations (and the per-tensor quantisation
facts the int8 data movement of :mod:`~tilegraph.passes.qdq_moves` shares).

**Data movement in int8**: :mod:`~tilegraph.passes.qdq_moves` moves a QuantizeLinear
before the Reshape / Transpose / ... (:data:`MOVES`) it follows, with this module's
:func:`int8_dequantize` / :func:`int8_quantization` to drop a ``Q(DQ(q))`` of one
quantisation.

**Matmuls of two activations** (:func:`fold_activation_matmul`): ``MatMul(DQ(a_q, sa, za),
DQ(b_q, sb, zb))`` with both operands int8 activations quantised per tensor (attention's
Q·Kᵀ and P·V when MatMul is among the quantised op types) becomes one
``graph.quant_matmul`` on the int8 cube: the right operand is held as rows of K by an int8
``graph.transpose`` of its last two dims (which composes with the transpose that usually
made it), the scale ``sa·sb`` (float32, rounded once). Without zero points it is the
fixpipe-dequantised ``quant_matmul(a, bᵀ, 0, sa·sb)``. With zero points:
``Σ (a - za)(b - zb) = (Σ ab + K·za·zb) - zb·Σ_k a - za·Σ_k b``. The cube writes the
bracket as its raw int32 sum (``quant_matmul`` without a scale, the constant as its bias,
K as it is); the row sums ``zb·Σ_k a`` and the column sums ``za·Σ_k b`` are one-column /
one-row int8 products against a constant ``[1, K]`` row of the zero point (small cube
kernels, int32 out); ``graph.sub`` takes them off in int32, then ``Cast`` to float32 and
``Mul`` by ``sa·sb`` dequantise. ``fuse-ops`` makes that chain the product's epilogue (a
mix kernel on 910B: fixpipe writes int32 to the workspace, the AIV part subtracts,
converts and scales). Every int32 step is exact while the true sum fits int32
(``K·255² < 2³¹``), for any K: the result is ``float32(Σ (a - za)(b - zb)) · (sa·sb)``, as
onnxruntime's integer execution of the pattern computes it (one rounding while the sum is
below 2^24, where float32 holds every integer).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.graph.base import ShapeError
from tilegraph.dialects.graph.binary import MulOp, SubOp
from tilegraph.dialects.graph.elementwise import CastOp, onnx_dtype_code
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.quantize import DequantizeLinearOp
from tilegraph.dialects.graph.quantized_cube import QuantMatMulOp
from tilegraph.dialects.graph.shape_ops import (
    FlattenOp,
    ReshapeOp,
    SqueezeOp,
    TransposeOp,
    UnsqueezeOp,
)
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType
from tilegraph.passes.simplify.match import OpSequence, constant_array

MOVES = (ReshapeOp, TransposeOp, SqueezeOp, UnsqueezeOp, FlattenOp)
"""The ops that only rearrange elements (an int8 tensor moves as well as a float one)."""


@dataclass(frozen=True)
class Int8Quantization:
    """A per-tensor int8 quantisation: its float32 scale and zero point."""

    scale: np.float32
    zero: int


def int8_quantization(scale: SSAValue, zero: SSAValue | None) -> Int8Quantization | None:
    """A constant float32 scalar scale and int8 scalar zero point (0 when absent)."""
    s = constant_array(scale)
    z = np.zeros(1, np.int8) if zero is None else constant_array(zero)
    if s is None or z is None or s.size != 1 or z.size != 1:
        return None
    if s.dtype != np.float32 or z.dtype != np.int8:
        return None
    return Int8Quantization(np.float32(s.reshape(())), int(z.reshape(())))


def int8_dequantize(value: SSAValue) -> tuple[SSAValue, Int8Quantization] | None:
    """``value`` as a per-tensor DequantizeLinear of an int8 activation: (q, (s, z))."""
    dq = value.owner
    if not isinstance(dq, DequantizeLinearOp):
        return None
    if int(dq.attr("block_size")) or int(dq.attr("output_dtype")):
        return None
    q = dq.x.type
    if not isinstance(q, TensorType) or q.dtype != DType.int8 or constant_array(dq.x) is not None:
        return None
    params = int8_quantization(dq.x_scale, dq.x_zero_point)
    return None if params is None else (dq.x, params)


def _zero_point_sums(built: OpSequence, value: SSAValue, zero: int, per_row: bool) -> SSAValue:
    """``zero · Σ_k`` of an int8 operand as a raw int32 ``quant_matmul`` against a constant
    ``[1, K]`` row of the int8 ``zero`` (every int8 zero point fits it): per row of the
    data ``value`` ``[..., M, K]`` (``[..., M, 1]``), or per column and batch of the rows
    ``value`` ``[..., N, K]`` (``[..., 1, N]``: one per head in a batched attention). A
    one-column / one-row product on the cube sums the int8 values exactly in int32, with
    no int8 -> int32 widening on the vector unit."""
    t = value.type
    assert isinstance(t, TensorType)
    n, k = (int(d) for d in t.origin_shape[-2:])  # static (fold_activation_matmul)
    row = built.const(np.full((1, k), zero, np.int8))
    if per_row:
        return built.op(QuantMatMulOp, value, row, built.const(np.zeros(1, np.int32)))
    return built.op(QuantMatMulOp, row, value, built.const(np.zeros(n, np.int32)))


def fold_activation_matmul(op: MatMulOp) -> Operation | None:
    """What replaces ``op`` when both operands are per-tensor int8 activations of static
    shapes, else None; the ops it needs (the int8 transpose of the right operand, and with
    zero points the int32 epilogue) are inserted before ``op``.

    Without zero points: ``graph.quant_matmul(a, bᵀ, 0, sa·sb)`` (fixpipe dequantises).
    With zero points ``za``, ``zb``: the raw int32 ``quant_matmul(a, bᵀ, K·za·zb)`` (no
    scale), minus ``zb·Σ_k a`` (per row, ``[..., M, 1]``) and ``za·Σ_k b`` (per column and
    batch, e.g. per head, ``[..., 1, N]``) from :func:`_zero_point_sums`, in int32; then
    the total cast to float32 and multiplied by ``sa·sb`` (the dequantisation). A zero
    point 0 drops its term. K and N must be static; K with ``K·255² >= 2³¹`` is refused
    (the true sum could leave int32)."""
    a = int8_dequantize(op.lhs)
    b = int8_dequantize(op.rhs)
    out = op.results[0].type
    if a is None or b is None or not isinstance(out, TensorType):
        return None
    (a_q, qa), (b_q, qb) = a, b
    a_type, b_type = a_q.type, b_q.type
    assert isinstance(a_type, TensorType) and isinstance(b_type, TensorType)
    if a_type.rank < 2 or b_type.rank < 2 or out.dtype != DType.float32:
        return None
    n, k = b_type.origin_shape[-1], b_type.origin_shape[-2]
    # static K and N: the zero-point rows are [1, K] constants, the bias [N]; M and the
    # batch may be symbols
    if not (isinstance(n, int) and n >= 0 and isinstance(k, int) and k >= 0):
        return None
    if k * 255 * 255 >= 2**31:
        return None  # the true sum may leave int32
    built = OpSequence()
    perm = [*range(b_type.rank - 2), b_type.rank - 1, b_type.rank - 2]
    scale = np.float32(qa.scale * qb.scale)
    try:
        rows = built.op(TransposeOp, b_q, perm=perm)
        bias = built.const(np.full(n, k * qa.zero * qb.zero, np.int32))
        if not qa.zero and not qb.zero:
            result = built.op(QuantMatMulOp, a_q, rows, bias, built.const(np.full(n, scale)))
        else:
            total = built.op(QuantMatMulOp, a_q, rows, bias)
            if qb.zero:  # -zb·Σ_k a: one per row
                total = built.op(SubOp, total, _zero_point_sums(built, a_q, qb.zero, True))
            if qa.zero:  # -za·Σ_k b: one per column (and batch)
                total = built.op(SubOp, total, _zero_point_sums(built, rows, qa.zero, False))
            wide = built.op(CastOp, total, to=onnx_dtype_code("float32"))
            result = built.op(MulOp, wide, built.const(np.array(scale, np.float32)))
    except ShapeError:
        return None
    if result.type != out:
        return None
    Rewriter.insert_op(built.ops[:-1], InsertPoint.before(op))
    return built.ops[-1]
