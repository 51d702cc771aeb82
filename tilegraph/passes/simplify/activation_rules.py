"""Activation rules: idempotent unaries, Relu/Clip merging, arg-max through monotone maps,
log of softmax (rules 25-28 and extras).

Clip semantics are the reference kernel's: ``clip(x, lo, hi) = minimum(maximum(x, lo), hi)``
(numpy; NaN propagates, ``lo > hi`` gives ``hi``), with an absent bound skipped, and
``relu(x) = maximum(x, 0)``, i.e. ``clip(x, +0, none)``. The composition of two clips is
one clip, see :func:`_compose`.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.elementwise import (
    AbsOp,
    CeilOp,
    ClipOp,
    ExpOp,
    FloorOp,
    LogOp,
    NegOp,
    ReluOp,
    SigmoidOp,
    SignOp,
    TanhOp,
)
from tilegraph.dialects.graph.nn import LogSoftmaxOp, SoftmaxOp
from tilegraph.dialects.graph.reduction import ArgMaxOp, ArgMinOp, ArgReduceOp
from tilegraph.passes.simplify.match import (
    constant_array,
    in_origin_view,
    is_float,
    make_typed,
    numpy_dtype,
    only_user,
    replace_with_ops,
    replace_with_value,
    scalar_constant,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule

# ---- rule 25: idempotent unaries --------------------------------------------------------------

_IDEMPOTENT = (ReluOp, FloorOp, CeilOp, SignOp, AbsOp)


@simplify_rule
class IdempotentUnary(SimplifyRule):
    """``f(f(x))`` -> ``f(x)`` for f in Relu, Floor, Ceil, Sign, Abs.

    Exact: each maps its own image to itself, NaN to NaN, and keeps the sign of zero it
    produced (``sign(±0)``, ``floor(-0.0)`` are fixed points). The inner op stays if it
    has other users. (ONNX Round has no graph op here.)
    """

    INFO = RuleInfo(
        25,
        "idempotent-unary",
        "f(f(x)), f in relu floor ceil sign abs",
        "f(x)",
        "",
        "ORT TVM OM PT",
    )
    ROOTS = _IDEMPOTENT

    def rewrite(self, op: ReluOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if isinstance(inner, _IDEMPOTENT) and type(inner) is type(op) and in_origin_view(op):
            if in_origin_view(inner):
                replace_with_value(rewriter, op, op.input)


@simplify_rule
class ReluOfAbs(SimplifyRule):
    """``relu(abs(x))`` -> ``abs(x)`` for floats: ``abs`` gives ``+0.0`` or more (or NaN),
    which ``maximum(., 0)`` keeps. Not for integers: ``abs(INT_MIN)`` is negative."""

    INFO = RuleInfo(
        None,
        "relu-of-abs",
        "relu(abs(x))",
        "abs(x)",
        "floats only (abs(INT_MIN) < 0)",
        "TVM",
    )
    ROOTS = (ReluOp,)

    def rewrite(self, op: ReluOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if isinstance(inner, AbsOp) and is_float(op.input) and in_origin_view(op):
            replace_with_value(rewriter, op, op.input)


@simplify_rule
class AbsOfNeg(SimplifyRule):
    """``abs(neg(x))`` -> ``abs(x)``. Exact: abs clears the sign bit that neg flips (also
    of NaN); for wrapping integers ``abs(-INT_MIN) == abs(INT_MIN)``."""

    INFO = RuleInfo(None, "abs-of-neg", "abs(neg(x))", "abs(x)", "", "TVM")
    ROOTS = (AbsOp,)

    def rewrite(self, op: AbsOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if isinstance(inner, NegOp) and in_origin_view(op) and in_origin_view(inner):
            new = make_typed(AbsOp, inner.input, like=op.output.type)
            if new is not None:
                replace_with_ops(rewriter, op, [new])


# ---- rule 26: clip / relu ---------------------------------------------------------------------

Bounds = tuple[np.generic | None, np.generic | None]
"""(lo, hi) as numpy scalars of the data's element type; None for an absent bound."""


def _bound(value: SSAValue | None) -> tuple[bool, np.generic | None]:
    """(readable, scalar): absent -> (True, None); constant rank-0 non-NaN -> (True, v)."""
    if value is None:
        return True, None
    data = constant_array(value)
    if data is None or data.shape != ():
        return False, None
    v: np.generic = data.reshape(1)[0]
    if data.dtype.kind == "f" and np.isnan(v):
        return False, None
    return True, v


def _bounds(op: ClipOp | ReluOp) -> Bounds | None:
    """The bounds of a clip (None if one is not a constant) or of a relu (``+0``, none)."""
    dtype = numpy_dtype(op.input)
    if dtype is None or dtype.kind not in "fiu":
        return None
    if isinstance(op, ReluOp):
        return dtype.type(0), None
    ok_lo, lo = _bound(op.min)
    ok_hi, hi = _bound(op.max)
    return (lo, hi) if ok_lo and ok_hi else None


def _extremes(dtype: np.dtype) -> tuple[np.generic, np.generic]:
    if dtype.kind == "f":
        return dtype.type(-np.inf), dtype.type(np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.min), dtype.type(info.max)


def _apply(v: np.generic, bounds: Bounds) -> np.generic:
    """The reference clip on one scalar."""
    lo, hi = bounds
    if lo is not None:
        v = np.maximum(v, lo)
    if hi is not None:
        v = np.minimum(v, hi)
    return v


def _mixed_zero_signs(dtype: np.dtype, *all_bounds: Bounds) -> bool:
    """Whether the float bounds include both ``+0.0`` and ``-0.0``: numpy's maximum and
    minimum return one operand of a tie depending on the operand order, so the merged
    clip could produce the other zero."""
    if dtype.kind != "f":
        return False
    signs = {bool(np.signbit(b)) for bs in all_bounds for b in bs if b is not None and b == 0}
    return len(signs) > 1


def _compose(dtype: np.dtype, inner: Bounds, outer: Bounds) -> Bounds:
    """Bounds of ``clip(clip(x, inner), outer)`` as one clip.

    ``outer`` is monotone, so ``outer(median(l1, x, h1)) = median(outer(l1), outer(x),
    outer(h1))``; the new range ``[outer(l1), outer(h1)]`` lies inside outer's, hence this
    is ``clip(x, outer(l1), outer(h1))``. With ``l1 > h1`` (the inner clip is constant
    ``h1``) the new ``lo >= hi`` and the clip gives ``outer(h1)`` too; with ``l2 > h2``
    both sides are ``h2``. NaN propagates on both sides. An absent bound is the extreme
    value of the type, and a new bound equal to it is left out (``maximum(x, -inf) == x``).
    """
    low, high = _extremes(dtype)
    lo1 = low if inner[0] is None else inner[0]
    hi1 = high if inner[1] is None else inner[1]
    lo, hi = _apply(lo1, outer), _apply(hi1, outer)
    return (None if lo == low else lo), (None if hi == high else hi)


def _bound_value(v: np.generic | None, reuse: list[SSAValue | None], like: SSAValue):
    """An SSA value for bound ``v``: an existing equal constant operand if there is one
    (same value and sign), else a new rank-0 constant op; (value, new ops)."""
    if v is None:
        return None, []
    for candidate in reuse:
        data = None if candidate is None else constant_array(candidate)
        if data is not None and data.shape == () and data[()] == v:
            if data.dtype.kind != "f" or np.signbit(data[()]) == np.signbit(v):
                return candidate, []
    const = scalar_constant(v, like)
    return const.output, [const]


def _merge_clips(op: ClipOp | ReluOp, rewriter: PatternRewriter) -> None:
    """Rewrite ``op`` (a clip or relu of a clip or relu with no other user) as one clip."""
    inner = op.input.owner
    if not isinstance(inner, ClipOp | ReluOp) or only_user(op.input) is not op:
        return
    if not (in_origin_view(op) and in_origin_view(inner)):
        return
    dtype = numpy_dtype(inner.input)
    outer_b, inner_b = _bounds(op), _bounds(inner)
    if dtype is None or outer_b is None or inner_b is None:
        return
    if _mixed_zero_signs(dtype, outer_b, inner_b):
        return
    lo, hi = _compose(dtype, inner_b, outer_b)
    reuse = [v for o in (op, inner) if isinstance(o, ClipOp) for v in (o.min, o.max)]
    lo_v, lo_ops = _bound_value(lo, reuse, inner.input)
    hi_v, hi_ops = _bound_value(hi, reuse, inner.input)
    clip = make_typed(ClipOp, inner.input, lo_v, hi_v, like=op.output.type)
    if clip is not None:
        replace_with_ops(rewriter, op, [*lo_ops, *hi_ops, clip])


@simplify_rule
class ReluClipMerge(SimplifyRule):
    """``clip(relu(x), lo, hi)`` -> ``clip(x, max(lo, 0), hi)`` and ``relu(clip(x, lo,
    hi))`` -> ``clip(x, max(lo, 0), max(hi, 0))``.

    Exact (see :func:`_compose`; NaN propagates through both) when the bounds are constant
    scalars, not NaN, and do not mix ``+0.0`` and ``-0.0``; the inner op has no other user.
    """

    INFO = RuleInfo(
        26,
        "relu-clip-merge",
        "clip(relu(x), lo, hi), relu(clip(x, lo, hi))",
        "clip(x, max(lo, 0), hi), clip(x, max(lo, 0), max(hi, 0))",
        "constant non-NaN bounds not mixing +0.0/-0.0; the inner op has one user",
        "ORT TVM GE PT",
    )
    ROOTS = (ClipOp, ReluOp)

    def rewrite(self, op: ClipOp | ReluOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if isinstance(op, ReluOp) != isinstance(inner, ReluOp):  # exactly one relu
            _merge_clips(op, rewriter)


@simplify_rule
class ClipClip(SimplifyRule):
    """``clip(clip(x, l1, h1), l2, h2)`` -> ``clip(x, c2(l1), c2(h1))`` with ``c2`` the
    outer clip applied to the inner bounds (the intersection when the ranges overlap).

    Exact under the conditions of ``relu-clip-merge``: constant non-NaN scalar bounds, no
    mix of ``+0.0`` and ``-0.0``, the inner clip has no other user.
    """

    INFO = RuleInfo(
        26,
        "clip-clip",
        "clip(clip(x, l1, h1), l2, h2)",
        "clip(x, clip(l1, l2, h2), clip(h1, l2, h2))",
        "constant non-NaN bounds not mixing +0.0/-0.0; the inner clip has one user",
        "ORT TVM PT",
    )
    ROOTS = (ClipOp,)

    def rewrite(self, op: ClipOp, rewriter: PatternRewriter) -> None:
        if isinstance(op.input.owner, ClipOp):
            _merge_clips(op, rewriter)


@simplify_rule
class ClipRedundant(SimplifyRule):
    """``clip(x)`` without bounds, or with bounds that are the type's extremes (``-inf``
    and ``inf``, integer min and max) -> ``x``. Exact: ``maximum(x, -inf) == x`` also for
    NaN and ``-0.0``."""

    INFO = RuleInfo(
        26,
        "clip-redundant",
        "clip(x), clip(x, -inf, inf)",
        "x",
        "absent bounds or the type's extreme values",
        "ORT TVM",
    )
    ROOTS = (ClipOp,)

    def rewrite(self, op: ClipOp, rewriter: PatternRewriter) -> None:
        dtype, bounds = numpy_dtype(op.input), _bounds(op)
        if dtype is None or bounds is None or not in_origin_view(op):
            return
        low, high = _extremes(dtype)
        if bounds[0] in (None, low) and bounds[1] in (None, high):
            replace_with_value(rewriter, op, op.input)


# ---- rule 27: arg max / arg min through monotone maps -------------------------------------


def _arg_attrs(op: ArgReduceOp) -> dict[str, int]:
    """The attributes ``op`` sets (absent ones keep their ONNX default)."""
    keys = ("axis", "keepdims", "select_last_index")
    return {k: int(op.attr(k)) for k in keys if k in op.properties}


def _replace_arg(
    op: ArgReduceOp, cls: type[ArgReduceOp], x: SSAValue, rewriter: PatternRewriter
) -> None:
    new = make_typed(cls, x, like=op.reduced.type, **_arg_attrs(op))
    if new is not None:
        replace_with_ops(rewriter, op, [new])


@simplify_rule
class ArgMaxNeg(SimplifyRule):
    """``arg_max(neg(x))`` -> ``arg_min(x)`` and ``arg_min(neg(x))`` -> ``arg_max(x)``
    (same axis, keepdims, select_last_index), floats only.

    Exact: float negation is an order-reversing bijection, so tie sets and thus the first
    (or last) index are kept; NaN is the extreme for both arg_max and arg_min. Integer
    negation is not (``-INT_MIN == INT_MIN``).
    """

    INFO = RuleInfo(
        27,
        "argmax-neg",
        "arg_max(neg(x)), arg_min(neg(x))",
        "arg_min(x), arg_max(x)",
        "floats only (integer neg wraps INT_MIN)",
        "TVM",
    )
    ROOTS = (ArgMaxOp, ArgMinOp)

    def rewrite(self, op: ArgReduceOp, rewriter: PatternRewriter) -> None:
        neg = op.data.owner
        if isinstance(neg, NegOp) and is_float(neg.input) and in_origin_view(neg):
            other = ArgMinOp if isinstance(op, ArgMaxOp) else ArgMaxOp
            _replace_arg(op, other, neg.input, rewriter)


_MONOTONE = (ExpOp, SigmoidOp, TanhOp)


@simplify_rule
class ArgMaxMonotone(SimplifyRule):
    """``arg_max(f(x))`` -> ``arg_max(x)`` (and arg_min) for f in Exp, Sigmoid, Tanh
    (fast-math).

    These are strictly increasing over the reals but not in floating point: they saturate
    (``exp`` overflows to inf and underflows to 0, ``sigmoid`` and ``tanh`` reach ±1) and
    round distinct inputs near 0 to one value (``exp(1e-10) == exp(2e-10) == 1``), creating
    ties whose first index differs from the arg max of x. Never for log or sqrt (NaN for
    negative inputs).
    """

    INFO = RuleInfo(
        27,
        "argmax-monotone",
        "arg_max(f(x)), arg_min(f(x)), f in exp sigmoid tanh",
        "arg_max(x), arg_min(x)",
        "f saturates or rounds distinct inputs together in float, creating ties",
        "TVM",
        fast_math=True,
    )
    ROOTS = (ArgMaxOp, ArgMinOp)

    def rewrite(self, op: ArgReduceOp, rewriter: PatternRewriter) -> None:
        f = op.data.owner
        if isinstance(f, _MONOTONE) and is_float(f.input) and in_origin_view(f):
            _replace_arg(op, type(op), f.input, rewriter)


# ---- rule 28: log(softmax) --------------------------------------------------------------------


@simplify_rule
class LogSoftmax(SimplifyRule):
    """``log(softmax(x, axis))`` -> ``log_softmax(x, axis)`` when the softmax has no other
    user (fast-math).

    Changes results: log_softmax is the more accurate of the two (``log(exp(y))`` rounds
    twice, and where softmax underflows to 0 the log is -inf while log_softmax is finite).
    """

    INFO = RuleInfo(
        28,
        "log-softmax",
        "log(softmax(x, axis))",
        "log_softmax(x, axis)",
        "rounding changes; -inf where softmax underflows becomes finite; softmax has one user",
        "ORT TVM PT",
        fast_math=True,
    )
    ROOTS = (LogOp,)

    def rewrite(self, op: LogOp, rewriter: PatternRewriter) -> None:
        softmax = op.input.owner
        if not isinstance(softmax, SoftmaxOp) or only_user(op.input) is not op:
            return
        if in_origin_view(op) and in_origin_view(softmax):
            axis = int(softmax.attr("axis"))
            new = make_typed(LogSoftmaxOp, softmax.input, like=op.output.type, axis=axis)
            if new is not None:
                replace_with_ops(rewriter, op, [new])
