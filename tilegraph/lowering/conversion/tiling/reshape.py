"""Reshape-like kernels as DMA: row-major data is the same bytes under another shape.

* Reshape / Flatten / Squeeze / Unsqueeze of a row-major tensor: ``tile.copy_flat`` chunks
  GM -> UB -> GM.
* The same after a TransData NC1HWC0 -> NCHW (a 5HD feature map flattened for a Gemm):
  per image and block of channel fractals, the 5HD tile is loaded, transposed on the vector
  unit to channel-major order and written as one run of the NCHW bytes. Runs are written in
  order, so the padding lanes a block spills past its channels are overwritten by the next.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.ir import Attribute, Operation, SSAValue

from tilegraph.dialects.graph.base import GraphOp
from tilegraph.dialects.graph.shape_ops import FlattenOp, ReshapeOp, SqueezeOp, UnsqueezeOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.tile import CopyFlatOp, CopyOp, TransposeOp, memref_shape
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.formats import Format
from tilegraph.lowering.conversion.kernel_body import KernelBody, is_row_major, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder

if TYPE_CHECKING:
    from tilegraph.lowering.conversion.tiling.elementwise import TilePlan

SHAPE_ONLY = (ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp)


def _transpose_parts(
    ops: Sequence[Operation],
) -> tuple[list[Operation], Operation, list[Operation]] | None:
    """(the shape-only ops before, the transpose, those after) when ``ops`` is one
    transpose between reshape-like ops, each reading the one before; else None."""
    from tilegraph.dialects.graph.shape_ops import TransposeOp as GraphTranspose

    at = [i for i, op in enumerate(ops) if isinstance(op, GraphTranspose)]
    if len(at) != 1 or not all(
        isinstance(op, SHAPE_ONLY) for i, op in enumerate(ops) if i != at[0]
    ):
        return None
    for before, after in zip(ops, ops[1:], strict=False):
        if after.operands[0] is not before.results[0]:
            return None
    return list(ops[: at[0]]), ops[at[0]], list(ops[at[0] + 1 :])


def is_viewed_transpose(body: KernelBody) -> bool:
    """A transpose with reshape-like ops before or after it (LLaMA's head split of Q and K
    ahead of the rotary embedding): the transpose kernel reads and writes them as views."""
    parts = _transpose_parts(body.ops)
    return parts is not None and bool(parts[0] or parts[2])


def _row_major_view(b: KernelBuilder, arg: SSAValue, value: SSAValue) -> SSAValue:
    """GM argument ``arg`` (row-major) seen with ``value``'s static shape."""
    from tilegraph.lowering.analysis.operand_views import StridedView
    from tilegraph.lowering.conversion.tiling.matmul_views import view_of

    shape = [int(d) for d in tensor_of(value).origin_shape]  # type: ignore[arg-type]
    return view_of(b, arg, StridedView.row_major(shape))


def emit_transpose_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """A Transpose of a row-major tensor (with reshape-like ops before and after it read
    and written as row-major views of the kernel's input and output): per output tile, the
    input window it reads (the tile's offsets and extents permuted back) is loaded,
    transposed on the vector unit (``vtranspose``) and stored."""
    parts = _transpose_parts(body.ops)
    if parts is None or len(body.writes) != 1:
        return "not a transpose between reshapes"
    lead, op, trail = parts
    assert isinstance(op, GraphOp)
    value, out_arg = body.writes[0]
    if value is not (trail[-1] if trail else op).results[0]:
        return "a transpose kernel writing an intermediate"
    first = (lead[0] if lead else op).operands[0]
    src_arg = body.source(first)
    chain = [first, *(o.results[0] for o in (*lead, op, *trail))]
    if src_arg is None or not all(is_row_major(tensor_of(v)) for v in chain):
        return "a transpose of a non-row-major tensor"
    if (lead or trail) and not all(tensor_of(v).is_static for v in chain):
        return "a transpose between reshapes of symbolic shapes"
    value = op.results[0]
    rank = tensor_of(value).rank
    perm = op.attr("perm") or tuple(reversed(range(rank)))
    perm = tuple(int(p) % rank for p in perm)
    static = [int(d) for d in tensor_of(value).origin_shape] if trail else None  # type: ignore[arg-type]
    out_shape = memref_shape(out_arg) if static is None else static
    element = tensor_of(value).element_type
    plan = plan_permute(b, out_shape, element_bytes(element))
    if plan is None:
        return "no transpose tile fits UB"
    if b.dry_run:
        return None
    if lead:
        src_arg = _row_major_view(b, src_arg, op.operands[0])
    if trail:
        out_arg = _row_major_view(b, out_arg, value)
    emit_permute(b, plan, src_arg, out_arg, perm, element)
    return None


def plan_permute(b: KernelBuilder, out_shape: Sequence[int], eb: int) -> TilePlan | None:
    """The output tiles of a permute (:func:`emit_permute`): the source window and its
    transposed copy side by side in UB."""
    from tilegraph.lowering.conversion.tiling.elementwise import choose_tile

    return choose_tile(
        out_shape,
        lambda t: 2 * max(1, int(np.prod(t))) * eb,
        b.ub_budget(),
        depth=b.split_depth(),
        cores=b.hw.vector_cores,
    )


def emit_permute(
    b: KernelBuilder,
    plan: TilePlan,
    src: SSAValue,
    dst: SSAValue,
    perm: Sequence[int],
    element: Attribute,
) -> None:
    """``dst = transpose(src, perm)`` (GM memrefs, either a strided view): per output tile
    of ``plan``, the source window it reads (the tile's offsets and extents permuted back)
    is loaded, transposed on the vector unit (``vtranspose``) and stored."""
    from tilegraph.lowering.conversion.tiling.elementwise import store, tile_loops

    rank = len(perm)
    inverse = [list(perm).index(d) for d in range(rank)]
    tile = plan.tile_shape()
    src_ub = b.buffer([tile[inverse[d]] for d in range(rank)], element, "UB", "in_ub")
    dst_ub = b.buffer(tile, element, "UB", "out_ub")
    stack, offsets = tile_loops(b, plan)
    with stack:
        src_offsets = [offsets[inverse[d]] for d in range(rank)]
        b.add(CopyOp(src, src_offsets, src_ub, [b.index(0)] * rank))
        b.add(
            TransposeOp.create(
                operands=[src_ub, dst_ub],
                properties={"perm": DenseArrayBase.from_list(i64, list(perm))},
            )
        )
        store(b, dst_ub, dst, offsets)
    b.tiles = plan.count()


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
