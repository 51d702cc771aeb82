"""Batched matmuls over merged batch dims: the merge moved after the product.

BLOOM's attention (``baddbmm`` / ``bmm``) merges batch and heads before each product:
``Reshape(Transpose(q4), [B·H, S, D])`` times ``Transpose(Reshape(Transpose(k4), [B·H, S,
D]), [0, 2, 1])``. A head-split transpose read in place by a matmul is a strided view of
the projection (``lowering/analysis/operand_views.py``), but a merge of B and H after it is
not (their strides are not one run), so each operand is copied by a kernel of its own, and
the split of the fused projection before them stays a kernel too.

``batch-merge-after-matmul`` multiplies the unmerged operands (``[B, H, S, D]``, k's last
two dims swapped by the transpose moved with it) and merges the product's batch dims
after it: ``Reshape(MatMul(q4, Transpose(k4)), [B·H, S, S])``. The other operand may also
be a constant ``[B·H, K, N]`` (DeBERTa-v2's relative-position keys, folded per head), viewed
``[B, H, K, N]`` (the view folds into the constant): the merged head split is then a view
of the projection for this product too. Exact: the same products of the same rows and
columns, in the same order.

``broadcast-before-reshape``: ``g(x, Reshape(y))`` for an elementwise ``g``, the reshape
merging ``y``'s leading (batch) dims, ``x`` itself a Reshape broadcasting against the
merged dims whole (each merged dim of ``x`` the full size or 1) -> ``Reshape(g(x', y))``
with ``x'`` ``x`` viewed over ``y``'s dims (the two views of ``x`` become one). Narrower
than a general reshape sinking: a merge of inner dims (a rotary's pairs, a window
partition) stays where the patterns that want it find it. BLOOM's ALiBi bias
``[B·H, 1, S]`` added to the merged scores then reads them unmerged, and the merge meets
the next reshape, where it cancels. Exact: the same operation on the same elements.
"""

from __future__ import annotations

from math import prod

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.binary import BinaryElementwiseOp
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.shape_ops import ReshapeOp, TransposeOp
from tilegraph.passes.simplify.match import (
    constant_array,
    drop_ops,
    in_origin_view,
    made_by,
    replace_if_typed,
    reshaped,
    static_shape,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule
from tilegraph.passes.simplify.view_rules import merged_groups


def _unmerged(value: SSAValue) -> tuple[SSAValue, list[int]] | None:
    """(x, x's batch dims) when ``value`` is ``Reshape(x)`` merging x's leading dims into
    one and keeping its last two (a rank-3 batched matrix)."""
    reshape = value.owner
    if not isinstance(reshape, ReshapeOp) or not in_origin_view(reshape):
        return None
    x, merged = static_shape(reshape.data), static_shape(value)
    if x is None or merged is None or len(merged) != 3 or len(x) < 4:
        return None
    if x[-2:] != merged[-2:] or prod(x[:-2]) != merged[0]:
        return None
    return reshape.data, x[:-2]


def _constant_unmerged(
    value: SSAValue, batch: list[int], ops: list[Operation]
) -> tuple[SSAValue, list[int]] | None:
    """(``value`` viewed ``[*batch, M, N]``, ``batch``) when ``value`` is a constant rank-3
    batch of matrices ``[Πbatch, M, N]`` (the other operand's batch merged; the view is
    appended to ``ops`` and folds into a constant of that shape); else None."""
    shape = static_shape(value)
    if constant_array(value) is None or shape is None or len(shape) != 3:
        return None
    if shape[0] != prod(batch):
        return None
    return reshaped(value, [*batch, *shape[1:]], ops), batch


def _swapped(value: SSAValue) -> SSAValue | None:
    """``y`` when ``value`` is ``Transpose(y, [0, 2, 1])`` of a rank-3 y."""
    transpose = value.owner
    if not isinstance(transpose, TransposeOp) or not in_origin_view(transpose):
        return None
    perm = transpose.attr("perm")
    return transpose.data if perm is not None and list(perm) == [0, 2, 1] else None


@simplify_rule
class BatchMergeAfterMatMul(SimplifyRule):
    INFO = RuleInfo(
        None,
        "batch-merge-after-matmul",
        "MatMul(Reshape(a [P..., M, K] -> [ΠP, M, K]), Reshape(b [P..., K, N]) or "
        "Transpose(Reshape(b [P..., N, K]), [0, 2, 1]) or a constant [ΠP, K, N]) (or a "
        "constant a with a merged b)",
        "Reshape(MatMul(a, b or Transpose(b, last two swapped) or Reshape(b, [P..., K, N])), "
        "[ΠP, M, N])",
        "the same batch dims P on both sides (no broadcast); static shapes; exact",
        "ORT (MatMul reshape fusion) PT",
    )
    ROOTS = (MatMulOp,)

    def rewrite(self, op: MatMulOp, rewriter: PatternRewriter) -> None:
        if not in_origin_view(op):
            return
        ops: list[Operation] = []
        lhs = _unmerged(op.lhs)
        swapped = _swapped(op.rhs)
        rhs = _unmerged(swapped if swapped is not None else op.rhs)
        if lhs is None and rhs is not None and swapped is None:
            lhs = _constant_unmerged(op.lhs, rhs[1], ops)
        elif rhs is None and lhs is not None:
            swapped, rhs = None, _constant_unmerged(op.rhs, lhs[1], ops)
        if lhs is None or rhs is None or lhs[1] != rhs[1]:
            drop_ops(ops)
            return
        b = rhs[0]
        if swapped is not None:
            rank = len(rhs[1]) + 2
            ops.append(TransposeOp.make(b, perm=[*range(rank - 2), rank - 1, rank - 2]))
            b = ops[-1].results[0]
        ops.append(MatMulOp.make(lhs[0], b))
        shape = static_shape(op.output)
        assert shape is not None  # the operands are static
        reshaped(ops[-1].results[0], shape, ops)
        replace_if_typed(rewriter, op, ops)


def broadcast_unmerged(x: list[int], groups: list[list[int]], y: list[int]) -> list[int] | None:
    """``x`` (a shape broadcasting against the merge of ``y`` by ``groups``) over ``y``'s
    dims: each merged dim of ``x`` the merged size (split as ``y``'s) or 1 (1 in each of
    them); None when a merged dim broadcasts partly."""
    if len(x) > len(groups):
        return None
    x = [1] * (len(groups) - len(x)) + x
    shape: list[int] = []
    for size, group in zip(x, groups, strict=True):
        full = prod(y[i] for i in group)
        if size == full:
            shape += [y[i] for i in group]
        elif size == 1:
            shape += [1] * len(group)
        else:
            return None
    return shape


@simplify_rule
class BroadcastBeforeReshape(SimplifyRule):
    INFO = RuleInfo(
        None,
        "broadcast-before-reshape",
        "g(Reshape(a), Reshape(y)) (either order), g binary elementwise, the reshape of y "
        "merging its leading (batch) dims",
        "Reshape(g(Reshape(a, over y's dims), y))",
        "each dim of Reshape(a) against a merged dim is its full size or 1; y's last two "
        "dims kept; the reshape of y has no other reader and does not merge a product's "
        "rows (its epilogue reads across it); the result keeps the merged shape; static "
        "shapes; exact"
        "ORT (transpose optimizer pushes reshapes past elementwise ops)",
    )
    ROOTS = (BinaryElementwiseOp,)

    def rewrite(self, op: BinaryElementwiseOp, rewriter: PatternRewriter) -> None:
        if not in_origin_view(op) or len(op.results) != 1:
            return
        for slot in (0, 1):
            merge = made_by(op.operands[slot], ReshapeOp)
            if merge is None or isinstance(merge.data.owner, MatMulOp):
                continue
            y, merged = static_shape(merge.data), static_shape(merge.reshaped)
            x, out = static_shape(op.operands[1 - slot]), static_shape(op.results[0])
            if y is None or merged is None or x is None or merged != out or len(y) <= len(merged):
                continue
            if y[-2:] != merged[-2:] or not isinstance(op.operands[1 - slot].owner, ReshapeOp):
                continue  # only batch merges, met by another view (the two merge into one)
            groups = merged_groups(y, merged)
            wide = None if groups is None else broadcast_unmerged(x, groups, y)
            if wide is None:
                continue
            ops: list[Operation] = []
            other = reshaped(op.operands[1 - slot], wide, ops)
            operands = [merge.data, other] if slot == 0 else [other, merge.data]
            attrs = {name: op.attr(name) for name in op.properties}
            ops.append(type(op).make(*operands, **attrs))
            if static_shape(ops[-1].results[0]) != y:
                for new in reversed(ops):
                    new.drop_all_references()
                continue
            reshaped(ops[-1].results[0], merged, ops)
            if replace_if_typed(rewriter, op, ops):
                return
