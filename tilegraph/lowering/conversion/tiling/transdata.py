"""TransData between a row-major tensor and FRACTAL_NZ, as DMA.

ND -> FRACTAL_NZ: per batch index and block of fractal columns and rows, ``tile.nd2nz``
brings the ND window into an NZ tile (zero padding at the edges) and a copy writes it to
the NZ tensor; the tile is in L1 on a coupled preset, in UB on a decoupled one (a vector
kernel runs on an AIV there, which has no L1; Ascend C's ND2NZ DataCopy also has a
GM -> VECIN form). FRACTAL_NZ -> ND: the NZ tile comes into UB and ``tile.nz2nd`` writes its
rows back, padding cut. (NCHW <-> NC1HWC0 conversions run inside vector chains,
:mod:`.elementwise`.)

NCDHW <-> NDC1HWC0 (around a 3-D convolution), per (n, d) input plane as NCHW <->
NC1HWC0 is done on the way in or out: NCDHW ``[N, C, D, H, W]`` is addressed as the NCHW
tensor ``[N, C, D, H·W]`` (plane d is "row" d) and NDC1HWC0 as ``[N·D, C1, 1, H·W, C0]``
(row-major views, :func:`.conv3d.plane_view`); NCDHW -> NDC1HWC0 is ``tile.load_5hd`` of a
window of channels and pixels of one plane into UB (padding lanes zero) and a copy out,
NDC1HWC0 -> NCDHW a copy in and ``tile.store_5hd`` (padding lanes dropped).
"""

from __future__ import annotations

from math import prod

from xdsl.ir import SSAValue

from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import (
    CopyFlatOp,
    CopyOp,
    Load5hdOp,
    Nd2NzOp,
    Nz2NdOp,
    Store5hdOp,
    memref_shape,
)
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.formats import Format
from tilegraph.lowering.conversion.kernel_body import KernelBody, is_row_major, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.conv3d import plane_view


def has_transdata_kernel(op: TransDataOp) -> bool:
    """Whether :func:`emit_transdata_kernel` converts between ``op``'s formats (a row-major
    tensor and FRACTAL_NZ, or NCDHW and NDC1HWC0)."""
    formats = {tensor_of(op.input).storage_format, tensor_of(op.output).storage_format}
    return (
        Format.FRACTAL_NZ in formats
        or formats == {Format.NCDHW, Format.NDC1HWC0}
        or _channel_vector(tensor_of(op.input), tensor_of(op.output))
    )


def _channel_vector(source: TensorType, target: TensorType) -> bool:
    """A per-channel vector ``[C]`` into NC1HWC0 (``[1, C1, 1, 1, C0]``, reshape type C:
    a run-time bias of a convolution): the C values, then zeros up to C1 · C0."""
    return (
        source.rank == 1
        and is_row_major(source)
        and target.storage_format == Format.NC1HWC0
        and target.storage_shape[0] == 1
        and all(int(d) == 1 for d in target.storage_shape[2:4])
    )


def _emit_channel_vector(
    b: KernelBuilder, src_arg: SSAValue, out_arg: SSAValue, source: TensorType
) -> str | None:
    """:func:`_channel_vector`'s conversion: one load of the C values into a zeroed UB tile
    of C1 · C0 lanes, one store of the tile."""
    lanes = prod(memref_shape(out_arg))
    if lanes * element_bytes(source.element_type) > b.ub_budget():
        return "the channel vector does not fit UB"
    if b.dry_run:
        return None
    tile = b.buffer([lanes], source.element_type, "UB", "channel_tile")
    zero = b.index(0)
    b.add(CopyFlatOp(src_arg, zero, tile, zero, int(source.origin_shape[0])))
    b.add(CopyFlatOp(tile, zero, out_arg, zero, lanes))
    b.tiles = 1
    return None


def _emit_planes(
    b: KernelBuilder,
    src_arg: SSAValue,
    out_arg: SSAValue,
    source: TensorType,
    target: TensorType,
) -> str | None:
    """NCDHW <-> NDC1HWC0 by planes (module docstring): UB tiles of ``c1_tile`` C1 slices
    by ``hw_tile`` pixels of one (n, d) plane."""
    to_5d = target.storage_format == Format.NDC1HWC0
    blocked = target if to_5d else source
    n, d, c1, h, w, c0 = (int(v) for v in blocked.storage_shape)
    channels = int(blocked.origin_shape[1])
    pixel = c0 * element_bytes(source.element_type)
    budget = b.ub_budget()
    if pixel > budget:
        return "one pixel of C0 lanes does not fit UB"
    hw_tile = min(h * w, budget // pixel)
    c1_tile = max(1, min(c1, budget // (pixel * hw_tile)))
    if b.dry_run:
        return None
    planar_arg, blocked_arg = (src_arg, out_arg) if to_5d else (out_arg, src_arg)
    planar = plane_view(b, planar_arg, [n, channels, d, h * w])
    blocks = plane_view(b, blocked_arg, [n * d, c1, 1, h * w, c0])
    tile = b.buffer([1, c1_tile, 1, hw_tile, c0], source.element_type, "UB", "plane_tile")
    zero = b.index(0)
    with (
        b.loop(n, 1, "n", True) as ni,
        b.loop(d, 1, "d", True) as di,
        b.loop(c1, c1_tile, "c", True) as ci,
        b.loop(h * w, hw_tile, "p", True) as pi,
    ):
        planar_at = [ni, b.affine(ci, c0), di, pi]
        blocks_at = [b.add_index(b.affine(ni, d), di), ci, zero, pi, zero]
        if to_5d:
            b.add(Load5hdOp(planar, planar_at, tile))
            b.add(CopyOp(tile, [zero] * 5, blocks, blocks_at))
        else:
            b.add(CopyOp(blocks, blocks_at, tile, [zero] * 5))
            b.add(Store5hdOp(tile, planar, planar_at))
    b.tiles = n * d * -(-c1 // c1_tile) * -(-(h * w) // hw_tile)
    return None


def emit_transdata_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    if len(body.ops) != 1 or not isinstance(body.ops[0], TransDataOp):
        return "not a lone TransData"
    op = body.ops[0]
    source, target = tensor_of(op.input), tensor_of(op.output)
    src_arg = body.source(op.input)
    value, out_arg = body.writes[0]
    if src_arg is None or value is not op.output:
        return "a TransData of a value computed inside the kernel"
    if {source.storage_format, target.storage_format} == {Format.NCDHW, Format.NDC1HWC0}:
        return _emit_planes(b, src_arg, out_arg, source, target)
    if _channel_vector(source, target):
        return _emit_channel_vector(b, src_arg, out_arg, source)
    to_nz = is_row_major(source) and target.storage_format == Format.FRACTAL_NZ
    from_nz = source.storage_format == Format.FRACTAL_NZ and is_row_major(target)
    if not (to_nz or from_nz) or source.rank < 2:
        return (
            f"no tile lowering for layout.trans_data {source.storage_format} -> "
            f"{target.storage_format}"
        )
    nz_shape = memref_shape(out_arg if to_nz else src_arg)
    *batch, c1, r1, r0, c0 = nz_shape
    frac = r0 * c0 * element_bytes(source.element_type)
    on_l1 = to_nz and b.hw.coupled  # a decoupled AIV has UB only: nd2nz into UB there
    budget = b.hw.capacity("L1") // 2 if on_l1 else b.ub_budget()
    if frac > budget:
        return "one fractal does not fit on chip"
    r1t = max(1, min(r1, budget // frac))
    c1t = max(1, min(c1, budget // (frac * r1t)))
    if b.dry_run:
        return None
    scope = "L1" if on_l1 else "UB"
    lead = [1] * len(batch)
    tile = b.buffer([*lead, c1t, r1t, r0, c0], source.element_type, scope, "nz_tile")
    zero = b.index(0)
    with b.loop(c1, c1t, "c", True) as ci, b.loop(r1, r1t, "r", True) as ri:
        from contextlib import ExitStack

        with ExitStack() as stack:
            ivs = [stack.enter_context(b.loop(d, 1, f"b{i}", True)) for i, d in enumerate(batch)]
            nd_offsets = [*ivs, b.affine(ri, r0), b.affine(ci, c0)]
            nz_offsets = [*ivs, ci, ri, zero, zero]
            if to_nz:
                b.add(Nd2NzOp(src_arg, nd_offsets, tile))
                b.add(CopyOp(tile, [zero] * len(nz_offsets), out_arg, nz_offsets))
            else:
                b.add(CopyOp(src_arg, nz_offsets, tile, [zero] * len(nz_offsets)))
                b.add(Nz2NdOp(tile, out_arg, nd_offsets))
    count = 1
    for d in batch:
        count *= d
    b.tiles = count * -(-c1 // c1t) * -(-r1 // r1t)
    return None
