"""Indexing by constant or mask-derived indices as plainer ops.

``gather-nd-as-gather``: GatherND by constant index tuples -> a Gather of the flattened
leading dims; GatherND by run-time indices of one entry each -> a Gather along axis 0.

PyTorch's default exporter writes advanced indexing by constant index lists (DLRM's
``z[:, li, lj]``: the upper triangle of a pairwise interaction) as a Transpose that brings
the indexed dims first and a GatherND whose index tuples address them. With ``batch_dims``
0 and the indexed dims static, a tuple ``(i_0 .. i_{k-1})`` is the row
``sum_j i_j · stride_j`` of the data viewed as ``[d_0 · … · d_{k-1}, rest…]``: a Gather
along axis 0 by those rows (computed when compiling; negative entries count from the end as
ONNX says), which the AI core has a kernel for where GatherND of single elements has none.
Run-time index tuples of one entry (``indices [..., 1]``: the dynamo exporter's binary
search of ``torch.bucketize`` reads a 1-D boundary table so, once per halving) address
rows of axis 0 directly: ``Gather(x, Squeeze(indices, [-1]), axis 0)``, negative entries
wrapped and out-of-range ones refused by both alike. Exact: the same elements, copied.

``scatter-nd-as-concat``: a slice assignment ``y[a:a+k] = u`` that an exporter writes as
ScatterND at constant rows ``[[a], [a+1], …, [a+k-1]]`` of axis 0 (BART's
``shift_tokens_right``: ``shifted[:, 1:] = input_ids[:, :-1]``, transposed so the
sequence is axis 0) is ``Concat(x[:a], u, x[a+k:])`` along axis 0: the same elements in
the same places, exact, where ScatterND has no kernel.

``masked-fill-as-where``: PyTorch's default exporter writes a masked assignment of one
value, ``y[y < 0] = 0.5`` (``index_put`` with a boolean mask), as ScatterND of that value,
expanded to the mask's count, at ``Transpose(NonZero(mask))``: the mask's true elements in
row-major order. With the mask of the data's shape (one index tuple per element), that is
``Where(mask, value, data)``, whose shape is static where the scatter's updates had a
data-dependent count. Exact.
"""

from __future__ import annotations

from math import prod

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.data_movement import ConcatOp, ExpandOp, GatherOp, SliceOp
from tilegraph.dialects.graph.indexing import GatherNDOp, ScatterNDOp
from tilegraph.dialects.graph.logical import WhereOp
from tilegraph.dialects.graph.shape_ops import ReshapeOp, SqueezeOp, TransposeOp, UnsqueezeOp
from tilegraph.dialects.graph.vision_index import NonZeroOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.simplify.match import (
    constant_array,
    drop_ops,
    ints_constant,
    made_by,
    make_typed,
    new_constant,
    replace_if_typed,
    replace_with_ops,
    replace_with_value,
    reshaped,
    splat_value,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule


def flat_rows(indices: np.ndarray, dims: tuple[int, ...]) -> np.ndarray | None:
    """The rows of ``[prod(dims), …]`` that GatherND's index tuples (the last axis of
    ``indices``) address, negative entries wrapped; None when one is out of range."""
    if indices.shape[-1] != len(dims):
        return None
    size = np.array(dims, np.int64)
    wrapped = np.where(indices < 0, indices + size, indices).astype(np.int64)
    if (wrapped < 0).any() or (wrapped >= size).any():
        return None
    strides = np.array([prod(dims[j + 1 :]) for j in range(len(dims))], np.int64)
    return (wrapped * strides).sum(-1)


@simplify_rule
class GatherNDAsGather(SimplifyRule):
    INFO = RuleInfo(
        None,
        "gather-nd-as-gather",
        "GatherND(x, constant tuples | run-time indices [..., 1]), batch_dims 0",
        "Gather(Reshape(x, [d_0 · … · d_{k-1}, rest…]), constant rows, axis 0) | "
        "Gather(x, Squeeze(indices, [-1]), axis 0)",
        "constant tuples: the indexed dims static, at most one unknown dim after them",
        "ORT (GatherND of constant tuples folded to Gather)",
    )
    ROOTS = (GatherNDOp,)

    def rewrite(self, op: GatherNDOp, rewriter: PatternRewriter) -> None:
        data, indices = op.data.type, constant_array(op.indices)
        if int(op.attr("batch_dims") or 0) != 0 or not isinstance(data, TensorType):
            return
        if indices is None:
            self._rewrite_single_entries(op, rewriter)
            return
        if indices.ndim == 0:
            return
        depth = indices.shape[-1]
        lead = data.origin_shape[:depth]
        rest = list(data.origin_shape[depth:])
        if depth < 1 or not all(isinstance(d, int) and d >= 0 for d in lead):
            return
        unknown = [i for i, d in enumerate(rest) if not (isinstance(d, int) and d >= 0)]
        if len(unknown) > 1:
            return
        rows = flat_rows(indices, tuple(int(d) for d in lead))  # type: ignore[arg-type]
        if rows is None:
            return
        ops: list[Operation] = []
        sizes = [-1 if j in unknown else int(dim) for j, dim in enumerate(rest)]  # type: ignore[arg-type]
        flat = reshaped(op.data, [prod(int(dim) for dim in lead), *sizes], ops)  # type: ignore[arg-type]
        picked = new_constant(rows)
        ops += [picked, GatherOp.make(flat, picked.results[0], axis=0)]
        replace_if_typed(rewriter, op, ops)

    @staticmethod
    def _rewrite_single_entries(op: GatherNDOp, rewriter: PatternRewriter) -> None:
        index_type = op.indices.type
        if not isinstance(index_type, TensorType) or index_type.rank < 1:
            return
        if index_type.origin_shape[-1] != 1:
            return
        axes = ints_constant([-1])
        rows = SqueezeOp.make(op.indices, axes.results[0])
        replace_if_typed(rewriter, op, [axes, rows, GatherOp.make(op.data, rows, axis=0)])


@simplify_rule
class ScatterNDAsConcat(SimplifyRule):
    INFO = RuleInfo(
        None,
        "scatter-nd-as-concat",
        "ScatterND(x, constant rows [[a], [a+1], …, [a+k-1]] of axis 0, u), no reduction",
        "Concat(Slice(x, 0, a), u, Slice(x, a+k, end)) along axis 0",
        "x's axis 0 static; the rows ascending by one (negative ones wrapped)",
        "",
    )
    ROOTS = (ScatterNDOp,)

    def rewrite(self, op: ScatterNDOp, rewriter: PatternRewriter) -> None:
        rows, data = constant_array(op.indices), op.data.type
        if str(op.attr("reduction") or "none") != "none" or rows is None:
            return
        if not isinstance(data, TensorType) or data.rank < 1 or rows.ndim != 2:
            return
        size = data.origin_shape[0]
        if rows.shape[1] != 1 or not isinstance(size, int) or size < 1:
            return
        first = flat_rows(rows, (size,))
        if first is None or len(first) == 0:
            return
        start, count = int(first[0]), len(first)
        if not np.array_equal(first, np.arange(start, start + count)):
            return
        ops: list[Operation] = []
        pieces: list[SSAValue] = []
        for lo, hi in ((0, start), (start + count, size)):
            if lo < hi:
                bounds = [ints_constant([v]) for v in (lo, hi, 0)]
                piece = SliceOp.make(op.data, *(b.results[0] for b in bounds))
                ops += [*bounds, piece]
                pieces.append(piece.results[0])
        pieces.insert(1 if start > 0 else 0, op.updates)
        if len(pieces) == 1:
            drop_ops(ops)
            replace_with_value(rewriter, op, op.updates)
            return
        ops.append(ConcatOp.make(*pieces, axis=0))
        replace_if_typed(rewriter, op, ops)


def splat_through_broadcasts(value: SSAValue) -> np.ndarray | None:
    """The one value (0-D, in its type) every element of ``value`` has, when ``value`` is a
    splat constant reshaped or expanded to any shape; else None."""
    owner = value.owner
    while isinstance(owner, ReshapeOp | ExpandOp | UnsqueezeOp):
        value = owner.operands[0]
        owner = value.owner
    data = constant_array(value)
    if data is None or splat_value(value) is None:
        return None
    return data.reshape(-1)[:1].reshape(())


@simplify_rule
class MaskedFillAsWhere(SimplifyRule):
    INFO = RuleInfo(
        None,
        "masked-fill-as-where",
        "ScatterND(x, Transpose(NonZero(mask), [1, 0]), one value broadcast), mask of x's shape",
        "Where(mask, value, x)",
        "a boolean mask of x's rank and dims; no reduction",
        "",
    )
    ROOTS = (ScatterNDOp,)

    def rewrite(self, op: ScatterNDOp, rewriter: PatternRewriter) -> None:
        if str(op.attr("reduction") or "none") != "none":
            return
        transpose = made_by(op.indices, TransposeOp)
        if transpose is None or tuple(transpose.attr("perm") or (1, 0)) != (1, 0):
            return
        nonzero = transpose.operands[0].owner
        if not isinstance(nonzero, NonZeroOp):
            return
        mask, data = nonzero.X, op.data
        mask_type, data_type = mask.type, data.type
        if not isinstance(mask_type, TensorType) or not isinstance(data_type, TensorType):
            return
        if (
            np.dtype(mask_type.dtype.numpy) != np.bool_
            or mask_type.origin_shape != data_type.origin_shape
        ):
            return
        value = splat_through_broadcasts(op.updates)
        if value is None:
            return
        fill = new_constant(value.astype(np.dtype(data_type.dtype.numpy)))
        where = make_typed(WhereOp, mask, fill.results[0], data, like=op.results[0].type)
        if where is None:
            return
        replace_with_ops(rewriter, op, [fill, where])
