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
whatever reshape-like ops and transposes make it up. CANN's TBE TransData NC1HWC0 -> NHWC
(``trans_data_negative_target_tc``) takes the same views, and rearranges up to 8 C1 blocks
on UB (``vnchwconv``) to store longer runs; here each store is a burst of C0 lanes per
pixel, with no vector op (docs/tile-level.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from math import prod

import numpy as np
from xdsl.ir import Attribute, Operation, SSAValue

from tilegraph.dialects.graph.shape_ops import TransposeOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.tile import CopyOp, memref_shape
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.formats import Format
from tilegraph.lowering.conversion.kernel_body import KernelBody, is_row_major, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.conv3d import plane_view
from tilegraph.lowering.conversion.tiling.data_movement import open_nest
from tilegraph.lowering.conversion.tiling.elementwise import TilePlan, choose_tile, tile_loops
from tilegraph.lowering.conversion.tiling.reshape import SHAPE_ONLY

MAX_CHECKED = 1 << 22
"""Elements past which the composite order is not checked element by element (a 16 MiB
int32 index array, copied by each transpose): such a chain is refused and its group split
as before (ViT-L's patch grid is 0.2 M elements, a 10 s wav2vec2 feature map 0.26 M)."""


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
    index = np.arange(n * c * h * w, dtype=np.int32).reshape(n, c, h, w)
    chained = index
    for op, value in zip(ops[1:], values[1:], strict=True):
        if isinstance(op, TransposeOp):
            perm = op.attr("perm") or tuple(reversed(range(chained.ndim)))
            chained = np.transpose(chained, [int(p) % chained.ndim for p in perm])
        else:
            chained = chained.reshape([int(d) for d in tensor_of(value).origin_shape])  # type: ignore[arg-type]
    return bool(np.array_equal(chained.ravel(), index.transpose(0, 2, 3, 1).ravel()))


@dataclass(frozen=True)
class ChannelsLast:
    """A channels-last chain's kernel plan: the 5HD source ``[n, c1, pixels, c0]`` (its
    channel count ``channels``) and the tiling of its pixels."""

    src_arg: SSAValue
    n: int
    c1: int
    pixels: int
    c0: int
    channels: int
    element: Attribute
    plan: TilePlan

    def count(self) -> int:
        return self.n * self.c1 * self.plan.count()


def plan_channels_last(
    body: KernelBody, ops: Sequence[Operation], b: KernelBuilder
) -> ChannelsLast | str:
    """The plan of the chain ``ops`` (:func:`_chain`, its last result row-major) reading
    a kernel input, or why there is none."""
    if not _chain(ops):
        return "not a TransData NC1HWC0 -> NCHW before reshapes and a transpose"
    if not is_row_major(tensor_of(ops[-1].results[0])):
        return "a channels-last chain writing a non-row-major tensor"
    src_arg = body.source(ops[0].operands[0])
    if src_arg is None:
        return "a TransData of a value computed inside the kernel"
    if (tensor_of(ops[0].results[0]).num_elements() or 0) > MAX_CHECKED:
        return "a feature map too large to check the chain's element order"
    if not channels_last_order(ops):
        return "the chain is no channels-last order of the NCHW map"
    n, c1, h, w, c0 = memref_shape(src_arg)
    element = tensor_of(ops[-1].results[0]).element_type
    row = c0 * element_bytes(element)
    # The (n, c1) loops are parallel too: the pixel windows need share only the cores
    # those do not fill.
    plan = choose_tile(
        [h * w],
        lambda t: max(1, prod(t)) * row,
        b.ub_budget(),
        cores=-(-b.hw.vector_cores // (n * c1)),
    )
    if plan is None:
        return "one pixel of C0 lanes does not fit UB"
    channels = int(tensor_of(ops[0].results[0]).origin_shape[1])
    return ChannelsLast(src_arg, n, c1, h * w, c0, channels, element, plan)


def emit_channels_last(
    b: KernelBuilder,
    plan: ChannelsLast,
    out_arg: SSAValue,
    rows: int,
    first_row: int = 0,
    nest: bool = False,
) -> None:
    """``plan``'s nest, storing pixel p of image n at row ``first_row + p`` of the output
    ``out_arg`` seen as row-major ``[n, rows, channels]`` (``rows`` > pixels: a region of
    a concat along the rows); ``nest``: the kernel has several (:func:`.open_nest`)."""
    blocks = plane_view(b, plan.src_arg, [plan.n, plan.c1, plan.pixels, plan.c0])
    out_rows = plane_view(b, out_arg, [plan.n, 1, rows, plan.channels])
    (tile_pixels,) = plan.plan.tile_shape()
    tile = b.buffer([1, 1, tile_pixels, plan.c0], plan.element, "UB", "pixel_rows")
    zero = b.index(0)
    with ExitStack() as outer:
        open_nest(b, outer, nest and plan.count() == 1)
        ni = outer.enter_context(b.loop(plan.n, 1, "n", True))
        ci = outer.enter_context(b.loop(plan.c1, 1, "c", True))
        stack, (pi,) = tile_loops(b, plan.plan)
        with stack:
            b.add(CopyOp(blocks, [ni, ci, pi, zero], tile, [zero] * 4))
            at = [ni, zero, b.affine(pi, 1, first_row), b.affine(ci, plan.c0)]
            b.add(CopyOp(tile, [zero] * 4, out_rows, at))


def emit_nhwc_out_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """The module's kernel: per image, C1 slice and window of pixels, a load of the 5HD
    window into UB and a strided store of it at its channels of the channels-last output."""
    if len(body.writes) != 1:
        return "a channels-last kernel with several outputs"
    value, out_arg = body.writes[0]
    if not body.ops or value is not body.ops[-1].results[0]:
        return "a channels-last kernel writing an intermediate"
    plan = plan_channels_last(body, body.ops, b)
    if isinstance(plan, str):
        return plan
    if b.dry_run:
        return None
    emit_channels_last(b, plan, out_arg, plan.pixels)
    b.tiles = plan.count()
    return None


def concat_region(
    body: KernelBody, ops: Sequence[Operation], axis: int, b: KernelBuilder
) -> ChannelsLast | str | None:
    """The plan of a concat input made by the channels-last chain ``ops`` (ViT's patch
    tokens after the class token): None when ``ops`` is no such chain, a reason when it
    is one this kernel cannot store as a region — only rows of ``[N, H·W, C]``
    concatenated along the rows (axis 1) are; either way the concat's own tiling then
    takes the input's ops."""
    if not _chain(ops):
        return None
    shape = tensor_of(ops[-1].results[0]).origin_shape
    if len(shape) != 3 or axis != 1:
        return "a channels-last concat input other than rows of [N, H*W, C]"
    return plan_channels_last(body, ops, b)
