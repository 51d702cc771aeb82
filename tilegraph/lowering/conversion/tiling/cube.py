"""Cube kernels: convolution and matrix multiplication as loops of DMA, cube and fixpipe.

The strategies are :mod:`.conv` and :mod:`.matmul`; this module holds what they share
(the anchor / prologue / epilogue split of a cube kernel).

**Convolution** (``graph.conv2d`` on NC1HWC0 data and FRACTAL_Z weights, GE's layouts):
the output is cut into tiles of ``rows`` output rows x all output columns (M = rows·OW
pixels) by ``n1`` output-channel fractals; the reduction over K = (C1, kh, kw, C0) runs in
steps of ``k1`` fractals. Per M tile the input rows it needs (with the halo, top/bottom
padding as zero rows) go GM -> L1 once; per K step ``load3d`` builds the img2col fractals in
L0A and the weight fractals go GM -> L1 -> L0B; ``mmad`` accumulates in L0C. A grouped or
depthwise convolution runs one such loop nest per group block of FRACTAL_Z's groups rule
(``e`` groups per block), on the block's channel slices.

**3-D convolution** (``graph.conv`` on NDC1HWC0 data and FRACTAL_Z_3D weights): the 2-D
tiling per output depth plane, its depth taps accumulating into one L0C (:mod:`.conv3d`).

**MatMul / Gemm** (ND or FRACTAL_NZ operands, batched with broadcast): base blocks
(baseM, baseN, baseK) in fractals; A goes GM -> L1 as NZ (``nd2nz``) and L1 -> L0A as ZZ, B
as ZN into L0B (transposed on the way when it is held as rows of K). One L1 window holds up
to four base K steps (:func:`.matmul_l1.l1_k_steps`), so MTE2 moves fewer, longer runs; when
one operand's whole-K panel fits L1 it is loaded once for a group of output blocks along
the other axis (stepN / stepM, :func:`.matmul_l1.plan_l1_reuse`).

The epilogue: ``fixpipe`` takes the accumulator out with bias and ReLU; any other fused
elementwise op runs on the UB copy of the output tile (:mod:`.elementwise`) before the
store, so the intermediate never goes to GM. A FRACTAL_NZ result whose elementwise ops end
in its NZ -> ND conversion (a BERT pooler's ``gemm, tanh, trans_data``) takes the
conversion first: fixpipe's nz2nd writes the ND tile, on which the ops run (they are
per-element, so they commute with the layout change; :func:`sink_nz_to_nd`). On a preset
without an L0C -> GM path (``HardwareModel.l0c_to_gm`` False: the 310P3) every output
tile takes that way, with an empty chain: ``fixpipe`` L0C -> UB (bias, ReLU, cast on the
way), then ``tile.copy`` UB -> GM (MTE3), as CANN's tilings move a coupled chip's results.
Tile sizes keep each of L0A, L0B, L0C and L1 at half its capacity (room for the ping-pong
buffers of multi-buffering).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.dialects.builtin import f32, i32
from xdsl.ir import Attribute, Operation, SSAValue

from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.graph.elementwise import ReluOp
from tilegraph.dialects.graph.facts import FormatRole, FusionKind
from tilegraph.dialects.graph.linalg import GemmOp, MatMulOp
from tilegraph.dialects.graph.nn import Conv2dOp, ConvOp
from tilegraph.dialects.graph.quantized_cube import Int8ConvBase, Int8MatMulBase
from tilegraph.dialects.graph.requantized_cube import RequantConv2dOp, RequantMatMulOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.tile import (
    memref_shape,
)
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.formats import Format
from tilegraph.hardware import HardwareModel
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.elementwise import Chain
from tilegraph.lowering.conversion.tiling.matmul_views import (
    result_chain,
    rows_epilogue,
    view_of,
)

F = Format
FRACTAL = 16
BASE_M = 128
"""Output pixels a convolution tile aims at (Ascend C's baseM); rows x width rounds it."""


CONV_ANCHORS = (Conv2dOp, Int8ConvBase)
"""The 2-D convolutions :mod:`.conv` tiles: float, and int8 with fixpipe dequantisation
or requantisation."""

MATMUL_ANCHORS = (MatMulOp, GemmOp, Int8MatMulBase)
"""The matrix products :mod:`.matmul` tiles: float, and int8 with fixpipe dequantisation
or requantisation."""


def requantisation(anchor: Operation) -> tuple[int, bool] | None:
    """(zero point, ReLU first) when fixpipe requantises ``anchor``'s sum to int8
    (``graph.requant_conv2d`` / ``graph.requant_matmul``), else None."""
    if not isinstance(anchor, RequantConv2dOp | RequantMatMulOp):
        return None
    return int(anchor.attr("zero_point")), bool(anchor.attr("relu"))


def accumulator_type(element: Attribute) -> Attribute:
    return i32 if str(element) == "i8" else f32


@dataclass
class CubeKernel:
    """The anchor op of a cube kernel, what feeds it and what follows it."""

    anchor: GraphOp
    prologue: list[Operation]
    epilogue: list[Operation]


def split_cube_kernel(body: KernelBody) -> CubeKernel | str:
    anchors = [op for op in body.ops if isinstance(op, GraphOp) and op.FACTS.heavy]
    if len(anchors) != 1:
        return "no single cube anchor"
    anchor = anchors[0]
    index = body.ops.index(anchor)
    return CubeKernel(anchor, body.ops[:index], body.ops[index + 1 :])


def _is_nz_to_nd(op: Operation, value: SSAValue) -> bool:
    if not isinstance(op, TransDataOp) or op.input is not value:
        return False
    return (
        tensor_of(op.input).storage_format == F.FRACTAL_NZ
        and tensor_of(op.output).storage_format == tensor_of(op.output).origin_format
    )


def nd_source(kernel: CubeKernel, value: SSAValue) -> SSAValue:
    """The ND value a FRACTAL_NZ operand was converted from in the prologue (nd2nz does it
    on the way in), else the value itself."""
    for op in kernel.prologue:
        if isinstance(op, TransDataOp) and op.output is value:
            if tensor_of(op.output).storage_format == F.FRACTAL_NZ and (
                tensor_of(op.input).storage_format == tensor_of(op.input).origin_format
            ):
                return op.input
    return value


def sink_nz_to_nd(body: KernelBody, anchor_value: SSAValue, ops: list[Operation]) -> bool | str:
    """Whether the epilogue ``ops`` of the FRACTAL_NZ result ``anchor_value`` are
    per-element ops ending in the NZ -> ND conversion of their result, which the kernel
    writes: then fixpipe converts on the way out and the ops run on the ND tile (True).
    False when the ops are not of that form; why not, when they are but cannot move: an
    op that is not per-element, or another tensor the ops read held in FRACTAL_NZ (an ND
    tile cannot address it)."""
    if len(ops) < 2 or tensor_of(anchor_value).storage_format != F.FRACTAL_NZ:
        return False
    last, rest = ops[-1], ops[:-1]
    if not _is_nz_to_nd(last, rest[-1].results[0]) or len(body.writes) != 1:
        return False
    if body.writes[0][0] is not last.results[0]:
        return False
    produced = {anchor_value, *(r for op in rest for r in op.results)}
    for op in rest:
        facts = op.FACTS if isinstance(op, GraphOp) else None
        if facts is None or facts.role != FormatRole.AGNOSTIC or len(op.results) != 1:
            return f"{op.name} between a FRACTAL_NZ matmul result and its NZ -> ND"
        if facts.fusion > FusionKind.BROADCAST:
            return f"{op.name} between a FRACTAL_NZ matmul result and its NZ -> ND"
        for v in op.operands:
            if v not in produced and tensor_of(v).storage_format == F.FRACTAL_NZ:
                return (
                    f"a FRACTAL_NZ operand of {op.name} in the epilogue of an NZ matmul "
                    "result converted to ND (an ND tile cannot read it)"
                )
    return True


class Epilogue:
    """What happens to the accumulator tile: fixpipe flags, or a vector chain on UB."""

    def __init__(self, body: KernelBody, kernel: CubeKernel, b: KernelBuilder | None = None):
        self.body = body
        self.ops = list(kernel.epilogue)
        self.anchor_value = kernel.anchor.results[0]
        # FRACTAL_NZ -> ND of the result is what fixpipe does on the way out anyway.
        if self.ops and _is_nz_to_nd(self.ops[0], self.anchor_value):
            self.anchor_value = self.ops.pop(0).results[0]
        self.out_value, self.out_arg = body.writes[0]
        sunk = sink_nz_to_nd(body, self.anchor_value, self.ops)
        self.nz_to_nd = sunk is True
        """Fixpipe converts the NZ result to ND before the ops (an NZ -> ND at their end)."""
        self.refusal = sunk if isinstance(sunk, str) else None
        """Why an NZ -> ND at the end of the ops cannot move to fixpipe."""
        if self.nz_to_nd:
            self.out_value = self.ops.pop().operands[0]
        chain = result_chain(body, self.anchor_value, self.ops) if b is not None else None
        aliases: dict[SSAValue, SSAValue] = {}
        sources: dict[SSAValue, SSAValue] = {}
        if chain is not None and b is not None:  # the head merge: write through a GM view
            self.ops = []
            self.out_value = self.anchor_value
            self.out_arg = view_of(b, body.writes[0][1], chain.view)
        rows = rows_epilogue(b, body, kernel.anchor, self.ops) if b is not None else None
        if rows is not None:  # elementwise ops across a reshape of rows: on the matmul's tiles
            self.ops, self.out_arg, sources = rows.ops, rows.out_arg, rows.sources
            aliases[rows.reshaped] = self.anchor_value
        self.relu = rows is None and len(self.ops) == 1 and isinstance(self.ops[0], ReluOp)
        self.chain: Chain | None = None
        if self.ops and not self.relu:
            shape = memref_shape(self.out_arg)
            self.chain = Chain(body, self.ops, shape, aliases=aliases, sources=sources)

    def unsupported(self) -> str | None:
        if len(self.body.writes) != 1:
            return "a cube kernel with several outputs"
        if self.refusal is not None:
            return self.refusal
        if self.chain is not None:
            if self.chain.out_shape != self.result_shape:
                return "the epilogue changes the output shape"
            return self.chain.unsupported(given=[self.anchor_value])
        if self.out_value is not (self.ops[-1].results[0] if self.ops else self.anchor_value):
            return "the kernel does not write its anchor's chain"
        return None

    @property
    def result_shape(self) -> tuple[int, ...]:
        """The accumulator's shape as fixpipe writes it: the anchor's storage shape, or
        its ND (origin) shape when fixpipe converts an NZ result (``nz_to_nd``)."""
        t = tensor_of(self.anchor_value)
        return tuple(int(d) for d in (t.origin_shape if self.nz_to_nd else t.storage_shape))

    def through_ub(self, hw: HardwareModel) -> bool:
        """The output tile goes fixpipe -> UB -> GM: a vector chain runs on it, or the
        preset has no L0C -> GM path (310P: ``HardwareModel.l0c_to_gm`` False, an empty
        chain: fixpipe's bias / ReLU / cast, then MTE3's copy out)."""
        return self.chain is not None or not hw.l0c_to_gm

    def ub_bytes(self, hw: HardwareModel, tile: Sequence[int], element: Attribute) -> int:
        """UB bytes of the way out of a ``tile``-shaped output tile: the accumulator's UB
        copy and the chain's tiles; 0 when fixpipe writes GM itself."""
        if not self.through_ub(hw):
            return 0
        acc = prod(tile) * element_bytes(element)
        if self.chain is None:
            return acc
        return acc + self.chain.ub_bytes(hw, tile, given=[self.anchor_value])


def emit_cube_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    kernel = split_cube_kernel(body)
    if isinstance(kernel, str):
        return kernel
    from tilegraph.lowering.conversion.tiling.conv import emit_conv
    from tilegraph.lowering.conversion.tiling.conv3d import emit_conv3d
    from tilegraph.lowering.conversion.tiling.matmul import emit_matmul

    if isinstance(kernel.anchor, CONV_ANCHORS):
        return emit_conv(body, kernel, b)
    if isinstance(kernel.anchor, ConvOp) and tensor_of(kernel.anchor.input).rank == 5:
        return emit_conv3d(body, kernel, b)
    if isinstance(kernel.anchor, MATMUL_ANCHORS):
        return emit_matmul(body, kernel, b)
    return f"no cube lowering for {kernel.anchor.name}"
