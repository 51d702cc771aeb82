"""Vector ops that work *along one axis* of a UB tile: running sums (``tile.vscan``), the
index of the extreme (``tile.varg``), the positions of the k largest or smallest
(``tile.vtopk``), a gather by such positions (``tile.vtake``) and its scatter
(``tile.vput``), one-hot rows
(``tile.vonehot``), weighted taps (``tile.vtaps``, a linear or cubic resize of one
axis) and arithmetic sequences (``tile.varange``). Pipe V, every buffer in UB (see
:mod:`.vector`).

Each names its axis; their numpy semantics are in
:mod:`tilegraph.runtime.tile_interpreter.vector_axis`, their costs in
:mod:`tilegraph.cost_model.tile_costs`. On the hardware they are the vector unit's
repeat loops over the axis (Ascend C: ``CumSum``; ``ReduceMax`` with ``calIndex``;
``Sort`` / ``MrgSort``; ``Gather``; ``Scatter``; ``Compare`` + ``Select`` against an index vector;
``Gather`` then ``Axpy`` per tap; ``Arange``). Every op writes one buffer (the analyses of
:mod:`tilegraph.lowering.analysis.buffers` know one destination per op)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, cast

from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    f64,
    i64,
)
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.tile.base import memref_shape
from tilegraph.dialects.tile.vector import TRAITS, VectorOp

SCANS = ("sum", "prod")
ARG_KINDS = ("max", "min")


def _int(value: int) -> IntegerAttr:
    return IntegerAttr(int(value), i64)


def _axis_of(op: Any) -> int:
    return int(op.axis.value.data)


def _verify_axis(op: VectorOp, rank: int) -> int:
    axis = _axis_of(op)
    if not 0 <= axis < rank:
        raise VerifyException(f"'{op.name}': axis {axis} is not a dim of a rank-{rank} tile")
    return axis


def _verify_kept(op: VectorOp, src: Sequence[int], dst: Sequence[int], axis: int, n: int):
    """``dst`` is ``src`` with ``n`` elements along ``axis`` (or, for n == 1, without it)."""
    kept = tuple(n if i == axis else d for i, d in enumerate(src))
    dropped = tuple(d for i, d in enumerate(src) if i != axis)
    if tuple(dst) != kept and not (n == 1 and tuple(dst) == dropped):
        raise VerifyException(
            f"'{op.name}': a {list(src)} tile gives {list(kept)} along axis {axis}, not {list(dst)}"
        )


@irdl_op_definition
class ScanOp(VectorOp):
    """``tile.vscan %src to %dst {kind = "sum", axis, exclusive, reverse}``: the running
    sum (product) along ``axis``; ``exclusive`` leaves each element out of its own
    result, ``reverse`` runs from the axis' end. A scan longer than a tile carries the
    previous tiles' total in a second tile added afterwards (``vadd``)."""

    name = "tile.vscan"
    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    kind = prop_def(StringAttr)
    axis = prop_def(IntegerAttr)
    exclusive = prop_def(IntegerAttr)
    reverse = prop_def(IntegerAttr)
    irdl_options = (ParsePropInAttrDict(),)
    traits = TRAITS
    assembly_format = "$src `to` $dst attr-dict `:` type($src) `to` type($dst)"

    def __init__(self, src, dst, kind: str, axis: int, exclusive: bool, reverse: bool):
        super().__init__(
            operands=[src, dst],
            properties={
                "kind": StringAttr(kind),
                "axis": _int(axis),
                "exclusive": _int(exclusive),
                "reverse": _int(reverse),
            },
        )

    def verify_(self) -> None:
        super().verify_()
        if self.kind.data not in SCANS:
            raise VerifyException(f"'{self.name}': kind must be one of {list(SCANS)}")
        src, dst = memref_shape(self.src), memref_shape(self.dst)
        _verify_axis(self, len(src))
        if src != dst:
            raise VerifyException(f"'{self.name}': source {list(src)} != result {list(dst)}")


@irdl_op_definition
class ArgOp(VectorOp):
    """``tile.varg %src to %dst {kind = "max", axis, select_last}``: the position of the
    first (``select_last``: last) maximum / minimum along ``axis``, as integers in
    ``dst``, which keeps the axis as 1 or drops it."""

    name = "tile.varg"
    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    kind = prop_def(StringAttr)
    axis = prop_def(IntegerAttr)
    select_last = prop_def(IntegerAttr)
    irdl_options = (ParsePropInAttrDict(),)
    traits = TRAITS
    assembly_format = "$src `to` $dst attr-dict `:` type($src) `to` type($dst)"

    def __init__(self, src, dst, kind: str, axis: int, select_last: bool):
        super().__init__(
            operands=[src, dst],
            properties={
                "kind": StringAttr(kind),
                "axis": _int(axis),
                "select_last": _int(select_last),
            },
        )

    def verify_(self) -> None:
        super().verify_()
        if self.kind.data not in ARG_KINDS:
            raise VerifyException(f"'{self.name}': kind must be one of {list(ARG_KINDS)}")
        src = memref_shape(self.src)
        _verify_kept(self, src, memref_shape(self.dst), _verify_axis(self, len(src)), 1)


@irdl_op_definition
class TopKOp(VectorOp):
    """``tile.vtopk %src to %indices {axis, largest}``: along ``axis``, the positions of
    the ``k`` largest (``largest`` 0: smallest) elements in order, ties by lower position
    (integers; ``k`` is ``indices``' extent along the axis). The values follow by a
    ``tile.vtake`` of these positions (Ascend's ``Sort`` writes (value, index) pairs that a
    ``GatherMask`` splits; every tile op here writes one buffer)."""

    name = "tile.vtopk"
    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    axis = prop_def(IntegerAttr)
    largest = prop_def(IntegerAttr)
    irdl_options = (ParsePropInAttrDict(),)
    traits = TRAITS
    assembly_format = "$src `to` $dst attr-dict `:` type($src) `to` type($dst)"

    def __init__(self, src, dst, axis: int, largest: bool):
        super().__init__(
            operands=[src, dst], properties={"axis": _int(axis), "largest": _int(largest)}
        )

    def k(self) -> int:
        return memref_shape(self.dst)[_axis_of(self)]

    def verify_(self) -> None:
        super().verify_()
        src, dst = memref_shape(self.src), memref_shape(self.dst)
        axis = _verify_axis(self, len(src))
        k = dst[axis] if len(dst) == len(src) else 0
        if not 1 <= k <= src[axis]:
            raise VerifyException(f"'{self.name}': k = {k} outside [1, {src[axis]}]")
        _verify_kept(self, src, dst, axis, k)


class _ByPositionsOp(VectorOp):
    """``%src, %indices to %dst {axis}``: elements moved by positions along ``axis``."""

    src = operand_def(MemRefType)
    indices = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    axis = prop_def(IntegerAttr)
    irdl_options = (ParsePropInAttrDict(),)
    traits = TRAITS
    assembly_format = (
        "$src `,` $indices `to` $dst attr-dict `:` type($src) `,` type($indices) `to` type($dst)"
    )

    def __init__(self, src, indices, dst, axis: int):
        super().__init__(operands=[src, indices, dst], properties={"axis": _int(axis)})

    def _verify_positions(self, table: Sequence[int], picked: Sequence[int], what: str) -> None:
        """``indices`` has the ``picked`` side's shape, which is the ``table`` side's with
        another extent along the axis."""
        axis = _verify_axis(self, len(table))
        if memref_shape(self.indices) != tuple(picked) or len(picked) != len(table):
            raise VerifyException(f"'{self.name}': indices and {what} must be {list(picked)}")
        _verify_kept(self, table, picked, axis, picked[axis])


@irdl_op_definition
class TakeOp(_ByPositionsOp):
    """``tile.vtake %src, %indices to %dst {axis}``: ``dst = take_along_axis(src, indices,
    axis)``, a gather by positions computed on the vector unit (Ascend C ``Gather`` with a
    UB offset tensor): the values of a ``tile.vtopk``."""

    name = "tile.vtake"

    def verify_(self) -> None:
        super().verify_()
        self._verify_positions(memref_shape(self.src), memref_shape(self.dst), "result")


@irdl_op_definition
class PutOp(_ByPositionsOp):
    """``tile.vput %src, %indices to %dst {axis}``: ``put_along_axis(dst, indices, src,
    axis)`` — each element of ``src`` written into ``dst`` at its position along ``axis``,
    the other elements of ``dst`` kept (it reads its destination): a scatter by positions
    on the vector unit (Ascend C ``Scatter`` with a UB offset tensor, where the core has
    it; the cost model charges a core without it per element on the scalar unit). Among
    equal positions the last element of ``src`` in row-major order is written, as numpy
    does; ONNX leaves that case undefined. With ``reduction`` (add, mul, max, min) each
    element is combined with the destination's instead, equal positions in turn."""

    name = "tile.vput"
    READS_DESTINATION: ClassVar[bool] = True
    REDUCTIONS: ClassVar[tuple[str, ...]] = ("add", "mul", "max", "min")
    reduction = opt_prop_def(StringAttr)
    """Absent: each element is written; else combined with the destination's element
    (ScatterElements' ``add`` / ``mul`` / ``max`` / ``min``), equal positions one after
    the other in row-major order of ``src``, as the graph level does."""

    def __init__(self, src, indices, dst, axis: int, reduction: str | None = None):
        super().__init__(src, indices, dst, axis)
        if reduction is not None:
            self.properties["reduction"] = StringAttr(reduction)

    @property
    def reduce(self) -> str | None:
        return None if self.reduction is None else self.reduction.data

    def verify_(self) -> None:
        super().verify_()
        self._verify_positions(memref_shape(self.dst), memref_shape(self.src), "source")
        if self.reduce is not None and self.reduce not in self.REDUCTIONS:
            raise VerifyException(
                f"'{self.name}': reduction must be one of {', '.join(self.REDUCTIONS)}, "
                f"got '{self.reduce}'"
            )


@irdl_op_definition
class OneHotOp(VectorOp):
    """``tile.vonehot %indices[%offset] to %dst {axis, depth, on, off}``: ``dst`` is
    ``indices``' tile with a dim inserted at ``axis``; position ``p`` along it (``offset +
    p`` in the whole output) holds ``on`` where the index (a negative one plus ``depth``)
    equals it, ``off`` elsewhere. On the vector unit: a compare against an index vector
    and a select."""

    name = "tile.vonehot"
    indices = operand_def(MemRefType)
    offset = operand_def(IndexType)
    dst = operand_def(MemRefType)
    axis = prop_def(IntegerAttr)
    depth = prop_def(IntegerAttr)
    on = prop_def(FloatAttr)
    off = prop_def(FloatAttr)
    irdl_options = (ParsePropInAttrDict(),)
    traits = TRAITS
    assembly_format = (
        "$indices `[` $offset `]` `to` $dst attr-dict `:` type($indices) `to` type($dst)"
    )

    def __init__(self, indices, offset, dst, axis: int, depth: int, on: float, off: float):
        super().__init__(
            operands=[indices, offset, dst],
            properties={
                "axis": _int(axis),
                "depth": _int(depth),
                "on": FloatAttr(on, f64),
                "off": FloatAttr(off, f64),
            },
        )

    def verify_(self) -> None:
        super().verify_()
        idx, dst = memref_shape(self.indices), memref_shape(self.dst)
        axis = _verify_axis(self, len(dst))
        if tuple(d for i, d in enumerate(dst) if i != axis) != tuple(idx):
            raise VerifyException(
                f"'{self.name}': {list(dst)} without axis {axis} is not the indices' {list(idx)}"
            )


@irdl_op_definition
class TapsOp(VectorOp):
    """``tile.vtaps %src to %dst {axis, indices, weights}``: along ``axis``, output position
    ``o`` is ``sum_t weights[o, t] * src[.., indices[o, t], ..]`` (tables of ``T`` taps per
    output position, row-major; ``T`` = table size / output extent). A linear (2 taps) or
    cubic (4 taps) resize of one axis, with any coordinate transformation: the tables are
    compile-time constants, as :class:`~.vector_layout.PickOp`'s offsets are."""

    name = "tile.vtaps"
    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    axis = prop_def(IntegerAttr)
    indices = prop_def(DenseArrayBase)
    weights = prop_def(DenseArrayBase)
    irdl_options = (ParsePropInAttrDict(),)
    traits = TRAITS
    assembly_format = "$src `to` $dst attr-dict `:` type($src) `to` type($dst)"

    def __init__(self, src, dst, axis: int, indices: Sequence[Sequence[int]], weights):
        flat_i = [int(i) for row in indices for i in row]
        flat_w = [float(w) for row in weights for w in row]
        super().__init__(
            operands=[src, dst],
            properties={
                "axis": _int(axis),
                "indices": DenseArrayBase.from_list(i64, flat_i),
                "weights": DenseArrayBase.from_list(f64, flat_w),
            },
        )

    def taps(self) -> int:
        n = memref_shape(self.dst)[_axis_of(self)]
        return len(cast(Any, self.indices).get_values()) // max(n, 1)

    def tables(self) -> tuple[list[list[int]], list[list[float]]]:
        """(indices, weights), one row of ``T`` taps per output position."""
        t = self.taps()
        flat_i = [int(i) for i in cast(Any, self.indices).get_values()]
        flat_w = [float(w) for w in cast(Any, self.weights).get_values()]
        rows = range(0, len(flat_i), t)
        return [flat_i[r : r + t] for r in rows], [flat_w[r : r + t] for r in rows]

    def verify_(self) -> None:
        super().verify_()
        src, dst = memref_shape(self.src), memref_shape(self.dst)
        axis = _verify_axis(self, len(src))
        if len(dst) != len(src) or any(
            a != b for i, (a, b) in enumerate(zip(src, dst, strict=True)) if i != axis
        ):
            raise VerifyException(
                f"'{self.name}': {list(src)} and {list(dst)} differ off axis {axis}"
            )
        count = len(cast(Any, self.indices).get_values())
        weights = len(cast(Any, self.weights).get_values())
        if count == 0 or count % dst[axis] or weights != count:
            raise VerifyException(
                f"'{self.name}': {count} indices and {weights} weights for {dst[axis]} outputs"
            )
        if any(not 0 <= i < src[axis] for row in self.tables()[0] for i in row):
            raise VerifyException(f"'{self.name}': an index outside [0, {src[axis]})")


@irdl_op_definition
class ArangeOp(VectorOp):
    """``tile.varange %offset to %dst {start, delta}``: a 1-D tile of an arithmetic
    sequence, ``dst[p] = start + (offset + p) * delta`` (``offset``: the tile's position in
    the whole sequence), computed in ``dst``'s element type — float32 for a 16-bit float
    ``dst``, rounded once at the end (ONNX Range's default ``stash_type``). ``start`` and
    ``delta`` are compile-time scalars held as f64, as ``tile.vdup``'s value is (exact for
    integers below 2^53). On the hardware Ascend C's ``Arange`` (int16 / int32 / half /
    float, a step >= 0); CANN's ``Arange`` operator builds the int64 and negative-step
    cases from ``Duplicate``, ``Mul`` and ``Add``, which is what the cost model charges."""

    name = "tile.varange"
    offset = operand_def(IndexType)
    dst = operand_def(MemRefType)
    start = prop_def(FloatAttr)
    delta = prop_def(FloatAttr)
    irdl_options = (ParsePropInAttrDict(),)
    traits = TRAITS
    assembly_format = "$offset `to` $dst attr-dict `:` type($dst)"

    def __init__(self, offset, dst, start: float, delta: float):
        super().__init__(
            operands=[offset, dst],
            properties={"start": FloatAttr(start, f64), "delta": FloatAttr(delta, f64)},
        )

    def verify_(self) -> None:
        super().verify_()
        if len(memref_shape(self.dst)) != 1:
            raise VerifyException(
                f"'{self.name}': the sequence is 1-D, got a rank-{len(memref_shape(self.dst))} tile"
            )


AXIS_VECTOR_OPS = (ScanOp, ArgOp, TopKOp, TakeOp, PutOp, OneHotOp, TapsOp, ArangeOp)
