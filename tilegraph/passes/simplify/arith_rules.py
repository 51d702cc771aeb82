"""Arithmetic identities: neutral and absorbing elements, ``x + x``, ``x ** 1``, double
negation and reciprocal (rules 20, 21, 24 and extras).

Every rule replaces a value only by one of equal type (no broadcast change): ``x + 0`` with
a ``0`` of higher rank than ``x`` broadcasts ``x`` and is left alone. Exactness is stated per
rule against IEEE 754 and the reference kernels (numpy); rules that change a result for some
input (signed zeros, NaN, infinities, rounding) are ``fast_math``.
"""

from __future__ import annotations

from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.binary import AddOp, DivOp, MulOp, PowOp, SubOp
from tilegraph.dialects.graph.elementwise import NegOp, ReciprocalOp
from tilegraph.passes.simplify.match import (
    filled_constant,
    in_origin_view,
    is_float,
    is_splat_of,
    make_typed,
    numpy_dtype,
    replace_with_ops,
    replace_with_value,
    scalar_constant,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule

MAX_FILL_ELEMENTS = 1 << 16
"""Rules that replace an op by a constant (``x * 0``, ``x - x``) build it at the result's
shape; they do not fire for larger results (the constant would bloat the model)."""


def _operand_pairs(op: AddOp | MulOp) -> tuple[tuple[SSAValue, SSAValue], ...]:
    """(other, candidate) for both operand orders of a commutative binary."""
    return ((op.lhs, op.rhs), (op.rhs, op.lhs))


def _is_zero(value: SSAValue, *, negative: bool) -> bool:
    """A splat zero constant: for floats of the given sign; for integers any zero."""
    if is_float(value):
        return is_splat_of(value, -0.0 if negative else 0.0)
    return is_splat_of(value, 0, signed_zero=False)


# ---- rule 20: neutral elements --------------------------------------------------------------


@simplify_rule
class AddZero(SimplifyRule):
    """``x + z`` or ``z + x`` -> ``x`` where ``z`` is a splat ``-0.0`` (floats) or ``0``
    (integers), if the result type equals ``x``'s (``z`` does not broadcast ``x``).

    Exact: ``x + (-0.0) == x`` for every float ``x`` (``-0 + -0 = -0``, ``+0 + -0 = +0``,
    NaN stays NaN). Adding ``+0.0`` is *not* the identity for ``x = -0.0`` (it gives
    ``+0.0``), so that case is the fast-math rule ``add-pos-zero``.
    """

    INFO = RuleInfo(
        20,
        "add-zero",
        "x + z, z + x  (z: splat -0.0, or integer 0)",
        "x",
        "only when the result type equals x's; a +0.0 splat is add-pos-zero (fast-math): "
        "-0.0 + +0.0 = +0.0",
        "OO ORT TVM GE OM PT",
    )
    ROOTS = (AddOp,)

    def rewrite(self, op: AddOp, rewriter: PatternRewriter) -> None:
        if not in_origin_view(op):
            return
        for x, z in _operand_pairs(op):
            if _is_zero(z, negative=True) and replace_with_value(rewriter, op, x):
                return


@simplify_rule
class AddPosZero(SimplifyRule):
    """``x + 0.0`` or ``0.0 + x`` -> ``x`` for a float splat ``+0.0``, if the result type
    equals ``x``'s. Fast-math: wrong for ``x = -0.0`` (``-0.0 + 0.0 = +0.0``)."""

    INFO = RuleInfo(
        20,
        "add-pos-zero",
        "x + 0.0, 0.0 + x  (float splat +0.0)",
        "x",
        "for x = -0.0 gives -0.0 where x + 0.0 is +0.0; only when the result type equals x's",
        "OO ORT TVM GE OM PT",
        fast_math=True,
    )
    ROOTS = (AddOp,)

    def rewrite(self, op: AddOp, rewriter: PatternRewriter) -> None:
        if not in_origin_view(op):
            return
        for x, z in _operand_pairs(op):
            if is_float(z) and _is_zero(z, negative=False) and replace_with_value(rewriter, op, x):
                return


@simplify_rule
class SubZero(SimplifyRule):
    """``x - z`` -> ``x`` where ``z`` is a splat ``+0.0`` (floats) or ``0`` (integers), if
    the result type equals ``x``'s.

    Exact: ``x - (+0.0) == x`` for every float (``-0 - +0 = -0``). ``x - (-0.0)`` is
    ``x + 0.0`` and is not matched (wrong for ``x = -0.0``); ``0 - x`` is not ``x``.
    """

    INFO = RuleInfo(
        20,
        "sub-zero",
        "x - z  (z: splat +0.0, or integer 0)",
        "x",
        "only when the result type equals x's; x - (-0.0) is not matched (-0.0 - -0.0 = +0.0)",
        "OO ORT TVM GE OM PT",
    )
    ROOTS = (SubOp,)

    def rewrite(self, op: SubOp, rewriter: PatternRewriter) -> None:
        if in_origin_view(op) and _is_zero(op.rhs, negative=False):
            replace_with_value(rewriter, op, op.lhs)


@simplify_rule
class MulOne(SimplifyRule):
    """``x * 1`` or ``1 * x`` -> ``x`` for a splat ``1``, if the result type equals ``x``'s.

    Exact for every float (NaN, infinities and signed zeros are kept) and integer.
    """

    INFO = RuleInfo(
        20,
        "mul-one",
        "x * 1, 1 * x",
        "x",
        "only when the result type equals x's (the 1 does not broadcast x)",
        "OO ORT TVM GE OM PT",
    )
    ROOTS = (MulOp,)

    def rewrite(self, op: MulOp, rewriter: PatternRewriter) -> None:
        if not in_origin_view(op):
            return
        for x, one in _operand_pairs(op):
            if is_splat_of(one, 1) and replace_with_value(rewriter, op, x):
                return


@simplify_rule
class DivOne(SimplifyRule):
    """``x / 1`` -> ``x`` for a splat ``1``, if the result type equals ``x``'s.

    Exact for floats. For integers ONNX division is exact, so ``x / 1 == x``; the reference
    kernel divides in float64 and so rounds integers beyond 2**53 — the rewrite gives the
    ONNX result there.
    """

    INFO = RuleInfo(
        20,
        "div-one",
        "x / 1",
        "x",
        "only when the result type equals x's",
        "OO ORT TVM GE OM PT",
    )
    ROOTS = (DivOp,)

    def rewrite(self, op: DivOp, rewriter: PatternRewriter) -> None:
        if in_origin_view(op) and is_splat_of(op.rhs, 1):
            replace_with_value(rewriter, op, op.lhs)


@simplify_rule
class MulZero(SimplifyRule):
    """``x * 0`` or ``0 * x`` -> a zero constant of the result's type (fast-math).

    Changes results: ``NaN * 0`` and ``inf * 0`` are NaN, and ``-x * 0`` is ``-0.0``. The
    constant is built at the result's shape, so only static results of at most
    :data:`MAX_FILL_ELEMENTS` elements are rewritten.
    """

    INFO = RuleInfo(
        20,
        "mul-zero",
        "x * 0, 0 * x",
        "zeros of the result's type",
        "NaN * 0 and inf * 0 are NaN, negative x * 0 is -0.0; static results up to 65536 elements",
        "TVM PT",
        fast_math=True,
    )
    ROOTS = (MulOp,)

    def rewrite(self, op: MulOp, rewriter: PatternRewriter) -> None:
        if not in_origin_view(op):
            return
        if any(is_splat_of(z, 0, signed_zero=False) for z in (op.lhs, op.rhs)):
            zeros = filled_constant(0, op.output, MAX_FILL_ELEMENTS)
            if zeros is not None:
                replace_with_ops(rewriter, op, [zeros])


# ---- rule 21 and extras on a binary of x with itself ------------------------------------------


@simplify_rule
class AddSelf(SimplifyRule):
    """``x + x`` -> ``x * 2`` with a rank-0 ``2`` of ``x``'s element type.

    Exact in IEEE 754 (both are ``2x`` rounded once; overflow gives the same infinity) and
    for wrapping integers. Canonicalises so that CSE and the constant rules see one form.
    Not for booleans.
    """

    INFO = RuleInfo(
        21,
        "add-self",
        "x + x",
        "x * 2",
        "the 2 is a scalar of x's element type; not for bool",
        "TVM PT",
    )
    ROOTS = (AddOp,)

    def rewrite(self, op: AddOp, rewriter: PatternRewriter) -> None:
        dtype = numpy_dtype(op.lhs)
        if op.lhs is not op.rhs or dtype is None or dtype.kind not in "fiu":
            return
        if not in_origin_view(op):
            return
        two = scalar_constant(2, op.lhs)
        mul = make_typed(MulOp, op.lhs, two.output, like=op.output.type)
        if mul is not None:
            replace_with_ops(rewriter, op, [two, mul])


@simplify_rule
class SubSelf(SimplifyRule):
    """``x - x`` -> zeros of the result's type (fast-math: ``inf - inf`` and NaN give NaN).

    Exact for integers, but it is one rule and runs only under fast-math. Static results
    of at most :data:`MAX_FILL_ELEMENTS` elements.
    """

    INFO = RuleInfo(
        None,
        "sub-self",
        "x - x",
        "zeros",
        "inf - inf and NaN - NaN are NaN; static results up to 65536 elements",
        "TVM PT",
        fast_math=True,
    )
    ROOTS = (SubOp,)

    def rewrite(self, op: SubOp, rewriter: PatternRewriter) -> None:
        if op.lhs is op.rhs and in_origin_view(op):
            zeros = filled_constant(0, op.output, MAX_FILL_ELEMENTS)
            if zeros is not None:
                replace_with_ops(rewriter, op, [zeros])


@simplify_rule
class DivSelf(SimplifyRule):
    """``x / x`` -> ones of the result's type (fast-math: ``0 / 0``, ``inf / inf`` and NaN
    give NaN; integer ``0 / 0`` is undefined). Static results up to
    :data:`MAX_FILL_ELEMENTS` elements."""

    INFO = RuleInfo(
        None,
        "div-self",
        "x / x",
        "ones",
        "0/0, inf/inf and NaN give NaN; static results up to 65536 elements",
        "TVM",
        fast_math=True,
    )
    ROOTS = (DivOp,)

    def rewrite(self, op: DivOp, rewriter: PatternRewriter) -> None:
        if op.lhs is op.rhs and in_origin_view(op):
            ones = filled_constant(1, op.output, MAX_FILL_ELEMENTS)
            if ones is not None:
                replace_with_ops(rewriter, op, [ones])


@simplify_rule
class MulNegOne(SimplifyRule):
    """``x * -1`` or ``-1 * x`` -> ``neg(x)``, if the result type equals ``x``'s.

    Exact: IEEE multiplication by -1 only flips the sign (NaN stays NaN); for wrapping
    signed integers ``INT_MIN * -1 == -INT_MIN == INT_MIN``.
    """

    INFO = RuleInfo(
        None,
        "mul-neg-one",
        "x * -1, -1 * x",
        "neg(x)",
        "only when the result type equals x's",
        "TVM",
    )
    ROOTS = (MulOp,)

    def rewrite(self, op: MulOp, rewriter: PatternRewriter) -> None:
        if not in_origin_view(op):
            return
        for x, minus_one in _operand_pairs(op):
            if is_splat_of(minus_one, -1):
                neg = make_typed(NegOp, x, like=op.output.type)
                if neg is not None:
                    replace_with_ops(rewriter, op, [neg])
                    return


@simplify_rule
class PowOne(SimplifyRule):
    """``x ** 1`` -> ``x`` (the exponent a splat 1 of any numeric type), if the result
    type equals ``x``'s. Exact: ``pow(x, 1) == x`` for every x (C99 / IEEE; checked for
    numpy's kernel)."""

    INFO = RuleInfo(
        None,
        "pow-one",
        "x ** 1",
        "x",
        "only when the result type equals x's",
        "ORT TVM OM",
    )
    ROOTS = (PowOp,)

    def rewrite(self, op: PowOp, rewriter: PatternRewriter) -> None:
        if in_origin_view(op) and is_splat_of(op.rhs, 1):
            replace_with_value(rewriter, op, op.lhs)


@simplify_rule
class PowTwo(SimplifyRule):
    """``x ** 2`` -> ``x * x`` (fast-math), if the result type equals ``x``'s.

    ``x * x`` is the correctly rounded square; numpy's float ``power`` is not correctly
    rounded (about 1 in 1300 float32 squares differ by one ulp), so the results change.
    """

    INFO = RuleInfo(
        None,
        "pow-two",
        "x ** 2",
        "x * x",
        "numpy's pow differs from x * x by 1 ulp for some inputs; result type must equal x's",
        "ORT TVM OM PT",
        fast_math=True,
    )
    ROOTS = (PowOp,)

    def rewrite(self, op: PowOp, rewriter: PatternRewriter) -> None:
        if in_origin_view(op) and is_splat_of(op.rhs, 2):
            mul = make_typed(MulOp, op.lhs, op.lhs, like=op.output.type)
            if mul is not None:
                replace_with_ops(rewriter, op, [mul])


# ---- unary involutions and rule 24 ------------------------------------------------------------


@simplify_rule
class NegNeg(SimplifyRule):
    """``neg(neg(x))`` -> ``x``. Exact (negation only flips the sign bit; wrapping integer
    negation is an involution too). The inner neg stays if it has other users."""

    INFO = RuleInfo(None, "neg-neg", "neg(neg(x))", "x", "", "ORT TVM PT")
    ROOTS = (NegOp,)

    def rewrite(self, op: NegOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if isinstance(inner, NegOp) and in_origin_view(op) and in_origin_view(inner):
            replace_with_value(rewriter, op, inner.input)


@simplify_rule
class ReciprocalReciprocal(SimplifyRule):
    """``reciprocal(reciprocal(x))`` -> ``x`` for floats (fast-math).

    Not exact: ``1 / (1 / x)`` rounds twice, and is ``0`` or ``inf`` where ``1 / x``
    overflows (subnormal x) or underflows. Integer reciprocals truncate and are not matched.
    """

    INFO = RuleInfo(
        None,
        "reciprocal-reciprocal",
        "reciprocal(reciprocal(x))",
        "x",
        "floats only; 1/(1/x) rounds twice and over/underflows for subnormal or huge x",
        "TVM",
        fast_math=True,
    )
    ROOTS = (ReciprocalOp,)

    def rewrite(self, op: ReciprocalOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if isinstance(inner, ReciprocalOp) and is_float(inner.input) and in_origin_view(op):
            if in_origin_view(inner):
                replace_with_value(rewriter, op, inner.input)


@simplify_rule
class ReciprocalMul(SimplifyRule):
    """``reciprocal(x) * y`` or ``y * reciprocal(x)`` -> ``y / x`` for floats (fast-math),
    if the division's result type equals the product's.

    ``y * (1 / x)`` rounds twice and ``y / x`` once, so results change by about an ulp
    (and where ``1 / x`` overflows). The reciprocal stays if it has other users.
    """

    INFO = RuleInfo(
        24,
        "reciprocal-mul",
        "reciprocal(x) * y, y * reciprocal(x)",
        "y / x",
        "floats only; one rounding instead of two; result type must be unchanged",
        "ORT TVM PT",
        fast_math=True,
    )
    ROOTS = (MulOp,)

    def rewrite(self, op: MulOp, rewriter: PatternRewriter) -> None:
        if not in_origin_view(op) or not is_float(op.output):
            return
        for r, y in _operand_pairs(op):
            recip = r.owner
            if isinstance(recip, ReciprocalOp) and in_origin_view(recip):
                div = make_typed(DivOp, y, recip.input, like=op.output.type)
                if div is not None:
                    replace_with_ops(rewriter, op, [div])
                    return
