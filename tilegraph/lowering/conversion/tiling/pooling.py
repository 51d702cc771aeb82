"""Max and average pooling on the vector unit (``tile.vpool``), with fused epilogues.

Tiles are ``rows`` output rows x all output columns of ``c1`` channel blocks of one image.
The input rows a tile needs (the halo included) are loaded into UB at column offset
``pad_left``, the load filling what lies outside the image with the pad value (-inf for max,
0 for average); ``tile.vpool`` then reduces the kernel taps. Works on NC1HWC0 (C0 lanes ride
along) and on plain NCHW.
"""

from __future__ import annotations

from xdsl.dialects.builtin import FloatAttr, f64

from tilegraph.dialects.graph.pooling import AvgPoolOp, MaxPoolOp
from tilegraph.dialects.graph.windows import window
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import CopyOp, Load5hdOp, PoolOp, memref_shape
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.formats import Format
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.elementwise import Chain, store


def emit_pool_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    pool = body.ops[0]
    assert isinstance(pool, MaxPoolOp | AvgPoolOp)
    x_type, y_type = pool.operands[0].type, pool.results[0].type
    assert isinstance(x_type, TensorType) and isinstance(y_type, TensorType)
    if len(body.writes) != 1 or len(pool.results) != 1:
        return "a pooling kernel with several outputs"
    if x_type.rank != 4 or x_type.storage_format not in (Format.NC1HWC0, Format.NCHW):
        return f"pooling on a {x_type.storage_format} tensor of rank {x_type.rank}"
    if str(x_type.element_type) not in ("f32", "f16", "bf16"):
        return f"pooling on {x_type.element_type}"
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
    kernel = pool.attr("kernel_shape")
    axes = window(type(pool), pool.properties, [height, width], list(kernel))
    out_h, out_w = axes[0].out, axes[1].out
    assert isinstance(out_h, int) and isinstance(out_w, int)
    strides = (axes[0].stride, axes[1].stride)
    dilations = (axes[0].dilation, axes[1].dilation)
    tail = list(x_shape[4:])
    eb = element_bytes(x_type.element_type)
    win_w = (out_w - 1) * strides[1] + (kernel[1] - 1) * dilations[1] + 1

    def ub_bytes(channels: int, rows: int) -> int:
        win_h = (rows - 1) * strides[0] + (kernel[0] - 1) * dilations[0] + 1
        tile = [1, channels, rows, out_w, *tail]
        need = aligned_bytes(b.hw, "UB", channels * win_h * win_w * eb * (tail[0] if tail else 1))
        need += aligned_bytes(b.hw, "UB", 4 * channels * rows * out_w * (tail[0] if tail else 1))
        if chain is not None:
            need += chain.ub_bytes(b.hw, tile, given=[pool.results[0]])
        return need

    budget = b.hw.ub_bytes // 2
    choice = None
    for rows in range(out_h, 0, -1):
        if ub_bytes(1, rows) <= budget:
            channels = 1
            while (
                channels < x_shape[1] and ub_bytes(channels + 1, rows) <= budget and rows == out_h
            ):
                channels += 1
            choice = (channels, rows)
            break
    if choice is None:
        return "no pooling tile fits UB"
    if b.dry_run:
        return None
    channels, rows = choice
    win_h = (rows - 1) * strides[0] + (kernel[0] - 1) * dilations[0] + 1
    element = x_type.element_type
    src = b.buffer([1, channels, win_h, win_w, *tail], element, "UB", "window_ub")
    tile = [1, channels, rows, out_w, *tail]
    dst = b.buffer(tile, y_type.element_type, "UB", "pool_ub")
    if chain is not None:
        chain.allocate(b, tile, given=[pool.results[0]])
    is_max = isinstance(pool, MaxPoolOp)
    kind = "max" if is_max else ("avg_include_pad" if pool.attr("count_include_pad") else "avg")
    pads = (axes[0].begin, axes[1].begin, axes[0].end, axes[1].end)
    zero = b.index(0)
    with (
        b.loop(x_shape[0], 1, "n", True) as n,
        b.loop(x_shape[1], channels, "c", True) as c,
        b.loop(out_h, rows, "oh", True) as oh,
    ):
        h_start = b.affine(oh, strides[0], -axes[0].begin)
        tail_zero = [zero] * len(tail)
        pad_value = float("-inf") if is_max else 0.0
        if nchw_in:
            start = [n, b.affine(c, tail[0]), h_start, b.index(-axes[1].begin)]
            b.add(Load5hdOp(x_arg, start, src, pad=pad_value))
        else:
            load = CopyOp(
                x_arg,
                [n, c, h_start, zero, *tail_zero],
                src,
                [zero, zero, zero, b.index(axes[1].begin), *tail_zero],
            )
            load.properties["pad"] = FloatAttr(pad_value, f64)
            b.add(load)
        b.add(
            PoolOp(
                src,
                oh,
                dst,
                kind=kind,
                kernel_shape=kernel,
                strides=strides,
                dilations=dilations,
                pads=pads,
                height=height,
                width=width,
            )  # fmt: skip
        )
        offsets = [n, c, oh, zero, *tail_zero]
        if chain is not None:
            chain.epilogue(b, {pool.results[0]: dst}, offsets, out_arg, value)
        else:
            store(b, dst, out_arg, offsets)
    b.tiles = x_shape[0] * -(-x_shape[1] // channels) * -(-out_h // rows)
    return None
