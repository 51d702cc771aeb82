"""The scalar unit reading data (``tile.get_value``) and scattering elements in UB
(``tile.scatter_rows``).

A kernel whose addresses depend on data — a gather's rows, picked by the indices it loads —
reads those values on the scalar unit (pipe S) and issues its DMAs with them, as Ascend C
does with ``LocalTensor::GetValue(i)`` followed by ``DataCopy(dst[j], src[value * D], D)``::

    tile.copy_flat %indices[%t] to %idx_ub[%c0] {count = 64} : ...      // MTE2
    %row = tile.get_value %idx_ub[%j] {bound = 30522} : memref<64xi64, "UB">   // S
    %at = arith.muli %row, %c768 : index
    tile.copy_flat %table[%at] to %rows_ub[%jd] {count = 768, partial} : ...   // MTE2

The read waits for the load of its buffer like any consumer on another pipe (``inject-sync``
puts an MTE2 -> S flag before it); the DMA that takes its result as an offset is issued by
the scalar unit after the read, so it needs no flag — the cycle model starts such an op no
earlier than the scalar pipe's last op has ended (:mod:`tilegraph.cost_model.cycles.core`).
Its value is not known before the kernel runs: the analyses that walk kernels without data
hold it as :class:`tilegraph.dialects.index_arith.DataDependent`.

``tile.scatter_rows`` is ScatterND's element loop on a UB-resident block of the output
(:mod:`tilegraph.lowering.conversion.tiling.scatter_ub`): per index tuple, its components
read and wrapped as ``get_value`` reads them, then its update row written into the block —
Ascend C's ``dst.SetValue(row, src.GetValue(j))`` in a scalar loop, the form Ascend C's
reference points Atlas A2 / A3 to (their vector unit has no ``Scatter``). One op stands for
the whole loop over a tile of tuples, as ``tile.vput`` does for ScatterElements: the tuples
apply one after the other, which is the order a reduction combines in. With ``elements`` it
is ScatterElements' loop on a block of an axis too large for UB
(:mod:`tilegraph.lowering.conversion.tiling.elements_blocks`): every element of the tile has
an index of its own along the axis and keeps its column.

``tile.gather_rows`` is its counterpart for GatherElements on such a block: per element of
a tile of indices, its index read and wrapped, and when it falls in the block the element
it names copied from the block into the result tile (``dst.SetValue(j, block.GetValue(a -
base))``); the others keep what the result tile holds, so the blocks of the axis, one after
the other, fill it.
"""

from __future__ import annotations

from typing import Any, ClassVar, cast

from xdsl.dialects.builtin import (
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.ir import SSAValue
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.tile.base import TileOp, memref_element, memref_shape, require_scope


@irdl_op_definition
class GetValueOp(TileOp):
    """``%v = tile.get_value %buf[%i, ...] {bound = N}``: one element of an integer UB
    buffer, read on the scalar unit, as an index — or of a GM tensor (Ascend C
    ``GlobalTensor::GetValue``: the scalar unit's load through its data cache; a cube
    kernel has no UB), as an int8 convolution reads its run-time padding value.

    With ``bound``, the value is an index into an axis of ``N`` elements in ONNX's
    convention: a negative value counts from the end (``v + N``), and one outside
    ``[-N, N)`` is an error of the executors (``IndexError``, as the graph level's
    ``numpy.take`` raises); without it the value is returned as it is."""

    name = "tile.get_value"
    PIPE: ClassVar[str] = "S"
    buffer = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    bound = opt_prop_def(IntegerAttr)
    result = result_def(IndexType)
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(MemoryReadEffect())
    assembly_format = "$buffer `[` $indices `]` attr-dict `:` type($buffer)"

    def __init__(self, buffer, indices, bound: int | None = None):
        props = {} if bound is None else {"bound": IntegerAttr(bound, i64)}
        super().__init__(
            operands=[buffer, list(indices)], result_types=[IndexType()], properties=props
        )

    @property
    def bound_value(self) -> int | None:
        return None if self.bound is None else self.bound.value.data

    def verify_(self) -> None:
        require_scope(self, self.buffer, ("UB", "GM"), "the buffer")
        if not isinstance(memref_element(self.buffer), IntegerType):
            raise VerifyException(f"'{self.name}': reads an integer buffer")
        if len(self.indices) != len(memref_shape(self.buffer)):
            raise VerifyException(
                f"'{self.name}': expected {len(memref_shape(self.buffer))} indices"
            )
        if self.bound is not None and self.bound.value.data < 1:
            raise VerifyException(f"'{self.name}': bound must be positive")


def _verify_element_loop(
    op: TileOp, src: SSAValue, indices: SSAValue, dst: SSAValue
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The checks ``scatter_rows`` and ``gather_rows`` share besides their scopes (an
    integer index buffer, ``src`` and ``dst`` of one element type); the three shapes."""
    if not isinstance(memref_element(indices), IntegerType):
        raise VerifyException(f"'{op.name}': reads an integer index buffer")
    if memref_element(src) != memref_element(dst):
        raise VerifyException(f"'{op.name}': src and dst must share an element type")
    return memref_shape(src), memref_shape(indices), memref_shape(dst)


@irdl_op_definition
class ScatterRowsOp(TileOp):
    """``tile.scatter_rows %src, %indices to %dst[%base] {depth, reduction}``: per row
    ``j`` of ``indices`` (``[T, K]``, ``K = len(depth)``), in order, the row
    ``r = (((i_0 · d_1) + i_1) · d_2 + ...)`` of a row-major ``[prod(depth), inner]``
    tensor that its components name — each wrapped against its axis as ``get_value``'s
    ``bound`` does (negative counts from the end, outside ``[-d_k, d_k)`` an
    ``IndexError`` of the executors, whether or not the row is in the block) — and, when
    ``base <= r < base + B``, ``dst[r - base] = src[j]`` (``dst``: the block of ``B``
    rows that starts at row ``base``; ``src``: ``[T, inner]``). Among equal rows the last
    tuple wins; with ``reduction`` (add, mul, max, min) each is combined with the row
    instead, in tuple order. Rows of the block no tuple names are kept (it reads its
    destination). Runs on the scalar unit: every tuple is read, in or out of the block.

    With ``elements`` (ScatterElements; ``depth`` of one axis) ``indices`` is ``[T,
    inner]`` like ``src``: element ``(j, c)`` goes to ``dst[r - base, c]``, ``r`` its own
    index wrapped; in row-major order of the elements (equal positions share a column, so
    the order among them is ``j``'s)."""

    name = "tile.scatter_rows"
    PIPE: ClassVar[str] = "S"
    READS_DESTINATION: ClassVar[bool] = True
    REDUCTIONS: ClassVar[tuple[str, ...]] = ("add", "mul", "max", "min")
    src = operand_def(MemRefType)
    indices = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    base = operand_def(IndexType)
    depth = prop_def(DenseArrayBase)
    reduction = opt_prop_def(StringAttr)
    elements = opt_prop_def(UnitAttr)
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$src `,` $indices `to` $dst `[` $base `]` attr-dict `:` type($src) `,` "
        "type($indices) `to` type($dst)"
    )

    def __init__(
        self,
        src,
        indices,
        dst,
        base,
        depth,
        reduction: str | None = None,
        elements: bool = False,
    ):
        props: dict[str, Any] = {"depth": DenseArrayBase.from_list(i64, list(depth))}
        if reduction is not None:
            props["reduction"] = StringAttr(reduction)
        if elements:
            props["elements"] = UnitAttr()
        super().__init__(operands=[src, indices, dst, base], properties=props)

    @property
    def per_element(self) -> bool:
        """Whether every element has an index of its own (ScatterElements' form)."""
        return self.elements is not None

    @property
    def depth_sizes(self) -> tuple[int, ...]:
        return tuple(int(d) for d in cast(Any, self.depth).get_values())

    @property
    def reduce(self) -> str | None:
        return None if self.reduction is None else self.reduction.data

    def verify_(self) -> None:
        for value, role in ((self.src, "src"), (self.indices, "indices"), (self.dst, "dst")):
            require_scope(self, value, ("UB",), role)
        src, idx, dst = _verify_element_loop(self, self.src, self.indices, self.dst)
        depth = self.depth_sizes
        if not depth or min(depth) < 1:
            raise VerifyException(f"'{self.name}': depth must be positive sizes")
        if len(src) != 2 or len(dst) != 2 or src[1] != dst[1]:
            raise VerifyException(f"'{self.name}': src and dst must be [rows, inner] alike")
        if self.per_element and (idx != src or len(depth) != 1):
            raise VerifyException(
                f"'{self.name}': an elements scatter has indices shaped like src, one axis"
            )
        if not self.per_element and idx != (src[0], len(depth)):
            raise VerifyException(f"'{self.name}': indices must be [{src[0]}, {len(depth)}]")
        if self.reduce is not None and self.reduce not in self.REDUCTIONS:
            raise VerifyException(
                f"'{self.name}': reduction must be one of {', '.join(self.REDUCTIONS)}"
            )


@irdl_op_definition
class GatherRowsOp(TileOp):
    """``tile.gather_rows %src[%base], %indices to %dst {bound = N}``: GatherElements on
    a block of an axis of ``N`` positions. ``src`` is the block (``[B, inner]``: the axis
    positions ``base .. base + B`` of one outer position), ``indices`` and ``dst``
    ``[T, inner]``; per element ``(j, c)``, its index wrapped against ``N`` as
    ``get_value``'s ``bound`` does (negative counts from the end, outside ``[-N, N)`` an
    ``IndexError`` of the executors, whether or not it is in the block) and, when ``base
    <= a < base + B``, ``dst[j, c] = src[a - base, c]``. The other elements of ``dst``
    are kept (it reads its destination): over the blocks of the axis every element is
    written once (or, by blocks that overlap, again with the same value). Runs on the
    scalar unit: every index is read, in or out of the block."""

    name = "tile.gather_rows"
    PIPE: ClassVar[str] = "S"
    READS_DESTINATION: ClassVar[bool] = True
    src = operand_def(MemRefType)
    base = operand_def(IndexType)
    indices = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    bound = prop_def(IntegerAttr)
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$src `[` $base `]` `,` $indices `to` $dst attr-dict `:` type($src) `,` "
        "type($indices) `to` type($dst)"
    )

    def __init__(self, src, base, indices, dst, bound: int):
        super().__init__(
            operands=[src, base, indices, dst], properties={"bound": IntegerAttr(bound, i64)}
        )

    @property
    def bound_value(self) -> int:
        return self.bound.value.data

    def verify_(self) -> None:
        for value, role in ((self.src, "src"), (self.indices, "indices"), (self.dst, "dst")):
            require_scope(self, value, ("UB",), role)
        src, idx, dst = _verify_element_loop(self, self.src, self.indices, self.dst)
        if len(src) != 2 or idx != dst or len(dst) != 2 or src[1] != dst[1]:
            raise VerifyException(
                f"'{self.name}': src [rows, inner], indices and dst [T, inner] alike"
            )
        if self.bound_value < 1:
            raise VerifyException(f"'{self.name}': bound must be positive")


SCALAR_UNIT_OPS = (GetValueOp, ScatterRowsOp, GatherRowsOp)
