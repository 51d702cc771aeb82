"""``fold-qdq``: QDQ convolutions and matmuls become int8 cube ops, under ``int8``.

A QDQ model (onnxruntime's ``quantize_static`` with ``QuantFormat.QDQ``, or any exporter of
that format) computes each quantised convolution as::

    Conv(DequantizeLinear(x_q, sx, zx), DequantizeLinear(w_q, sw, axis=0),
         DequantizeLinear(b_q, sx·sw))

with int8 ``x_q`` (usually a QuantizeLinear's result), int8 constant weights ``w_q`` (per
tensor or per output channel) and an int32 constant bias; a MatMul / Gemm likewise (weights
``[K, N]`` per column, or Gemm's ``transB = 1`` ``[N, K]`` per row). When the module's
target precision is ``int8`` (:mod:`tilegraph.target`), this pass replaces every such Conv
by ``graph.quant_conv2d(x_q, w_q, b_q', sx·sw)`` and every such MatMul / Gemm by
``graph.quant_matmul(x_q, w_q as rows of K, b_q', sx·sw)``
(:mod:`~tilegraph.dialects.graph.quantized_cube`): int8 operands on the cube, int32
accumulation, the dequantisation per output channel / column in fixpipe. The
DequantizeLinear ops left without users go with the next ``dce``; the QuantizeLinear ops
stay (vector programs).

Asymmetric data (``zx != 0``): ``Σ (x_q - zx)·w = Σ x_q·w - zx·Σ w``, so the bias becomes
``b_q' = b_q - zx·Σ w`` per output channel (over every tap of the filter), and a
convolution's padding holds ``zx`` (``pad_value``: the float graph's zero padding is ``zx``
in the quantised domain), so border pixels are exact too. uint8 data (onnxruntime's
QUInt8) is re-centred first: a uint8 QuantizeLinear whose users are all DequantizeLinear
ops with its zero point becomes an int8 one with zero point ``zx - 128`` (the same
rounding and saturation, shifted by 128), its DequantizeLinear ops take ``zx - 128`` too —
every dequantised value is unchanged, and the cube stays s8 x s8 (no u8 operand mode is
modelled). Weights must have zero point 0 (onnxruntime's default for QInt8 weights).

Semantics: the result is ``(Σ (x_q - zx)·w_q + b_q) · (sx·sw)`` rounded once, which is
what onnxruntime computes for the pattern (it runs it as integer QLinearConv /
QLinearMatMul); the float graph rounds the dequantised operands and every partial sum, so
the two differ by a few ulp, and after the next QuantizeLinear by at most one quantisation
step where a value sits on a rounding boundary.

What is folded: 2-D convolutions, and MatMul / Gemm (``alpha = beta = 1``, no
``transA``) with a constant 2-D weight, whose bias (if any) is an int32 constant with
scale ``sx·sw`` (as onnxruntime makes it), whose scales are float32/float16 constants and
whose bias correction fits int32; and (:mod:`~tilegraph.passes.qdq_activations`) the
``DequantizeLinear -> Reshape / Transpose / ... -> QuantizeLinear`` of one quantisation
becomes an int8 move, and a MatMul of two int8 activations (attention's Q·Kᵀ and P·V) a
``graph.quant_matmul`` with the right operand transposed to rows of K; with zero points
the cube's raw int32 sum, the zero points' row / column sums (one-column / one-row int8
products) taken off in an int32 epilogue before the dequantisation. Not folded: a
grouped convolution with padding and ``zx != 0`` (a group block's last K step may read its
neighbour's weight rows against the padding, harmless only when it is 0), weights with a
zero point. Anything else keeps the float path (its Q/DQ run as vector
programs). A module under ``int8`` with no QuantizeLinear / DequantizeLinear at all is an
error: ``int8`` is the precision of models that carry their quantisation. Under any other
precision the pass changes nothing.

Statistics: ``folded-convs``, ``kept-convs``, ``folded-matmuls``, ``kept-matmuls`` (those
with a DQ data operand not folded), ``folded-activation-matmuls`` (of the folded ones, those
of two activations), ``hoisted-quantizes`` (QuantizeLinear ops moved before the data
movement after them, :mod:`~tilegraph.passes.qdq_moves`), ``recentred-uint8``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.base import GraphOp, ShapeError
from tilegraph.dialects.graph.constant_ops import ConstantOp
from tilegraph.dialects.graph.linalg import GemmOp, MatMulOp
from tilegraph.dialects.graph.nn import Conv2dOp
from tilegraph.dialects.graph.quantize import DequantizeLinearOp, QuantizeLinearOp
from tilegraph.dialects.graph.quantized_cube import QuantConv2dOp, QuantMatMulOp
from tilegraph.dialects.graph.windows import window
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType
from tilegraph.passes.qdq_activations import fold_activation_matmul
from tilegraph.passes.qdq_moves import hoist_quantize
from tilegraph.passes.registry import register_pass
from tilegraph.passes.simplify.match import constant_array
from tilegraph.passes.statistics import start_pass
from tilegraph.target import target_of

INT8_PRECISION = "int8"


@dataclass(frozen=True)
class _Dequantized:
    """A DequantizeLinear operand: its quantised value, scale, zero point (0 when absent)
    and (constant) data."""

    value: SSAValue
    scale: np.ndarray
    zero: np.ndarray
    data: np.ndarray | None
    axis: int


def _dequantized(value: SSAValue | None, dtype: DType) -> _Dequantized | None:
    """``value`` as DequantizeLinear(q, constant scale, constant zero point) of a ``dtype``
    q (per tensor or per axis, no blocks), else None."""
    dq = value.owner if value is not None else None
    if not isinstance(dq, DequantizeLinearOp):
        return None
    if int(dq.attr("block_size")) or int(dq.attr("output_dtype")):
        return None
    q = dq.x.type
    scale = constant_array(dq.x_scale)
    if not isinstance(q, TensorType) or q.dtype != dtype or scale is None:
        return None
    if scale.dtype not in (np.float32, np.float16):
        return None
    zero = np.zeros(1, np.int64)
    if dq.x_zero_point is not None:
        found = constant_array(dq.x_zero_point)
        if found is None:
            return None
        zero = found.astype(np.int64)
    axis = int(dq.attr("axis")) % max(q.rank, 1)
    return _Dequantized(dq.x, scale, zero, constant_array(dq.x), axis)


def _data_operand(value: SSAValue | None) -> tuple[_Dequantized, int] | None:
    """The data operand of a quantised cube op: an int8 DequantizeLinear with one scale and
    one zero point, and that zero point (folded into the bias by the caller)."""
    x = _dequantized(value, DType.int8)
    if x is None or x.scale.size != 1 or x.zero.size != 1:
        return None
    return x, int(x.zero.reshape(()))


def _weight_operand(value: SSAValue | None, columns: int, axis: int) -> _Dequantized | None:
    """A constant int8 DequantizeLinear weight with zero point 0 and one scale, or one per
    output column along ``axis``."""
    w = _dequantized(value, DType.int8)
    if w is None or w.data is None or w.zero.any():
        return None
    if w.scale.size not in (1, columns) or (w.scale.size == columns > 1 and w.axis != axis):
        return None
    return w


def _column_params(
    x: _Dequantized, w: _Dequantized, c: SSAValue | None, columns: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """(int32 bias, float scale) per output column of ``DQ(x) · DQ(w) + DQ(c)``: the scale
    is ``sx · sw`` in the scales' type (what onnxruntime's quantiser gives the bias as its
    scale); the bias is ``c``'s int32 data (zeros without ``c``), which must carry that
    scale. None when the scales' types differ or ``c`` does not fit."""
    scale_type = x.scale.dtype
    if w.scale.dtype != scale_type:
        return None
    scale = (x.scale.reshape(()) * w.scale.reshape(-1)).astype(scale_type)
    scale = np.broadcast_to(scale, (columns,)).copy()
    if c is None:
        return np.zeros(columns, np.int32), scale
    b = _dequantized(c, DType.int32)
    if (
        b is None
        or b.data is None
        or b.zero.any()
        or b.data.size != columns
        or not np.array_equal(np.broadcast_to(b.scale.reshape(-1), (columns,)), scale)
    ):
        return None
    return b.data.reshape(-1).astype(np.int32), scale


def _corrected_bias(bias: np.ndarray, zero: int, weight_sums: np.ndarray) -> np.ndarray | None:
    """``bias - zero · Σw`` per output column: the data zero point taken out of the int32
    sum (``Σ (x - zx)·w = Σ x·w - zx·Σ w``); None when it leaves int32."""
    corrected = bias.astype(np.int64) - zero * weight_sums.astype(np.int64)
    if corrected.min(initial=0) < -(2**31) or corrected.max(initial=0) >= 2**31:
        return None
    return corrected.astype(np.int32)


def _padded(conv: Conv2dOp) -> bool:
    """Some tap of ``conv`` reads its padding."""
    w = conv.weight.type
    x = conv.input.type
    assert isinstance(w, TensorType) and isinstance(x, TensorType)
    axes = window(type(conv), conv.properties, x.origin_shape[2:], w.origin_shape[2:])
    return any(a.begin or a.end for a in axes)


def _replacement(
    anchor: Operation,
    cls: type[GraphOp],
    operands: list[SSAValue],
    constants: list[ConstantOp],
    properties: Mapping[str, Attribute],
) -> Operation | None:
    """``cls`` of ``operands`` and ``properties`` in place of ``anchor`` (same result
    type), ``constants`` inserted before it; None when its inferred type differs."""
    properties = dict(properties)
    try:
        (want,) = cls.infer_shapes(operands, properties)
    except ShapeError:
        return None
    out = anchor.results[0].type
    if want != out:
        return None
    Rewriter.insert_op(constants, InsertPoint.before(anchor))
    return cls.create(operands=operands, result_types=[out], properties=properties)


def _fold_conv(conv: Conv2dOp) -> Operation | None:
    """The ``graph.quant_conv2d`` that replaces ``conv``, its constants inserted before it;
    None when ``conv`` is not a foldable QDQ convolution."""
    data = _data_operand(conv.input)
    if data is None:
        return None
    x, zero = data
    w = conv.weight.type
    assert isinstance(w, TensorType)
    m = int(w.origin_shape[0])
    weight = _weight_operand(conv.weight, m, 0)
    if weight is None or weight.data is None:
        return None
    if zero and _padded(conv) and int(conv.attr("group")) != 1:
        # load3d pads with zx; a grouped block's last K step may read its neighbour's
        # weight rows against that padding (harmless only when it is 0)
        return None
    params = _column_params(x, weight, conv.bias, m)
    if params is None:
        return None
    bias, scale = params
    weight_sums = weight.data.reshape(m, -1).astype(np.int64).sum(axis=1)
    corrected = _corrected_bias(bias, zero, weight_sums)
    if corrected is None:
        return None
    constants = [ConstantOp(corrected), ConstantOp(scale)]
    operands = [x.value, weight.value, *(c.output for c in constants)]
    properties = dict(conv.properties)
    if zero:
        properties["pad_value"] = IntegerAttr(zero, i64)
    return _replacement(conv, QuantConv2dOp, operands, constants, properties)


def _fold_matmul(op: MatMulOp | GemmOp) -> Operation | None:
    """The ``graph.quant_matmul`` that replaces a QDQ MatMul / Gemm whose right operand is
    a constant 2-D weight (held transposed to rows of K when it is not already), its
    constants inserted before it; None when it does not fold."""
    if isinstance(op, GemmOp):
        a_value, b_value, c_value = op.a, op.b, op.c
        if op.attr("transA") or float(op.attr("alpha")) != 1.0 or float(op.attr("beta")) != 1.0:
            return None
        rows_of_k = bool(op.attr("transB"))
    else:
        a_value, b_value, c_value = op.lhs, op.rhs, None
        rows_of_k = False
    b_type = b_value.type
    if not isinstance(b_type, TensorType) or b_type.rank != 2:
        return None
    n = int(b_type.origin_shape[0 if rows_of_k else 1])
    data = _data_operand(a_value)
    weight = _weight_operand(b_value, n, 0 if rows_of_k else 1)
    if data is None or weight is None or weight.data is None:
        return None
    x, zero = data
    if x.value.type.rank < 2:  # type: ignore[union-attr]
        return None
    params = _column_params(x, weight, c_value, n)
    if params is None:
        return None
    bias, scale = params
    rows = weight.data if rows_of_k else weight.data.T
    corrected = _corrected_bias(bias, zero, rows.astype(np.int64).sum(axis=1))
    if corrected is None:
        return None
    constants = [ConstantOp(corrected), ConstantOp(scale)]
    if rows_of_k:
        b_q = weight.value
    else:
        transposed = ConstantOp(np.ascontiguousarray(rows))
        constants.insert(0, transposed)
        b_q = transposed.output
    operands = [x.value, b_q, *(c.output for c in constants[-2:])]
    return _replacement(op, QuantMatMulOp, operands, constants, {})


def _equal(a: np.ndarray | None, b: np.ndarray) -> bool:
    return a is not None and np.array_equal(a, b)


def _recentre_uint8(q: QuantizeLinearOp) -> bool:
    """Re-centre a uint8 QuantizeLinear whose users are all DequantizeLinear ops with its
    zero point: ``q_u8 - 128`` is QuantizeLinear with zero point ``zp - 128`` into int8
    (the same rounding, the same saturation, shifted), and the DequantizeLinear ops take
    ``zp - 128`` too, so every dequantised value is unchanged. The cube takes s8 x s8
    (docs/hardware.md: no u8 operand mode is modelled), so onnxruntime's default QUInt8
    activations reach it this way at no cost. True when rewritten."""
    out = q.y.type
    zero = constant_array(q.y_zero_point)
    if not isinstance(out, TensorType) or out.dtype != DType.uint8 or zero is None:
        return False
    if zero.size != 1 or int(q.attr("output_dtype")) or int(q.attr("block_size")):
        return False
    users = [use.operation for use in q.y.uses]
    if not users or any(
        not isinstance(u, DequantizeLinearOp)
        or u.x is not q.y
        or not _equal(constant_array(u.x_zero_point), zero)
        for u in users
    ):
        return False
    shifted = ConstantOp((zero.astype(np.int16) - 128).astype(np.int8))
    Rewriter.insert_op(shifted, InsertPoint.before(q))
    retyped = QuantizeLinearOp.create(
        operands=[q.x, q.y_scale, shifted.output],
        result_types=[TensorType(out.origin_shape, element_type_of(DType.int8))],
        properties=dict(q.properties),
    )
    retyped.results[0].name_hint = q.y.name_hint
    Rewriter.replace_op(q, retyped)
    for dq in users:
        assert isinstance(dq, DequantizeLinearOp)
        dq.operands[2] = shifted.output
    return True


@register_pass
@dataclass(frozen=True)
class FoldQdqPass(ModulePass):
    """Under the ``int8`` precision, QDQ convolutions and matmuls become
    ``graph.quant_conv2d`` / ``graph.quant_matmul`` (asymmetric and uint8 data included)."""

    name = "fold-qdq"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        if target_of(op).precision != INT8_PRECISION:
            return
        ops = list(op.walk())
        if not any(isinstance(o, QuantizeLinearOp | DequantizeLinearOp) for o in ops):
            raise PassFailedException(
                "fold-qdq: precision 'int8' needs a quantised model (QuantizeLinear / "
                "DequantizeLinear pairs, QDQ format); this one has none: choose precision "
                "origin, fp16 or bf16"
            )
        for q in ops:
            if isinstance(q, QuantizeLinearOp) and _recentre_uint8(q):
                stats.add("recentred-uint8")
        for q in list(op.walk()):
            if isinstance(q, QuantizeLinearOp) and hoist_quantize(q):
                stats.add("hoisted-quantizes")
        for anchor in op.walk():
            if isinstance(anchor, Conv2dOp):
                folded, kind = _fold_conv(anchor), "convs"
            elif isinstance(anchor, MatMulOp | GemmOp):
                folded, kind = _fold_matmul(anchor), "matmuls"
                if folded is None and isinstance(anchor, MatMulOp):
                    folded = fold_activation_matmul(anchor)
                    if folded is not None:
                        stats.add("folded-activation-matmuls")
            else:
                continue
            if folded is None:
                if isinstance(anchor.operands[0].owner, DequantizeLinearOp):
                    stats.add(f"kept-{kind}")
                continue
            folded.results[0].name_hint = anchor.results[0].name_hint
            Rewriter.replace_op(anchor, folded)
            stats.add(f"folded-{kind}")
