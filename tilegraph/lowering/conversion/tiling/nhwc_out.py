"""NC1HWC0 -> channels-last, as one kernel of strided DMAs (GE's TransData NC1HWC0 -> NHWC).

After a convolution (its result in NC1HWC0), models make the feature map channels-last:
wav2vec2-style audio feature extractors ``squeeze(2).transpose(1, 2)`` to ``[N, T, C]``,
ViT / Swin patch embeddings ``flatten(2).transpose(1, 2)`` to ``[N, H·W, C]``. The graph
holds that as ``trans_data (NC1HWC0 -> NCHW)`` followed by reshape-like ops and a
transpose; composed, the chain is the NHWC order of the feature map seen under another
shape (H and W merged, a unit H or W squeezed). Then per (n, c1) the ``[H·W, C0]`` block of
32-byte pixel rows of the 5HD map lands at channel offset ``c1·C0`` of each output row:
one load of a window of pixels of one C1 slice into UB, one store of it into the output
seen as row-major ``[N, 1, H·W, C]`` — a strided store of C0-lane bursts, whose window is
cut at C, so the padding lanes of the last C1 slice are never stored. Windows of pixels
are ragged at the end of H·W; the (n, c1, pixel window) loops are parallel (cores share
them).

The chain is recognised by its composite element order (:func:`channels_last_order`),
whatever reshape-like ops and transposes make it up.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

import numpy as np
from xdsl.ir import Operation

from tilegraph.dialects.graph.shape_ops import TransposeOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.tile import CopyOp, memref_shape
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.formats import Format
from tilegraph.lowering.conversion.kernel_body import KernelBody, is_row_major, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.conv3d import plane_view
from tilegraph.lowering.conversion.tiling.reshape import SHAPE_ONLY

MAX_CHECKED = 1 << 24
"""Elements past which the composite order is not checked element by element (a 64 MiB
index array): such a chain stays with the other strategies."""


def _chain(ops: Sequence[Operation]) -> bool:
    """``ops`` is a TransData NC1HWC0 -> NCHW, then reshape-like ops and at least one
    transpose, each reading the one before."""
    if len(ops) < 2 or not isinstance(ops[0], TransDataOp):
        return False
    trans = ops[0]
    if (
        tensor_of(trans.input).storage_format != Format.NC1HWC0
        or tensor_of(trans.output).storage_format != Format.NCHW
    ):
        return False
    rest = ops[1:]
    if not all(isinstance(op, (*SHAPE_ONLY, TransposeOp)) for op in rest):
        return False
    if not any(isinstance(op, TransposeOp) for op in rest):
        return False  # a reshape chain: :func:`.reshape.emit_reshape_kernel`
    return all(
        after.operands[0] is before.results[0] for before, after in zip(ops, rest, strict=False)
    )


def is_channels_last_chain(body: KernelBody) -> bool:
    """Whether :func:`emit_nhwc_out_kernel` is the strategy for ``body`` (the op pattern;
    the emitter checks the element order)."""
    return _chain(body.ops)


def channels_last_order(ops: Sequence[Operation]) -> bool:
    """Whether the chain ``ops`` (:func:`_chain`) maps the NCHW view of its TransData's
    result to its last result in NHWC element order: applied to an index array, the
    reshape-like ops reshape it and the transposes permute it, and the result read in
    row-major order must be the indices of the NCHW map read in NHWC order."""
    values = [op.results[0] for op in ops]
    if not all(tensor_of(v).is_static for v in values):
        return False
    n, c, h, w = (int(d) for d in tensor_of(values[0]).origin_shape)  # type: ignore[arg-type]
    if n * c * h * w > MAX_CHECKED:
        return False
    index = np.arange(n * c * h * w, dtype=np.int64).reshape(n, c, h, w)
    chained = index
    for op, value in zip(ops[1:], values[1:], strict=True):
        if isinstance(op, TransposeOp):
            perm = op.attr("perm") or tuple(reversed(range(chained.ndim)))
            chained = np.transpose(chained, [int(p) % chained.ndim for p in perm])
        else:
            chained = chained.reshape([int(d) for d in tensor_of(value).origin_shape])  # type: ignore[arg-type]
    return bool(np.array_equal(chained.ravel(), index.transpose(0, 2, 3, 1).ravel()))


def emit_nhwc_out_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """The module's kernel: per image, C1 slice and window of pixels, a load of the 5HD
    window into UB and a strided store of it at its channels of the channels-last output."""
    from tilegraph.lowering.conversion.tiling.elementwise import choose_tile, tile_loops

    ops = body.ops
    if not _chain(ops) or len(body.writes) != 1:
        return "not a TransData NC1HWC0 -> NCHW before reshapes and a transpose"
    value, out_arg = body.writes[0]
    if value is not ops[-1].results[0] or not is_row_major(tensor_of(value)):
        return "a channels-last kernel writing an intermediate"
    src_arg = body.source(ops[0].operands[0])
    if src_arg is None:
        return "a TransData of a value computed inside the kernel"
    if not channels_last_order(ops):
        return "the chain is no channels-last order of the NCHW map"
    n, c1, h, w, c0 = memref_shape(src_arg)
    channels = int(tensor_of(ops[0].results[0]).origin_shape[1])
    element = tensor_of(value).element_type
    row = c0 * element_bytes(element)
    pixels = h * w
    # The (n, c1) loops are parallel too: the pixel windows need share only the cores
    # those do not fill.
    plan = choose_tile(
        [pixels],
        lambda t: max(1, prod(t)) * row,
        b.ub_budget(),
        cores=-(-b.hw.vector_cores // (n * c1)),
    )
    if plan is None:
        return "one pixel of C0 lanes does not fit UB"
    if b.dry_run:
        return None
    blocks = plane_view(b, src_arg, [n, c1, pixels, c0])
    rows = plane_view(b, out_arg, [n, 1, pixels, channels])
    (tile_pixels,) = plan.tile_shape()
    tile = b.buffer([1, 1, tile_pixels, c0], element, "UB", "pixel_rows")
    zero = b.index(0)
    with b.loop(n, 1, "n", True) as ni, b.loop(c1, 1, "c", True) as ci:
        stack, (pi,) = tile_loops(b, plan)
        with stack:
            b.add(CopyOp(blocks, [ni, ci, pi, zero], tile, [zero] * 4))
            b.add(CopyOp(tile, [zero] * 4, rows, [ni, zero, pi, b.affine(ci, c0)]))
    b.tiles = n * c1 * plan.count()
    return None
