"""The scalar unit reading data: ``tile.get_value``.

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
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, MemRefType, i64
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import MemoryReadEffect
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


SCALAR_UNIT_OPS = (GetValueOp,)
