"""A small If on a computed condition -> both branches and a Where (XLA's
conditional-to-select).

An If whose condition is known when compiling is inlined by the importer; one whose
condition is computed (openWakeWord's ``hey_jarvis``: a second classifier runs only when
the first one's score passes a threshold) keeps its branches in regions, which run on the
host with the reference kernels: no kernel, no fusion, no layout. When both branches are
small, cannot fail on any data and give results of one type, computing both and selecting
with ``Where(cond, then, else)`` is the same function, with every op on the AI core; the
price is the untaken branch's work, which the cost model then counts. XLA's
``ConditionalToSelect`` makes the same trade.

Branches qualify when each has at most :data:`MAX_BRANCH_OPS` ops, every one a pure graph
op with static result types (a data-dependent shape could be invalid), and none that reads
indices or lengths from data (a gather of the untaken branch could index out of bounds).
"""

from __future__ import annotations

from xdsl.ir import Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.traits import Pure

from tilegraph.dialects.graph.base import GraphOp
from tilegraph.dialects.graph.control_flow import IfOp, RegionOp
from tilegraph.dialects.graph.fused import YieldOp
from tilegraph.dialects.graph.logical import WhereOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.simplify.match import drop_ops, make_typed
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule

MAX_BRANCH_OPS = 64
"""Branches larger than this stay an If: their untaken work would outweigh the host's."""

INDEXING_OPS = frozenset(
    {
        "graph.gather",
        "graph.gather_elements",
        "graph.gather_nd",
        "graph.scatter_elements",
        "graph.scatter_nd",
        "graph.reverse_sequence",
        "graph.lstm",
        "graph.gru",
        "graph.rnn",
    }
)
"""Ops whose reference checks indices or lengths read from data: an error in the untaken
branch."""


def speculable(block: Block) -> bool:
    """Whether every op of a branch can run whatever the data (see the module docstring)."""
    ops = [op for op in block.ops if not isinstance(op, YieldOp)]
    if len(ops) > MAX_BRANCH_OPS:
        return False
    for op in ops:
        if not isinstance(op, GraphOp) or isinstance(op, RegionOp) or not op.has_trait(Pure):
            return False
        if op.name in INDEXING_OPS:
            return False
        if not all(isinstance(r.type, TensorType) and r.type.is_static for r in op.results):
            return False
    return True


def inlined(block: Block, captured: list[SSAValue], ops: list[Operation]) -> list[SSAValue]:
    """Clones of a branch's ops over the captured values (appended to ``ops``); the values
    it yields."""
    values: dict[SSAValue, SSAValue] = dict(zip(block.args, captured, strict=True))
    for op in block.ops:
        if isinstance(op, YieldOp):
            return [values.get(v, v) for v in op.values]
        clone = op.clone(value_mapper=values)
        ops.append(clone)
    raise AssertionError("a branch ends with graph.yield")  # the op's verifier checks it


@simplify_rule
class IfAsWhere(SimplifyRule):
    INFO = RuleInfo(
        None,
        "if-as-where",
        "If(c) of small branches that cannot fail, results of one type",
        "both branches inline, Where(c, then, else) per result",
        f"at most {MAX_BRANCH_OPS} pure ops a branch, no gather / scatter; the untaken "
        "branch's work is done",
        "XLA (ConditionalToSelect)",
    )
    ROOTS = (IfOp,)

    def rewrite(self, op: IfOp, rewriter: PatternRewriter) -> None:
        then_block, else_block = op.then_region.block, op.else_region.block
        if not (speculable(then_block) and speculable(else_block)):
            return
        captured = list(op.captured_values)
        ops: list[Operation] = []
        then_values = inlined(then_block, captured, ops)
        else_values = inlined(else_block, captured, ops)
        results: list[SSAValue] = []
        for result, a, b in zip(op.results, then_values, else_values, strict=True):
            where = make_typed(WhereOp, op.cond, a, b, like=result.type)
            if where is None:
                drop_ops(ops)
                return
            where.results[0].name_hint = result.name_hint
            ops.append(where)
            results.append(where.results[0])
        rewriter.replace(op, ops, results)
