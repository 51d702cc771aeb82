"""Range on the vector cores: ``tile.varange`` per tile of the 1-D output.

A Range whose scalars are compile-time constants has a static length, and constant-fold
evaluates it — unless the result is more than ``growth`` times its operands' bytes (an
``arange`` of a few thousand positions from three scalars: torchaudio's resampler masks
its output with ``arange(new_len) < lengths``). That Range is a kernel of its own with no
input: the output tiled as an elementwise kernel's (:func:`.elementwise.choose_tile`,
shared over the vector cores), each tile ``tile.varange`` from its offset, then stored::

    for t in 0 .. n step T:                          tile.parallel
      varange t to seq_ub {start, delta}             V
      copy seq_ub -> out[t]                          MTE3

``start`` and ``delta`` are inlined constants (``lower-graph-to-kernels``); a Range with
a run-time scalar has a run-time length, which this level does not lower, and a 16-bit
float Range computed in float64 (``stash_type`` 11) stays on the host too (the reason is
reported).
"""

from __future__ import annotations

from math import prod

import numpy as np

from tilegraph.dialects.graph.base import constant_value
from tilegraph.dialects.graph.generators import RangeOp
from tilegraph.dialects.tile import ArangeOp, memref_shape
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.elementwise import choose_tile, store, tile_loops

EXACT_LIMIT = 2**53
"""``tile.varange`` holds its scalars as f64: integers beyond this would be rounded."""


def emit_range_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a lone Range (see the module docstring); returns why it cannot (None when
    emitted)."""
    (op,) = body.ops
    assert isinstance(op, RangeOp)
    start, delta = constant_value(op.start), constant_value(op.delta)
    if start is None or delta is None or constant_value(op.limit) is None:
        return "a range whose scalars are computed at run time"
    first, step = (np.asarray(v).reshape(()).item() for v in (start, delta))
    if any(abs(v) >= EXACT_LIMIT for v in (first, step)):
        return "a range whose start or delta is not exact in float64"
    written = dict(body.writes).get(op.output)
    if written is None:
        return "a range whose result is not written to GM"
    out_shape = memref_shape(written)
    element = tensor_of(op.output).element_type
    eb = element_bytes(element)
    if eb == 2 and int(op.attr("stash_type")) != 1:
        return "a 16-bit float range computed in float64 (stash_type 11)"
    if not out_shape[0]:
        return "an empty range"

    def tile_bytes(tile) -> int:
        return aligned_bytes(b.hw, "UB", prod(tile) * eb)

    plan = choose_tile(
        out_shape, tile_bytes, b.ub_budget(), depth=b.split_depth(), cores=b.hw.vector_cores
    )
    if plan is None:
        return "no range tile fits UB"
    if b.dry_run:
        return None
    seq = b.buffer(plan.tile_shape(), element, "UB", "seq_ub")
    stack, offsets = tile_loops(b, plan)
    with stack:
        b.add(ArangeOp(offsets[0], seq, float(first), float(step)))
        store(b, seq, written, offsets)
    b.tiles = plan.count()
    return None
