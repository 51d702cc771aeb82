"""TransData between a row-major tensor and FRACTAL_NZ, as DMA.

ND -> FRACTAL_NZ: per batch index and block of fractal columns and rows, ``tile.nd2nz``
brings the ND window into an NZ tile (zero padding at the edges) and a copy writes it to
the NZ tensor; the tile is in L1 on a coupled preset, in UB on a decoupled one (a vector
kernel runs on an AIV there, which has no L1; Ascend C's ND2NZ DataCopy also has a
GM -> VECIN form). FRACTAL_NZ -> ND: the NZ tile comes into UB and ``tile.nz2nd`` writes its
rows back, padding cut. (NCHW <-> NC1HWC0 conversions run inside vector chains,
:mod:`.elementwise`.)
"""

from __future__ import annotations

from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.tile import CopyOp, Nd2NzOp, Nz2NdOp, memref_shape
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.formats import Format
from tilegraph.lowering.conversion.kernel_body import KernelBody, is_row_major, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder


def emit_transdata_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    if len(body.ops) != 1 or not isinstance(body.ops[0], TransDataOp):
        return "not a lone TransData"
    op = body.ops[0]
    source, target = tensor_of(op.input), tensor_of(op.output)
    src_arg = body.source(op.input)
    value, out_arg = body.writes[0]
    if src_arg is None or value is not op.output:
        return "a TransData of a value computed inside the kernel"
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
