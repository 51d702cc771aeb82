"""Rule 39: move casts and transposes across Concat and Slice (rule 38, which combines
sibling convs / matmuls, is :mod:`tilegraph.passes.simplify.combine_rules`).

Rule 39 moves elementwise casts and transposes to the side where they do less work or
fewer ops: ``Concat(Cast(a), Cast(b))`` is one Cast of the Concat, ``Concat(Transpose(a, p),
Transpose(b, p))`` one Transpose of the Concat (on axis ``p[axis]``), and a Slice of a
Cast / Transpose slices first, and a MatMul fed by a Reshape that flattens the leading dims
and followed by the Reshape that restores them is one batched MatMul. All exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.data_movement import ConcatOp, SliceOp
from tilegraph.dialects.graph.elementwise import CastOp
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.shape_ops import ReshapeOp, TransposeOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.shape import N0
from tilegraph.passes.simplify.match import constant_array, in_origin_view, new_constant
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule

_Op = TypeVar("_Op", bound=Operation)


def _name(old: Operation, inner: Operation, outer: Operation) -> None:
    """``outer`` takes over ``old``'s name; ``inner`` gets it with a suffix."""
    hint = old.results[0].name_hint
    outer.results[0].name_hint = hint
    if hint:
        inner.results[0].name_hint = f"{hint}_moved"


# ---- rule 39 ------------------------------------------------------------------------------


def _single_use_producers(values: Sequence[SSAValue], cls: type[_Op]) -> list[_Op] | None:
    """The ops of type ``cls`` producing ``values``, each value used once; else None."""
    ops: list[_Op] = []
    for v in values:
        owner = v.owner
        if not isinstance(owner, cls) or len(list(v.uses)) != 1 or not in_origin_view(owner):
            return None
        ops.append(owner)
    return ops


@simplify_rule
class ConcatOfCasts(SimplifyRule):
    """``Concat(Cast(a, T), Cast(b, T))`` from one source type -> ``Cast(Concat(a, b), T)``."""

    INFO = RuleInfo(
        39,
        "concat-of-casts",
        "Concat(Cast(a, T), Cast(b, T), ...)",
        "Cast(Concat(a, b, ...), T)",
        "every operand a single-use cast to T from one source type; exact",
        "OO GE",
    )
    ROOTS = (ConcatOp,)

    def rewrite(self, op: ConcatOp, rewriter: PatternRewriter) -> None:
        casts = _single_use_producers(list(op.inputs), CastOp)
        if not casts or len(casts) < 2 or not in_origin_view(op):
            return
        sources = {c.input.type.element_type for c in casts}  # type: ignore[union-attr]
        conversions = {tuple(sorted(c.conversion_attrs().items())) for c in casts}
        if len(sources) != 1 or len(conversions) != 1:
            return
        concat = ConcatOp.make(*(c.input for c in casts), axis=op.attr("axis"))
        cast = CastOp.make(concat, **casts[0].conversion_attrs())
        if cast.results[0].type != op.results[0].type:
            return
        _name(op, concat, cast)
        rewriter.replace(op, [concat, cast])
        for c in casts:
            rewriter.erase(c)


@simplify_rule
class ConcatOfTransposes(SimplifyRule):
    """``Concat(Transpose(a, p), Transpose(b, p), axis)`` ->
    ``Transpose(Concat(a, b, axis = p[axis]), p)``."""

    INFO = RuleInfo(
        39,
        "concat-of-transposes",
        "Concat(Transpose(a, p), Transpose(b, p), ...; axis)",
        "Transpose(Concat(a, b, ...; p[axis]), p)",
        "one permutation, single-use transposes; exact",
        "OO TVM GE",
    )
    ROOTS = (ConcatOp,)

    def rewrite(self, op: ConcatOp, rewriter: PatternRewriter) -> None:
        transposes = _single_use_producers(list(op.inputs), TransposeOp)
        if not transposes or len(transposes) < 2 or not in_origin_view(op):
            return
        perms = {t.attr("perm") for t in transposes}
        if len(perms) != 1:
            return
        rank = len(op.results[0].type.origin_shape)  # type: ignore[union-attr]
        perm = perms.pop() or tuple(reversed(range(rank)))
        axis = op.attr("axis") % rank
        concat = ConcatOp.make(*(t.data for t in transposes), axis=int(perm[axis]))
        transpose = TransposeOp.make(concat, perm=list(perm))
        if transpose.results[0].type != op.results[0].type:
            return
        _name(op, concat, transpose)
        rewriter.replace(op, [concat, transpose])
        for t in transposes:
            rewriter.erase(t)


@simplify_rule
class SliceOfCast(SimplifyRule):
    """``Slice(Cast(x))`` -> ``Cast(Slice(x))``: the cast converts only what is kept."""

    INFO = RuleInfo(
        39,
        "slice-before-cast",
        "Slice(Cast(x, T), ...)",
        "Cast(Slice(x, ...), T)",
        "the cast has no other user; exact",
        "TVM GE",
    )
    ROOTS = (SliceOp,)

    def rewrite(self, op: SliceOp, rewriter: PatternRewriter) -> None:
        found = _single_use_producers([op.data], CastOp)
        if not found or not in_origin_view(op):
            return
        (cast,) = found
        sliced = SliceOp.make(cast.input, *op.operand_slots()[1:])
        new_cast = CastOp.make(sliced, **cast.conversion_attrs())
        if new_cast.results[0].type != op.results[0].type:
            return
        _name(op, sliced, new_cast)
        rewriter.replace(op, [sliced, new_cast])
        rewriter.erase(cast)


@simplify_rule
class SliceOfTranspose(SimplifyRule):
    """``Slice(Transpose(x, p), axes a)`` -> ``Transpose(Slice(x, axes p[a]), p)``."""

    INFO = RuleInfo(
        39,
        "slice-before-transpose",
        "Slice(Transpose(x, p), starts, ends, axes a)",
        "Transpose(Slice(x, starts, ends, axes p[a]), p)",
        "constant axes; the transpose has no other user; exact",
        "TVM GE",
    )
    ROOTS = (SliceOp,)

    def rewrite(self, op: SliceOp, rewriter: PatternRewriter) -> None:
        found = _single_use_producers([op.data], TransposeOp)
        if not found or not in_origin_view(op):
            return
        (transpose,) = found
        rank = len(op.results[0].type.origin_shape)  # type: ignore[union-attr]
        perm = transpose.attr("perm") or tuple(reversed(range(rank)))
        starts = constant_array(op.starts)
        if starts is None:
            return
        axes = np.arange(starts.size) if op.axes is None else constant_array(op.axes)
        if axes is None:
            return
        moved = np.array([perm[int(a) % rank] for a in axes.reshape(-1)], np.int64)
        new_axes = new_constant(moved)
        new_axes.output.name_hint = f"{op.results[0].name_hint or 'slice'}_axes"
        slots = op.operand_slots()
        sliced = SliceOp.make(transpose.data, slots[1], slots[2], new_axes, slots[4])
        new_transpose = TransposeOp.make(sliced, perm=list(perm))
        if new_transpose.results[0].type != op.results[0].type:
            return
        _name(op, sliced, new_transpose)
        rewriter.replace(op, [new_axes, sliced, new_transpose])
        rewriter.erase(transpose)


@simplify_rule
class ReshapeAcrossMatMul(SimplifyRule):
    """``Reshape(MatMul(Reshape(x, [P, K]), W), [..., M, N])`` -> ``MatMul(x, W)`` when x is
    ``[..., M, K]``, P is the product of its leading dims and the outer Reshape restores
    them: the flattening only existed to feed a 2-D MatMul (transformer Linear exports).

    Exact: every row of the product depends on its own row of x only, so the batched
    MatMul computes the same rows; W must be 2-D (no batch dims to broadcast).

    Not when x's slices have fewer than ``N0`` (16) rows and there are several: the cube
    pads each slice's M to a fractal of 16 rows, so the batched form would multiply
    ``16 / M`` times the rows the flat one does (a recurrent layer's ``[T, B, I]``
    projection with a batch of 2: 8x; ``hoist-loop-projection`` flattens it so).
    """

    INFO = RuleInfo(
        39,
        "reshape-across-matmul",
        "Reshape(MatMul(Reshape(x: [..., M, K] -> [P, K]), W[K, N]) -> [..., M, N])",
        "MatMul(x, W)",
        "the reshapes only merge and restore x's leading dims; W 2-D; static shapes; "
        "M >= 16 or one slice (the cube pads each slice's M to 16 rows); exact",
        "ORT(MatMul reshape fusion) TVM",
    )
    ROOTS = (ReshapeOp,)

    def rewrite(self, op: ReshapeOp, rewriter: PatternRewriter) -> None:
        mm = _single_use_producers([op.data], MatMulOp)
        if not mm or not in_origin_view(op):
            return
        (matmul,) = mm
        flat = _single_use_producers([matmul.lhs], ReshapeOp)
        w = matmul.rhs.type
        if not flat or not isinstance(w, TensorType) or w.rank != 2:
            return
        x = flat[0].data
        shapes = [v.type for v in (x, matmul.lhs, op.reshaped)]
        if not all(isinstance(t, TensorType) and t.is_static for t in shapes):
            return
        xs, fs, ys = ([int(d) for d in t.origin_shape] for t in shapes)  # type: ignore[union-attr]
        if len(xs) < 3 or len(fs) != 2 or fs != [int(np.prod(xs[:-1])), xs[-1]]:
            return
        if xs[-2] < N0 and fs[0] > xs[-2]:  # several slices each padded to a fractal
            return
        if ys != [*xs[:-1], int(w.origin_shape[1])]:  # type: ignore[arg-type]
            return
        batched = MatMulOp.make(x, matmul.rhs)
        if batched.results[0].type != op.reshaped.type:
            return
        batched.results[0].name_hint = op.reshaped.name_hint
        rewriter.replace(op, [batched])
        rewriter.erase(matmul)
        rewriter.erase(flat[0])
