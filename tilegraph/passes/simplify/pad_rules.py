"""Pad, slice and concat rewrites: a pad of nothing (rule 14 ``noop-pad``), pads folded into
the implicit padding of a conv or pool (rules 30, 31), and slice / concat merges (rule 13).

Folding a pad into a windowed op is only sound when the op pads with the same value the Pad
wrote: convolutions pad with ``+0``; MaxPool with ``-inf`` (the lowest integer for integer
tensors); AveragePool with ``0`` but counts pads in the divisor only with
``count_include_pad = 1``, while the elements a Pad op wrote are always counted. Getting the
pool case wrong changes results (onnxruntime#22177), so each condition is checked here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.base import GraphOp
from tilegraph.dialects.graph.data_movement import ConcatOp, PadOp, SliceOp
from tilegraph.dialects.graph.nn import Conv2dOp, ConvOp
from tilegraph.dialects.graph.operand_values import static_dim
from tilegraph.dialects.graph.pooling import AvgPoolOp, MaxPoolOp
from tilegraph.dialects.graph.slicing import slice_bounds
from tilegraph.passes.simplify.match import (
    constant_ints,
    in_origin_view,
    ints_constant,
    is_float,
    is_splat_of,
    make_typed,
    numpy_dtype,
    only_user,
    replace_with_ops,
    replace_with_value,
    tensor_type_of,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule


def pad_widths(op: PadOp) -> list[tuple[int, int]] | None:
    """(begin, end) per dim of the data for constant ``pads`` (and ``axes``), else None."""
    t = tensor_type_of(op.data)
    pads = constant_ints(op.pads)
    if t is None or pads is None:
        return None
    axes = tuple(range(t.rank)) if op.axes is None else constant_ints(op.axes)
    if axes is None or len(pads) != 2 * len(axes):
        return None
    widths = [(0, 0)] * t.rank
    k = len(axes)
    for i, a in enumerate(axes):
        if not -t.rank <= a < t.rank:
            return None
        widths[a % t.rank] = (pads[i], pads[i + k])
    return widths


def _pads_with(op: PadOp, value: float | int) -> bool:
    """Whether ``op`` is a constant-mode pad whose fill is ``value`` (+0.0 for a float
    zero: a ``-0.0`` fill is not what a conv pads with)."""
    if op.attr("mode") != "constant":
        return False
    if op.constant_value is None:
        return value == 0
    if is_float(op.data):
        return is_splat_of(op.constant_value, float(value))
    return is_splat_of(op.constant_value, value, signed_zero=False)


def _spatial_pads(pad: PadOp) -> list[int] | None:
    """The pad as ONNX window ``pads`` ``[b1, ..., bn, e1, ..., en]`` over the spatial dims
    of an ``[N, C, *spatial]`` tensor; None unless N and C are unpadded and no spatial
    width is negative (a crop cannot become window padding)."""
    widths = pad_widths(pad)
    if widths is None or len(widths) < 3 or widths[0] != (0, 0) or widths[1] != (0, 0):
        return None
    spatial = widths[2:]
    if any(b < 0 or e < 0 for b, e in spatial):
        return None
    return [b for b, _ in spatial] + [e for _, e in spatial]


def _fold_pad(
    rewriter: PatternRewriter, op: GraphOp, pad: PadOp, extra: dict[str, Any] | None = None
) -> None:
    """Replace window op ``op`` (data input ``pad``) by the same op on the pad's input with
    the pad's widths added to its ``pads`` (plus ``extra`` attributes), if the result type
    stays (the shape function also rejects pool pads >= kernel)."""
    added = _spatial_pads(pad)
    if added is None:
        return
    own = op.attr("pads") or (0,) * len(added)
    if len(own) != len(added):
        return
    attrs: dict[str, Any] = dict(op.properties)
    attrs["pads"] = [a + b for a, b in zip(own, added, strict=True)]
    attrs.update(extra or {})
    slots = op.operand_slots()
    new = make_typed(type(op), pad.data, *slots[1:], like=op.results[0].type, **attrs)
    if new is not None:
        replace_with_ops(rewriter, op, [new])


def _padded_input(op: Conv2dOp | ConvOp | MaxPoolOp | AvgPoolOp) -> PadOp | None:
    """The Pad that produces ``op``'s data input and has no other user, in origin view."""
    pad = op.input.owner
    if not isinstance(pad, PadOp) or only_user(pad.output) is not op:
        return None
    if op.attr("auto_pad") != "NOTSET" or not in_origin_view(pad) or not in_origin_view(op):
        return None
    return pad


# ---- rule 14: noop-pad ------------------------------------------------------------------------


@simplify_rule
class NoopPad(SimplifyRule):
    """``pad(x, pads)`` -> ``x`` when ``pads`` is a constant of all 0s (any mode, any fill:
    nothing is added or removed)."""

    INFO = RuleInfo(
        14,
        "noop-pad",
        "pad(x, [0, ..., 0])",
        "x",
        "constant pads",
        "OO ORT TVM GE OM PT",
    )
    ROOTS = (PadOp,)

    def rewrite(self, op: PadOp, rewriter: PatternRewriter) -> None:
        pads = constant_ints(op.pads)
        if pads is not None and not any(pads) and in_origin_view(op):
            replace_with_value(rewriter, op, op.data)


# ---- rule 30: pad into conv -------------------------------------------------------------------


@simplify_rule
class PadIntoConv(SimplifyRule):
    """``conv(pad(x, p), w, b)`` -> ``conv(x, w, b, pads += p)`` for ``graph.conv2d`` and
    ``graph.conv``, when the pad is in constant mode with fill ``+0`` (or none), pads only
    the spatial dims by non-negative amounts, has the conv as its only user and feeds its
    data input, and the conv has ``auto_pad`` NOTSET (SAME pads depend on the input size,
    VALID ignores ``pads``). A conv pads with zeros, which then equal the pad's elements."""

    INFO = RuleInfo(
        30,
        "pad-into-conv",
        "conv(pad(x, p, mode=constant, value=0), w, b)",
        "conv(x, w, b) with pads + p",
        "fill +0 or absent; spatial dims only, p >= 0; the pad has one user; auto_pad NOTSET",
        "OO ORT TVM GE OM",
    )
    ROOTS = (Conv2dOp, ConvOp)

    def rewrite(self, op: Conv2dOp | ConvOp, rewriter: PatternRewriter) -> None:
        pad = _padded_input(op)
        if pad is not None and _pads_with(pad, 0):
            _fold_pad(rewriter, op, pad)


# ---- rule 31: pad into pool -------------------------------------------------------------------


def _lowest(value: SSAValue) -> float | int | None:
    """The value MaxPool pads ``value``'s element type with: -inf, or the integer minimum."""
    dtype = numpy_dtype(value)
    if dtype is None or dtype.kind not in "fiu":
        return None
    return -np.inf if dtype.kind == "f" else int(np.iinfo(dtype).min)


@simplify_rule
class PadIntoPool(SimplifyRule):
    """``pool(pad(x, p))`` -> ``pool(x, pads += p)`` under the pool's own padding rule:

    * MaxPool: the pad's fill is ``-inf`` (integers: the type's minimum), the value a
      max pool pads with;
    * AveragePool: the fill is ``+0`` (or none) and the pool counts pads in the divisor
      (``count_include_pad = 1``), as it counted the pad's elements; a pool with
      ``count_include_pad = 0`` and no pads of its own gets ``count_include_pad = 1``.

    Otherwise never (onnxruntime#22177 folded a zero pad into a non-counting AveragePool).
    Also: constant mode, spatial dims only, ``p >= 0``, the pad's only user, auto_pad
    NOTSET, and the summed pads smaller than the kernel (the pool's own rule).
    """

    INFO = RuleInfo(
        31,
        "pad-into-pool",
        "max_pool(pad(x, p, -inf)), avg_pool(pad(x, p, 0))",
        "pool(x) with pads + p",
        "MaxPool: fill -inf; AvgPool: fill 0 and count_include_pad = 1 (set when the pool "
        "has no pads); spatial, p >= 0, one user, auto_pad NOTSET (ORT#22177)",
        "ORT TVM GE",
    )
    ROOTS = (MaxPoolOp, AvgPoolOp)

    def rewrite(self, op: MaxPoolOp | AvgPoolOp, rewriter: PatternRewriter) -> None:
        pad = _padded_input(op)
        if pad is None:
            return
        if isinstance(op, MaxPoolOp):
            low = _lowest(pad.data)
            if low is not None and _pads_with(pad, low):
                _fold_pad(rewriter, op, pad)
            return
        if not _pads_with(pad, 0):
            return
        if op.attr("count_include_pad"):
            _fold_pad(rewriter, op, pad)
        elif not any(op.attr("pads") or ()):
            _fold_pad(rewriter, op, pad, {"count_include_pad": 1})


# ---- rule 13: slice and concat merges ---------------------------------------------------------

SliceParams = dict[int, tuple[int, int, int]]
"""Per normalised axis: (start, end, step) as written."""


def slice_params(op: SliceOp) -> SliceParams | None:
    """A slice's constant parameters by normalised axis, else None."""
    t = tensor_type_of(op.data)
    starts, ends = constant_ints(op.starts), constant_ints(op.ends)
    if t is None or starts is None or ends is None:
        return None
    axes = tuple(range(len(starts))) if op.axes is None else constant_ints(op.axes)
    steps = (1,) * len(starts) if op.steps is None else constant_ints(op.steps)
    if axes is None or steps is None or not len(axes) == len(starts) == len(ends) == len(steps):
        return None
    if any(not -t.rank <= a < t.rank for a in axes):
        return None
    params = zip(axes, starts, ends, steps, strict=True)
    return {a % t.rank: (s, e, st) for a, s, e, st in params}


def compose_slices(dim: int, inner: tuple[int, int, int], outer: tuple[int, int, int]):
    """One (start, end, step) on an axis of static size ``dim`` that takes what slicing with
    ``inner`` then ``outer`` takes; None unless both steps are positive.

    The inner slice takes ``x[b0 + k * s1]`` for ``k < n1``; the outer one takes its
    elements ``c0 + j * s2`` for ``j < n2``: ``x[b0 + c0 * s1 + j * s1 * s2]``.
    """
    (s1, e1, st1), (s2, e2, st2) = inner, outer
    if st1 <= 0 or st2 <= 0:
        return None
    b0, _, n1 = slice_bounds(dim, s1, e1, st1)
    c0, _, n2 = slice_bounds(n1, s2, e2, st2)
    if n2 == 0:
        return (0, 0, 1)
    start, step = b0 + c0 * st1, st1 * st2
    return (start, start + (n2 - 1) * step + 1, step)


@simplify_rule
class MergeSlices(SimplifyRule):
    """``slice(slice(x, p1), p2)`` -> ``slice(x, p)``: axes sliced by one of the two keep
    their parameters; an axis sliced by both is composed (:func:`compose_slices`), which
    needs its dim static and both steps positive. All parameters constant."""

    INFO = RuleInfo(
        13,
        "merge-slices",
        "slice(slice(x, p1), p2)",
        "slice(x, p)",
        "constant parameters; an axis sliced twice needs a static dim and positive steps",
        "ORT GE OM",
    )
    ROOTS = (SliceOp,)

    def rewrite(self, op: SliceOp, rewriter: PatternRewriter) -> None:
        inner = op.data.owner
        if not isinstance(inner, SliceOp) or not in_origin_view(op) or not in_origin_view(inner):
            return
        t = tensor_type_of(inner.data)
        p1, p2 = slice_params(inner), slice_params(op)
        if t is None or p1 is None or p2 is None:
            return
        merged = dict(p1)
        for axis, outer in p2.items():
            if axis not in p1:
                merged[axis] = outer
                continue
            dim = static_dim(t.origin_shape[axis])
            both = None if dim is None else compose_slices(dim, p1[axis], outer)
            if both is None:
                return
            merged[axis] = both
        axes = sorted(merged)
        consts = [ints_constant([merged[a][i] for a in axes]) for i in range(3)]
        consts.insert(2, ints_constant(axes))
        if all(merged[a][2] == 1 for a in axes):
            consts.pop()
        new = make_typed(SliceOp, inner.data, *consts, like=op.output.type)
        if new is not None:
            replace_with_ops(rewriter, op, [*consts, new])


def _flat_inputs(op: ConcatOp, axis: int) -> Sequence[SSAValue] | None:
    """``op``'s inputs with every single-use concat on the same axis spliced in; None
    when there is none to splice."""
    out: list[SSAValue] = []
    spliced = False
    for v in op.inputs:
        inner = v.owner
        if (
            isinstance(inner, ConcatOp)
            and only_user(v) is op
            and in_origin_view(inner)
            and _axis(inner) == axis
        ):
            out.extend(inner.inputs)
            spliced = True
        else:
            out.append(v)
    return out if spliced else None


def _axis(op: ConcatOp) -> int | None:
    t = tensor_type_of(op.concat_result)
    axis = op.attr("axis")
    if t is None or axis is None or not -t.rank <= axis < t.rank:
        return None
    return axis % t.rank


@simplify_rule
class MergeConcats(SimplifyRule):
    """``concat(a, concat(b, c, axis), d, axis)`` -> ``concat(a, b, c, d, axis)`` when the
    inner concat is on the same (normalised) axis and has no other user (else its result
    would be built twice)."""

    INFO = RuleInfo(
        13,
        "merge-concats",
        "concat(..., concat(b, c, axis), ..., axis)",
        "concat(..., b, c, ..., axis)",
        "same normalised axis; the inner concat has no other user",
        "ORT TVM GE OM",
    )
    ROOTS = (ConcatOp,)

    def rewrite(self, op: ConcatOp, rewriter: PatternRewriter) -> None:
        axis = _axis(op)
        if axis is None or not in_origin_view(op):
            return
        inputs = _flat_inputs(op, axis)
        if inputs is None:
            return
        new = make_typed(ConcatOp, *inputs, like=op.concat_result.type, axis=op.attr("axis"))
        if new is not None:
            replace_with_ops(rewriter, op, [new])
