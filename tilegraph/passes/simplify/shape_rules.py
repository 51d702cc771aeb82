"""Shape-movement rules: transposes, reshape chains, squeeze/unsqueeze pairs and merges
(rules 9-13) and reduce + unsqueeze -> keepdims (rule 29).

All the ops here relabel dims without touching the row-major order of the elements
(reshape, flatten, squeeze, unsqueeze) or permute them (transpose). Two facts make the rules
sound:

* a chain of order-keeping ops is one reshape to the final shape, and is the identity when
  the final shape is the input's;
* ``transpose(transpose(x, p1), p2)`` is ``transpose(x, [p1[i] for i in p2])``.

Every replacement has the old result's type (built with :func:`make_typed` or checked by
:func:`replace_with_value`). Their results are ND (the ops change what the dims mean), so a
chain back to an NCHW input is not replaced by that input: its consumers expect ND.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.reduction import ArgReduceOp, ReduceOp
from tilegraph.dialects.graph.shape_ops import (
    FlattenOp,
    ReshapeOp,
    SqueezeOp,
    TransposeOp,
    UnsqueezeOp,
)
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.simplify.match import (
    constant_ints,
    dims_known,
    in_origin_view,
    ints_constant,
    make_typed,
    only_user,
    replace_with_ops,
    replace_with_value,
    tensor_type_of,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule

ORDER_KEEPING = (ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp)
"""Ops that keep the row-major element order: any chain of them is one reshape."""


def _normalized(axes: Sequence[int], rank: int) -> list[int] | None:
    """Axes mapped into ``[0, rank)``, sorted; None if out of range or repeated."""
    out = sorted(a + rank if a < 0 else a for a in axes)
    if any(not 0 <= a < rank for a in out) or len(set(out)) != len(out):
        return None
    return out


def _static_shape(t: TensorType | None) -> list[int] | None:
    """The dims of a fully static type, else None."""
    if t is None or not t.is_static:
        return None
    return [int(d) for d in t.origin_shape]  # pyright: ignore[reportArgumentType]


def _reshape_to(rewriter: PatternRewriter, op: Operation, x: SSAValue, shape: Sequence[int]):
    """Replace ``op`` by ``reshape(x, shape)`` (allowzero when a dim is 0, so that the 0 is
    a size, not a copy) if that has ``op``'s type; True if done."""
    const = ints_constant(shape)
    allowzero = 1 if 0 in shape else None
    new = make_typed(ReshapeOp, x, const, like=op.results[0].type, allowzero=allowzero)
    if new is None:
        const.drop_all_references()
        return False
    replace_with_ops(rewriter, op, [const, new])
    return True


# ---- rule 9: transposes -----------------------------------------------------------------------


def _perm(op: TransposeOp) -> list[int] | None:
    t = tensor_type_of(op.data)
    if t is None:
        return None
    perm = op.attr("perm")
    return list(range(t.rank))[::-1] if perm is None else list(perm)


@simplify_rule
class TransposeCompose(SimplifyRule):
    """``transpose(transpose(x, p1), p2)`` -> ``transpose(x, q)`` with ``q[i] = p1[p2[i]]``,
    or ``x`` when ``q`` is the identity and the result type equals ``x``'s. Exact (a
    composition of permutations). The inner transpose stays for its other users."""

    INFO = RuleInfo(
        9,
        "transpose-compose",
        "transpose(transpose(x, p1), p2)",
        "transpose(x, p1 o p2), or x when that is the identity",
        "x only when the result type equals x's (an NCHW x is not an ND result)",
        "OO ORT TVM GE OM PT",
    )
    ROOTS = (TransposeOp,)

    def rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        inner = op.data.owner
        if not isinstance(inner, TransposeOp) or not in_origin_view(op):
            return
        if not in_origin_view(inner):
            return
        p1, p2 = _perm(inner), _perm(op)
        if p1 is None or p2 is None:
            return
        q = [p1[i] for i in p2]
        if q == sorted(q) and replace_with_value(rewriter, op, inner.data):
            return
        new = make_typed(TransposeOp, inner.data, like=op.transposed.type, perm=q)
        if new is not None:
            replace_with_ops(rewriter, op, [new])


@simplify_rule
class TransposeIdentity(SimplifyRule):
    """``transpose(x, [0, 1, ..., r-1])`` -> ``x`` (also a rank <= 1 transpose without
    ``perm``) when the result type equals ``x``'s."""

    INFO = RuleInfo(
        9,
        "transpose-identity",
        "transpose(x, identity perm)",
        "x",
        "only when the result type equals x's (an NCHW x is not an ND result)",
        "OO ORT TVM GE OM PT",
    )
    ROOTS = (TransposeOp,)

    def rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        perm = _perm(op)
        if perm is not None and perm == sorted(perm) and in_origin_view(op):
            replace_with_value(rewriter, op, op.data)


# ---- rule 10: transposes that only move size-1 dims --------------------------------------------


@simplify_rule
class TransposeToReshape(SimplifyRule):
    """``transpose(x, p)`` -> ``reshape(x, shape of the result)`` when ``p`` keeps the
    relative order of the dims whose size is not 1 (only size-1 dims move); then the
    row-major element order is unchanged (GE Dim1TransposeToSqueeze). Static shapes only;
    not for the identity perm (``transpose-identity``)."""

    INFO = RuleInfo(
        10,
        "transpose-to-reshape",
        "transpose(x, p), p moves only size-1 dims",
        "reshape(x, constant result shape)",
        "static shapes only; the non-1 dims must keep their relative order",
        "GE ORT",
    )
    ROOTS = (TransposeOp,)

    def rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        dims = _static_shape(tensor_type_of(op.data))
        out = _static_shape(tensor_type_of(op.transposed))
        perm = _perm(op)
        if dims is None or out is None or perm is None or not in_origin_view(op):
            return
        if perm == sorted(perm):
            return
        moved = [p for p in perm if dims[p] != 1]
        if moved == sorted(moved):
            _reshape_to(rewriter, op, op.data, out)


# ---- rule 11: reshape chains ------------------------------------------------------------------


@simplify_rule
class ReshapeChain(SimplifyRule):
    """``reshape(r(x), s)`` -> ``reshape(x, s')`` where ``r`` is a reshape, flatten, squeeze
    or unsqueeze: all keep the row-major order, so only the final shape matters.

    ``s'`` is ``s`` itself when it has no 0 entry that copies a dim of the middle shape
    (``allowzero`` = 0): a -1 is inferred from the element count, which ``x`` shares with
    the middle tensor. Otherwise the final shape must be static and is written out
    (``allowzero`` = 1 if it has a 0 dim). The inner op stays for its other users.
    """

    INFO = RuleInfo(
        11,
        "reshape-chain",
        "reshape(reshape|flatten|squeeze|unsqueeze(x), s)",
        "reshape(x, s) or reshape(x, final static shape)",
        "a 0 in s (allowzero = 0) copies a middle dim: only with a static final shape",
        "OO ORT TVM GE OM PT",
    )
    ROOTS = (ReshapeOp,)

    def rewrite(self, op: ReshapeOp, rewriter: PatternRewriter) -> None:
        inner = op.data.owner
        if not isinstance(inner, ORDER_KEEPING) or not in_origin_view(op):
            return
        if not in_origin_view(inner):
            return
        x = inner.operands[0]
        shape = constant_ints(op.shape)
        allowzero = op.properties.get("allowzero")  # kept as written (absent: default 0)
        if shape is not None and (op.attr("allowzero") or 0 not in shape):
            new = make_typed(ReshapeOp, x, op.shape, like=op.reshaped.type, allowzero=allowzero)
            if new is not None:
                replace_with_ops(rewriter, op, [new])
                return
        final = _static_shape(tensor_type_of(op.reshaped))
        if final is not None:
            _reshape_to(rewriter, op, x, final)


@simplify_rule
class ReshapeToSameShape(SimplifyRule):
    """``reshape(x, s)`` -> ``x`` when the result type equals ``x``'s and no dim is
    UNKNOWN (two unknown dims compare equal as types but may differ at run time)."""

    INFO = RuleInfo(
        11,
        "reshape-to-same-shape",
        "reshape(x, s) with result type == type(x)",
        "x",
        "not with UNKNOWN dims; an NCHW x has another type than the ND result",
        "OO ORT TVM GE OM PT",
    )
    ROOTS = (ReshapeOp,)

    def rewrite(self, op: ReshapeOp, rewriter: PatternRewriter) -> None:
        if in_origin_view(op) and dims_known(tensor_type_of(op.data)):
            replace_with_value(rewriter, op, op.data)


@simplify_rule
class ReshapeLikeChain(SimplifyRule):
    """``flatten|squeeze|unsqueeze(reshape|flatten(x))`` -> ``reshape(x, final shape)``
    when the final shape is static: the chain keeps the row-major order, so it is one
    reshape. (Pairs of squeezes and unsqueezes have their own rules, 12 and 13.)"""

    INFO = RuleInfo(
        None,
        "reshape-like-chain",
        "flatten|squeeze|unsqueeze(reshape|flatten(x))",
        "reshape(x, final static shape)",
        "static final shape only",
        "ORT GE",
    )
    ROOTS = (FlattenOp, SqueezeOp, UnsqueezeOp)

    def rewrite(self, op: FlattenOp | SqueezeOp | UnsqueezeOp, rewriter: PatternRewriter) -> None:
        inner = op.operands[0].owner
        if not isinstance(inner, ReshapeOp | FlattenOp) or not in_origin_view(op):
            return
        final = _static_shape(tensor_type_of(op.results[0]))
        if final is not None and in_origin_view(inner):
            _reshape_to(rewriter, op, inner.operands[0], final)


# ---- rules 12-13: squeeze / unsqueeze ---------------------------------------------------------


def squeezed_axes(op: SqueezeOp) -> list[int] | None:
    """The normalised axes a squeeze removes (without ``axes``: the static 1-dims)."""
    t = tensor_type_of(op.data)
    if t is None:
        return None
    if op.axes is None:
        dims = _static_shape(t)
        return None if dims is None else [i for i, d in enumerate(dims) if d == 1]
    axes = constant_ints(op.axes)
    return None if axes is None else _normalized(axes, t.rank)


def unsqueezed_axes(op: UnsqueezeOp) -> list[int] | None:
    """The normalised positions (in the result) an unsqueeze inserts."""
    t = tensor_type_of(op.expanded)
    axes = constant_ints(op.axes)
    return None if t is None or axes is None else _normalized(axes, t.rank)


@simplify_rule
class SqueezeUnsqueezeInverse(SimplifyRule):
    """``unsqueeze(squeeze(x, a), a)`` -> ``x`` and ``squeeze(unsqueeze(x, a), a)`` -> ``x``
    (axes compared after normalisation; squeeze's axes in ``x``'s rank, unsqueeze's in the
    larger one, so they name the same positions), when the result type equals ``x``'s."""

    INFO = RuleInfo(
        12,
        "squeeze-unsqueeze-inverse",
        "unsqueeze(squeeze(x, a), a), squeeze(unsqueeze(x, a), a)",
        "x",
        "same normalised axes, constant; only when the result type equals x's",
        "OO ORT GE OM",
    )
    ROOTS = (SqueezeOp, UnsqueezeOp)

    def rewrite(self, op: SqueezeOp | UnsqueezeOp, rewriter: PatternRewriter) -> None:
        inner = op.data.owner
        if not in_origin_view(op):
            return
        if isinstance(op, UnsqueezeOp) and isinstance(inner, SqueezeOp):
            a, b = squeezed_axes(inner), unsqueezed_axes(op)
        elif isinstance(op, SqueezeOp) and isinstance(inner, UnsqueezeOp):
            a, b = unsqueezed_axes(inner), squeezed_axes(op)
        else:
            return
        if a is not None and a == b and in_origin_view(inner):
            replace_with_value(rewriter, op, inner.data)


@simplify_rule
class MergeSqueezes(SimplifyRule):
    """``squeeze(squeeze(x, a1), a2)`` -> ``squeeze(x, a1 + a2 in x's dims)``: the second
    squeeze's axes are mapped back through the dims the first one kept."""

    INFO = RuleInfo(
        13,
        "merge-squeezes",
        "squeeze(squeeze(x, a1), a2)",
        "squeeze(x, a)",
        "constant axes (or static dims when axes are absent)",
        "OO ORT OM",
    )
    ROOTS = (SqueezeOp,)

    def rewrite(self, op: SqueezeOp, rewriter: PatternRewriter) -> None:
        inner = op.data.owner
        if not isinstance(inner, SqueezeOp) or not in_origin_view(op):
            return
        t = tensor_type_of(inner.data)
        a1, a2 = squeezed_axes(inner), squeezed_axes(op)
        if t is None or a1 is None or a2 is None or not in_origin_view(inner):
            return
        kept = [i for i in range(t.rank) if i not in a1]
        axes = sorted([*a1, *(kept[j] for j in a2)])
        const = ints_constant(axes)
        new = make_typed(SqueezeOp, inner.data, const, like=op.squeezed.type)
        if new is None:
            return
        replace_with_ops(rewriter, op, [const, new])


@simplify_rule
class MergeUnsqueezes(SimplifyRule):
    """``unsqueeze(unsqueeze(x, a1), a2)`` -> ``unsqueeze(x, a)``: ``a2`` are positions in
    the final result; ``a1`` are mapped to the final positions of the middle dims."""

    INFO = RuleInfo(
        13,
        "merge-unsqueezes",
        "unsqueeze(unsqueeze(x, a1), a2)",
        "unsqueeze(x, a)",
        "constant axes",
        "OO ORT OM",
    )
    ROOTS = (UnsqueezeOp,)

    def rewrite(self, op: UnsqueezeOp, rewriter: PatternRewriter) -> None:
        inner = op.data.owner
        if not isinstance(inner, UnsqueezeOp) or not in_origin_view(op):
            return
        t = tensor_type_of(op.expanded)
        a1, a2 = unsqueezed_axes(inner), unsqueezed_axes(op)
        if t is None or a1 is None or a2 is None or not in_origin_view(inner):
            return
        middle = [i for i in range(t.rank) if i not in a2]
        axes = sorted([*a2, *(middle[j] for j in a1)])
        const = ints_constant(axes)
        new = make_typed(UnsqueezeOp, inner.data, const, like=op.expanded.type)
        if new is None:
            return
        replace_with_ops(rewriter, op, [const, new])


# ---- rule 29: reduce + unsqueeze -> keepdims --------------------------------------------------


def _reduced_axes(op: ReduceOp | ArgReduceOp) -> list[int] | None:
    """The normalised axes a reduction removes (keepdims = 0); None when not constant or
    when no axis is reduced (``noop_with_empty_axes``)."""
    t = tensor_type_of(op.data)
    if t is None:
        return None
    if isinstance(op, ArgReduceOp):
        return _normalized([op.attr("axis")], t.rank)
    axes = () if op.axes is None else constant_ints(op.axes)
    if axes is None:
        return None
    if not axes:
        return None if op.attr("noop_with_empty_axes") else list(range(t.rank))
    return _normalized(axes, t.rank)


@simplify_rule
class ReduceKeepdims(SimplifyRule):
    """``unsqueeze(reduce(x, axes, keepdims=0), axes)`` -> ``reduce(x, axes, keepdims=1)``
    for ``graph.reduce_*`` and ``graph.argmax``/``argmin``, when the unsqueeze reinserts
    exactly the reduced axes and is the reduction's only user (else the reduction would be
    computed twice)."""

    INFO = RuleInfo(
        29,
        "reduce-keepdims",
        "unsqueeze(reduce(x, axes, keepdims=0), axes)",
        "reduce(x, axes, keepdims=1)",
        "same normalised axes; the reduction has no other user",
        "ORT GE",
    )
    ROOTS = (UnsqueezeOp,)

    def rewrite(self, op: UnsqueezeOp, rewriter: PatternRewriter) -> None:
        red = op.data.owner
        if not isinstance(red, ReduceOp | ArgReduceOp) or red.attr("keepdims"):
            return
        if only_user(red.reduced) is not op or not in_origin_view(op):
            return
        axes = _reduced_axes(red)
        if axes is None or axes != unsqueezed_axes(op) or not in_origin_view(red):
            return
        attrs = {k: v for k, v in red.properties.items() if k != "keepdims"}
        new = make_typed(
            type(red), *red.operand_slots(), like=op.expanded.type, **attrs, keepdims=1
        )
        if new is not None:
            replace_with_ops(rewriter, op, [new])
