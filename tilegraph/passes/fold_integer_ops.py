"""``fold-integer-ops``: MatMulInteger / ConvInteger with constant weights onto the int8
cube, under ``int8``.

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
padding value is a register set at run time, Ascend C ``SetLoadDataPaddingValue``).

Weight zero points: a constant ``zw`` (per tensor or per output column) is subtracted from
the constant weights at compile time. When ``c = w - zw`` leaves int8 (older onnxruntime
made uint8 weights with zero points near 128), ``c`` is two int8 halves, ``floor(c / 2)``
and the rest (both int8 for ``c`` in [-256, 254]), laid side by side along the reduction
axis with the data concatenated with itself along it (C, or K): the same exact int32 sum
at twice the cube work (``split-weights``). An int32 ``Add`` of a per-column term between
the integer op and its Cast (older ``quantize_dynamic`` adds the bias, quantised at run
time, there) joins the bias: int32 sums wrap alike in either order.

Not folded (host ops): an integer op whose result is not used by exactly one Cast to
float32, directly or through such an Add (an int32 result itself would need a fixpipe
write of int32, not modelled), run-time weights, ``w - zw`` = 255 (no sum of two int8),
uint8 data not made by a QuantizeLinear, 1-D matmul operands, ConvInteger of other ranks
than 2-D, a grouped ConvInteger with split weights (the repeated data channels would have
to interleave per group). A grouped or depthwise ConvInteger with a data zero point,
constant or run-time, padded or not, folds: its correction ``-zx · Σw`` sums each output
channel's own weights, which are its group's input channels only, and the convolution
kernel's group blocks pad with the zero point and mask a ragged block's lanes past C
(``tests/lowering/test_int8_grouped_dynamic_conv.py``). Under any other precision the pass
changes nothing.

Statistics: ``folded-matmul-integer``, ``folded-conv-integer``, ``runtime-padding``
(folded convolutions that pad with a run-time zero point), ``split-weights``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tilegraph.dialects.graph.base import ShapeError
from tilegraph.dialects.graph.binary import AddOp
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


@dataclass
class _Use:
    """The Cast to float32 an integer op's result reaches, and an int32 term added on the
    way (``Add(op, b)``: quantize_dynamic's older form adds the run-time quantised bias
    before the Cast), with the Add."""

    cast: CastOp
    added: SSAValue | None = None
    add: Operation | None = None


def _float_cast(op: MatMulIntegerOp | ConvIntegerOp) -> _Use | None:
    """The one user of ``op``'s int32 result when it is a Cast to float32 (or an int32 Add
    whose one user is), else None."""
    uses = list(op.results[0].uses)
    if len(uses) != 1:
        return None
    user, added, add = uses[0].operation, None, None
    if isinstance(user, AddOp) and len(list(user.results[0].uses)) == 1:
        added = user.operands[1 - uses[0].index]
        if added is op.results[0] or _tensor(added).dtype != DType.int32:
            return None
        add, user = user, next(iter(user.results[0].uses)).operation
    if not isinstance(user, CastOp) or int(user.attr("to")) != _ONNX_FLOAT:
        return None
    return _Use(user, added, add)


def _column_term(seq: OpSequence, added: SSAValue, columns: int, from_end: int) -> SSAValue | None:
    """``added`` (int32, one value per output column, the column axis ``from_end`` places
    before the result's last) as an ``[columns]`` vector, or None when it is not one."""
    shape = [int(d) if isinstance(d, int) else -1 for d in _tensor(added).origin_shape]
    at = len(shape) - 1 - from_end
    if at < 0 or shape[at] != columns or any(d != 1 for i, d in enumerate(shape) if i != at):
        return None
    target = seq.constant(np.array([columns], np.int64))
    return seq.value("graph.reshape", added, target)


def _centred_weights(
    w: SSAValue, zero: SSAValue | None, axis: int, columns: int
) -> np.ndarray | None:
    """The constant weights minus their constant zero point (per tensor or per output
    column along ``axis``), in int32; None when not constant."""
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
    return centred


def _int8_parts(centred: np.ndarray) -> list[np.ndarray] | None:
    """The centred weights as int8 terms whose sum they are: themselves when they fit int8;
    else (uint8 weights with a zero point, ``w - zw`` in [-255, 255]) two halves,
    ``floor(c / 2)`` and the rest, both int8 for ``c`` in [-256, 254]; None beyond."""
    low, high = int(centred.min(initial=0)), int(centred.max(initial=0))
    if low >= -128 and high <= 127:
        return [centred.astype(np.int8)]
    if low < -256 or high > 254:
        return None
    half = centred >> 1  # floor
    return [half.astype(np.int8), (centred - half).astype(np.int8)]


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


def _bias(
    seq: OpSequence, data: _Data, weight_sums: np.ndarray, added: SSAValue | None
) -> SSAValue | None:
    """The int32 bias ``-zx · Σw`` per output column: a constant (None when it leaves int32)
    or, for a run-time zero point, its ``Mul``; plus the ``[N]`` term ``added`` before the
    Cast, when there is one (int32 sums wrap alike in either order)."""
    sums = weight_sums.astype(np.int64)
    if data.runtime_zero is not None:
        if np.abs(sums).max(initial=0) * 128 > _INT32[1]:
            return None
        zero = seq.value("graph.cast", data.runtime_zero, to=_ONNX_INT32)
        bias = seq.value("graph.mul", zero, seq.constant((-sums).astype(np.int32)))
    else:
        assert data.zero is not None
        constant = -data.zero * sums
        if constant.min(initial=0) < _INT32[0] or constant.max(initial=0) > _INT32[1]:
            return None
        bias = seq.constant(constant.astype(np.int32))
    return bias if added is None else seq.value("graph.add", bias, added)


def _operands(
    seq: OpSequence,
    op: MatMulIntegerOp | ConvIntegerOp,
    axis: int,
    columns: int,
) -> tuple[list[np.ndarray], _Data] | None:
    """The centred weights as int8 terms (:func:`_int8_parts`; output columns along
    ``axis``) and the int8 data of an integer op (its operands: data, weights, their zero
    points), or None."""
    x, w, x_zero, w_zero = op.operand_slots()
    assert x is not None and w is not None
    centred = _centred_weights(w, w_zero, axis, columns)
    parts = None if centred is None else _int8_parts(centred)
    if parts is None:
        return None
    data = _int8_data(seq, x, x_zero)
    return None if data is None else (parts, data)


def _repeated(seq: OpSequence, data: SSAValue, parts: int, axis: int) -> SSAValue:
    """``data`` once per weight term along the reduction ``axis`` (K, or C): the sum over
    the longer axis is the sum of the terms' products."""
    return data if parts == 1 else seq.value("graph.concat", *[data] * parts, axis=axis)


def _fold_matmul(op: MatMulIntegerOp, seq: OpSequence, use: _Use, stats) -> SSAValue | None:
    b, rank = _tensor(op.B), _tensor(op.A).rank
    if b.rank != 2 or rank < 2:
        return None
    n = int(b.origin_shape[1])
    added = None if use.added is None else _column_term(seq, use.added, n, 0)
    operands = _operands(seq, op, 1, n)
    if operands is None or (use.added is not None and added is None):
        return None
    parts, data = operands
    rows = np.ascontiguousarray(np.concatenate([p.T for p in parts], axis=1))
    bias = _bias(seq, data, rows.astype(np.int64).sum(axis=1), added)
    if bias is None:
        return None
    if len(parts) > 1:
        stats.add("split-weights")
    scale = seq.constant(np.ones(n, np.float32))
    x = _repeated(seq, data.value, len(parts), rank - 1)
    return seq.value(QuantMatMulOp, x, seq.constant(rows), bias, scale)


def _padded(op: ConvIntegerOp) -> bool:
    x, w = _tensor(op.x), _tensor(op.w)
    axes = window(type(op), op.properties, x.origin_shape[2:], w.origin_shape[2:])
    return any(a.begin or a.end for a in axes)


def _fold_conv(op: ConvIntegerOp, seq: OpSequence, use: _Use, stats) -> SSAValue | None:
    w = _tensor(op.w)
    if w.rank != 4:
        return None
    m = int(w.origin_shape[0])
    added = None if use.added is None else _column_term(seq, use.added, m, 2)
    operands = _operands(seq, op, 0, m)
    if operands is None or (use.added is not None and added is None):
        return None
    parts, data = operands
    grouped = int(op.attr("group")) != 1
    padded = _padded(op)
    runtime_pad = data.runtime_zero if padded else None
    if grouped and len(parts) > 1:
        # the repeated channels of split weights would have to interleave per group
        return None
    weights = np.concatenate(parts, axis=1)
    bias = _bias(seq, data, weights.reshape(m, -1).astype(np.int64).sum(axis=1), added)
    if bias is None:
        return None
    scale = seq.constant(np.ones(m, np.float32))
    properties = {k: op.properties[k] for k in WINDOW_ATTRS if k in op.properties}
    if data.zero:
        properties["pad_value"] = data.zero  # type: ignore[assignment]
    if runtime_pad is not None:
        stats.add("runtime-padding")
    if len(parts) > 1:
        stats.add("split-weights")
    x = _repeated(seq, data.value, len(parts), 1)
    w_q = seq.constant(weights)
    return seq.value(QuantConv2dOp, x, w_q, bias, scale, runtime_pad, **properties)


@register_pass
@dataclass(frozen=True)
class FoldIntegerOpsPass(ModulePass):
    """Under the ``int8`` precision, ``Cast(MatMulInteger)`` / ``Cast(ConvInteger)`` with
    constant weights become ``graph.quant_matmul`` / ``graph.quant_conv2d``."""

    name = "fold-integer-ops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        if target_of(op).precision != INT8_PRECISION:
            return
        for anchor in list(op.walk()):
            if not isinstance(anchor, MatMulIntegerOp | ConvIntegerOp):
                continue
            use = _float_cast(anchor)
            if use is None:
                continue
            # made in front of the Cast: what it reads (an added term too) is defined there
            seq = OpSequence(use.cast)
            try:
                if isinstance(anchor, MatMulIntegerOp):
                    folded, kind = _fold_matmul(anchor, seq, use, stats), "matmul"
                else:
                    folded, kind = _fold_conv(anchor, seq, use, stats), "conv"
            except ShapeError:
                folded = None
            if folded is None or not _same_values(folded, use.cast.results[0]):
                seq.discard()
                continue
            replace_results(use.cast, [folded])
            if use.add is not None:
                Rewriter.erase_op(use.add)  # the Cast's operand, now unused
            Rewriter.erase_op(anchor)  # its one user is gone
            stats.add(f"folded-{kind}-integer")
