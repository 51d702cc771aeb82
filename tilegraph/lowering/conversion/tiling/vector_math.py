"""Vector programs of the unary math ops: activations built from exp / tanh / sigmoid, the
trigonometric and hyperbolic functions, and the float predicates IsNaN / IsInf.

Each program composes the vector unit's instructions (:mod:`tilegraph.dialects.tile.vector`)
on the result tile and its scratch tiles; the comments give the identity it computes and
why that form (no overflow, no cancellation near the interesting points).
"""

from __future__ import annotations

from math import pi

from tilegraph.dialects.graph import GraphOp
from tilegraph.lowering.conversion.tiling.vector_emitter import (
    Tile,
    VectorEmitter,
    VectorLowering,
    first,
)

Ins = list[Tile | None]


# ---- activations ---------------------------------------------------------------------
def hard_sigmoid_into(e: VectorEmitter, x: Tile, alpha: float, beta: float, out: Tile) -> None:
    """out = clip(alpha * x + beta, 0, 1)."""
    e.scalar("vmuls", x, alpha, out)
    e.scalar("vadds", out, beta, out)
    e.scalar("vmins", out, 1.0, out)
    e.scalar("vmaxs", out, 0.0, out)


def _hard_sigmoid(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    hard_sigmoid_into(e, first(ins), float(op.attr("alpha")), float(op.attr("beta")), out)


def _hard_swish(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    """x * hard_sigmoid(x) with ONNX's alpha = 1/6, beta = 0.5."""
    x = first(ins)
    hard_sigmoid_into(e, x, 1.0 / 6.0, 0.5, out)
    e.binary("vmul", out, x, out)


def softplus_into(e: VectorEmitter, x: Tile, out: Tile, tmp: Tile) -> None:
    """out = relu(x) + ln(1 + exp(-|x|)): no overflow for large |x|."""
    e.unary("vabs", x, tmp)
    e.scalar("vmuls", tmp, -1.0, tmp)
    e.unary("vexp", tmp, tmp)
    e.scalar("vadds", tmp, 1.0, tmp)
    e.unary("vln", tmp, tmp)
    e.unary("vrelu", x, out)
    e.binary("vadd", out, tmp, out)


def _softplus(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    softplus_into(e, first(ins), out, e.scratch(0))


def _mish(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    """x * tanh(softplus(x))."""
    x = first(ins)
    softplus_into(e, x, out, e.scratch(0))
    e.unary("vtanh", out, out)
    e.binary("vmul", out, x, out)


def _swish_into(e: VectorEmitter, x: Tile, alpha: float, out: Tile) -> None:
    """out = x * sigmoid(alpha * x)."""
    e.scalar("vmuls", x, alpha, out)
    e.unary("vsigmoid", out, out)
    e.binary("vmul", out, x, out)


def _swish(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    _swish_into(e, first(ins), float(op.attr("alpha")), out)


def _swiglu(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    """A * sigmoid(alpha * A) * B."""
    gate = ins[1]
    assert gate is not None
    _swish_into(e, first(ins), float(op.attr("alpha")), out)
    e.binary("vmul", out, gate, out)


def _softsign(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    """x / (1 + |x|)."""
    x = first(ins)
    e.unary("vabs", x, out)
    e.scalar("vadds", out, 1.0, out)
    e.binary("vdiv", x, out, out)


def _celu(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    """relu(x) + min(0, alpha * (exp(x / alpha) - 1)); an overflowing exp is cut by the min."""
    x, tmp, alpha = first(ins), e.scratch(0), float(op.attr("alpha"))
    e.scalar("vmuls", x, 1.0 / alpha, tmp)
    e.unary("vexp", tmp, tmp)
    e.scalar("vadds", tmp, -1.0, tmp)
    e.scalar("vmuls", tmp, alpha, tmp)
    e.scalar("vmins", tmp, 0.0, tmp)
    e.unary("vrelu", x, out)
    e.binary("vadd", out, tmp, out)


def _thresholded_relu(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    """x where x > alpha, else 0 (a select: x * step would turn -inf and NaN into NaN)."""
    x, tmp, mask = first(ins), e.scratch(0), e.mask(0)
    e.fill(tmp, float(op.attr("alpha")))
    e.compare("gt", x, tmp, mask)
    e.fill(tmp, 0.0)
    e.select(mask, x, tmp, out)


# ---- trigonometric and hyperbolic ----------------------------------------------------
def _tan(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    x, tmp = first(ins), e.scratch(0)
    e.unary("vsin", x, out)
    e.unary("vcos", x, tmp)
    e.binary("vdiv", out, tmp, out)


def _exp_pair(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile, combine: str) -> None:
    """(exp(x) combine exp(-x)) / 2: sinh with vsub, cosh with vadd."""
    x, tmp = first(ins), e.scratch(0)
    e.unary("vexp", x, out)
    e.scalar("vmuls", x, -1.0, tmp)
    e.unary("vexp", tmp, tmp)
    e.binary(combine, out, tmp, out)
    e.scalar("vmuls", out, 0.5, out)


def _one_minus_x_squared(e: VectorEmitter, x: Tile, dst: Tile, tmp: Tile) -> None:
    """dst = (1 - x)(1 + x): no cancellation near |x| = 1, unlike 1 - x²."""
    e.scalar("vmuls", x, -1.0, tmp)
    e.scalar("vadds", tmp, 1.0, tmp)
    e.scalar("vadds", x, 1.0, dst)
    e.binary("vmul", dst, tmp, dst)


def _asin_into(e: VectorEmitter, x: Tile, out: Tile, tmp: Tile) -> None:
    """asin x = 2 atan(x / (1 + sqrt(1 - x²))): exact at ±1, NaN past them (sqrt)."""
    _one_minus_x_squared(e, x, out, tmp)
    e.unary("vsqrt", out, out)
    e.scalar("vadds", out, 1.0, out)
    e.binary("vdiv", x, out, out)
    e.unary("vatan", out, out)
    e.scalar("vmuls", out, 2.0, out)


def _asin(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    _asin_into(e, first(ins), out, e.scratch(0))


def _acos(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    """acos x = pi/2 - asin x."""
    _asin_into(e, first(ins), out, e.scratch(0))
    e.scalar("vmuls", out, -1.0, out)
    e.scalar("vadds", out, pi / 2, out)


def _asinh(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    """sign(x) ln(|x| + sqrt(x² + 1)): on |x|, so no cancellation for negative x."""
    x, tmp = first(ins), e.scratch(0)
    e.unary("vabs", x, tmp)
    e.binary("vmul", tmp, tmp, out)
    e.scalar("vadds", out, 1.0, out)
    e.unary("vsqrt", out, out)
    e.binary("vadd", out, tmp, out)
    e.unary("vln", out, out)
    e.unary("vsign", x, tmp)
    e.binary("vmul", out, tmp, out)


def _acosh(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    """ln(x + sqrt((x - 1)(x + 1))): NaN below 1 (sqrt of a negative)."""
    x, tmp = first(ins), e.scratch(0)
    e.scalar("vadds", x, -1.0, tmp)
    e.scalar("vadds", x, 1.0, out)
    e.binary("vmul", out, tmp, out)
    e.unary("vsqrt", out, out)
    e.binary("vadd", out, x, out)
    e.unary("vln", out, out)


def _atanh(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    """ln((1 + x) / (1 - x)) / 2: ±inf at ±1, NaN past them."""
    x, tmp = first(ins), e.scratch(0)
    e.scalar("vadds", x, 1.0, out)
    e.scalar("vmuls", x, -1.0, tmp)
    e.scalar("vadds", tmp, 1.0, tmp)
    e.binary("vdiv", out, tmp, out)
    e.unary("vln", out, out)
    e.scalar("vmuls", out, 0.5, out)


# ---- float predicates ----------------------------------------------------------------
def _is_nan(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    """NaN is the one value unequal to itself."""
    x = first(ins)
    e.compare("ne", x, x, out)


def _is_inf(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    """x - x is NaN exactly for ±inf and NaN; x == x drops NaN; the sign picks ±inf."""
    x, tmp, mask = first(ins), e.scratch(0), e.mask(0)
    positive, negative = bool(op.attr("detect_positive")), bool(op.attr("detect_negative"))
    if not (positive or negative):
        e.fill(out, 0.0)
        return
    e.binary("vsub", x, x, tmp)
    e.compare("ne", tmp, tmp, mask)
    e.compare("eq", x, x, out)
    e.binary("vand", out, mask, out)
    if positive != negative:
        e.fill(tmp, 0.0)
        e.compare("gt" if positive else "lt", x, tmp, mask)
        e.binary("vand", out, mask, out)


MATH_LOWERINGS: dict[str, VectorLowering] = {
    "graph.hard_sigmoid": VectorLowering(_hard_sigmoid),
    "graph.hard_swish": VectorLowering(_hard_swish),
    "graph.softplus": VectorLowering(_softplus, scratch=1),
    "graph.mish": VectorLowering(_mish, scratch=1),
    "graph.swish": VectorLowering(_swish),
    "graph.swiglu": VectorLowering(_swiglu),
    "graph.softsign": VectorLowering(_softsign),
    "graph.celu": VectorLowering(_celu, scratch=1),
    "graph.thresholded_relu": VectorLowering(_thresholded_relu, scratch=1, masks=1),
    "graph.tan": VectorLowering(_tan, scratch=1),
    "graph.sinh": VectorLowering(lambda e, op, ins, out: _exp_pair(e, op, ins, out, "vsub"), 1),
    "graph.cosh": VectorLowering(lambda e, op, ins, out: _exp_pair(e, op, ins, out, "vadd"), 1),
    "graph.asin": VectorLowering(_asin, scratch=1),
    "graph.acos": VectorLowering(_acos, scratch=1),
    "graph.asinh": VectorLowering(_asinh, scratch=1),
    "graph.acosh": VectorLowering(_acosh, scratch=1),
    "graph.atanh": VectorLowering(_atanh, scratch=1),
    "graph.is_nan": VectorLowering(_is_nan),
    "graph.is_inf": VectorLowering(_is_inf, scratch=1, masks=1, scratch_of=0),
}
"""The vector programs of the unary math ops (merged into ``VECTOR_LOWERINGS``)."""
