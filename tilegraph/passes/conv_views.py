"""Views of ``[N, C, L]`` tensors as ``[N, C, 1, L]`` and back, for ``conv-forms``: a 1-D
convolution or conv_transpose runs as the 2-D one with H = 1. In the origin layout both
shapes are the same bytes, so the unsqueeze and squeeze move no data in meaning (tilegraph
has no buffer views: a lone one runs as a flat DMA copy)."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

from tilegraph.dialects.graph.shape_ops import SqueezeOp, UnsqueezeOp
from tilegraph.dialects.graph.windows import Axis
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.simplify.match import constant_array, ints_constant, new_constant

ROW_AXIS = Axis(1, 1, 1, 1, 0, 0, 1)
"""The H axis a 1-D window gets: size 1, kernel 1, stride 1, dilation 1, no padding."""


def static_type(value: SSAValue) -> TensorType | None:
    """``value``'s tensor type when every dim is a known int, else None."""
    t = value.type
    return t if isinstance(t, TensorType) and t.is_static else None


def as_rows(value: SSAValue, ops: list[Operation]) -> SSAValue:
    """``value`` ``[N, C, L]`` viewed as ``[N, C, 1, L]``: a constant reshaped, any other
    value unsqueezed at axis 2 (the new ops appended to ``ops``). The unsqueezed data is
    NCHW, the type a conv2d's result has: a squeeze of one 1-D convolution's result then
    has the type the next one's unsqueeze gives back, and ``squeeze-unsqueeze-inverse``
    (which keeps types) removes the pair."""
    array = constant_array(value)
    if array is not None:
        op: Operation = new_constant(array.reshape(array.shape[0], array.shape[1], 1, -1))
    else:
        axes = ints_constant([2])
        ops.append(axes)
        op = UnsqueezeOp.make(value, axes)
        rows = op.results[0].type
        if isinstance(rows, TensorType):
            Rewriter.replace_value_with_new_type(op.results[0], rows.with_origin_format("NCHW"))
    ops.append(op)
    return op.results[0]


def squeezed(value: SSAValue, ops: list[Operation]) -> SSAValue:
    """``value`` ``[N, M, 1, L]`` back as ``[N, M, L]`` (ops appended to ``ops``)."""
    axes = ints_constant([2])
    squeeze = SqueezeOp.make(value, axes)
    ops.extend([axes, squeeze])
    return squeeze.results[0]
