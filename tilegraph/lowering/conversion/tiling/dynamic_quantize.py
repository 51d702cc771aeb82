"""DynamicQuantizeLinear as one vector kernel: ``graph.dynamic_quantize_params`` (the scale
and zero point) and, when ``fuse-dynamic-quantize`` grouped it with it, the
``graph.quantize_linear`` of the same input with those parameters.

The input is seen flat (a kernel of this op reads ND tensors only: no padding lanes) and cut
into chunks of ``c`` elements that fit UB (:func:`plan`); the chunks are shared out over
``blocks`` blocks (the vector cores), ``per`` consecutive chunks each. Each block

1. reduces its chunks with ``vreduce min`` and ``vreduce max`` into two accumulators that
   start at 0; a ragged chunk's lanes past the tensor are loaded as 0 (``tile.copy_flat``).
   The range always includes 0 (``lo = min(min(x), 0)``, ``hi = max(max(x), 0)``), so 0 is
   the identity of both extremes here and one padded load serves the pair;
2. with more than one block: writes its two partial extremes, each broadcast over an
   8-lane (32-byte) slot, into a GM workspace of the launch (``dq_partials``: the minima's
   slots, then the maxima's), waits at the all-core barrier (``tile.sync_all``: hard on
   the AIVs of a decoupled preset, soft — through its own GM workspace — on a coupled
   one), reads every block's slots back and reduces them: every block then holds the
   extremes of the whole tensor (min and max are exact in any order);
3. computes the two scalars on one-element tiles in the order of the ONNX function body,
   each step rounded to float32 as the graph ops are (:class:`DynamicQuantizeParamsOp`):
   ``scale = (hi - lo) / 255`` (1 where it is 0: onnxruntime's all-zero case),
   ``zero_point = rint(clip(0 - lo / scale, 0, 255))`` (moved by -128 for the int8 zero
   point ``fold-integer-ops`` gives the int8 cube);
4. quantises its own chunks as the QuantizeLinear kernel does (``clip(rint(x / scale) +
   zero_point)`` in float32, then an exact conversion), reusing the chunk still in UB when
   the block has one chunk, else loading each chunk again;
5. block 0 alone stores the scale and zero point(s) something reads.

A tensor of at most :data:`MIN_BLOCK_ELEMENTS` elements per block runs as one block, with
no barrier and no workspace: the barrier's round trip would cost more than the share of
the stream it saves.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil, prod

from xdsl.dialects.builtin import f32, i1
from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.quantize import DynamicQuantizeParamsOp, QuantizeLinearOp
from tilegraph.dialects.graph.quantize_common import INTEGER_RANGES
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import BlockIdxOp, CopyFlatOp, CopyOp, SyncAllOp, memref_shape
from tilegraph.dialects.tile.barrier import SOFT_SLOT_ELEMENTS
from tilegraph.dialects.tile.base import scoped_memref
from tilegraph.formats import DType
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody, is_row_major, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.elementwise import store
from tilegraph.lowering.conversion.tiling.mix import add_workspace_argument
from tilegraph.lowering.conversion.tiling.reduction_chunks import vreduce
from tilegraph.lowering.conversion.tiling.vector_emitter import VectorEmitter

Q_MAX = 255.0
"""uint8's largest value: the width of DynamicQuantizeLinear's grid."""

LANES = 64
"""A chunk is a multiple of 64 elements: one 256-byte vector repeat of float32, so every
block's and chunk's start is 32-byte aligned in GM for the float input and the 8-bit
output alike."""

MIN_BLOCK_ELEMENTS = 2048
"""Elements (8 KB of float32) a block must have to be worth a block of its own. An
assumption of the model, not a published figure: below it a block's share of the stream
takes less than the all-core barrier's round trip (``tile.sync_all``'s cost, a few hundred
cycles) plus a launch-wide GM exchange."""

SLOT = SOFT_SLOT_ELEMENTS
"""Lanes of one block's partial extreme in the workspace: 32 bytes, so no two blocks
write the same 32-byte burst."""

ONE_ELEMENT_TILES = 12
"""UB tiles of one element besides the chunks: two accumulators, a chunk's partial
extreme, three for the scalar program, its mask, the zero point on the output's grid
and five for the results."""

PARTIALS_NAME = "dq_partials"

ONE = [1, 1]
"""The shape of the one-element tiles: a chunk is a ``1 x chunk`` tile (reduced over both
axes, :data:`AXES`), so the extremes and the scalars broadcast onto it."""
AXES = (0, 1)


@dataclass(frozen=True)
class Plan:
    """``blocks`` blocks of ``per`` chunks of ``chunk`` elements over ``n`` elements."""

    n: int
    chunk: int
    per: int
    blocks: int

    @property
    def share(self) -> int:
        """Elements of one block's part (the last block's may end past ``n``)."""
        return self.per * self.chunk


def _chunk_bytes(b: KernelBuilder, chunk: int, quantises: bool) -> int:
    one = aligned_bytes(b.hw, "UB", 4)
    tiles = aligned_bytes(b.hw, "UB", 4 * chunk) * (2 if quantises else 1)
    if quantises:
        tiles += aligned_bytes(b.hw, "UB", chunk)
    return tiles + ONE_ELEMENT_TILES * one


def plan(b: KernelBuilder, n: int, quantises: bool, cores: int) -> Plan | None:
    """The chunks and blocks of ``n`` elements (None: not even one chunk fits UB)."""
    # the exchange's tiles (one block's slot, every block's) and a soft barrier's UB
    # workspace (as many bytes as every block's slots)
    budget = b.ub_budget() - aligned_bytes(b.hw, "UB", 4 * SLOT * (2 * cores + 1))
    largest = 0
    step = LANES
    while _chunk_bytes(b, largest + step, quantises) <= budget:
        largest += step
    if largest == 0:
        return None
    wanted = max(1, min(cores, n // MIN_BLOCK_ELEMENTS))
    share = ceil(n / wanted)
    per = ceil(share / largest)  # the fewest chunks a block's share fits in
    chunk = ceil(ceil(share / per) / LANES) * LANES  # as even as the lanes allow
    return Plan(n, chunk, per, ceil(n / (per * chunk)))


def _quantize_of(body: KernelBody, op: DynamicQuantizeParamsOp) -> QuantizeLinearOp | None:
    """The grouped QuantizeLinear of ``op``'s input with its scale and a zero point of it."""
    for other in body.ops:
        if (
            isinstance(other, QuantizeLinearOp)
            and other.x is op.x
            and other.y_scale is op.y_scale
            and other.y_zero_point in (op.y_zero_point, op.y_zero_point_int8)
            and isinstance(t := other.y.type, TensorType)
            and t.dtype in (DType.int8, DType.uint8)
            and not int(other.attr("block_size"))
        ):
            return other
    return None


def emit_dynamic_quantize_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile ``graph.dynamic_quantize_params``, alone or with its QuantizeLinear (see the
    module docstring); returns why not, or None."""
    op = body.ops[0]
    assert isinstance(op, DynamicQuantizeParamsOp)
    quantize = _quantize_of(body, op)
    if len(body.ops) != (1 if quantize is None else 2):
        return "dynamic quantisation parameters with other ops in the kernel"
    x_arg = body.source(op.x)
    outputs = dict(body.writes)
    if x_arg is None or len(outputs) != len(body.writes):
        return "dynamic quantisation parameters of a value computed in the kernel"
    n = prod(memref_shape(x_arg))
    if not memref_shape(x_arg) or n == 0:
        return "dynamic quantisation parameters of a scalar or empty tensor"
    y_arg = None
    if quantize is not None:
        y_arg = outputs.get(quantize.y)
        if (
            y_arg is None
            or memref_shape(y_arg) != memref_shape(x_arg)
            or not is_row_major(tensor_of(quantize.y))
        ):
            return "a dynamic quantisation whose quantised output is not the input's layout"
    cores = b.hw.vector_cores
    found = plan(b, n, quantize is not None, cores)
    if found is None:
        return "no chunk of the input fits UB"
    if b.dry_run:
        return None
    _Emitter(body, b, op, found, x_arg, quantize, y_arg).emit()
    return None


class _Emitter:
    """The one kernel of a plan."""

    def __init__(
        self,
        body: KernelBody,
        b: KernelBuilder,
        op: DynamicQuantizeParamsOp,
        p: Plan,
        x_arg: SSAValue,
        quantize: QuantizeLinearOp | None,
        y_arg: SSAValue | None,
    ):
        self.body, self.b, self.op, self.p = body, b, op, p
        self.x_arg, self.quantize, self.y_arg = x_arg, quantize, y_arg
        self.x = b.buffer([1, p.chunk], f32, "UB", "x_ub")
        names = ("lo_ub", "hi_ub", "part_ub", "scale_ub", "safe_ub", "tmp_ub")
        self.lo, self.hi, self.part, self.scale, self.safe, self.tmp = (
            b.buffer(ONE, f32, "UB", name) for name in names
        )
        self.e = VectorEmitter(b, self.scale, [])
        self.start = b.index(0)
        if p.blocks > 1:  # the block index selects the chunks
            block = b.hoist(BlockIdxOp()).results[0]
            block.name_hint = "block"
            self.block: SSAValue | None = block
            self.start = b.affine(block, p.share)
        else:
            self.block = None

    def emit(self) -> None:
        b, e = self.b, self.e
        e.fill(self.lo, 0.0)
        e.fill(self.hi, 0.0)
        with self._chunks() as offset:
            b.add(CopyFlatOp(self.x_arg, offset, self.x, b.index(0), self.p.chunk))
            for kind, acc in (("min", self.lo), ("max", self.hi)):
                vreduce(b, kind, self.x, self.part, AXES)
                e.binary(f"v{kind}", acc, self.part, acc)
        if self.block is not None:
            self._exchange(self.block)
        zero_f32 = self._parameters()
        if self.quantize is not None:
            self._quantize(zero_f32)
        self._store_parameters(zero_f32)
        b.tiles = self.p.blocks * self.p.per
        b.blocks = self.p.blocks

    def _chunks(self):
        """The loop over this block's chunks; yields a chunk's flat offset."""
        b, p = self.b, self.p
        if p.per == 1:
            return _constant(self.start)
        upper = b.affine(self.block, p.share, p.share) if self.block is not None else None
        if upper is None:
            return b.loop(p.share, p.chunk, "c")
        return b.loop_over(self.start, upper, b.index(p.chunk), "c")

    def _exchange(self, block: SSAValue) -> None:
        """Each block's extremes into its workspace slots, the barrier, every block's
        extremes back and reduced (step 2 of the module docstring)."""
        b, e, p = self.b, self.e, self.p
        ws_type = scoped_memref([2 * p.blocks, SLOT], f32, "GM")
        ws = add_workspace_argument(self.body.fn, ws_type)
        ws.name_hint = PARTIALS_NAME
        slot = b.buffer([1, SLOT], f32, "UB", "slot_ub")
        every = b.buffer([p.blocks, SLOT], f32, "UB", "partials_ub")
        zero = b.index(0)
        for i, acc in enumerate((self.lo, self.hi)):
            e.fill(slot, 0.0)
            e.binary("vadd", slot, acc, slot)  # the extreme on every lane (x + 0 is exact)
            row = b.affine(block, 1, i * p.blocks)
            b.add(CopyOp(slot, [zero, zero], ws, [row, zero]))
        mode = "soft" if b.hw.coupled else "hard"
        b.add(SyncAllOp(mode, "aiv"))
        for i, (kind, acc) in enumerate((("min", self.lo), ("max", self.hi))):
            b.add(CopyOp(ws, [b.index(i * p.blocks), zero], every, [zero, zero]))
            vreduce(b, kind, every, acc, AXES)

    def _parameters(self) -> SSAValue:
        """scale (``safe``) and the uint8 zero point in float32 (returned), as the ONNX
        function body computes them."""
        return parameters(self.e, self.lo, self.hi, (self.part, self.scale, self.safe, self.tmp))

    def _quantize(self, zero_f32: SSAValue) -> None:
        """clip(rint(x / scale) + zero_point) of this block's chunks into the output."""
        b, e, p = self.b, self.e, self.p
        quantize, y_arg = self.quantize, self.y_arg
        assert quantize is not None and y_arg is not None
        out_type = quantize.y.type
        assert isinstance(out_type, TensorType)
        element = _element(out_type)
        shift = -128.0 if quantize.y_zero_point is self.op.y_zero_point_int8 else 0.0
        zero = zero_f32
        if shift:  # the int8 zero point: exact, a small integer
            zero = b.buffer(ONE, f32, "UB", "grid_zero_ub")
            e.scalar("vadds", zero_f32, shift, zero)
        q_lo, q_hi = INTEGER_RANGES[out_type.dtype]
        tmp = b.buffer([1, p.chunk], f32, "UB", "quotient_ub")
        y = b.buffer([1, p.chunk], element, "UB", "y_ub")
        with self._chunks() as offset:
            if p.per > 1:  # one chunk: still in UB from the reduction
                b.add(CopyFlatOp(self.x_arg, offset, self.x, b.index(0), p.chunk))
            quantize_values(e, self.x, self.safe, zero, (q_lo, q_hi), tmp)
            e.cast(tmp, y, "rint")
            b.add(CopyFlatOp(y, b.index(0), y_arg, offset, p.chunk))

    def _store_parameters(self, zero_f32: SSAValue) -> None:
        """The scale and zero point(s) something reads, stored by block 0 alone (every
        block computed the same)."""
        b, e, op = self.b, self.e, self.op
        outputs = dict(self.body.writes)
        first = self.block
        with (
            _constant(b.index(0))
            if first is None
            else b.loop_over(first, b.index(1), b.index(1), "first")
        ):
            # drop the size-1 axis for the rank-0 outputs (a sum of one element is exact)
            zero = b.buffer([], f32, "UB", "zero_point_f32_ub")
            vreduce(b, "sum", zero_f32, zero, AXES)
            if op.y_scale in outputs:
                scale = b.buffer([], f32, "UB", "scale_out_ub")
                vreduce(b, "sum", self.safe, scale, AXES)
                store(b, scale, outputs[op.y_scale], [])
            if op.y_zero_point in outputs:
                zero_out = b.buffer([], element_type_of("uint8"), "UB", "zero_point_out_ub")
                e.cast(zero, zero_out, "rint")
                store(b, zero_out, outputs[op.y_zero_point], [])
            if op.y_zero_point_int8 in outputs:  # zero_point - 128 on int8's grid (exact)
                shifted = b.buffer([], element_type_of("int8"), "UB", "zero_point_int8_ub")
                e.scalar("vadds", zero, -128.0, zero)
                e.cast(zero, shifted, "rint")
                store(b, shifted, outputs[op.y_zero_point_int8], [])


def parameters(
    e: VectorEmitter,
    lo: SSAValue,
    hi: SSAValue,
    tiles: tuple[SSAValue, SSAValue, SSAValue, SSAValue],
) -> SSAValue:
    """From the extremes ``lo`` and ``hi`` (range including 0) on one-element f32 tiles,
    DynamicQuantizeLinear's scale into ``safe`` and its uint8 zero point in float32 into
    ``part`` (returned), each step rounded to float32 in the ONNX function body's order
    (:class:`DynamicQuantizeParamsOp`); ``tiles`` is (part, scale, safe, tmp)."""
    part, scale, safe, tmp = tiles
    mask = e.b.buffer(memref_shape(part), i1, "UB", "zero_range_ub")
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
    return part


def quantize_values(
    e: VectorEmitter,
    x: SSAValue,
    scale: SSAValue,
    zero: SSAValue,
    bounds: tuple[int, int],
    dst: SSAValue,
) -> None:
    """``dst = clip(rint(x / scale) + zero, *bounds)`` in float32 (QuantizeLinear's
    order; ``dst`` holds integers, converted exactly by a cast)."""
    e.binary("vdiv", x, scale, dst)
    e.unary("vround", dst, dst)
    e.binary("vadd", dst, zero, dst)
    e.scalar("vmaxs", dst, float(bounds[0]), dst)
    e.scalar("vmins", dst, float(bounds[1]), dst)


def _element(t: TensorType) -> Attribute:
    return element_type_of("int8" if t.dtype == DType.int8 else "uint8")


class _constant:
    """A context manager yielding ``value``: the loop of one trip, not emitted."""

    def __init__(self, value: SSAValue):
        self.value = value

    def __enter__(self) -> SSAValue:
        return self.value

    def __exit__(self, *_: object) -> None:
        return None
