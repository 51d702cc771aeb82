"""Local response normalisation on the vector unit.

``y = x / (bias + alpha / size · Σ x²)^beta`` with the sum over ``size`` neighbouring
channels. A tile holds every channel of a block of rows and columns of one image (NCHW); the
channel sum
adds ``size`` copies of ``x²`` shifted along C inside UB (a UB -> UB ``tile.copy`` whose
window runs off the channel range fills zeros there: the zero padding of the sum), then the
power runs as ``exp(-beta · ln(·))``.
"""

from __future__ import annotations

from tilegraph.dialects.graph.nn import LrnOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import BINARY_OPS, SCALAR_OPS, UNARY_OPS, CopyOp, memref_shape
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.elementwise import store

_BUFFERS = 4  # x, x², the shifted copy, the sum (which becomes the result)


def emit_lrn_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    op = body.ops[0]
    assert isinstance(op, LrnOp)
    if len(body.ops) != 1 or len(body.writes) != 1:
        return "an LRN fused with other ops"
    x = op.operands[0].type
    assert isinstance(x, TensorType)
    if x.storage_format != x.origin_format or x.rank != 4:
        return f"LRN on a {x.storage_format} tensor of rank {x.rank}"
    x_arg = body.source(op.operands[0])
    if x_arg is None:
        return "LRN of a value computed inside the kernel"
    n, c, h, w = memref_shape(x_arg)
    eb = element_bytes(x.element_type)
    budget = b.ub_budget()
    rows, cols = h, w
    while rows > 1 and _BUFFERS * aligned_bytes(b.hw, "UB", c * rows * cols * eb) > budget:
        rows -= 1
    while cols > 0 and _BUFFERS * aligned_bytes(b.hw, "UB", c * rows * cols * eb) > budget:
        cols -= 1
    if cols == 0:
        return "one pixel of all channels does not fit UB"
    if b.dry_run:
        return None
    size = int(op.attr("size"))
    alpha, beta, bias = (float(op.attr(k)) for k in ("alpha", "beta", "bias"))
    tile = [1, c, rows, cols]
    element = x.element_type
    x_ub = b.buffer(tile, element, "UB", "x_ub")
    sq_ub = b.buffer(tile, element, "UB", "square_ub")
    shifted = b.buffer(tile, element, "UB", "shifted_ub")
    acc = b.buffer(tile, element, "UB", "sum_ub")
    zero = b.index(0)
    with (
        b.loop(n, 1, "n", True) as ni,
        b.loop(h, rows, "h", True) as hi,
        b.loop(w, cols, "w", True) as wi,
    ):
        offsets = [ni, zero, hi, wi]
        b.add(CopyOp(x_arg, offsets, x_ub, [zero] * 4))
        b.add(BINARY_OPS["vmul"](x_ub, x_ub, sq_ub))
        b.add(SCALAR_OPS["vmuls"](sq_ub, 0.0, acc))
        for shift in range(-((size - 1) // 2), size // 2 + 1):
            b.add(CopyOp(sq_ub, [zero, b.index(shift), zero, zero], shifted, [zero] * 4))
            b.add(BINARY_OPS["vadd"](acc, shifted, acc))
        b.add(SCALAR_OPS["vmuls"](acc, alpha / size, acc))
        b.add(SCALAR_OPS["vadds"](acc, bias, acc))
        b.add(UNARY_OPS["vln"](acc, acc))
        b.add(SCALAR_OPS["vmuls"](acc, -beta, acc))
        b.add(UNARY_OPS["vexp"](acc, acc))
        b.add(BINARY_OPS["vmul"](x_ub, acc, acc))
        store(b, acc, body.writes[0][1], offsets)
    b.tiles = n * -(-h // rows) * -(-w // cols)
    return None
