"""DynamicQuantizeLinear's scale and zero point (``graph.dynamic_quantize_params``) as one
vector kernel.

The input is read once, in chunks (:func:`.plan_chunks` over every axis: the whole tensor
when it fits UB, else the longest run of rows that does), each chunk reduced with
``vreduce min`` and ``vreduce max`` and merged into two accumulators. Both accumulators
start at 0 and a ragged chunk's lanes past the tensor are loaded as 0: the range always
includes 0 (``lo = min(min(x), 0)``, ``hi = max(max(x), 0)``), so 0 is the identity of
both extremes here and one padded load serves the pair. The kernel's end computes the two
scalars on one-element tiles in the order of the ONNX function body, each step rounded
to float32 as the graph ops are (:class:`DynamicQuantizeParamsOp`):
``scale = (hi - lo) / 255`` (1 where it is 0: onnxruntime's all-zero case), ``zero_point
= rint(clip(0 - lo / scale, 0, 255))`` converted to uint8 (and, moved by -128, to int8:
the zero point ``fold-integer-ops`` gives the int8 cube), and stores those something
reads.

One vector core runs it: the reduction is one output, and splitting it over the cores
would need a combine of the partial extremes through GM (a second kernel or a cross-core
barrier); the tensors a dynamically quantised matmul reads are activations of a few
hundred KB at most, which one core streams in microseconds.
"""

from __future__ import annotations

from contextlib import ExitStack
from math import prod

from xdsl.dialects.builtin import f32, i1
from xdsl.ir import SSAValue

from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.quantize import DynamicQuantizeParamsOp
from tilegraph.dialects.tile import CopyOp, memref_shape
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.elementwise import store
from tilegraph.lowering.conversion.tiling.reduction_chunks import ChunkPlan, plan_chunks, vreduce
from tilegraph.lowering.conversion.tiling.vector_emitter import VectorEmitter

Q_MAX = 255.0
"""uint8's largest value: the width of DynamicQuantizeLinear's grid."""

ONE_ELEMENT_TILES = 11
"""UB tiles of one element besides the chunk: two accumulators, a chunk's partial extreme,
three for the scalar program, its mask and four rank-0 tiles (the results)."""


def _ub_bytes(b: KernelBuilder, chunk: list[int]) -> int:
    one = aligned_bytes(b.hw, "UB", 4)
    return aligned_bytes(b.hw, "UB", 4 * prod(chunk)) + ONE_ELEMENT_TILES * one


def _chunk_loops(b: KernelBuilder, plan: ChunkPlan, stack: ExitStack) -> list[SSAValue]:
    """The loops over the chunks (every axis up to the chunk axis is reduced); the offsets
    of a chunk."""
    zero = b.index(0)
    offsets = []
    for d, extent in enumerate(plan.shape):
        if d <= plan.axis:
            offsets.append(stack.enter_context(b.loop(extent, plan.step(d), f"r{d}")))
        else:
            offsets.append(zero)
    return offsets


def emit_dynamic_quantize_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a lone ``graph.dynamic_quantize_params`` (see the module docstring); returns why
    not, or None."""
    (op,) = body.ops
    assert isinstance(op, DynamicQuantizeParamsOp)
    x_arg = body.source(op.x)
    outputs = dict(body.writes)
    if x_arg is None or len(outputs) != len(body.writes):
        return "dynamic quantisation parameters of a value computed in the kernel"
    shape = memref_shape(x_arg)
    if not shape or prod(shape) == 0:
        return "dynamic quantisation parameters of a scalar or empty tensor"
    axes = tuple(range(len(shape)))
    plan = plan_chunks(shape, axes, lambda chunk: _ub_bytes(b, list(chunk)), b.ub_budget())
    if plan is None:
        return "no chunk of the input fits UB"
    if b.dry_run:
        return None
    kept = plan.kept_shape()
    x = b.buffer(plan.tile_shape(), f32, "UB", "x_ub")
    lo, hi, part, scale, safe, tmp = (
        b.buffer(kept, f32, "UB", name)
        for name in ("lo_ub", "hi_ub", "part_ub", "scale_ub", "safe_ub", "tmp_ub")
    )
    mask = b.buffer(kept, i1, "UB", "zero_range_ub")
    e = VectorEmitter(b, scale, [])
    e.fill(lo, 0.0)
    e.fill(hi, 0.0)
    zero = b.index(0)
    with ExitStack() as stack:
        offsets = _chunk_loops(b, plan, stack)
        b.add(CopyOp(x_arg, offsets, x, [zero] * len(offsets)))  # ragged lanes: 0
        vreduce(b, "min", x, part, axes)
        e.binary("vmin", lo, part, lo)
        vreduce(b, "max", x, part, axes)
        e.binary("vmax", hi, part, hi)
    # scale = (hi - lo) / 255, and 1 where that is 0
    e.binary("vsub", hi, lo, scale)
    e.fill(tmp, Q_MAX)
    e.binary("vdiv", scale, tmp, scale)
    e.fill(tmp, 0.0)
    e.compare("eq", scale, tmp, mask)
    e.fill(tmp, 1.0)
    e.select(mask, tmp, scale, safe)
    # zero point = rint(clip(0 - lo / scale, 0, 255))
    e.binary("vdiv", lo, safe, part)
    e.fill(tmp, 0.0)
    e.binary("vsub", tmp, part, part)
    e.scalar("vmaxs", part, 0.0, part)
    e.scalar("vmins", part, Q_MAX, part)
    e.unary("vround", part, part)
    # drop the size-1 axes for the rank-0 outputs (a sum of one element is exact); store
    # the results something reads (the kernel's outputs)
    scale_out = b.buffer([], f32, "UB", "scale_out_ub")
    zero_f32 = b.buffer([], f32, "UB", "zero_point_f32_ub")
    vreduce(b, "sum", safe, scale_out, axes)
    vreduce(b, "sum", part, zero_f32, axes)
    if op.y_scale in outputs:
        store(b, scale_out, outputs[op.y_scale], [])
    if op.y_zero_point in outputs:
        zero_out = b.buffer([], element_type_of("uint8"), "UB", "zero_point_out_ub")
        e.cast(zero_f32, zero_out, "rint")
        store(b, zero_out, outputs[op.y_zero_point], [])
    if op.y_zero_point_int8 in outputs:  # zero_point - 128 on int8's grid (exact)
        shifted = b.buffer([], element_type_of("int8"), "UB", "zero_point_int8_ub")
        e.scalar("vadds", zero_f32, -128.0, zero_f32)
        e.cast(zero_f32, shifted, "rint")
        store(b, shifted, outputs[op.y_zero_point_int8], [])
    b.tiles = 1
    return None
