"""Rules 38 and 39: combine sibling convs / matmuls; move casts and transposes across
Concat and Slice.

Rule 38 combines k >= 2 Conv (group 1) or MatMul ops that read the same input with constant
weights of equal shape except the output channels into one op with concatenated weights and
a Split. A MatMul whose one user adds a constant row bias (``Add(MatMul(x, Wi), bi)`` in
either operand order, ``bi`` of shape ``[..., 1, Ni]``: BERT / RoBERTa / ViT's Q, K and V
projections) is combined with its bias: ``Split(MatMul(x, concat(W)) + concat(b))``, the
bias staying in the combined matmul's epilogue; siblings combine only when all have such a
bias or none has. It pays when the launches and input reads saved exceed the
Split's copy and the epilogue fusions it prevents (a sibling whose result -- the bias Add's
for a biased one -- has an elementwise user loses it: that user becomes a kernel of its own
and re-reads the result): ``(k - 2 - e) * launch + (k - 1) * bytes(x) - 2 * bytes(outputs)
- 2 * bytes(outputs with such a user) > 0`` for ``e`` such siblings, a launch counted as the
bytes the preset's global memory moves while the device schedules one task of a compiled
(sunk) model (ascend910b: 2 µs at 1.6 TB/s = 3.2 MB; ``task_overhead_us``, the cycle
model's default launch mode). It does not fire while a sibling still has a BatchNorm or
per-channel constant arithmetic to fold (that fold needs the separate ops; a 2-D MatMul's
bias Add is such a fold, into a Gemm), and never on storage layouts.

Rule 39 moves elementwise casts and transposes to the side where they do less work or
fewer ops: ``Concat(Cast(a), Cast(b))`` is one Cast of the Concat, ``Concat(Transpose(a, p),
Transpose(b, p))`` one Transpose of the Concat (on axis ``p[axis]``), and a Slice of a
Cast / Transpose slices first, and a MatMul fed by a Reshape that flattens the leading dims
and followed by the Reshape that restores them is one batched MatMul. All exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from tilegraph.dialects.graph import FusionKind, GraphOp
from tilegraph.dialects.graph.binary import AddOp, DivOp, MulOp, SubOp
from tilegraph.dialects.graph.constant_ops import ShapeOp, SizeOp
from tilegraph.dialects.graph.data_movement import ConcatOp, SliceOp, SplitOp
from tilegraph.dialects.graph.elementwise import CastOp
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.nn import BatchNormOp, Conv2dOp, ConvOp
from tilegraph.dialects.graph.shape_ops import ReshapeOp, TransposeOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.shape import N0
from tilegraph.passes.simplify.match import constant_array, in_origin_view, new_constant
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule
from tilegraph.target import target_of

_CONVS = (Conv2dOp, ConvOp)
_Op = TypeVar("_Op", bound=Operation)


def _bytes(value: SSAValue) -> int:
    t = value.type
    n = t.storage_bytes() if isinstance(t, TensorType) else None
    return n or 0


def _launch_bytes(op: Operation) -> float:
    """Global-memory bytes one kernel launch of a compiled model costs in time (the
    module's target; a sunk model's task, as ``tilegraph.compile`` runs it)."""
    hw = target_of(op).hw
    return hw.task_overhead_us * hw.gm_bandwidth_gbps * 1e3


def _folds_pending(op: Operation) -> bool:
    """A user that fold-batchnorm would fold into ``op`` (so it must stay separate)."""
    for use in op.results[0].uses:
        user = use.operation
        if isinstance(user, BatchNormOp):
            return True
        if isinstance(user, AddOp | SubOp | MulOp | DivOp) and any(
            constant_array(v) is not None for v in user.operands
        ):
            return True
    return False


def _has_epilogue(value: SSAValue) -> bool:
    return any(
        isinstance(use.operation, GraphOp)
        and use.operation.FACTS.fusion in (FusionKind.ELEMWISE, FusionKind.BROADCAST)
        for use in value.uses
    )


def _row_bias(op: Operation) -> tuple[AddOp, np.ndarray] | None:
    """The bias Add of a MatMul with constant 2-D weights ``[K, N]`` and an input of rank
    above 2, and its bias: the MatMul's one user, adding a constant of shape ``[..., 1, N]``
    that changes neither the result's type nor its rank; else None. (A 2-D input's Add is
    fold-batchnorm's, into a Gemm.)"""
    if not isinstance(op, MatMulOp) or not isinstance(op.lhs.type, TensorType):
        return None
    uses = list(op.results[0].uses)
    w = constant_array(op.rhs)
    if len(uses) != 1 or w is None or w.ndim != 2 or op.lhs.type.rank <= 2:
        return None
    add = uses[0].operation
    if not isinstance(add, AddOp) or add.output.type != op.results[0].type:
        return None
    bias = constant_array(add.operands[1 - uses[0].index])
    if bias is None or bias.ndim == 0 or bias.ndim > op.lhs.type.rank:
        return None
    if bias.shape[-1] != w.shape[1] or any(d != 1 for d in bias.shape[:-1]):
        return None
    return add, bias


def _tail(op: Operation) -> SSAValue:
    """What a sibling's combined form replaces: its bias Add's result, else its own."""
    biased = _row_bias(op)
    return op.results[0] if biased is None else biased[0].output


def _weight_key(op: Operation) -> tuple[object, ...] | None:
    """What must agree between siblings: kind, properties, weight shape but the channels
    (and for a MatMul whether it has a row bias)."""
    if not in_origin_view(op):
        return None
    if isinstance(op, MatMulOp):
        w = constant_array(op.rhs)
        if w is None or w.ndim != 2:
            return None
        biased = _row_bias(op)
        if biased is None and _folds_pending(op):
            return None
        # The bias has the result's dtype (an Add's operands have one element type), so
        # siblings with one weight dtype and a bias each have one bias dtype.
        return (MatMulOp, w.shape[0], w.dtype, biased is not None)
    if _folds_pending(op):
        return None
    if isinstance(op, _CONVS):
        w = constant_array(op.weight)
        if w is None or op.attr("group") != 1:
            return None
        if op.bias is not None and constant_array(op.bias) is None:
            return None
        props = tuple(sorted((k, str(v)) for k, v in op.properties.items()))
        return (type(op), w.shape[1:], w.dtype, props)
    return None


@simplify_rule
class CombineSiblings(SimplifyRule):
    """Rule 38 (see the module docstring)."""

    INFO = RuleInfo(
        38,
        "combine-parallel",
        "Conv(x, W1), Conv(x, W2) ... (or MatMul(x, B1) [+ b1], MatMul(x, B2) [+ b2] ...)",
        "Split(Conv(x, concat(W1, W2 ...))) (Split(MatMul(x, concat(B1 ...)) + concat(b1 ...)))",
        "constant weights, equal attributes, group 1; a MatMul's bias a constant row "
        "on every sibling or none; only when launches and reads saved exceed "
        "the Split's copy; not while a BN/per-channel fold is pending",
        "TVM(CombineParallelConv2D, CombineParallelDense)",
    )
    ROOTS = (*_CONVS, MatMulOp)

    def rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        key = _weight_key(op)
        if key is None:
            return
        x = op.operands[0]
        siblings = [
            use.operation
            for use in x.uses
            if use.index == 0
            and use.operation.parent_block() is op.parent_block()
            and _weight_key(use.operation) == key
        ]
        siblings = sorted(dict.fromkeys(siblings), key=_position)
        if len(siblings) < 2 or op is not siblings[0]:
            return
        k = len(siblings)
        tails = [_tail(s) for s in siblings]
        outputs = sum(_bytes(t) for t in tails)
        # An elementwise user could have fused into its sibling's kernel; after a Split it
        # is a kernel of its own that reads the result from global memory again. (A bias
        # Add is no such loss: it stays in the combined op's epilogue.)
        epilogues = [t for t in tails if _has_epilogue(t)]
        launches_saved = k - 1 - 1 - len(epilogues)  # one conv for k, plus the Split
        bytes_saved = (k - 1) * _bytes(x) - 2 * outputs
        bytes_saved -= sum(2 * _bytes(t) for t in epilogues)
        if launches_saved * _launch_bytes(op) + bytes_saved <= 0:
            return
        combined = self._combined(siblings)
        if combined is None:
            return
        new_ops, results = combined
        for new in new_ops:
            rewriter.insert(new, InsertPoint.before(op))
        for sibling, tail, result in zip(siblings, tails, results, strict=True):
            result.name_hint = tail.name_hint
            if tail.owner is not sibling:  # the bias Add goes, then its matmul
                assert isinstance(tail.owner, Operation)
                rewriter.replace(tail.owner, [], [result])
                rewriter.erase(sibling)
            else:
                rewriter.replace(sibling, [], [result])

    @staticmethod
    def _combined(
        siblings: Sequence[Operation],
    ) -> tuple[list[Operation], list[SSAValue]] | None:
        first = siblings[0]
        x = first.operands[0]
        weights = [_constant(s.operands[1]) for s in siblings]
        new_ops: list[Operation] = []
        if isinstance(first, MatMulOp):
            w = new_constant(np.concatenate(weights, axis=1))
            main: Operation = MatMulOp.make(x, w)
            sizes = [int(wi.shape[1]) for wi in weights]
            axis = -1
            row_biases = [_row_bias(s) for s in siblings]
            if row_biases[0] is not None:  # all or none: the siblings' key says which
                parts = [b.reshape(-1) for _, b in filter(None, row_biases)]
                bias_op = new_constant(np.concatenate(parts))
                product = main
                main = AddOp.make(product, bias_op)
                new_ops += [product, bias_op]
                if first.results[0].name_hint:
                    product.results[0].name_hint = f"{first.results[0].name_hint}_combined"
                    bias_op.output.name_hint = f"{first.results[0].name_hint}_combined_bias"
        else:
            assert isinstance(first, Conv2dOp | ConvOp)
            sizes = [int(wi.shape[0]) for wi in weights]
            like = first.weight.type
            w = new_constant(np.concatenate(weights, axis=0), like)  # type: ignore[arg-type]
            bias = None
            biases = [None if s.bias is None else _constant(s.bias) for s in siblings]  # type: ignore[attr-defined]
            if any(b is not None for b in biases):
                parts = [
                    np.zeros(n, weights[0].dtype) if b is None else b
                    for b, n in zip(biases, sizes, strict=True)
                ]
                bias_op = new_constant(np.concatenate(parts))
                new_ops.append(bias_op)
                bias = bias_op.output
            props: dict[str, Any] = {
                k: v for k, v in first.properties.items() if k != "operandSegmentSizes"
            }
            main = type(first).make(x, w, bias, **props)
            axis = 1
        split_sizes = new_constant(np.array(sizes, np.int64))
        split = SplitOp.make(main, split_sizes, axis=axis)
        base = _tail(first).name_hint
        if base:
            w.output.name_hint = f"{first.results[0].name_hint}_combined_weight"
            main.results[0].name_hint = f"{base}_combined"
            split_sizes.output.name_hint = f"{base}_split_sizes"
        if [r.type for r in split.results] != [_tail(s).type for s in siblings]:
            return None
        return [w, *new_ops, main, split_sizes, split], list(split.results)


def _constant(value: SSAValue) -> np.ndarray:
    data = constant_array(value)
    assert data is not None, "checked by _weight_key"
    return data


def _position(op: Operation) -> int:
    block = op.parent_block()
    assert block is not None
    return block.get_operation_index(op)


def _name(old: Operation, inner: Operation, outer: Operation) -> None:
    """``outer`` takes over ``old``'s name; ``inner`` gets it with a suffix."""
    hint = old.results[0].name_hint
    outer.results[0].name_hint = hint
    if hint:
        inner.results[0].name_hint = f"{hint}_moved"


def _combined_projection(split: SplitOp) -> tuple[MatMulOp, AddOp | None] | None:
    """``split``'s input as ``MatMul(x, W) [+ b]`` (what rule 38 makes): constant 2-D
    ``W``, a row bias, each op read by the next alone, the split on the last axis by
    constant sizes; else None."""
    value = split.input
    t = value.type
    sizes = constant_array(split.split)
    if not isinstance(t, TensorType) or sizes is None or split.attr("axis") % t.rank != t.rank - 1:
        return None
    owner = value.owner
    if len(list(value.uses)) != 1 or not isinstance(owner, AddOp | MatMulOp):
        return None
    add = owner if isinstance(owner, AddOp) else None
    mm = (
        owner
        if add is None
        else next((o.owner for o in owner.operands if isinstance(o.owner, MatMulOp)), None)
    )
    # A bias must be the product's one user, and a row: what rule 38's Add is.
    if not isinstance(mm, MatMulOp) or (add is not None and _row_bias(mm) is None):
        return None
    w = constant_array(mm.rhs)
    if w is None or w.ndim != 2 or len(list(mm.results[0].uses)) != 1:
        return None
    return mm, add


def _shape_only(value: SSAValue, skip: Operation) -> bool:
    """Every reader of ``value`` but ``skip`` reads its shape alone (Shape / Size, or a
    Reshape / Transpose read that way: the SDPA export's shape of k)."""
    for use in value.uses:
        user = use.operation
        if user is skip or isinstance(user, ShapeOp | SizeOp):
            continue
        if not isinstance(user, ReshapeOp | TransposeOp) or use.index != 0:
            return False
        if not _shape_only(user.results[0], skip):
            return False
    return True


@simplify_rule
class ScaleIntoCombined(SimplifyRule):
    """``Mul(Split(MatMul(x, W) + b)[i], c)`` -> piece ``i``'s columns of ``W`` and ``b``
    times ``c`` (an SDPA export's ``sqrt(scale)`` on q and k after rule 38)."""

    INFO = RuleInfo(
        38,
        "combined-projection-scale",
        "Mul(Split(MatMul(x, W) [+ b])[i], c)",
        "Split(MatMul(x, W') [+ b'])[i]: piece i's columns of W, b times c",
        "constant float W, b, c; c one element or a row of piece i; the product and sum "
        "read by nothing else, the piece by nothing else but its shape's readers; rounds "
        "as fold-batchnorm's scale does",
        "fold-batchnorm",
    )
    ROOTS = (MulOp,)

    def rewrite(self, op: MulOp, rewriter: PatternRewriter) -> None:
        piece = next((v for v in op.operands if isinstance(v.owner, SplitOp)), None)
        if piece is None or not in_origin_view(op) or op.output.type != piece.type:
            return
        split = piece.owner
        assert isinstance(split, SplitOp)
        c = constant_array(op.operands[1 - list(op.operands).index(piece)])
        found = _combined_projection(split)
        if c is None or found is None or not _shape_only(piece, op):
            return
        mm, add = found
        index = next(i for i, r in enumerate(split.results) if r is piece)
        sizes = [int(n) for n in _constant(split.split)]  # type: ignore[arg-type]
        start, width = sum(sizes[:index]), sizes[index]
        if c.size != 1 and (c.size != width or c.shape[-1] != width):  # one scale, or a row
            return
        w = _constant(mm.rhs)
        if not np.issubdtype(w.dtype, np.floating):
            return
        scale = np.ones(w.shape[1], w.dtype)
        scale[start : start + width] = c.reshape(-1).astype(w.dtype)
        new_ops: list[Operation] = [new_constant(w * scale)]
        new_ops[0].results[0].name_hint = mm.rhs.name_hint
        product = MatMulOp.make(mm.lhs, new_ops[0].results[0])
        new_ops.append(product)
        top: Operation = product
        if add is not None:
            b = _row_bias(mm)
            assert b is not None
            bias = new_constant((b[1].reshape(-1) * scale).astype(b[1].dtype))
            top = AddOp.make(product, bias)
            new_ops += [bias, top]
        new_split = SplitOp.make(top, split.split, axis=split.attr("axis"))
        new_ops.append(new_split)
        for old, new in zip((mm, add, split), (product, top, new_split), strict=False):
            if old is not None:
                for r_old, r_new in zip(old.results, new.results, strict=True):
                    r_new.name_hint = r_old.name_hint
        new_split.results[index].name_hint = op.output.name_hint
        for new in new_ops:
            rewriter.insert(new, InsertPoint.before(split))
        # The piece's other readers read its shape alone: the scaled piece has it too.
        rewriter.replace(op, [], [new_split.results[index]])
        rewriter.replace(split, [], list(new_split.results))
        if add is not None:
            rewriter.erase(add)
        rewriter.erase(mm)


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
