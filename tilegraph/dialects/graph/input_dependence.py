"""Which graph inputs a value depends on, and how: through their shapes or their values.

A control-flow op whose results cannot be typed without knowing its condition (an If whose
branches return different ranks) or whose types stay unknown (an If whose branches return
different sizes, a Loop whose trip count is an input) can be compiled once the inputs it
depends on are bound: their shapes (a condition computed by ``Shape`` / ``Size``) or their
values (a scalar input such as Silero VAD's sample rate ``sr``). :func:`input_dependence`
walks a value's producers back to the function's arguments and sorts them into the two.

Arguments of control-flow bodies are followed to the captured outer value they stand for
(the trailing block arguments of a :class:`~tilegraph.dialects.graph.control_flow.RegionOp`
body); the body's own formal arguments (a Loop's iteration number, carried values) depend
on the op's other operands, which are followed too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.ir import Block, BlockArgument, Operation, SSAValue

SHAPE_READERS = ("graph.shape", "graph.size")
"""Ops whose result depends on their operand's shape only."""

ArgResolver = Callable[[BlockArgument], "SSAValue | str | None"]
"""What a block argument stands for: an outer value, the name of a graph input, or None
(nothing known: a dependence on no input)."""


@dataclass
class InputDependence:
    """The graph inputs a value is computed from, by their shapes and by their values."""

    shapes: list[str] = field(default_factory=list)
    values: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.shapes or self.values)


def input_dependence(
    value: SSAValue, resolve: ArgResolver | None = None, *, of_shape: bool = False
) -> InputDependence:
    """The inputs ``value`` depends on (``of_shape``: the inputs its shape depends on, all
    counted as shapes). ``resolve`` says what a block argument stands for; by default
    :func:`ir_arg_resolver` (a function argument is the input named by the function's
    ``onnx.input_names``, a body argument the value its op captured)."""
    resolve = resolve or ir_arg_resolver
    found = InputDependence()
    seen: set[tuple[int, bool]] = set()
    stack: list[tuple[SSAValue, bool]] = [(value, of_shape)]
    while stack:
        current, by_shape = stack.pop()
        key = (id(current), by_shape)
        if key in seen:
            continue
        seen.add(key)
        if isinstance(current, BlockArgument):
            source = resolve(current)
            if isinstance(source, str):
                bucket = found.shapes if by_shape else found.values
                if source not in bucket:
                    bucket.append(source)
            elif source is not None:
                stack.append((source, by_shape))
            continue
        op = current.owner
        assert isinstance(op, Operation)
        shape_only = by_shape or op.name in SHAPE_READERS
        stack.extend((operand, shape_only) for operand in op.operands)
    return found


def ir_arg_resolver(arg: BlockArgument) -> SSAValue | str | None:
    """A block argument of built IR: the graph input of a function argument (its
    ``onnx.input_names`` entry), the captured value of a control-flow body's trailing
    argument, else the first operand of the op that owns the body (a Loop's trip count or
    a Scan's inputs drive its formal arguments)."""
    block = arg.block
    assert isinstance(block, Block)
    owner = block.parent_op()
    if owner is None:
        return None
    if owner.name == "func.func":
        names = owner.attributes.get("onnx.input_names")
        entries = getattr(names, "data", None)
        if entries is None or arg.index >= len(entries):
            return None
        return entries[arg.index].data
    captured = getattr(owner, "captured_values", None)
    if captured is not None:
        first_capture = len(block.args) - len(captured)
        if arg.index >= first_capture:
            return captured[arg.index - first_capture]
    return owner.operands[0] if owner.operands else None
