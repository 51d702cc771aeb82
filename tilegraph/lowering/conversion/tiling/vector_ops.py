"""How each elementwise graph op runs on the vector unit: one place, one row per op.

A lowering receives the UB tiles of the op's operands (``None`` for an absent optional one,
and for an operand it does not read) and the UB tile of its result, and emits vector
instructions through :class:`VectorEmitter`. ``scratch`` and ``masks`` count the extra
tiles an entry needs (for UB budgeting). Every graph op whose fusion kind is ELEMWISE or
BROADCAST has an entry, or a row in :data:`NO_VECTOR_PROGRAM` saying why not (a test
checks it); :func:`vector_lowering` refuses the variants an entry does not model (a cast
through float8, a per-axis quantization scale). A kernel containing an op without a
lowering stays on the host.
"""

from __future__ import annotations

from math import pi, sqrt
from typing import cast

from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.graph.base import constant_value
from tilegraph.dialects.graph.elementwise import PLAIN_CAST_DTYPES
from tilegraph.dialects.graph.elementwise import CastLikeOp as GraphCastLikeOp
from tilegraph.dialects.graph.elementwise import CastOp as GraphCastOp
from tilegraph.dialects.graph.quantize import DequantizeLinearOp, QuantizeLinearOp
from tilegraph.dialects.graph.quantize_common import INTEGER_RANGES
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType
from tilegraph.lowering.conversion.tiling.builder import memref_type
from tilegraph.lowering.conversion.tiling.vector_emitter import (
    Tile,
    VectorEmitter,
    VectorLowering,
    first,
)
from tilegraph.lowering.conversion.tiling.vector_math import MATH_LOWERINGS

Ins = list[Tile | None]


def _unary(name: str) -> VectorLowering:
    return VectorLowering(lambda e, op, ins, out: e.unary(name, first(ins), out))


def _binary(name: str) -> VectorLowering:
    def emit(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
        a, b = ins[0], ins[1]
        assert a is not None and b is not None
        e.binary(name, a, b, out)

    return VectorLowering(emit)


def _variadic(name: str, mean: bool = False) -> VectorLowering:
    def emit(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
        tiles = [t for t in ins if t is not None]
        if len(tiles) == 1:
            e.unary("vcopy", tiles[0], out)
        else:
            e.binary(name, tiles[0], tiles[1], out)
            for t in tiles[2:]:
                e.binary(name, out, t, out)
        if mean:
            e.scalar("vmuls", out, 1.0 / len(tiles), out)

    return VectorLowering(emit)


def _negative_part(e: VectorEmitter, x: Tile, slope: float, out: Tile, tmp: Tile) -> None:
    """out = relu(x) + slope * min(x, 0)."""
    e.scalar("vmins", x, 0.0, tmp)
    e.scalar("vmuls", tmp, slope, tmp)
    e.unary("vrelu", x, out)
    e.binary("vadd", out, tmp, out)


def _leaky_relu(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    _negative_part(e, first(ins), float(op.attr("alpha")), out, e.scratch(0))


def _prelu(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    x, slope = first(ins), ins[1]
    assert slope is not None
    tmp = e.scratch(0)
    e.scalar("vmins", x, 0.0, tmp)
    e.binary("vmul", tmp, slope, tmp)
    e.unary("vrelu", x, out)
    e.binary("vadd", out, tmp, out)


def _elu_like(alpha: float, gamma: float, e: VectorEmitter, x: Tile, out: Tile) -> None:
    """gamma * (relu(x) + alpha * (exp(min(x, 0)) - 1))."""
    tmp = e.scratch(0)
    e.scalar("vmins", x, 0.0, tmp)
    e.unary("vexp", tmp, tmp)
    e.scalar("vadds", tmp, -1.0, tmp)
    e.scalar("vmuls", tmp, alpha, tmp)
    e.unary("vrelu", x, out)
    e.binary("vadd", out, tmp, out)
    if gamma != 1.0:
        e.scalar("vmuls", out, gamma, out)


def _elu(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    _elu_like(float(op.attr("alpha")), 1.0, e, first(ins), out)


def _selu(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    _elu_like(float(op.attr("alpha")), float(op.attr("gamma")), e, first(ins), out)


def _gelu(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    x, tmp = first(ins), e.scratch(0)
    if op.attr("approximate") == "tanh":
        e.binary("vmul", x, x, tmp)
        e.binary("vmul", tmp, x, tmp)
        e.scalar("vmuls", tmp, 0.044715, tmp)
        e.binary("vadd", tmp, x, tmp)
        e.scalar("vmuls", tmp, sqrt(2.0 / pi), tmp)
        e.unary("vtanh", tmp, tmp)
    else:
        e.scalar("vmuls", x, 1.0 / sqrt(2.0), tmp)
        e.unary("verf", tmp, tmp)
    e.scalar("vadds", tmp, 1.0, tmp)
    e.binary("vmul", tmp, x, out)
    e.scalar("vmuls", out, 0.5, out)


def _clip(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    x = first(ins)
    lo, hi = (ins + [None, None])[1:3]
    e.unary("vcopy", x, out)
    if lo is not None:
        e.binary("vmax", out, lo, out)
    if hi is not None:
        e.binary("vmin", out, hi, out)


def _plain_cast(op: GraphOp) -> bool:
    """Whether a plain element conversion is the op (see ``CastOp.is_plain_conversion``)."""
    types = (op.operand_slots()[0], op.results[0])
    return all(
        v is not None and isinstance(v.type, TensorType) and v.type.dtype in PLAIN_CAST_DTYPES
        for v in types
    )


def _cast(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    # ONNX Cast from float to integer truncates toward zero.
    e.cast(first(ins), out, "trunc")


def _compare(predicate: str) -> VectorLowering:
    def emit(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
        a, b = ins[0], ins[1]
        assert a is not None and b is not None
        e.compare(predicate, a, b, out)

    return VectorLowering(emit)


def _where(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    condition, x, y = ins
    assert condition is not None and x is not None and y is not None
    e.select(condition, x, y, out)


def _mod(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    """``a - b * trunc(a / b)`` (C fmod; an integer quotient tile truncates by itself), then
    for ``fmod = 0`` ``+ b`` where the remainder and the divisor differ in sign. A zero
    integer divisor gives 0, as the graph op says; a zero float divisor gives NaN."""
    a, b = ins[0], ins[1]
    assert a is not None and b is not None
    quotient, zero, mask = e.scratch(0), e.scratch(1), e.mask(0)
    result = op.results[0].type
    assert isinstance(result, TensorType)
    integer = result.dtype.numpy.kind != "f"
    e.binary("vdiv", a, b, quotient)
    if not integer:  # trunc(q) = sign(q) * floor(|q|)
        e.unary("vabs", quotient, out)
        e.unary("vfloor", out, out)
        e.unary("vsign", quotient, quotient)
        e.binary("vmul", quotient, out, quotient)
    e.binary("vmul", quotient, b, quotient)
    e.binary("vsub", a, quotient, out)
    e.fill(zero, 0.0)
    if not op.attr("fmod"):
        e.binary("vmul", out, b, quotient)
        e.compare("lt", quotient, zero, mask)
        e.binary("vadd", out, b, quotient)
        e.select(mask, quotient, out, out)
    if integer:
        e.compare("eq", b, zero, mask)
        e.select(mask, zero, out, out)


def _bit_shift(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    a, b = ins[0], ins[1]
    assert a is not None and b is not None
    e.binary("vshl" if op.attr("direction") == "LEFT" else "vshr", a, b, out)


def _shrink(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    """x - bias above lambd, x + bias below -lambd, else 0: two selects into a zero tile."""
    x, tmp, mask = first(ins), e.scratch(0), e.mask(0)
    lambd, bias = float(op.attr("lambd")), float(op.attr("bias"))
    e.fill(out, 0.0)
    for predicate, bound, shift in (("lt", -lambd, bias), ("gt", lambd, -bias)):
        e.fill(tmp, bound)
        e.compare(predicate, x, tmp, mask)
        e.scalar("vadds", x, shift, tmp)
        e.select(mask, tmp, out, out)


def quantization_constant(op: GraphOp, slot: int) -> float | None:
    """The value of a per-tensor quantization parameter (scale or zero point, operand
    ``slot``) that is a constant of the kernel's body (``lower-graph-to-kernels`` clones
    them in: :func:`~tilegraph.lowering.conversion.graph_to_kernels` compile-time
    parameters), else None (it is loaded from GM as a tile)."""
    slots = op.operand_slots()
    value = slots[slot] if slot < len(slots) else None
    data = constant_value(value) if value is not None else None
    return None if data is None or data.size != 1 else float(data.reshape(-1)[0])


def _immediate_parameters(op: GraphOp) -> tuple[int, ...]:
    """Operand slots a Q / DQ program loads: x, and its scale and zero point unless they
    are body constants (then immediates: a ``vdup`` of the scale, ``vadds`` / ``vmuls``;
    no MTE2 load and no event per tile)."""
    return tuple(i for i in range(3) if i == 0 or quantization_constant(op, i) is None)


def _quantize(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    """saturate(round(x / scale) + zero_point): in the scale's float type, rounded half to
    even (``tile.vround``), clipped to the integer range, then converted exactly. A constant
    scale is divided by as a tile of its value (the same quotient), a constant zero point
    added as an immediate."""
    x, scale, zero = ins
    assert x is not None
    tmp = e.scratch(0)
    if scale is None:
        value = quantization_constant(op, 1)
        assert value is not None
        e.fill(tmp, value)
        e.binary("vdiv", x, tmp, tmp)
    else:
        e.binary("vdiv", x, scale, tmp)
    e.unary("vround", tmp, tmp)
    zero_value = quantization_constant(op, 2) if zero is None else None
    if zero is not None:
        e.binary("vadd", tmp, zero, tmp)
    elif zero_value:
        e.scalar("vadds", tmp, zero_value, tmp)
    out_type = op.results[0].type
    assert isinstance(out_type, TensorType)
    lo, hi = INTEGER_RANGES[out_type.dtype]
    e.scalar("vmaxs", tmp, float(lo), tmp)
    e.scalar("vmins", tmp, float(hi), tmp)
    e.cast(tmp, out, "rint")


def _dequantize(e: VectorEmitter, op: GraphOp, ins: Ins, out: Tile) -> None:
    """(x - zero_point) * scale, converted to the scale's type first (exact: at most 16
    bits). Constant parameters are immediates (``vadds`` of the negated zero point, exact;
    ``vmuls`` of the scale, the same rounded product)."""
    x, scale, zero = ins
    assert x is not None
    e.cast(x, out, "rint")
    if zero is not None:
        tmp = e.scratch(0)
        e.cast(zero, tmp, "rint")
        e.binary("vsub", out, tmp, out)
    elif zero_value := quantization_constant(op, 2):
        e.scalar("vadds", out, -zero_value, out)
    if scale is not None:
        e.binary("vmul", out, scale, out)
    else:
        value = quantization_constant(op, 1)
        assert value is not None
        e.scalar("vmuls", out, value, out)


_QUANTIZED = frozenset({DType.int8, DType.uint8, DType.int16, DType.uint16})


def _per_tensor_quantization(op: GraphOp) -> bool:
    """Scale and zero point are one value each (per axis / per block they run along an
    axis, which a right-aligned tile broadcast does not express), the quantized type is an
    8- or 16-bit integer (int4 / float8 need their own conversions), and the float side
    has the scale's type (QuantizeLinear divides in the scale's type)."""
    x, scale, *zero = op.operand_slots()
    quantized, real = (op.results[0], x) if isinstance(op, QuantizeLinearOp) else (x, op.results[0])
    types = [v.type for v in (quantized, real, scale, *zero) if v is not None]
    if (
        int(op.attr("block_size"))
        or op.attr("precision")
        or not all(isinstance(t, TensorType) for t in types)
    ):
        return False
    q, r, s, *z = cast(list[TensorType], types)
    return (
        q.dtype in _QUANTIZED and r.dtype == s.dtype and all(p.num_elements() == 1 for p in (s, *z))
    )


VECTOR_LOWERINGS: dict[str, VectorLowering] = {
    **{
        f"graph.{g}": _unary(v)
        for g, v in {
            "relu": "vrelu",
            "sigmoid": "vsigmoid",
            "tanh": "vtanh",
            "exp": "vexp",
            "log": "vln",
            "sqrt": "vsqrt",
            "neg": "vneg",
            "reciprocal": "vrec",
            "abs": "vabs",
            "sign": "vsign",
            "floor": "vfloor",
            "ceil": "vceil",
            "erf": "verf",
            "sin": "vsin",
            "cos": "vcos",
            "atan": "vatan",
            "round": "vround",
            "not": "vnot",
            "bitwise_not": "vbitnot",
            "identity": "vcopy",
            "dropout": "vcopy",
        }.items()
    },  # fmt: skip
    **{
        f"graph.{g}": _binary(v)
        for g, v in {
            "add": "vadd",
            "sub": "vsub",
            "mul": "vmul",
            "div": "vdiv",
            "pow": "vpow",
            "and": "vand",
            "or": "vor",
            "bitwise_and": "vbitand",
            "bitwise_or": "vbitor",
            "bitwise_xor": "vbitxor",
        }.items()
    },
    "graph.sum": _variadic("vadd"),
    "graph.max": _variadic("vmax"),
    "graph.min": _variadic("vmin"),
    "graph.mean": _variadic("vadd", mean=True),
    "graph.equal": _compare("eq"),
    "graph.less": _compare("lt"),
    "graph.greater": _compare("gt"),
    "graph.greater_or_equal": _compare("ge"),
    "graph.less_or_equal": _compare("le"),
    "graph.xor": _compare("ne"),
    "graph.bit_shift": VectorLowering(_bit_shift),
    "graph.where": VectorLowering(_where),
    "graph.mod": VectorLowering(_mod, scratch=2, masks=1),
    "graph.shrink": VectorLowering(_shrink, scratch=1, masks=1),
    "graph.prelu": VectorLowering(_prelu, scratch=1),
    "graph.leaky_relu": VectorLowering(_leaky_relu, scratch=1),
    "graph.elu": VectorLowering(_elu, scratch=1),
    "graph.selu": VectorLowering(_selu, scratch=1),
    "graph.gelu": VectorLowering(_gelu, scratch=1),
    "graph.clip": VectorLowering(_clip),
    "graph.cast": VectorLowering(_cast),
    "graph.cast_like": VectorLowering(_cast, reads=(0,)),
    "graph.expand": VectorLowering(lambda e, op, ins, out: e.unary("vcopy", first(ins), out),
                                   reads=(0,)),
    "graph.quantize_linear": VectorLowering(
        _quantize, scratch=1, scratch_of=0, reads_of=_immediate_parameters
    ),
    "graph.dequantize_linear": VectorLowering(
        _dequantize, scratch=1, reads_of=_immediate_parameters
    ),
    **MATH_LOWERINGS,
}  # fmt: skip

NO_VECTOR_PROGRAM: dict[str, str] = {
    "graph.batch_norm": (
        "its mean / variance / scale / bias are 1-D [C], which a right-aligned tile broadcast "
        "cannot lay along the channel axis; batchnorm-to-affine (O2) rewrites it into a "
        "mul / add of [C, 1, 1] constants, which have vector programs"
    ),
    "graph.bit_cast": (
        "a reinterpretation of bits, not arithmetic: a vector op converts values, and a UB "
        "tile has one element type (a bit cast is a typed view of the GM buffer, not a "
        "vector program)"
    ),
}
"""Elementwise graph ops (fusion kind ELEMWISE / BROADCAST) with no vector program, and why."""


def vector_lowering(op: GraphOp) -> VectorLowering | None:
    """The vector lowering of ``op``, or None when it stays a host op: an op with no entry;
    a cast that is not a plain conversion (saturating float8, ``round_mode``, the wrapping
    int4), which ``tile.vcast`` does not model; a quantization that is not per tensor to an
    8- or 16-bit integer."""
    if isinstance(op, GraphCastOp | GraphCastLikeOp) and not _plain_cast(op):
        return None
    if isinstance(op, QuantizeLinearOp | DequantizeLinearOp) and not _per_tensor_quantization(op):
        return None
    return VECTOR_LOWERINGS.get(op.name)


def result_element(tile: Tile):
    return memref_type(tile).element_type
