"""``fold-qdq``: QDQ convolutions become int8 cube ops, under the ``int8`` precision.

A QDQ model (onnxruntime's ``quantize_static`` with ``QuantFormat.QDQ``, or any exporter of
that format) computes each quantised convolution as::

    Conv(DequantizeLinear(x_q, sx), DequantizeLinear(w_q, sw, axis=0), DequantizeLinear(b_q, sx·sw))

with int8 ``x_q`` (usually a QuantizeLinear's result), int8 constant weights ``w_q`` (per
tensor or per output channel) and an int32 constant bias. When the module's target
precision is ``int8`` (:mod:`tilegraph.target`), this pass replaces every such Conv by
``graph.quant_conv2d(x_q, w_q, b_q, sx·sw)`` (:mod:`~tilegraph.dialects.graph.quantized_cube`):
int8 operands on the cube, int32 accumulation, the dequantisation per output channel in
fixpipe. The DequantizeLinear ops left without users go with the next ``dce``; the
QuantizeLinear ops stay (vector programs).

Semantics: the result is ``(Σ x_q·w_q + b_q) · (sx·sw)`` rounded once, which is what
onnxruntime computes for the pattern (it runs it as an integer QLinearConv); the float
graph rounds the dequantised operands and every partial sum, so the two differ by a few
ulp, and after the next QuantizeLinear by at most one quantisation step where a value
sits on a rounding boundary.

What is folded: 2-D convolutions whose data and weight zero points are 0 (symmetric
quantisation: ``x_q`` padded with 0 is then exactly the float padding), whose bias (if
any) is an int32 constant with scale ``sx·sw`` (as onnxruntime makes it), and whose
scales are float32/float16 constants. Anything else keeps the float path (its Q/DQ run as
vector programs). A module under ``int8`` with no QuantizeLinear / DequantizeLinear at
all is an error: ``int8`` is the precision of models that carry their quantisation.
Under any other precision the pass changes nothing.

Statistics: ``folded-convs``, ``kept-convs`` (Convs with a DQ operand not folded).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from tilegraph.dialects.graph.base import ShapeError
from tilegraph.dialects.graph.constant_ops import ConstantOp
from tilegraph.dialects.graph.nn import Conv2dOp
from tilegraph.dialects.graph.quantize import DequantizeLinearOp, QuantizeLinearOp
from tilegraph.dialects.graph.quantized_cube import QuantConv2dOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType
from tilegraph.passes.registry import register_pass
from tilegraph.passes.simplify.match import constant_array
from tilegraph.passes.statistics import start_pass
from tilegraph.target import target_of

INT8_PRECISION = "int8"


@dataclass(frozen=True)
class _Dequantized:
    """A DequantizeLinear operand: its quantised value, scale and (constant) data."""

    value: SSAValue
    scale: np.ndarray
    data: np.ndarray | None
    axis: int


def _dequantized(value: SSAValue | None, dtype: DType) -> _Dequantized | None:
    """``value`` as DequantizeLinear(q, constant scale, zero point 0) of a ``dtype`` q (per
    tensor or per axis, no blocks), else None."""
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
    if dq.x_zero_point is not None:
        zero = constant_array(dq.x_zero_point)
        if zero is None or zero.any():
            return None
    axis = int(dq.attr("axis")) % max(q.rank, 1)
    return _Dequantized(dq.x, scale, constant_array(dq.x), axis)


def _fold_conv(conv: Conv2dOp) -> Operation | None:
    """The ``graph.quant_conv2d`` that replaces ``conv``, its constants inserted before it;
    None when ``conv`` is not a foldable QDQ convolution."""
    x = _dequantized(conv.input, DType.int8)
    w = _dequantized(conv.weight, DType.int8)
    if x is None or w is None or w.data is None or x.scale.size != 1:
        return None
    m = w.data.shape[0]
    if w.scale.size not in (1, m) or (w.scale.size == m > 1 and w.axis != 0):
        return None
    scale_type = x.scale.dtype
    if w.scale.dtype != scale_type:
        return None
    # sx · sw in the scales' type: what onnxruntime's quantiser gives the bias as its scale
    scale = (x.scale.reshape(()) * w.scale.reshape(-1)).astype(scale_type)
    scale = np.broadcast_to(scale, (m,)).copy()
    if conv.bias is None:
        bias = np.zeros(m, np.int32)
    else:
        b = _dequantized(conv.bias, DType.int32)
        if (
            b is None
            or b.data is None
            or not np.array_equal(np.broadcast_to(b.scale.reshape(-1), (m,)), scale)
        ):
            return None
        bias = b.data.reshape(-1)
    out = conv.output.type
    constants = [ConstantOp(bias.astype(np.int32)), ConstantOp(scale)]
    operands = [x.value, w.value, *(c.output for c in constants)]
    try:
        (want,) = QuantConv2dOp.infer_shapes(operands, conv.properties)
    except ShapeError:
        return None
    if want != out:
        return None
    Rewriter.insert_op(constants, InsertPoint.before(conv))
    return QuantConv2dOp.create(
        operands=operands, result_types=[out], properties=dict(conv.properties)
    )


@register_pass
@dataclass(frozen=True)
class FoldQdqPass(ModulePass):
    """Under the ``int8`` precision, QDQ convolutions become ``graph.quant_conv2d``."""

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
        for conv in ops:
            if not isinstance(conv, Conv2dOp):
                continue
            folded = _fold_conv(conv)
            if folded is None:
                if isinstance(conv.input.owner, DequantizeLinearOp):
                    stats.add("kept-convs")
                continue
            folded.results[0].name_hint = conv.output.name_hint
            Rewriter.replace_op(conv, folded)
            stats.add("folded-convs")
