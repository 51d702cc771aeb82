"""Rule 40: recompose LayerNorm, RMSNorm, GELU (erf and tanh forms) and Softmax from the
decompositions that PyTorch, Paddle2ONNX (PaddleOCR / SVTR) and transformer exports emit.

Every matched intermediate must be used only inside the pattern (nothing is computed twice
and the decomposition disappears), the reduction axes must be the trailing axes (LayerNorm,
RMSNorm) or one axis (Softmax), and the replacement must have the root's exact type. The
erf and tanh GELUs are different functions and are matched separately; the constants of a
form must equal the exact ones (sqrt 2, sqrt(2/pi), 0.044715, 0.5, 1) to float32 rounding,
or, in a 16-bit model (fp16 / bf16), to one unit in the last place of the constant's type:
a ``.half()`` export holds sqrt 2 as 1.4140625, the recomposed op uses the exact constant.

Rounding: the recomposed op computes the same formula, in float32, in the order the usual
decomposition spells it; a decomposition that multiplies in another order differs by a few
ulp (stated per rule). The Softmax without the max subtraction overflows where the real one
does not, so recomposing it is a fast-math rule.
"""

from __future__ import annotations

from math import pi, sqrt
from typing import TypeVar

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.binary import AddOp, DivOp, MulOp, PowOp, SubOp
from tilegraph.dialects.graph.elementwise import (
    ErfOp,
    ExpOp,
    GeluOp,
    ReciprocalOp,
    SqrtOp,
    TanhOp,
)
from tilegraph.dialects.graph.nn import SoftmaxOp
from tilegraph.dialects.graph.normalization import LayerNormOp, RmsNormOp
from tilegraph.dialects.graph.reduction import ReduceMaxOp, ReduceMeanOp, ReduceSumOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.simplify.match import (
    constant_array,
    in_origin_view,
    made_by,
    new_constant,
    replace_decomposition,
    split_operands,
    use_count,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule

_Op = TypeVar("_Op", bound=Operation)
RECOMPOSE_PEERS = "ORT(LayerNormFusion, GeluFusion, SimplifiedLayerNormFusion) PT"


# ---- matching helpers -----------------------------------------------------------------------


def _splat(value: SSAValue) -> float | None:
    data = constant_array(value)
    if data is None or data.size == 0 or data.dtype.kind != "f":
        return None
    flat = data.reshape(-1)
    return float(flat[0]) if np.all(flat == flat[0]) else None


def _is(value: SSAValue, target: float) -> bool:
    """A constant splat equal to ``target`` to float32 rounding, or — a constant of a
    16-bit type (fp16 / bf16: a ``.half()`` export's ``sqrt(2)`` is 1.4140625) — within
    one unit in the last place of its type at ``target``."""
    v = _splat(value)
    if v is None:
        return False
    if abs(v - target) <= 4e-7 * max(1.0, abs(target)):
        return True
    t = value.type
    if not isinstance(t, TensorType) or t.dtype.bits >= 32:
        return False
    ulp = float(np.abs(np.spacing(np.asarray(target, dtype=t.dtype.exact_numpy))))
    return abs(v - target) <= ulp


def _trailing_axes(reduce: Operation, rank: int) -> int | None:
    """The first axis when ``reduce`` keeps dims and reduces exactly ``axis .. rank-1``."""
    if reduce.attr("keepdims") != 1 or len(reduce.operands) < 2:  # type: ignore[attr-defined]
        return None
    axes = constant_array(reduce.operands[1])
    if axes is None or axes.size == 0:
        return None
    normalized = sorted(int(a) % rank for a in axes.reshape(-1))
    first = normalized[0]
    return first if normalized == list(range(first, rank)) else None


def _rank(value: SSAValue) -> int:
    t = value.type
    return t.rank if isinstance(t, TensorType) else -1


def _mul_factors(value: SSAValue) -> list[SSAValue]:
    """The factors of a product tree of single-use Muls rooted at ``value``'s producer."""
    owner = value.owner
    if not isinstance(owner, MulOp):
        return [value]
    factors: list[SSAValue] = []
    for operand in owner.operands:
        inner = made_by(operand, MulOp)
        factors.extend(_mul_factors(operand) if inner is not None else [operand])
    return factors


def _continues_affine(op: Operation, *kinds: type[Operation]) -> bool:
    """Whether ``op``'s only user is one of ``kinds`` with a constant other operand: the
    larger match rooted there takes the scale / shift along (greedy order is dataflow)."""
    uses = list(op.results[0].uses)
    if len(uses) != 1 or not isinstance(user := uses[0].operation, kinds):
        return False
    other = [v for v in user.operands if v != op.results[0]]
    return len(other) == 1 and constant_array(other[0]) is not None


def _scale_or_ones(
    x: SSAValue, axis: int, gamma: SSAValue | None
) -> tuple[list[Operation], SSAValue]:
    """``gamma``, or a new constant of ones over the normalised dims (and the op making it)."""
    if gamma is not None:
        return [], gamma
    t = x.type
    assert isinstance(t, TensorType)
    ones = new_constant(np.ones([int(d) for d in t.origin_shape[axis:]], t.dtype.numpy))
    return [ones], ones.output


def _quotient(
    norm: Operation,
) -> tuple[SSAValue, SSAValue, list[Operation]] | None:
    """``n / d``, ``n * reciprocal(d)`` or ``n * (1 / d)`` (what the exporters make of
    ``torch.rsqrt``) at ``norm``: ``(n, d, the reciprocal's op)``."""
    if isinstance(norm, DivOp):
        return norm.lhs, norm.rhs, []
    if not isinstance(norm, MulOp):
        return None
    split = split_operands(norm, lambda v: _reciprocal_of(v) is not None)
    if split is None:
        return None
    recip_value, n = split
    denom, recip = _reciprocal_of(recip_value), recip_value.owner
    assert denom is not None and isinstance(recip, Operation)
    return n, denom, [recip]


# ---- LayerNorm ------------------------------------------------------------------------------


def _normalized(value: SSAValue) -> tuple[SSAValue, int, float, list[Operation]] | None:
    """``(x - mean(x)) / sqrt(mean((x - mean)^2) + eps)`` over trailing axes (or the
    centred value times the reciprocal of that root: Cohere's LayerNorm); no ``+ eps`` is
    eps 0."""
    div = made_by(value, DivOp) or made_by(value, MulOp)
    found = None if div is None else _quotient(div)
    if div is None or found is None:
        return None
    centred, denom, extra = found
    square = None
    sub = centred.owner
    if not isinstance(sub, SubOp) or not in_origin_view(sub):
        return None
    for use in centred.uses:
        if use.operation is not div:
            square = use.operation
    if isinstance(square, PowOp):
        if use_count(centred) != 2 or square.lhs != centred or not _is(square.rhs, 2.0):
            return None
    elif isinstance(square, MulOp):
        if use_count(centred) != 3 or square.lhs != centred or square.rhs != centred:
            return None
    else:
        return None
    x, mean_value = sub.operands
    mean = made_by(mean_value, ReduceMeanOp)
    sqrt_op = made_by(denom, SqrtOp)
    if mean is None or sqrt_op is None or mean.operands[0] != x:
        return None
    eps_add = made_by(sqrt_op.operands[0], AddOp)
    eps: float | None = 0.0  # sqrt(var) with no + eps: I-BERT's float-mode IntLayerNorm
    eps_ops: list[Operation] = []
    var_value = sqrt_op.operands[0]
    if eps_add is not None:
        split = split_operands(eps_add, lambda v: made_by(v, ReduceMeanOp) is not None)
        if split is None or _splat(split[1]) is None:
            return None
        var_value, eps = split[0], _splat(split[1])
        eps_ops.append(eps_add)
    var = made_by(var_value, ReduceMeanOp)
    if var is None or eps is None:
        return None
    rank = _rank(x)
    axis = _trailing_axes(mean, rank)
    if axis is None or _trailing_axes(var, rank) != axis or var.operands[0] != square.results[0]:
        return None
    return x, axis, eps, [div, *extra, sqrt_op, *eps_ops, var, square, sub, mean]


def _affine_tail(root: Operation):  # noqa: ANN202
    """``n * gamma + beta`` / ``n * gamma`` / ``n`` at ``root``: (n, gamma, beta, ops)."""
    beta = gamma = None
    ops: list[Operation] = []
    value = root.results[0]
    if isinstance(root, AddOp):
        split = split_operands(root, lambda v: made_by(v, MulOp) is not None or made_by(v, DivOp))
        if split is None or constant_array(split[1]) is None:
            return None
        value, beta = split
        ops.append(root)
    owner = value.owner
    alone = owner is root or use_count(value) == 1
    if isinstance(owner, MulOp) and alone and _normalized(value) is None:  # not n * 1/root
        split = split_operands(owner, lambda v: _normalized(v) is not None)
        if split is None or constant_array(split[1]) is None:
            return None
        value, gamma = split
        ops.append(owner)
    return value, gamma, beta, ops


def fits_normalized(param: SSAValue, x: SSAValue, axis: int) -> bool:
    """Whether a constant broadcasts to the normalised dims ``x.shape[axis:]`` (what
    LayerNorm's scale and bias must do)."""
    param_type, x_type = param.type, x.type
    assert isinstance(param_type, TensorType) and isinstance(x_type, TensorType)
    shape, dims = list(param_type.origin_shape), list(x_type.origin_shape)[axis:]
    if len(shape) > len(dims):
        return False
    return all(a in (1, b) for a, b in zip(reversed(shape), reversed(dims), strict=False))


@simplify_rule
class RecomposeLayerNorm(SimplifyRule):
    """``(x - mean) / sqrt(var + eps) * gamma + beta`` over trailing axes -> LayerNorm,
    also with ``* reciprocal(sqrt(...))`` for the division (Cohere's ``torch.rsqrt``).

    Legal when every intermediate is used only by the pattern, both means reduce the same
    trailing axes with keepdims, epsilon is a constant splat (or absent: 0), and gamma /
    beta are constants that broadcast to the normalised dims. Same formula and order as the
    op's kernel; the reciprocal forms round once more (a few ulp), as the RMSNorm rule's.
    """

    INFO = RuleInfo(
        40,
        "recompose-layer-norm",
        "(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) * gamma + beta (no + eps: eps 0)",
        "layer_norm(x, gamma, beta, axis, eps)",
        "trailing axes, single-use intermediates, constant eps/gamma/beta; same rounding "
        "(the reciprocal forms: a few ulp)",
        RECOMPOSE_PEERS,
    )
    ROOTS = (AddOp, MulOp, DivOp)

    def rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if _continues_affine(op, AddOp):
            return
        if _continues_affine(op, MulOp) and _normalized(op.results[0]) is not None:
            return  # the Mul by gamma that uses it is the root of the larger match
        tail = _affine_tail(op)
        if tail is None:
            return
        value, gamma, beta, tail_ops = tail
        found = _normalized(value)
        if found is None:
            return
        x, axis, eps, ops = found
        if not all(fits_normalized(p, x, axis) for p in (gamma, beta) if p is not None):
            return  # a full-shape scale or shift is not LayerNorm's per-feature parameter
        new_ops, gamma = _scale_or_ones(x, axis, gamma)
        ln = LayerNormOp.make(x, gamma, beta, axis=axis, epsilon=eps)
        replace_decomposition(rewriter, op, [*new_ops, ln], [*tail_ops[1:], *ops])


# ---- RMSNorm --------------------------------------------------------------------------------


@simplify_rule
class RecomposeRmsNorm(SimplifyRule):
    """``x / sqrt(mean(x^2) + eps) * gamma`` (or ``x * reciprocal(sqrt(...))``, or
    ``x * (1 / sqrt(...))`` — what the TorchScript exporter makes of ``torch.rsqrt``) ->
    RMSNorm; ``sqrt(mean(x^2))`` with no ``+ eps`` is eps 0.

    Legal under the LayerNorm conditions; the reciprocal forms round once more than the op
    (a few ulp).
    """

    INFO = RuleInfo(
        40,
        "recompose-rms-norm",
        "x / sqrt(mean(x^2) + eps) * gamma (no + eps: eps 0)",
        "rms_norm(x, gamma, axis, eps)",
        "trailing axes, single-use intermediates, constant eps/gamma; the reciprocal forms "
        "differ by a few ulp",
        RECOMPOSE_PEERS,
    )
    ROOTS = (MulOp, DivOp)

    def rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if self._scale_follows(op):
            return  # the Mul by gamma that uses it is the root of the larger match
        gamma: SSAValue | None = None
        norm: Operation = op
        if isinstance(op, MulOp):
            split = split_operands(op, lambda v: self._norm_producing(v) is not None)
            if split is not None and constant_array(split[1]) is not None:
                inner = self._norm_producing(split[0])
                assert inner is not None
                norm, gamma = inner, split[1]
        found = self._scaled(norm)
        if found is None:
            return
        x, axis, eps, ops = found
        if gamma is not None and not fits_normalized(gamma, x, axis):
            return
        centring = x.owner
        if isinstance(centring, SubOp) and isinstance(centring.rhs.owner, ReduceMeanOp):
            return  # x - mean(x): the whole thing is a LayerNorm, which that rule makes
        new_ops, gamma = _scale_or_ones(x, axis, gamma)
        rms = RmsNormOp.make(x, gamma, axis=axis, epsilon=eps)
        dead = [o for o in [norm, *ops] if o is not op]
        replace_decomposition(rewriter, op, [*new_ops, rms], dead)

    @classmethod
    def _norm_producing(cls, value: SSAValue) -> Operation | None:
        """The normalisation (without gamma) that produces ``value``, used only there."""
        owner = made_by(value, DivOp) or made_by(value, MulOp)
        return owner if owner is not None and cls._scaled(owner) is not None else None

    @classmethod
    def _scale_follows(cls, op: Operation) -> bool:
        """Whether ``op`` is a normalisation whose only user multiplies it by a gamma."""
        if not _continues_affine(op, MulOp) or (found := cls._scaled(op)) is None:
            return False
        user = next(iter(op.results[0].uses)).operation
        gamma = next(v for v in user.operands if v != op.results[0])
        return fits_normalized(gamma, found[0], found[1])

    @staticmethod
    def _scaled(norm: Operation):  # noqa: ANN205
        """x / sqrt(...), x * reciprocal(sqrt(...)) or x * (1 / sqrt(...)):
        (x, axis, eps, ops)."""
        found = _quotient(norm)
        if found is None:
            return None
        x, denom, extra = found
        sqrt_op = made_by(denom, SqrtOp)
        if sqrt_op is None:
            return None
        # no Add: eps 0 (Helium's export: sqrt(mean(x^2)) straight)
        mean, eps, eps_ops = made_by(sqrt_op.input, ReduceMeanOp), 0.0, []
        if mean is None:
            eps_add = made_by(sqrt_op.input, AddOp)
            if eps_add is None:
                return None
            split = split_operands(eps_add, lambda v: made_by(v, ReduceMeanOp) is not None)
            if split is None or (splat := _splat(split[1])) is None:
                return None
            mean, eps, eps_ops = made_by(split[0], ReduceMeanOp), splat, [eps_add]
            assert mean is not None
        square = mean.operands[0].owner
        if use_count(mean.operands[0]) != 1:
            return None
        if isinstance(square, PowOp):
            if square.lhs != x or not _is(square.rhs, 2.0):
                return None
        elif not (isinstance(square, MulOp) and square.lhs == x and square.rhs == x):
            return None
        axis = _trailing_axes(mean, _rank(x))
        if axis is None:
            return None
        return x, axis, eps, [*extra, sqrt_op, *eps_ops, mean, square]


def _reciprocal_of(value: SSAValue) -> SSAValue | None:
    """``d`` when ``value`` is ``reciprocal(d)`` or ``1 / d`` (used only there)."""
    recip = made_by(value, ReciprocalOp)
    if recip is not None:
        return recip.input
    div = made_by(value, DivOp)
    if div is not None and _is(div.lhs, 1.0):
        return div.rhs
    return None


# ---- GELU -----------------------------------------------------------------------------------


def _gelu_parts(root: MulOp) -> tuple[SSAValue, SSAValue] | None:
    """``0.5 * x * one_plus`` in any association: ``(x, one_plus)``."""
    factors = _mul_factors(root.results[0])
    if len(factors) != 3:
        return None
    halves = [f for f in factors if _is(f, 0.5)]
    if len(halves) != 1:
        return None
    rest = [f for f in factors if f is not halves[0]]
    for x, one_plus in (rest, rest[::-1]):
        add = made_by(one_plus, AddOp)
        if add is not None and split_operands(add, lambda v: _is(v, 1.0)) is not None:
            return x, one_plus
    return None


def _inner_muls(root: MulOp) -> list[Operation]:
    ops: list[Operation] = []
    for operand in root.operands:
        inner = made_by(operand, MulOp)
        if inner is not None:
            ops.append(inner)
            ops.extend(_inner_muls(inner))
    return ops


def _scaled_x(value: SSAValue, x: SSAValue, factor: float) -> bool:
    """``value`` is ``x * factor`` or ``x / (1 / factor)``."""
    op = value.owner
    if isinstance(op, MulOp) and use_count(value) == 1:
        split = split_operands(op, lambda v: v == x)
        return split is not None and _is(split[1], factor)
    if isinstance(op, DivOp) and use_count(value) == 1:
        return op.lhs == x and _is(op.rhs, 1.0 / factor)
    return False


def _one_plus(one_plus: SSAValue, cls: type[_Op]) -> tuple[AddOp, _Op | None]:
    """``1 + f(...)``: the Add and the single-use ``cls`` op ``f`` (None if not so)."""
    add = one_plus.owner
    assert isinstance(add, AddOp), "checked by _gelu_parts"
    split = split_operands(add, lambda v: made_by(v, cls) is not None)
    return add, None if split is None else made_by(split[0], cls)


class _RecomposeGelu(SimplifyRule):
    APPROXIMATE: str
    ROOTS = (MulOp,)

    def activation(self, x: SSAValue, one_plus: SSAValue) -> list[Operation] | None:
        raise NotImplementedError

    def rewrite(self, op: MulOp, rewriter: PatternRewriter) -> None:
        parts = _gelu_parts(op)
        if parts is None:
            return
        x, one_plus = parts
        inner = self.activation(x, one_plus)
        if inner is None:
            return
        form = None if self.APPROXIMATE == "none" else self.APPROXIMATE  # the default is left out
        gelu = GeluOp.make(x, approximate=form)
        replace_decomposition(rewriter, op, [gelu], [*_inner_muls(op), *inner])


@simplify_rule
class RecomposeGeluErf(_RecomposeGelu):
    """``0.5 * x * (1 + erf(x / sqrt 2))`` -> ``gelu(x)`` (exact form)."""

    INFO = RuleInfo(
        40,
        "recompose-gelu-erf",
        "0.5 * x * (1 + erf(x / sqrt(2)))",
        "gelu(x)",
        "constants exact to float32 (a 16-bit model's: to one ulp of their type); product "
        "order may differ by a few ulp; distinct from the tanh form",
        RECOMPOSE_PEERS,
    )
    APPROXIMATE = "none"

    def activation(self, x: SSAValue, one_plus: SSAValue) -> list[Operation] | None:
        add, erf = _one_plus(one_plus, ErfOp)
        if erf is None or not _scaled_x(erf.input, x, 1.0 / sqrt(2.0)):
            return None
        return [add, erf, erf.input.owner]  # type: ignore[list-item]


def _x_power(factors: list[SSAValue], x: SSAValue) -> tuple[int, list[Operation]] | None:
    """The power of ``x`` that ``factors`` multiply to (each ``x`` or a single-use
    ``Pow(x, 2 | 3)``) and the Pows; None if a factor is anything else."""
    degree, pows = 0, []
    for f in factors:
        power = made_by(f, PowOp)
        if f == x:
            degree += 1
        elif power is not None and power.lhs == x and _splat(power.rhs) in (2.0, 3.0):
            degree, pows = degree + int(_splat(power.rhs) or 0), [*pows, power]
        else:
            return None
    return degree, pows


def _cubic_term(value: SSAValue, x: SSAValue, degree: int) -> list[Operation] | None:
    """``value`` is ``0.044715 * x^degree`` in any association (x^n a Pow or a product):
    its ops, consumers first."""
    factors = _mul_factors(value)
    coeff = [f for f in factors if _is(f, 0.044715)]
    found = _x_power([f for f in factors if f not in coeff], x) if len(coeff) == 1 else None
    if found is None or found[0] != degree or not isinstance(value.owner, MulOp):
        return None
    return [value.owner, *_inner_muls(value.owner), *found[1]]


@simplify_rule
class RecomposeGeluTanh(_RecomposeGelu):
    """``0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))`` -> ``gelu(x, tanh)``; the
    argument also factored, ``sqrt(2/pi) * x * (1 + 0.044715 * x^2)`` (Bloom's and HF's
    FastGELU), with powers as Pows or products."""

    INFO = RuleInfo(
        40,
        "recompose-gelu-tanh",
        "0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), or tanh's argument as "
        "sqrt(2/pi) * x * (1 + 0.044715 * x^2); x^n a Pow or a product",
        "gelu(x, approximate = tanh)",
        "constants exact to float32 (a 16-bit model's: to one ulp of their type); a few ulp "
        "(the factored form more: another order); distinct from the erf form",
        RECOMPOSE_PEERS,
    )
    APPROXIMATE = "tanh"

    def activation(self, x: SSAValue, one_plus: SSAValue) -> list[Operation] | None:
        add, tanh = _one_plus(one_plus, TanhOp)
        scale = None if tanh is None else made_by(tanh.input, MulOp)
        if tanh is None or scale is None:
            return None
        factors = _mul_factors(tanh.input)
        root2pi = [f for f in factors if _is(f, sqrt(2.0 / pi))]
        rest = [f for f in factors if f not in root2pi]
        others = [f for f in rest if f != x]
        if len(root2pi) != 1 or len(others) != 1 or len(rest) > 2:
            return None
        if len(rest) == 1:  # sqrt(2/pi) * (x + 0.044715 x^3)
            degree, is_unit = 3, lambda v: v == x
        else:  # sqrt(2/pi) * x * (1 + 0.044715 x^2)
            degree, is_unit = 2, lambda v: _is(v, 1.0)
        poly = made_by(others[0], AddOp)
        split = None if poly is None else split_operands(poly, is_unit)
        term = None if split is None else _cubic_term(split[1], x, degree)
        if poly is None or term is None:
            return None
        return [add, tanh, scale, *_inner_muls(scale), poly, *term]


# ---- Softmax --------------------------------------------------------------------------------


class _RecomposeSoftmax(SimplifyRule):
    SHIFTED: bool
    ROOTS = (DivOp,)

    def rewrite(self, op: DivOp, rewriter: PatternRewriter) -> None:
        exp = made_by(op.lhs, ExpOp, uses=2)
        total = made_by(op.rhs, ReduceSumOp)
        if exp is None or total is None or total.operands[0] != op.lhs:
            return
        axes = constant_array(total.operands[1]) if len(total.operands) > 1 else None
        if axes is None or axes.size != 1 or total.attr("keepdims") != 1:
            return
        axis = int(axes.reshape(-1)[0])
        dead: list[Operation] = [total, exp]
        x = exp.input
        if self.SHIFTED:
            sub = made_by(exp.input, SubOp)
            peak = None if sub is None else made_by(sub.rhs, ReduceMaxOp)
            if sub is None or peak is None or peak.operands[0] != sub.lhs:
                return
            peak_axes = constant_array(peak.operands[1]) if len(peak.operands) > 1 else None
            if peak_axes is None or peak_axes.size != 1 or peak.attr("keepdims") != 1:
                return
            rank = _rank(sub.lhs)
            if int(peak_axes.reshape(-1)[0]) % rank != axis % rank:
                return
            x = sub.lhs
            dead += [sub, peak]
        replace_decomposition(rewriter, op, [SoftmaxOp.make(x, axis=axis)], dead)


@simplify_rule
class RecomposeSoftmax(_RecomposeSoftmax):
    """``exp(x - max(x)) / sum(exp(x - max(x)))`` on one axis -> ``softmax(x, axis)``."""

    INFO = RuleInfo(
        40,
        "recompose-softmax",
        "exp(x - reduce_max(x, a)) / reduce_sum(exp(...), a)",
        "softmax(x, axis = a)",
        "one axis, keepdims; a few ulp (the op divides in log space)",
        "ORT PT",
    )
    SHIFTED = True


@simplify_rule
class RecomposeUnshiftedSoftmax(_RecomposeSoftmax):
    """``exp(x) / sum(exp(x))`` -> ``softmax(x)``: fast-math, as the decomposition overflows
    to inf / inf = NaN for large x where softmax does not."""

    INFO = RuleInfo(
        40,
        "recompose-softmax-unshifted",
        "exp(x) / reduce_sum(exp(x), a)",
        "softmax(x, axis = a)",
        "changes the result where exp(x) overflows (NaN becomes a probability)",
        "PT",
        fast_math=True,
    )
    SHIFTED = False
