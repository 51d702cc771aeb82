"""Elementwise operands that are strided *views* of a tensor in GM (``fuse-ops``' input
views).

A reshape, squeeze, unsqueeze, flatten, transpose or static forward slice between a tensor
in GM and an elementwise op only re-indexes the tensor: Mamba-2's ``dt`` sliced out of its
projection and unsqueezed before ``softplus(dt + bias)``, DAB-DETR's box coordinates cut
out of ``[B, Q, 4]`` before they are scaled, a transpose of ``[B, S, H]`` to ``[B, H, S]``
before a product. The vector kernel of the elementwise ops reads such an operand's tiles
through a strided view of the tensor (``tile.strided_view``, as a matmul reads its operand
views, :mod:`.operand_views`), so the view ops need no kernel moving the bytes and the
elementwise ops no launch of their own on the other side of them.

This module decides what such a view is, for both sides:

* ``fuse-ops`` lets a view op join an anchor-less elementwise group as no work when every
  reader of its result is in the group and the chain of view ops in the group, from the
  tensor it starts from to each elementwise operand, is a :func:`readable` view
  (:func:`~tilegraph.passes.fuse_legality.joins_as_input_view`);
* likewise an elementwise op joins a group made of the reshapes and transposes of its
  result (an *output view*: :func:`output_view`, a chain of bijective view ops only), and
  the kernel writes its tiles through a view of the output they make;
* the elementwise strategy maps each such operand to a view of the kernel argument the
  chain starts from, and each output view to a view of the kernel's output
  (:func:`~tilegraph.lowering.conversion.tiling.elementwise_views.view_sources`).

A view qualifies when every tensor on the chain is static and row-major, it repeats no
element (no expand) and its innermost dim is unit-stride (or one element): each row of a
tile is one DMA burst, as for the tensor itself. A transpose that moves the last axis, or
a slice with a step along it, would read one element per burst: it stays a kernel of its
own (the transpose kernel turns it on the vector unit).
"""

from __future__ import annotations

from collections.abc import Container

from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph.data_movement import SliceOp
from tilegraph.dialects.graph.slicing import slice_bounds
from tilegraph.lowering.analysis.operand_views import (
    VIEW_OPS,
    StridedView,
    ViewChain,
    result_view,
    static_row_major,
    view_step,
    walked_view,
)
from tilegraph.passes.simplify.match import constant_ints

ELEMENTWISE_VIEW_OPS = (*VIEW_OPS, SliceOp)
"""The graph ops an elementwise operand's view chain is made of."""


def _slice_view(view: StridedView, op: SliceOp) -> StridedView | None:
    """``view`` (the slice's input) cut by a slice of constant bounds and positive steps;
    None otherwise (a reversed slice walks memory backwards, which no strided view of
    non-negative strides says)."""
    starts, ends = constant_ints(op.starts), constant_ints(op.ends)
    if starts is None or ends is None:
        return None
    rank = len(view.shape)
    axes = tuple(range(len(starts))) if op.axes is None else constant_ints(op.axes)
    steps = (1,) * len(starts) if op.steps is None else constant_ints(op.steps)
    if axes is None or steps is None or not len(axes) == len(starts) == len(ends) == len(steps):
        return None
    result: StridedView | None = view
    for axis, start, end, step in zip(axes, starts, ends, steps, strict=True):
        if result is None or not -rank <= axis < rank or step < 1:
            return None
        first, _, length = slice_bounds(view.shape[axis % rank], start, end, step)
        result = result.part(axis % rank, first, length, step)
    return result


def view_through(view: StridedView, op: Operation, result: SSAValue) -> StridedView | None:
    if isinstance(op, SliceOp):
        return _slice_view(view, op)
    return view_step(view, op, True, result)


def readable(view: StridedView) -> bool:
    """Whether an elementwise kernel reads ``view`` tile by tile as it reads a tensor: it
    repeats no element and its rows are contiguous (module docstring)."""
    return bool(view.shape) and not view.groups and (view.strides[-1] == 1 or view.shape[-1] == 1)


def input_view(value: SSAValue, views: Container[Operation]) -> ViewChain | None:
    """``value`` as a readable view of the tensor that the chain of ops in ``views`` making
    it starts from (the chain's ``base``); None when ``value`` is not made by such ops or
    the chain is no readable view."""
    ops: list[Operation] = []
    values: list[SSAValue] = []
    current = value
    while True:
        owner = current.owner
        if not isinstance(owner, ELEMENTWISE_VIEW_OPS) or owner not in views:
            break
        if static_row_major(current) is None:
            return None
        ops.insert(0, owner)
        values.insert(0, current)
        current = owner.operands[0]
    view = walked_view(current, ops, values, view_through)
    if view is None or not readable(view):
        return None
    return ViewChain(current, tuple(ops), view)


def output_view(value: SSAValue) -> ViewChain | None:
    """The chain of reshapes, squeezes, unsqueezes and transposes after ``value`` (each the
    sole reader of the last) as a readable view of the tensor it ends in, through which a
    kernel computing ``value`` writes it (:func:`~.operand_views.result_view`, as a matmul
    writes its head merge); None without such a chain."""
    chain = result_view(value)
    return chain if chain is not None and readable(chain.view) else None
