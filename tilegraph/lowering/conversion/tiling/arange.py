"""Range and ConstantOfShape on the vector cores: ``tile.varange`` / ``tile.vdup`` per tile.

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

A ConstantOfShape of a compile-time shape that constant-fold does not materialise (its
result is large) is the same kernel with ``tile.vdup`` of its value making each tile.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod

import numpy as np
from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph.base import constant_value
from tilegraph.dialects.graph.constant_ops import ConstantOfShapeOp
from tilegraph.dialects.graph.generators import RangeOp
from tilegraph.dialects.tile import ArangeOp, DupOp, memref_shape
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
    if element_bytes(tensor_of(op.output).element_type) == 2 and int(op.attr("stash_type")) != 1:
        return "a 16-bit float range computed in float64 (stash_type 11)"
    return _generated(
        body, b, op.output, "range", lambda at, ub: ArangeOp(at, ub, float(first), float(step))
    )


def emit_constant_of_shape_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a lone ConstantOfShape of a compile-time shape too large for constant-fold to
    materialise (a tf2onnx ``ones_like`` of a ``[B, T, C]`` activation): each tile
    ``tile.vdup`` of the value, then stored. Returns why it cannot (None when emitted)."""
    (op,) = body.ops
    assert isinstance(op, ConstantOfShapeOp)
    if constant_value(op.shape) is None:
        return "a constant_of_shape whose shape is computed at run time"
    fill = 0.0 if op.value is None else np.asarray(op.value.array).reshape(-1)[0].item()
    return _generated(body, b, op.output, "constant_of_shape", lambda _, ub: DupOp(ub, fill))


def _generated(
    body: KernelBody,
    b: KernelBuilder,
    output: SSAValue,
    label: str,
    generate: Callable[[SSAValue, SSAValue], Operation],
) -> str | None:
    """A kernel with no input: ``output`` tiled as an elementwise kernel's, each tile made
    in UB by the op ``generate(offset, tile)`` returns, then stored."""
    written = dict(body.writes).get(output)
    if written is None:
        return f"a {label} whose result is not written to GM"
    out_shape = memref_shape(written)
    element = tensor_of(output).element_type
    eb = element_bytes(element)
    if not prod(out_shape):
        return f"an empty {label}"

    def tile_bytes(tile) -> int:
        return aligned_bytes(b.hw, "UB", prod(tile) * eb)

    plan = choose_tile(
        out_shape, tile_bytes, b.ub_budget(), depth=b.split_depth(), cores=b.hw.vector_cores
    )
    if plan is None:
        return f"no {label} tile fits UB"
    if b.dry_run:
        return None
    tile = b.buffer(plan.tile_shape(), element, "UB", "seq_ub")
    stack, offsets = tile_loops(b, plan)
    with stack:
        b.add(generate(offsets[0], tile))
        store(b, tile, written, offsets)
    b.tiles = plan.count()
    return None
