"""Data-movement kernels on the vector core: slice, split, pad, expand and tile as DMA.

Each of these ops maps every output element to one input element by an affine map per
axis — ``input = start + step * (output - region start)`` — on one or more *regions* of
the output (a box per output buffer):

* slice: one region; the step is the slice's (any sign; ONNX clamping already applied).
* split: one region per output, each its own GM argument (a kernel with several outputs),
  starting at that output's offset along the split axis.
* pad, constant mode: one region over the whole output, starting ``pad_begin`` before the
  input: the DMA cuts the window at the input's edges and fills the rest of the UB tile
  with the pad value (``tile.copy {pad}``); negative pads crop the same way.
* pad, reflect / edge / wrap: per padded axis, the interior (step 1), the border before and
  the one after (reflect: step -1 from the element next to the edge; edge: step 0, the edge
  element broadcast; wrap: step 1 from the other end); the regions are the products of the
  axes' pieces (3^k for k padded axes).
* expand: one region with step 0 on the broadcast axes (input rank = output rank).
* tile: one region, the input, whose tiles are each loaded once and stored to every copy
  (the product of the repeats, up to :data:`MAX_REGIONS` stores per tile).

Per region, a loop nest over tiles (the outer axes one element at a time, one axis split,
the inner axes whole; every loop ``tile.parallel``, so ``split-cores`` shares the nest out)
loads the input window the tile reads (GM -> UB, ``tile.copy``), and stores the tile into
the output (UB -> GM). When some step is not 1 the window is the span of the tile's inputs
and the vector unit picks the elements out of it (``tile.vstride``): the MTE moves runs of
32-byte blocks with block strides, it cannot skip or reverse single elements, so the
element steps are a gather in UB (GE's StridedSlice does the same with ``vgather``). A
region that stops before the output's end along the split axis takes tiles that divide
its extent there: a ragged tile would store past the region into the next one, which a
block of a multi-core launch may already have written.

A kernel of several such ops (and concats) reading one another composes their regions
into boxes of its outputs, each reading a kernel input (:mod:`.movement_maps`), and runs
them with the nests below.

Kernels whose tensors are not row-major are not taken here: pad, expand and tile get
origin-format tensors only (TransData goes around them), and a slice or split of an
NC1HWC0 tensor (the format engine's choice between convolutions) is cut in origin terms
and mapped onto whole C0 blocks by :mod:`.movement_5hd`, which emits these nests.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from math import prod

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph.base import constant_value
from tilegraph.dialects.graph.cutting import SliceOp, SplitOp, split_sizes
from tilegraph.dialects.graph.data_movement import ExpandOp, PadOp
from tilegraph.dialects.graph.data_movement import TileOp as GraphTileOp
from tilegraph.dialects.graph.slicing import slice_bounds
from tilegraph.dialects.tile import CopyOp, StrideOp, memref_shape
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody, is_row_major, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.elementwise import TilePlan, choose_tile

DATA_MOVEMENT_OPS = (SliceOp, SplitOp, PadOp, ExpandOp, GraphTileOp)

MAX_REGIONS = 64
"""Regions (loop nests) one kernel may have: a pad of many axes or a tile of many
repeats beyond it stays on the host rather than unrolling into that many nests."""


@dataclass(frozen=True)
class Piece:
    """One axis of a region: output ``[out_start, out_start + extent)`` reads input
    ``start + step * i`` for the i-th element."""

    out_start: int
    extent: int
    start: int
    step: int


@dataclass(frozen=True)
class Region:
    """A box of one output that one loop nest fills; ``copies``: the other places (output,
    start per axis) the same box of data goes to (a tile op's repeats: loaded once,
    stored to each)."""

    out_arg: SSAValue
    pieces: tuple[Piece, ...]
    fill: float | None = None
    """The value of input positions outside the input (constant pad); None: never read."""
    copies: tuple[tuple[SSAValue, tuple[int, ...]], ...] = ()
    src: SSAValue | None = None
    """The value the pieces index: an op's operand while the region is one op's (a
    concat's regions each read their input), a GM argument once composed
    (:mod:`.movement_maps`); None: the kernel's one source."""

    @property
    def extent(self) -> list[int]:
        return [p.extent for p in self.pieces]

    @property
    def steps(self) -> list[int]:
        return [p.step for p in self.pieces]

    def targets(self) -> list[tuple[SSAValue, tuple[int, ...]]]:
        """Every (output, start per axis) the region's tiles are stored to."""
        return [(self.out_arg, tuple(p.out_start for p in self.pieces)), *self.copies]

    def window(self, tile: Sequence[int]) -> list[int]:
        """The input span a tile of shape ``tile`` reads."""
        return [
            1 if p.step == 0 else (t - 1) * abs(p.step) + 1
            for t, p in zip(tile, self.pieces, strict=True)
        ]

    def gathers(self) -> bool:
        return any(p.step != 1 for p in self.pieces)


# ---- regions of each op -----------------------------------------------------------------


def _ints(value: SSAValue | None) -> list[int] | None:
    data = constant_value(value)
    return None if data is None else [int(v) for v in np.asarray(data).reshape(-1)]


def value_shape(value: SSAValue) -> tuple[int, ...]:
    """The shape of a GM argument, or of a row-major tensor a kernel body computes."""
    if isinstance(value.type, MemRefType):
        return memref_shape(value)
    return tuple(int(d) for d in tensor_of(value).storage_shape)


ShapeOf = Callable[[SSAValue], Sequence[int]]
"""An output's shape (:func:`value_shape` but for a blocked storage's origin)."""


def _identity(shape: Sequence[int]) -> list[Piece]:
    return [Piece(0, n, 0, 1) for n in shape]


def _slice_regions(
    op: SliceOp, out: SSAValue, in_shape: Sequence[int], shape_of: ShapeOf
) -> list[Region] | str:
    starts, ends = _ints(op.starts), _ints(op.ends)
    if starts is None or ends is None:
        return "slice bounds computed at run time"
    axes = _ints(op.axes) if op.axes is not None else list(range(len(starts)))
    steps = _ints(op.steps) if op.steps is not None else [1] * len(starts)
    if axes is None or steps is None:
        return "slice axes or steps computed at run time"
    pieces = _identity(shape_of(out))
    rank = len(in_shape)
    for axis, start, end, step in zip(axes, starts, ends, steps, strict=True):
        a = axis % rank
        first, _, length = slice_bounds(in_shape[a], start, end, step)
        pieces[a] = Piece(0, length, first, step)
    return [Region(out, tuple(pieces))]


def _split_regions(
    op: SplitOp, outs: Sequence[SSAValue | None], shape: Sequence[int], shape_of: ShapeOf
):
    axis = op.attr("axis") % len(shape)
    sizes = _ints(op.split) if op.split is not None else None
    if sizes is None:
        if op.split is not None:
            return "split sizes computed at run time"
        sizes = split_sizes(shape[axis], op.attr("num_outputs"))
    regions, offset = [], 0
    for out, size in zip(outs, sizes, strict=True):
        if out is not None and size > 0:
            pieces = _identity(shape_of(out))
            pieces[axis] = Piece(0, size, offset, 1)
            regions.append(Region(out, tuple(pieces)))
        offset += size
    return regions


def _border_pieces(mode: str, n: int, crop: int, before: int, after: int) -> list[Piece] | str:
    """The pieces of one axis of a reflect / edge / wrap pad: the border before the data,
    the data (``n`` elements from ``crop``), the border after."""
    pieces = [Piece(before, n, crop, 1)]
    limit = n - 1 if mode == "reflect" else n
    if max(before, after) > limit or n == 0:
        return f"a {mode} pad wider than its axis"
    if mode == "reflect":
        borders = (Piece(0, before, crop + before, -1), Piece(before + n, after, crop + n - 2, -1))
    elif mode == "edge":
        borders = (Piece(0, before, crop, 0), Piece(before + n, after, crop + n - 1, 0))
    else:  # wrap
        borders = (Piece(0, before, crop + n - before, 1), Piece(before + n, after, crop, 1))
    return [p for p in (borders[0], *pieces, borders[1]) if p.extent > 0]


def _pad_regions(op: PadOp, out: SSAValue, in_shape: Sequence[int]) -> list[Region] | str:
    pads = _ints(op.pads)
    rank = len(in_shape)
    axes = _ints(op.axes) if op.axes is not None else list(range(rank))
    if pads is None or axes is None:
        return "pad widths computed at run time"
    mode = op.attr("mode") or "constant"
    k = len(axes)
    begins, ends = [0] * rank, [0] * rank
    for i, axis in enumerate(axes):
        begins[axis % rank], ends[axis % rank] = pads[i], pads[i + k]
    if mode == "constant":
        fill = 0.0
        if op.constant_value is not None:
            value = constant_value(op.constant_value)
            if value is None:
                return "a pad value computed at run time"
            fill = float(np.asarray(value).reshape(-1)[0])
        pieces = [Piece(0, m, -b, 1) for m, b in zip(value_shape(out), begins, strict=True)]
        return [Region(out, tuple(pieces), fill)]
    per_axis: list[list[Piece]] = []
    for n, b, e in zip(in_shape, begins, ends, strict=True):
        crop_lo, crop_hi = max(-b, 0), max(-e, 0)
        found = _border_pieces(mode, n - crop_lo - crop_hi, crop_lo, max(b, 0), max(e, 0))
        if isinstance(found, str):
            return found
        per_axis.append(found)
    if prod(len(p) for p in per_axis) > MAX_REGIONS:
        return f"a {mode} pad of more than {MAX_REGIONS} regions"
    return [Region(out, tuple(c)) for c in itertools.product(*per_axis)]


def _expand_regions(out: SSAValue, in_shape: Sequence[int]) -> list[Region] | str:
    out_shape = value_shape(out)
    if len(in_shape) != len(out_shape):
        return "an expand that adds dims"
    pieces = [
        Piece(0, m, 0, 0 if n == 1 and m != 1 else 1)
        for n, m in zip(in_shape, out_shape, strict=True)
    ]
    return [Region(out, tuple(pieces))]


def _tile_regions(op: GraphTileOp, out: SSAValue, in_shape: Sequence[int]):
    """One region (the input, loaded tile by tile) stored to every copy's place."""
    repeats = _ints(op.repeats)
    if repeats is None:
        return "tile repeats computed at run time"
    if prod(repeats) > MAX_REGIONS:
        return f"a tile of more than {MAX_REGIONS} copies"
    starts = itertools.product(
        *[[r * n for r in range(k)] for n, k in zip(in_shape, repeats, strict=True)]
    )
    first, *others = [(out, tuple(s)) for s in starts]
    pieces = tuple(Piece(s, n, 0, 1) for s, n in zip(first[1], in_shape, strict=True))
    return [Region(out, pieces, copies=tuple(others))]


def op_regions(
    op: Operation,
    outs: Sequence[SSAValue | None],
    in_shape: Sequence[int],
    shape_of: ShapeOf = value_shape,
) -> list[Region] | str:
    """The regions of a slice / split / pad / expand / tile ``op`` whose results are
    ``outs`` (GM arguments, or the results themselves inside a chain; None: not needed),
    indexing its data operand of shape ``in_shape``; else why not. ``shape_of`` gives an
    output's shape in the same terms as ``in_shape`` (a slice / split of a blocked
    storage is cut in origin terms first, :mod:`.movement_5hd`)."""
    if isinstance(op, SplitOp):
        return _split_regions(op, outs, in_shape, shape_of)
    out = outs[0]
    if out is None:
        return "a data-movement op whose result is not needed"
    if isinstance(op, SliceOp):
        return _slice_regions(op, out, in_shape, shape_of)
    if isinstance(op, PadOp):
        return _pad_regions(op, out, in_shape)
    if isinstance(op, ExpandOp):
        return _expand_regions(out, in_shape)
    assert isinstance(op, GraphTileOp)
    return _tile_regions(op, out, in_shape)


# ---- tiling and emission ----------------------------------------------------------------


def plan_region(region: Region, eb: int, budget: int, depth: int, cores: int) -> TilePlan | None:
    """The tiles of a region: the largest that fit ``budget`` (the window and, when
    gathering, the picked tile), made smaller when that leaves some of ``cores`` idle
    (:func:`~.elementwise.share_over_cores`), dividing the region along the split axis
    unless the region reaches the output's end there."""

    def tile_bytes(tile: Sequence[int]) -> int:
        picked = prod(tile) if region.gathers() else 0
        return (prod(region.window(tile)) + picked) * eb

    plan = choose_tile(region.extent, tile_bytes, budget, depth=depth, cores=cores)
    if plan is None or not plan.shape:
        return plan
    axis, extent = plan.axis, region.extent[plan.axis]
    # a target of another rank is a view of the output (a concat tree's box): a tile past
    # the region's end there is not cut by the tensor's end, so the tiles divide it
    reaches_end = all(
        len(start) == len(shape) and start[axis] + extent >= shape[axis]
        for out, start in region.targets()
        for shape in (value_shape(out),)
    )
    if reaches_end or extent % plan.size == 0:
        return plan
    size = max(d for d in range(1, plan.size + 1) if extent % d == 0)
    return TilePlan(plan.shape, axis, size)


def open_nest(b: KernelBuilder, stack: ExitStack, needed: bool) -> None:
    """When ``needed`` (a kernel of several nests, this one of a single tile), open a
    parallel loop of one trip: ``inject-sync`` fences loop nests, so every nest needs one
    to be fenced apart from the others when their flags would need more than the 8 events
    of a pipe pair; and ``split-cores`` gives its one trip to block 0 alone, so that the
    other blocks do not store the same tile again."""
    if needed:
        one = b.index(1)
        stack.enter_context(b.loop_over(b.index(0), one, one, "region", parallel=True))


def emit_region(
    b: KernelBuilder, src_arg: SSAValue, region: Region, plan: TilePlan, element, nest: bool
) -> None:
    """One region's loop nest; ``nest``: the kernel has several (see :func:`open_nest`)."""
    tile = plan.tile_shape()
    rank = len(tile)
    window = b.buffer(region.window(tile), element, "UB", "window_ub")
    picked = b.buffer(tile, element, "UB", "picked_ub") if region.gathers() else window
    zeros = [b.index(0)] * rank
    with ExitStack() as stack:
        open_nest(b, stack, nest and plan.count() == 1)
        offsets: list[SSAValue] = []
        for d, piece in enumerate(region.pieces):
            if d < plan.axis:
                offsets.append(stack.enter_context(b.loop(piece.extent, 1, f"i{d}", True)))
            elif d == plan.axis:
                loop = b.loop(piece.extent, plan.size, f"i{d}", True)
                offsets.append(stack.enter_context(loop))
            else:
                offsets.append(b.index(0))
        src_offsets = []
        for off, t, piece in zip(offsets, tile, region.pieces, strict=True):
            # a reversed window starts at the input of the tile's last element
            lowest = piece.start + (t - 1) * piece.step if piece.step < 0 else piece.start
            src_offsets.append(b.affine(off, piece.step, lowest))
        b.add(CopyOp(src_arg, src_offsets, window, zeros, pad=region.fill))
        if region.gathers():
            b.add(StrideOp(window, picked, region.steps))
        for out_arg, starts in region.targets():
            out_offsets = [b.affine(off, 1, s) for off, s in zip(offsets, starts, strict=True)]
            b.add(CopyOp(picked, zeros, out_arg, out_offsets))


def lone_row_major_source(
    body: KernelBody, kinds: type | tuple[type, ...], what: str
) -> tuple[Operation, SSAValue] | str:
    """The kernel's one op, of ``kinds``, and the GM argument of its first operand (its
    data), when that and every output the kernel writes are row-major; else why the
    kernel cannot be a copy kernel (``what``: the kinds, named)."""
    if len(body.ops) != 1 or not isinstance(body.ops[0], kinds):
        return f"not a lone {what}"
    op = body.ops[0]
    data = op.operands[0]
    src_arg = body.source(data)
    if src_arg is None:
        return f"a {op.name} of a value computed inside the kernel"
    if not is_row_major(tensor_of(data)) or not all(
        is_row_major(tensor_of(v)) for v, _ in body.writes
    ):
        return f"a {op.name} of a tensor that is not row-major"
    return op, src_arg


def is_data_movement(op: Operation) -> bool:
    """Whether ``op`` is tiled here: a slice, split, pad, tile, or an expand of the same
    rank (an expand that adds dims is a broadcast, which the elementwise vector program
    of ``graph.expand`` tiles)."""
    if isinstance(op, ExpandOp):
        return len(tensor_of(op.operands[0]).storage_shape) == len(
            tensor_of(op.results[0]).storage_shape
        )
    return isinstance(op, DATA_MOVEMENT_OPS)


def emit_data_movement_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a lone slice / split / pad / expand / tile as region copies; returns why it
    cannot (None when emitted)."""
    found = lone_row_major_source(body, DATA_MOVEMENT_OPS, "data-movement op")
    if isinstance(found, str):
        return found
    op, src_arg = found
    in_shape = memref_shape(src_arg)
    written = dict(body.writes)
    regions = op_regions(op, [written.get(r) for r in op.results], in_shape)
    if isinstance(regions, str):
        return regions
    return emit_regions(b, op, src_arg, regions)


def emit_regions(
    b: KernelBuilder, op: Operation, src_arg: SSAValue, regions: list[Region]
) -> str | None:
    """Plan and emit the loop nests of ``op``'s ``regions`` (of its storage) reading
    ``src_arg``; returns why not (None when emitted, or when the builder only checks)."""
    regions = [r for r in regions if all(r.extent)]  # an empty box moves nothing
    if not regions:
        return f"a {op.name} with empty outputs"
    element = tensor_of(op.operands[0]).element_type
    eb = element_bytes(element)
    budget, depth, cores = b.ub_budget(), b.split_depth(), b.hw.vector_cores
    plans = [plan_region(r, eb, budget, depth, cores) for r in regions]
    if any(p is None for p in plans):
        return f"no tile of a {op.name} fits UB"
    if b.dry_run:
        return None
    for region, plan in zip(regions, plans, strict=True):
        assert plan is not None
        emit_region(b, src_arg, region, plan, element, len(regions) > 1)
    b.tiles = sum(p.count() for p in plans if p is not None)
    return None
