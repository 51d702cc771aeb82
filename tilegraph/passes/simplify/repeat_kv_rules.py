"""Grouped keys repeated for the query heads after their rotary, not before.

Falcon (multi-query / grouped attention) repeats each key / value head for the query
heads of its group before the rotary embedding: ``Expand(k [B, S, kv, 1, D] -> [B, S, kv,
n, D])``, ``Reshape -> [B, S, kv·n, D]``, ``Transpose(0, 2, 1, 3)``, then ``apply_rotary``
on every repeated head. The repeat is a copy kernel, its views a second one, and the
rotary computes each key ``n`` times. LLaMA's ``repeat_kv`` comes after the rotary, where
the attention's matmul reads the repeat as a grouped view of its operand
(``lowering/analysis/operand_views.py``: ``StridedView.groups``) and no kernel copies it.

``rotary-before-repeat`` moves Falcon's repeat there: the rotary of ``k`` viewed ``[B, kv,
S, D]``, then ``Reshape -> [B, kv, 1, S, D]``, ``Expand -> [B, kv, n, S, D]``, ``Reshape ->
[B, kv·n, S, D]``. Exact: every repeated head is the same rotation of the same key row
(the tables do not vary along the heads).
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.data_movement import ExpandOp
from tilegraph.dialects.graph.rotary import ApplyRotaryOp
from tilegraph.dialects.graph.shape_ops import ReshapeOp, TransposeOp
from tilegraph.passes.simplify.match import (
    in_origin_view,
    ints_constant,
    made_by,
    replace_if_typed,
    reshaped,
    static_shape,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule


@simplify_rule
class RotaryBeforeRepeat(SimplifyRule):
    INFO = RuleInfo(
        None,
        "rotary-before-repeat",
        "apply_rotary(Transpose(Reshape(Expand(k [B, S, kv, 1, D] -> [B, S, kv, n, D]) -> "
        "[B, S, kv·n, D]), [0, 2, 1, 3]), cos, sin)",
        "Reshape(Expand(Reshape(apply_rotary(Transpose(k as [B, S, kv, D], [0, 2, 1, 3]), "
        "cos, sin), [B, kv, 1, S, D]), [B, kv, n, S, D]), [B, kv·n, S, D])",
        "the expand, reshape and transpose have no other readers; the tables do not vary "
        "along the heads (their dim -3 is 1 or absent); static shapes; exact",
        "HF (LLaMA's repeat_kv after the rotary)",
    )
    ROOTS = (ApplyRotaryOp,)

    def rewrite(self, op: ApplyRotaryOp, rewriter: PatternRewriter) -> None:
        transpose = made_by(op.x, TransposeOp)
        merge = None if transpose is None else made_by(transpose.data, ReshapeOp)
        repeat = None if merge is None else made_by(merge.data, ExpandOp)
        if transpose is None or merge is None or repeat is None or not in_origin_view(op):
            return
        if list(transpose.attr("perm") or ()) != [0, 2, 1, 3]:
            return
        k, repeated, heads = (
            static_shape(v) for v in (repeat.input, repeat.output, merge.reshaped)
        )
        tables = [static_shape(t) for t in (op.cos, op.sin)]
        if k is None or repeated is None or heads is None or None in tables:
            return
        if len(k) != 5 or k[3] != 1 or repeated != [*k[:3], repeated[3], k[4]]:
            return  # only the axis after the kv heads repeats
        b, s, kv, _, d = k
        n = repeated[3]
        if heads != [b, s, kv * n, d] or any(len(t) >= 3 and t[-3] != 1 for t in tables if t):
            return
        ops: list[Operation] = []
        rows = reshaped(repeat.input, [b, s, kv, d], ops)
        ops.append(TransposeOp.make(rows, perm=[0, 2, 1, 3]))
        attrs = {name: op.attr(name) for name in op.properties}
        ops.append(ApplyRotaryOp.make(ops[-1], op.cos, op.sin, **attrs))
        grouped = reshaped(ops[-1].results[0], [b, kv, 1, s, d], ops)
        target = ints_constant([b, kv, n, s, d])
        ops += [target, ExpandOp.make(grouped, target.output)]
        reshaped(ops[-1].results[0], [b, kv * n, s, d], ops)
        replace_if_typed(rewriter, op, ops)
