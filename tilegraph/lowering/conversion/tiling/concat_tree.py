"""Several concats (and the views between them) as one kernel: each input placed in a view.

A concat of concats — YOLOv8's detection head (the box and class maps of each scale
concatenated on C, each flattened to ``[N, C, H·W]``, then the three scales concatenated
on the anchors), PP-YOLOE's flattened scales — writes every element of every innermost
input exactly once, at a place that views of the output name: the final output, cut by
the last concat into its inputs' regions (:meth:`~.operand_views.StridedView.part`),
each region seen back through the reshapes / transposes that made it (their inverse
:func:`~.operand_views.view_step`), cut again by the concat before them, and so on up to a
*leaf*: a concat input not made by a concat or a view op of the tree. Each leaf is one
loop nest, computed by the elementwise chain of its producers (:class:`~.elementwise.
Chain`: a TransData from NC1HWC0 loads 5HD tiles and stores them as NCHW) and stored into
``tile.strided_view`` of the output that its place is. No intermediate concat or view is
materialised, and GE's one ConcatD task per concat becomes one task for the tree.

A place is only taken when the view is one a tile is stored through as into a tensor
(:func:`~tilegraph.lowering.analysis.elementwise_views.readable`: its rows contiguous, no
repeats); a view the inverse of a reshape cannot express (a merge of axes a region cuts
across), ops after the outermost concat other than views, a value of the tree read
twice, and several outputs are refused with their reason. The view's bounds end at the
leaf's region, so a ragged tile (and the padding lanes of a 5HD tile past the region's
channels) is never stored into the next region, whichever block of a multi-core launch
runs first.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph.data_movement import ConcatOp
from tilegraph.lowering.analysis.elementwise_views import (
    ELEMENTWISE_VIEW_OPS,
    input_view,
    readable,
)
from tilegraph.lowering.analysis.operand_views import (
    VIEW_OPS,
    StridedView,
    ViewChain,
    static_row_major,
    view_step,
)
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.data_movement import open_nest
from tilegraph.lowering.conversion.tiling.elementwise import (
    Chain,
    TilePlan,
    choose_tile,
    tile_loops,
)
from tilegraph.lowering.conversion.tiling.matmul_views import view_of

Leaf = tuple[SSAValue, StridedView]
"""A concat input computed by its own nest, and the view of the output it is stored to."""


def _tree_op(body: KernelBody, value: SSAValue) -> Operation | None:
    """The concat or view op of ``body`` making ``value`` when it is part of the tree
    (computed in the kernel, not read from GM)."""
    op = value.owner
    if isinstance(op, (ConcatOp, *VIEW_OPS)) and op in body.ops and body.source(value) is None:
        return op
    return None


def place_leaves(body: KernelBody, value: SSAValue, view: StridedView) -> list[Leaf] | str:
    """The leaves of the tree making ``value``, which is stored through ``view``: each
    with the view of the output it lands in (module docstring); a reason when a place is
    no view."""
    op = _tree_op(body, value)
    if op is None:
        return [(value, view)]
    data = op.inputs if isinstance(op, ConcatOp) else op.operands[:1]  # not a shape operand
    if any(len(body.users_in_body(v)) > 1 for v in data):
        return "a concat tree with a value read twice"
    leaves: list[Leaf] = []
    if isinstance(op, ConcatOp):
        axis = op.attr("axis") % len(view.shape)
        offset = 0
        for operand in op.inputs:
            extent = int(tensor_of(operand).origin_shape[axis])
            part = view.part(axis, offset, extent)
            if part is None:
                return "a concat region that is no view"
            found = place_leaves(body, operand, part)
            if isinstance(found, str):
                return found
            leaves.extend(found)
            offset += extent
        return leaves
    if static_row_major(op.operands[0]) is None:
        return f"a {op.name} of a tensor that is not row-major in a concat tree"
    back = view_step(view, op, False)
    if back is None:  # a leaf, when it is a view of an input (:func:`_source_view`)
        return [(value, view)]
    return place_leaves(body, op.operands[0], back)


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
class _Nest:
    """One leaf's loop nest: the chain computing it (reading a leaf that is a view of a
    kernel input through that input's GM view) and the view of the output it is stored
    to."""

    leaf: SSAValue
    place: StridedView
    chain: Chain


def _source_view(body: KernelBody, leaf: SSAValue, ops: list[Operation]) -> ViewChain | None:
    """``leaf`` as a readable view of a kernel input, when ``ops`` (its producers) are
    view ops and slices only (YOLOv8's C2f half ``x[:, :c]``, a transposed input)."""
    if not ops or not all(isinstance(op, ELEMENTWISE_VIEW_OPS) for op in ops):
        return None
    chain = input_view(leaf, set(ops))
    return chain if chain is not None and body.source(chain.base) is not None else None


def _leaf_nest(
    body: KernelBody, b: KernelBuilder, leaf: SSAValue, place: StridedView
) -> _Nest | str:
    """The nest computing ``leaf`` from the kernel's inputs (by the elementwise chain of
    its producers, or read through a view of an input), tiled in the space its place
    takes (NCHW's as 5HD tiles when a TransData is in it)."""
    if not readable(place):
        return "a concat input placed in a view whose rows are not contiguous"
    ops = producers(leaf, body.ops)
    viewed = _source_view(body, leaf, ops)
    if viewed is not None:
        ops = []
    elif any(isinstance(op, (ConcatOp, *ELEMENTWISE_VIEW_OPS)) for op in ops):
        return "a concat input made by views that are no strided view of an input"
    shape = tuple(int(d) for d in tensor_of(leaf).storage_shape)
    arg = None if viewed is None else body.source(viewed.base)
    sources = {} if viewed is None or arg is None else {leaf: view_of(b, arg, viewed.view)}
    chain = Chain(body, ops, shape, space_value=leaf, sources=sources)
    if leaf not in {r for op in chain.ops for r in op.results} and leaf not in chain.inputs:
        chain.inputs.append(leaf)  # copied as it is
    stored = len(place.shape) == 4 and chain.space == "5hd"
    if not stored and tuple(chain.out_shape) != place.shape:
        return "a concat input held in another layout than the view it is stored to"
    return chain.unsupported() or _Nest(leaf, place, chain)


def emit_concat_tree_kernel(body: KernelBody, b: KernelBuilder, least: int) -> str | None:
    """Tile a kernel whose one output is a tree of concats and views: one nest per leaf,
    each tile stored into the leaf's view of the output (module docstring); ``least``:
    the elements a tile keeps when it shrinks to occupy more cores. Returns why not
    (None when emitted)."""
    if len(body.writes) != 1:
        return "a concat kernel with several outputs"
    value, out_arg = body.writes[0]
    shape = static_row_major(value)
    if shape is None:
        return "a concat tree whose output is not row-major"
    leaves = place_leaves(body, value, StridedView.row_major(shape))
    if isinstance(leaves, str):
        return leaves
    nests: list[_Nest] = []
    plans: list[TilePlan] = []
    for leaf, place in leaves:
        nest = _leaf_nest(body, b, leaf, place)
        if isinstance(nest, str):
            return nest
        chain = nest.chain
        plan = choose_tile(
            chain.out_shape,
            lambda t, c=chain: c.ub_bytes(b.hw, t),
            b.ub_budget(),
            depth=b.split_depth(),
            cores=b.hw.vector_cores,
            least=least,
        )
        if plan is None:
            return "no tile of a concat input fits UB"
        nests.append(nest)
        plans.append(plan)
    if b.dry_run:
        return None
    several = len(nests) > 1
    for nest, plan in zip(nests, plans, strict=True):
        chain, leaf = nest.chain, nest.leaf
        target = view_of(b, out_arg, nest.place)
        chain.allocate(b, plan.tile_shape())
        stack, offsets = tile_loops(b, plan)
        open_nest(b, stack, several and plan.count() == 1)
        with stack:
            for v in chain.input_tiles:
                chain.load(b, v, offsets)
            tiles = chain.compute(b, {}, dict(chain.input_tiles))
            chain.store(b, tiles[leaf], target, offsets)
    b.tiles = sum(p.count() for p in plans)
    return None
