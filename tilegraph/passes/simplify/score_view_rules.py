"""Attention scores over merged heads, and a query / key scale shared with other products.

transformers' DeBERTa-v2 (disentangled attention) merges batch and heads before its
products (``[B·H, S, D]``) and scales the keys once for Q·Kᵀ while the unscaled keys also
feed the position product ``K·pos_Qᵀ``: ``Div(Reshape(Transpose(Reshape(Linear(x)))), c)``
with the head-split reshape read by the division and by that other product. The scores are
a sum of three terms, viewed ``[B, H, S, S]`` only after the sum, then masked and
normalised. Two exact rewrites give the shapes the views and the attention pattern
(:mod:`tilegraph.lowering.analysis.attention_pattern`) take:

``scale-before-shared-movement``: ``scale-before-movement`` when the movement has other
readers too: ``Mul | Div(M(x), c)`` -> ``M(Mul | Div(x, c))``, ``M(x)`` kept for the others,
when every reader of the scaled value is a matmul (through movements only). Repeated, the
scale climbs the head split to the projection (where the grouping takes it as an epilogue or
a kernel over the projection's layout), and the movement before each product is a view of
one tensor again, which ``batch-merge-after-matmul`` unmerges. Exact: the same division of
the same elements, moved.

``batch-split-through-elementwise``: ``Reshape(g(Reshape(a), y), shape(a))`` for a binary
elementwise ``g``, the inner reshape merging ``a``'s leading (batch) dims and the outer one
splitting them back -> ``g(a, y viewed over a's dims)``: the scores keep their unmerged
batch dims from the product to the softmax (the term ``y`` is viewed instead, or broadcast
over whole merged dims). Exact: the same operation on the same elements.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.binary import BinaryElementwiseOp, DivOp, MulOp
from tilegraph.dialects.graph.data_movement import ExpandOp
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.shape_ops import ReshapeOp, TransposeOp
from tilegraph.passes.simplify.batch_rules import broadcast_unmerged
from tilegraph.passes.simplify.match import (
    in_origin_view,
    made_by,
    replace_if_typed,
    reshaped,
    static_shape,
    use_count,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule
from tilegraph.passes.simplify.view_rules import ScaleBeforeMovement, merged_groups

MAX_VIEW_DEPTH = 4
"""The most movements between a moved scale and the products reading it (a head split is
Reshape, Transpose, Reshape, and the key's transpose)."""


def read_by_products(value: SSAValue, depth: int = MAX_VIEW_DEPTH) -> bool:
    """Every reader of ``value`` is a matmul, directly or through at most ``depth``
    Transposes / Reshapes (views a product reads in place), and there is one."""
    users = [use.operation for use in value.uses]
    if not users:
        return False
    for user in users:
        if isinstance(user, MatMulOp):
            continue
        if depth == 0 or not isinstance(user, TransposeOp | ReshapeOp):
            return False
        if not in_origin_view(user) or not read_by_products(user.results[0], depth - 1):
            return False
    return True


@simplify_rule
class ScaleBeforeSharedMovement(ScaleBeforeMovement):
    INFO = RuleInfo(
        None,
        "scale-before-shared-movement",
        "Mul | Div(M(x), c) (either operand order), M a Transpose or Reshape other ops read "
        "too, c one constant element",
        "M(Mul | Div(x, c)); M(x) kept for its other readers",
        "every reader of the scaled value is a matmul, through Transposes / Reshapes only; "
        "c of rank at most x's; exact",
        "ORT (transpose optimizer pushes transposes past elementwise ops)",
    )

    def rewrite(self, op: MulOp | DivOp, rewriter: PatternRewriter) -> None:
        if read_by_products(op.results[0]):
            super().rewrite(op, rewriter)

    def movement(self, value: SSAValue) -> TransposeOp | ReshapeOp | ExpandOp | None:
        """A Transpose or Reshape producing ``value`` that others read too (one read by the
        scale alone is ``scale-before-movement``'s)."""
        owner = value.owner
        if not isinstance(owner, TransposeOp | ReshapeOp) or not in_origin_view(owner):
            return None
        return owner if use_count(value) > 1 else None


def _batch_merge(value: SSAValue) -> tuple[SSAValue, list[list[int]]] | None:
    """``(a, groups)`` when ``value`` is ``Reshape(a)`` read by one op, merging runs of
    ``a``'s leading dims (``groups``: the dims of ``a`` in each merged dim) and keeping its
    last two."""
    merge = made_by(value, ReshapeOp)
    if merge is None:
        return None
    a, merged = static_shape(merge.data), static_shape(value)
    if a is None or merged is None or len(a) <= len(merged) or a[-2:] != merged[-2:]:
        return None
    groups = merged_groups(a, merged)
    return None if groups is None else (merge.data, groups)


@simplify_rule
class BatchSplitThroughElementwise(SimplifyRule):
    INFO = RuleInfo(
        None,
        "batch-split-through-elementwise",
        "Reshape(g(Reshape(a), y), shape of a) (either operand order), g binary "
        "elementwise, the inner reshape merging a's leading (batch) dims",
        "g(a, Reshape(y, over a's dims))",
        "a's last two dims kept; g has no other reader; each dim of y against a merged dim "
        "is its full size or 1; static shapes; exact",
        "ORT (transpose optimizer pushes reshapes past elementwise ops)",
    )
    ROOTS = (ReshapeOp,)

    def rewrite(self, op: ReshapeOp, rewriter: PatternRewriter) -> None:
        g = made_by(op.data, BinaryElementwiseOp)
        if g is None or not in_origin_view(op) or len(g.results) != 1:
            return
        out = static_shape(op.reshaped)
        for slot in (0, 1):
            found = _batch_merge(g.operands[slot])
            if found is None:
                continue
            a, groups = found
            y = static_shape(g.operands[1 - slot])
            merged = static_shape(g.operands[slot])
            if out is None or static_shape(a) != out or y is None:
                continue
            if static_shape(g.results[0]) != merged:
                continue  # the outer reshape does not undo the merge, or y broadcasts it
            wide = broadcast_unmerged(y, groups, out)
            if wide is None:
                continue
            ops: list[Operation] = []
            other = reshaped(g.operands[1 - slot], wide, ops)
            operands = [a, other] if slot == 0 else [other, a]
            attrs = {name: g.attr(name) for name in g.properties}
            ops.append(type(g).make(*operands, **attrs))
            if replace_if_typed(rewriter, op, ops):
                return
