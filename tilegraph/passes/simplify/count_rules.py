"""Counting true elements in float32: ``count-in-float``.

Exporters count a mask's true elements as an integer sum: ``(x > bounds).sum(-1)`` (the
TorchScript exporter's ``torch.bucketize``), ``attention_mask.sum(1)`` (sequence
lengths), ``(ids != pad).sum()``: ``ReduceSum(Cast(mask -> int64))``. The vector unit has
no 64-bit (nor 32-bit) integer reduction, so such a sum stays on the host. Summed in
float32 the same count is exact while it is below ``2**24`` — every partial sum of 0s and
1s is an integer no greater than the number of elements reduced, and float32 holds every
integer up to ``2**24`` — so::

    ReduceSum(Cast(mask -> T))  ->  Cast(ReduceSum(Cast(mask -> f32)) -> T)

for an integer ``T`` wide enough for the count (the count is then the same in ``T``), the
reduced dims static and their product at most ``2**24``. GE's ReduceSum has no int64
kernel on the AI core either; its int64 sums run on AI CPU.
"""

from __future__ import annotations

from math import prod

import numpy as np
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.elementwise import CastOp, onnx_dtype_code
from tilegraph.dialects.graph.operand_values import ints_operand, normalize_axes
from tilegraph.dialects.graph.reduction import ReduceSumOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.simplify.match import in_origin_view, replace_if_typed
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule

EXACT_FLOAT32_COUNT = 2**24
"""The largest count of ones a float32 sum reaches exactly (its 24-bit significand)."""


def reduced_count(op: ReduceSumOp, x: TensorType) -> int | None:
    """How many elements each result element of ``op`` sums (None: not known when compiling:
    run-time axes or an unknown reduced dim)."""
    axes = ints_operand(op.axes, "axes")
    if axes is not None and axes.values is None:
        return None
    listed = list(axes.values) if axes is not None and axes.values is not None else []
    if not listed and int(op.attr("noop_with_empty_axes") or 0):
        return 1
    dims = [x.origin_shape[a] for a in normalize_axes(listed, x.rank)] if listed else x.origin_shape
    if not all(isinstance(d, int) and d >= 0 for d in dims):
        return None
    return prod(int(d) for d in dims)  # type: ignore[arg-type]


@simplify_rule
class CountInFloat(SimplifyRule):
    INFO = RuleInfo(
        None,
        "count-in-float",
        "ReduceSum(Cast(mask: bool -> integer T))",
        "Cast(ReduceSum(Cast(mask -> f32)) -> T)",
        "the reduced dims static, at most 2**24 elements each sum, and T holds that count",
        "",
    )
    ROOTS = (ReduceSumOp,)

    def rewrite(self, op: ReduceSumOp, rewriter: PatternRewriter) -> None:
        cast = op.data.owner  # other readers of the integer mask keep their Cast
        if not isinstance(cast, CastOp) or not in_origin_view(cast):
            return
        mask, result = cast.input.type, op.results[0].type
        if not isinstance(mask, TensorType) or not isinstance(result, TensorType):
            return
        if np.dtype(mask.dtype.numpy) != np.bool_ or np.dtype(result.dtype.numpy).kind not in "iu":
            return
        count = reduced_count(op, mask)
        if count is None or count > EXACT_FLOAT32_COUNT:
            return
        if count > np.iinfo(np.dtype(result.dtype.numpy)).max:
            return
        as_float = CastOp.make(cast.input, to=onnx_dtype_code("float32"))
        axes = [] if op.axes is None else [op.axes]
        total = ReduceSumOp.make(
            as_float,
            *axes,
            keepdims=op.attr("keepdims"),
            noop_with_empty_axes=op.attr("noop_with_empty_axes"),
        )
        back = CastOp.make(total, **cast.conversion_attrs())
        replace_if_typed(rewriter, op, [as_float, total, back])
