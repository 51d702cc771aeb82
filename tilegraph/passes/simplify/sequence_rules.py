"""A sequence that is only split and read back at constant positions -> tensor ops.

``sequence-at-of-split``: ``SequenceAt(SplitToSequence(x, axis, keepdims), p)`` with no
split sizes (single slices of ``axis``) and ``p`` a constant scalar is the slice ``p`` of
``x`` along ``axis``: ``Gather(x, p, axis)`` (keepdims 0: the axis dropped) or
``Gather(x, [p], axis)`` (keepdims 1: kept as 1). A negative ``p`` counts from the end in
both, and a position out of range is refused by both. The dynamo exporter writes
``torch.unbind`` followed by indexing so (Pixtral's vision encoder unbinds its patch
embeddings per image): the sequence type then no longer reaches the tile level, which
has no sequence buffers and would run the whole model on the reference interpreter.
Exact: the same elements, copied.
"""

from __future__ import annotations

import numpy as np
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.data_movement import GatherOp
from tilegraph.dialects.graph.sequence import SequenceAtOp, SplitToSequenceOp
from tilegraph.passes.simplify.match import constant_array, new_constant, replace_if_typed
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule


@simplify_rule
class SequenceAtOfSplit(SimplifyRule):
    INFO = RuleInfo(
        None,
        "sequence-at-of-split",
        "SequenceAt(SplitToSequence(x, axis, keepdims), p), p a constant scalar",
        "Gather(x, p, axis) (keepdims 0), Gather(x, [p], axis) (keepdims 1)",
        "no split sizes (single slices); negative p from the end and out-of-range p refused alike",
    )
    ROOTS = (SequenceAtOp,)

    def rewrite(self, op: SequenceAtOp, rewriter: PatternRewriter) -> None:
        split = op.input_sequence.owner
        if not isinstance(split, SplitToSequenceOp) or split.split is not None:
            return
        position = constant_array(op.position)
        if position is None or position.ndim != 0:
            return
        index = position.astype(np.int64)
        if split.attr("keepdims"):
            index = index.reshape(1)
        indices = new_constant(index)
        gather = GatherOp.make(split.input, indices, axis=split.attr("axis"))
        replace_if_typed(rewriter, op, [indices, gather])
