"""Semantics of the vector unit's elementwise ops (:mod:`tilegraph.dialects.tile.vector`).

The unary, binary and scalar families are declared in the dialect as tables of instruction
names; their numpy functions are the tables here, keyed by the same names, and each family
registers one factory per op class in a loop. Operands broadcast to the destination from
the right (numpy's rule), as the verifier checks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tilegraph.dialects.graph.logical import shift_bits
from tilegraph.dialects.tile.vector import (
    BINARY_OPS,
    SCALAR_OPS,
    UNARY_OPS,
    BroadcastOp,
    CastOp,
    CmpOp,
    DupOp,
    SelectOp,
)
from tilegraph.runtime.tile_interpreter.kernels import Kernel, tile_kernel


def _erf(x: np.ndarray) -> np.ndarray:
    from scipy.special import erf

    return erf(x).astype(x.dtype, copy=False)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return (1.0 / (1.0 + np.exp(-x))).astype(x.dtype, copy=False)


def _sigmoid_into(x: np.ndarray, out: np.ndarray) -> None:
    """:func:`_sigmoid` step by step in ``out``, of ``x``'s float type: each step's
    ufunc runs in that type as the expression's do (a Python float is weak), so the bits
    are the same, without four temporaries (a recurrent step's gates run it thousands of
    times)."""
    np.negative(x, out=out)
    np.exp(out, out=out)
    np.add(out, 1.0, out=out)
    np.divide(1.0, out, out=out)


INTO: dict[Callable[[np.ndarray], np.ndarray], Callable[[np.ndarray, np.ndarray], None]] = {
    _sigmoid: _sigmoid_into,
}
"""Unary functions that are no ufunc, with a form writing into a destination of their
operand's float type."""


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return (1.0 / np.sqrt(x)).astype(x.dtype, copy=False)


def _rec(x: np.ndarray) -> np.ndarray:
    return (1.0 / x).astype(x.dtype, copy=False)


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0).astype(x.dtype, copy=False)


UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "vabs": np.abs,
    "vneg": np.negative,
    "vrelu": _relu,
    "vexp": np.exp,
    "vln": np.log,
    "vsqrt": np.sqrt,
    "vrsqrt": _rsqrt,
    "vrec": _rec,
    "vtanh": np.tanh,
    "vsigmoid": _sigmoid,
    "verf": _erf,
    "vsin": np.sin,
    "vcos": np.cos,
    "vatan": np.arctan,
    "vfloor": np.floor,
    "vceil": np.ceil,
    "vround": np.round,
    "vsign": np.sign,
    "vnot": np.logical_not,
    "vbitnot": np.invert,
    "vcopy": np.copy,
}

BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "vadd": np.add,
    "vsub": np.subtract,
    "vmul": np.multiply,
    "vdiv": np.divide,
    "vmax": np.maximum,
    "vmin": np.minimum,
    "vpow": np.power,
    "vand": np.logical_and,
    "vor": np.logical_or,
    "vbitand": np.bitwise_and,
    "vbitor": np.bitwise_or,
    "vbitxor": np.bitwise_xor,
    "vshl": lambda a, b: shift_bits(a, b, left=True),
    "vshr": lambda a, b: shift_bits(a, b, left=False),
}

SCALAR: dict[str, Callable[[np.ndarray, Any], np.ndarray]] = {
    "vadds": np.add,
    "vmuls": np.multiply,
    "vmaxs": np.maximum,
    "vmins": np.minimum,
}

COMPARISONS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}

ROUNDINGS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "rint": np.rint,
    "trunc": np.trunc,
    "floor": np.floor,
    "ceil": np.ceil,
}


def store_into(dst: np.ndarray, values: Any) -> None:
    dst[...] = values


_COMPUTES_IN: dict[tuple[Any, ...], bool] = {}


def computes_in(fn: Any, inputs: tuple[np.dtype, ...], out: np.dtype) -> bool:
    """Whether ``fn`` (a numpy ufunc) on operands of types ``inputs`` runs its loop in
    ``inputs`` -> ``out`` with no cast: then ``fn(..., out=dst)`` writes what storing its
    fresh result into ``dst`` would, bit for bit, without the temporary and the copy (a
    tile op on a small tile spent half its time on them). Remembered per types."""
    key = (fn, inputs, out)
    found = _COMPUTES_IN.get(key)
    if found is None:
        try:
            found = isinstance(fn, np.ufunc) and fn.resolve_dtypes((*inputs, None)) == (
                *inputs,
                out,
            )
        except TypeError:  # no loop for these types: the plain path says why
            found = False
        _COMPUTES_IN[key] = found
    return found


def _unary(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[[Any], Kernel]:
    into = INTO.get(fn)

    def factory(op: Any) -> Kernel:
        def run(src: np.ndarray, dst: np.ndarray) -> tuple[()]:
            if computes_in(fn, (src.dtype,), dst.dtype):
                fn(src, out=dst)  # pyright: ignore[reportCallIssue] - a ufunc
            elif into is not None and src.dtype == dst.dtype and src.dtype.kind == "f":
                into(src, dst)
            else:
                store_into(dst, fn(src))
            return ()

        return run

    return factory


def _binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[[Any], Kernel]:
    def factory(op: Any) -> Kernel:
        def run(a: np.ndarray, b: np.ndarray, dst: np.ndarray) -> tuple[()]:
            if computes_in(fn, (a.dtype, b.dtype), dst.dtype):
                fn(a, b, out=dst)  # pyright: ignore[reportCallIssue] - a ufunc
            else:
                store_into(dst, fn(a, b))
            return ()

        return run

    return factory


def _scalar(fn: Callable[[np.ndarray, Any], np.ndarray]) -> Callable[[Any], Kernel]:
    def factory(op: Any) -> Kernel:
        value = op.scalar.value.data

        def run(src: np.ndarray, dst: np.ndarray) -> tuple[()]:
            scalar = np.asarray(value, src.dtype)
            if computes_in(fn, (src.dtype, src.dtype), dst.dtype):
                fn(src, scalar, out=dst)  # pyright: ignore[reportCallIssue] - a ufunc
            else:
                store_into(dst, fn(src, scalar))
            return ()

        return run

    return factory


for _name, _cls in UNARY_OPS.items():
    tile_kernel(_cls)(_unary(UNARY[_name]))  # pyright: ignore[reportArgumentType]
for _name, _cls in BINARY_OPS.items():
    tile_kernel(_cls)(_binary(BINARY[_name]))  # pyright: ignore[reportArgumentType]
for _name, _cls in SCALAR_OPS.items():
    tile_kernel(_cls)(_scalar(SCALAR[_name]))  # pyright: ignore[reportArgumentType]


@tile_kernel(CmpOp)
def compare(op: CmpOp) -> Kernel:
    return _binary(COMPARISONS[op.predicate.data])(op)


@tile_kernel(SelectOp)
def select(op: SelectOp) -> Kernel:
    def run(mask: np.ndarray, a: np.ndarray, b: np.ndarray, dst: np.ndarray) -> tuple[()]:
        store_into(dst, np.where(mask, a, b))
        return ()

    return run


@tile_kernel(CastOp)
def cast(op: CastOp) -> Kernel:
    rounding = ROUNDINGS[op.rounding.data if op.rounding is not None else "rint"]

    def run(src: np.ndarray, dst: np.ndarray) -> tuple[()]:
        if dst.dtype.kind in "iu" and src.dtype.kind == "f":
            src = rounding(src)
        store_into(dst, src.astype(dst.dtype))
        return ()

    return run


@tile_kernel(DupOp)
def dup(op: DupOp) -> Kernel:
    value = op.value.value.data

    def run(dst: np.ndarray) -> tuple[()]:
        dst.fill(value)
        return ()

    return run


@tile_kernel(BroadcastOp)
def broadcast(op: BroadcastOp) -> Kernel:
    def run(src: np.ndarray, dst: np.ndarray) -> tuple[()]:
        store_into(dst, src)
        return ()

    return run
