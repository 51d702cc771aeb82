"""``insert-trans-data``: materialise the storage plan — retype results to the storage their
kernels produce, and put a ``layout.trans_data`` wherever a value's storage differs from what
its consumer takes.

Ops are visited in program order. A graph op with a kernel choice (``layout.kernel``, from
``select-storage-format``) produces its results in the storage its kernel writes, and
takes each format-carrying operand in the storage type its kernel requires
(:meth:`LayoutPlanner.operand_type`, including the rank expansion of low-rank operands such
as a conv bias: ``reshape_type = "C"``). ``func.return`` takes the function's result types,
so users get back the layout they gave. Ops without a kernel choice take what they get.

Conversions of one value to one type are created once and shared by all its consumers. A
needed conversion that does not exist (NC1HWC0 -> ND, say) goes through the origin view: two
trans_data ops, never a forbidden one.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import UNKNOWN_LOC, ModuleOp, StringAttr
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.graph.control_flow import walk_outside_bodies
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import conversion_exists
from tilegraph.passes.layout_plan import (
    LayoutPlanner,
    origin_view,
    read_choice,
    retype_results,
)
from tilegraph.passes.registry import register_pass
from tilegraph.target import target_of


def convert_value(
    value: SSAValue,
    target: TensorType,
    cache: dict[tuple[SSAValue, TensorType], SSAValue],
    consumer: Operation | None = None,
) -> SSAValue:
    """``value`` converted to ``target`` right after its definition (shared via ``cache``).

    The conversion's location is its producer's; a function argument's conversion takes
    that of ``consumer`` (the first op that needs it), an ONNX input being no node."""
    key = (value, target)
    if key in cache:
        return cache[key]
    source = value.type
    assert isinstance(source, TensorType)
    if source.storage_format != target.storage_format and not conversion_exists(
        source.storage_format, target.storage_format
    ):
        value = convert_value(value, origin_view(source), cache, consumer)
        source = origin_view(source)
    if source == target:
        cache[key] = value
        return value
    op = TransDataOp(value, target)
    owner = value.owner
    source_op = owner if isinstance(owner, Operation) else consumer
    op.location = source_op.location if source_op is not None else UNKNOWN_LOC
    if isinstance(owner, Operation):
        Rewriter.insert_op(op, InsertPoint.after(owner))
    else:  # a block argument: after the conversions of earlier arguments, in argument order
        last = None
        for existing in owner.ops:
            if not (
                isinstance(existing, TransDataOp) and isinstance(existing.input, BlockArgument)
            ):
                break
            last = existing
        Rewriter.insert_op(
            op, InsertPoint.after(last) if last is not None else InsertPoint.at_start(owner)
        )
    if value.name_hint:
        op.results[0].name_hint = value.name_hint
    cache[key] = op.results[0]
    return op.results[0]


def required_types(op: Operation, planner: LayoutPlanner) -> list[TensorType | None] | None:
    """What each operand (flat order) must be, or None when the op takes what it gets."""
    if isinstance(op, func.ReturnOp):
        fn = op.parent_op()
        assert isinstance(fn, func.FuncOp)
        return [t if isinstance(t, TensorType) else None for t in fn.function_type.outputs.data]
    if not isinstance(op, GraphOp):
        return None
    choice = read_choice(op)
    if choice is None:
        return None
    by_slot = planner.operand_types(op, choice)
    return [t for t, v in zip(by_slot, op.operand_slots(), strict=True) if v is not None]


@register_pass
@dataclass(frozen=True)
class InsertTransDataPass(ModulePass):
    """Insert layout.trans_data where producer storage != consumer storage.

    Control-flow bodies (``graph.if`` / ``loop`` / ``scan`` / ``sequence_map``) are skipped:
    they run as host code, unoptimised; ops with sequence or optional values stay ND.
    """

    name = "insert-trans-data"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in [o for o in op.walk() if isinstance(o, func.FuncOp)]:
            platform = fn.attributes.get("layout.platform")
            planner = LayoutPlanner(
                platform.data if isinstance(platform, StringAttr) else target_of(op).platform
            )
            cache: dict[tuple[SSAValue, TensorType], SSAValue] = {}
            for consumer in list(walk_outside_bodies(fn.body)):
                if isinstance(consumer, TransDataOp):
                    continue
                wanted = required_types(consumer, planner)
                if wanted is None:
                    continue
                for index, (operand, target) in enumerate(
                    zip(list(consumer.operands), wanted, strict=True)
                ):
                    if target is None or operand.type == target:
                        continue
                    consumer.operands[index] = convert_value(operand, target, cache, consumer)
                choice = read_choice(consumer)
                if isinstance(consumer, GraphOp) and choice is not None:
                    retype_results(planner, consumer, choice)
