"""A gather of constant indices that form an affine grid is a strided *view* of its data.

``graph.gather`` of ``data`` along axis ``a`` with compile-time indices ``idx`` whose
values are ``start + sum_d k_d * step_d`` over the index positions ``k`` (a scalar:
torch's ``x[:, 0]`` / ``x.select``; a range: ``x[:, 2:9:3]``; a grid: ``unfold``'s patch
windows ``p * stride + j``, an adaptive pool's overlapping windows ``i + a``) reads
``data[..., start + sum k_d step_d, ...]``: the view of the data with the index dims in
place of axis ``a``, each at stride ``step_d * stride(a)``, offset ``start * stride(a)``
(:func:`gather_view`; negative indices wrapped first, as the executors wrap them). GE
folds such a gather into the strided read of its consumer; so does this kernel.

A kernel body that is one chain of such gathers and view ops (reshape, flatten, squeeze,
unsqueeze, transpose, static forward slice: :func:`~tilegraph.lowering.analysis.
elementwise_views.view_through`) from a kernel input to the value it writes — PatchTST's
``unfold -> transpose``, TimeSformer's ``x[:, 0] -> view`` — composes into one strided view
``V`` of the input in the output's shape (:func:`strided_chain`), and the kernel is a copy
of ``V`` into the output, tile by tile::

    for tile of out:                                            tile.parallel
      copy  V^p[tile permuted]  -> in_ub     (MTE2, each row one burst)
      [vtranspose in_ub -> out_ub {perm}]    (V's unit-stride dim not last)
      copy  out_ub -> out[tile]              (MTE3, cut at the output's end)

``V^p`` is ``V`` with its unit-stride dim moved last (``p``): a row of the tile is then a
contiguous run of the input, and the vector unit puts the dims back in the output's order
(as the transpose kernel does). A view with no unit-stride dim (a gather along the last
axis: one element per burst), one that repeats an element (equal indices: a zero step),
indices that are no affine grid, run-time indices or a body that is no such chain are left
to the other strategies (:func:`takes_strided_gather` says no), which split the group.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph.base import constant_value
from tilegraph.dialects.graph.data_movement import GatherOp
from tilegraph.dialects.tile import CopyOp, TransposeOp
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.analysis.elementwise_views import ELEMENTWISE_VIEW_OPS, view_through
from tilegraph.lowering.analysis.operand_views import StridedView, static_row_major, walked_view
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.elementwise import choose_tile, store, tile_loops
from tilegraph.lowering.conversion.tiling.matmul_views import view_of


def affine_grid(values: np.ndarray) -> tuple[int, tuple[int, ...]] | None:
    """``(start, steps)`` when ``values[k] == start + sum_d k_d * steps[d]`` for every
    position ``k`` with each step of a dim longer than one positive (a dim of one takes
    step 0); None otherwise (an empty grid, a repeat or a backward step included)."""
    if values.size == 0:
        return None
    start = int(values.reshape(-1)[0])
    steps: list[int] = []
    for d, n in enumerate(values.shape):
        if n == 1:
            steps.append(0)
            continue
        step = int(values[tuple(int(e == d) for e in range(values.ndim))]) - start
        if step <= 0:
            return None
        steps.append(step)
    grid = np.full(values.shape, start, np.int64)
    for d, step in enumerate(steps):
        shape = [1] * values.ndim
        shape[d] = values.shape[d]
        grid = grid + np.arange(values.shape[d], dtype=np.int64).reshape(shape) * step
    return (start, tuple(steps)) if np.array_equal(grid, values) else None


def gather_view(view: StridedView, op: Operation) -> StridedView | None:
    """``view`` (the gather's data) through ``op``, a gather whose compile-time indices are
    in range and form an affine grid (:func:`affine_grid`, after wrapping negatives);
    None otherwise (run-time indices included)."""
    if not isinstance(op, GatherOp) or (values := constant_value(op.indices)) is None:
        return None
    rank = len(view.shape)
    axis = op.attr("axis") % rank
    size, stride = view.shape[axis], view.strides[axis]
    rows = np.asarray(values).astype(np.int64)
    if view.group(axis) != 1 or ((rows < -size) | (rows >= size)).any():
        return None
    grid = affine_grid(np.where(rows < 0, rows + size, rows))
    if grid is None:
        return None
    start, steps = grid
    shape = (*view.shape[:axis], *rows.shape, *view.shape[axis + 1 :])
    strides = (*view.strides[:axis], *(s * stride for s in steps), *view.strides[axis + 1 :])
    groups = (
        (*view.groups[:axis], *(1,) * rows.ndim, *view.groups[axis + 1 :]) if view.groups else ()
    )
    return StridedView(shape, strides, view.offset + start * stride, groups)


GATHER_CHAIN_OPS = (GatherOp, *ELEMENTWISE_VIEW_OPS)
"""The ops a gather view chain is made of (a gather only of a constant grid)."""


def _step(view: StridedView, op: Operation, result: SSAValue) -> StridedView | None:
    return gather_view(view, op) if isinstance(op, GatherOp) else view_through(view, op, result)


@dataclass(frozen=True)
class ViewedInput:
    """A value of a kernel body that is a strided view of a kernel input."""

    arg: SSAValue
    """The GM argument (row-major) the view reads."""
    view: StridedView
    """The value over ``arg``."""
    ops: tuple[Operation, ...]
    """The body's ops making the value, in program order (gathers and view ops)."""


def viewed_input(body: KernelBody, value: SSAValue) -> ViewedInput | str:
    """``value`` as a strided view of a kernel input when the body's ops making it are one
    chain of constant-grid gathers and view ops, each read by the next only (module
    docstring); else why not. A reduction whose operand is such a chain (TimeSformer's
    ``x[:, 0] -> view -> mean``) would read its tiles through :attr:`ViewedInput.view`."""
    ops: list[Operation] = []
    current, members = value, set(body.ops)
    while (owner := current.owner) in members and isinstance(owner, GATHER_CHAIN_OPS):
        if ops and not current.has_one_use():
            return "a gather view chain whose values are read elsewhere too"
        ops.insert(0, owner)
        current = owner.operands[0]
    if not any(isinstance(op, GatherOp) for op in ops):
        return "a view chain without a gather"
    arg = body.source(current)
    values = [op.results[0] for op in ops]
    if arg is None or any(static_row_major(v) is None for v in values):
        return "a gather view chain of a computed, symbolic or non-row-major tensor"
    view = walked_view(current, ops, values, _step)
    if view is None or view.groups:
        return "a gather whose constant indices (or views) are no strided window"
    if 1 not in view.strides and view.shape[-1] != 1:
        return "a gather view with no contiguous dim (one element per burst)"
    return ViewedInput(arg, view, tuple(ops))


def strided_chain(body: KernelBody) -> ViewedInput | str:
    """The view :func:`viewed_input` finds for the one value ``body`` writes when the chain
    making it is the whole body; else why not."""
    if not all(isinstance(op, GATHER_CHAIN_OPS) for op in body.ops):
        return "a gather with ops after it that are no views"
    if len(body.writes) != 1:
        return "a gather view chain with several outputs"
    found = viewed_input(body, body.writes[0][0])
    if isinstance(found, str) or len(found.ops) == len(body.ops):
        return found
    return "a gather view chain that does not write its last value only"


def takes_strided_gather(body: KernelBody) -> bool:
    """A strategy's ``takes``: a body :func:`strided_chain` reads as one strided view."""
    return len(body.ops) > 1 and not isinstance(strided_chain(body), str)


def emit_strided_gather_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Copy the strided view :func:`strided_chain` finds into the output, each tile loaded
    with the view's unit-stride dim last and turned on the vector unit when that is not
    the output's last dim (module docstring); returns why it cannot (None when emitted)."""
    found = strided_chain(body)
    if isinstance(found, str):
        return found
    source, view = found.arg, found.view
    value, out_arg = body.writes[0]
    rank = len(view.shape)
    unit = rank - 1 if view.shape[-1] == 1 or view.strides[-1] == 1 else view.strides.index(1)
    order = [*(d for d in range(rank) if d != unit), unit]  # the load's dims, unit-stride last
    perm = [order.index(d) for d in range(rank)]  # the out tile = the loaded one transposed
    turned = order != list(range(rank))
    element = tensor_of(value).element_type
    eb = element_bytes(element)
    plan = choose_tile(
        view.shape,
        lambda t: (2 if turned else 1) * max(1, prod(t)) * eb,
        b.ub_budget(),
        depth=b.split_depth(),
        cores=b.hw.vector_cores,
    )
    if plan is None:
        return "no tile of a gather view fits UB"
    if b.dry_run:
        return None
    loaded = view_of(b, source, view.transpose(order))
    tile = plan.tile_shape()
    in_ub = b.buffer([tile[d] for d in order], element, "UB", "in_ub")
    out_ub = b.buffer(tile, element, "UB", "out_ub") if turned else in_ub
    stack, offsets = tile_loops(b, plan)
    with stack:
        b.add(CopyOp(loaded, [offsets[d] for d in order], in_ub, [b.index(0)] * rank))
        if turned:
            b.add(
                TransposeOp.create(
                    operands=[in_ub, out_ub],
                    properties={"perm": DenseArrayBase.from_list(i64, perm)},
                )
            )
        store(b, out_ub, out_arg, offsets)
    b.tiles = plan.count()
    return None
