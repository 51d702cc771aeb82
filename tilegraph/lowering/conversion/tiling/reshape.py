"""Reshape-like kernels as DMA: row-major data is the same bytes under another shape.

* Reshape / Flatten / Squeeze / Unsqueeze of a row-major tensor: ``tile.copy_flat`` chunks
  GM -> UB -> GM.
* The same after a TransData NC1HWC0 -> NCHW (a 5HD feature map flattened for a Gemm):
  per image and block of channel fractals, the 5HD tile is loaded, transposed on the vector
  unit to channel-major order and written as one run of the NCHW bytes. Runs are written in
  order, so the padding lanes a block spills past its channels are overwritten by the next.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, i64

from tilegraph.dialects.graph.shape_ops import FlattenOp, ReshapeOp, SqueezeOp, UnsqueezeOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.tile import CopyFlatOp, CopyOp, TransposeOp, memref_shape
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.formats import Format
from tilegraph.lowering.conversion.kernel_body import KernelBody, is_row_major, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder

SHAPE_ONLY = (ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp)


def emit_transpose_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """A lone Transpose of a row-major tensor: per output tile, the input window it reads
    (the tile's offsets and extents permuted back) is loaded, transposed on the vector unit
    (``vtranspose``) and stored."""
    from tilegraph.dialects.graph.shape_ops import TransposeOp as GraphTranspose
    from tilegraph.lowering.conversion.tiling.elementwise import choose_tile, store, tile_loops

    if len(body.ops) != 1 or not isinstance(body.ops[0], GraphTranspose):
        return "not a lone transpose"
    op = body.ops[0]
    value, out_arg = body.writes[0]
    src_arg = body.source(op.operands[0])
    if (
        src_arg is None
        or not is_row_major(tensor_of(op.operands[0]))
        or not is_row_major(tensor_of(value))
    ):
        return "a transpose of a non-row-major tensor"
    rank = tensor_of(value).rank
    perm = op.attr("perm") or tuple(reversed(range(rank)))
    perm = tuple(int(p) % rank for p in perm)
    out_shape = memref_shape(out_arg)
    element = tensor_of(value).element_type
    eb = element_bytes(element)

    def source_tile(tile):
        inverse = [perm.index(d) for d in range(rank)]
        return [tile[inverse[d]] for d in range(rank)]

    plan = choose_tile(
        out_shape,
        lambda t: 2 * max(1, int(np.prod(t))) * eb,
        b.ub_budget(),
        depth=b.split_depth(),
        cores=b.hw.vector_cores,
    )
    if plan is None:
        return "no transpose tile fits UB"
    if b.dry_run:
        return None
    tile = plan.tile_shape()
    src_ub = b.buffer(source_tile(tile), element, "UB", "in_ub")
    dst_ub = b.buffer(tile, element, "UB", "out_ub")
    stack, offsets = tile_loops(b, plan)
    with stack:
        src_offsets = [offsets[perm.index(d)] for d in range(rank)]
        b.add(CopyOp(src_arg, src_offsets, src_ub, [b.index(0)] * rank))
        b.add(
            TransposeOp.create(
                operands=[src_ub, dst_ub],
                properties={"perm": DenseArrayBase.from_list(i64, list(perm))},
            )
        )
        store(b, dst_ub, out_arg, offsets)
    b.tiles = plan.count()
    return None


def emit_reshape_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    ops = body.ops
    if len(body.writes) != 1 or not ops:
        return "a reshape kernel with several outputs"
    convert = isinstance(ops[0], TransDataOp)
    rest = ops[1:] if convert else ops
    if not rest or not all(isinstance(op, SHAPE_ONLY) for op in rest):
        return "not a reshape chain"
    value, out_arg = body.writes[0]
    if value is not rest[-1].results[0] or not is_row_major(tensor_of(value)):
        return "a reshape kernel writing a non-row-major tensor"
    source = ops[0].operands[0]
    src_arg = body.source(source)
    if src_arg is None:
        return "a reshape of a value computed inside the kernel"
    element = tensor_of(value).element_type
    eb = element_bytes(element)
    budget = b.ub_budget()
    if not convert:
        if not is_row_major(tensor_of(source)):
            return "a reshape of a non-row-major tensor"
        total = tensor_of(source).num_elements() or 0
        chunk = max(1, min(total, budget // eb))
        if b.dry_run:
            return None
        ub = b.buffer([chunk], element, "UB", "chunk_ub")
        with b.loop(total, chunk, "i", True) as i:
            b.add(CopyFlatOp(src_arg, i, ub, b.index(0), chunk))
            b.add(CopyFlatOp(ub, b.index(0), out_arg, i, chunk))
        b.tiles = -(-total // chunk)
        return None
    trans = ops[0]
    assert isinstance(trans, TransDataOp)
    if (
        tensor_of(trans.input).storage_format != Format.NC1HWC0
        or tensor_of(trans.output).storage_format != Format.NCHW
    ):
        return "a reshape after a TransData other than NC1HWC0 -> NCHW"
    n, c1, h, w, c0 = memref_shape(src_arg)
    channels = int(tensor_of(trans.output).origin_shape[1])
    per_block = h * w * c0 * eb * 2  # the 5HD tile and its transposed copy
    c1t = max(1, min(c1, budget // per_block))
    if per_block > budget:
        return "one channel block of the feature map does not fit UB"
    if b.dry_run:
        return None
    tile = b.buffer([1, c1t, h, w, c0], element, "UB", "fmap_ub")
    planar = b.buffer([1, c1t, c0, h, w], element, "UB", "planar_ub")
    zero = b.index(0)
    with b.loop(n, 1, "n") as ni, b.loop(c1, c1t, "c") as ci:
        b.add(CopyOp(src_arg, [ni, ci, zero, zero, zero], tile, [zero] * 5))
        b.add(
            TransposeOp.create(
                operands=[tile, planar],
                properties={"perm": DenseArrayBase.from_list(i64, [0, 1, 4, 2, 3])},
            )
        )
        start = b.add_index(b.affine(ni, channels * h * w), b.affine(ci, c0 * h * w))
        b.add(CopyFlatOp(planar, zero, out_arg, start, c1t * c0 * h * w))
    b.tiles = n * -(-c1 // c1t)
    return None
