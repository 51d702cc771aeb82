"""Max and average pooling on the vector unit (``tile.vpool``), with fused epilogues.

Tiles are ``rows`` output rows x all output columns of ``c1`` channel blocks of one image.
The input rows a tile needs (the halo included) are loaded into UB at column offset
``pad_left``, the load filling what lies outside the image with the pad value (-inf for max,
0 for average); ``tile.vpool`` then reduces the kernel taps. Works on NC1HWC0 (C0 lanes ride
along) and on plain NCHW. When not even one output row of one channel block fits UB (the
``test`` preset's 8 KiB with a 112-pixel row), the width is cut as well: tiles of ``rows`` x
``cols`` output pixels whose window starts at input column ``ow·sw - pad_left`` (the load
pads outside the image) and ``vpool`` is told the tile's first column (average pooling's
divisor). Kernel offsets that see only the padding past the image (a ceil_mode window
larger than the input) are dropped: they add nothing and no divisor counts them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects.builtin import FloatAttr, f64
from xdsl.ir import SSAValue

from tilegraph.dialects.graph.pooling import AvgPoolOp, MaxPoolOp
from tilegraph.dialects.graph.windows import window
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import CopyOp, Load5hdOp, PoolOp, memref_shape
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.formats import Format
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.elementwise import (
    Chain,
    TilePlan,
    share_over_cores,
    store,
)


def pooling_of(body: KernelBody) -> tuple[MaxPoolOp | AvgPoolOp, TensorType, TensorType]:
    """A pooling kernel's pooling (its first op), with its input's and result's types."""
    pool = body.ops[0]
    assert isinstance(pool, MaxPoolOp | AvgPoolOp)
    x_type, y_type = pool.operands[0].type, pool.results[0].type
    assert isinstance(x_type, TensorType) and isinstance(y_type, TensorType)
    return pool, x_type, y_type


def unpooled_element(t: TensorType) -> str | None:
    """Why the vector unit does not pool ``t``'s elements (None: floats it does)."""
    if str(t.element_type) not in ("f32", "f16", "bf16"):
        return f"pooling on {t.element_type}"
    return None


def emit_pool_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    pool, x_type, y_type = pooling_of(body)
    if len(body.writes) != 1 or len(pool.results) != 1:
        return "a pooling kernel with several outputs"
    if x_type.rank != 4 or x_type.storage_format not in (Format.NC1HWC0, Format.NCHW):
        return f"pooling on a {x_type.storage_format} tensor of rank {x_type.rank}"
    reason = unpooled_element(x_type)
    if reason:
        return reason
    x_arg = body.source(pool.operands[0])
    if x_arg is None:
        return "pooling of a value computed inside the kernel"
    value, out_arg = body.writes[0]
    chain = Chain(body, body.ops[1:], memref_shape(out_arg)) if body.ops[1:] else None
    if chain is not None:
        reason = chain.unsupported(given=[pool.results[0]])
        if reason:
            return reason
        if chain.space == "5hd" and chain.out_shape[2:4] != tuple(
            int(d) for d in y_type.origin_shape[2:4]
        ):
            return "a pooling epilogue of another shape"
    elif value is not pool.results[0]:
        return "the kernel does not write the pooling result"
    x_shape = memref_shape(x_arg)
    # An NCHW input whose epilogue works on NC1HWC0 is loaded as NC1HWC0 (load_5hd).
    nchw_in = chain is not None and chain.space == "5hd" and len(x_shape) == 4
    if nchw_in:
        assert chain is not None
        c0 = chain.out_shape[-1]
        x_shape = (x_shape[0], -(-x_shape[1] // c0), x_shape[2], x_shape[3], c0)
    height, width = x_shape[2], x_shape[3]
    axes = window(type(pool), pool.properties, [height, width], list(pool.attr("kernel_shape")))
    # Taps that never reach the padded image (a ceil_mode window larger than the input:
    # efficientnet's AvgPool2d(1280) over 5x5) add nothing and count for nothing: cut.
    kernel = [a.reach() for a in axes]
    out_h, out_w = axes[0].out, axes[1].out
    assert isinstance(out_h, int) and isinstance(out_w, int)
    strides = (axes[0].stride, axes[1].stride)
    dilations = (axes[0].dilation, axes[1].dilation)
    tail = list(x_shape[4:])
    eb = element_bytes(x_type.element_type)
    geometry = PoolGeometry(kernel, strides, dilations, out_h, out_w)

    def chain_bytes(tile: list[int]) -> int:
        return 0 if chain is None else chain.ub_bytes(b.hw, tile, given=[pool.results[0]])

    choice = choose_pool_tile(b, geometry, x_shape[0], x_shape[1], tail, eb, chain_bytes)
    if choice is None:
        return "no pooling tile fits UB"
    if b.dry_run:
        return None
    channels, rows, cols = choice
    tile_w = out_w if cols is None else cols
    win_h = geometry.window_rows(rows)
    element = x_type.element_type
    src = b.buffer(
        [1, channels, win_h, geometry.window_cols(cols), *tail], element, "UB", "window_ub"
    )
    tile = [1, channels, rows, tile_w, *tail]
    dst = b.buffer(tile, y_type.element_type, "UB", "pool_ub")
    if chain is not None:
        chain.allocate(b, tile, given=[pool.results[0]])
    is_max = isinstance(pool, MaxPoolOp)
    kind = pool_kind(pool)
    pads = (axes[0].begin, axes[1].begin, axes[0].end, axes[1].end)
    zero = b.index(0)
    with (
        b.loop(x_shape[0], 1, "n", True) as n,
        b.loop(x_shape[1], channels, "c", True) as c,
        b.loop(out_h, rows, "oh", True) as oh,
        b.loop(out_w, tile_w, "ow", True) as ow,
    ):
        h_start = b.affine(oh, strides[0], -axes[0].begin)
        tail_zero = [zero] * len(tail)
        pad_value = float("-inf") if is_max else 0.0
        # Whole rows: the window starts at column 0 of the image, pad_left columns into the
        # buffer; a column tile's window starts pad_left columns before its first input.
        w_start = zero if cols is None else b.affine(ow, strides[1], -axes[1].begin)
        if nchw_in:
            channel = b.affine(c, tail[0])
            left = b.index(-axes[1].begin) if cols is None else w_start
            start = [n, channel, h_start, left]
            b.add(Load5hdOp(x_arg, start, src, pad=pad_value))
        else:
            load = CopyOp(
                x_arg,
                [n, c, h_start, w_start, *tail_zero],
                src,
                [zero, zero, zero, b.index(axes[1].begin if cols is None else 0), *tail_zero],
            )
            load.properties["pad"] = FloatAttr(pad_value, f64)
            b.add(load)
        col0 = None if cols is None else ow
        b.add(geometry.vpool(src, oh, col0, dst, kind, pads, (height, width)))
        offsets = [n, c, oh, ow, *tail_zero]
        if chain is not None:
            chain.epilogue(b, {pool.results[0]: dst}, offsets, out_arg, value)
        else:
            store(b, dst, out_arg, offsets)
    b.tiles = x_shape[0] * -(-x_shape[1] // channels) * -(-out_h // rows) * -(-out_w // tile_w)
    return None


@dataclass(frozen=True)
class PoolGeometry:
    """The 2-D window of a pooling (of one depth plane, in 3-D): kernel taps (those that
    reach the padded image), strides, dilations and the output size."""

    kernel: list[int]
    strides: tuple[int, int]
    dilations: tuple[int, int]
    out_h: int
    out_w: int

    def window_rows(self, rows: int) -> int:
        """Input rows (halo and padding included) that ``rows`` output rows read."""
        return (rows - 1) * self.strides[0] + (self.kernel[0] - 1) * self.dilations[0] + 1

    def window_cols(self, cols: int | None) -> int:
        """Input columns that ``cols`` output columns (None: whole rows) read."""
        cols = self.out_w if cols is None else cols
        return (cols - 1) * self.strides[1] + (self.kernel[1] - 1) * self.dilations[1] + 1

    def vpool(
        self,
        src: SSAValue,
        row0: SSAValue,
        col0: SSAValue | None,
        dst: SSAValue,
        kind: str,
        pads: tuple[int, int, int, int],
        image: tuple[int, int],
    ) -> PoolOp:
        """``tile.vpool`` of window ``src`` into the output tile ``dst`` whose first pixel
        is (``row0``, ``col0``; None: a tile of whole rows) of an ``image`` (height,
        width) padded by ``pads`` (top, left, bottom, right)."""
        return PoolOp(
            src, row0, dst, kind=kind, kernel_shape=self.kernel, strides=self.strides,
            dilations=self.dilations, pads=pads, height=image[0], width=image[1], col0=col0,
        )  # fmt: skip


def pool_kind(pool: MaxPoolOp | AvgPoolOp) -> str:
    """``tile.vpool``'s kind of a graph pooling."""
    if isinstance(pool, MaxPoolOp):
        return "max"
    return "avg_include_pad" if pool.attr("count_include_pad") else "avg"


def choose_pool_tile(
    b: KernelBuilder,
    g: PoolGeometry,
    batch: int,
    channel_blocks: int,
    tail: list[int],
    element_size: int,
    extra: Callable[[list[int]], int],
    dividing: bool = False,
) -> tuple[int, int, int | None] | None:
    """A pooling tile ``(channels, rows, cols)`` that fits the vector budget: the most
    output rows of one channel block (with all rows, as many channel blocks as fit; with
    ``dividing``, a count that divides ``channel_blocks``); when not even one row fits, the
    widest column tile, then as many rows as fit, balanced to tiles of equal width. Its UB:
    the input window, the f32-sized result tile and ``extra(tile)`` (an epilogue's, a 3-D
    pooling's accumulator). None when nothing fits. Whole-row tiles then shrink until the
    ``batch`` x channel blocks x rows grid leaves none of the vector cores idle
    (:func:`~.elementwise.share_over_cores`); column tiles are many already."""

    def ub_bytes(channels: int, rows: int, cols: int | None = None) -> int:
        tile_w = g.out_w if cols is None else cols
        tile = [1, channels, rows, tile_w, *tail]
        lanes = tail[0] if tail else 1
        window = channels * g.window_rows(rows) * g.window_cols(cols) * element_size * lanes
        need = aligned_bytes(b.hw, "UB", window)
        need += aligned_bytes(b.hw, "UB", 4 * channels * rows * tile_w * lanes)
        return need + extra(tile)

    budget = b.ub_budget()
    for rows in range(g.out_h, 0, -1):
        if ub_bytes(1, rows) <= budget:
            channels = 1
            while (
                channels < channel_blocks
                and ub_bytes(channels + 1, rows) <= budget
                and rows == g.out_h
            ):
                channels += 1
            channels, rows = _shared(g, batch, channel_blocks, tail, channels, rows, b)
            while dividing and channel_blocks % channels:
                channels -= 1
            return channels, rows, None
    # not one row: the widest column tile, then as many rows as fit
    cols = next((c for c in range(g.out_w - 1, 0, -1) if ub_bytes(1, 1, c) <= budget), None)
    if cols is None:
        return None
    rows = 1
    while rows < g.out_h and ub_bytes(1, rows + 1, cols) <= budget:
        rows += 1
    count = -(-g.out_w // cols)
    return 1, rows, -(-g.out_w // count)  # balanced: tiles of equal width


def _shared(
    g: PoolGeometry,
    batch: int,
    channel_blocks: int,
    tail: list[int],
    channels: int,
    rows: int,
    b: KernelBuilder,
) -> tuple[int, int]:
    """``(channels, rows)`` of a whole-row tile made smaller, as an elementwise tile is,
    when its grid (batch, channel blocks, output rows) leaves vector cores idle: the
    output ``[N, C1, out_h, out_w, *tail]`` split at C1 (several channel blocks a tile)
    or at the rows (one)."""
    shape = (batch, channel_blocks, g.out_h, g.out_w, *tail)
    plan = TilePlan(shape, 1, channels) if rows == g.out_h else TilePlan(shape, 2, rows)
    shared = share_over_cores(plan, b.hw.vector_cores, 3)
    if shared.axis == 1:
        return shared.size, g.out_h
    return 1, shared.size
