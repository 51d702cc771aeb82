"""Rule 38: combine sibling convs / matmuls (and their row biases, and a constant scale of
one combined piece).

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
bias Add is such a fold, into a Gemm), and never on storage layouts. A constant scale of one
piece (one element or a row; torch's SDPA export scales q and k by ``sqrt(scale)``) is no
lost epilogue either: ``combined-projection-scale`` folds ``Mul(Split(MatMul(x, W) +
b)[i], c)`` into piece ``i``'s columns of ``W`` and ``b`` (rounding as fold-batchnorm's
scale does), so the pieces stay views of the attention's operands.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from tilegraph.dialects.graph import FusionKind, GraphOp
from tilegraph.dialects.graph.binary import AddOp, DivOp, MulOp, SubOp
from tilegraph.dialects.graph.constant_ops import ShapeOp, SizeOp
from tilegraph.dialects.graph.data_movement import SplitOp
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.nn import BatchNormOp, Conv2dOp, ConvOp
from tilegraph.dialects.graph.shape_ops import ReshapeOp, TransposeOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.simplify.match import constant_array, in_origin_view, new_constant
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule
from tilegraph.target import target_of

_CONVS = (Conv2dOp, ConvOp)


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
    """An elementwise reader of ``value`` (a constant scale that combined-projection-scale
    folds into the combined weights is none)."""
    return _piece_scale(value) is None and any(
        isinstance(use.operation, GraphOp)
        and use.operation.FACTS.fusion in (FusionKind.ELEMWISE, FusionKind.BROADCAST)
        for use in value.uses
    )


def _piece_scale(value: SSAValue) -> tuple[MulOp, np.ndarray] | None:
    """The reader ``Mul(value, c)`` (either order) of float ``value`` and its constant ``c``,
    when ``c`` is one element or a row of ``value``'s last dim that broadcasts nothing and
    the other readers read ``value``'s shape alone; else None."""
    t = value.type
    for use in value.uses:
        mul = use.operation
        c = constant_array(mul.operands[1 - use.index]) if isinstance(mul, MulOp) else None
        if not isinstance(mul, MulOp) or c is None or not isinstance(t, TensorType):
            continue
        width = t.origin_shape[-1] if t.rank else 1
        row = c.ndim > 0 and c.size == width and c.shape[-1] == width  # [..., 1, width]
        if (c.size == 1 or row) and mul.output.type == t and np.issubdtype(c.dtype, np.floating):
            return (mul, c) if _shape_only(value, mul) else None
    return None


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
    if isinstance(op, _CONVS):
        if _folds_pending(op):
            return None
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
        scaled = None if piece is None else _piece_scale(piece)
        if piece is None or scaled is None or scaled[0] is not op or not in_origin_view(op):
            return
        split = piece.owner
        assert isinstance(split, SplitOp)
        found = _combined_projection(split)
        if found is None:
            return
        mm, add = found
        index = next(i for i, r in enumerate(split.results) if r is piece)
        sizes = [int(n) for n in _constant(split.split)]  # type: ignore[arg-type]
        start, width = sum(sizes[:index]), sizes[index]
        c = scaled[1]
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
