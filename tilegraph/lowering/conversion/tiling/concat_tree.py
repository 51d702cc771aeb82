"""Several concats (and the slices and views between them) as one kernel, each input's
part stored into a view of the output.

A concat of concats — YOLOv8's detection head (the box and class maps of each scale
concatenated on C, each flattened to ``[N, C, H·W]``, then the scales concatenated on the
anchors), PP-YOLOE's flattened scales, Swin's cyclic shift (a roll along H then W: two
concats of two slices each) with its window partition after it — writes every element of
every innermost input once, at a place the ops of the tree name. The output is followed
back as *boxes* (:mod:`.concat_boxes`): each concat keeps the part of a box that reads its
input, a slice / transpose / reshape re-indexes it, up to a *leaf* — a concat input that no
concat, slice or view op of the tree makes. Each box of a leaf is one loop nest:

* a leaf read from GM (a kernel input, or a view of one: YOLOv8's C2f half ``x[:, :c]``)
  is copied from the strided view of it that the box reads into the strided view of the
  output that is its place (:func:`~.data_movement.emit_region`, a DMA-only nest);
* a leaf the kernel computes — by the elementwise chain of its producers
  (:class:`~.elementwise.Chain`: a TransData from NC1HWC0 loads 5HD tiles and stores them
  as NCHW) — is tiled whole and stored through its place, which must then read the leaf
  index for index (:func:`~.concat_boxes.plain_place`).

No intermediate concat or view is materialised: GE's one task per concat (and the view
ops' none) becomes one task for the tree. Every place and read must keep its rows
contiguous (:func:`~tilegraph.lowering.analysis.elementwise_views.readable`); several
outputs, and ops after the outermost concat other than views, are refused with their
reason. A place ends at its box's bounds, so a ragged tile (and the padding lanes of a 5HD
tile past its channels) is never stored into another box, whichever block of a multi-core
launch runs first.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod

from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph.data_movement import (
    ConcatOp,
    ExpandOp,
    GatherOp,
    SliceOp,
    TileOp,
)
from tilegraph.dialects.graph.shape_ops import TransposeOp
from tilegraph.dialects.tile import CopyOp
from tilegraph.dialects.tile import TransposeOp as VTransposeOp
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.analysis.elementwise_views import (
    ELEMENTWISE_VIEW_OPS,
    input_view,
    readable,
)
from tilegraph.lowering.analysis.operand_views import VIEW_OPS, StridedView, static_row_major
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.concat_boxes import (
    Box,
    clip,
    each,
    plain_place,
    source_view,
    through_expand,
    through_gather,
    through_reshape,
    through_slice,
    through_tile,
    through_transpose,
)
from tilegraph.lowering.conversion.tiling.data_movement import (
    Piece,
    Region,
    emit_region,
    open_nest,
    plan_region,
)
from tilegraph.lowering.conversion.tiling.elementwise import (
    Chain,
    TilePlan,
    choose_tile,
    store,
    tile_loops,
)
from tilegraph.lowering.conversion.tiling.matmul_views import view_of

TREE_OPS = (ConcatOp, SliceOp, GatherOp, TileOp, ExpandOp, *VIEW_OPS)
"""The ops a concat tree follows its boxes back through."""


def _tree_op(body: KernelBody, value: SSAValue) -> Operation | None:
    """The op of the tree making ``value`` (computed in the kernel, not read from GM)."""
    op = value.owner
    if isinstance(op, TREE_OPS) and op in body.ops and body.source(value) is None:
        return op
    return None


def place_leaves(body: KernelBody, value: SSAValue, box: Box) -> list[tuple[SSAValue, Box]] | str:
    """The leaves of the tree making ``value`` read by ``box``, each with the boxes of it
    (module docstring); a reason when a box cannot be followed."""
    op = _tree_op(body, value)
    if op is None:
        return [(value, box)]
    inner: list[tuple[SSAValue, Box]] | str
    if isinstance(op, ConcatOp):
        axis = op.attr("axis") % len(box.start)
        offset, inner = 0, []
        for operand in op.inputs:
            extent = int(tensor_of(operand).origin_shape[axis])
            parts = clip(box, axis, offset, offset + extent)
            if isinstance(parts, str):
                return parts
            inner.extend((operand, part) for part in parts)
            offset += extent
    elif isinstance(op, SliceOp):
        moved = through_slice(box, op)
        inner = moved if isinstance(moved, str) else [(op.operands[0], moved)]
    elif isinstance(op, TransposeOp):
        inner = [(op.operands[0], through_transpose(box, op))]
    elif isinstance(op, GatherOp | ExpandOp):
        moved = through_gather(box, op) if isinstance(op, GatherOp) else through_expand(box, op)
        inner = moved if isinstance(moved, str) else [(op.operands[0], moved)]
    elif isinstance(op, TileOp):
        tiled = through_tile(box, op)
        inner = tiled if isinstance(tiled, str) else [(op.operands[0], b) for b in tiled]
    else:
        moved = through_reshape(box, op)
        if isinstance(moved, str):  # a leaf, when it is a view of an input
            return [(value, box)]
        inner = [(op.operands[0], b) for b in moved]
    if isinstance(inner, str):
        return inner
    return each(inner, lambda pair: place_leaves(body, *pair))


def producers(value: SSAValue, members: list[Operation]) -> list[Operation]:
    """The ops of ``members`` that ``value`` depends on, in body order."""
    needed: set[Operation] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        op = v.owner
        if isinstance(op, Operation) and op in members and op not in needed:
            needed.add(op)
            stack.extend(op.operands)
    return [op for op in members if op in needed]


@dataclass
class _Copy:
    """A box of a leaf held in GM: ``read`` of the kernel argument ``arg`` copied to
    ``place`` of the output."""

    place: StridedView
    arg: SSAValue
    read: StridedView
    region: Region


@dataclass
class _Transposed:
    """A box of a leaf held in GM whose read runs along another dim than its place (ViViT's
    patches ``flatten(2).transpose(1, 2)`` after the class token, DETR's sine embedding
    moved to channels first): ``read`` (over the box dims in ``order``, rows contiguous)
    loaded into UB, transposed on the vector unit into the place's order and stored."""

    place: StridedView
    arg: SSAValue
    read: StridedView
    order: tuple[int, ...]


def _transposed_read(read: StridedView) -> tuple[StridedView, tuple[int, ...]] | None:
    """``read`` with its dims reordered so that a dim of stride 1 is last (the others in
    their order), and that order; None when no dim is contiguous."""
    unit = [d for d, (n, st) in enumerate(zip(read.shape, read.strides, strict=True))
            if st == 1 and n > 1]  # fmt: skip
    if not unit:
        return None
    order = (*(d for d in range(len(read.shape)) if d != unit[-1]), unit[-1])
    moved = read.transpose(order)
    return (moved, order) if readable(moved) else None


def _emit_transposed(
    b: KernelBuilder, nest: _Transposed, target: SSAValue, plan: TilePlan, element, several: bool
) -> None:
    """The loop nest of a transposed box into ``target`` (its place's GM view): per tile
    the transpose kernel's load, ``vtranspose`` and store
    (:func:`~.reshape.emit_transpose_kernel`), between two strided views."""
    tile = plan.tile_shape()
    rank = len(tile)
    src_ub = b.buffer([tile[d] for d in nest.order], element, "UB", "in_ub")
    dst_ub = b.buffer(tile, element, "UB", "out_ub")
    read = view_of(b, nest.arg, nest.read)
    stack, offsets = tile_loops(b, plan)
    open_nest(b, stack, several and plan.count() == 1)
    with stack:
        b.add(CopyOp(read, [offsets[d] for d in nest.order], src_ub, [b.index(0)] * rank))
        perm = [nest.order.index(d) for d in range(rank)]
        properties = {"perm": DenseArrayBase.from_list(i64, perm)}
        b.add(VTransposeOp.create(operands=[src_ub, dst_ub], properties=properties))
        store(b, dst_ub, target, offsets)


@dataclass
class _Computed:
    """A leaf the kernel computes: its chain, stored through ``place``."""

    leaf: SSAValue
    place: StridedView
    chain: Chain


def _held(body: KernelBody, leaf: SSAValue) -> tuple[SSAValue, StridedView] | None:
    """The kernel argument ``leaf`` is read from and the view of it ``leaf`` is: the
    argument itself (row-major), or a readable view of it made by view ops and slices."""
    arg = body.source(leaf)
    shape = static_row_major(leaf)
    if arg is not None:
        return None if shape is None else (arg, StridedView.row_major(shape))
    ops = producers(leaf, body.ops)
    if not ops or not all(isinstance(op, ELEMENTWISE_VIEW_OPS) for op in ops):
        return None
    chain = input_view(leaf, set(ops))
    arg = None if chain is None else body.source(chain.base)
    return None if chain is None or arg is None else (arg, chain.view)


def _leaf_nest(
    body: KernelBody, out_arg: SSAValue, leaf: SSAValue, box: Box
) -> _Copy | _Transposed | _Computed | str:
    """The nest storing ``box`` of ``leaf`` (module docstring)."""
    if not readable(box.place):
        return "a concat input placed in a view whose rows are not contiguous"
    held = _held(body, leaf)
    if held is not None:
        arg, view = held
        read = source_view(box, view)
        if read is not None and not readable(read):
            moved = _transposed_read(read)
            if moved is not None:
                return _Transposed(box.place, arg, *moved)
        if read is None or not readable(read):
            return "a concat input read through a view whose rows are not contiguous"
        pieces = tuple(Piece(0, n, 0, 1) for n in box.shape)
        return _Copy(box.place, arg, read, Region(out_arg, pieces))
    ops = producers(leaf, body.ops)
    if any(isinstance(op, TREE_OPS) for op in ops):
        return "a concat input made by views that are no strided view of an input"
    place = plain_place(box, [int(d) for d in tensor_of(leaf).origin_shape])
    if place is None:
        return "a concat input computed in the kernel and read re-indexed"
    shape = tuple(int(d) for d in tensor_of(leaf).storage_shape)
    chain = Chain(body, ops, shape, space_value=leaf)
    if leaf not in {r for op in chain.ops for r in op.results} and leaf not in chain.inputs:
        chain.inputs.append(leaf)  # copied as it is
    stored = len(place.shape) == 4 and chain.space == "5hd"
    if not stored and tuple(chain.out_shape) != place.shape:
        return "a concat input held in another layout than the view it is stored to"
    return chain.unsupported() or _Computed(leaf, place, chain)


def emit_concat_tree_kernel(body: KernelBody, b: KernelBuilder, least: int) -> str | None:
    """Tile a kernel whose one output is a tree of concats, slices and views: one nest
    per box of a leaf (module docstring); ``least``: the elements a computed leaf's tile
    keeps when it shrinks to occupy more cores. Returns why not (None when emitted)."""
    if len(body.writes) != 1:
        return "a concat kernel with several outputs"
    value, out_arg = body.writes[0]
    shape = static_row_major(value)
    if shape is None:
        return "a concat tree whose output is not row-major"
    leaves = place_leaves(body, value, Box.whole(shape))
    if isinstance(leaves, str):
        return leaves
    element = tensor_of(value).element_type
    eb = element_bytes(element)
    budget, depth, cores = b.ub_budget(), b.split_depth(), b.hw.vector_cores
    nests: list[tuple[_Copy | _Transposed | _Computed, TilePlan]] = []
    for leaf, box in leaves:
        nest = _leaf_nest(body, out_arg, leaf, box)
        if isinstance(nest, str):
            return nest
        if isinstance(nest, _Copy):
            plan = plan_region(nest.region, eb, budget, depth, cores)
        elif isinstance(nest, _Transposed):  # the two UB tiles, as the transpose kernel's
            plan = choose_tile(
                nest.place.shape, lambda t: 2 * prod(t) * eb, budget, depth=depth, cores=cores
            )
        else:
            chain = nest.chain
            plan = choose_tile(
                chain.out_shape,
                lambda t, c=chain: c.ub_bytes(b.hw, t),
                budget,
                depth=depth,
                cores=cores,
                least=least,
            )
        if plan is None:
            return "no tile of a concat input fits UB"
        nests.append((nest, plan))
    if b.dry_run:
        return None
    several = len(nests) > 1
    for nest, plan in nests:
        target = view_of(b, out_arg, nest.place)
        if isinstance(nest, _Copy):
            region = replace(nest.region, out_arg=target)
            emit_region(b, view_of(b, nest.arg, nest.read), region, plan, element, several)
            continue
        if isinstance(nest, _Transposed):
            _emit_transposed(b, nest, target, plan, element, several)
            continue
        chain, leaf = nest.chain, nest.leaf
        chain.allocate(b, plan.tile_shape())
        stack, offsets = tile_loops(b, plan)
        open_nest(b, stack, several and plan.count() == 1)
        with stack:
            for v in chain.input_tiles:
                chain.load(b, v, offsets)
            tiles = chain.compute(b, {}, dict(chain.input_tiles))
            chain.store(b, tiles[leaf], target, offsets)
    b.tiles = sum(plan.count() for _, plan in nests)
    return None
