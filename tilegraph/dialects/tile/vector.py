"""The vector unit: ops on UB buffers (pipe V).

Elementwise families are declared from tables (one row per instruction, HIVM's names):

* unary ``tile.vexp %x to %y``; binary ``tile.vadd %a, %b to %y`` (operands broadcast along
  dims of size 1, e.g. a per-channel ``(1, C1, 1, 1, C0)`` tile against a feature-map tile);
  scalar forms ``tile.vadds %x, 2.0 to %y``;
* ``tile.vcmp`` (to an i1 buffer), ``tile.vsel``, ``tile.vcast``, ``tile.vdup`` (fill),
  ``tile.vbrc`` (broadcast); reduce, pool and transpose are in :mod:`.vector_layout`.

``vnot``, ``vand`` and ``vor`` are logical (on masks); the ``vbit*`` ones and the shifts
``vshl`` / ``vshr`` work on the bits of integer buffers.

Each family's table names its instructions and says which are transcendental (a fact the
cycle model reads); their numpy semantics are in :mod:`tilegraph.runtime.tile_interpreter.
vector`, keyed by the same names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, cast

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
    TileOp,
    buffer_bytes,
    memref_shape,
    require_scope,
)

TRAITS = traits_def(MemoryReadEffect(), MemoryWriteEffect())


UNARY: dict[str, bool] = {
    # name: transcendental (a repeat handles fewer elements; see the cost model)
    "vabs": False,
    "vneg": False,
    "vrelu": False,
    "vexp": True,
    "vln": True,
    "vsqrt": True,
    "vrsqrt": True,
    "vrec": True,
    "vtanh": True,
    "vsigmoid": True,
    "verf": True,
    "vsin": True,
    "vcos": True,
    "vatan": True,
    "vfloor": False,
    "vceil": False,
    "vround": False,
    "vsign": False,
    "vnot": False,
    "vbitnot": False,
    "vcopy": False,
}

BINARY: dict[str, bool] = {
    "vadd": False,
    "vsub": False,
    "vmul": False,
    "vdiv": True,
    "vmax": False,
    "vmin": False,
    "vpow": True,
    "vand": False,
    "vor": False,
    "vbitand": False,
    "vbitor": False,
    "vbitxor": False,
    "vshl": False,
    "vshr": False,
}

SCALAR = ("vadds", "vmuls", "vmaxs", "vmins")


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

    def moved_bytes(self) -> int:
        return sum(buffer_bytes(v) for v in self.operands if isinstance(v.type, MemRefType))


class SourceToDestOp(VectorOp):
    """Base of vector ops ``%src to %dst`` whose source broadcasts to the destination."""

    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    traits = TRAITS
    assembly_format = "$src `to` $dst attr-dict `:` type($src) `to` type($dst)"

    def verify_(self) -> None:
        super().verify_()
        verify_broadcast(self, self.src)


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


def _unary_op(name: str, slow: bool) -> Any:
    class _Unary(SourceToDestOp):
        TRANSCENDENTAL: ClassVar[bool] = slow

        def __init__(self, src, dst):
            super().__init__(operands=[src, dst])

    _Unary.name = f"tile.{name}"
    _Unary.__name__ = _Unary.__qualname__ = f"{name.capitalize()}Op"
    _Unary.__doc__ = f"``tile.{name} %src to %dst``: elementwise, on UB."
    return irdl_op_definition(_Unary)


def _binary_op(name: str, slow: bool) -> Any:
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

    _Binary.name = f"tile.{name}"
    _Binary.__name__ = _Binary.__qualname__ = f"{name.capitalize()}Op"
    _Binary.__doc__ = f"``tile.{name} %a, %b to %dst``: elementwise with broadcast, on UB."
    return irdl_op_definition(_Binary)


def _scalar_op(name: str) -> Any:
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

    _Scalar.name = f"tile.{name}"
    _Scalar.__name__ = _Scalar.__qualname__ = f"{name.capitalize()}Op"
    _Scalar.__doc__ = f"``tile.{name} %src, scalar to %dst``: elementwise with a scalar, on UB."
    return irdl_op_definition(_Scalar)


# Typed as constructors: each class takes its operands positionally (see the factories).
UNARY_OPS: dict[str, Callable[..., VectorOp]] = {n: _unary_op(n, slow) for n, slow in UNARY.items()}
BINARY_OPS: dict[str, Callable[..., VectorOp]] = {
    n: _binary_op(n, slow) for n, slow in BINARY.items()
}
SCALAR_OPS: dict[str, Callable[..., VectorOp]] = {n: _scalar_op(n) for n in SCALAR}

COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")


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


ROUNDINGS = ("rint", "trunc", "floor", "ceil")
"""Float to integer: to nearest even (the default), toward zero, down, up."""


@irdl_op_definition
class CastOp(SourceToDestOp):
    """``tile.vcast %src to %dst {rounding = "trunc"}``: convert to ``dst``'s element type;
    float to integer rounds by ``rounding`` (rint: to nearest even, the default; trunc:
    toward zero, as ONNX Cast; floor; ceil)."""

    name = "tile.vcast"
    rounding = opt_prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        super().verify_()
        if self.rounding is not None and self.rounding.data not in ROUNDINGS:
            raise VerifyException(f"'{self.name}': rounding must be one of {list(ROUNDINGS)}")


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


@irdl_op_definition
class BroadcastOp(SourceToDestOp):
    """``tile.vbrc %src to %dst``: repeat ``src`` along its size-1 dims."""

    name = "tile.vbrc"


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
