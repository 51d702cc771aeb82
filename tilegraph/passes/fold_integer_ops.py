"""``fold-integer-ops``: MatMulInteger / ConvInteger with constant int8 weights onto the
int8 cube, under ``int8``.

A dynamically quantised model (onnxruntime's ``quantize_dynamic``) computes each matmul as
``Cast(MatMulInteger(x_q, w_q, zx, zw), float) · (sx · sw)`` with ``x_q, sx, zx`` from a
DynamicQuantizeLinear (uint8, the zero point a run-time scalar) and constant int8 weights;
its convolutions likewise with ConvInteger. Under the ``int8`` precision this pass replaces
each such ``Cast(MatMulInteger(...))`` by ``graph.quant_matmul(x_i8, w_q as rows of K,
bias, 1.0)`` and each ``Cast(ConvInteger(...))`` by ``graph.quant_conv2d``: int8 operands
on the cube, the int32 accumulator converted to float32 by fixpipe with the scale 1.0 —
which is the Cast itself, bit for bit (``float32(acc)`` rounded once either way). The
``Mul`` by the scales stays a vector op (an epilogue the matmul kernel fuses).

Zero points, as ``fold-qdq`` does them: ``Σ (x - zx)·w = Σ x·w - zx·Σ w``, so the data
zero point becomes the int32 bias ``-zx · Σ w`` per output column (channel): a constant
when ``zx`` is, else ``Mul(Cast(zx, int32), -Σw)`` — a run-time [N] int32 vector the
kernel's fixpipe adds like any bias (exact in int32). uint8 data is re-centred on int8:
when ``x_q`` is a per-tensor QuantizeLinear (DynamicQuantizeLinear's expansion makes one,
:mod:`.expand_qoperator`), a sibling QuantizeLinear with zero point ``z - 128`` into int8
gives ``x_q - 128`` exactly (the same rounding and saturation, shifted), and ``zx - 128``
takes the place of ``zx`` (DynamicQuantizeLinear's parameters op computes it in its own
kernel, ``y_zero_point_int8``). A convolution with a data zero point pads with it: a
constant one is ``pad_value``; one computed at run time is the convolution's ``pad_zero``
operand (the int8 zero point, ``y_zero_point_int8`` for DynamicQuantizeLinear's), which
the kernel reads on the scalar unit and hands to the loads that fill the padding (Load3Dv2's
padding value is a register set at run time, Ascend C ``SetLoadDataPaddingValue``). Weight
zero points: a constant ``zw`` (per tensor or per output column) is subtracted from the
constant weights at compile time when every ``w - zw`` fits int8 (the symmetric weights
onnxruntime makes have ``zw = 0``); otherwise the op stays on the host.

Not folded (host ops): an integer op whose result is not used by exactly one Cast to
float32 (its int32 result itself would need a fixpipe write of int32, not modelled), run-time
weights, uint8 data not made by a QuantizeLinear, 1-D matmul operands, ConvInteger of
other ranks than 2-D, a padded grouped ConvInteger with a data zero point other than a
constant 0 (as in ``fold-qdq``: a group block's K step may read a neighbour's padding
rows). Under any other precision the pass changes nothing.

Statistics: ``folded-matmul-integer``, ``folded-conv-integer``, ``runtime-padding`` (folded
convolutions that pad with a run-time zero point).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tilegraph.dialects.graph.base import ShapeError
from tilegraph.dialects.graph.elementwise import CastOp
from tilegraph.dialects.graph.quantize import DynamicQuantizeParamsOp, QuantizeLinearOp
from tilegraph.dialects.graph.quantized_cube import QuantConv2dOp, QuantMatMulOp
from tilegraph.dialects.graph.quantized_linalg import ConvIntegerOp, MatMulIntegerOp
from tilegraph.dialects.graph.windows import window
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType
from tilegraph.passes.expand_qoperator import WINDOW_ATTRS, OpSequence, replace_results
from tilegraph.passes.fold_qdq import INT8_PRECISION
from tilegraph.passes.registry import register_pass
from tilegraph.passes.simplify.match import constant_array
from tilegraph.passes.statistics import start_pass
from tilegraph.target import target_of

_ONNX_FLOAT, _ONNX_INT8, _ONNX_INT32 = 1, 3, 6
_INT32 = (-(2**31), 2**31 - 1)


def _tensor(value: SSAValue) -> TensorType:
    t = value.type
    assert isinstance(t, TensorType)
    return t


def _same_values(new: SSAValue, old: SSAValue) -> bool:
    """The same shape and element type (a 2-D convolution's result is NCHW where the Cast
    of ConvInteger's, an opaque op's, was still ND: ``infer-origin-format`` settles it)."""
    a, b = _tensor(new), _tensor(old)
    return a.origin_shape == b.origin_shape and a.element_type == b.element_type


def _float_cast(op: MatMulIntegerOp | ConvIntegerOp) -> CastOp | None:
    """The one user of ``op``'s int32 result when it is a Cast to float32, else None."""
    uses = list(op.results[0].uses)
    if len(uses) != 1 or not isinstance(cast := uses[0].operation, CastOp):
        return None
    if int(cast.attr("to")) != _ONNX_FLOAT:
        return None
    return cast


def _centred_weights(
    w: SSAValue, zero: SSAValue | None, axis: int, columns: int
) -> np.ndarray | None:
    """The constant weights minus their constant zero point (per tensor or per output
    column along ``axis``), as int8; None when not constant or out of int8's range."""
    data = constant_array(w)
    if data is None or data.dtype not in (np.int8, np.uint8):
        return None
    centred = data.astype(np.int32)
    if zero is not None:
        zw = constant_array(zero)
        if zw is None or zw.size not in (1, columns):
            return None
        shape = [1] * data.ndim
        shape[axis] = -1
        centred = centred - zw.astype(np.int32).reshape(shape if zw.size > 1 else ())
    if centred.min(initial=0) < -128 or centred.max(initial=0) > 127:
        return None
    return centred.astype(np.int8)


@dataclass
class _Data:
    """The int8 data operand and its zero point: a constant, or a one-element int8 tensor
    computed at run time."""

    value: SSAValue
    zero: int | None
    runtime_zero: SSAValue | None


def _int8_data(seq: OpSequence, x: SSAValue, zero: SSAValue | None) -> _Data | None:
    """``x`` (and its zero point ``zero``) as int8 data: as it is when int8, re-centred by a
    sibling QuantizeLinear when uint8 (module docstring); None otherwise."""
    dtype = _tensor(x).dtype
    shift = 128 if dtype == DType.uint8 else 0
    if dtype == DType.uint8:
        q = x.owner
        if not isinstance(q, QuantizeLinearOp) or int(q.attr("block_size")):
            return None
        if int(q.attr("output_dtype")) or any(
            p is not None and _tensor(p).num_elements() != 1 for p in (q.y_scale, q.y_zero_point)
        ):
            return None
        shifted = _shifted_zero(seq, q.y_zero_point)
        x = seq.value(QuantizeLinearOp, q.x, q.y_scale, shifted, **_quantize_attrs(q))
        if zero is not None and zero is q.y_zero_point and constant_array(zero) is None:
            return _Data(x, None, shifted)  # the quantiser's own run-time zero point, shifted
    elif dtype != DType.int8:
        return None
    if zero is None:
        return _Data(x, -shift, None)
    if _tensor(zero).num_elements() != 1:
        return None
    found = constant_array(zero)
    if found is not None:
        return _Data(x, int(found.reshape(-1)[0]) - shift, None)
    return _Data(x, None, _shifted_zero(seq, zero) if shift else zero)


def _quantize_attrs(q: QuantizeLinearOp) -> dict[str, object]:
    return {k: q.properties[k] for k in ("axis", "saturate", "precision") if k in q.properties}


def _shifted_zero(seq: OpSequence, zero: SSAValue | None) -> SSAValue:
    """A uint8 QuantizeLinear's zero point minus 128, as int8 (the re-centred quantiser's)."""
    found = np.zeros((), np.uint8) if zero is None else constant_array(zero)
    if found is not None:
        shape = () if zero is None else _tensor(zero).origin_shape
        shifted = (found.astype(np.int16) - 128).astype(np.int8)
        return seq.constant(shifted.reshape([int(d) for d in shape]))
    assert zero is not None
    if isinstance(zero.owner, DynamicQuantizeParamsOp) and zero is zero.owner.y_zero_point:
        return zero.owner.y_zero_point_int8  # computed by the parameters' kernel
    as_float = seq.value("graph.cast", zero, to=_ONNX_FLOAT)
    moved = seq.value("graph.add", as_float, seq.constant(np.float32(-128)))
    return seq.value("graph.cast", moved, to=_ONNX_INT8)


def _bias(seq: OpSequence, data: _Data, weight_sums: np.ndarray) -> SSAValue | None:
    """The int32 bias ``-zx · Σw`` per output column: a constant (None when it leaves int32)
    or, for a run-time zero point, its ``Mul``."""
    sums = weight_sums.astype(np.int64)
    if data.runtime_zero is not None:
        if np.abs(sums).max(initial=0) * 128 > _INT32[1]:
            return None
        zero = seq.value("graph.cast", data.runtime_zero, to=_ONNX_INT32)
        return seq.value("graph.mul", zero, seq.constant((-sums).astype(np.int32)))
    assert data.zero is not None
    bias = -data.zero * sums
    if bias.min(initial=0) < _INT32[0] or bias.max(initial=0) > _INT32[1]:
        return None
    return seq.constant(bias.astype(np.int32))


def _operands(
    seq: OpSequence,
    op: MatMulIntegerOp | ConvIntegerOp,
    axis: int,
    columns: int,
) -> tuple[np.ndarray, _Data] | None:
    """The centred int8 weights (output columns along ``axis``) and the int8 data of an
    integer op (its operands: data, weights, their zero points), or None."""
    x, w, x_zero, w_zero = op.operand_slots()
    assert x is not None and w is not None
    weights = _centred_weights(w, w_zero, axis, columns)
    if weights is None:
        return None
    data = _int8_data(seq, x, x_zero)
    return None if data is None else (weights, data)


def _fold_matmul(op: MatMulIntegerOp, seq: OpSequence) -> SSAValue | None:
    b = _tensor(op.B)
    if b.rank != 2 or _tensor(op.A).rank < 2:
        return None
    n = int(b.origin_shape[1])
    operands = _operands(seq, op, 1, n)
    if operands is None:
        return None
    weights, data = operands
    rows = np.ascontiguousarray(weights.T)
    bias = _bias(seq, data, rows.astype(np.int64).sum(axis=1))
    if bias is None:
        return None
    scale = seq.constant(np.ones(n, np.float32))
    return seq.value(QuantMatMulOp, data.value, seq.constant(rows), bias, scale)


def _padded(op: ConvIntegerOp) -> bool:
    x, w = _tensor(op.x), _tensor(op.w)
    axes = window(type(op), op.properties, x.origin_shape[2:], w.origin_shape[2:])
    return any(a.begin or a.end for a in axes)


def _fold_conv(op: ConvIntegerOp, seq: OpSequence, stats) -> SSAValue | None:
    w = _tensor(op.w)
    if w.rank != 4:
        return None
    m = int(w.origin_shape[0])
    operands = _operands(seq, op, 0, m)
    if operands is None:
        return None
    weights, data = operands
    padded = _padded(op)
    runtime_pad = data.runtime_zero if padded else None
    if (data.zero or runtime_pad) and padded and int(op.attr("group")) != 1:
        return None  # as fold-qdq: a grouped block's K step may read a neighbour's rows
    bias = _bias(seq, data, weights.reshape(m, -1).astype(np.int64).sum(axis=1))
    if bias is None:
        return None
    scale = seq.constant(np.ones(m, np.float32))
    properties = {k: op.properties[k] for k in WINDOW_ATTRS if k in op.properties}
    if data.zero:
        properties["pad_value"] = data.zero  # type: ignore[assignment]
    if runtime_pad is not None:
        stats.add("runtime-padding")
    w_q = seq.constant(weights)
    return seq.value(QuantConv2dOp, data.value, w_q, bias, scale, runtime_pad, **properties)


@register_pass
@dataclass(frozen=True)
class FoldIntegerOpsPass(ModulePass):
    """Under the ``int8`` precision, ``Cast(MatMulInteger)`` / ``Cast(ConvInteger)`` with
    constant int8 weights become ``graph.quant_matmul`` / ``graph.quant_conv2d``."""

    name = "fold-integer-ops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        if target_of(op).precision != INT8_PRECISION:
            return
        for anchor in list(op.walk()):
            if not isinstance(anchor, MatMulIntegerOp | ConvIntegerOp):
                continue
            cast = _float_cast(anchor)
            if cast is None:
                continue
            seq = OpSequence(anchor)
            try:
                if isinstance(anchor, MatMulIntegerOp):
                    folded, kind = _fold_matmul(anchor, seq), "matmul"
                else:
                    folded, kind = _fold_conv(anchor, seq, stats), "conv"
            except ShapeError:
                folded = None
            if folded is None or not _same_values(folded, cast.results[0]):
                seq.discard()
                continue
            replace_results(cast, [folded])
            Rewriter.erase_op(anchor)  # its one user is gone
            stats.add(f"folded-{kind}-integer")
