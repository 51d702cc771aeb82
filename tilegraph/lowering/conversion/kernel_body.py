"""A kernel function's macro body: GM reads, graph ops, GM writes.

``lower-graph-to-kernels`` writes every kernel as::

    func.func @k(%in0: memref<..GM>, ..., %out0: memref<..GM>) attributes {tile.kernel = "vector"} {
      %x = tile.read %in0 : ... -> !layout.tensor<...>
      %y = graph.relu %x : ...
      tile.write %y to %out0 : ...
      func.return
    }

:class:`KernelBody` is that structure read back, for the tiling strategies.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.ir import BlockArgument, Operation, SSAValue

from tilegraph.dialects.graph import ConstantOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import ReadOp, WriteOp
from tilegraph.formats import Format


class KernelBodyError(ValueError):
    """A kernel function does not have the read / compute / write form."""


@dataclass
class KernelBody:
    fn: func.FuncOp
    reads: dict[SSAValue, BlockArgument] = field(default_factory=dict)
    """Tensor value -> the GM argument it was read from."""
    ops: list[Operation] = field(default_factory=list)
    writes: list[tuple[SSAValue, BlockArgument]] = field(default_factory=list)
    constants: list[Operation] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.fn.sym_name.data

    def source(self, value: SSAValue) -> BlockArgument | None:
        """The GM argument a tensor value comes from, if it is a kernel input."""
        return self.reads.get(value)

    def users_in_body(self, value: SSAValue) -> list[Operation]:
        return [u.operation for u in value.uses if u.operation in self._members]

    @property
    def _members(self) -> set[Operation]:
        return set(self.ops)


def read_kernel_body(fn: func.FuncOp) -> KernelBody:
    body = KernelBody(fn)
    for op in fn.body.block.ops:
        if isinstance(op, ReadOp):
            if not isinstance(op.buffer, BlockArgument):
                raise KernelBodyError(f"@{body.name}: tile.read of a non-argument")
            body.reads[op.result] = op.buffer
        elif isinstance(op, WriteOp):
            if not isinstance(op.buffer, BlockArgument):
                raise KernelBodyError(f"@{body.name}: tile.write to a non-argument")
            body.writes.append((op.value, op.buffer))
        elif isinstance(op, func.ReturnOp):
            continue
        elif isinstance(op, ConstantOp):
            body.constants.append(op)  # compile-time operands (axes, shapes)
        else:
            body.ops.append(op)
    return body


def tensor_of(value: SSAValue) -> TensorType:
    """The ``!layout.tensor`` type of a value a kernel body computes on."""
    t = value.type
    assert isinstance(t, TensorType)
    return t


def is_row_major(t: TensorType) -> bool:
    """Held in plain row-major order (storage = origin, or ND): reshapes are byte copies."""
    return t.storage_format == t.origin_format or t.storage_format == Format.ND
