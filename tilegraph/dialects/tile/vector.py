"""The vector unit: ops on UB buffers (pipe V).

Elementwise families are declared from tables (one row per instruction, HIVM's names):

* unary ``tile.vexp %x to %y``; binary ``tile.vadd %a, %b to %y`` (operands broadcast along
  dims of size 1, e.g. a per-channel ``(1, C1, 1, 1, C0)`` tile against a feature-map tile);
  scalar forms ``tile.vadds %x, 2.0 to %y``;
* ``tile.vcmp`` (to an i1 buffer), ``tile.vsel``, ``tile.vcast``, ``tile.vdup`` (fill),
  ``tile.vbrc`` (broadcast); reduce, pool and transpose are in :mod:`.vector_layout`.

Cost: ``startup + repeats`` where a repeat handles 256 bytes (arithmetic) or 32 elements
(transcendental), per the hardware model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import ceil, prod
from typing import Any, ClassVar, cast

import numpy as np
from xdsl.dialects.builtin import (
    FloatAttr,
    MemRefType,
    StringAttr,
    f64,
    i1,
)
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    traits_def,
)
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.tile.base import (
    Kernel,
    TileOp,
    buffer_bytes,
    memref_shape,
    require_scope,
)
from tilegraph.hardware import HardwareModel

TRAITS = traits_def(MemoryReadEffect(), MemoryWriteEffect())


def _erf(x: np.ndarray) -> np.ndarray:
    from scipy.special import erf

    return erf(x).astype(x.dtype, copy=False)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return (1.0 / (1.0 + np.exp(-x))).astype(x.dtype, copy=False)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return (1.0 / np.sqrt(x)).astype(x.dtype, copy=False)


def _rec(x: np.ndarray) -> np.ndarray:
    return (1.0 / x).astype(x.dtype, copy=False)


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0).astype(x.dtype, copy=False)


UNARY: dict[str, tuple[Callable[[np.ndarray], np.ndarray], bool]] = {
    # name: (semantics, transcendental)
    "vabs": (np.abs, False),
    "vneg": (np.negative, False),
    "vrelu": (_relu, False),
    "vexp": (np.exp, True),
    "vln": (np.log, True),
    "vsqrt": (np.sqrt, True),
    "vrsqrt": (_rsqrt, True),
    "vrec": (_rec, True),
    "vtanh": (np.tanh, True),
    "vsigmoid": (_sigmoid, True),
    "verf": (_erf, True),
    "vsin": (np.sin, True),
    "vcos": (np.cos, True),
    "vfloor": (np.floor, False),
    "vceil": (np.ceil, False),
    "vround": (np.round, False),
    "vsign": (np.sign, False),
    "vnot": (np.logical_not, False),
    "vcopy": (np.copy, False),
}

BINARY: dict[str, tuple[Callable[[np.ndarray, np.ndarray], np.ndarray], bool]] = {
    "vadd": (np.add, False),
    "vsub": (np.subtract, False),
    "vmul": (np.multiply, False),
    "vdiv": (np.divide, True),
    "vmax": (np.maximum, False),
    "vmin": (np.minimum, False),
    "vpow": (np.power, True),
    "vand": (np.logical_and, False),
    "vor": (np.logical_or, False),
}

SCALAR: dict[str, Callable[[np.ndarray, Any], np.ndarray]] = {
    "vadds": np.add,
    "vmuls": np.multiply,
    "vmaxs": np.maximum,
    "vmins": np.minimum,
}


def vector_cycles(hw: HardwareModel, nbytes: int, elements: int, transcendental: bool) -> int:
    if transcendental:
        repeats = ceil(elements / hw.vector_transcendental_elems_per_cycle)
    else:
        repeats = ceil(nbytes / hw.vector_bytes_per_cycle)
    return hw.vector_startup_cycles + repeats


class VectorOp(TileOp):
    """Base of vector ops: every memref operand lives in UB; the result buffer is ``dst``."""

    PIPE: ClassVar[str] = "V"
    TRANSCENDENTAL: ClassVar[bool] = False

    def verify_(self) -> None:
        for i, v in enumerate(self.operands):
            if isinstance(v.type, MemRefType):
                require_scope(self, v, ("UB",), f"operand #{i}")

    def destination(self):
        return self.operands[-1]

    def cost(self, hw: HardwareModel) -> int:
        dst = self.destination()
        return vector_cycles(hw, buffer_bytes(dst), prod(memref_shape(dst)), self.TRANSCENDENTAL)

    def moved_bytes(self) -> int:
        return sum(buffer_bytes(v) for v in self.operands if isinstance(v.type, MemRefType))

    ELEMENTWISE: ClassVar[bool] = True
    """The semantics broadcast from the right, so a leading batch dim on the buffers is
    handled by the same kernel (see :meth:`TileOp.batched_kernel`)."""

    def batched_kernel(self, batched: Sequence[bool]) -> Kernel | None:
        if not self.ELEMENTWISE or not batched[-1]:
            return None
        kernel = self.kernel()
        rank = len(memref_shape(self.destination()))
        # numpy aligns shapes from the right: a batched operand of lower rank than the
        # destination gets its broadcast dims between the batch dim and its own.
        fixes = [
            rank - len(memref_shape(v)) if b and isinstance(v.type, MemRefType) else 0
            for v, b in zip(self.operands, batched, strict=True)
        ]
        if not any(fixes):
            return kernel

        def run(*args: Any) -> tuple[()]:
            aligned = [
                a.reshape(a.shape[0], *([1] * f), *a.shape[1:]) if f else a
                for a, f in zip(args, fixes, strict=True)
            ]
            return kernel(*aligned)

        return run


class SourceToDestOp(VectorOp):
    """Base of vector ops ``%src to %dst`` whose source broadcasts to the destination."""

    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    traits = TRAITS
    assembly_format = "$src `to` $dst attr-dict `:` type($src) `to` type($dst)"

    def verify_(self) -> None:
        super().verify_()
        verify_broadcast(self, self.src)


def store_into(dst: np.ndarray, values: Any) -> None:
    dst[...] = values


def verify_broadcast(op: TileOp, *sources: Any) -> None:
    dst = memref_shape(op.operands[-1])
    for s in sources:
        shape = memref_shape(s)
        if len(shape) > len(dst) or any(
            a not in (1, b) for a, b in zip(shape[::-1], dst[::-1], strict=False)
        ):
            raise VerifyException(
                f"'{op.name}': operand {list(shape)} does not broadcast to {list(dst)}"
            )


def _unary_op(name: str, fn: Callable[[np.ndarray], np.ndarray], slow: bool) -> Any:
    class _Unary(SourceToDestOp):
        TRANSCENDENTAL: ClassVar[bool] = slow

        def __init__(self, src, dst):
            super().__init__(operands=[src, dst])

        def kernel(self) -> Kernel:
            def run(src: np.ndarray, dst: np.ndarray) -> tuple[()]:
                store_into(dst, fn(src))
                return ()

            return run

    _Unary.name = f"tile.{name}"
    _Unary.__name__ = _Unary.__qualname__ = f"{name.capitalize()}Op"
    _Unary.__doc__ = f"``tile.{name} %src to %dst``: elementwise, on UB."
    return irdl_op_definition(_Unary)


def _binary_op(name: str, fn: Callable[[np.ndarray, np.ndarray], np.ndarray], slow: bool) -> Any:
    class _Binary(VectorOp):
        TRANSCENDENTAL: ClassVar[bool] = slow
        lhs = operand_def(MemRefType)
        rhs = operand_def(MemRefType)
        dst = operand_def(MemRefType)
        traits = TRAITS
        assembly_format = (
            "$lhs `,` $rhs `to` $dst attr-dict `:` type($lhs) `,` type($rhs) `to` type($dst)"
        )

        def __init__(self, lhs, rhs, dst):
            super().__init__(operands=[lhs, rhs, dst])

        def verify_(self) -> None:
            super().verify_()
            verify_broadcast(self, self.lhs, self.rhs)

        def kernel(self) -> Kernel:
            def run(a: np.ndarray, b: np.ndarray, dst: np.ndarray) -> tuple[()]:
                store_into(dst, fn(a, b))
                return ()

            return run

    _Binary.name = f"tile.{name}"
    _Binary.__name__ = _Binary.__qualname__ = f"{name.capitalize()}Op"
    _Binary.__doc__ = f"``tile.{name} %a, %b to %dst``: elementwise with broadcast, on UB."
    return irdl_op_definition(_Binary)


def _scalar_op(name: str, fn: Callable[[np.ndarray, Any], np.ndarray]) -> Any:
    class _Scalar(VectorOp):
        src = operand_def(MemRefType)
        dst = operand_def(MemRefType)
        scalar = prop_def(FloatAttr)
        traits = TRAITS
        assembly_format = "$src `,` $scalar `to` $dst attr-dict `:` type($src) `to` type($dst)"

        def __init__(self, src, scalar: float, dst):
            super().__init__(operands=[src, dst], properties={"scalar": FloatAttr(scalar, f64)})

        def verify_(self) -> None:
            super().verify_()
            verify_broadcast(self, self.src)

        def kernel(self) -> Kernel:
            value = self.scalar.value.data

            def run(src: np.ndarray, dst: np.ndarray) -> tuple[()]:
                store_into(dst, fn(src, np.asarray(value, src.dtype)))
                return ()

            return run

    _Scalar.name = f"tile.{name}"
    _Scalar.__name__ = _Scalar.__qualname__ = f"{name.capitalize()}Op"
    _Scalar.__doc__ = f"``tile.{name} %src, scalar to %dst``: elementwise with a scalar, on UB."
    return irdl_op_definition(_Scalar)


# Typed as constructors: each class takes its operands positionally (see the factories).
UNARY_OPS: dict[str, Callable[..., VectorOp]] = {
    n: _unary_op(n, fn, slow) for n, (fn, slow) in UNARY.items()
}
BINARY_OPS: dict[str, Callable[..., VectorOp]] = {
    n: _binary_op(n, fn, slow) for n, (fn, slow) in BINARY.items()
}
SCALAR_OPS: dict[str, Callable[..., VectorOp]] = {n: _scalar_op(n, fn) for n, fn in SCALAR.items()}

COMPARISONS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


@irdl_op_definition
class CmpOp(VectorOp):
    """``tile.vcmp %a, %b to %mask {predicate = "lt"}``: an i1 mask buffer."""

    name = "tile.vcmp"
    lhs = operand_def(MemRefType)
    rhs = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    predicate = prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)
    traits = TRAITS
    assembly_format = (
        "$lhs `,` $rhs `to` $dst attr-dict `:` type($lhs) `,` type($rhs) `to` type($dst)"
    )

    def verify_(self) -> None:
        super().verify_()
        if self.predicate.data not in COMPARISONS:
            raise VerifyException(f"'{self.name}': predicate must be one of {list(COMPARISONS)}")
        dst = self.dst.type
        assert isinstance(dst, MemRefType)
        if dst.element_type != i1:
            raise VerifyException(
                f"'{self.name}': the mask buffer must be i1, not {dst.element_type}"
            )
        verify_broadcast(self, self.lhs, self.rhs)

    def kernel(self) -> Kernel:
        fn = COMPARISONS[self.predicate.data]

        def run(a: np.ndarray, b: np.ndarray, dst: np.ndarray) -> tuple[()]:
            store_into(dst, fn(a, b))
            return ()

        return run


@irdl_op_definition
class SelectOp(VectorOp):
    """``tile.vsel %mask, %a, %b to %dst``: ``mask ? a : b``."""

    name = "tile.vsel"
    mask = operand_def(MemRefType)
    on_true = operand_def(MemRefType)
    on_false = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    traits = TRAITS
    assembly_format = (
        "$mask `,` $on_true `,` $on_false `to` $dst attr-dict `:` type($mask) `,` "
        "type($on_true) `,` type($on_false) `to` type($dst)"
    )

    def verify_(self) -> None:
        super().verify_()
        verify_broadcast(self, self.mask, self.on_true, self.on_false)

    def kernel(self) -> Kernel:
        def run(mask: np.ndarray, a: np.ndarray, b: np.ndarray, dst: np.ndarray) -> tuple[()]:
            store_into(dst, np.where(mask, a, b))
            return ()

        return run


ROUNDINGS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "rint": np.rint,
    "trunc": np.trunc,
    "floor": np.floor,
    "ceil": np.ceil,
}


@irdl_op_definition
class CastOp(SourceToDestOp):
    """``tile.vcast %src to %dst {rounding = "trunc"}``: convert to ``dst``'s element type;
    float to integer rounds by ``rounding`` (rint: to nearest even, the default; trunc:
    toward zero, as ONNX Cast; floor; ceil)."""

    name = "tile.vcast"
    rounding = opt_prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)

    def cost(self, hw: HardwareModel) -> int:
        elements = prod(memref_shape(self.destination()))
        return hw.vector_startup_cycles + ceil(elements / hw.vector_cast_elems_per_cycle)

    def verify_(self) -> None:
        super().verify_()
        if self.rounding is not None and self.rounding.data not in ROUNDINGS:
            raise VerifyException(f"'{self.name}': rounding must be one of {list(ROUNDINGS)}")

    def kernel(self) -> Kernel:
        rounding = ROUNDINGS[self.rounding.data if self.rounding is not None else "rint"]

        def run(src: np.ndarray, dst: np.ndarray) -> tuple[()]:
            if dst.dtype.kind in "iu" and src.dtype.kind == "f":
                src = rounding(src)
            store_into(dst, src.astype(dst.dtype))
            return ()

        return run


@irdl_op_definition
class DupOp(VectorOp):
    """``tile.vdup %dst {value = 0.0}``: fill a buffer with a scalar."""

    name = "tile.vdup"
    dst = operand_def(MemRefType)
    value = prop_def(FloatAttr)
    irdl_options = (ParsePropInAttrDict(),)
    traits = TRAITS
    assembly_format = "$dst attr-dict `:` type($dst)"

    def __init__(self, dst, value: float):
        super().__init__(operands=[dst], properties={"value": FloatAttr(value, f64)})

    def kernel(self) -> Kernel:
        value = self.value.value.data

        def run(dst: np.ndarray) -> tuple[()]:
            dst.fill(value)
            return ()

        return run


@irdl_op_definition
class BroadcastOp(SourceToDestOp):
    """``tile.vbrc %src to %dst``: repeat ``src`` along its size-1 dims."""

    name = "tile.vbrc"

    def kernel(self) -> Kernel:
        def run(src: np.ndarray, dst: np.ndarray) -> tuple[()]:
            store_into(dst, src)
            return ()

        return run


VECTOR_OPS: tuple[type[VectorOp], ...] = (
    *cast(list[type[VectorOp]], list(UNARY_OPS.values())),
    *cast(list[type[VectorOp]], list(BINARY_OPS.values())),
    *cast(list[type[VectorOp]], list(SCALAR_OPS.values())),
    CmpOp,
    SelectOp,
    CastOp,
    DupOp,
    BroadcastOp,
)
