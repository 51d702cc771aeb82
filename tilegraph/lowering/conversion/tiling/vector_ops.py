"""How each elementwise graph op runs on the vector unit: one place, one row per op.

A lowering receives the UB tiles of the op's operands (``None`` for an absent optional one)
and the UB tile of its result, and emits vector instructions through :class:`VectorEmitter`.
``SCRATCH`` counts the extra tiles an entry needs (for UB budgeting). An op absent from
:data:`VECTOR_LOWERINGS` has no vector kernel: a kernel containing it stays on the host.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import pi, sqrt

from xdsl.ir import SSAValue

from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.graph.elementwise import CastOp as GraphCastOp
from tilegraph.dialects.tile import BINARY_OPS, SCALAR_OPS, UNARY_OPS, CastOp, CmpOp
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder, memref_type

Tile = SSAValue


class VectorEmitter:
    """Vector instructions on UB tiles, and scratch tiles shaped like the result."""

    def __init__(self, builder: KernelBuilder, result: Tile, scratch: list[Tile]):
        self.b = builder
        self.result = result
        self._scratch = scratch

    def scratch(self, i: int) -> Tile:
        return self._scratch[i]

    def unary(self, name: str, src: Tile, dst: Tile) -> None:
        self.b.add(UNARY_OPS[name](src, dst))

    def binary(self, name: str, a: Tile, b: Tile, dst: Tile) -> None:
        self.b.add(BINARY_OPS[name](a, b, dst))

    def scalar(self, name: str, src: Tile, value: float, dst: Tile) -> None:
        self.b.add(SCALAR_OPS[name](src, value, dst))


Lowering = Callable[[VectorEmitter, GraphOp, list[Tile | None], Tile], None]


@dataclass(frozen=True)
class VectorLowering:
    emit: Lowering
    scratch: int = 0


def _unary(name: str) -> VectorLowering:
    return VectorLowering(lambda e, op, ins, out: e.unary(name, _first(ins), out))


def _binary(name: str) -> VectorLowering:
    def emit(e: VectorEmitter, op: GraphOp, ins: list[Tile | None], out: Tile) -> None:
        a, b = ins[0], ins[1]
        assert a is not None and b is not None
        e.binary(name, a, b, out)

    return VectorLowering(emit)


def _variadic(name: str, mean: bool = False) -> VectorLowering:
    def emit(e: VectorEmitter, op: GraphOp, ins: list[Tile | None], out: Tile) -> None:
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


def _first(ins: list[Tile | None]) -> Tile:
    x = ins[0]
    assert x is not None
    return x


def _negative_part(e: VectorEmitter, x: Tile, slope: float, out: Tile, tmp: Tile) -> None:
    """out = relu(x) + slope * min(x, 0)."""
    e.scalar("vmins", x, 0.0, tmp)
    e.scalar("vmuls", tmp, slope, tmp)
    e.unary("vrelu", x, out)
    e.binary("vadd", out, tmp, out)


def _leaky_relu(e: VectorEmitter, op: GraphOp, ins: list[Tile | None], out: Tile) -> None:
    _negative_part(e, _first(ins), float(op.attr("alpha")), out, e.scratch(0))


def _prelu(e: VectorEmitter, op: GraphOp, ins: list[Tile | None], out: Tile) -> None:
    x, slope = _first(ins), ins[1]
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


def _elu(e: VectorEmitter, op: GraphOp, ins: list[Tile | None], out: Tile) -> None:
    _elu_like(float(op.attr("alpha")), 1.0, e, _first(ins), out)


def _selu(e: VectorEmitter, op: GraphOp, ins: list[Tile | None], out: Tile) -> None:
    _elu_like(float(op.attr("alpha")), float(op.attr("gamma")), e, _first(ins), out)


def _hard_sigmoid(e: VectorEmitter, op: GraphOp, ins: list[Tile | None], out: Tile) -> None:
    e.scalar("vmuls", _first(ins), float(op.attr("alpha")), out)
    e.scalar("vadds", out, float(op.attr("beta")), out)
    e.scalar("vmins", out, 1.0, out)
    e.scalar("vmaxs", out, 0.0, out)


def _softplus(e: VectorEmitter, op: GraphOp, ins: list[Tile | None], out: Tile) -> None:
    """relu(x) + ln(1 + exp(-|x|)): no overflow for large |x|."""
    x, tmp = _first(ins), e.scratch(0)
    e.unary("vabs", x, tmp)
    e.scalar("vmuls", tmp, -1.0, tmp)
    e.unary("vexp", tmp, tmp)
    e.scalar("vadds", tmp, 1.0, tmp)
    e.unary("vln", tmp, tmp)
    e.unary("vrelu", x, out)
    e.binary("vadd", out, tmp, out)


def _gelu(e: VectorEmitter, op: GraphOp, ins: list[Tile | None], out: Tile) -> None:
    x, tmp = _first(ins), e.scratch(0)
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


def _clip(e: VectorEmitter, op: GraphOp, ins: list[Tile | None], out: Tile) -> None:
    x = _first(ins)
    lo, hi = (ins + [None, None])[1:3]
    e.unary("vcopy", x, out)
    if lo is not None:
        e.binary("vmax", out, lo, out)
    if hi is not None:
        e.binary("vmin", out, hi, out)


def _cast(e: VectorEmitter, op: GraphOp, ins: list[Tile | None], out: Tile) -> None:
    from xdsl.dialects.builtin import StringAttr

    # ONNX Cast from float to integer truncates toward zero.
    e.b.add(CastOp(operands=[_first(ins), out], properties={"rounding": StringAttr("trunc")}))


def _compare(predicate: str) -> VectorLowering:
    def emit(e: VectorEmitter, op: GraphOp, ins: list[Tile | None], out: Tile) -> None:
        from xdsl.dialects.builtin import StringAttr

        a, b = ins[0], ins[1]
        e.b.add(CmpOp(operands=[a, b, out], properties={"predicate": StringAttr(predicate)}))

    return VectorLowering(emit)


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
        }.items()
    },
    "graph.sum": _variadic("vadd"),
    "graph.max": _variadic("vmax"),
    "graph.min": _variadic("vmin"),
    "graph.mean": _variadic("vadd", mean=True),
    "graph.equal": _compare("eq"),
    "graph.less": _compare("lt"),
    "graph.greater": _compare("gt"),
    "graph.prelu": VectorLowering(_prelu, scratch=1),
    "graph.leaky_relu": VectorLowering(_leaky_relu, scratch=1),
    "graph.elu": VectorLowering(_elu, scratch=1),
    "graph.selu": VectorLowering(_selu, scratch=1),
    "graph.hard_sigmoid": VectorLowering(_hard_sigmoid),
    "graph.softplus": VectorLowering(_softplus, scratch=1),
    "graph.gelu": VectorLowering(_gelu, scratch=1),
    "graph.clip": VectorLowering(_clip),
    "graph.cast": VectorLowering(_cast),
}


def vector_lowering(op: GraphOp) -> VectorLowering | None:
    """The vector lowering of ``op``, or None when it stays a host op: an op with no entry,
    and a cast that is not a plain conversion (saturating float8, ``round_mode``, the
    wrapping int4), which ``tile.vcast`` does not model."""
    if isinstance(op, GraphCastOp) and not op.is_plain_conversion():
        return None
    return VECTOR_LOWERINGS.get(op.name)


def result_element(tile: Tile):
    return memref_type(tile).element_type
