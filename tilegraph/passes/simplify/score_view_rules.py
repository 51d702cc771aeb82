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

The position terms, ``GatherElements(Q·pos_Kᵀ [B·H, S, P], i, -1) / c`` and the p2c one
transposed, go the same way: ``scale-before-gather-elements`` scales the product's result
(its epilogue) before the gather, ``batch-merge-after-gather-elements`` and
``batch-merge-after-transpose`` move the products' batch merges past the gather (the
indices viewed over the heads) and the transpose, where ``elementwise-before-movement``
and ``reshape-chain`` cancel them against the scores' final view; and
``transposed-gathered-product`` computes the transposed term as the transposed product
``Transpose(GatherElements(s(a·b), i, -1)) -> GatherElements(s(bᵀ·aᵀ), iᵀ, -2)`` (the
constant position queries fold, the keys' transpose is a view), so no transpose kernel is
left. Each exact: the same scalings, dot products and selections of the same elements.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.binary import BinaryElementwiseOp, DivOp, MulOp
from tilegraph.dialects.graph.indexing import GatherElementsOp
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.shape_ops import ReshapeOp, TransposeOp
from tilegraph.passes.simplify.batch_rules import broadcast_unmerged
from tilegraph.passes.simplify.match import (
    in_origin_view,
    made_by,
    one_element_constant,
    replace_if_typed,
    reshaped,
    static_shape,
    use_count,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule
from tilegraph.passes.simplify.view_rules import Movement, ScaleBeforeMovement, merged_groups

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

    def movement(self, value: SSAValue) -> Movement | None:
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


def _kept_axis(axis: int, rank: int) -> int | None:
    """``axis`` of a rank-``rank`` tensor as its distance from the end (1 or 2) when it is
    one of the last two dims (which a batch merge keeps), else None."""
    from_end = rank - axis % rank
    return from_end if from_end in (1, 2) else None


@simplify_rule
class ScaleBeforeGatherElements(ScaleBeforeMovement):
    INFO = RuleInfo(
        None,
        "scale-before-gather-elements",
        "Mul | Div(GatherElements(x, i), c) (either operand order), c one constant element, "
        "x a matmul's result (maybe through a Reshape)",
        "GatherElements(Mul | Div(x, c), i)",
        "the gather has no other reader; c of rank at most x's; exact (each gathered element "
        "is scaled alone either way)",
        "ORT (transpose optimizer pushes transposes past elementwise ops)",
    )

    def movement(self, value: SSAValue) -> Movement | None:
        """A GatherElements of a product's result producing ``value``, nothing else reading
        it: the scale joins the product's epilogue."""
        gather = made_by(value, GatherElementsOp)
        return gather if gather is not None and _a_product(gather.data) else None


def _a_product(value: SSAValue) -> bool:
    """``value`` is a matmul's result, maybe through one Reshape: a scale moved onto it
    joins the product's epilogue."""
    owner = value.owner
    if isinstance(owner, ReshapeOp):
        owner = owner.data.owner
    return isinstance(owner, MatMulOp)


@simplify_rule
class BatchMergeAfterGatherElements(SimplifyRule):
    INFO = RuleInfo(
        None,
        "batch-merge-after-gather-elements",
        "GatherElements(Reshape(a [P..., M, N] -> [ΠP, M, N]), i [ΠP, m, n], axis) along "
        "one of the last two dims",
        "Reshape(GatherElements(a, Reshape(i, [P..., m, n]), axis'), [ΠP, m, n])",
        "the reshape merges leading (batch) dims only and has no other reader; the indices "
        "span the merged dim whole; static shapes; exact",
        "ORT (transpose optimizer pushes reshapes past data movement)",
    )
    ROOTS = (GatherElementsOp,)

    def rewrite(self, op: GatherElementsOp, rewriter: PatternRewriter) -> None:
        found = _batch_merge(op.data)
        merged, index = static_shape(op.data), static_shape(op.indices)
        if found is None or merged is None or index is None or not in_origin_view(op):
            return
        from_end = _kept_axis(int(op.attr("axis")), len(merged))
        a = found[0]
        if from_end is None or index[:-2] != merged[:-2]:
            return
        shape = static_shape(a)
        assert shape is not None  # _batch_merge read it
        batch = shape[:-2]
        ops: list[Operation] = []
        indices = reshaped(op.indices, [*batch, *index[-2:]], ops)
        ops.append(GatherElementsOp.make(a, indices, axis=len(shape) - from_end))
        reshaped(ops[-1].results[0], index, ops)
        replace_if_typed(rewriter, op, ops)


@simplify_rule
class BatchMergeAfterTranspose(SimplifyRule):
    INFO = RuleInfo(
        None,
        "batch-merge-after-transpose",
        "Transpose(Reshape(a [P..., M, N] -> [ΠP, M, N]), [0, 2, 1])",
        "Reshape(Transpose(a, [P's dims..., last two swapped]), [ΠP, N, M])",
        "the reshape merges leading (batch) dims only and has no other reader; static "
        "shapes; exact",
        "ORT (transpose optimizer pushes transposes past reshapes)",
    )
    ROOTS = (TransposeOp,)

    def rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        found = _batch_merge(op.data)
        perm = op.attr("perm")
        out = static_shape(op.results[0])
        if found is None or perm is None or list(perm) != [0, 2, 1] or out is None:
            return
        if not in_origin_view(op):
            return
        a = found[0]
        rank = len(static_shape(a) or [])
        ops: list[Operation] = [
            TransposeOp.make(a, perm=[*range(rank - 2), rank - 1, rank - 2]),
        ]
        reshaped(ops[0].results[0], out, ops)
        replace_if_typed(rewriter, op, ops)


def _scaled_product(value: SSAValue) -> tuple[MatMulOp, MulOp | DivOp | None] | None:
    """``(matmul, scale)`` when ``value`` is ``matmul(a, b)`` or ``Mul | Div`` of one by a
    one-element constant (the product first), each read once, else None."""
    owner = value.owner
    scale = None
    if isinstance(owner, MulOp | DivOp) and use_count(value) == 1 and in_origin_view(owner):
        product = owner.operands[0]
        if not one_element_constant(owner.operands[1], len(static_shape(product) or [])):
            return None
        scale, value, owner = owner, product, product.owner
    if not isinstance(owner, MatMulOp) or use_count(value) != 1 or not in_origin_view(owner):
        return None
    return owner, scale


def _swap_last(value: SSAValue, ops: list[Operation]) -> SSAValue | None:
    """``value`` with its last two dims swapped (a Transpose appended to ``ops``)."""
    rank = len(static_shape(value) or [])
    if rank < 2:
        return None
    ops.append(TransposeOp.make(value, perm=[*range(rank - 2), rank - 1, rank - 2]))
    return ops[-1].results[0]


@simplify_rule
class TransposedGatheredProduct(SimplifyRule):
    INFO = RuleInfo(
        None,
        "transposed-gathered-product",
        "Transpose(GatherElements(s(MatMul(a, b)), i, last axis), last two swapped), s an "
        "optional Mul | Div by one constant element",
        "GatherElements(s(MatMul(bᵀ, aᵀ)), iᵀ, second-to-last axis)",
        "each op read once; a and b of equal rank (no broadcast); static shapes; exact (the "
        "same dot products, written transposed)",
        "ORT (transpose optimizer), XLA (transpose folding into dot)",
    )
    ROOTS = (TransposeOp,)

    def rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        gather = made_by(op.data, GatherElementsOp)
        out = static_shape(op.results[0])
        if gather is None or out is None or not in_origin_view(op):
            return
        rank = len(out)
        perm = op.attr("perm")
        if rank < 3 or perm is None or list(perm) != [*range(rank - 2), rank - 1, rank - 2]:
            return
        if _kept_axis(int(gather.attr("axis")), rank) != 1:
            return
        found = _scaled_product(gather.data)
        if found is None:
            return
        product, scale = found
        a, b = static_shape(product.lhs), static_shape(product.rhs)
        if a is None or b is None or len(a) != rank or len(b) != rank:
            return
        ops: list[Operation] = []
        bt, at = _swap_last(product.rhs, ops), _swap_last(product.lhs, ops)
        it = _swap_last(gather.indices, ops)
        assert bt is not None and at is not None and it is not None  # rank >= 3
        ops.append(MatMulOp.make(bt, at))
        data = ops[-1].results[0]
        if scale is not None:
            ops.append(type(scale).make(data, scale.operands[1]))
            data = ops[-1].results[0]
        ops.append(GatherElementsOp.make(data, it, axis=rank - 2))
        replace_if_typed(rewriter, op, ops)
