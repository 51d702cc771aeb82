"""Chains of data-movement ops as one kernel: their per-axis affine regions, composed.

Every slice / split / pad / expand / tile maps each element of a region of its output to
one element of its input by an affine map per axis (:mod:`.data_movement`), and a concat
maps each input's region of its output to that input by the identity. A chain of them —
LongT5's ``pad -> slice x3 -> concat`` of a key block, a Swin cyclic shift (``torch.roll``
exported as Slice + Slice + Concat) — composes: a region of the last op reads the
intermediate through its map, and the intermediate's own regions read further up, so per
axis the output positions that land in one region of the intermediate form an interval
(the maps are affine), and on it the composed map is affine again (``start`` composed,
steps multiplied). The chain's output is thus covered by boxes, each reading one GM input
through one affine map per axis: the kernel is :func:`~.data_movement.emit_region`'s nests,
one per box, with no intermediate in GM.

Fill values compose as a DMA with padding produces them (``tile.copy {pad}`` fills the
window positions past the source's edges): a constant pad's region reaches past its
input's edges only through the intermediate's boxes that touch those edges, and there the
composed read must land past the *source's* edge on that axis (a step-0 border or a box
that does not start at the source's edge cannot be extended: refused), with the same fill
as any fill the inner box already has (a pad of a pad with another value: refused).

Reshape-like ops (reshape, flatten, squeeze, unsqueeze) join where they are views of
row-major GM tensors: one reading a kernel input (the input is read as a row-major view of
the reshaped shape), and one writing a kernel output (the boxes of its operand are stored
into a view of the output with the operand's shape). A reshape between two movement ops
is refused: splitting or merging an axis the boxes cut (LongT5's padded sequence split
into blocks) maps one output axis onto several source axes, not per axis; the kernel
grouping then splits the group into the longest runs a strategy tiles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph.data_movement import ConcatOp
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.analysis.operand_views import StridedView
from tilegraph.lowering.conversion.kernel_body import KernelBody, is_row_major, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.data_movement import (
    DATA_MOVEMENT_OPS,
    MAX_REGIONS,
    Piece,
    Region,
    emit_region,
    is_data_movement,
    op_regions,
    plan_region,
    value_shape,
)
from tilegraph.lowering.conversion.tiling.matmul_views import view_of
from tilegraph.lowering.conversion.tiling.reshape import SHAPE_ONLY

CHAIN_OPS = (*DATA_MOVEMENT_OPS, ConcatOp, *SHAPE_ONLY)
"""The ops a movement chain is made of (reshape-like ones only as views, see above)."""

_FAR = 1 << 60
"""Past any axis: the interval a box touching an edge extends to under a constant pad."""


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _axis(outer: Piece, inner: Piece, n: int, fill: bool) -> tuple[Piece, bool, bool] | None:
    """Per axis: the positions of ``outer`` (reading ``start + step * i`` of an operand of
    extent ``n``) that land in ``inner``'s interval of the operand — extended past the
    operand's edges when ``fill`` (a constant pad) and ``inner`` touches them — as a piece
    reading ``inner``'s source, and whether any lands before / past the operand's edges;
    None when none lands there."""
    lo, hi = inner.out_start, inner.out_start + inner.extent
    if fill:
        lo, hi = (-_FAR if lo == 0 else lo), (_FAR if hi == n else hi)
    s, k, e = outer.start, outer.step, outer.extent
    if k == 0:
        first, last = (0, e) if lo <= s < hi else (0, 0)
    elif k > 0:
        first, last = max(0, _ceil_div(lo - s, k)), min(e, _ceil_div(hi - s, k))
    else:  # x = s - |k| i: x >= lo while i <= (s - lo) / |k|, x < hi once i > (s - hi) / |k|
        first, last = max(0, (s - hi) // -k + 1), min(e, (s - lo) // -k + 1)
    if last <= first:
        return None
    x0, x1 = s + k * first, s + k * (last - 1)
    start = inner.start + inner.step * (x0 - inner.out_start)
    piece = Piece(outer.out_start + first, last - first, start, inner.step * k)
    return piece, min(x0, x1) < 0, max(x0, x1) >= n


def _lands_outside(inner: Piece, n: int, src_n: int, low: bool, high: bool) -> bool:
    """Whether ``inner``'s map, extended before (``low``) / past (``high``) the operand's
    edges (``n``), reads outside the source (``src_n``) there, so that the DMA fills those
    positions (the map is monotone: the first position out decides)."""
    if inner.step == 0:
        return False
    below = inner.start + inner.step * (-1 - inner.out_start)
    above = inner.start + inner.step * (n - inner.out_start)
    return not (low and 0 <= below < src_n) and not (high and 0 <= above < src_n)


def compose(outer: Region, inner: Region, in_shape: Sequence[int]) -> Region | str | None:
    """The box of ``outer`` (an op's region reading an operand of shape ``in_shape``) whose
    reads land in ``inner`` (a box of that operand reading a source), reading the source
    directly; None when no position lands in ``inner``; a reason when the fills do not
    compose."""
    assert inner.src is not None
    src_shape = value_shape(inner.src)
    pieces, reaches = [], False
    for d, (o, i) in enumerate(zip(outer.pieces, inner.pieces, strict=True)):
        found = _axis(o, i, in_shape[d], outer.fill is not None)
        if found is None:
            return None
        piece, low, high = found
        if (low or high) and not _lands_outside(i, in_shape[d], src_shape[d], low, high):
            return "a pad around a border the source's edge cannot fill"
        pieces.append(piece)
        reaches = reaches or low or high
    fill = inner.fill
    if reaches:
        if inner.fill is not None and inner.fill != outer.fill:
            return "pads of different values"
        fill = outer.fill
    if all(_inside(p, n) for p, n in zip(pieces, src_shape, strict=True)):
        fill = None  # every read lands in the source: a plain copy (a pad's middle block)
    return Region(outer.out_arg, tuple(pieces), fill, src=inner.src)


def _inside(piece: Piece, n: int) -> bool:
    """Whether every source position ``piece`` reads lies in ``[0, n)``."""
    last = piece.start + piece.step * (piece.extent - 1)
    return 0 <= min(piece.start, last) and max(piece.start, last) < n


def _unrolled(region: Region) -> list[Region]:
    """A region stored to several places (a tile op's copies) as one region per place."""
    return [
        Region(
            out,
            tuple(replace(p, out_start=s) for p, s in zip(region.pieces, starts, strict=True)),
            region.fill,
            src=region.src,
        )  # fmt: skip
        for out, starts in region.targets()
    ]


def _concat_regions(op: ConcatOp, out: SSAValue) -> list[Region]:
    axis = op.attr("axis") % len(value_shape(out))
    regions, offset = [], 0
    for operand in op.inputs:
        shape = value_shape(operand)
        pieces = [Piece(offset if d == axis else 0, n, 0, 1) for d, n in enumerate(shape)]
        regions.append(Region(out, tuple(pieces), src=operand))
        offset += shape[axis]
    return regions


class MovementChain:
    """The boxes of a kernel body's values, each reading one source through per-axis maps.

    A source is a GM argument, or a reshape-like op's result read as a row-major view of
    its GM operand (``views``: that result -> the argument)."""

    def __init__(self, body: KernelBody):
        self.body = body
        self.views: dict[SSAValue, SSAValue] = {}
        self._boxes: dict[SSAValue, list[Region] | str] = {}

    def boxes(self, value: SSAValue) -> list[Region] | str:
        if value not in self._boxes:
            self._boxes[value] = self._compute(value)
        return self._boxes[value]

    def _source(self, value: SSAValue) -> SSAValue | None:
        arg = self.body.source(value)
        if arg is not None:
            return arg
        op = value.owner
        if isinstance(op, SHAPE_ONLY) and (arg := self.body.source(op.operands[0])) is not None:
            self.views[value] = arg
            return value
        return None

    def _compute(self, value: SSAValue) -> list[Region] | str:
        if (src := self._source(value)) is not None:
            shape = value_shape(value)
            return [Region(value, tuple(Piece(0, n, 0, 1) for n in shape), src=src)]
        op = value.owner
        if not isinstance(op, Operation) or op not in self.body.ops:
            return "a value neither read nor computed in the kernel"
        if isinstance(op, SHAPE_ONLY):
            return "a reshape between movement ops (its axes would not map one to one)"
        if isinstance(op, ConcatOp):
            regions: list[Region] | str = _concat_regions(op, value)
        else:
            outs = [r if r is value else None for r in op.results]
            regions = op_regions(op, outs, value_shape(op.operands[0]))
        if isinstance(regions, str):
            return regions
        found: list[Region] = []
        for outer in (u for r in regions for u in _unrolled(r)):
            operand = outer.src if outer.src is not None else op.operands[0]
            inner_boxes = self.boxes(operand)
            if isinstance(inner_boxes, str):
                return inner_boxes
            for inner in inner_boxes:
                box = compose(outer, inner, value_shape(operand))
                if isinstance(box, str):
                    return box
                if box is not None and all(box.extent):
                    found.append(box)
            if len(found) > MAX_REGIONS:
                return f"a movement chain of more than {MAX_REGIONS} boxes"
        return found


def is_chain_op(op: Operation) -> bool:
    """A data-movement op tiled as regions (:func:`~.data_movement.is_data_movement`), a
    concat or a reshape-like op, on row-major tensors (a concat in NC1HWC0 stays the
    concat kernel's)."""
    return (
        isinstance(op, CHAIN_OPS)
        and (is_data_movement(op) or not isinstance(op, DATA_MOVEMENT_OPS))
        and all(is_row_major(tensor_of(v)) for v in (*op.operands[:1], *op.results))
    )


def is_movement_chain(body: KernelBody) -> bool:
    """Several chain ops (:func:`is_chain_op`), at least one of them not reshape-like (a
    chain of reshapes alone is the reshape kernel's)."""
    return (
        len(body.ops) > 1
        and all(is_chain_op(op) for op in body.ops)
        and any(not isinstance(op, SHAPE_ONLY) for op in body.ops)
    )


def _written_boxes(chain: MovementChain, value: SSAValue, out_arg: SSAValue):
    """The boxes of a kernel output: ``value``'s, or — when a reshape-like op writes it —
    its operand's, stored into a row-major view of the output (``(boxes, view shape)``)."""
    op = value.owner
    if isinstance(op, SHAPE_ONLY) and chain.body.source(op.operands[0]) is None:
        return chain.boxes(op.operands[0]), value_shape(op.operands[0])
    return chain.boxes(value), None


def emit_movement_chain_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a chain of movement ops as the composed boxes of each output, one nest per box
    (:func:`~.data_movement.emit_region`); returns why it cannot (None when emitted)."""
    values = [*(op.operands[0] for op in body.ops), *(v for v, _ in body.writes)]
    if not all(is_row_major(tensor_of(v)) for v in values):
        return "a movement chain over a tensor that is not row-major"
    chain = MovementChain(body)
    outputs = []
    for value, out_arg in body.writes:
        boxes, view = _written_boxes(chain, value, out_arg)
        if isinstance(boxes, str):
            return boxes
        outputs.append((out_arg, boxes, view))
    every = [box for _, boxes, _ in outputs for box in boxes]
    if not every:
        return "a movement chain with empty outputs"
    if len(every) > MAX_REGIONS:
        return f"a movement chain of more than {MAX_REGIONS} boxes"
    element = tensor_of(body.writes[0][0]).element_type
    eb = element_bytes(element)
    budget, depth, cores = b.ub_budget(), b.split_depth(), b.hw.vector_cores
    plans = [plan_region(r, eb, budget, depth, cores) for r in every]
    if any(p is None for p in plans):
        return "no tile of a movement chain's box fits UB"
    if b.dry_run:
        return None
    sources = {v: view_of(b, arg, StridedView.row_major(value_shape(v)))
               for v, arg in chain.views.items()}  # fmt: skip
    placed = []
    for out_arg, boxes, view in outputs:
        target = out_arg if view is None else view_of(b, out_arg, StridedView.row_major(view))
        placed.extend(replace(box, out_arg=target) for box in boxes)
    for box, plan in zip(placed, plans, strict=True):
        src = box.src
        assert plan is not None and src is not None
        emit_region(b, sources[src] if src in sources else src, box, plan, element, len(placed) > 1)
    b.tiles = sum(p.count() for p in plans if p is not None)
    return None
