"""Slice and split of an NC1HWC0 tensor (4-D NCHW origin) as copies of whole C0 blocks.

The format engine keeps a slice or split between convolutions in their NC1HWC0 where it
cuts no C0 block (:mod:`tilegraph.dialects.graph.movement_storage`): along N, H or W any
bounds (a slice's steps too), along C at channel offsets that are multiples of C0 with
step 1. Such an op is cut in origin terms first (the regions of
:func:`~.data_movement.op_regions` over the NCHW shapes), and each region maps onto the
storage ``[N, C1, H, W, C0]`` axis by axis: N, H and W as they are, C as C1 blocks
(``offset / C0``, ``ceil(extent / C0)`` blocks) and the C0 lanes whole. So every tile is a
box of whole 32-byte C0 rows, as the row-major nests move (:func:`~.data_movement.
emit_region`), with no lane gather. An output whose C ends inside a block takes that
block whole: its padding lanes hold the next channels of the input (or the input's own
padding lanes), which no consumer reads as channels (padding lanes are never data).
"""

from __future__ import annotations

from dataclasses import replace

from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph.data_movement import SliceOp, SplitOp
from tilegraph.dialects.graph.movement_storage import all_nchw_5hd, c0_of
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.data_movement import (
    Piece,
    Region,
    emit_regions,
    op_regions,
)

BLOCKED_OPS = (SliceOp, SplitOp)
"""The ops cut on an NC1HWC0 tensor here."""


def origin_ints(value: SSAValue) -> tuple[int, ...]:
    """A static origin shape (the format engine's 5HD choice needs static channels)."""
    return tuple(int(d) for d in tensor_of(value).origin_shape)


def is_blocked_movement(op: Operation) -> bool:
    """Whether ``op`` is a slice / split whose data and results are static NCHW tensors
    held NC1HWC0 (the format engine's choice; its ``storage_applies`` checked the bounds)."""
    if not isinstance(op, BLOCKED_OPS):
        return False
    types = [tensor_of(v) for v in (op.operands[0], *op.results)]
    static = all(isinstance(d, int) for t in types for d in t.origin_shape)
    return static and all_nchw_5hd(types)


def blocked_region(region: Region, c0: int) -> Region | str:
    """An origin region of a 4-D NCHW tensor as a region of its NC1HWC0 storage; why not
    when its channels do not start on a block boundary or step."""
    n, c, h, w = region.pieces  # NCHW: C blocks into C1, C0 lanes appended
    if c.step != 1 or c.start % c0 or c.out_start % c0:
        return "a channel cut inside a C0 block of an NC1HWC0 tensor"
    blocks = Piece(c.out_start // c0, -(-c.extent // c0), c.start // c0, 1)
    return replace(region, pieces=(n, blocks, h, w, Piece(0, c0, 0, 1)))


def emit_blocked_movement_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a lone NC1HWC0 slice / split as block copies; returns why it cannot (None
    when emitted)."""
    if len(body.ops) != 1 or not is_blocked_movement(body.ops[0]):
        return "not a lone slice / split of NC1HWC0 tensors"
    op = body.ops[0]
    data = op.operands[0]
    src_arg = body.source(data)
    if src_arg is None:
        return f"a {op.name} of a value computed inside the kernel"
    written = dict(body.writes)
    origin: dict[SSAValue, tuple[int, ...]] = {
        written[r]: origin_ints(r) for r in op.results if r in written
    }
    outs = [written.get(r) for r in op.results]
    regions = op_regions(op, outs, origin_ints(data), origin.__getitem__)
    if isinstance(regions, str):
        return regions
    c0 = c0_of(tensor_of(data))
    blocked = [blocked_region(r, c0) for r in regions]
    reason = next((r for r in blocked if isinstance(r, str)), None)
    if reason is not None:
        return reason
    return emit_regions(b, op, src_arg, [r for r in blocked if isinstance(r, Region)])
