"""Canonical operand order and the fast-math reassociations: commutative operand order,
constant reassociation and distribution, factoring, small-operand grouping (rules 22, 23,
42-44).

All but ``commutative-order`` change the order of floating-point operations and hence the
rounding (and, for integers, nothing): they run only with ``fast-math=true``. Folded
constants are computed with numpy in the operands' element type, as the reference kernels
would compute them at run time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.base import GraphOp, ShapeError
from tilegraph.dialects.graph.binary import (
    AddOp,
    BinaryElementwiseOp,
    EqualOp,
    MaxOp,
    MinOp,
    MulOp,
    SumOp,
)
from tilegraph.dialects.graph.constant_ops import ConstantOp
from tilegraph.passes.simplify.match import (
    constant_array,
    in_origin_view,
    is_float,
    make_typed,
    new_constant,
    only_user,
    replace_with_ops,
    tensor_type_of,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule

_UFUNC: dict[type[Operation], np.ufunc] = {AddOp: np.add, MulOp: np.multiply}


def _is_constant(value: SSAValue) -> bool:
    return isinstance(value.owner, ConstantOp)


def _fold(cls: type[Operation], a: np.ndarray, b: np.ndarray, like: SSAValue) -> ConstantOp:
    """``a op b`` as a constant, computed with numpy in ``a``'s element type; it takes
    ``like``'s origin format when the ranks agree (an NCHW bias stays NCHW)."""
    with np.errstate(all="ignore"):
        array = np.asarray(_UFUNC[cls](a, b)).astype(a.dtype, copy=False)
    return new_constant(array, tensor_type_of(like))


def _make(cls: type[GraphOp], *operands: SSAValue) -> GraphOp | None:
    """An intermediate op of any inferred type; None if the shape function rejects it."""
    try:
        return cls.make(*operands)
    except (ShapeError, ValueError, TypeError):
        return None


def _finish(
    rewriter: PatternRewriter,
    op: BinaryElementwiseOp,
    cls: type[GraphOp],
    lhs: SSAValue,
    rhs: SSAValue,
    prefix: Sequence[Operation],
) -> None:
    """Replace ``op`` by ``cls(lhs, rhs)`` after ``prefix`` if the type is kept; otherwise
    drop the ops built for it."""
    final = make_typed(cls, lhs, rhs, like=op.output.type)
    if final is None:
        for p in reversed(prefix):
            p.drop_all_references()
        return
    replace_with_ops(rewriter, op, [*prefix, final])


def _split_constant(op: BinaryElementwiseOp) -> tuple[SSAValue, SSAValue, np.ndarray] | None:
    """(x, c, data of c) for an op with exactly one constant operand c (origin layout)."""
    lc, rc = constant_array(op.lhs), constant_array(op.rhs)
    if lc is not None and rc is None:
        return op.rhs, op.lhs, lc
    if rc is not None and lc is None:
        return op.lhs, op.rhs, rc
    return None


# ---- rule 42: canonical operand order -------------------------------------------------------


def _defined_after(a: Operation, b: Operation) -> bool:
    """Whether ``a`` comes after ``b`` in their (common) block, in O(distance): walk
    forward from both at once until one meets the other."""
    from_b, from_a = b.next_op, a.next_op
    while from_b is not None or from_a is not None:
        if from_b is a:
            return True
        if from_a is b:
            return False
        from_b = from_b.next_op if from_b is not None else None
        from_a = from_a.next_op if from_a is not None else None
    return False


def _out_of_order(a: SSAValue, b: SSAValue) -> bool:
    """Whether operand ``a`` should come after operand ``b``: constants last; block
    arguments first, by index; op results by position in the block, then result index.
    Values of different blocks, or two constants, are left alone."""
    a_const, b_const = _is_constant(a), _is_constant(b)
    if a_const or b_const:
        return a_const and not b_const
    a_op, b_op = a.owner, b.owner
    if isinstance(a_op, Operation) != isinstance(b_op, Operation):
        return isinstance(a_op, Operation)  # a result after a block argument
    if not isinstance(a_op, Operation) or not isinstance(b_op, Operation):
        return a_op is b_op and a.index > b.index  # type: ignore[attr-defined]
    if a_op is b_op:
        return a.index > b.index  # type: ignore[attr-defined]
    if a_op.parent_block() is None or a_op.parent_block() is not b_op.parent_block():
        return False
    return _defined_after(a_op, b_op)


def _exact_swap(op: Operation) -> bool:
    """Swapping the operands keeps every bit: IEEE add, mul and compare are commutative;
    numpy's float maximum/minimum return the second operand of a ``+0.0``/``-0.0`` tie,
    and Sum of three or more inputs rounds in operand order."""
    if isinstance(op, MaxOp | MinOp):
        return not is_float(op.output)
    if isinstance(op, SumOp):
        return len(op.inputs) == 2 or not is_float(op.output)
    return True


@simplify_rule
class CommutativeOrder(SimplifyRule):
    """Operands of commutative ops in one canonical order: constants last, otherwise block
    arguments by index, then op results by position, so that CSE sees ``a + b`` and
    ``b + a`` as one op.

    For add, mul, equal (any type); max, min (integers only: numpy picks the second of
    two equal-valued signed zeros); sum (2 inputs, or integers: float sums round in
    operand order). Swaps only out-of-order operands (so it never loops), and only when
    the result type stays the same.
    """

    INFO = RuleInfo(
        42,
        "commutative-order",
        "c + x, b + a (b defined after a); also mul, equal, max/min, sum",
        "x + c, a + b",
        "max/min: integers only (signed-zero ties); sum: 2 inputs or integers (rounding); "
        "result type unchanged",
        "ORT TVM OM PT",
    )
    ROOTS = (AddOp, MulOp, EqualOp, MaxOp, MinOp, SumOp)

    def rewrite(self, op: GraphOp, rewriter: PatternRewriter) -> None:
        if not _exact_swap(op) or not in_origin_view(op):
            return
        operands = list(op.operands)
        if not _has_inversion(operands):
            return
        ordered = _sorted(operands)
        if _has_inversion(ordered):  # values of other blocks: no total order, leave it
            return
        new = make_typed(type(op), *ordered, like=op.results[0].type)
        if new is not None:
            replace_with_ops(rewriter, op, [new])


def _has_inversion(values: list[SSAValue]) -> bool:
    return any(_out_of_order(a, b) for a, b in zip(values, values[1:], strict=False))


def _sorted(values: list[SSAValue]) -> list[SSAValue]:
    """Insertion sort by :func:`_out_of_order` (a partial order; inputs are short)."""
    out: list[SSAValue] = []
    for v in values:
        i = len(out)
        while i > 0 and _out_of_order(out[i - 1], v):
            i -= 1
        out.insert(i, v)
    return out


# ---- rules 22, 23: constants ------------------------------------------------------------------


@simplify_rule
class ReassociateConstants(SimplifyRule):
    """``(x op c1) op c2`` -> ``x op (c1 op c2)`` for op in add, mul (fast-math), with the
    new constant folded in the element type. The inner op must have no other user and
    the result type must stay the same.

    Changes rounding for floats (``(x + c1) + c2`` rounds twice); exact for integers.
    """

    INFO = RuleInfo(
        22,
        "reassociate-constants",
        "(x + c1) + c2, (x * c1) * c2",
        "x + (c1 + c2), x * (c1 * c2)",
        "float rounding changes; inner op has one user; constants folded in the dtype",
        "ORT TVM OM PT",
        fast_math=True,
    )
    ROOTS = (AddOp, MulOp)

    def rewrite(self, op: AddOp | MulOp, rewriter: PatternRewriter) -> None:
        outer = _split_constant(op)
        if outer is None or not in_origin_view(op):
            return
        inner_value, c2_value, c2 = outer
        inner = inner_value.owner
        if type(inner) is not type(op) or only_user(inner_value) is not op:
            return
        assert isinstance(inner, AddOp | MulOp)
        split = _split_constant(inner)
        if split is None or not in_origin_view(inner):
            return
        x, _, c1 = split
        folded = _fold(type(op), c1, c2, c2_value)
        _finish(rewriter, op, type(op), x, folded.output, [folded])


@simplify_rule
class DistributeConstant(SimplifyRule):
    """``(x + c1) * c2`` -> ``x * c2 + (c1 * c2)`` (fast-math), so that the scale can fold
    into a producer's weights and the shift into its bias. The add must have no other
    user and the result type must stay the same.

    Changes rounding (and ``inf * 0`` cases) for floats.
    """

    INFO = RuleInfo(
        23,
        "distribute-constant",
        "(x + c1) * c2",
        "x * c2 + c1 * c2",
        "float rounding changes; the add has one user",
        "TVM GE",
        fast_math=True,
    )
    ROOTS = (MulOp,)

    def rewrite(self, op: MulOp, rewriter: PatternRewriter) -> None:
        outer = _split_constant(op)
        if outer is None or not in_origin_view(op):
            return
        add_value, c2_value, c2 = outer
        add = add_value.owner
        if not isinstance(add, AddOp) or only_user(add_value) is not op:
            return
        split = _split_constant(add)
        if split is None or not in_origin_view(add):
            return
        x, c1_value, c1 = split
        mul = _make(MulOp, x, c2_value)
        if mul is not None:
            shift = _fold(MulOp, c1, c2, c1_value)
            _finish(rewriter, op, AddOp, mul.results[0], shift.output, [mul, shift])


# ---- rule 43: factor a common operand -------------------------------------------------------


def _mul_operands(value: SSAValue, user: Operation) -> tuple[SSAValue, SSAValue] | None:
    mul = value.owner
    if not isinstance(mul, MulOp) or only_user(value) is not user or not in_origin_view(mul):
        return None
    return mul.lhs, mul.rhs


@simplify_rule
class FactorCommonOperand(SimplifyRule):
    """``a * b + a * c`` (any operand order) -> ``a * (b + c)`` (fast-math); ``b + c`` is
    folded when both are constants. Both products must have no other user and the result
    type must stay the same. Not when ``a`` and one of ``b``, ``c`` are constants (that
    is the distributed form ``distribute-constant`` makes).

    Changes rounding: one product instead of two.
    """

    INFO = RuleInfo(
        43,
        "factor-common-operand",
        "a * b + a * c",
        "a * (b + c)",
        "float rounding changes; both products have one user",
        "TVM PT",
        fast_math=True,
    )
    ROOTS = (AddOp,)

    def rewrite(self, op: AddOp, rewriter: PatternRewriter) -> None:
        if op.lhs is op.rhs or not in_origin_view(op):
            return
        left, right = _mul_operands(op.lhs, op), _mul_operands(op.rhs, op)
        if left is None or right is None:
            return
        for i in (0, 1):
            for j in (0, 1):
                if left[i] is right[j]:
                    self._factor(op, left[i], left[1 - i], right[1 - j], rewriter)
                    return

    @staticmethod
    def _factor(
        op: AddOp, a: SSAValue, b: SSAValue, c: SSAValue, rewriter: PatternRewriter
    ) -> None:
        if _is_constant(a) and (_is_constant(b) or _is_constant(c)):
            return
        cb, cc = constant_array(b), constant_array(c)
        if cb is not None and cc is not None:
            folded = _fold(AddOp, cb, cc, b)
            _finish(rewriter, op, MulOp, a, folded.output, [folded])
            return
        total = _make(AddOp, b, c)
        if total is not None:
            _finish(rewriter, op, MulOp, a, total.results[0], [total])


# ---- rule 44: group the small operands ----------------------------------------------------


def _elements(value: SSAValue) -> int | None:
    t = tensor_type_of(value)
    return None if t is None or not t.is_static else t.num_elements()


@simplify_rule
class BroadcastMinimize(SimplifyRule):
    """``(A op b) op c`` -> ``A op (b op c)`` for op in add, mul (fast-math), when b and c
    have fewer elements than A and broadcast to it (the result has A's type), so that
    ``b op c`` runs at the small shape. The inner op must have no other user. Two
    constants ``b``, ``c`` are ``reassociate-constants``'s.

    Changes rounding for floats.
    """

    INFO = RuleInfo(
        44,
        "broadcast-minimize",
        "(A + b) + c, (A * b) * c  (b, c smaller than A)",
        "A + (b + c), A * (b * c)",
        "float rounding changes; static shapes; inner op has one user",
        "TVM",
        fast_math=True,
    )
    ROOTS = (AddOp, MulOp)

    def rewrite(self, op: AddOp | MulOp, rewriter: PatternRewriter) -> None:
        if not in_origin_view(op):
            return
        for inner_value, c in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            inner = inner_value.owner
            if type(inner) is not type(op) or only_user(inner_value) is not op:
                continue
            assert isinstance(inner, AddOp | MulOp)
            if inner_value.type != op.output.type or not in_origin_view(inner):
                continue
            for big, b in ((inner.lhs, inner.rhs), (inner.rhs, inner.lhs)):
                if big.type != op.output.type or (_is_constant(b) and _is_constant(c)):
                    continue
                n_big, n_b, n_c = _elements(big), _elements(b), _elements(c)
                if n_big is None or n_b is None or n_c is None or max(n_b, n_c) >= n_big:
                    continue
                small = _make(type(op), b, c)
                small_n = None if small is None else _elements(small.results[0])
                if small is None or small_n is None or small_n >= n_big:
                    if small is not None:
                        small.drop_all_references()
                    continue
                _finish(rewriter, op, type(op), big, small.results[0], [small])
                return
