"""fuse-dynamic-quantize: DynamicQuantizeLinear's two halves as one group, one kernel.

``expand-qoperator`` writes DynamicQuantizeLinear as ``graph.dynamic_quantize_params``
(the scale and zero point of the whole tensor) and a ``graph.quantize_linear`` of the same
input with them (``fold-integer-ops`` may move it onto the int8 grid with the int8 zero
point). Run as two kernels, every dynamically quantised convolution or matmul pays a second
launch and reads its input from GM twice. This pass wraps each such pair — both at the
function's top level (not claimed by ``fuse-ops``), the QuantizeLinear reading the
parameters op's input, its scale, and its uint8 or int8 zero point — into one
``graph.fused`` group at the parameters op's place (every value the pair reads is defined
before it; every user of either comes after it). Its results are the quantised tensor and
the parameters read outside the pair. The group's one kernel
(:mod:`tilegraph.lowering.conversion.tiling.dynamic_quantize`) shares the tensor over the
cores with an all-core barrier between the reduction and the quantisation; a group no
strategy runs is split back into the two kernels by ``lower-graph-to-kernels``.

Statistics: ``groups``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.graph import FusedOp, FusionKind, YieldOp
from tilegraph.dialects.graph.fused import new_body
from tilegraph.dialects.graph.provenance import locate, location_of
from tilegraph.dialects.graph.quantize import DynamicQuantizeParamsOp, QuantizeLinearOp
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import start_pass


def _partner(params: DynamicQuantizeParamsOp) -> QuantizeLinearOp | None:
    """The QuantizeLinear of ``params``' input with its scale and one of its zero points,
    at the same level (None: there is none)."""
    zero_points = (params.y_zero_point, params.y_zero_point_int8)
    for use in params.y_scale.uses:
        op = use.operation
        if (
            isinstance(op, QuantizeLinearOp)
            and op.parent_block() is params.parent_block()
            and op.x is params.x
            and op.y_scale is params.y_scale
            and op.y_zero_point in zero_points
        ):
            return op
    return None


def group_pair(params: DynamicQuantizeParamsOp, quantize: QuantizeLinearOp, name: str) -> FusedOp:
    """Replace the pair by one ``graph.fused`` group named ``name`` at ``params``' place."""
    pair = (params, quantize)
    outputs: list[SSAValue] = [quantize.y]
    outputs += [r for r in params.results if any(u.operation is not quantize for u in r.uses)]
    body, block = new_body([params.x.type])
    block.args[0].name_hint = params.x.name_hint
    mapping: dict[SSAValue, SSAValue] = {params.x: block.args[0]}
    for op in pair:
        block.add_op(op.clone(value_mapper=mapping))
    block.add_op(YieldOp(*(mapping[v] for v in outputs)))
    fused = FusedOp(name, FusionKind.COMM_REDUCE, [params.x], [v.type for v in outputs], body)
    locate([fused], location_of(list(pair)))
    Rewriter.insert_op(fused, InsertPoint.before(params))
    for old, new in zip(outputs, fused.outputs, strict=True):
        new.name_hint = old.name_hint
        old.replace_all_uses_with(new)
    for op in reversed(pair):
        Rewriter.erase_op(op)
    return fused


def _group_block(block: Block) -> int:
    grouped = 0
    for op in list(block.ops):
        if not isinstance(op, DynamicQuantizeParamsOp):
            continue
        quantize = _partner(op)
        if quantize is not None:
            group_pair(op, quantize, f"dynamic_quantize_{grouped}")
            grouped += 1
    return grouped


@register_pass
@dataclass(frozen=True)
class FuseDynamicQuantizePass(ModulePass):
    """Group each dynamic quantisation's parameters op with its QuantizeLinear (one
    kernel: see the module docstring)."""

    name = "fuse-dynamic-quantize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        for fn in op.ops:
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                grouped = _group_block(fn.body.blocks[0])
                if grouped:
                    stats.add("groups", grouped)
