"""Integer sums the vector unit can do exactly: ``count-in-float``, ``sum-in-int32``.

Exporters count a mask's true elements as an integer sum: ``(x > bounds).sum(-1)`` (the
TorchScript exporter's ``torch.bucketize``), ``attention_mask.sum(1)`` (sequence
lengths), ``(ids != pad).sum()``: ``ReduceSum(Cast(mask -> int64))``; a MoE router counts
the tokens per expert as the int64 sum of a float one-hot (JetMoE:
``ReduceSum(Cast(ScatterElements(zeros, ids, ones) -> int64))``). The vector unit has no
64-bit integer arithmetic, so such a sum stays on the host. Summed in float32 the same
count is exact while ``count x M`` is at most ``2**24`` for values of magnitude at most
``M`` that are all integers — every partial sum is then an integer float32 holds — so::

    ReduceSum(Cast(x -> T))  ->  Cast(ReduceSum(x as f32) -> T)

(``count-in-float``) for an integer ``T`` that holds ``count x M``, the reduced dims
static, ``x`` a bool mask (``M = 1``) or a float tensor whose values are integers of a
bound known when compiling (:func:`integral_bound`: constants, and what moves, broadcasts,
scatters or selects them). A sum of narrower integers cast up (int8, uint8, int16, uint16)
is an int32 sum instead, which the vector unit adds exactly (``sum-in-int32``), while
``count x M < 2**31`` for ``M`` the narrow type's largest magnitude. GE's ReduceSum has no
int64 kernel on the AI core either; its int64 sums run on AI CPU.
"""

from __future__ import annotations

from math import prod

import numpy as np
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.base import constant_value
from tilegraph.dialects.graph.constant_ops import ConstantOfShapeOp
from tilegraph.dialects.graph.data_movement import ExpandOp
from tilegraph.dialects.graph.dense import DenseAttr
from tilegraph.dialects.graph.elementwise import CastOp, onnx_dtype_code
from tilegraph.dialects.graph.indexing import ScatterElementsOp, ScatterNDOp
from tilegraph.dialects.graph.logical import WhereOp
from tilegraph.dialects.graph.operand_values import ints_operand, normalize_axes
from tilegraph.dialects.graph.reduction import ReduceSumOp
from tilegraph.dialects.graph.shape_ops import ReshapeLikeOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.simplify.match import in_origin_view, replace_if_typed
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule

EXACT_FLOAT32_COUNT = 2**24
"""The largest count of ones a float32 sum reaches exactly (its 24-bit significand)."""

EXACT_INT32_SUM = 2**31 - 1
"""The largest magnitude an int32 sum holds."""

_BOUND_DEPTH = 8
"""How many producers :func:`integral_bound` looks through."""


def _array_bound(data: np.ndarray) -> int | None:
    """The largest magnitude of ``data`` when every element is an integer, else None."""
    values = np.asarray(data)
    if values.dtype == np.bool_:
        return 1
    if values.size == 0:
        return 0
    if values.dtype.kind in "iu":
        return int(np.abs(values.astype(np.int64)).max())
    if values.dtype.kind != "f" or not np.isfinite(values).all():
        return None
    if (values != np.round(values)).any():
        return None
    return int(np.abs(values).max())


def integral_bound(value: SSAValue, depth: int = 0) -> int | None:
    """The largest magnitude of the values of ``value`` when each is known, when compiling,
    to be an integer within it: a bool tensor (1), a constant (or constant-of-shape fill)
    of integers, and an expand / reshape-like move, a scatter (``none``), a where or a cast
    to float32 / float64 of such values. None when not known."""
    t = value.type
    if isinstance(t, TensorType) and np.dtype(t.dtype.numpy) == np.bool_:
        return 1
    data = constant_value(value)
    if data is not None:
        return _array_bound(data)
    owner = value.owner
    if depth >= _BOUND_DEPTH:
        return None
    if isinstance(owner, ConstantOfShapeOp):
        fill = owner.properties.get("value")
        if not isinstance(fill, DenseAttr):
            return 0  # ONNX's default fill, 0.0
        return None if fill.array is None else _array_bound(fill.array)
    sources: list[SSAValue] = []
    if isinstance(owner, ExpandOp | ReshapeLikeOp):
        sources = [owner.operands[0]]
    elif isinstance(owner, ScatterElementsOp | ScatterNDOp):
        if str(owner.attr("reduction")) != "none":
            return None
        sources = [owner.operands[0], owner.operands[2]]
    elif isinstance(owner, WhereOp):
        sources = list(owner.operands[1:])
    elif isinstance(owner, CastOp) and isinstance(t, TensorType):
        if np.dtype(t.dtype.numpy) not in (np.float32, np.float64):
            return None
        sources = [owner.input]
    bounds = [integral_bound(v, depth + 1) for v in sources]
    if not bounds or any(b is None for b in bounds):
        return None
    return max(b for b in bounds if b is not None)


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


def _cast_sum(op: ReduceSumOp) -> tuple[CastOp, TensorType, TensorType, int] | None:
    """The integer cast ``op`` sums (in the origin view), its source and result types and
    the count of elements each result element sums; None when ``op`` is not such a sum."""
    cast = op.data.owner  # other readers of the integer tensor keep their Cast
    if not isinstance(cast, CastOp) or not in_origin_view(cast):
        return None
    source, result = cast.input.type, op.results[0].type
    if not isinstance(source, TensorType) or not isinstance(result, TensorType):
        return None
    if np.dtype(result.dtype.numpy).kind not in "iu":
        return None
    count = reduced_count(op, source)
    return None if count is None else (cast, source, result, count)


def _resum(rewriter: PatternRewriter, op: ReduceSumOp, cast: CastOp, to: str) -> None:
    """``op`` as the sum of its cast's source in ``to`` (cast there unless it is already),
    cast to the sum's integer type."""
    source = cast.input
    source_type = source.type
    assert isinstance(source_type, TensorType)
    ops = []
    if np.dtype(source_type.dtype.numpy) != np.dtype(to):
        ops.append(CastOp.make(source, to=onnx_dtype_code(to)))
        source = ops[-1].results[0]
    axes = [] if op.axes is None else [op.axes]
    ops.append(
        ReduceSumOp.make(
            source,
            *axes,
            keepdims=op.attr("keepdims"),
            noop_with_empty_axes=op.attr("noop_with_empty_axes"),
        )
    )
    ops.append(CastOp.make(ops[-1].results[0], **cast.conversion_attrs()))
    replace_if_typed(rewriter, op, ops)


@simplify_rule
class CountInFloat(SimplifyRule):
    INFO = RuleInfo(
        None,
        "count-in-float",
        "ReduceSum(Cast(x: bool, or float of integers within M -> integer T))",
        "Cast(ReduceSum(x as f32) -> T)",
        "the reduced dims static, count x M at most 2**24 for each sum, and T holds it",
        "",
    )
    ROOTS = (ReduceSumOp,)

    def rewrite(self, op: ReduceSumOp, rewriter: PatternRewriter) -> None:
        found = _cast_sum(op)
        if found is None:
            return
        cast, source, result, count = found
        if np.dtype(source.dtype.numpy).kind not in "bf":
            return
        bound = integral_bound(cast.input)
        if bound is None or count * bound > EXACT_FLOAT32_COUNT:
            return
        if count * bound > np.iinfo(np.dtype(result.dtype.numpy)).max:
            return
        _resum(rewriter, op, cast, "float32")


@simplify_rule
class SumInInt32(SimplifyRule):
    INFO = RuleInfo(
        None,
        "sum-in-int32",
        "ReduceSum(Cast(x: int8 / uint8 / int16 / uint16 -> int64))",
        "Cast(ReduceSum(Cast(x -> int32)) -> int64)",
        "the reduced dims static and count x max |x's type| < 2**31",
        "",
    )
    ROOTS = (ReduceSumOp,)

    def rewrite(self, op: ReduceSumOp, rewriter: PatternRewriter) -> None:
        found = _cast_sum(op)
        if found is None:
            return
        cast, source, result, count = found
        narrow = np.dtype(source.dtype.numpy)
        if (
            narrow.kind not in "iu"
            or narrow.itemsize > 2
            or np.dtype(result.dtype.numpy) != np.int64
        ):
            return
        magnitude = max(abs(int(np.iinfo(narrow).min)), int(np.iinfo(narrow).max))
        if count * magnitude > EXACT_INT32_SUM:
            return
        _resum(rewriter, op, cast, "int32")
