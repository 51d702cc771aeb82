"""Movement chains as the views the matmuls read: what torch's SDPA decomposition writes.

The default exporter writes ``F.scaled_dot_product_attention`` (every Hugging Face model's
attention since transformers 4.36) as ``Q·√s`` and ``Kᵀ·√s`` before the matmul, with
``Kᵀ`` spelled as ``Reshape(Transpose(Reshape(K, [B·H, S, D]), [0, 2, 1]), [B, H, D, S])``.
Between the head split ``Transpose(Reshape(Linear(x)))`` and the matmul those ops stop the
split from being a view of the projection's result (:mod:`tilegraph.passes.fuse_views`):
two more vector kernels per operand. Two exact rewrites give back the shape the views take:

``transpose-between-reshapes``: ``Reshape(Transpose(Reshape(x, B), p), C)`` -> ``Transpose(x,
q)`` (and a Reshape to ``C`` when the ranks differ) when the reshapes only merge and split
dims that the transpose moves together. ``q`` comes from grouping ``x``'s dims into
``B``'s; the rewrite is taken only when an index check on ``arange`` of ``x``'s size (at
most :data:`MAX_CHECKED` elements) shows both chains move every element to the same place.

``scale-before-movement``: ``Mul(Movement(x), c)`` (or ``Div``), ``c`` a one-element
constant, ``Movement`` a Transpose, Reshape or Expand nothing else reads ->
``Movement(Mul(x, c))``: the scale joins the producer's epilogue (the projection's bias add)
instead of a kernel of its own, and before an Expand (grouped keys repeated for the query
heads) it scales each element once and leaves the repeat a view of the matmul reading it.
Exact: the same products of the same elements, moved. ``offset-before-movement`` does the
same for ``Add`` / ``Sub`` of a one-element constant (Paddle's ``scale`` op is a multiply
and an add).

``elementwise-before-movement``: ``f(Movement(x))`` for a unary elementwise ``f``, and
``g(Movement(a), Movement(b))`` for a binary one whose operands are the same movement of
tensors of one shape -> ``Movement(f(x))`` / ``Movement(g(a, b))`` (a Movement is a
Transpose, Reshape, Squeeze or Unsqueeze). The op then meets its producer (a matmul's
epilogue takes a GELU or a residual add, a 1-D convolution's its ReLU) and the movement
meets its consumer, where it cancels (``transpose-compose``, ``squeeze-unsqueeze-inverse``
between two 1-D convolutions) or becomes a view. A channels-first
model written over channels-last products (SqueezeBERT's Conv1d projections, see
:mod:`.pointwise_conv_rules`: ``Transpose(Add(Transpose(y), Transpose(x)))`` around every
LayerNorm) loses every transpose this way. Exact: the same operations on the same
elements, moved.
"""

from __future__ import annotations

from math import prod
from typing import Any, TypeGuard

import numpy as np
from xdsl.ir import Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.binary import AddOp, BinaryElementwiseOp, DivOp, MulOp, SubOp
from tilegraph.dialects.graph.data_movement import ExpandOp
from tilegraph.dialects.graph.elementwise import UnaryElementwiseOp
from tilegraph.dialects.graph.indexing import GatherElementsOp
from tilegraph.dialects.graph.linalg import GemmOp, MatMulOp
from tilegraph.dialects.graph.nn import Conv2dOp
from tilegraph.dialects.graph.shape_ops import ReshapeOp, SqueezeOp, TransposeOp, UnsqueezeOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.simplify.gemm_rules import power_of_two
from tilegraph.passes.simplify.match import (
    constant_array,
    dims_known,
    drop_ops,
    in_origin_view,
    made_by,
    new_constant,
    one_element_constant,
    only_user,
    replace_if_typed,
    reshaped,
    splat_value,
    static_shape,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule
from tilegraph.passes.simplify.shape_rules import squeezed_axes

Movement = TransposeOp | ReshapeOp | SqueezeOp | UnsqueezeOp | ExpandOp | GatherElementsOp
"""What a scale or an elementwise op moves before: ops that only move or select elements
(their other operands, shapes, axes or indices, taken as they are)."""

MAX_CHECKED = 1 << 22
"""The most elements the index check of ``transpose-between-reshapes`` moves (16 MiB of
int32 indices: a BERT-base layer's keys at sequence 512 and batch 8 are 3.1 M)."""


def merged_groups(dims: list[int], merged: list[int]) -> list[list[int]] | None:
    """For each dim of ``merged`` (a reshape of ``dims`` that only merges runs of
    consecutive dims), the indices of the ``dims`` it merges: a size-1 dim of ``merged``
    takes one size-1 dim of ``dims`` when there is one (else none), size-1 dims of
    ``dims`` left over join the run after them (the last run at the end). None when
    ``merged`` is not such a merge."""
    groups: list[list[int]] = []
    i = 0
    for size in merged:
        group: list[int] = []
        if size == 1:
            if i < len(dims) and dims[i] == 1:
                group.append(i)
                i += 1
            groups.append(group)
            continue
        product = 1
        while i < len(dims) and product < size:
            group.append(i)
            product *= dims[i]
            i += 1
        if product != size:
            return None
        groups.append(group)
    if i < len(dims):
        if not groups or any(dims[j] != 1 for j in range(i, len(dims))):
            return None
        groups[-1].extend(range(i, len(dims)))
    return groups


def _same_order(x: list[int], mid: list[int], perm: list[int], q: list[int]) -> bool:
    """Whether Reshape(Transpose(Reshape(x, mid), perm)) and Transpose(x, q) put every
    element of ``x`` in the same row-major position."""
    index = np.arange(prod(x), dtype=np.int32)
    chain = index.reshape(mid).transpose(perm).reshape(-1)
    direct = index.reshape(x).transpose(q).reshape(-1)
    return bool(np.array_equal(chain, direct))


@simplify_rule
class TransposeBetweenReshapes(SimplifyRule):
    INFO = RuleInfo(
        None,
        "transpose-between-reshapes",
        "Reshape(Transpose(Reshape(x, B), p), C), B merging runs of x's dims",
        "Transpose(x, q) (Reshape to C when the ranks differ)",
        "static shapes; an index check proves both move every element alike",
        "ORT (transpose optimizer), PT",
    )
    ROOTS = (ReshapeOp,)

    def rewrite(self, op: ReshapeOp, rewriter: PatternRewriter) -> None:
        transpose = made_by(op.data, TransposeOp)
        if transpose is None or not in_origin_view(op):
            return
        inner = made_by(transpose.data, ReshapeOp)
        if inner is None:
            return
        x, mid, out = (static_shape(v) for v in (inner.data, inner.reshaped, op.reshaped))
        if x is None or mid is None or out is None or prod(x) > MAX_CHECKED:
            return
        perm = list(transpose.attr("perm") or reversed(range(len(mid))))
        groups = merged_groups(x, mid)
        if groups is None:
            return
        q = [dim for j in perm for dim in groups[j]]
        if sorted(q) != list(range(len(x))) or not _same_order(x, mid, perm, q):
            return
        ops: list[Operation] = [TransposeOp.make(inner.data, perm=q)]
        reshaped(ops[0].results[0], out, ops)
        replace_if_typed(rewriter, op, ops)


@simplify_rule
class ScaleBeforeMovement(SimplifyRule):
    INFO = RuleInfo(
        None,
        "scale-before-movement",
        "Mul | Div(Transpose | Reshape | Expand(x), c) (either operand order), c one "
        "constant element",
        "Transpose | Reshape | Expand(Mul | Div(x, c))",
        "the movement has no other reader; c of rank at most x's; not a power-of-two "
        "multiply feeding a matmul (matmul-operand-scales takes that onto the product)",
        "ORT (transpose optimizer pushes transposes past elementwise ops)",
    )
    ROOTS = (MulOp, DivOp)

    def rewrite(self, op: MulOp | DivOp | AddOp | SubOp, rewriter: PatternRewriter) -> None:
        if not in_origin_view(op) or _left_to_the_product(op):
            return
        for slot, value in enumerate(op.operands):
            other = op.operands[1 - slot]
            movement = self.movement(value)
            if movement is None:
                continue
            source = movement.operands[0]
            source_type = source.type
            if not isinstance(source_type, TensorType):
                continue
            if not one_element_constant(other, source_type.rank):
                continue
            operands = [source, other] if slot == 0 else [other, source]
            scaled = type(op).make(*operands)
            if scaled.results[0].type != source_type:
                scaled.drop_all_references()
                continue
            moved = type(movement).make(scaled, *movement.operands[1:], **_attrs(movement))
            replace_if_typed(rewriter, op, [scaled, moved])
            return

    def movement(self, value: SSAValue) -> Movement | None:
        """The movement producing ``value`` the scale moves before: here one nothing else
        reads (``scale-before-shared-movement`` takes one read by others too,
        ``scale-before-gather-elements`` a GatherElements of a product)."""
        return made_by(value, TransposeOp) or made_by(value, ReshapeOp) or made_by(value, ExpandOp)


@simplify_rule
class OffsetBeforeMovement(ScaleBeforeMovement):
    """``scale-before-movement`` for an offset: Paddle's ``scale(x, s, bias)`` exports as
    ``Add(Mul(x, s), bias)`` (``bias`` +0.0 in the attention's query scaling), and the
    multiply moving alone would leave the add behind the head split, a kernel of its own
    with the split materialised for it."""

    INFO = RuleInfo(
        None,
        "offset-before-movement",
        "Add | Sub(Transpose | Reshape | Expand(x), c) (either operand order), c one "
        "constant element",
        "Transpose | Reshape | Expand(Add | Sub(x, c))",
        "the movement has no other reader; c of rank at most x's; exact (the same sums of "
        "the same elements, moved)",
        "ORT (transpose optimizer pushes transposes past elementwise ops)",
    )
    ROOTS = (AddOp, SubOp)


def _left_to_the_product(op: MulOp | DivOp | AddOp | SubOp) -> bool:
    """A multiply by a power of two feeding a matmul: ``matmul-operand-scales`` moves it
    onto the product exactly, where the attention pattern wants the scale."""
    if not isinstance(op, MulOp) or not isinstance(only_user(op.results[0]), MatMulOp):
        return False
    scales = [splat_value(v) for v in op.operands]
    return any(isinstance(s, float) and power_of_two(s) for s in scales)


def _attrs(op: Movement) -> dict[str, Any]:
    names = {TransposeOp: ("perm",), GatherElementsOp: ("axis",)}.get(type(op), ("allowzero",))
    return {name: op.attr(name) for name in names if name in op.properties}


@simplify_rule
class ElementwiseBeforeMovement(SimplifyRule):
    INFO = RuleInfo(
        None,
        "elementwise-before-movement",
        "f(M(x)), g(M(a), M(b)); M a Transpose | Reshape | Squeeze | Unsqueeze (one "
        "movement of same-shaped a, b); in conv-forms also g(M(a), c), M the Squeeze of a "
        "conv2d's result, c constant, and M read by an elementwise region over it alone",
        "M(f(x)), M(g(a, b)), M(g(a, c')) (c' c with M's size-1 dims undone)",
        "f unary elementwise of one operand, g binary elementwise; each movement has no "
        "other reader (no movement is repeated); not a reshape of a product's result (its "
        "epilogue already reads across it)",
        "ORT (transpose optimizer pushes transposes past elementwise ops)",
    )
    ROOTS = (UnaryElementwiseOp, BinaryElementwiseOp)
    THROUGH_SQUEEZES = False
    """Also move over the Squeeze of a conv2d's result when it is read by several ops (an
    elementwise region over it alone) and with a constant other operand: what
    ``conv-forms`` runs between 1-D convolutions (:class:`ElementwiseBeforeSqueeze`).
    Not in ``algebraic-simplify``: elsewhere a moved op can leave the fusion group it was
    in (a pad, an unsqueeze and the adds after it in a Kaldi front end: one kernel more)."""

    def rewrite(
        self, op: UnaryElementwiseOp | BinaryElementwiseOp, rewriter: PatternRewriter
    ) -> None:
        if not in_origin_view(op) or len(op.results) != 1 or len(op.operands) > 2:
            return
        wide = self.THROUGH_SQUEEZES
        moves = [_movement(v, wide) for v in op.operands]
        first = next((m for m in moves if m is not None), None)
        if first is None or _epilogue_across_reshape(first):
            return
        new_ops: list[Operation] = []
        sources = [
            _source(v, m, first, new_ops, wide) for v, m in zip(op.operands, moves, strict=True)
        ]
        if any(s is None for s in sources):
            drop_ops(new_ops)
            return
        attrs = {name: op.attr(name) for name in op.properties}
        try:
            moved_op = type(op).make(*sources, **attrs)
        except (ValueError, TypeError):
            drop_ops(new_ops)
            return
        if _shape(moved_op.results[0]) != _shape(first.operands[0]):  # no new broadcast
            drop_ops([*new_ops, moved_op])
            return
        moved = type(first).make(moved_op, *first.operands[1:], **_attrs(first))
        replace_if_typed(rewriter, op, [*new_ops, moved_op, moved])


class ElementwiseBeforeSqueeze(ElementwiseBeforeMovement):
    """``elementwise-before-movement`` as ``conv-forms`` runs it between 1-D convolutions
    (:attr:`ElementwiseBeforeMovement.THROUGH_SQUEEZES`); not an ``algebraic-simplify``
    rule of its own (no :func:`simplify_rule`)."""

    THROUGH_SQUEEZES = True


def _source(
    value: SSAValue,
    movement: _Movement | None,
    first: _Movement,
    ops: list[Operation],
    wide: bool,
) -> SSAValue | None:
    """What the op moved before ``first`` reads in place of ``value``: the source of the
    same movement, or a constant brought to the source's dims (a per-channel scale
    of a squeezed 1-D convolution result: DAC's Snake); None when neither applies."""
    if movement is not None:
        return movement.operands[0] if _same_movement(first, movement) else None
    array = constant_array(value) if wide and _squeezes_a_convolution(first) else None
    if array is None or not isinstance(first, SqueezeOp):
        return None
    result = first.results[0].type
    rank = result.rank if isinstance(result, TensorType) else None
    if rank is None or array.ndim > rank:
        return None
    axes = squeezed_axes(first)
    if axes is None:
        return None
    full = array.reshape((1,) * (rank - array.ndim) + array.shape)
    moved = np.expand_dims(full, tuple(axes))
    constant = new_constant(moved)  # a higher rank than value: its formats do not carry
    ops.append(constant)
    return constant.results[0]


_Movement = TransposeOp | ReshapeOp | SqueezeOp | UnsqueezeOp
_RESHAPES = (ReshapeOp, SqueezeOp, UnsqueezeOp)
"""Movements that keep the row-major order: one element mapping per result shape."""


def _movement(value: SSAValue, wide: bool) -> _Movement | None:
    """The movement producing ``value`` that nothing else reads, if any; in the wide form
    a convolution's Squeeze may have several readers when they are an elementwise region
    over it alone (:func:`_closed_region`: DAC's Snake, ``x + a·sin(a·x)²``, reads x
    twice), which the rule then moves reader by reader until the movement is unread."""
    for cls in (TransposeOp, *_RESHAPES):
        movement = made_by(value, cls)
        if movement is not None:
            return movement
    owner = value.owner
    if wide and _squeezes_a_convolution(owner) and in_origin_view(owner):
        if all(_closed_region(use.operation, value) for use in value.uses):
            return owner
    return None


def _squeezes_a_convolution(op: Operation | Block) -> TypeGuard[SqueezeOp]:
    """``op`` is a Squeeze of a conv2d's result, or of elementwise ops over one (what the
    rule has moved already): the squeeze ``conv-forms`` put after a 1-D convolution, which
    the wide moves take to the next convolution's unsqueeze. Any other squeeze or
    unsqueeze keeps the plain rule (a partial move would split a fusion group)."""
    if not isinstance(op, SqueezeOp):
        return False
    value = op.data
    for _ in range(MAX_REGION_DEPTH):
        owner = value.owner
        if isinstance(owner, Conv2dOp):
            return True
        if not isinstance(owner, UnaryElementwiseOp | BinaryElementwiseOp):
            return False
        inputs = [v for v in owner.operands if constant_array(v) is None]
        if not inputs:
            return False
        value = inputs[0]
    return False


MAX_REGION_DEPTH = 8
"""How far :func:`_closed_region` follows an operand back to the movement."""


def _closed_region(op: Operation, root: SSAValue, depth: int = MAX_REGION_DEPTH) -> bool:
    """Whether ``op`` is an elementwise op of one result whose operands are ``root``,
    constants, the same movement of another tensor (a residual add of two squeezed
    convolutions), or (up to ``depth`` ops back) elementwise ops of the same kind: moved
    before the movement one by one, such a region leaves it unread."""
    if not isinstance(op, UnaryElementwiseOp | BinaryElementwiseOp) or len(op.results) != 1:
        return False
    movement = root.owner
    if not isinstance(movement, Operation):
        return False
    for operand in op.operands:
        if operand == root or constant_array(operand) is not None:
            continue
        producer = operand.owner
        if isinstance(producer, type(movement)) and producer.results[0].type == root.type:
            continue  # the same movement of another tensor: moved together with root
        if depth == 0 or not isinstance(producer, Operation):
            return False
        if not _closed_region(producer, root, depth - 1):
            return False
    return True


def _epilogue_across_reshape(movement: _Movement) -> bool:
    """A reshape of a product's result: fuse-ops already takes the elementwise ops after
    it into the product's epilogue (a legacy export's ``addmm`` between reshapes); moved
    before it they would read the product in its FRACTAL_NZ storage, which no matmul
    epilogue takes (the group then splits into three kernels)."""
    return isinstance(movement, _RESHAPES) and isinstance(
        movement.operands[0].owner, MatMulOp | GemmOp
    )


def _same_movement(a: _Movement, b: _Movement) -> bool:
    """Two transposes of one perm, or two reshapes (squeezes, unsqueezes) to one shape, of
    same-shaped tensors (so the moved op needs no broadcast the original did not have)."""
    if type(a) is not type(b) or a.results[0].type != b.results[0].type:
        return False
    ta, tb = a.operands[0].type, b.operands[0].type
    if not isinstance(ta, TensorType) or not isinstance(tb, TensorType):
        return False
    if ta.origin_shape != tb.origin_shape or not dims_known(ta):
        return False  # an unknown dim may be 1 in one and broadcast
    if isinstance(a, TransposeOp):
        return a.attr("perm") == b.attr("perm")
    return static_shape(a.results[0]) is not None


def _shape(value: SSAValue) -> tuple[object, ...] | None:
    t = value.type
    return tuple(t.origin_shape) if isinstance(t, TensorType) else None
