"""``tile.loop_launches``: a loop of kernel launches on the device (a lowered ``graph.loop``).

GE runs a TensorFlow while loop's body as kernels driven by stream control tasks on the
device; this op is that loop in the host sequence. Its region holds only ``tile.launch``
ops over its block arguments, one per operand (the region is isolated from above, so that
what the host sequence's analyses see of the loop, its operands, are every GM buffer the
body touches). The operands come in groups that say what the loop does with them::

    tile.loop_launches {trip = 30}
        counter(%i)                 a 0-d int64 buffer the runtime writes i into (optional)
        inits(%h0, %c0)             the carried values' initial buffers
        states(%h, %c)              the buffers the body reads a carried value from
        nexts(%h_next, %c_next)     the buffers the body writes its next value to
        slices(%y_t)                the buffers the body writes a scan output's slice to
        stacks(%y)                  the [trip, ...] buffers of the scan outputs
        others(...)                 weights, captured tensors, the body's intermediates
    { ^bb0(...): tile.launch ... }

Run (both executors: :func:`tilegraph.runtime.tile_interpreter.host.run_device_loop`):
``states[k] = inits[k]``; then per iteration ``i``: ``counter = i``, the launches in
order, ``states[k] = nexts[k]`` (all nexts read first: GE's loop-variable copies) and
``stacks[j][i] = slices[j]``. After the loop the states hold the final carried values.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, MemRefType, i32, i64
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
)
from xdsl.rewriter import Rewriter
from xdsl.traits import IsolatedFromAbove, MemoryReadEffect, MemoryWriteEffect, NoTerminator
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.tile.base import TileOp, memref_shape, scope_of
from tilegraph.dialects.tile.host import LaunchOp

GROUPS = ("counter", "inits", "states", "nexts", "slices", "stacks", "others")


@irdl_op_definition
class LoopLaunchesOp(TileOp):
    """A device loop of ``trip`` iterations of its region's launches (module docstring)."""

    name = "tile.loop_launches"
    trip = prop_def(IntegerAttr)
    counter = var_operand_def(MemRefType)
    inits = var_operand_def(MemRefType)
    states = var_operand_def(MemRefType)
    nexts = var_operand_def(MemRefType)
    slices = var_operand_def(MemRefType)
    stacks = var_operand_def(MemRefType)
    others = var_operand_def(MemRefType)
    body = region_def("single_block")
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(
        IsolatedFromAbove(), NoTerminator(), MemoryReadEffect(), MemoryWriteEffect()
    )

    def __init__(self, trip: int, groups: Sequence[Sequence[SSAValue]], body: Block):
        assert len(groups) == len(GROUPS)
        super().__init__(
            operands=[list(g) for g in groups],
            properties={
                "trip": IntegerAttr(trip, i64),
                "operandSegmentSizes": DenseArrayBase.from_list(i32, [len(g) for g in groups]),
            },
            regions=[Region(body)],
        )

    @property
    def trip_count(self) -> int:
        return self.trip.value.data

    def launches(self) -> list[LaunchOp]:
        return [op for op in self.body.block.ops if isinstance(op, LaunchOp)]

    def verify_(self) -> None:
        if self.trip_count < 1:
            raise VerifyException(f"'{self.name}': trip must be at least 1, got {self.trip_count}")
        block = self.body.block
        if [a.type for a in block.args] != [v.type for v in self.operands]:
            raise VerifyException(f"'{self.name}': the body's arguments must be its operands'")
        for op in block.ops:
            if not isinstance(op, LaunchOp):
                raise VerifyException(f"'{self.name}': the body holds launches only, not {op.name}")
        for i, value in enumerate(self.operands):
            if scope_of(value) != "GM":
                raise VerifyException(f"'{self.name}': operand #{i} is not a GM buffer")
        for v in self.counter:
            _check_type(self, v.type, (), "the counter", np.dtype(np.int64))
        if not len(self.inits) == len(self.states) == len(self.nexts) or len(self.counter) > 1:
            raise VerifyException(
                f"'{self.name}': one state and one next per initial value, at most one counter"
            )
        for group in (self.states, self.nexts):
            for init, other in zip(self.inits, group, strict=True):
                if init.type != other.type:
                    raise VerifyException(
                        f"'{self.name}': a carried value's buffers differ: {init.type} and "
                        f"{other.type}"
                    )
        if len(self.slices) != len(self.stacks):
            raise VerifyException(f"'{self.name}': one stack per scan slice")
        for piece, stack in zip(self.slices, self.stacks, strict=True):
            want = (self.trip_count, *memref_shape(piece.type))
            _check_type(self, stack.type, want, "a scan output's stack")
            assert isinstance(piece.type, MemRefType) and isinstance(stack.type, MemRefType)
            if piece.type.element_type != stack.type.element_type:
                raise VerifyException(f"'{self.name}': a scan slice and its stack differ in type")


def outer_buffer(value: SSAValue) -> SSAValue:
    """The host sequence's buffer behind ``value``: through the block arguments of device
    loops to the operands they stand for."""
    while isinstance(value, BlockArgument) and isinstance(value.owner.parent_op(), LoopLaunchesOp):
        loop = value.owner.parent_op()
        assert isinstance(loop, LoopLaunchesOp)
        value = loop.operands[value.index]
    return value


def retype_buffer(value: SSAValue, memref: MemRefType) -> None:
    """Give the buffer ``value`` (a launch's argument) type ``memref``, and every device
    loop's block argument on the way to it (their types are their operands')."""
    while isinstance(value, BlockArgument) and isinstance(value.owner.parent_op(), LoopLaunchesOp):
        loop = value.owner.parent_op()
        assert isinstance(loop, LoopLaunchesOp)
        outer = loop.operands[value.index]
        Rewriter.replace_value_with_new_type(value, memref)
        value = outer
    hint = value.name_hint
    Rewriter.replace_value_with_new_type(value, memref).name_hint = hint


def insert_for_launch(ops: Sequence[Operation], value: SSAValue, launch: Operation) -> SSAValue:
    """Insert ``ops`` (defining the buffer ``value``) just before ``launch``; for a launch
    in a device loop, before the loop, the buffer passed in as one more operand of it
    (``others``). Returns what the launch reads it as."""
    loop = launch.parent_op()
    if not isinstance(loop, LoopLaunchesOp):
        block = launch.parent_block()
        assert block is not None
        block.insert_ops_before(list(ops), launch)
        return value
    outer = insert_for_launch(ops, value, loop)
    sizes = [len(getattr(loop, g)) for g in GROUPS]
    sizes[-1] += 1
    loop.operands = [*loop.operands, outer]
    loop.properties["operandSegmentSizes"] = DenseArrayBase.from_list(i32, sizes)
    block = loop.body.block
    arg = block.insert_arg(outer.type, len(block.args))
    arg.name_hint = outer.name_hint
    return arg


def _check_type(
    op: LoopLaunchesOp,
    t: Attribute,
    shape: tuple[int, ...],
    what: str,
    dtype: np.dtype | None = None,
) -> None:
    from tilegraph.dialects.tile.host import numpy_dtype

    if memref_shape(t) != shape or (dtype is not None and numpy_dtype(t) != dtype):
        raise VerifyException(f"'{op.name}': {what} must be a {list(shape)} buffer, got {t}")


LOOP_OPS = (LoopLaunchesOp,)
