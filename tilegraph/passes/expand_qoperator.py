"""``expand-qoperator``: QOperator ops and DynamicQuantizeLinear become QDQ graph ops, under
``int8``.

onnxruntime's *QOperator* format (``quantize_static(..., quant_format=QOperator)``) computes
a quantised convolution as one ``QLinearConv(x_q, sx, zx, w_q, sw, zw, sy, zy, b_q)`` and a
matmul as ``QLinearMatMul``; dynamically quantised models (``quantize_dynamic``) quantise
each activation with ``DynamicQuantizeLinear``. Under the ``int8`` precision this pass
rewrites them into ops with tile lowerings:

* ``QLinearConv`` (4-D) -> ``QuantizeLinear(Conv(DequantizeLinear(x_q, sx, zx),
  DequantizeLinear(w_q, sw, zw, axis=0), DequantizeLinear(b_q, sx·sw, axis=0)), sy, zy)``
  and ``QLinearMatMul`` -> ``QuantizeLinear(MatMul(DequantizeLinear(a_q, sa, za),
  DequantizeLinear(b_q, sb, zb)), sy, zy)`` (a per-row ``sa`` along ``a``'s rows, a
  per-column ``sb`` along ``b``'s columns): exactly the QDQ pattern onnxruntime's QDQ
  format has, which ``fold-qdq`` (run next) folds onto the int8 cube, and which a later
  requantisation in fixpipe absorbs. The bias scale ``sx·sw`` is a constant computed as
  onnxruntime's quantiser does (the float32 product), so ``fold-qdq`` recognises it; with
  scales computed at run time it is a ``Mul`` (and the pattern keeps the float path).
* ``DynamicQuantizeLinear(x)`` -> ``scale, zero_point = graph.dynamic_quantize_params(x)``
  and ``y = QuantizeLinear(x, scale, zero_point)``: the ONNX function body's scalars
  (``lo = Min(ReduceMin(x), 0)``, ``hi = Max(ReduceMax(x), 0)``, ``scale = (hi - lo) /
  255``, ``zero_point = Cast(Round(Clip(0 - lo / scale, 0, 255)), uint8)``) as one op
  whose kernel reduces both extremes in one pass and computes the two scalars at its end,
  then the quantisation as one elementwise kernel (two kernels, where the body as graph
  ops ran about a dozen: its scalar ops fuse with nothing). An all-zero ``x`` gets
  onnxruntime's answer (scale 1, zero point 0, ``y = 0``), where the spec's body divides
  0 by 0 (the DynamicQuantizeLinear op's reference gives scale 0 there).

Semantics: the QDQ form of a QLinear op rounds twice — the dequantised sum to the scale's
float type (``quant_conv2d``: ``acc · sx·sw`` rounded once), then ``/ sy`` in float32 and
to the integer grid — where onnxruntime's integer kernel requantises ``acc`` with one float
multiplier ``sx·sw/sy``; the two agree except where a value sits within a float32 ulp of a
rounding boundary: at most one quantisation step (``sy``) of difference, in rare elements.
The DynamicQuantizeLinear body is the spec's, bit for bit (float32 throughout).

Not expanded (they stay host ops): QLinearConv of other ranks (1-D, 3-D), QLinearMatMul
with per-row or per-column parameters of higher rank, float8 QLinearMatMul; and
onnxruntime's ``com.microsoft`` QOperator ops (QLinearAdd, QGemm, QLinearConcat, ...),
which the importer does not know. Under any other precision the pass changes nothing.

Statistics: ``expanded-qlinear-convs``, ``expanded-qlinear-matmuls``,
``expanded-dynamic-quantize``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.graph import GraphOp, op_class
from tilegraph.dialects.graph.base import ShapeError
from tilegraph.dialects.graph.constant_ops import ConstantOp
from tilegraph.dialects.graph.quantize import (
    DequantizeLinearOp,
    DynamicQuantizeLinearOp,
    DynamicQuantizeParamsOp,
    QuantizeLinearOp,
)
from tilegraph.dialects.graph.quantized_linalg import QLinearConvOp, QLinearMatMulOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.fold_qdq import INT8_PRECISION
from tilegraph.passes.registry import register_pass
from tilegraph.passes.simplify.match import constant_array
from tilegraph.passes.statistics import start_pass
from tilegraph.target import target_of

WINDOW_ATTRS = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")
"""The window properties QLinearConv / ConvInteger share with ``graph.conv2d``."""


class OpSequence:
    """Graph ops made one after another in front of ``anchor`` (shapes inferred as made)."""

    def __init__(self, anchor: Operation):
        self.anchor = anchor
        self.made: list[Operation] = []

    def op(self, kind: str | type[GraphOp], *operands: SSAValue | None, **attrs: Any) -> GraphOp:
        """``kind`` (``"graph.mul"`` or a class) of ``operands``, inserted before the anchor;
        raises ShapeError when its shape function refuses the operands."""
        cls = op_class(kind) if isinstance(kind, str) else kind
        made = cls.make(*operands, **attrs)
        Rewriter.insert_op(made, InsertPoint.before(self.anchor))
        self.made.append(made)
        return made

    def value(self, kind: str | type[GraphOp], *operands: SSAValue | None, **attrs: Any):
        """The first result of :meth:`op`."""
        return self.op(kind, *operands, **attrs).results[0]

    def constant(self, data: np.ndarray | np.generic) -> SSAValue:
        """A ``graph.constant`` of ``data`` (a numpy scalar: 0-d)."""
        return self.value_of(ConstantOp(np.asarray(data)))

    def value_of(self, made: Operation) -> SSAValue:
        Rewriter.insert_op(made, InsertPoint.before(self.anchor))
        self.made.append(made)
        return made.results[0]

    def discard(self) -> None:
        """Erase everything made (a rewrite that did not work out)."""
        for made in reversed(self.made):
            made.detach()
            made.erase()
        self.made.clear()


def replace_results(op: Operation, values: list[SSAValue]) -> None:
    """``values`` in place of ``op``'s results (names kept), then ``op`` erased."""
    for old, new in zip(op.results, values, strict=True):
        new.name_hint = old.name_hint
        old.replace_all_uses_with(new)
    Rewriter.erase_op(op)


def _rank(value: SSAValue) -> int:
    t = value.type
    assert isinstance(t, TensorType)
    return t.rank


def _size(value: SSAValue) -> int | None:
    t = value.type
    assert isinstance(t, TensorType)
    return t.num_elements()


def _bias_scale(seq: OpSequence, x_scale: SSAValue, w_scale: SSAValue) -> SSAValue:
    """``sx · sw`` per output channel: a constant made as onnxruntime's quantiser makes the
    bias scale (the float product in the scales' type), else a ``Mul``."""
    sx, sw = constant_array(x_scale), constant_array(w_scale)
    if sx is not None and sw is not None and sx.dtype == sw.dtype:
        return seq.constant((sx.reshape(()) * sw.reshape(-1)).astype(sx.dtype))
    return seq.value("graph.mul", x_scale, w_scale)


def _expand_qlinear_conv(op: QLinearConvOp, seq: OpSequence) -> list[SSAValue] | None:
    if _rank(op.x) != 4:
        return None
    x = seq.value(DequantizeLinearOp, op.x, op.x_scale, op.x_zero_point)
    w = seq.value(DequantizeLinearOp, op.w, op.w_scale, op.w_zero_point, axis=0)
    bias = None
    if op.B is not None:
        scale = _bias_scale(seq, op.x_scale, op.w_scale)
        bias = seq.value(DequantizeLinearOp, op.B, scale, None, axis=0)
    window = {k: op.properties[k] for k in WINDOW_ATTRS if k in op.properties}
    conv = seq.value("graph.conv2d", x, w, bias, **window)
    return [seq.value(QuantizeLinearOp, conv, op.y_scale, op.y_zero_point)]


def _matmul_axis(value: SSAValue, parameters: list[SSAValue], from_end: int) -> int | None:
    """The DequantizeLinear axis of a QLinearMatMul operand whose scale / zero point are
    per tensor or a vector along its ``from_end``-th last axis; None for other shapes."""
    if all(_size(p) == 1 for p in parameters):
        return None if _rank(value) == 0 else 0
    if any(_rank(p) != 1 for p in parameters if _size(p) != 1) or _rank(value) < 2:
        return None
    return _rank(value) - from_end


def _expand_qlinear_matmul(op: QLinearMatMulOp, seq: OpSequence) -> list[SSAValue] | None:
    a_axis = _matmul_axis(op.a, [op.a_scale, op.a_zero_point], 2)
    b_axis = _matmul_axis(op.b, [op.b_scale, op.b_zero_point], 1)
    if a_axis is None or b_axis is None:
        return None
    a = seq.value(DequantizeLinearOp, op.a, op.a_scale, op.a_zero_point, axis=a_axis)
    b = seq.value(DequantizeLinearOp, op.b, op.b_scale, op.b_zero_point, axis=b_axis)
    product = seq.value("graph.matmul", a, b)
    return [seq.value(QuantizeLinearOp, product, op.y_scale, op.y_zero_point)]


def _expand_dynamic_quantize(op: DynamicQuantizeLinearOp, seq: OpSequence) -> list[SSAValue] | None:
    """The scale and zero point of ``x`` as one op, then a QuantizeLinear (see the module
    docstring)."""
    params = seq.op(DynamicQuantizeParamsOp, op.x)
    scale, zero_point, _ = params.results
    y = seq.value(QuantizeLinearOp, op.x, scale, zero_point)
    return [y, scale, zero_point]


_EXPANSIONS: dict[type[GraphOp], tuple[Any, str]] = {
    QLinearConvOp: (_expand_qlinear_conv, "expanded-qlinear-convs"),
    QLinearMatMulOp: (_expand_qlinear_matmul, "expanded-qlinear-matmuls"),
    DynamicQuantizeLinearOp: (_expand_dynamic_quantize, "expanded-dynamic-quantize"),
}


@register_pass
@dataclass(frozen=True)
class ExpandQOperatorPass(ModulePass):
    """Under the ``int8`` precision, QLinearConv / QLinearMatMul become their QDQ pattern
    and DynamicQuantizeLinear its parameters op and a QuantizeLinear (ops with tile
    lowerings)."""

    name = "expand-qoperator"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        if target_of(op).precision != INT8_PRECISION:
            return
        for anchor in list(op.walk()):
            entry = _EXPANSIONS.get(type(anchor)) if isinstance(anchor, GraphOp) else None
            if entry is None:
                continue
            expand, statistic = entry
            seq = OpSequence(anchor)
            try:
                values = expand(anchor, seq)
            except ShapeError:
                values = None
            if values is None or any(
                new.type != old.type for new, old in zip(values, anchor.results, strict=True)
            ):
                seq.discard()
                continue
            replace_results(anchor, values)
            stats.add(statistic)
