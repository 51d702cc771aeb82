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
made it), the scale ``sa·sb`` (float32, rounded once) is repeated per column. Zero points:
``Σ (a - za)(b - zb) = Σ ab - zb·Σ_k a - za·Σ_k b + K·za·zb``. The constant goes into the
int32 bias; the two run-time sums go into the cube's own int32 accumulation by lengthening
K with int8 concats (``graph.concat`` along the last dim): the data ``[a | a | -za]``
against the rows ``[b | -zb | b]``, each block K long, the constants ``-za`` / ``-zb``
broadcast int8 tensors. ``-(-128) = 128`` does not fit int8, so it is two blocks of 64
(:func:`int8_parts`); a zero point 0 adds no block (symmetric activations keep K). Every
term is an exact int8 product summed in int32 (``|Σ| <= 255²·K``), so the result is
``Σ (a - za)(b - zb) · (sa·sb)`` rounded once, as onnxruntime's QLinearMatMul / the QDQ
pattern's integer execution computes it, at the price of a cube K of 2K to 4K and two
vector concats (the run-time sums' alternative, int32 vector reductions and a per-row /
per-column bias, would need an int32 epilogue fixpipe does not have).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.graph.base import ShapeError, to_attribute
from tilegraph.dialects.graph.constant_ops import ConstantOp
from tilegraph.dialects.graph.data_movement import ConcatOp
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


def int8_parts(value: int) -> list[int]:
    """``value`` (-128 .. 128: a negated int8 zero point) as int8 parts that sum to it: none
    for 0, two of 64 for 128 (``-(-128)`` does not fit int8), else itself."""
    if value == 0:
        return []
    return [64, 64] if value == 128 else [value]


def _int8_concat(
    blocks: list[SSAValue | int], like: TensorType
) -> tuple[list[Operation], SSAValue]:
    """The int8 concat along the last dim of ``blocks``: a block is an int8 value shaped as
    ``like`` or an int constant (a ``like``-shaped int8 constant of it). Returns the ops
    (constants, concat) to insert and the result; one value block is returned as it is."""
    ops: list[Operation] = []
    constants: dict[int, SSAValue] = {}
    values: list[SSAValue] = []
    for block in blocks:
        if isinstance(block, int) and block not in constants:
            shape = [int(d) for d in like.origin_shape]
            const = ConstantOp(np.full(shape, block, np.int8))
            ops.append(const)
            constants[block] = const.output
        values.append(constants[block] if isinstance(block, int) else block)
    if len(values) == 1:
        return ops, values[0]
    properties = {"axis": to_attribute(like.rank - 1)}
    (joined,) = ConcatOp.infer_shapes(values, properties)
    concat = ConcatOp.create(operands=values, result_types=[joined], properties=properties)
    return [*ops, concat], concat.results[0]


def fold_activation_matmul(op: MatMulOp) -> Operation | None:
    """The ``graph.quant_matmul`` of ``op`` when both operands are per-tensor int8
    activations of static shapes (its constants, the int8 transpose of the right operand
    and, with zero points, the concats that lengthen K inserted before ``op``), else None.

    With zero points ``za``, ``zb`` the cube sums ``Σ (a - za)(b - zb)`` exactly as K
    blocks of int8 products in its int32 accumulator: ``a·b``, then ``a`` against rows of
    the constant ``-zb`` (``-zb·Σ_k a``) and columns of the constant ``-za`` against ``b``
    (``-za·Σ_k b``), each constant split by :func:`int8_parts`; ``K·za·zb`` is the bias."""
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
    # static shapes only: the zero-point blocks are constants of the operands' shapes (an
    # unknown dim reads as -1)
    if not all(isinstance(d, int) and d >= 0 for d in (*a_type.origin_shape, *b_type.origin_shape)):
        return None
    n, k = b_type.origin_shape[-1], b_type.origin_shape[-2]
    assert isinstance(n, int) and isinstance(k, int)
    perm = [*range(b_type.rank - 2), b_type.rank - 1, b_type.rank - 2]
    properties = {"perm": to_attribute(perm)}
    (rows_type,) = TransposeOp.infer_shapes([b_q], properties)
    rows = TransposeOp.create(operands=[b_q], result_types=[rows_type], properties=properties)
    lhs: list[SSAValue | int] = [a_q]
    rhs: list[SSAValue | int] = [rows.results[0]]
    for part in int8_parts(-qb.zero):
        lhs.append(a_q)
        rhs.append(part)
    for part in int8_parts(-qa.zero):
        lhs.append(part)
        rhs.append(rows.results[0])
    lhs_ops, lhs_value = _int8_concat(lhs, a_type)
    rhs_ops, rhs_value = _int8_concat(rhs, rows_type)
    scale = np.float32(qa.scale * qb.scale)
    bias = ConstantOp(np.full(n, k * qa.zero * qb.zero, np.int32))
    scales = ConstantOp(np.full(n, scale, np.float32))
    operands = [lhs_value, rhs_value, bias.output, scales.output]
    try:
        (want,) = QuantMatMulOp.infer_shapes(operands, {})
    except ShapeError:
        return None
    if want != out:
        return None
    Rewriter.insert_op([rows, *lhs_ops, *rhs_ops, bias, scales], InsertPoint.before(op))
    return QuantMatMulOp.create(operands=operands, result_types=[out])
