"""Selections along an axis on the vector cores: arg_max / arg_min (``tile.varg``), top_k
(``tile.vtopk`` then ``tile.vtake``: one kernel, two outputs) and one_hot
(``tile.vonehot``).

arg_max, arg_min and top_k hold the selected axis whole in a tile (and every dim after
it), split before it as large as half of UB allows — a reduction's tiling
(:mod:`.reduction`): each tile selects on its own, the tile loops are ``tile.parallel``.
Per tile: load, the selection, store (top_k stores its values and its indices, each to its
own GM output; ties go to the lower position, as the graph level's stable sort). An axis
too long for half of UB stays on the host (GE merges sorted runs across tiles; not
built), as does a ``k`` computed at run time.

one_hot tiles its output as an elementwise kernel does (:func:`.elementwise.choose_tile`);
each tile loads the indices under it (the tile without the new axis) and
``tile.vonehot`` compares them (negative ones plus ``depth``) with the positions along the
new axis, from the tile's offset there, writing ``on`` or ``off``. ``depth`` and the
``values`` pair are compile-time constants (``lower-graph-to-kernels`` inlines them);
else the op stays on the host.
"""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np
from xdsl.dialects.builtin import i64
from xdsl.ir import SSAValue

from tilegraph.dialects.graph.base import constant_value
from tilegraph.dialects.graph.indexing import OneHotOp, TopKOp
from tilegraph.dialects.graph.reduction import ArgMaxOp, ArgMinOp
from tilegraph.dialects.tile import ArgOp, CopyOp, TakeOp, memref_shape
from tilegraph.dialects.tile import OneHotOp as TileOneHotOp
from tilegraph.dialects.tile import TopKOp as TileTopKOp
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.data_movement import lone_row_major_source
from tilegraph.lowering.conversion.tiling.elementwise import (
    TilePlan,
    choose_tile,
    store,
    tile_loops,
)

SELECTION_OPS = (ArgMaxOp, ArgMinOp, TopKOp, OneHotOp)
INDEX_BYTES = 8
"""The selections write int64 positions, as the graph ops do."""


def _ub_bytes(b: KernelBuilder, sizes: list[tuple[int, int]]) -> int:
    """UB bytes of tiles of (elements, element bytes)."""
    return sum(aligned_bytes(b.hw, "UB", n * eb) for n, eb in sizes)


def _axis_plan(b: KernelBuilder, shape, axis: int, tile_bytes) -> TilePlan | None:
    """Tiles holding ``axis`` and the dims after it whole."""
    return choose_tile(shape, tile_bytes, b.ub_budget(), axis, b.split_depth(), b.hw.vector_cores)


def _at_axis(tile: list[int], axis: int, n: int, keep: bool = True) -> list[int]:
    """``tile`` with ``n`` elements along ``axis`` (``keep`` False and n 1: without it)."""
    if not keep:
        return [d for i, d in enumerate(tile) if i != axis]
    return [n if i == axis else d for i, d in enumerate(tile)]


def _out_offsets(b: KernelBuilder, offsets: list[SSAValue], axis: int, keep: bool):
    return [b.index(0) if i == axis else o for i, o in enumerate(offsets) if keep or i != axis]


def emit_selection_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a lone arg_max / arg_min / top_k / one_hot (see the module docstring); returns
    why it cannot (None when emitted)."""
    found = lone_row_major_source(body, SELECTION_OPS, "selection along an axis")
    if isinstance(found, str):
        return found
    op, src_arg = found
    assert isinstance(op, SELECTION_OPS)
    if isinstance(op, OneHotOp):
        return _one_hot(op, src_arg, body, b)
    shape = memref_shape(src_arg)
    if not shape or not all(shape):
        return f"a {op.name} of a scalar or an empty tensor"
    axis = int(op.attr("axis")) % len(shape)
    element = tensor_of(op.operands[0]).element_type
    eb = element_bytes(element)
    if isinstance(op, TopKOp):
        return _top_k(op, src_arg, body, b, axis)
    keep = bool(op.attr("keepdims"))
    if not keep and len(shape) == 1:
        return f"a {op.name} to a scalar"

    def tile_bytes(tile) -> int:
        return _ub_bytes(b, [(prod(tile), eb), (prod(tile) // tile[axis], INDEX_BYTES)])

    plan = _axis_plan(b, shape, axis, tile_bytes)
    if plan is None:
        return f"the axis of a {op.name} does not fit UB"
    if b.dry_run:
        return None
    (_, out_arg), *_ = body.writes
    tile = plan.tile_shape()
    x = b.buffer(tile, element, "UB", "x_ub")
    out = b.buffer(_at_axis(tile, axis, 1, keep), i64, "UB", "arg_ub")
    kind = "max" if isinstance(op, ArgMaxOp) else "min"
    stack, offsets = tile_loops(b, plan)
    with stack:
        b.add(CopyOp(src_arg, offsets, x, [b.index(0)] * len(tile)))
        b.add(ArgOp(x, out, kind, axis, bool(op.attr("select_last_index"))))
        store(b, out, out_arg, _out_offsets(b, offsets, axis, keep))
    b.tiles = plan.count()
    return None


def _top_k(op: TopKOp, src_arg: SSAValue, body: KernelBody, b: KernelBuilder, axis: int):
    shape = memref_shape(src_arg)
    k_value = constant_value(op.K)
    if k_value is None:
        return "a top_k whose k is computed at run time"
    k = int(np.asarray(k_value).reshape(-1)[0])
    if not 1 <= k <= shape[axis]:
        return f"a top_k of k = {k} along an axis of {shape[axis]}"
    element = tensor_of(op.X).element_type
    eb = element_bytes(element)

    def tile_bytes(tile) -> int:
        picked = prod(tile) // tile[axis] * k
        return _ub_bytes(b, [(prod(tile), eb), (picked, INDEX_BYTES), (picked, eb)])

    plan = _axis_plan(b, shape, axis, tile_bytes)
    if plan is None:
        return "the axis of a top_k does not fit UB"
    if b.dry_run:
        return None
    outputs = dict(body.writes)
    tile = plan.tile_shape()
    x = b.buffer(tile, element, "UB", "x_ub")
    indices = b.buffer(_at_axis(tile, axis, k), i64, "UB", "indices_ub")
    values = b.buffer(_at_axis(tile, axis, k), element, "UB", "values_ub")
    stack, offsets = tile_loops(b, plan)
    with stack:
        b.add(CopyOp(src_arg, offsets, x, [b.index(0)] * len(tile)))
        b.add(TileTopKOp(x, indices, axis, bool(op.attr("largest"))))
        at = _out_offsets(b, offsets, axis, True)
        if op.values in outputs:
            b.add(TakeOp(x, indices, values, axis))
            store(b, values, outputs[op.values], at)
        if op.indices in outputs:
            store(b, indices, outputs[op.indices], at)
    b.tiles = plan.count()
    return None


def _one_hot(op: OneHotOp, idx_arg: SSAValue, body: KernelBody, b: KernelBuilder):
    depth_value, values = constant_value(op.depth), constant_value(op.values)
    if depth_value is None or values is None:
        return "a one_hot whose depth or values are computed at run time"
    depth = int(np.asarray(depth_value).reshape(-1)[0])
    off, on = (float(v) for v in np.asarray(values).reshape(-1)[:2])
    (written, out_arg), *_ = body.writes
    out_shape = memref_shape(out_arg)
    if len(out_shape) < 2:
        return "a one_hot of a scalar index"
    if not all(out_shape):
        return "a one_hot with an empty output"
    axis = int(op.attr("axis")) % len(out_shape)
    element: Any = tensor_of(written).element_type
    eb = element_bytes(element)
    idx_element = tensor_of(op.indices).element_type
    idx_eb = element_bytes(idx_element)

    def tile_bytes(tile) -> int:
        return _ub_bytes(b, [(prod(tile), eb), (prod(tile) // tile[axis], idx_eb)])

    plan = choose_tile(
        out_shape, tile_bytes, b.ub_budget(), depth=b.split_depth(), cores=b.hw.vector_cores
    )
    if plan is None:
        return "no one_hot tile fits UB"
    if b.dry_run:
        return None
    tile = plan.tile_shape()
    idx = b.buffer(_at_axis(tile, axis, 1, keep=False), idx_element, "UB", "indices_ub")
    out = b.buffer(tile, element, "UB", "one_hot_ub")
    stack, offsets = tile_loops(b, plan)
    with stack:
        idx_at = [o for i, o in enumerate(offsets) if i != axis]
        b.add(CopyOp(idx_arg, idx_at, idx, [b.index(0)] * len(idx_at)))
        b.add(TileOneHotOp(idx, offsets[axis], out, axis, depth, on, off))
        store(b, out, out_arg, offsets)
    b.tiles = plan.count()
    return None
