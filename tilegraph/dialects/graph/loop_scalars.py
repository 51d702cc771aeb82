"""Compile-time facts of a ``graph.loop``'s body scalars (:class:`LoopScalars`): read by
``hoist-loop-projection`` (which rows a body's Gather reads) and by the device-loop
lowering (the trip count, tf2onnx's time counter as the iteration number)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.ir import Block, SSAValue

from tilegraph.dialects.graph.base import constant_value
from tilegraph.dialects.graph.binary import AddOp
from tilegraph.dialects.graph.control_flow import LoopOp
from tilegraph.dialects.graph.elementwise import CastOp, IdentityOp
from tilegraph.dialects.graph.fused import YieldOp


def through_casts(value: SSAValue) -> SSAValue:
    """``value`` before any casts and identities (a counter compared as float after
    tf2onnx's casts of int32 time steps)."""
    while isinstance(value.owner, CastOp | IdentityOp):
        value = value.owner.operands[0]
    return value


@dataclass(frozen=True)
class LoopScalars:
    """What a ``graph.loop`` body's scalars are at compile time: which argument is a
    carried value, which carried values pass through unchanged, which values are constant
    in every iteration or count the iterations."""

    loop: LoopOp

    @property
    def block(self) -> Block:
        return self.loop.body.block

    @property
    def yielded(self) -> list[SSAValue]:
        last = self.block.last_op
        assert isinstance(last, YieldOp)
        return list(last.values)

    def carried_index(self, value: SSAValue) -> int | None:
        """``k`` when ``value`` is the body's argument of carried value ``k``."""
        args = list(self.block.args)
        n = len(self.loop.initial)
        if value in args[2 : 2 + n]:
            return args.index(value) - 2  # type: ignore[arg-type]
        return None

    def invariant(self, k: int) -> bool:
        """Carried value ``k`` is yielded unchanged."""
        return self.yielded[1 + k] is self.block.args[2 + k]

    def outer_of(self, value: SSAValue) -> SSAValue | None:
        """The outer value a body argument stands for every iteration: an invariant carried
        value's initial value, or a capture."""
        k = self.carried_index(value)
        if k is not None:
            return self.loop.initial[k] if self.invariant(k) else None
        args = list(self.block.args)
        captured = list(self.loop.captured_values)
        first = len(args) - len(captured)
        if value in args[first:]:
            return captured[args.index(value) - first]  # type: ignore[arg-type]
        return None

    def constant(self, value: SSAValue) -> int | None:
        """The integer ``value`` holds in every iteration (a constant, or an argument bound
        to one outside), else None."""
        value = through_casts(value)
        outer = self.outer_of(value)
        data = constant_value(outer if outer is not None else value)
        if data is None or np.asarray(data).size != 1:
            return None
        return int(np.asarray(data).reshape(-1)[0])

    def counter_start(self, value: SSAValue) -> int | None:
        """For ``t + 1`` where ``t`` is a carried counter incremented by one each iteration
        (the value it yields is this sum) or the iteration number: ``t``'s first value."""
        value = through_casts(value)
        if not isinstance(value.owner, AddOp):
            return None
        a, b = value.owner.operands
        for t, one in ((a, b), (b, a)):
            if self.constant(one) != 1:
                continue
            if t is self.block.args[0]:
                return 0
            k = self.carried_index(t)
            if k is not None and through_casts(self.yielded[1 + k]) is value:
                return self.constant(self.loop.initial[k])
        return None

    def is_counter(self, value: SSAValue) -> bool:
        """``value`` is one more in each iteration than in the one before: the iteration
        number, or a carried value the body yields as itself plus one (through casts)."""
        value = through_casts(value)
        if value is self.block.args[0]:
            return True
        k = self.carried_index(value)
        if k is None:
            return False
        step = through_casts(self.yielded[1 + k])
        return self.counter_start(step) is not None and value in step.owner.operands  # type: ignore[union-attr]
