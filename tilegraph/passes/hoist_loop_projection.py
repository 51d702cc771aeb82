"""``hoist-loop-projection``: a loop body's product of row ``t`` of a loop-invariant tensor
by a loop-invariant matrix, computed for every row once before the loop::

    graph.loop ... captures[%X, ...] {                 %P = graph.matmul %X, %W   // [T, B, H]
      %x_t = graph.gather %X_arg, %t    // [B, I]      graph.loop ... captures[..., %P] {
      %p = graph.matmul %x_t, %W_arg    // [B, H]  ->    %p = graph.gather %P_arg, %t
      ...                                                ...

What GE's DynamicRNN and ``hoist-recurrent-projection`` do for a recurrent layer's input
projection, for the form tf2onnx exports a Keras LSTM / GRU in (a while loop reading
``TensorListGetItem(x, time)`` and multiplying it by the kernel): one large cube kernel
before the loop instead of a small one per step.

When: ``%t`` is the loop's counter (the iteration number, or a carried value the body
yields as ``t + 1``: tf2onnx's ``time``), so every row is read once and the hoisted product
does the loop's own work; the Gather is along axis 0 with a 0-d index; ``%X`` (rank >= 2)
and ``%W`` (a matrix) are the same in every iteration — a capture, a carried value the body
yields unchanged, or (``%W``) a constant of the body. A Gather of data the body computes
(a value of the iteration) is left alone.

Exact: row ``t`` of ``X·W`` is ``x_t·W`` — the same sums, rounded once each. The bias that
tf2onnx adds after ``x_t·W + h·R`` stays in the body (adding it to the hoisted product
first would round differently).

An ``X`` of rank 3 or more with a static shape is multiplied as one matrix of all its rows,
``Reshape(MatMul(Reshape(X, [T·B, I]), W), [T, B, H])`` (the reshapes are views): a
batched product of ``T`` slices of ``B`` rows each would pad every slice's ``B`` rows to a
cube fractal of 16 (tf2onnx's ``[T, B, I]`` with a batch of 2: 8× the cube's work).

Statistics: ``hoisted-loop-projections``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.graph import ConstantOp
from tilegraph.dialects.graph.control_flow import LoopOp
from tilegraph.dialects.graph.data_movement import GatherOp
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.loop_scalars import LoopScalars
from tilegraph.dialects.graph.shape_ops import ReshapeOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import start_pass


def _rank(value: SSAValue) -> int | None:
    t = value.type
    return t.rank if isinstance(t, TensorType) else None


def _invariant(scalars: LoopScalars, value: SSAValue, before: Operation) -> SSAValue | None:
    """The outer value ``value`` holds in every iteration (a body constant is cloned in
    front of ``before``), else None."""
    outer = scalars.outer_of(value)
    if outer is not None:
        return outer
    if isinstance(value.owner, ConstantOp):
        clone = value.owner.clone()
        Rewriter.insert_op(clone, InsertPoint.before(before))
        return clone.results[0]
    return None


def counter_row(scalars: LoopScalars, value: SSAValue) -> GatherOp | None:
    """The Gather that computes ``value`` when it is row ``t`` of a loop-invariant tensor:
    ``Gather(X, t)`` along axis 0 with a 0-d index ``t`` the loop's counter (every row read
    once over the loop) and ``X`` (rank >= 2) the same in every iteration; else None.
    Shared with ``hoist-loop-elementwise``."""
    gather = value.owner
    if not isinstance(gather, GatherOp) or int(gather.attr("axis") or 0) != 0:
        return None
    data, index = gather.operands
    if _rank(index) != 0 or not scalars.is_counter(index):
        return None
    if (_rank(data) or 0) < 2 or scalars.outer_of(data) is None:
        return None
    return gather


def _row_product(scalars: LoopScalars, op: Operation) -> tuple[GatherOp, SSAValue] | None:
    """``(gather, W)`` when ``op`` is ``MatMul(Gather(X, t), W)`` of the module docstring's
    form (before any outer value is made), else None."""
    if not isinstance(op, MatMulOp):
        return None
    a, w = op.operands
    gather = counter_row(scalars, a)
    if gather is None or _rank(w) != 2:
        return None
    if scalars.outer_of(w) is None and not isinstance(w.owner, ConstantOp):
        return None
    return gather, w


def _reshape(value: SSAValue, shape: Sequence[int]) -> list[Operation]:
    """The constant ``shape`` and the reshape of ``value`` to it (the reshape last)."""
    target = ConstantOp(np.array(shape, np.int64))
    return [target, ReshapeOp.make(value, target)]


def _all_rows_product(x: SSAValue, w: SSAValue, loop: LoopOp, body_product: Operation) -> SSAValue:
    """``MatMul(X, W)`` inserted before ``loop`` (named and located as ``body_product``,
    the product of one row it replaces): with ``X`` of rank 3 or more and a static shape,
    as one matrix of all of ``X``'s rows, reshaped back (module docstring)."""
    x_type, w_type = x.type, w.type
    assert isinstance(x_type, TensorType) and isinstance(w_type, TensorType)
    shape = [*x_type.origin_shape[:-1], w_type.origin_shape[-1]]
    flat = x_type.rank > 2 and x_type.is_static and w_type.is_static
    ops: list[Operation] = []
    if flat:
        ops += _reshape(x, [math.prod(int(d) for d in shape[:-1]), int(x_type.origin_shape[-1])])
        x = ops[-1].results[0]
    ops.append(MatMulOp.make(x, w))
    if flat:
        ops += _reshape(ops[-1].results[0], [int(d) for d in shape])
    hint = body_product.results[0].name_hint
    ops[-1].results[0].name_hint = f"{hint}_rows" if hint else None
    if flat and hint:
        ops[2].results[0].name_hint = f"{hint}_rows_flat"
    for op in ops:
        op.location = body_product.location
    Rewriter.insert_op(ops, InsertPoint.before(loop))
    return ops[-1].results[0]


def recaptured(
    loop: LoopOp, add: Sequence[SSAValue] = (), drop_unread: bool = False
) -> tuple[LoopOp, list[BlockArgument]]:
    """``loop`` rebuilt with the captures ``add`` appended (one it captures already is
    not captured again) and with ``drop_unread``, the captures its body no longer reads
    left out; its results replace the old loop's, which is erased. The new loop and the
    body arguments that stand for ``add``. Shared with ``hoist-loop-elementwise``."""
    groups = loop.split_groups(list(loop.operands))
    region = loop.detach_region(loop.body)
    block = region.block
    if drop_unread:
        inner = block.args[len(block.args) - len(groups[-1]) :]
        unread = [i for i, arg in enumerate(inner) if not arg.uses]
        for i in reversed(unread):
            block.erase_arg(inner[i])
        groups[-1] = [v for i, v in enumerate(groups[-1]) if i not in unread]
    args: list[BlockArgument] = []
    for value in add:  # a value captured already: its argument (no duplicate captures)
        if value not in groups[-1]:
            groups[-1].append(value)
            block.insert_arg(value.type, len(block.args))
        inner = block.args[len(block.args) - len(groups[-1]) :]
        args.append(inner[groups[-1].index(value)])
    new = LoopOp.build(groups, [r.type for r in loop.results], [region], None)
    assert isinstance(new, LoopOp)
    new.location = loop.location
    Rewriter.insert_op(new, InsertPoint.before(loop))
    for old, result in zip(loop.results, new.results, strict=True):
        result.name_hint = old.name_hint
    Rewriter.replace_op(loop, [], list(new.results))
    return new, args


def hoist_projections(loop: LoopOp) -> int:
    """Hoist every row product of ``loop``'s body (see the module docstring); how many."""
    count = 0
    while True:
        scalars = LoopScalars(loop)
        found = next(
            (
                (op, match)
                for op in scalars.block.ops
                if (match := _row_product(scalars, op)) is not None
            ),
            None,
        )
        if found is None:
            return count
        op, (gather, w) = found
        x = scalars.outer_of(gather.operands[0])
        w_outer = _invariant(scalars, w, loop)
        assert x is not None and w_outer is not None
        rows = _all_rows_product(x, w_outer, loop, op)
        loop, (arg,) = recaptured(loop, [rows])  # the body moves to it
        arg.name_hint = rows.name_hint
        row = GatherOp.make(arg, gather.operands[1], axis=0)
        row.location = op.location
        Rewriter.replace_op(op, row)
        if not gather.results[0].uses:
            Rewriter.erase_op(gather)
        count += 1


@register_pass
@dataclass(frozen=True)
class HoistLoopProjectionPass(ModulePass):
    """A loop body's ``MatMul(Gather(X, t), W)`` of loop-invariant ``X`` and ``W`` and the
    loop's counter ``t`` becomes a Gather of row ``t`` of ``MatMul(X, W)`` computed once
    before the loop (see the module docstring)."""

    name = "hoist-loop-projection"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        # inner loops first: an outer loop's rebuild moves their body, not a copy of it
        for loop in reversed([o for o in op.walk() if isinstance(o, LoopOp)]):
            hoisted = hoist_projections(loop)
            if hoisted:
                stats.add("hoisted-loop-projections", hoisted)
