"""Einsum of one or two operands -> Transpose, ReduceSum, Reshape and a batched MatMul.

PyTorch exports ``torch.einsum`` as ONNX Einsum (both exporters); attention written as
``einsum("bthd,bshd->bhts", q, k)`` is one. The AI core has no kernel for an equation, but
every two-operand contraction without a repeated subscript is a batched matrix product
once its letters are grouped, as onnxruntime's Einsum and CANN's EinSum compute it:

* a letter of one operand that neither the other operand nor the output has is summed
  first (ReduceSum over it);
* of the rest, *batch* letters are in both operands and the output, *contracted* ones in
  both operands only, *row* letters in the left operand and the output, *column* letters
  in the right operand and the output;
* the left operand is transposed to ``[batch…, row…, contracted…]``, the right one to
  ``[batch…, contracted…, column…]``; a group of several letters (or none) is merged into
  one dim by a Reshape (batch dims copied with Reshape's ``0``), the MatMul broadcasts the
  batch dims as Einsum does, a Reshape splits the groups again and a Transpose puts the
  letters in the output's order.

One operand: ReduceSum over the letters the output drops, then the Transpose. An ellipsis
stands for letters of its own (right-aligned across the operands). Not rewritten: a
subscript repeated within a term (a diagonal), three or more operands, a contracted
letter whose two dims may differ, integer operands, a Reshape that would need two unknown
dims. Exact up to the order of the float sums.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.indexing import EinsumOp
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.reduction import ReduceSumOp
from tilegraph.dialects.graph.shape_ops import TransposeOp
from tilegraph.dialects.graph.windows import known
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import Dim
from tilegraph.passes.simplify.match import (
    drop_ops,
    ints_constant,
    is_float,
    replace_if_typed,
    reshaped,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule

Terms = tuple[list[str], str]


def expand_ellipses(equation: str, ranks: Sequence[int]) -> Terms | None:
    """The equation's operand terms and output with each ellipsis replaced by letters of
    its own, right-aligned (the explicit output; numpy's implicit one when there is no
    ``->``); None when a term does not fit its operand's rank or repeats a letter."""
    inputs, arrow, output = equation.replace(" ", "").partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ranks):
        return None
    spare = iter(
        c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in equation
    )
    widths = [rank - len(term.replace("...", "")) for term, rank in zip(terms, ranks, strict=True)]
    if any(w < 0 or (w and "..." not in t) for t, w in zip(terms, widths, strict=True)):
        return None
    dots = [next(spare) for _ in range(max(widths, default=0))]
    expanded = [
        t.replace("...", "".join(dots[len(dots) - w :])) for t, w in zip(terms, widths, strict=True)
    ]
    if not arrow:
        counts = {c: sum(t.count(c) for t in terms) for c in set("".join(terms)) - {"."}}
        output = "..." * any("..." in t for t in terms) + "".join(
            sorted(c for c, n in counts.items() if n == 1)
        )
    output = output.replace("...", "".join(dots))
    if any(len(set(t)) != len(t) for t in (*expanded, output)):
        return None
    return expanded, output


def _dims(value: SSAValue, term: str) -> dict[str, Dim]:
    t = value.type
    assert isinstance(t, TensorType)
    return dict(zip(term, t.origin_shape, strict=True))


def _summed(value: SSAValue, term: str, keep: str, ops: list[Operation]) -> tuple[SSAValue, str]:
    """``value`` summed over its letters that ``keep`` lacks."""
    axes = [i for i, c in enumerate(term) if c not in keep]
    if not axes:
        return value, term
    axes_op = ints_constant(axes)
    total = ReduceSumOp.make(value, axes_op.results[0], keepdims=0)
    ops += [axes_op, total]
    return total.results[0], "".join(c for c in term if c in keep)


def _transposed(value: SSAValue, term: str, order: str, ops: list[Operation]) -> SSAValue:
    if term == order:
        return value
    op = TransposeOp.make(value, perm=[term.index(c) for c in order])
    ops.append(op)
    return op.results[0]


def _merged(dims: Sequence[Dim]) -> int | None:
    """One dim for a group of letters: their product, -1 for one unknown, else None."""
    if all(known(d) for d in dims):
        return prod(int(d) for d in dims)  # type: ignore[arg-type]
    return -1 if len(dims) == 1 else None


def _grouped(
    value: SSAValue, batch: int, groups: Sequence[Sequence[Dim]], ops: list[Operation]
) -> SSAValue | None:
    """``value`` (``batch`` dims, then the groups' dims) with each group merged into one
    dim; None when that needs two unknown dims."""
    if all(len(g) == 1 for g in groups):
        return value
    sizes = [_merged(g) for g in groups]
    if None in sizes or sizes.count(-1) > 1:
        return None
    return reshaped(value, [0] * batch + [int(s) for s in sizes if s is not None], ops)


@simplify_rule
class EinsumAsMatMul(SimplifyRule):
    INFO = RuleInfo(
        None,
        "einsum-as-matmul",
        "Einsum(a[, b]) of float operands, no repeated subscript in a term",
        "ReduceSum / Transpose / Reshape, a batched MatMul, Reshape / Transpose",
        "two operands at most; contracted dims equal; groups of several letters of at most "
        "one unknown dim",
        "ORT, GE (EinSum as BatchMatMul)",
    )
    ROOTS = (EinsumOp,)

    def rewrite(self, op: EinsumOp, rewriter: PatternRewriter) -> None:
        operands = list(op.inputs)
        types = [v.type for v in operands]
        if not 1 <= len(operands) <= 2 or not all(isinstance(t, TensorType) for t in types):
            return
        if not all(is_float(v) for v in operands):
            return
        parsed = expand_ellipses(op.equation.data, [t.rank for t in types])  # type: ignore[union-attr]
        if parsed is None:
            return
        terms, out = parsed
        ops: list[Operation] = []
        if len(operands) == 1:
            x, term = _summed(operands[0], terms[0], out, ops)
            _transposed(x, term, out, ops)
        elif self._contract(operands, terms, out, ops) is None:
            drop_ops(ops)  # the part built before the decomposition gave up
            return
        if ops:  # none: the equation is the identity
            replace_if_typed(rewriter, op, ops)

    @staticmethod
    def _contract(
        operands: list[SSAValue], terms: list[str], out: str, ops: list[Operation]
    ) -> SSAValue | None:
        (a, b), (ta, tb) = operands, terms
        a, ta = _summed(a, ta, tb + out, ops)
        b, tb = _summed(b, tb, ta + out, ops)
        batch = "".join(c for c in out if c in ta and c in tb)
        contracted = "".join(c for c in ta if c in tb and c not in out)
        rows = "".join(c for c in ta if c not in tb)
        cols = "".join(c for c in tb if c not in ta)
        da, db = _dims(a, ta), _dims(b, tb)
        if any(da[c] != db[c] for c in contracted):
            return None
        lhs = _grouped(
            _transposed(a, ta, batch + rows + contracted, ops),
            len(batch),
            [[da[c] for c in rows], [da[c] for c in contracted]],
            ops,
        )
        rhs = _grouped(
            _transposed(b, tb, batch + contracted + cols, ops),
            len(batch),
            [[db[c] for c in contracted], [db[c] for c in cols]],
            ops,
        )
        if lhs is None or rhs is None:
            return None
        matmul = MatMulOp.make(lhs, rhs)
        ops.append(matmul)
        split = [da[c] for c in rows] + [db[c] for c in cols]
        product = matmul.results[0]
        if not (len(rows) == 1 and len(cols) == 1):
            if sum(not known(d) for d in split) > 1:
                return None
            product = reshaped(
                product, [0] * len(batch) + [int(d) if known(d) else -1 for d in split], ops
            )
        return _transposed(product, batch + rows + cols, out, ops)
