"""A fused projection whose parts are taken on an inner axis: its columns reordered.

BLOOM views its fused ``query_key_value`` projection ``[B, S, 3·H·D]`` as
``[B, S, H, 3, D]`` and takes q, k and v on the inner axis 3; Falcon views its
multi-query projection as ``[B, S, n_kv, q_per_kv + 2, D]`` and takes the query group
``[..., :-2, :]`` and k / v ``[..., [-2], :]`` / ``[..., [-1], :]`` (through a
Transpose that brings that axis first). Each part is then a strided copy of the projection:
a data-movement kernel per part and layer.

The columns of a constant weight can be put in any order at compile time. Ordering them
part by part (each part's columns in their original relative order) makes the projection
write ``[q | k | v]`` contiguously: each part is then a Split piece of the projection's last
axis, viewed (a Reshape, layout-identical) as the reader's result — the form that
``slices-as-split`` gives Phi-3's ``[q | k | v]``, whose pieces the matmuls and fused
kernels reading them address in place. Values are bitwise unchanged: every output element
is the same dot product, only stored at another column.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from tilegraph.dialects.graph.binary import AddOp
from tilegraph.dialects.graph.data_movement import GatherOp, SliceOp, SplitOp
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.shape_ops import ReshapeOp, TransposeOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.simplify.match import (
    constant_array,
    constant_ints,
    drop_ops,
    in_origin_view,
    ints_constant,
    made_by,
    new_constant,
    only_user,
    reshaped,
    tensor_type_of,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule
from tilegraph.passes.simplify.select_rules import sliced_range


@dataclass(frozen=True)
class _Projection:
    """``x @ W (+ b)``: W a constant ``[K, N]``, b a constant broadcast along N only."""

    matmul: MatMulOp
    weight: np.ndarray
    add: AddOp | None
    bias: np.ndarray | None

    @property
    def result(self) -> SSAValue:
        return (self.add or self.matmul).results[0]


def _projection(value: SSAValue) -> _Projection | None:
    """The projection computing ``value`` when nothing but its one user reads it (nor its
    product, when a bias add follows)."""
    add = made_by(value, AddOp)
    bias = None
    if add is not None:
        for product, other in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
            if isinstance(product.owner, MatMulOp):
                bias, value = constant_array(other), product
                break
        if bias is None or add.results[0].type != value.type:
            return None  # no constant bias, or it broadcasts the product
    matmul = made_by(value, MatMulOp)
    weight = None if matmul is None else constant_array(matmul.rhs)
    if matmul is None or weight is None or weight.ndim != 2:
        return None
    n = weight.shape[1]
    if bias is not None and (bias.size != n or bias.shape[-1:] != (n,)):
        return None  # the bias must vary along N only
    return _Projection(matmul, weight, add, bias)


@dataclass(frozen=True)
class _Take:
    """A value that is the part ``[start, end)`` of the view's axis ``axis``, laid out as
    that part is (its elements in the part's row-major order)."""

    value: SSAValue
    axis: int
    start: int
    end: int


def _gathered_range(op: GatherOp, n: int) -> tuple[int, int] | None:
    """``[start, end)`` when ``op``'s indices are one constant scalar (the axis dropped) or
    a 1-D run of ascending consecutive constants (the axis kept) of an axis of size n."""
    index = constant_array(op.indices)
    if index is None or index.ndim > 1 or index.size == 0 or index.dtype.kind not in "iu":
        return None
    flat = [int(i) % n if -n <= int(i) < n else -1 for i in index.reshape(-1)]
    if -1 in flat or flat != list(range(flat[0], flat[0] + len(flat))):
        return None
    return flat[0], flat[0] + len(flat)


def _takes_of(reader: Operation, source: SSAValue) -> list[_Take] | None:
    """The parts ``reader`` takes of ``source`` along one axis (a Split's pieces, a unit-step
    Slice, a Gather of constant consecutive indices), else None."""
    t = source.type
    assert isinstance(t, TensorType)
    if not in_origin_view(reader):
        return None
    if isinstance(reader, SplitOp):
        sizes = constant_ints(reader.split)
        if sizes is None:
            return None
        axis, start, takes = int(reader.attr("axis") or 0) % t.rank, 0, []
        for size, piece in zip(sizes, reader.results, strict=True):
            takes.append(_Take(piece, axis, start, start + size))
            start += size
        return takes
    if isinstance(reader, SliceOp):
        found = sliced_range(reader, t.rank, tuple(t.origin_shape))
        return None if found is None else [_Take(reader.results[0], *found)]
    if isinstance(reader, GatherOp):
        axis = int(reader.attr("axis") or 0) % t.rank
        found = _gathered_range(reader, int(t.origin_shape[axis]))
        return None if found is None else [_Take(reader.results[0], axis, *found)]
    return None


def _reader_takes(view: SSAValue) -> list[_Take] | None:
    """Every part the readers of ``view`` take, in ``view``'s axes; a Transpose reader
    counts when its own readers all take parts whose elements keep the part's order (the
    transpose moves only size-1 dims of the part)."""
    t = view.type
    assert isinstance(t, TensorType)
    takes: list[_Take] = []
    for reader in dict.fromkeys(use.operation for use in view.uses):
        if not isinstance(reader, TransposeOp):
            found = _takes_of(reader, view)
            if found is None:
                return None
            takes += found
            continue
        perm = [int(p) for p in reader.attr("perm") or range(t.rank)[::-1]]
        for inner in dict.fromkeys(use.operation for use in reader.results[0].uses):
            found = _takes_of(inner, reader.results[0])
            if found is None:
                return None
            for take in found:
                axis = perm[take.axis]
                part = [int(d) for d in t.origin_shape]
                part[axis] = take.end - take.start
                moved = [p for p in perm if part[p] != 1]
                if moved != sorted(moved):
                    return None  # the transpose reorders the part's elements
                takes.append(_Take(take.value, axis, take.start, take.end))
    return takes


def _column_order(columns: list[int], axis: int, ranges: list[tuple[int, int]]) -> np.ndarray:
    """The projection's columns part after part: for each range of ``axis`` (of the
    columns viewed as ``columns``), its columns in their original relative order."""
    index = np.arange(prod(columns)).reshape(columns)
    return np.concatenate([np.take(index, range(s, e), axis=axis).reshape(-1) for s, e in ranges])


@simplify_rule
class ProjectionPartsOutermost(SimplifyRule):
    INFO = RuleInfo(
        None,
        "projection-parts-outermost",
        "Reshape(x @ W (+ b)) [..., outer..., G, inner...] whose readers take whole parts "
        "along G (Split, Slice, Gather of constant indices; through a Transpose moving "
        "size-1 dims only)",
        "x @ W[:, p] (+ b[p]), Split along its last axis, each piece reshaped to its "
        "reader's result",
        "W and b constant (b along N only); the product, the bias add and the view have no "
        "other readers; the parts partition G; static shapes; outer dims of more than one "
        "element (else slices-as-split applies); exact (a permutation of W's columns)",
        "GE (SplitD after a fused MatMul)",
    )
    ROOTS = (ReshapeOp,)

    def rewrite(self, op: ReshapeOp, rewriter: PatternRewriter) -> None:
        view, source = op.results[0], op.data
        t, st = tensor_type_of(view), tensor_type_of(source)
        if t is None or st is None or not (t.is_static and st.is_static) or not in_origin_view(op):
            return
        if only_user(source) is not op or (projection := _projection(source)) is None:
            return
        lead = [int(d) for d in st.origin_shape[:-1]]
        shape = [int(d) for d in t.origin_shape]
        columns = shape[len(lead) :]
        if shape[: len(lead)] != lead or len(columns) < 2:
            return  # the view must split the column axis alone
        takes = _reader_takes(view)
        if not takes or len({take.axis for take in takes}) != 1:
            return
        axis = takes[0].axis - len(lead)
        if axis <= 0 or prod(columns[:axis]) == 1:
            return  # parts already contiguous (or a lead axis): slices-as-split's case
        ranges = sorted({(take.start, take.end) for take in takes})
        ends = [start for start, _ in ranges[1:]] + [columns[axis]]
        if ranges[0][0] != 0 or any(end != e for (_, end), e in zip(ranges, ends, strict=True)):
            return  # the parts must partition the axis
        order = _column_order(columns, axis, ranges)
        weight = new_constant(projection.weight[:, order])
        matmul = MatMulOp.make(projection.matmul.lhs, weight.output)
        new_ops: list[Operation] = [weight, matmul]
        result = matmul.results[0]
        weight.output.name_hint = projection.matmul.rhs.name_hint
        result.name_hint = projection.matmul.results[0].name_hint
        if projection.bias is not None:
            bias = new_constant(np.ascontiguousarray(projection.bias[..., order]))
            add = AddOp.make(result, bias.output)
            old = projection.add
            assert old is not None
            bias.output.name_hint = (
                old.rhs if old.lhs.owner is projection.matmul else old.lhs
            ).name_hint
            new_ops += [bias, add]
            result = add.results[0]
            result.name_hint = projection.result.name_hint
        inner = prod(columns) // columns[axis]
        widths = [(e - s) * inner for s, e in ranges]
        sizes = ints_constant(widths)
        split = SplitOp.make(result, sizes.output, axis=len(lead))
        new_ops += [sizes, split]
        replacements: list[tuple[SSAValue, SSAValue]] = []
        for take in takes:
            piece = split.results[ranges.index((take.start, take.end))]
            target = tensor_type_of(take.value)
            assert target is not None
            new = reshaped(piece, [int(d) for d in target.origin_shape], new_ops)
            if new.type != take.value.type or new in (r for _, r in replacements):
                drop_ops(new_ops)
                return
            replacements.append((take.value, new))
        if result.type != source.type:
            drop_ops(new_ops)
            return
        for new_op in new_ops:
            rewriter.insert(new_op, InsertPoint.before(op))
        for old, new in replacements:
            new.name_hint = new.name_hint or old.name_hint
            rewriter.replace_all_uses_with(old, new)
        readers = [take.value.owner for take in takes]
        _erase_dead(rewriter, [r for r in readers if isinstance(r, Operation)], op, projection)


def _erase_dead(
    rewriter: PatternRewriter, readers: list[Operation], view: ReshapeOp, projection: _Projection
) -> None:
    """Erase the readers left without uses, the transposes between them and the view, the
    view and the old projection (innermost first)."""
    seen = dict.fromkeys(readers)
    transposes = dict.fromkeys(
        r.operands[0].owner for r in seen if isinstance(r.operands[0].owner, TransposeOp)
    )
    for dead in [*seen, *transposes, view, projection.add, projection.matmul]:
        if isinstance(dead, Operation) and dead.parent is not None:
            if all(not r.uses for r in dead.results):
                rewriter.erase(dead)
