"""A ScatterElements whose index is one per row, as the row scatter it is.

``scatter-elements-as-scatter-nd``: torchvision's RoI merge (``MultiScaleRoIAlign`` as
exported to ONNX) writes each pyramid level's pooled boxes into the result by
``res.scatter(0, idx.view(-1, 1, 1, 1).expand(n, C, H, W), pooled)``: a ScatterElements
along axis 0 whose index is an Expand of one index per row. Every element of row ``r``
then goes to row ``idx[r]`` of the data, at its own column: ScatterND by the index tuples
``Reshape(idx, [n, 1])`` moves the same elements to the same places, in the same order
(later rows win; a reduction combines rows in order, as ScatterElements combines them in
row-major order). Where ScatterElements reads an index per element (the scalar unit moves
each of the ``n · C · H · W`` elements, and a row of 12544 elements with its indices does
not fit UB), ScatterND copies each row by one DMA.

Legal when the Expand's input has size 1 in every dim but the first, that first dim equals
the updates' (so the Expand only repeats an index along its row), and the updates span the
data's dims after the first (ScatterND replaces whole slices). Exact.
"""

from __future__ import annotations

from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.data_movement import ExpandOp
from tilegraph.dialects.graph.indexing import ScatterElementsOp, ScatterNDOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.simplify.match import dims_known, made_by, make_typed, replace_if_typed
from tilegraph.passes.simplify.match import reshaped as reshaped_value
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule


@simplify_rule
class ScatterElementsAsScatterND(SimplifyRule):
    INFO = RuleInfo(
        None,
        "scatter-elements-as-scatter-nd",
        "ScatterElements(x, Expand(i), u, axis 0), i of shape [n, 1, …, 1]",
        "ScatterND(x, Reshape(i, [n, 1]), u)",
        "n equal to u's first dim; u spans x's other dims; the same reduction",
        "",
    )
    ROOTS = (ScatterElementsOp,)

    def rewrite(self, op: ScatterElementsOp, rewriter: PatternRewriter) -> None:
        data, updates = op.data.type, op.updates.type
        expand = made_by(op.indices, ExpandOp)
        if expand is None or not isinstance(data, TensorType):
            return
        rows = expand.operands[0]
        index = rows.type
        if not isinstance(updates, TensorType) or not isinstance(index, TensorType):
            return
        rank = len(data.origin_shape)
        if int(op.attr("axis")) % rank != 0 or len(index.origin_shape) != rank:
            return
        if not (dims_known(data) and dims_known(updates) and dims_known(index)):
            return
        n, *ones = index.origin_shape
        if any(d != 1 for d in ones) or n != updates.origin_shape[0]:
            return
        if tuple(updates.origin_shape[1:]) != tuple(data.origin_shape[1:]):
            return
        ops = []
        tuples = reshaped_value(rows, [-1, 1], ops)
        scatter = make_typed(
            ScatterNDOp,
            op.data,
            tuples,
            op.updates,
            like=op.results[0].type,
            reduction=str(op.attr("reduction")),
        )
        if scatter is None:
            return
        replace_if_typed(rewriter, op, [*ops, scatter])
