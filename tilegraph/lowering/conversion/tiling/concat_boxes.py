"""Boxes of a concat tree's output, followed back through its concats, slices and views.

A *box* is a set of output elements a loop nest stores: ``shape`` indices ``i`` placed at
``place`` (a strided view of the output), each reading element ``start + coef · i`` of a
value of the tree (per axis of that value, an affine form of the box's indices). The
output itself is one box (``i`` the output index). Walking back from a value to an operand:

* a concat keeps, for each input, the positions whose index along the axis falls in that
  input's interval (:func:`clip`), re-based to the input;
* a static slice of positive steps maps its result index to ``first + step · i``, a
  gather of constant indices (one, or a run of equal steps) likewise;
* a transpose permutes the axes; an expand reads a broadcast axis at index 0;
* a reshape (squeeze, unsqueeze, flatten) ravels the result index (an affine form again)
  and divides it by the operand's axes from the last (:func:`_divmod`): a form whose
  terms stay inside one row of the axis splits no box; one whose only row-crossing term
  is a unit step (a window row of Swin's cyclic shift, an axis cut by a concat offset)
  splits the box into a partial row, whole rows (that dim split in two) and a partial row;
  a tile reads each repeated axis modulo the operand's extent the same way.

Each split keeps every box's place a strided view, so each box's read — once it reaches a
kernel input — is a strided view of that input too (:func:`source_view`): Swin's window
partition after its roll (``reshape, slice x2, concat, slice x2, concat, reshape,
transpose, reshape``) becomes a few copies of windows' parts. Anything else (a term of
another step crossing rows, a reversed slice) is refused with its reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from xdsl.ir import Operation

from tilegraph.dialects.graph.data_movement import ExpandOp, GatherOp, SliceOp, TileOp
from tilegraph.dialects.graph.shape_ops import TransposeOp
from tilegraph.dialects.graph.slicing import slice_bounds
from tilegraph.lowering.analysis.operand_views import StridedView, static_row_major
from tilegraph.lowering.conversion.kernel_body import tensor_of
from tilegraph.passes.simplify.match import constant_ints

T = TypeVar("T")
U = TypeVar("U")

MAX_BOXES = 64
"""Boxes (loop nests) one concat tree may have (as :data:`~.data_movement.MAX_REGIONS`)."""


@dataclass(frozen=True)
class Box:
    """Output elements ``place`` (over the box's index ``i``) reading ``start + coef · i``
    of a value: ``start[a]`` and ``coef[a][d]`` per value axis ``a`` and box dim ``d``."""

    place: StridedView
    start: tuple[int, ...]
    coef: tuple[tuple[int, ...], ...]

    @staticmethod
    def whole(shape: Sequence[int]) -> Box:
        """The output of ``shape`` as one box reading itself."""
        rank = len(shape)
        ident = tuple(tuple(int(a == d) for d in range(rank)) for a in range(rank))
        return Box(StridedView.row_major(shape), (0,) * rank, ident)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.place.shape

    def _with_axis(self, axis: int, start: int, coef: Sequence[int]) -> Box:
        starts = (*self.start[:axis], start, *self.start[axis + 1 :])
        coefs = (*self.coef[:axis], tuple(coef), *self.coef[axis + 1 :])
        return Box(self.place, starts, coefs)

    def restrict(self, dim: int, first: int, size: int) -> Box:
        """Only indices ``first .. first + size`` of box dim ``dim``."""
        place = self.place.part(dim, first, size)
        assert place is not None
        start = tuple(s + c[dim] * first for s, c in zip(self.start, self.coef, strict=True))
        return Box(place, start, self.coef)

    def split(self, dim: int, inner: int) -> Box:
        """Box dim ``dim`` (a multiple of ``inner``) as two dims: rows of ``inner``."""
        p = self.place
        n, s = p.shape[dim], p.strides[dim]
        shape = (*p.shape[:dim], n // inner, inner, *p.shape[dim + 1 :])
        strides = (*p.strides[:dim], s * inner, s, *p.strides[dim + 1 :])
        coef = tuple((*c[:dim], c[dim] * inner, c[dim], *c[dim + 1 :]) for c in self.coef)
        return Box(StridedView(shape, strides, p.offset), self.start, coef)


def _terms(box: Box, form: Sequence[int]) -> list[int]:
    """The box dims an affine form depends on (those of more than one index)."""
    return [d for d, c in enumerate(form) if c and box.shape[d] > 1]


def clip(box: Box, axis: int, lo: int, hi: int) -> list[Box] | str:
    """The positions of ``box`` reading ``[lo, hi)`` along ``axis``, re-based to ``lo``.
    A form of several terms (a window row and rows of windows) is cut along its largest
    step one index at a time, and the whole rows joined back (:func:`_joined`)."""
    form, start = box.coef[axis], box.start[axis]
    terms = _terms(box, form)
    if any(form[d] < 0 for d in terms):
        return "a reversed read along a concat axis"
    if not terms:
        return [box._with_axis(axis, start - lo, form)] if lo <= start < hi else []
    if len(terms) == 1:
        d, c = terms[0], form[terms[0]]
        first = max(0, -(-(lo - start) // c))
        last = min(box.shape[d], -(-(hi - start) // c))
        if last <= first:
            return []
        kept = box.restrict(d, first, last - first)
        return [kept._with_axis(axis, kept.start[axis] - lo, form)]
    outer = max(terms, key=lambda d: form[d])
    found: list[Box] = []
    for r in range(box.shape[outer]):
        kept = clip(box.restrict(outer, r, 1), axis, lo, hi)
        if isinstance(kept, str):
            return kept
        for part in kept:
            if found and (joined := _joined(found[-1], part, outer)) is not None:
                found[-1] = joined
            else:
                found.append(part)
        if len(found) > MAX_BOXES:
            return f"a concat tree of more than {MAX_BOXES} boxes"
    return found


def _joined(prev: Box, row: Box, dim: int) -> Box | None:
    """``prev`` grown by one index along ``dim`` when ``row`` (one index there) is exactly
    that next index: the same extents elsewhere, placed and read one step further."""
    p, q = prev.place, row.place
    n = p.shape[dim]
    same = p.shape[:dim] == q.shape[:dim] and p.shape[dim + 1 :] == q.shape[dim + 1 :]
    if not same or q.shape[dim] != 1 or p.strides != q.strides or prev.coef != row.coef:
        return None
    if q.offset != p.offset + p.strides[dim] * n or any(
        s + c[dim] * n != t for s, c, t in zip(prev.start, prev.coef, row.start, strict=True)
    ):
        return None
    shape = (*p.shape[:dim], n + 1, *p.shape[dim + 1 :])
    return Box(StridedView(shape, p.strides, p.offset), prev.start, prev.coef)


def through_slice(box: Box, op: SliceOp) -> Box | str:
    """``box`` of a static slice's result as a box of its input (positive steps only)."""
    shape = static_row_major(op.operands[0])
    starts, ends = constant_ints(op.starts), constant_ints(op.ends)
    if shape is None or starts is None or ends is None:
        return "a slice of unknown bounds in a concat tree"
    rank = len(shape)
    axes = list(range(len(starts))) if op.axes is None else constant_ints(op.axes)
    steps = [1] * len(starts) if op.steps is None else constant_ints(op.steps)
    if axes is None or steps is None:
        return "a slice of unknown bounds in a concat tree"
    for axis, s, e, k in zip(axes, starts, ends, steps, strict=True):
        if k < 1:
            return "a reversed slice in a concat tree"
        a = axis % rank
        first, _, _ = slice_bounds(shape[a], s, e, k)
        box = box._with_axis(a, first + k * box.start[a], [k * c for c in box.coef[a]])
    return box


def through_transpose(box: Box, op: TransposeOp) -> Box:
    """``box`` of a transpose's result as a box of its input."""
    rank = len(box.start)
    perm = [int(p) for p in op.attr("perm")] if op.attr("perm") is not None else None
    perm = perm if perm is not None else list(range(rank))[::-1]
    inverse = sorted(range(rank), key=perm.__getitem__)
    return Box(
        box.place,
        tuple(box.start[inverse[a]] for a in range(rank)),
        tuple(box.coef[inverse[a]] for a in range(rank)),
    )


def through_gather(box: Box, op: GatherOp) -> Box | str:
    """``box`` of a gather of constant indices — one index (torch's ``select``) or a run
    of equal steps — as a box of its data: the index axis reads ``k0 + step · i``."""
    ks = constant_ints(op.indices)
    shape = static_row_major(op.operands[0])
    rank = tensor_of(op.indices).rank
    if ks is None or shape is None or rank > 1 or not ks:
        return "a gather of indices that are no constant run in a concat tree"
    a = op.attr("axis") % len(shape)
    idx = [k % shape[a] for k in ks]
    step = idx[1] - idx[0] if len(idx) > 1 else 0
    if step < 0 or any(k != idx[0] + step * j for j, k in enumerate(idx)):
        return "a gather of indices that are no constant run in a concat tree"
    k = len(box.shape)
    if rank == 0:  # the axis is gone from the result: one index of it
        start = (*box.start[:a], idx[0], *box.start[a:])
        return Box(box.place, start, (*box.coef[:a], (0,) * k, *box.coef[a:]))
    return box._with_axis(a, idx[0] + step * box.start[a], [step * c for c in box.coef[a]])


def through_tile(box: Box, op: TileOp) -> list[Box] | str:
    """``box`` of a tile's result as boxes of its input: along each repeated axis the
    index modulo the input's extent (:func:`_divmod`, the quotient dropped)."""
    shape = static_row_major(op.operands[0])
    repeats = constant_ints(op.repeats)
    if shape is None or repeats is None:
        return "a tile of unknown repeats in a concat tree"
    boxes: list[Box] | str = [box]
    for a, (n, r) in enumerate(zip(shape, repeats, strict=True)):
        if r == 1:
            continue
        # axis a copied in front, divided by n: its remainder replaces axis a
        moved = each(
            boxes,
            lambda b, a=a, n=n: _divmod(
                Box(b.place, (b.start[a], *b.start), (b.coef[a], *b.coef)), n
            ),
        )
        if isinstance(moved, str):
            return moved
        boxes = [
            Box(f.place, f.start[2:], f.coef[2:])._with_axis(a, f.start[1], f.coef[1])
            for f in moved
        ]
    return boxes


def through_expand(box: Box, op: ExpandOp) -> Box | str:
    """``box`` of an expand's result as a box of its input: a broadcast axis reads its
    one element (step 0), the leading axes an expand adds are dropped."""
    shape = static_row_major(op.operands[0])
    if shape is None:
        return "an expand of a tensor that is not static in a concat tree"
    lead = len(box.start) - len(shape)
    start, coef = list(box.start[lead:]), list(box.coef[lead:])
    for a, n in enumerate(shape):
        if n == 1:
            start[a], coef[a] = 0, (0,) * len(box.shape)
    return Box(box.place, tuple(start), tuple(coef))


def through_reshape(box: Box, op: Operation) -> list[Box] | str:
    """``box`` of a reshape-like op's result as boxes of its input: the result index
    ravelled into one linear form, then divided by the input's axes from the last
    (:func:`_divmod`); the quotient left at the end is 0."""
    shape = static_row_major(op.operands[0])
    out = static_row_major(op.results[0])
    if shape is None or out is None:
        return "a reshape of a tensor that is not static and row-major in a concat tree"
    stride, start, form = 1, 0, [0] * len(box.shape)
    for a in reversed(range(len(out))):
        start += box.start[a] * stride
        form = [f + c * stride for f, c in zip(form, box.coef[a], strict=True)]
        stride *= out[a]
    boxes: list[Box] | str = [Box(box.place, (start,), (tuple(form),))]
    for n in reversed(shape):
        boxes = each(boxes, lambda b, n=n: _divmod(b, n))
        if isinstance(boxes, str):
            return boxes
    return [Box(b.place, b.start[1:], b.coef[1:]) for b in boxes]


def each(items: Sequence[T], step: Callable[[T], list[U] | str]) -> list[U] | str:
    """What ``step`` makes of each of ``items`` (boxes, or values with a box), in order;
    the first reason, or one when they are more than :data:`MAX_BOXES`."""
    found: list[U] = []
    for item in items:
        made = step(item)
        if isinstance(made, str):
            return made
        found.extend(made)
        if len(found) > MAX_BOXES:
            return f"a concat tree of more than {MAX_BOXES} boxes"
    return found


def _divmod(box: Box, n: int) -> list[Box] | str:
    """``box`` whose axis 0 is a linear index ``L``, as boxes whose axis 0 is ``L // n``
    and axis 1 ``L % n`` (the other axes after them), each an affine form: where the
    remainder's terms stay inside one row of ``n``, as they are; where a unit step of
    one dim crosses rows, that dim cut into a partial row, whole rows (split in two dims)
    and a partial row; otherwise refused."""
    s, f = box.start[0], box.coef[0]
    eff = [c if box.shape[d] > 1 else 0 for d, c in enumerate(f)]
    if any(c < 0 for c in eff):
        return "a reversed read through a reshape in a concat tree"
    q, r = [c // n for c in eff], [c % n for c in eff]
    if s % n + sum(c * (e - 1) for c, e in zip(r, box.shape, strict=True)) < n:
        start = (s // n, s % n, *box.start[1:])
        return [Box(box.place, start, (tuple(q), tuple(r), *box.coef[1:]))]
    fine = [d for d, c in enumerate(r) if c]
    if len(fine) != 1 or r[fine[0]] != 1:
        return "a reshape whose rows a box crosses with a step other than one"
    d, e = fine[0], box.shape[fine[0]]
    head = (-s) % n  # the first index whose element starts a row
    pieces = [box.restrict(d, 0, min(head, e))] if head else []
    rows = max(0, (e - head) // n)
    if rows:
        pieces.append(box.restrict(d, head, rows * n).split(d, n))
    if head + rows * n < e:
        pieces.append(box.restrict(d, head + rows * n, e - head - rows * n))
    return each(pieces, lambda piece: _divmod(piece, n))


def source_view(box: Box, view: StridedView) -> StridedView | None:
    """The elements ``box`` reads of a value held in GM as ``view``: a strided view over
    the box's dims (None: a stride would be negative)."""
    offset = view.offset + sum(s * a for s, a in zip(view.strides, box.start, strict=True))
    strides = tuple(
        sum(s * c[d] for s, c in zip(view.strides, box.coef, strict=True))
        if box.shape[d] > 1
        else 1
        for d in range(len(box.shape))
    )
    if any(st < 0 for st in strides) or offset < 0:
        return None
    return StridedView(box.shape, strides, offset)


def plain_place(box: Box, shape: Sequence[int]) -> StridedView | None:
    """The place of ``box`` as a view of the whole value of ``shape`` it reads index for
    index (each axis one dim of step 1 from 0, in any order): the view a chain computing
    that value stores through; None when the box reads the value otherwise."""
    strides: list[int] = []
    used: set[int] = set()
    for a, n in enumerate(shape):
        terms = _terms(box, box.coef[a])
        if box.start[a] != 0:
            return None
        if n == 1 and not terms:
            strides.append(1)
            continue
        if len(terms) != 1 or box.coef[a][terms[0]] != 1 or box.shape[terms[0]] != n:
            return None
        used.add(terms[0])
        strides.append(box.place.strides[terms[0]])
    if any(e > 1 and d not in used for d, e in enumerate(box.shape)):
        return None
    return StridedView(tuple(shape), tuple(strides), box.place.offset)
