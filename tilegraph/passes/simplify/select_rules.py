"""Selects of a packed tensor: constant-index gathers that together take it apart.

torch's dynamo exporter writes nn.MultiheadAttention's packed in_proj as one matmul of
``[E, 3E]``, a reshape to ``[3, S, B, E]`` and three ``Gather(x, i, axis=0)`` of the
constant scalars ``i = 0, 1, 2`` (``select``). Each is a copy kernel as a gather; as the
parts of one Split (each part then squeezed) they are offset views of the projection that
the matmuls reading q, k and v address in place (``lowering/analysis/operand_views.py``),
as GPT-2's c_attn split already is.
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from tilegraph.dialects.graph.data_movement import GatherOp, SplitOp
from tilegraph.dialects.graph.operand_values import static_dim
from tilegraph.dialects.graph.shape_ops import SqueezeOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.simplify.match import constant_array, in_origin_view, ints_constant
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule


def _selected(op: Operation, axis: int) -> int | None:
    """The index ``op`` selects when it is a gather of one constant scalar on ``axis``."""
    if not isinstance(op, GatherOp) or int(op.attr("axis") or 0) % op.data.type.rank != axis:  # type: ignore[union-attr]
        return None
    index = constant_array(op.indices)
    if index is None or index.shape != ():
        return None
    return int(index)


@simplify_rule
class SelectsAsSplit(SimplifyRule):
    INFO = RuleInfo(
        None,
        "selects-as-split",
        "Gather(x, i, axis) for every i in 0..n-1 (constant scalars; n = x.shape[axis])",
        "Split(x, [1]*n, axis) + Squeeze(axis) of each part",
        "only when these gathers are x's only users and each index occurs once (after "
        "wrapping negatives); x's axis must be static",
        "PT Inductor (select as a view)",
    )
    ROOTS = (GatherOp,)

    def rewrite(self, op: GatherOp, rewriter: PatternRewriter) -> None:
        x = op.data
        t = x.type
        if not isinstance(t, TensorType) or t.rank == 0 or not in_origin_view(op):
            return
        axis = int(op.attr("axis") or 0) % t.rank  # type: ignore[arg-type]
        n = static_dim(t.origin_shape[axis])
        users = list(dict.fromkeys(use.operation for use in x.uses))
        if n is None or n < 2 or len(users) != n:
            return
        by_index: dict[int, Operation] = {}
        for user in users:
            index = _selected(user, axis)
            if index is None or not -n <= index < n or index % n in by_index:
                return
            by_index[index % n] = user
        first = min(users, key=lambda u: u.parent_block().get_operation_index(u))  # type: ignore[union-attr]
        if op is not first:
            return  # rewrite once, at the first select (the parts' users follow it)
        sizes = ints_constant([1] * n)
        split = SplitOp.make(x, sizes.output, axis=axis)
        new_ops: list[Operation] = [sizes, split]
        for i, part in enumerate(split.results):
            axes = ints_constant([axis])
            squeeze = SqueezeOp.make(part, axes.output)
            new_ops += [axes, squeeze]
            old = by_index[i]
            if squeeze.results[0].type != old.results[0].type:
                return
        for new in new_ops:
            rewriter.insert(new, InsertPoint.before(op))
        for i in range(n):
            old = by_index[i]
            squeeze = new_ops[3 + 2 * i]
            squeeze.results[0].name_hint = old.results[0].name_hint
            rewriter.replace(old, [], [squeeze.results[0]])
