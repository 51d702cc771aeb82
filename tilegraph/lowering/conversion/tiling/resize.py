"""Resize on the vector cores: a nearest resize as DMA windows and a ``tile.vpick`` gather
(linear and cubic ones share the row tiling here: :mod:`.resize_taps`).

Shapes are static at this level, so a nearest resize is a compile-time index table per
resized axis: output position ``o`` reads input position ``t[o]`` (the ONNX coordinate
transformation and nearest rounding, as :func:`~tilegraph.dialects.graph.spatial.axis_weights`
computes them for the graph level). The kernel resizes the two innermost axes (rows and
columns; the leading ones, N and C of an NCHW tensor, must keep their size):

* the output is tiled as the data-movement kernels tile it (:func:`.elementwise.choose_tile`,
  the columns never split): a tile is some leading positions (several channels when whole
  planes fit UB) or some output rows of one plane, always whole rows;
* each tile loads the *window* of input rows its output rows read, ``t[o0] .. t[o_last]``,
  every column (``tile.copy`` GM -> UB; rows are contiguous runs, the MTE moves them);
* ``tile.vpick`` gathers the tile out of the window by the row table (relative to the
  window) and the column table: ``dst[.., i, j] = window[.., r[i], c[j]]``;
* the tile is stored (UB -> GM).

The row tiles become loops, not one nest per tile: consecutive tiles whose relative row
table, window height and row count agree and whose windows advance by a constant step form
one ``scf.for`` (a scale ``p/q`` in lowest terms repeats its table every ``p`` output rows,
so a tile height that is a multiple of ``p`` makes every interior tile the same; the first
and last tiles, where the table clips at the input's edges, and a ragged last tile are
nests of their own). The tile height is chosen among the largest that fit for the fewest
tiles plus nests (each tile starts its DMAs, each nest is code); more than
:data:`~.data_movement.MAX_REGIONS` nests stays on the host. Every loop is ``tile.parallel``
(``split-cores`` shares the nests out over the vector cores).

What stays on the host: ``tf_crop_and_resize`` (outputs
outside the input take the extrapolation value), resizes of a leading axis or of a 1-D
tensor, scales or sizes computed at run time, and tensors that are not row-major (Resize's
facts are ND only: the format engine gives it origin-format tensors, so an NC1HWC0 resize
never reaches this strategy).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from math import prod
from typing import Any

import numpy as np
from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.graph.base import constant_value
from tilegraph.dialects.graph.spatial import ResizeOp, axis_weights, output_sizes
from tilegraph.dialects.tile import CopyOp, PickOp, memref_shape
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.data_movement import (
    MAX_REGIONS,
    lone_row_major_source,
    open_nest,
)
from tilegraph.lowering.conversion.tiling.elementwise import TilePlan, choose_tile

HEIGHT_CANDIDATES = 64
"""Tile heights tried below the largest that fits, for the one with the fewest nests."""


def _parameter(value: SSAValue | None) -> np.ndarray | None | str:
    """A compile-time operand's data (None: not given; a string: computed at run time)."""
    if value is None:
        return None
    data = constant_value(value)
    if data is None:
        return "run time"
    data = np.asarray(data)
    return None if data.size == 0 else data


def resize_weights(
    op: ResizeOp, in_shape: Sequence[int], out_shape: Sequence[int]
) -> list[np.ndarray | None] | str:
    """Per axis the matrix ``W[out, in]`` that resizes it (None: the axis keeps its
    size and is not resized), as the graph level computes them; or why there are none."""
    transform = str(op.attr("coordinate_transformation_mode"))
    if transform == "tf_crop_and_resize":
        return "a tf_crop_and_resize resize (extrapolated outputs)"
    # roi only matters under tf_crop_and_resize, refused above
    found = [_parameter(v) for v in (op.scales, op.sizes)]
    if any(isinstance(f, str) for f in found):
        return "resize scales or sizes computed at run time"
    scales, sizes = (None if isinstance(f, str) else f for f in found)
    rank = len(in_shape)
    axes = [a % rank for a in (op.attr("axes") or range(rank))]
    policy = str(op.attr("keep_aspect_ratio_policy"))
    out, ratios = output_sizes(list(in_shape), axes, scales, sizes, None, policy, transform)
    if list(out) != list(out_shape):
        return "a resize whose output shape disagrees with its scales"
    attrs = {name: op.attr(name) for name in ResizeOp.DEFAULTS}
    weights: list[np.ndarray | None] = [None] * rank
    for axis, ratio in zip(axes, ratios, strict=True):
        w, _ = axis_weights(in_shape[axis], out_shape[axis], ratio, attrs, (0.0, 1.0))
        if not (w.shape[0] == w.shape[1] and np.array_equal(w, np.eye(w.shape[0]))):
            weights[axis] = w
    return weights


def nearest_tables(
    op: ResizeOp, in_shape: Sequence[int], out_shape: Sequence[int]
) -> list[np.ndarray] | str:
    """The source position of every output position, per axis, of a nearest resize (the
    identity on axes it does not resize); or why there is no such table."""
    if op.attr("mode") != "nearest":
        return f"a {op.attr('mode')} resize (weighted taps: see resize_taps)"
    weights = resize_weights(op, in_shape, out_shape)
    if isinstance(weights, str):
        return weights
    # one weight of 1 per output position
    return [np.arange(n) if w is None else w.argmax(axis=1)
            for n, w in zip(out_shape, weights, strict=True)]  # fmt: skip


def leading_axes_kept(weights: Sequence[np.ndarray | None]) -> str | None:
    """Why a resize is not of the two innermost axes only (None: it is)."""
    if len(weights) < 2:
        return "a resize of a 1-D tensor"
    if any(w is not None for w in weights[:-2]):
        return "a resize of an axis other than the two innermost"
    return None


@dataclass(frozen=True)
class RowTable:
    """Per output row the first (``low``) and last (``high``) input row it reads, and
    ``relative(start, stop, first)``: what output rows ``start:stop`` read, relative to a
    window starting at input row ``first`` — row tiles whose windows have the same height
    and whose relative tables agree share a loop."""

    low: np.ndarray
    high: np.ndarray
    relative: Callable[[int, int, int], tuple[Any, ...]]


def nearest_rows(table: np.ndarray) -> RowTable:
    """A nearest resize's rows: each output row reads the one input row ``table[o]``."""
    return RowTable(table, table, lambda s, e, f: tuple(int(i) - f for i in table[s:e]))


@dataclass(frozen=True)
class RowNest:
    """``count`` row tiles of ``rows`` output rows each, the k-th from output row
    ``out_start + k * rows``, reading the window of ``height`` input rows from
    ``src_start + k * src_step``; ``table``: what the rows read in the window (a nearest
    resize: their positions; a resize by taps: their taps' positions and weights)."""

    out_start: int
    rows: int
    src_start: int
    src_step: int
    height: int
    table: tuple[Any, ...]
    count: int = 1


def row_nests(rows_of: RowTable | np.ndarray, rows: int) -> list[RowNest]:
    """The row tiles of ``rows`` output rows (the last ragged), grouped into loops; a
    table (an array) is a nearest resize's (:func:`nearest_rows`)."""
    rt = nearest_rows(rows_of) if isinstance(rows_of, np.ndarray) else rows_of
    nests: list[RowNest] = []
    total = len(rt.low)
    for start in range(0, total, rows):
        stop = min(start + rows, total)
        first = int(rt.low[start:stop].min())
        height = int(rt.high[start:stop].max()) - first + 1
        tile = RowNest(start, stop - start, first, 0, height, rt.relative(start, stop, first))
        last = nests[-1] if nests else None
        same = last is not None and (last.rows, last.height, last.table) == (
            tile.rows, tile.height, tile.table,
        )  # fmt: skip
        if last is not None and same:
            step = first - (last.src_start + (last.count - 1) * last.src_step)
            if last.count == 1 or step == last.src_step:
                nests[-1] = RowNest(last.out_start, last.rows, last.src_start, step,
                                    last.height, last.table, last.count + 1)  # fmt: skip
                continue
        nests.append(tile)
    return nests


def _window_height(rt: RowTable, rows: int) -> int:
    """The most input rows a tile of ``rows`` output rows reads."""
    total = len(rt.low)
    return max(int(rt.high[s : s + rows].max() - rt.low[s : s + rows].min()) + 1
               for s in range(0, total, rows))  # fmt: skip


def plan_rows(
    rt: RowTable,
    out_shape: Sequence[int],
    in_width: int,
    eb: int,
    budget: int,
    beyond_window: Callable[[Sequence[int]], int],
    cores: int = 1,
) -> tuple[TilePlan, list[RowNest]] | None:
    """The tile of the output (whole rows) and the row nests; None: no row fits.
    ``beyond_window(tile)``: the elements of the UB tiles besides the input window. Tiles
    shrink to leave none of ``cores`` idle (:func:`~.elementwise.share_over_cores`)."""
    rank = len(out_shape)

    def tile_bytes(tile: Sequence[int]) -> int:
        lead = prod(tile[:-2])
        return (lead * _window_height(rt, tile[-2]) * in_width + beyond_window(tile)) * eb

    plan = choose_tile(out_shape, tile_bytes, budget, whole_from=rank - 1, cores=cores)
    if plan is None:
        return None
    if plan.axis < rank - 2:
        return plan, row_nests(rt, out_shape[-2])
    found = _row_tiles(rt, plan)
    if cores > 1 and len(found[1]) > MAX_REGIONS:
        # shared rows whose tables never repeat make a nest each: keep the tiles that fit
        return plan_rows(rt, out_shape, in_width, eb, budget, beyond_window)
    return found


def _row_tiles(rt: RowTable, plan: TilePlan) -> tuple[TilePlan, list[RowNest]]:
    """``plan`` (split at the rows) with the height at most its own that gives the fewest
    tiles plus nests, and its row nests."""
    tallest = plan.size
    heights = range(tallest, max(tallest - HEIGHT_CANDIDATES, 0), -1)

    def weight(h: int) -> tuple[int, int]:  # each tile starts DMAs, each nest is code
        nests = row_nests(rt, h)
        return sum(n.count for n in nests) + len(nests), -h

    best = min(heights, key=weight)
    return TilePlan(plan.shape, plan.axis, best), row_nests(rt, best)


def lead_tiles(plan: TilePlan) -> int:
    """Tiles of the leading dims (one per plane when the rows split)."""
    if plan.axis == len(plan.shape) - 2:
        return prod(plan.shape[: plan.axis])
    return plan.count()


Compute = Callable[[KernelBuilder, SSAValue, RowNest, list[int]], SSAValue]
"""``compute(b, window, nest, lead)``: the vector ops that make a row tile out of its input
window (``lead``: the tile's leading dims); returns the UB tile to store."""


def emit_row_nest(
    b: KernelBuilder,
    src_arg: SSAValue,
    out_arg: SSAValue,
    plan: TilePlan,
    nest: RowNest,
    compute: Compute,
    element: Attribute,
    fence: bool,
) -> None:
    """One nest of row tiles: load each tile's window of input rows, ``compute`` the tile,
    store it; ``fence``: the kernel has several nests (see :func:`.open_nest`)."""
    tile = plan.tile_shape()
    lead = tile[:-2]
    in_width = memref_shape(src_arg)[-1]
    window = b.buffer([*lead, nest.height, in_width], element, "UB", "window_ub")
    zeros = [b.index(0)] * len(tile)
    with ExitStack() as stack:
        open_nest(b, stack, fence and nest.count * lead_tiles(plan) == 1)
        offsets: list[SSAValue] = []
        for d, extent in enumerate(plan.shape[:-2]):
            step = plan.size if d == plan.axis else 1
            size = extent if d > plan.axis else step
            offsets.append(stack.enter_context(b.loop(extent, size, f"i{d}", True)))
        k = stack.enter_context(b.loop(nest.count, 1, "rows", True))
        src = [*offsets, b.affine(k, nest.src_step, nest.src_start), b.index(0)]
        b.add(CopyOp(src_arg, src, window, zeros))
        result = compute(b, window, nest, lead)
        out = [*offsets, b.affine(k, nest.rows, nest.out_start), b.index(0)]
        b.add(CopyOp(result, zeros, out_arg, out))


def _picker(col_table: np.ndarray, element: Attribute) -> Compute:
    def compute(b: KernelBuilder, window: SSAValue, nest: RowNest, lead: list[int]):
        picked = b.buffer([*lead, nest.rows, len(col_table)], element, "UB", "resized_ub")
        lead_tables = [range(n) for n in lead]
        b.add(PickOp(window, picked, [*lead_tables, nest.table, col_table.tolist()]))
        return picked

    return compute


@dataclass(frozen=True)
class LoneResize:
    """A kernel that is one row-major resize: the op, its GM input and output."""

    op: ResizeOp
    src_arg: SSAValue
    out_arg: SSAValue
    element: Attribute

    @property
    def in_shape(self) -> list[int]:
        return list(memref_shape(self.src_arg))

    @property
    def out_shape(self) -> list[int]:
        return list(memref_shape(self.out_arg))


def lone_resize(body: KernelBody) -> LoneResize | str:
    """The kernel's resize, or why the kernel is not one row-major resize."""
    found = lone_row_major_source(body, ResizeOp, "resize")
    if isinstance(found, str):
        return found
    op, src_arg = found
    assert isinstance(op, ResizeOp)
    (written, out_arg), *_ = body.writes
    if len(memref_shape(src_arg)) < 2:
        return "a resize of a 1-D tensor"
    if not all(memref_shape(out_arg)):
        return "a resize with an empty output"
    return LoneResize(op, src_arg, out_arg, tensor_of(written).element_type)


def emit_row_nests(
    b: KernelBuilder,
    resize: LoneResize,
    rows_of: RowTable,
    beyond_window: Callable[[Sequence[int]], int],
    compute: Compute,
) -> str | None:
    """Plan the row tiles of ``resize`` (:func:`plan_rows`) and emit their nests, each
    tile computed by ``compute``; or why it cannot."""
    eb = element_bytes(resize.element)
    found = plan_rows(rows_of, resize.out_shape, resize.in_shape[-1], eb, b.ub_budget(),
                      beyond_window, b.hw.vector_cores)  # fmt: skip
    if found is None:
        return "no row of a resize fits UB"
    plan, nests = found
    if len(nests) > MAX_REGIONS:
        return f"a resize of more than {MAX_REGIONS} row nests"
    if b.dry_run:
        return None
    for nest in nests:
        emit_row_nest(b, resize.src_arg, resize.out_arg, plan, nest, compute, resize.element,
                      len(nests) > 1)  # fmt: skip
    b.tiles = lead_tiles(plan) * sum(n.count for n in nests)
    return None


def emit_resize_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a lone nearest resize (see the module docstring); returns why it cannot (None
    when emitted)."""
    resize = lone_resize(body)
    if isinstance(resize, str):
        return resize
    tables = nearest_tables(resize.op, resize.in_shape, resize.out_shape)
    if isinstance(tables, str):
        return tables
    if any(not np.array_equal(t, np.arange(len(t))) for t in tables[:-2]):
        return "a resize of an axis other than the two innermost"
    compute = _picker(tables[-1], resize.element)
    return emit_row_nests(b, resize, nearest_rows(tables[-2]), prod, compute)
