"""``hoist-loop-elementwise``: a loop body's elementwise op of one operand applied to row
``t`` of a loop-invariant tensor, computed for every row once before the loop::

    graph.loop ... captures[%X, ...] {                 %N = graph.not %X
      %x_t = graph.gather %X_arg, %t                   graph.loop ... captures[..., %N] {
      %n = graph.not %x_t                  ->            %n = graph.gather %N_arg, %t
      ...                                                ...

tf2onnx's Keras LSTM with a mask reads row ``t`` of the ``[T, B, 1]`` bool mask every
step and turns it into the two float factors of its ``SelectV2`` blends, ``Cast(Not(m_t))``
and ``Cast(m_t)``: two small vector kernels per step on the device that depend only on
the mask and the step. Hoisted, each is one kernel of all ``T`` rows before the loop and
the body gathers its row.

When: the op is a unary elementwise op (``UnaryElementwiseOp``: Not, Cast, Sigmoid, ...)
of ``Gather(X, t)`` of the form ``hoist-loop-projection`` hoists (axis 0, a 0-d index that
is the loop's counter, so every row is read once and the hoisted op does the loop's own
work; ``X`` the same in every iteration). Applied until none is left, so a chain
(``Cast(Not(x_t))``) is hoisted whole; afterwards the captures the body no longer reads
(``Not(X)`` once ``Cast(Not(X))`` is hoisted, or ``X`` itself) are dropped.

Exact: an elementwise op of row ``t`` is row ``t`` of the op of all rows.

Statistics: ``hoisted-loop-elementwise``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.graph.control_flow import LoopOp
from tilegraph.dialects.graph.data_movement import GatherOp
from tilegraph.dialects.graph.elementwise import UnaryElementwiseOp
from tilegraph.dialects.graph.loop_scalars import LoopScalars
from tilegraph.passes.hoist_loop_projection import counter_row, recaptured
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import start_pass


def _of_all_rows(op: UnaryElementwiseOp, data: SSAValue, loop: LoopOp) -> SSAValue:
    """``op`` (with its attributes) applied to the outer ``data``, before ``loop``: the
    same op hoisted for another loop of the block reading the same tensor (a
    bidirectional layer's two directions share the mask; moved ahead of ``loop`` when it
    follows), else a new one; its result."""
    cls = type(op)
    properties, attributes = dict(op.properties), dict(op.attributes)
    block = loop.parent_block()
    for use in data.uses:
        found = use.operation
        same = type(found) is cls and found.properties == properties
        if same and found.attributes == attributes and found.parent_block() is block:
            if not found.is_before_in_block(loop):  # hoisted for a later loop: now ahead
                found.detach()
                Rewriter.insert_op(found, InsertPoint.before(loop))
            return found.results[0]
    (result_type,) = cls.infer_shapes([data], properties)
    outer = cls.create(
        operands=[data], result_types=[result_type], properties=properties, attributes=attributes
    )
    outer.location = op.location
    hint = op.results[0].name_hint
    outer.results[0].name_hint = f"{hint}_rows" if hint else None
    Rewriter.insert_op(outer, InsertPoint.before(loop))
    return outer.results[0]


def _row_op(scalars: LoopScalars) -> tuple[UnaryElementwiseOp, GatherOp] | None:
    """The first body op of the module docstring's form and the Gather it reads."""
    for op in scalars.block.ops:
        if isinstance(op, UnaryElementwiseOp):
            gather = counter_row(scalars, op.operands[0])
            if gather is not None:
                return op, gather
    return None


def hoist_elementwise(loop: LoopOp) -> int:
    """Hoist every elementwise op of a counter row of ``loop``'s body (module docstring);
    how many."""
    count = 0
    while (found := _row_op(scalars := LoopScalars(loop))) is not None:
        op, gather = found
        data = scalars.outer_of(gather.operands[0])
        assert data is not None
        rows = _of_all_rows(op, data, loop)
        loop, (arg,) = recaptured(loop, [rows])  # the body moves to it
        arg.name_hint = rows.name_hint
        row = GatherOp.make(arg, gather.operands[1], axis=0)
        row.location = op.location
        row.results[0].name_hint = op.results[0].name_hint
        Rewriter.replace_op(op, row)
        if not gather.results[0].uses:
            Rewriter.erase_op(gather)
        count += 1
    if count:
        recaptured(loop, drop_unread=True)
    return count


def _loops(module: Operation) -> list[LoopOp]:
    return [o for o in module.walk() if isinstance(o, LoopOp)]


@register_pass
@dataclass(frozen=True)
class HoistLoopElementwisePass(ModulePass):
    """A loop body's unary elementwise op of row ``t`` of a loop-invariant tensor (``t``
    the loop's counter) becomes a Gather of row ``t`` of the op applied to the whole
    tensor once before the loop (see the module docstring)."""

    name = "hoist-loop-elementwise"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        # inner loops first: an outer loop's rebuild moves their body, not a copy of it
        for loop in reversed(_loops(op)):
            hoisted = hoist_elementwise(loop)
            if hoisted:
                stats.add("hoisted-loop-elementwise", hoisted)
