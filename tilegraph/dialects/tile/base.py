"""Shared machinery of ``tile`` ops: scoped buffers, pipes and the facts passes read.

Buffers are builtin memrefs whose memory space is a string naming the scope::

    memref<1x4x8x56x16xf32, "GM">     global memory (a kernel argument or a host allocation)
    memref<4x8x16x16xf32, "L0A">      the cube's left-operand buffer

Every ``tile`` op class declares, on the class, its IR (operands, properties, verifier)
and the facts that passes, analyses and executors read:

* ``PIPE``: the pipe it runs on (MTE1, MTE2, MTE3, M, V, FIX, S) — or :meth:`TileOp.pipe`
  when it depends on the operands' scopes (DMA);
* :meth:`TileOp.written` / :meth:`TileOp.read` (with ``READS_DESTINATION``): the buffers it
  writes and reads;
* :meth:`TileOp.moved_bytes` and :meth:`TileOp.gm_burst_bytes`: the bytes it moves, and
  the runs of GM they are made of.

What an op computes and what it costs live with their users, registered per op class:
the numpy semantics in :mod:`tilegraph.runtime.tile_interpreter.kernels` (the xDSL
interpreter and the fast executor run them), the fast executor's batched forms in
:mod:`tilegraph.runtime.fast_executor.forms`, the cycles on a core in
:mod:`tilegraph.cost_model.tile_costs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import ClassVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    StringAttr,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.utils.exceptions import VerifyException

from tilegraph.hardware import HardwareModel
from tilegraph.target import target_of

SCOPES = ("GM", "L1", "L0A", "L0B", "L0C", "UB")
ON_CHIP = frozenset(SCOPES[1:])
CUBE_SCOPES = frozenset(("L1", "L0A", "L0B", "L0C"))
"""The cube core's buffers (an AIC's on a decoupled preset); UB is the vector core's."""


def scoped_memref(shape: Sequence[int], element_type: Attribute, scope: str) -> MemRefType:
    """``memref<shape x element_type, "scope">``."""
    if scope not in SCOPES:
        raise ValueError(f"unknown memory scope {scope!r}; scopes are {', '.join(SCOPES)}")
    return MemRefType(element_type, list(shape), NoneAttr(), StringAttr(scope))


def scope_of(value_or_type: SSAValue | Attribute) -> str:
    """The scope a memref lives in (a memref without one is GM)."""
    t = value_or_type.type if isinstance(value_or_type, SSAValue) else value_or_type
    if not isinstance(t, MemRefType):
        raise VerifyException(f"expected a memref, got {t}")
    space = t.memory_space
    if isinstance(space, StringAttr):
        return space.data
    return "GM"


def memref_shape(value: SSAValue | Attribute) -> tuple[int, ...]:
    t = value.type if isinstance(value, SSAValue) else value
    assert isinstance(t, MemRefType)
    return tuple(int(d) for d in t.get_shape())


def memref_element(value: SSAValue) -> Attribute:
    t = value.type
    assert isinstance(t, MemRefType)
    return t.element_type


def element_bytes(element_type: Attribute) -> int:
    width = getattr(element_type, "bitwidth", None)
    if width is None:
        width = getattr(element_type, "width", None)
        width = width.data if width is not None else 32
    return max(1, int(width) // 8)


def buffer_bytes(value: SSAValue | Attribute) -> int:
    t = value.type if isinstance(value, SSAValue) else value
    assert isinstance(t, MemRefType)
    return prod(memref_shape(t)) * element_bytes(t.element_type)


def module_preset(op: Operation) -> HardwareModel:
    """The hardware preset an op is compiled for: the platform of the module's
    ``tilegraph.target`` (:func:`tilegraph.target.target_of`), else the default preset.
    ``op`` may be the module itself."""
    return target_of(op).hw


def leading_fractals(whole: int, extent: int | None, size: int = 16) -> int:
    """The ``size``-element fractals (16, or an NZ buffer's C0), of an axis of ``whole``,
    that hold its leading ``extent`` elements (a ragged op's valid ones; None: all of
    them)."""
    return whole if extent is None else min(whole, -(-extent // size))


def require_extent(op: Operation, name: str, extent: SSAValue | None, whole: int) -> None:
    """A ragged op's valid extent ``name`` (an ``index``, in elements), when it is a
    constant, lies in ``[1, whole]``: the elements its buffers hold along that axis."""
    if extent is None or not isinstance(extent.owner, arith.ConstantOp):
        return
    attr = extent.owner.value
    if isinstance(attr, IntegerAttr) and not 1 <= attr.value.data <= whole:
        raise VerifyException(
            f"'{op.name}': {name} = {attr.value.data} is outside the {whole} the buffers hold"
        )


def require_scope(op: Operation, value: SSAValue, allowed: Sequence[str], role: str) -> str:
    scope = scope_of(value)
    if scope not in allowed:
        raise VerifyException(
            f"'{op.name}': {role} must be in {' or '.join(allowed)}, but it is in {scope}"
        )
    return scope


class TileOp(IRDLOperation):
    """Base class of ``tile`` ops (not an op itself); see the module docstring."""

    PIPE: ClassVar[str] = "S"
    READS_DESTINATION: ClassVar[bool] = False
    """The op reads its destination too (``mmad`` accumulating into L0C)."""

    def pipe(self) -> str:
        return self.PIPE

    def written(self) -> SSAValue | None:
        """The buffer this op writes (its destination), if any."""
        dst = getattr(self, "dst", None)
        return dst if isinstance(dst, SSAValue) else None

    def writes_gm(self) -> bool:
        """Whether this op writes global memory (its destination is a GM buffer)."""
        written = self.written()
        return written is not None and scope_of(written) == "GM"

    def read(self) -> tuple[SSAValue, ...]:
        """The buffers this op reads: its memref operands but the one it writes (unless it
        reads that too)."""
        written = self.written()
        return tuple(
            v
            for v in self.operands
            if isinstance(v.type, MemRefType) and (v is not written or self.READS_DESTINATION)
        )

    def moved_bytes(self) -> int:
        """Bytes this op moves (DMA ops) or touches (others); used by reports."""
        return 0

    def gm_burst_bytes(self) -> int | None:
        """Bytes of each contiguous run of GM this op reads or writes, for the rate of the
        transfer (:meth:`HardwareModel.gm_efficiency`); None: no GM access, or one run."""
        return None

    def gm_offsets(self) -> tuple[SSAValue, ...]:
        """The index operands that place this op's window in its GM buffer: two instances
        with equal values touch the same GM bytes (the cycle model's L2 reuse keys on
        them). Default: every index operand, which may tell apart instances that touch
        the same GM bytes (never the reverse); ops that also index an on-chip buffer
        narrow it to the GM side."""
        return tuple(v for v in self.operands if isinstance(v.type, IndexType))

    def gm_window(self) -> tuple[int, ...] | None:
        """The extent, per dim of the GM buffer, of the window this op touches at its
        :meth:`gm_offsets` (one offset per GM dim then), or None when the op does not
        say (the cycle model then keys the access as a whole)."""
        return None

    def gm_moved_bytes(self) -> int:
        """Bytes this op moves across GM (the GM side of :meth:`moved_bytes`: a DMA that
        pads on chip reads fewer)."""
        return self.moved_bytes()


def memref_strides(value: SSAValue | Attribute) -> tuple[int, ...]:
    """Element strides of a memref: its ``strided<[...]>`` layout (a ``tile.strided_view``),
    else row-major."""
    t = value.type if isinstance(value, SSAValue) else value
    assert isinstance(t, MemRefType)
    if isinstance(t.layout, StridedLayoutAttr):
        return tuple(int(s) for s in t.layout.get_strides())  # type: ignore[arg-type]
    shape = memref_shape(t)
    return tuple(prod(shape[i + 1 :]) for i in range(len(shape)))


def contiguous_run(
    window: Sequence[int],
    full: Sequence[int],
    element_bytes: int,
    strides: Sequence[int] | None = None,
) -> int:
    """Bytes of the contiguous runs a ``window`` of a ``full`` buffer is made of: the
    innermost window dims, up to and including the first that does not span its buffer
    dim, as long as each lies right after the next inner one in memory. ``strides`` (in
    elements; default row-major) are a strided view's: a window of a view whose innermost
    dim is not unit-stride is made of one-element runs, and a head split's (S, D) window
    of ``X[S, H·D]`` of runs of ``D`` elements."""
    if strides is None:
        strides = [prod(full[i + 1 :]) for i in range(len(full))]
    run, expected = element_bytes, 1
    for extent, whole, stride in zip(
        reversed(window), reversed(full), reversed(strides), strict=False
    ):
        if whole == 1:
            continue  # a dim of one element lies anywhere
        if stride != expected:
            break
        run *= min(extent, whole)
        if extent < whole:
            break
        expected = stride * whole
    return run


def verify_same_rank(op: Operation, a: SSAValue, b: SSAValue, what: str) -> None:
    ra, rb = len(memref_shape(a)), len(memref_shape(b))
    if ra != rb:
        raise VerifyException(f"'{op.name}': {what} have ranks {ra} and {rb}; they must match")
