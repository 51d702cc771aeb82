"""What ``fold-qdq`` does with quantised *activations* beyond the data operand of a cube op
with a constant weight: int8 data movement, and matmuls of two activations.

**Data movement in int8** (:func:`move_int8`). onnxruntime's QDQ quantiser wraps every
Reshape / Transpose / Squeeze / Unsqueeze / Flatten of a quantised tensor in
``DequantizeLinear -> move -> QuantizeLinear`` with one scale and zero point (an
attention block's head split and merge). With the same per-tensor int8 quantisation on
both sides this is ``move(q)`` exactly: a move only rearranges elements, and
``Q(DQ(q)) = round(((q - z)·s)/s) + z = q`` (the quotient of float32 roundings of an
integer of at most 8 bits times ``s`` is within far less than 0.5 of it), so the
QuantizeLinear's result becomes the move of the int8 tensor: a quarter of the bytes moved,
and the int8 value reaches the next cube op without a float round trip.

**Matmuls of two activations** (:func:`fold_activation_matmul`): ``MatMul(DQ(a_q, sa),
DQ(b_q, sb))`` with both operands int8 activations quantised per tensor (attention's
Q·Kᵀ and P·V when MatMul is among the quantised op types) becomes
``graph.quant_matmul(a_q, transpose(b_q), 0, sa·sb)``: the right operand is held as rows
of K by an int8 ``graph.transpose`` of its last two dims (which composes with the
transpose that usually made it), the scale ``sa·sb`` (float32, rounded once) is repeated
per column. Zero points: ``Σ (a - za)(b - zb) = Σ ab - za·Σ_k b - zb·Σ_k a + K·za·zb``;
with activations on both sides the middle terms are run-time column / row sums, which the
int32 bias (a constant) cannot carry, so only zero points 0 fold (symmetric activations,
onnxruntime's ``ActivationSymmetric``); any other keeps the float matmul (its Q/DQ as
vector programs). The result is ``Σ a_q·b_q · (sa·sb)`` rounded once, as onnxruntime's
QLinearMatMul / the QDQ pattern's integer execution computes it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.graph.base import ShapeError, to_attribute
from tilegraph.dialects.graph.constant_ops import ConstantOp
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.quantize import DequantizeLinearOp, QuantizeLinearOp
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
from tilegraph.passes.simplify.match import constant_array

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


def _int8_dequantize(value: SSAValue) -> tuple[SSAValue, Int8Quantization] | None:
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


def move_int8(q: QuantizeLinearOp) -> bool:
    """Rewrite ``Q(move(DQ(x_q)))`` with one per-tensor int8 quantisation on both sides to
    ``move(x_q)`` (an int8 move inserted before ``q``, ``q``'s uses moved to it). True when
    rewritten."""
    move = q.x.owner
    out = q.y.type
    if not isinstance(move, MOVES) or not isinstance(out, TensorType) or out.dtype != DType.int8:
        return False
    if any(int(q.attr(name)) for name in ("output_dtype", "block_size", "precision")):
        return False
    source = _int8_dequantize(move.operands[0])
    if source is None or int8_quantization(q.y_scale, q.y_zero_point) != source[1]:
        return False
    operands = [source[0], *move.operands[1:]]
    properties = dict(move.properties)
    try:
        (result,) = type(move).infer_shapes(operands, properties)
    except ShapeError:
        return False
    if result.origin_shape != out.origin_shape:
        return False
    moved = type(move).create(operands=operands, result_types=[result], properties=properties)
    moved.results[0].name_hint = q.y.name_hint
    Rewriter.insert_op(moved, InsertPoint.before(q))
    q.y.replace_all_uses_with(moved.results[0])
    return True


def fold_activation_matmul(op: MatMulOp) -> Operation | None:
    """The ``graph.quant_matmul`` of ``op`` when both operands are per-tensor int8
    activations with zero point 0 (its constants and the int8 transpose of the right
    operand inserted before ``op``), else None."""
    a = _int8_dequantize(op.lhs)
    b = _int8_dequantize(op.rhs)
    out = op.results[0].type
    if a is None or b is None or not isinstance(out, TensorType):
        return None
    (a_q, qa), (b_q, qb) = a, b
    a_type, b_type = a_q.type, b_q.type
    assert isinstance(a_type, TensorType) and isinstance(b_type, TensorType)
    if qa.zero or qb.zero or a_type.rank < 2 or b_type.rank < 2 or out.dtype != DType.float32:
        return None
    n = b_type.origin_shape[-1]
    if not isinstance(n, int):
        return None
    perm = [*range(b_type.rank - 2), b_type.rank - 1, b_type.rank - 2]
    properties = {"perm": to_attribute(perm)}
    (rows_type,) = TransposeOp.infer_shapes([b_q], properties)
    rows = TransposeOp.create(operands=[b_q], result_types=[rows_type], properties=properties)
    scale = np.float32(qa.scale * qb.scale)
    bias = ConstantOp(np.zeros(n, np.int32))
    scales = ConstantOp(np.full(n, scale, np.float32))
    operands = [a_q, rows.results[0], bias.output, scales.output]
    try:
        (want,) = QuantMatMulOp.infer_shapes(operands, {})
    except ShapeError:
        return None
    if want != out:
        return None
    Rewriter.insert_op([rows, bias, scales], InsertPoint.before(op))
    return QuantMatMulOp.create(operands=operands, result_types=[out])
