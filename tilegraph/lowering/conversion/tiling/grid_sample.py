"""GridSample on the vector core: per tile of output positions, the grid's taps computed
with vector ops, the input planes gathered at them by an offset tensor and blended.

``graph.grid_sample`` of ``X`` ``[N, C, H, W]`` at ``grid`` ``[N, Ho, Wo, 2]`` (normalised
coordinates, x first) gives ``[N, C, Ho, Wo]``: output ``(n, c, p)`` (``p`` one of the
``Q = Ho * Wo`` positions) is the weighted sum, over a few taps per axis, of
``X[n, c, y_tap, x_tap]``. GE runs it on the AI core (CANN's GridSampler2D); so does this
kernel. Viewed as ``X[N, C, H*W]``, ``grid[N, 1, 2Q]`` and ``out[N, C, Q]``::

    for n in N:                                          tile.parallel
      for c in 0 .. C step Cb:                           tile.parallel
        copy X[n, c:c+Cb, :] -> plane_ub (1, Cb, H*W)    MTE2  (the planes, once)
        for p in 0 .. Q step P:                          tile.parallel (split-cores)
          copy grid[n, 0, 2p:2p+2P] -> grid_ub (1, 1, 2P)           MTE2
          vpick grid_ub -> gx_ub, gy_ub (1, 1, P)        the x and the y coordinates
          taps of y and x: positions, weights / masks    (:mod:`.grid_sample_taps`)
          for each pair (y tap, x tap):
            vmuls / vadd: flat = y * W + x; vcast -> idx_ub (i32); vbrc over Cb
            vtake plane_ub, idx_ub -> vals_ub {axis = 2}  the gather (offset tensor)
            vmul (wy * wx) ; acc_ub += vals_ub * w       (nearest: vsel by the masks)
          copy acc_ub -> out[n, c:c+Cb, p:p+P]           MTE3  (cut at C and Q)

The taps follow the graph level's rules (:func:`~tilegraph.dialects.graph.vision_kernels.
axis_taps`), in float32 (the graph level blends in float64: the executors agree to float32
rounding). Positions are clamped into the plane (a tap outside under ``zeros`` has weight
0, or a false mask), so every gather reads inside ``plane_ub``; the ragged last tile of
``Q`` loads zeros past the grid (in-bounds positions) and its store is cut. ``Cb`` is as
many channels as keep their planes within about half of the tile budget (loaded once per
``(n, c)``, read by every position tile; each channel block computes the taps again),
``P`` as many positions as fit with them, shrunk to leave no vector core idle
(:func:`~.elementwise.share_over_cores`).

Modes: nearest (the elements copied: 2- and 4-byte ones, those Ascend C's ``Gather``
moves), linear / bilinear and cubic / bicubic (float32 ``X``); padding zeros, border,
reflection; ``align_corners`` 0 / 1. Stays on the host (the reason is reported): a
volumetric (5-D) GridSample, a non-float32 grid, a linear or cubic one of a non-float32
``X``, a nearest one of 1- or 8-byte elements, tensors that are not row-major, and an
input plane (with one tile of positions) that does not fit UB.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from xdsl.dialects.builtin import MemRefType, f32, i32
from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.graph.vision import GridSampleOp
from tilegraph.dialects.graph.vision_kernels import SAMPLING_MODES
from tilegraph.dialects.tile import (
    BroadcastOp,
    CopyOp,
    PickOp,
    StridedViewOp,
    TakeOp,
    memref_shape,
)
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.dialects.tile.workspace import strided_memref
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody, is_row_major, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.elementwise import (
    TilePlan,
    longest_fitting,
    share_over_cores,
)
from tilegraph.lowering.conversion.tiling.grid_sample_taps import AxisTap, TapEmitter

MAX_POSITIONS = 1024
"""The most output positions a tile takes: beyond them a tile's vector instructions are long
enough to hide their start-up, and the two ``vpick`` tables (``P`` entries each, in the
kernel's IR) stay short."""
POSITION_TILES = {"nearest": 8, "linear": 18, "cubic": 27}
"""Float32 ``[1, 1, P]`` tiles a tile of ``P`` positions takes at most (the coordinates,
the taps' positions and weights, their scratch, the flat offset and a pair's weight), per
interpolation; :meth:`_GridSampleTile.emit` checks the count."""
POSITION_MASKS = 4
"""i1 ``[1, 1, P]`` tiles it takes at most (the bounds, the reflections' parities)."""
CONSTANT_TILES = 10
"""``[1, 1, 1]`` constant tiles at most: 0, each axis' ``size - 1``, borders and span (to
reflect at), and nearest's zero of the input's type."""


@dataclass(frozen=True)
class GridSamplePlan:
    """``Cb`` channels per plane load and ``P`` output positions per tile."""

    channels: int
    positions: int


@dataclass(frozen=True)
class LoneGridSample:
    """A kernel that is one 4-D row-major GridSample: its attributes and GM buffers."""

    mode: str
    padding: str
    align_corners: bool
    x: SSAValue
    grid: SSAValue
    out: SSAValue
    element: Attribute

    @property
    def shape(self) -> tuple[int, ...]:
        """``(N, C, H, W, Q)``."""
        n, c, h, w = memref_shape(self.x)
        ho, wo = memref_shape(self.grid)[1:3]
        return n, c, h, w, ho * wo


def lone_grid_sample(body: KernelBody) -> LoneGridSample | str:
    """The kernel's GridSample, or why the kernel is not one this strategy tiles."""
    if len(body.ops) != 1 or not isinstance(body.ops[0], GridSampleOp):
        return "not a lone grid_sample"
    op = body.ops[0]
    x, grid = body.source(op.X), body.source(op.grid)
    out = dict(body.writes).get(op.Y)
    if x is None or grid is None or out is None:
        return "a grid_sample of a value computed inside the kernel"
    if not all(is_row_major(tensor_of(v)) for v in (op.X, op.grid, op.Y)):
        return "a grid_sample of a tensor that is not row-major"
    if len(memref_shape(x)) != 4:
        return f"a {len(memref_shape(x)) - 2}-D (volumetric) grid_sample: only 2-D planes"
    mode = SAMPLING_MODES[str(op.attr("mode"))]
    element = tensor_of(op.X).element_type
    if str(tensor_of(op.grid).element_type) != "f32":
        return f"a grid_sample of a {tensor_of(op.grid).element_type} grid (float32 only)"
    if mode != "nearest" and str(element) != "f32":
        return f"a {mode} grid_sample of {element} (float32 only)"
    if element_bytes(element) not in (2, 4):  # Ascend C Gather: 16- and 32-bit elements
        return f"a grid_sample of {element} (the vector gather takes 2- and 4-byte elements)"
    if 0 in memref_shape(out):
        return "a grid_sample with an empty output"
    padding, align = str(op.attr("padding_mode")), bool(op.attr("align_corners"))
    return LoneGridSample(mode, padding, align, x, grid, out, element)


def _tile_bytes(b: KernelBuilder, sample: LoneGridSample, plan: GridSamplePlan) -> int:
    """UB bytes of a tile: the planes, the grid, the taps and the gathered channels."""
    _, _, h, w, _ = sample.shape
    cb, p = plan.channels, plan.positions
    eb = element_bytes(sample.element)
    gathered = [cb * p * eb, p * 4]  # the gathered values, the index (i32)
    if cb > 1:
        gathered.append(cb * p * 4)  # the index broadcast over the channels
    if sample.mode != "nearest":
        gathered += [cb * p * 4, cb * p * 4]  # the accumulator, a weighted term
    sizes = [cb * h * w * eb, 2 * p * 4, *gathered]
    sizes += [p * 4] * POSITION_TILES[sample.mode] + [p] * POSITION_MASKS
    sizes += [4] * CONSTANT_TILES
    return sum(aligned_bytes(b.hw, "UB", n) for n in sizes)


def plan_grid_sample(b: KernelBuilder, sample: LoneGridSample) -> GridSamplePlan | str:
    """The channels per plane load and the positions per tile (see the module docstring),
    or why no tile fits UB."""
    n, c, h, w, q = sample.shape
    budget = b.ub_budget()

    def bytes_of(cb: int, p: int) -> int:
        return _tile_bytes(b, sample, GridSamplePlan(cb, p))

    if bytes_of(1, 1) > budget:
        return f"a grid_sample input plane of {h} x {w} that does not fit UB with its taps"
    # channels first (each block repeats the taps), their planes in about half of the budget
    few = min(q, 8)
    cb = longest_fitting([1], 0, c, lambda t: bytes_of(t[0], few), max(budget // 2, 1))
    if bytes_of(cb, few) > budget // 2:
        cb = 1
    p = longest_fitting([1], 0, min(q, MAX_POSITIONS), lambda t: bytes_of(cb, t[0]), budget)
    if p < q:
        p = _whole_blocks(p)
    shared = share_over_cores(TilePlan((n, q), 1, p), b.hw.vector_cores, 2).size
    p = min(p, _whole_blocks(shared))
    return GridSamplePlan(cb, p)


def _whole_blocks(positions: int) -> int:
    """``positions`` rounded down to whole 32-byte blocks of float32 (8), when there are
    that many: the store's rows start at block boundaries."""
    return positions // 8 * 8 if positions >= 8 else positions


def emit_grid_sample_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a lone 4-D GridSample (see the module docstring); returns why it cannot (None
    when emitted)."""
    sample = lone_grid_sample(body)
    if isinstance(sample, str):
        return sample
    plan = plan_grid_sample(b, sample)
    if isinstance(plan, str):
        return plan
    if b.dry_run:
        return None
    _GridSampleTile(b, sample, plan).emit()
    return None


def _view(b: KernelBuilder, arg: SSAValue, shape: list[int]) -> SSAValue:
    """``arg`` (row-major GM) addressed as ``shape``."""
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    assert isinstance(arg.type, MemRefType)
    view = b.hoist(StridedViewOp(arg, strided_memref(arg.type, shape, strides))).results[0]
    view.name_hint = f"{arg.name_hint or 'arg'}_view"
    return view


class _GridSampleTile:
    """Emits the loops and one tile's instructions."""

    def __init__(self, b: KernelBuilder, sample: LoneGridSample, plan: GridSamplePlan):
        self.b, self.sample, self.plan = b, sample, plan
        n, c, h, w, q = sample.shape
        cb, p = plan.channels, plan.positions
        el = sample.element
        self.x = _view(b, sample.x, [n, c, h * w])
        self.grid = _view(b, sample.grid, [n, 1, 2 * q])
        self.out = _view(b, sample.out, [n, c, q])
        self.plane = b.buffer([1, cb, h * w], el, "UB", "plane_ub")
        self.grid_ub = b.buffer([1, 1, 2 * p], f32, "UB", "grid_ub")
        self.taps = TapEmitter(b, p)
        self.flat = self.taps.tile("flat_ub")
        self.weight = self.taps.tile("pair_weight_ub")
        self.index = b.buffer([1, 1, p], i32, "UB", "idx_ub")
        self.index_c = b.buffer([1, cb, p], i32, "UB", "idx_c_ub") if cb > 1 else self.index
        self.vals = b.buffer([1, cb, p], el, "UB", "vals_ub")
        if sample.mode == "nearest":
            self.acc = self.term = self.vals
            self.zero = b.buffer([1, 1, 1], el, "UB", "zero_ub")
        else:
            self.acc = b.buffer([1, cb, p], f32, "UB", "acc_ub")
            self.term = b.buffer([1, cb, p], f32, "UB", "term_ub")

    def emit(self) -> None:
        b, sample, plan = self.b, self.sample, self.plan
        n, c, h, w, q = sample.shape
        self.taps.prepare([w, h], sample.padding, sample.align_corners)
        if sample.mode == "nearest":
            self.taps.e.fill(self.zero, 0.0)
        zero = b.index(0)
        with b.loop(n, 1, "n", True) as i, b.loop(c, plan.channels, "c", True) as ch:
            b.add(CopyOp(self.x, [i, ch, zero], self.plane, [zero] * 3))
            with b.loop(q, plan.positions, "p", True) as at:
                b.add(CopyOp(self.grid, [i, zero, b.affine(at, 2)], self.grid_ub, [zero] * 3))
                self._tile()
                b.add(CopyOp(self.acc, [zero] * 3, self.out, [i, ch, at]))
        self._check_counts()
        b.tiles = n * -(-c // plan.channels) * -(-q // plan.positions)

    def _tile(self) -> None:
        """One tile of positions: the taps, then the gathers and the blend into ``acc``."""
        sample, taps = self.sample, self.taps
        _, _, h, w, _ = sample.shape
        p = self.plan.positions
        for axis, coord in enumerate(taps.coords):  # x: the even lanes, y: the odd ones
            table = [[0], [0], list(range(axis, 2 * p, 2))]
            self.b.add(PickOp(self.grid_ub, coord, table))
        args = (sample.mode, sample.padding, sample.align_corners)
        x_taps = taps.taps(taps.coords[0], w, *args)
        y_taps = taps.taps(taps.coords[1], h, *args)
        for ty in y_taps:  # the row's offset in the plane, once per y tap
            taps.e.scalar("vmuls", ty.position, float(w), ty.position)
        for k, (ty, tx) in enumerate(itertools.product(y_taps, x_taps)):
            self._gather(ty, tx)
            self._blend(ty, tx, first=k == 0)

    def _gather(self, ty: AxisTap, tx: AxisTap) -> None:
        """``vals = plane[.., y * W + x]`` for every channel of the tile (``ty``'s position
        already scaled by ``W``)."""
        e = self.taps.e
        e.binary("vadd", ty.position, tx.position, self.flat)
        e.cast(self.flat, self.index, "rint")  # an exact integer below 2^24
        if self.index_c is not self.index:
            self.b.add(BroadcastOp(operands=[self.index, self.index_c]))
        self.b.add(TakeOp(self.plane, self.index_c, self.vals, 2))

    def _blend(self, ty: AxisTap, tx: AxisTap, first: bool) -> None:
        e = self.taps.e
        if self.sample.mode == "nearest":  # one pair: the element, or 0 outside
            masks = [m for m in (ty.inside, tx.inside) if m is not None]
            if len(masks) == 2:
                e.binary("vand", masks[0], masks[1], masks[0])
            if masks:
                e.select(masks[0], self.vals, self.zero, self.vals)
            return
        assert ty.weight is not None and tx.weight is not None
        e.binary("vmul", ty.weight, tx.weight, self.weight)
        e.binary("vmul", self.vals, self.weight, self.acc if first else self.term)
        if not first:
            e.binary("vadd", self.acc, self.term, self.acc)

    def _check_counts(self) -> None:
        """The taps took no more tiles than :func:`_tile_bytes` counted."""
        taps, mode = self.taps, self.sample.mode
        assert taps.count <= POSITION_TILES[mode], (mode, taps.count)
        assert taps.masks <= POSITION_MASKS, (mode, taps.masks)
