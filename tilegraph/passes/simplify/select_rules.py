"""Selects of a packed tensor: constant-index gathers that together take it apart.

torch's dynamo exporter writes nn.MultiheadAttention's packed in_proj as one matmul of
``[E, 3E]``, a reshape to ``[3, S, B, E]`` and three ``Gather(x, i, axis=0)`` of the
constant scalars ``i = 0, 1, 2`` (``select``). Each is a copy kernel as a gather; as the
parts of one Split (each part then squeezed) they are offset views of the projection that
the matmuls reading q, k and v address in place (``lowering/analysis/operand_views.py``),
as GPT-2's c_attn split already is.

Phi-3, Falcon and GPT-NeoX-style exports slice their fused projections instead
(``qkv[..., :q]``, ``qkv[..., q:q + kv]``, ``qkv[..., q + kv:]``): slices that together
partition one axis are one Split too, whose parts the next ops fuse with or read in place.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from tilegraph.dialects.graph.data_movement import ConcatOp, GatherOp, SliceOp, SplitOp
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


def _readers(x: SSAValue) -> list[Operation]:
    """The ops reading ``x``, each once, in block order (a rule taking them all apart
    rewrites once, at the first)."""
    users = dict.fromkeys(use.operation for use in x.uses)
    return sorted(users, key=lambda u: u.parent_block().get_operation_index(u))  # type: ignore[union-attr]


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
        users = _readers(x)
        if n is None or n < 2 or len(users) != n:
            return
        by_index: dict[int, Operation] = {}
        for user in users:
            index = _selected(user, axis)
            if index is None or not -n <= index < n or index % n in by_index:
                return
            by_index[index % n] = user
        if op is not users[0]:
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
                for new in new_ops:  # not inserted: they must not stay users of x
                    new.drop_all_references()
                return
        for new in new_ops:
            rewriter.insert(new, InsertPoint.before(op))
        for i in range(n):
            old = by_index[i]
            squeeze = new_ops[3 + 2 * i]
            squeeze.results[0].name_hint = old.results[0].name_hint
            rewriter.replace(old, [], [squeeze.results[0]])


def sliced_range(op: Operation, rank: int, sizes: tuple) -> tuple[int, int, int] | None:
    """(axis, start, end) when ``op`` is a unit-step Slice of one static axis with constant
    bounds (ONNX's clamping applied), else None."""
    if not isinstance(op, SliceOp):
        return None
    starts, ends = constant_array(op.starts), constant_array(op.ends)
    axes = np.arange(rank) if op.axes is None else constant_array(op.axes)
    steps = np.ones(1, np.int64) if op.steps is None else constant_array(op.steps)
    if starts is None or ends is None or axes is None or steps is None:
        return None
    if not starts.size == ends.size == axes.size == 1 or steps.reshape(-1).tolist() != [1]:
        return None
    axis = int(axes.reshape(-1)[0]) % rank
    n = static_dim(sizes[axis])
    if n is None:
        return None
    start, end = (int(v.reshape(-1)[0]) for v in (starts, ends))
    start, end = (min(max(v + n if v < 0 else v, 0), n) for v in (start, end))
    return axis, start, end


def _partition(
    x: SSAValue, users: list[Operation]
) -> tuple[int, list[int], list[Operation]] | None:
    """(axis, the widths, the slices in order) when ``users`` are slices of one axis of
    ``x`` whose ranges are disjoint and cover it whole."""
    t = x.type
    assert isinstance(t, TensorType)
    ranges = [sliced_range(u, t.rank, tuple(t.origin_shape)) for u in users]
    if any(r is None for r in ranges) or len({r[0] for r in ranges if r}) != 1:
        return None
    ordered = sorted(zip(ranges, users, strict=True), key=lambda p: p[0][1] if p[0] else 0)
    position, widths = 0, []
    for r, _ in ordered:
        assert r is not None
        if r[1] != position or r[2] <= r[1]:
            return None
        position, widths = r[2], [*widths, r[2] - r[1]]
    axis = ordered[0][0][0]  # type: ignore[index]
    if position != static_dim(t.origin_shape[axis]):
        return None
    return axis, widths, [u for _, u in ordered]


def _rejoined(op: Operation) -> bool:
    """A slice read by a Concat: a part put back (a partial rotary's pass-through), which
    ``recompose-rotary-partial`` takes with its slices."""
    return any(isinstance(use.operation, ConcatOp) for use in op.results[0].uses)


@simplify_rule
class SlicesAsSplit(SimplifyRule):
    INFO = RuleInfo(
        None,
        "slices-as-split",
        "Slice(x, s_i, e_i, axis) for ranges that partition x.shape[axis] (constant bounds, "
        "step 1)",
        "Split(x, [e_i - s_i], axis)",
        "only when these slices are x's only users, their ranges disjoint and covering the "
        "axis, none read by a Concat (a part put back: a partial rotary); x's axis static; "
        "exact",
        "PT Inductor (slice as a view) GE (SplitD)",
    )
    ROOTS = (SliceOp,)

    def rewrite(self, op: SliceOp, rewriter: PatternRewriter) -> None:
        x = op.data
        t = x.type
        if not isinstance(t, TensorType) or t.rank == 0 or not in_origin_view(op):
            return
        users = _readers(x)
        if len(users) < 2 or op is not users[0]:
            return  # rewrite once, at the first slice (the parts' users follow it)
        found = _partition(x, users)
        if found is None or any(_rejoined(u) for u in users):
            return
        axis, widths, parts = found
        sizes = ints_constant(widths)
        split = SplitOp.make(x, sizes.output, axis=axis)
        results = zip(split.results, parts, strict=True)
        if any(new.type != old.results[0].type for new, old in results):
            split.drop_all_references()
            return
        for new in (sizes, split):
            rewriter.insert(new, InsertPoint.before(op))
        for new, old in zip(split.results, parts, strict=True):
            new.name_hint = old.results[0].name_hint
            rewriter.replace(old, [], [new])
