"""Cumulative sum and product on the vector cores (``graph.cum_sum``, ``graph.cum_prod``):
``tile.vscan`` over tiles along the axis, the running total carried from tile to tile.

A tile holds the dims after the scanned axis whole (as a reduction's tile holds its
reduced axes, :mod:`.reduction`), split at the axis or before it, as large as half of UB
allows (:func:`.elementwise.choose_tile`):

* when the whole axis fits, every tile scans on its own: load, ``tile.vscan``, store, the
  tile loops ``tile.parallel``;
* otherwise the axis is cut into chunks of ``c`` (the leading dims one position at a
  time, ``tile.parallel``) and a sequential chunk loop carries the total of the chunks
  before: ``vdup`` starts the carry tile (the axis kept as 1) at the identity; per chunk,
  ``vscan`` then ``vadd`` (``vmul``) of the carry, the store, and the carry combined with
  the chunk's ``vreduce``. ``reverse`` walks the chunks from the axis' end (chunk offset
  ``(n_chunks - 1 - k) * c``) and scans each in reverse; ``exclusive`` needs nothing
  more (the carry is what precedes the chunk). The ragged last chunk is loaded with the
  identity in the lanes past the axis' end (``tile.copy {pad}``): they come after (or, in
  reverse, before) every real element, and add nothing to the carry; the store cuts them.

The axis is a compile-time constant (inlined by ``lower-graph-to-kernels``); a run-time
axis, a tensor that is not row-major, or a tile of the dims after the axis that does not
fit half of UB stays on the host.
"""

from __future__ import annotations

from contextlib import ExitStack
from math import prod

import numpy as np
from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.graph.base import constant_value
from tilegraph.dialects.graph.generators import CumProdOp, CumSumOp
from tilegraph.dialects.tile import BINARY_OPS, CopyOp, DupOp, ScanOp, memref_shape
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.data_movement import lone_row_major_source
from tilegraph.lowering.conversion.tiling.elementwise import (
    TilePlan,
    choose_tile,
    store,
    tile_loops,
)
from tilegraph.lowering.conversion.tiling.reduction_chunks import vreduce

SCAN_OPS = (CumSumOp, CumProdOp)


def constant_axis(value: SSAValue, rank: int) -> int | None:
    """A scalar axis operand's value in [0, rank), or None when computed at run time."""
    data = constant_value(value)
    return None if data is None else int(np.asarray(data).reshape(())) % rank


def emit_scan_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a lone cumulative sum or product (see the module docstring); returns why it
    cannot (None when emitted)."""
    found = lone_row_major_source(body, SCAN_OPS, "cumulative sum or product")
    if isinstance(found, str):
        return found
    op, src_arg = found
    assert isinstance(op, CumSumOp | CumProdOp)
    (written, out_arg), *_ = body.writes
    shape = memref_shape(src_arg)
    if not shape or not all(shape):
        return "a cumulative op of a scalar or an empty tensor"
    axis = constant_axis(op.operands[1], len(shape))
    if axis is None:
        return "a cumulative axis computed at run time"
    element = tensor_of(written).element_type
    eb = element_bytes(element)

    def tile_bytes(tile) -> int:  # the input, the scan, the carry and the chunk's total
        kept = prod(tile) // max(tile[axis], 1)
        sizes = [prod(tile)] * 2 + [kept] * 2
        return sum(aligned_bytes(b.hw, "UB", n * eb) for n in sizes)

    plan = choose_tile(
        shape, tile_bytes, b.ub_budget(), axis + 1, b.split_depth(), b.hw.vector_cores
    )
    if plan is None:
        return "no tile of the dims after a cumulative axis fits UB"
    if b.dry_run:
        return None
    kind = "sum" if isinstance(op, CumSumOp) else "prod"
    flags = (bool(op.attr("exclusive")), bool(op.attr("reverse")))
    if plan.axis < axis or plan.size >= shape[axis]:
        _emit_whole(b, src_arg, out_arg, plan, element, kind, axis, flags)
    else:
        _emit_carried(b, src_arg, out_arg, plan, element, kind, axis, flags)
    return None


def _emit_whole(b, src_arg, out_arg, plan: TilePlan, element: Attribute, kind: str,
                axis: int, flags: tuple[bool, bool]) -> None:  # fmt: skip
    """Every tile holds the whole axis: scan each on its own."""
    tile = plan.tile_shape()
    x = b.buffer(tile, element, "UB", "x_ub")
    y = b.buffer(tile, element, "UB", "scan_ub")
    stack, offsets = tile_loops(b, plan)
    with stack:
        b.add(CopyOp(src_arg, offsets, x, [b.index(0)] * len(tile)))
        b.add(ScanOp(x, y, kind, axis, *flags))
        store(b, y, out_arg, offsets)
    b.tiles = plan.count()


def _emit_carried(b, src_arg, out_arg, plan: TilePlan, element: Attribute, kind: str,
                  axis: int, flags: tuple[bool, bool]) -> None:  # fmt: skip
    """Chunks of the axis in a sequential loop, the total so far carried in UB."""
    tile = plan.tile_shape()
    kept = [1 if d == axis else n for d, n in enumerate(tile)]
    identity = 0.0 if kind == "sum" else 1.0
    combine = BINARY_OPS["vadd" if kind == "sum" else "vmul"]
    x = b.buffer(tile, element, "UB", "x_ub")
    y = b.buffer(tile, element, "UB", "scan_ub")
    carry = b.buffer(kept, element, "UB", "carry_ub")
    total = b.buffer(kept, element, "UB", "total_ub")
    chunk, n = plan.size, plan.shape[axis]
    chunks = -(-n // chunk)
    zeros = [b.index(0)] * len(tile)
    with ExitStack() as stack:
        offsets: list[SSAValue] = [
            stack.enter_context(b.loop(plan.shape[d], 1, f"i{d}", True)) for d in range(axis)
        ]
        b.add(DupOp(carry, identity))
        k = stack.enter_context(b.loop(chunks, 1, "chunk"))
        reverse = flags[1]
        start = b.affine(k, -chunk, (chunks - 1) * chunk) if reverse else b.affine(k, chunk)
        at = [*offsets, start] + [b.index(0)] * (len(tile) - axis - 1)
        b.add(CopyOp(src_arg, at, x, zeros, pad=identity))
        b.add(ScanOp(x, y, kind, axis, *flags))
        b.add(combine(y, carry, y))
        store(b, y, out_arg, at)
        vreduce(b, kind, x, total, (axis,))
        b.add(combine(carry, total, carry))
    b.tiles = prod(plan.shape[:axis]) * chunks
