"""3-D max and average pooling on the vector unit over NDC1HWC0, as 2-D pools of the depth
taps (:mod:`.pooling`'s tiles and ``tile.vpool``) combined per output plane.

NDC1HWC0 ``[N, D, C1, H, W, C0]`` is, byte for byte, ``[N, D·C1, H, W, C0]`` (as the 3-D
convolution addresses it, :mod:`.conv3d`): a depth plane's channel blocks one after the
other. A window pools separably: max over (d, h, w) is the max over the depth taps of the
2-D maxima, and an average divides by a count that is the product of per-axis counts
(taps inside the image, or inside the padded image with ``count_include_pad``; never the
extra end positions of ceil mode), so it is the sum over the depth taps of the 2-D
averages (``vpool``'s divisor, per pixel) divided by the depth count. Per output tile
(batch, channel blocks, rows, columns) and output plane ``do`` each depth tap loads the
2-D window of input plane ``do·sd − pd + t·dd`` into UB (the pad value outside the
image), ``vpool``s it, and ``vmax`` / ``vadd`` combines it into the plane's accumulator;
an average then scales by ``1 / depth count``.

Which depth taps a plane sees, and its depth count, depend on ``do`` only near the depth
borders: the output planes are grouped into runs of equal taps (the front planes whose
first taps lie in the padding, the interior, the back planes), and each run is a loop of
constant bounds over its planes with a tap loop of constant bounds over its taps. So taps
in the depth padding are never loaded or pooled, and ``inject-sync`` / ``multi-buffer``
see loops of constant bounds only. The depth runs are inside the tile's parallel loops
(``split-cores`` shares those out).

A tile's channel blocks divide C1 (a ragged one would run into the next depth plane's
blocks of the merged axis). Not here (with the reason): fused epilogues (the fused group
is split and the epilogue runs as a kernel of its own), integer data.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import FloatAttr, f64
from xdsl.ir import SSAValue

from tilegraph.dialects.graph.pooling import AvgPoolOp, MaxPoolOp
from tilegraph.dialects.graph.windows import Axis, window
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import BINARY_OPS, SCALAR_OPS, CopyOp, DupOp, memref_shape
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.formats import Format
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.conv3d import plane_view
from tilegraph.lowering.conversion.tiling.elementwise import store
from tilegraph.lowering.conversion.tiling.pooling import (
    PoolGeometry,
    choose_pool_tile,
    pool_kind,
    pooling_of,
    unpooled_element,
)


@dataclass(frozen=True)
class DepthRun:
    """Output planes ``start`` .. ``stop - 1`` that see the same depth taps
    ``first`` .. ``last - 1`` (those inside the image) and divide an average by ``count``."""

    start: int
    stop: int
    first: int
    last: int
    count: int


def depth_runs(axis: Axis, include_pad: bool) -> list[DepthRun]:
    """The output planes of depth axis ``axis`` in runs of equal taps and depth count (the
    count of an average: the taps inside the image, or with ``include_pad`` inside the
    padded image, ceil mode's extra end positions never)."""
    size, out = axis.size, axis.out
    assert isinstance(size, int) and isinstance(out, int)
    runs: list[DepthRun] = []
    for plane in range(out):
        positions = [
            plane * axis.stride - axis.begin + t * axis.dilation for t in range(axis.reach())
        ]
        inside = [t for t, p in enumerate(positions) if 0 <= p < size]
        first, last = (inside[0], inside[-1] + 1) if inside else (0, 0)
        low, high = (-axis.begin, size + axis.end) if include_pad else (0, size)
        count = sum(1 for p in positions if low <= p < high)
        if runs and (runs[-1].first, runs[-1].last, runs[-1].count) == (first, last, count):
            runs[-1] = DepthRun(runs[-1].start, plane + 1, first, last, count)
        else:
            runs.append(DepthRun(plane, plane + 1, first, last, count))
    return runs


def is_pool3d(pool: MaxPoolOp | AvgPoolOp) -> bool:
    """A 3-D pooling: its input in NDC1HWC0, or a 5-D one in its NCDHW origin layout."""
    x = pool.operands[0].type
    return isinstance(x, TensorType) and x.storage_format in _LAYOUTS and x.rank == 5


_LAYOUTS = (Format.NDC1HWC0, Format.NCDHW)


def emit_pool3d_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    pool, x_type, y_type = pooling_of(body)
    if len(body.ops) != 1 or len(body.writes) != 1:
        return "a 3-D pooling fused with other ops"
    blocked = x_type.storage_format == Format.NDC1HWC0
    if y_type.storage_format != x_type.storage_format:
        return f"3-D pooling from {x_type.storage_format} into {y_type.storage_format}"
    reason = unpooled_element(x_type)
    if reason:
        return reason
    x_arg = body.source(pool.operands[0])
    value, out_arg = body.writes[0]
    if x_arg is None or value is not pool.results[0]:
        return "pooling of a value computed inside the kernel"
    if blocked:
        n, depth, c1, height, width, c0 = memref_shape(x_arg)
        out_depth, tail = memref_shape(out_arg)[1], [c0]
    else:  # NCDHW: [N, C, D, H, W] is [N, C·D, H, W], a channel's planes one after the other
        n, c1, depth, height, width = memref_shape(x_arg)
        out_depth, tail = memref_shape(out_arg)[2], []
    kernel_shape = list(pool.attr("kernel_shape"))
    axes = window(type(pool), pool.properties, [depth, height, width], kernel_shape)
    d_axis, h_axis, w_axis = axes
    out_h, out_w = h_axis.out, w_axis.out
    assert isinstance(out_h, int) and isinstance(out_w, int)
    geometry = PoolGeometry(
        [h_axis.reach(), w_axis.reach()],
        (h_axis.stride, w_axis.stride),
        (h_axis.dilation, w_axis.dilation),
        out_h,
        out_w,
    )
    is_max = isinstance(pool, MaxPoolOp)
    include_pad = not is_max and bool(pool.attr("count_include_pad"))
    runs = depth_runs(d_axis, include_pad)
    several = any(run.last - run.first > 1 for run in runs)
    eb = element_bytes(x_type.element_type)

    def accumulator_bytes(tile: list[int]) -> int:
        """The plane's accumulator beside the tap's pooled tile (several taps only)."""
        size = 1
        for d in tile:
            size *= d
        return aligned_bytes(b.hw, "UB", size * eb) if several else 0

    # NCDHW: one channel a tile (the next channel's planes are not beside this one's), so
    # the grid shared over the cores is (N x C) images of one block
    blocks, images = (c1, n) if blocked else (1, n * c1)
    choice = choose_pool_tile(
        b, geometry, images, blocks, tail, eb, accumulator_bytes, dividing=True
    )
    if choice is None:
        return "no 3-D pooling tile fits UB"
    if b.dry_run:
        return None
    channels, rows, cols = choice
    tile_w = out_w if cols is None else cols
    element = x_type.element_type
    window_shape = [1, channels, geometry.window_rows(rows), geometry.window_cols(cols), *tail]
    src = b.buffer(window_shape, element, "UB", "window_ub")
    tile = [1, channels, rows, tile_w, *tail]
    tap_ub = b.buffer(tile, element, "UB", "pool_ub")
    acc_ub = b.buffer(tile, element, "UB", "acc_ub") if several else tap_ub
    zero = b.index(0)
    planes_in = plane_view(b, x_arg, [n, depth * c1, height, width, *tail])
    planes_out = plane_view(b, out_arg, [n, out_depth * c1, out_h, out_w, *tail])
    tail_zero = [zero] * len(tail)

    def plane(d: SSAValue, c: SSAValue, planes: int) -> SSAValue:
        """Depth plane ``d`` of channel (block) ``c`` in the merged axis of ``planes``
        depth planes: ``d·C1 + c`` in NDC1HWC0, ``c·D + d`` in NCDHW."""
        if blocked:
            return b.add_index(b.affine(d, c1), c)
        return b.add_index(b.affine(c, planes), d)

    kind = pool_kind(pool)
    pad_value = float("-inf") if is_max else 0.0

    def pool_tap(n_iv, c, oh, ow, plane_out, tap, into: SSAValue) -> None:
        """Depth tap ``tap`` of output plane ``plane_out``: its 2-D window into UB, pooled
        into ``into``."""
        d_in = b.add_index(
            b.affine(plane_out, d_axis.stride, -d_axis.begin), b.affine(tap, d_axis.dilation)
        )
        h_start = b.affine(oh, h_axis.stride, -h_axis.begin)
        # whole rows: the window starts at column 0, pad_left columns into the buffer
        w_start = zero if cols is None else b.affine(ow, w_axis.stride, -w_axis.begin)
        left = b.index(w_axis.begin if cols is None else 0)
        at = [n_iv, plane(d_in, c, depth), h_start, w_start, *tail_zero]
        load = CopyOp(planes_in, at, src, [zero, zero, zero, left, *tail_zero])
        load.properties["pad"] = FloatAttr(pad_value, f64)
        b.add(load)
        pads = (h_axis.begin, w_axis.begin, h_axis.end, w_axis.end)
        col0 = None if cols is None else ow
        b.add(geometry.vpool(src, oh, col0, into, kind, pads, (height, width)))

    with (
        b.loop(n, 1, "n", True) as n_iv,
        b.loop(c1, channels, "c", True) as c,
        b.loop(out_h, rows, "oh", True) as oh,
        b.loop(out_w, tile_w, "ow", True) as ow,
    ):
        for run in runs:
            with b.loop(run.stop, 1, "od", lower=run.start) as plane_out:
                taps = run.last - run.first
                if taps == 0:  # a window in the depth padding only (no output of ONNX's)
                    b.add(DupOp(acc_ub, pad_value))
                elif taps == 1:
                    pool_tap(n_iv, c, oh, ow, plane_out, b.index(run.first), acc_ub)
                else:
                    b.add(DupOp(acc_ub, pad_value))
                    with b.loop(run.last, 1, "kd", lower=run.first) as tap:
                        pool_tap(n_iv, c, oh, ow, plane_out, tap, tap_ub)
                        combine = BINARY_OPS["vmax" if is_max else "vadd"]
                        b.add(combine(acc_ub, tap_ub, acc_ub))
                if not is_max and run.count > 1:
                    b.add(SCALAR_OPS["vmuls"](acc_ub, 1.0 / run.count, acc_ub))
                at = [n_iv, plane(plane_out, c, out_depth), oh, ow, *tail_zero]
                store(b, acc_ub, planes_out, at)
    b.tiles = n * -(-c1 // channels) * -(-out_h // rows) * -(-out_w // tile_w) * out_depth
    return None
