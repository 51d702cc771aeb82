"""Cube kernels: convolution and matrix multiplication as loops of DMA, cube and fixpipe.

**Convolution** (``graph.conv2d`` on NC1HWC0 data and FRACTAL_Z weights, GE's layouts):
the output is cut into tiles of ``rows`` output rows x all output columns (M = rows·OW
pixels) by ``n1`` output-channel fractals; the reduction over K = (C1, kh, kw, C0) runs in
steps of ``k1`` fractals. Per M tile the input rows it needs (with the halo, top/bottom
padding as zero rows) go GM -> L1 once; per K step ``load3d`` builds the img2col fractals in
L0A and the weight fractals go GM -> L1 -> L0B; ``mmad`` accumulates in L0C. A grouped or
depthwise convolution runs one such loop nest per group block of FRACTAL_Z's groups rule
(``e`` groups per block), on the block's channel slices.

**MatMul / Gemm** (ND or FRACTAL_NZ operands, batched with broadcast): base blocks
(baseM, baseN, baseK) in fractals; A goes GM -> L1 as NZ (``nd2nz``) and L1 -> L0A as ZZ, B
as ZN into L0B (transposed on the way when it is held as rows of K).

The epilogue: ``fixpipe`` takes the accumulator out with bias and ReLU; any other fused
elementwise op runs on the UB copy of the output tile (:mod:`.elementwise`) before the
store, so the intermediate never goes to GM. Tile sizes keep each of L0A, L0B, L0C and L1
at half its capacity (room for the ping-pong buffers of multi-buffering).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.dialects import arith
from xdsl.dialects.builtin import f32, i32
from xdsl.ir import Attribute, Operation, SSAValue

from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.graph.elementwise import ReluOp
from tilegraph.dialects.graph.linalg import GemmOp, MatMulOp
from tilegraph.dialects.graph.nn import Conv2dOp
from tilegraph.dialects.graph.windows import window
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import (
    BINARY_OPS,
    SCALAR_OPS,
    UNARY_OPS,
    CopyOp,
    FixpipeOp,
    Load2dOp,
    Load3dOp,
    Load5hdOp,
    MmadOp,
    Nd2NzOp,
    memref_shape,
)
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.formats import Format
from tilegraph.formats.shape import group_plan
from tilegraph.lowering.kernel_body import KernelBody
from tilegraph.lowering.tiling.builder import KernelBuilder
from tilegraph.lowering.tiling.elementwise import Chain, store

F = Format
FRACTAL = 16
BASE_M = 128
"""Output pixels a convolution tile aims at (Ascend C's baseM); rows x width rounds it."""


def _accumulator(element: Attribute) -> Attribute:
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


def _storage(value: SSAValue) -> TensorType:
    t = value.type
    assert isinstance(t, TensorType)
    return t


def _is_nz_to_nd(op: Operation, value: SSAValue) -> bool:
    if not isinstance(op, TransDataOp) or op.input is not value:
        return False
    return (
        _storage(op.input).storage_format == F.FRACTAL_NZ
        and _storage(op.output).storage_format == _storage(op.output).origin_format
    )


def _nd_source(kernel: CubeKernel, value: SSAValue) -> SSAValue:
    """The ND value a FRACTAL_NZ operand was converted from in the prologue (nd2nz does it
    on the way in), else the value itself."""
    for op in kernel.prologue:
        if isinstance(op, TransDataOp) and op.output is value:
            if _storage(op.output).storage_format == F.FRACTAL_NZ and (
                _storage(op.input).storage_format == _storage(op.input).origin_format
            ):
                return op.input
    return value


class Epilogue:
    """What happens to the accumulator tile: fixpipe flags, or a vector chain on UB."""

    def __init__(self, body: KernelBody, kernel: CubeKernel):
        self.body = body
        self.ops = list(kernel.epilogue)
        self.anchor_value = kernel.anchor.results[0]
        # FRACTAL_NZ -> ND of the result is what fixpipe does on the way out anyway.
        if self.ops and _is_nz_to_nd(self.ops[0], self.anchor_value):
            self.anchor_value = self.ops.pop(0).results[0]
        self.relu = len(self.ops) == 1 and isinstance(self.ops[0], ReluOp)
        self.out_value, self.out_arg = body.writes[0]
        self.chain: Chain | None = None
        if self.ops and not self.relu:
            self.chain = Chain(body, self.ops, memref_shape(self.out_arg))

    def unsupported(self) -> str | None:
        if len(self.body.writes) != 1:
            return "a cube kernel with several outputs"
        if self.chain is not None:
            if self.chain.out_shape != tuple(_storage(self.anchor_value).storage_shape):
                return "the epilogue changes the output shape"
            return self.chain.unsupported(given=[self.anchor_value])
        if self.out_value is not (self.ops[-1].results[0] if self.ops else self.anchor_value):
            return "the kernel does not write its anchor's chain"
        return None

    def ub_bytes(self, hw, tile: Sequence[int], element: Attribute) -> int:
        if self.chain is None:
            return 0
        acc = prod(tile) * element_bytes(element)
        return acc + self.chain.ub_bytes(hw, tile, given=[self.anchor_value])


# ---- convolution -------------------------------------------------------------------------


@dataclass(frozen=True)
class ConvGeometry:
    batch: int
    c1_in: int
    height: int
    width: int
    c0: int
    out_c1: int
    out_h: int
    out_w: int
    kernel: tuple[int, int]
    strides: tuple[int, int]
    dilations: tuple[int, int]
    pad_top: int
    pad_left: int
    blocks: int
    """Group blocks run one after the other (1 when not grouped)."""
    block_c1: int
    """Input C1 fractals of one block."""
    block_k1: int
    """K fractals of one block: block_c1 · kh · kw."""
    block_n1: int
    """Output channel fractals of one block."""
    block_channels: int
    """Input channels of one block (the valid lanes of its slab)."""
    in_channels: int
    """Input channels of the whole tensor."""
    in_c1_step: int
    out_c1_step: int
    w_k_step: int
    w_n_step: int
    """Per block: where its input slab, output slab and weight fractals start."""


def conv_geometry(conv: Conv2dOp, data: TensorType) -> ConvGeometry | str:
    x, w, out = data, _storage(conv.weight), _storage(conv.output)
    if x.storage_format != F.NC1HWC0 or out.storage_format != F.NC1HWC0:
        return "convolution data not in NC1HWC0 (run the format engine: -p O2)"
    if w.storage_format != F.FRACTAL_Z:
        return "convolution weight not in FRACTAL_Z"
    if conv.bias is not None:
        b = _storage(conv.bias)
        if b.storage_format != F.NC1HWC0 or len(b.storage_shape) != 5:
            return "convolution bias not in NC1HWC0"
    n, c1, h, wd, c0 = (int(d) for d in x.storage_shape)
    _, oc1, oh, ow, _ = (int(d) for d in out.storage_shape)
    m, cg, kh, kw = (int(d) for d in w.origin_shape)
    axes = window(type(conv), conv.properties, [h, wd], [kh, kw])
    groups = conv.attr("group")
    k_total, n1_w = int(w.storage_shape[0]), int(w.storage_shape[1])
    if groups == 1:
        blocks, block_c1, block_channels = 1, c1, int(x.origin_shape[1])
        steps = (0, 0, 0, 0)
        block_n1 = n1_w
    elif w.groups.data == groups:
        # FRACTAL_Z's groups rule: e groups per block, blocks stacked along K.
        plan = group_plan(m, cg, c0, groups)
        if plan is None or plan.enlarge is None:
            return "grouped convolution whose weight ignores groups"
        e = plan.enlarge
        blocks = plan.blocks or 1
        if blocks > 1 and ((cg * e) % c0 or (plan.n_per_group * e) % FRACTAL):
            return "grouped convolution with group blocks not aligned to C0"
        block_channels = cg * e
        block_c1 = k_total // (blocks * kh * kw)
        block_n1 = n1_w
        steps = (block_channels // c0, plan.n_per_group * e // FRACTAL, block_c1 * kh * kw, 0)
    else:
        # A dense FRACTAL_Z of the [M, C/g, kh, kw] weight: each group reads all K rows
        # and its own output columns.
        per_group = m // groups
        if cg % c0 or per_group % FRACTAL:
            return "grouped convolution with groups not aligned to C0 (weight without groups)"
        blocks, block_channels = groups, cg
        block_c1 = cg // c0
        block_n1 = per_group // FRACTAL
        steps = (block_c1, block_n1, 0, block_n1)
    return ConvGeometry(
        n, c1, h, wd, c0, oc1, oh, ow, (kh, kw),
        (axes[0].stride, axes[1].stride), (axes[0].dilation, axes[1].dilation),
        axes[0].begin, axes[1].begin,
        blocks, block_c1, block_c1 * kh * kw, block_n1, block_channels,
        int(x.origin_shape[1]), *steps,
    )  # fmt: skip


@dataclass(frozen=True)
class ConvTiles:
    rows: int
    n1: int
    k1: int

    def m1(self, g: ConvGeometry) -> int:
        return -(-(self.rows * g.out_w) // FRACTAL)

    def window_rows(self, g: ConvGeometry) -> int:
        return (self.rows - 1) * g.strides[0] + (g.kernel[0] - 1) * g.dilations[0] + 1


def choose_conv_tiles(
    g: ConvGeometry, hw, element: Attribute, epilogue: Epilogue
) -> ConvTiles | None:
    eb = element_bytes(element)
    frac = FRACTAL * g.c0 * eb
    l0a, l0b, l0c = (hw.capacity(s) // 2 for s in ("L0A", "L0B", "L0C"))
    l1 = hw.capacity("L1") // 2
    n1 = min(g.block_n1, max(1, l0b // frac // 2), 16)
    for rows in range(max(1, min(g.out_h, BASE_M // max(1, g.out_w) or 1)), 0, -1):
        t = ConvTiles(rows, n1, 1)
        m1 = t.m1(g)
        while n1 > 1 and m1 * n1 * FRACTAL * FRACTAL * 4 > l0c:
            n1 -= 1
        if g.blocks > 1:
            # A ragged channel tile would write into the next group block's channels.
            while g.block_n1 % n1:
                n1 -= 1
        if m1 * n1 * FRACTAL * FRACTAL * 4 > l0c or m1 * frac > l0a:
            continue
        k1 = max(1, min(g.block_k1, l0a // (m1 * frac), l0b // (n1 * frac)))
        fmap = g.block_c1 * t.window_rows(g) * g.width * g.c0 * eb
        while k1 > 1 and fmap + k1 * n1 * frac + n1 * FRACTAL * 4 > l1:
            k1 -= 1  # fewer weight fractals per K step, to fit L1 beside the feature map
        if fmap + k1 * n1 * frac + n1 * FRACTAL * 4 > l1:
            continue
        out_tile = [1, n1, rows, g.out_w, g.c0]
        if epilogue.ub_bytes(hw, out_tile, element) > hw.ub_bytes // 2:
            continue
        return ConvTiles(rows, n1, k1)
    return None


def emit_conv(body: KernelBody, kernel: CubeKernel, b: KernelBuilder) -> str | None:
    conv = kernel.anchor
    assert isinstance(conv, Conv2dOp)
    epilogue = Epilogue(body, kernel)
    reason = epilogue.unsupported()
    if reason:
        return reason
    data_value = conv.input
    convert = False
    if kernel.prologue:
        if (
            len(kernel.prologue) != 1
            or not isinstance(kernel.prologue[0], TransDataOp)
            or kernel.prologue[0].output is not data_value
        ):
            return "a cube prologue other than one TransData of the data"
        convert = True
        source = _storage(kernel.prologue[0].input)
        if source.storage_format != F.NCHW:
            return f"a {source.storage_format} -> NC1HWC0 prologue"
        data_arg = body.source(kernel.prologue[0].input)
    else:
        data_arg = body.source(data_value)
    weight_arg = body.source(conv.weight)
    bias_arg = body.source(conv.bias) if conv.bias is not None else None
    if data_arg is None or weight_arg is None or (conv.bias is not None and bias_arg is None):
        return "convolution operands are not kernel inputs"
    geometry = conv_geometry(conv, _storage(data_value))
    if isinstance(geometry, str):
        return geometry
    g = geometry
    element = _storage(conv.output).element_type
    tiles = choose_conv_tiles(g, b.hw, element, epilogue)
    if tiles is None:
        return "no convolution tile fits the on-chip buffers"
    if b.dry_run:
        return None
    acc_type = _accumulator(element)
    m1 = tiles.m1(g)
    cube = b.cube_element(element)
    frac = FRACTAL * g.c0 * element_bytes(element)
    fmap_bytes = g.block_c1 * tiles.window_rows(g) * g.width * g.c0 * element_bytes(element)
    # Weights stay in L1 for all output rows when a block's worth fits beside the feature
    # map (Ascend C keeps several base blocks in L1); else they stream per K step.
    stationary = fmap_bytes + g.block_k1 * tiles.n1 * frac <= b.hw.capacity("L1") // 2
    fmap = b.buffer([1, g.block_c1, tiles.window_rows(g), g.width, g.c0], cube, "L1", "fmap_l1")
    w_rows = g.block_k1 if stationary else tiles.k1
    w_l1 = b.buffer([w_rows, tiles.n1, FRACTAL, g.c0], cube, "L1", "w_l1")
    a_l0 = b.buffer([m1, tiles.k1, FRACTAL, g.c0], cube, "L0A", "a_l0a")
    b_l0 = b.buffer([tiles.k1, tiles.n1, FRACTAL, g.c0], cube, "L0B", "b_l0b")
    c_l0 = b.buffer([tiles.n1, m1, FRACTAL, FRACTAL], acc_type, "L0C", "c_l0c")
    bias_l1 = None
    if bias_arg is not None:
        bias_l1 = b.buffer([1, tiles.n1, 1, 1, g.c0], element, "L1", "bias_l1")
    out_tile = [1, tiles.n1, tiles.rows, g.out_w, g.c0]
    acc_ub = None
    chain = epilogue.chain
    if chain is not None:
        acc_ub = b.buffer(out_tile, element, "UB", "acc_ub")
        chain.allocate(b, out_tile, given=[epilogue.anchor_value])
    zero = b.index(0)
    out_arg = epilogue.out_arg

    def load_fmap(n_iv: SSAValue, blk: SSAValue, oh: SSAValue) -> None:
        h_start = b.affine(oh, g.strides[0], -g.pad_top)
        in_c1 = b.affine(blk, g.in_c1_step)
        if convert:
            b.add(Load5hdOp(data_arg, [n_iv, b.affine(in_c1, g.c0), h_start, zero], fmap))
        else:
            b.add(CopyOp(data_arg, [n_iv, in_c1, h_start, zero, zero], fmap, [zero] * 5))

    def load_weights(blk: SSAValue, co: SSAValue, k: SSAValue) -> None:
        w_row = b.add_index(b.affine(blk, g.w_k_step), k)
        w_col = b.add_index(b.affine(blk, g.w_n_step), co)
        b.add(CopyOp(weight_arg, [w_row, w_col, zero, zero], w_l1, [zero] * 4))

    def load_bias(blk: SSAValue, co: SSAValue) -> None:
        if bias_arg is not None and bias_l1 is not None:
            out_c1 = b.add_index(b.affine(blk, g.out_c1_step), co)
            b.add(CopyOp(bias_arg, [zero, out_c1, zero, zero, zero], bias_l1, [zero] * 5))

    def output_tile(n_iv: SSAValue, blk: SSAValue, oh: SSAValue, co: SSAValue) -> None:
        valid = None
        if g.blocks * g.block_channels > g.in_channels:
            # The last group block is ragged: its slab's lanes past C are padding.
            rest = b.add(
                arith.SubiOp(b.index(g.in_channels), b.affine(blk, g.block_channels))
            ).results[0]
            valid = b.add(arith.MinSIOp(rest, b.index(g.block_channels))).results[0]

        def k_step(k: SSAValue, first: SSAValue) -> None:
            b.add(_load3d(fmap, k, a_l0, g, valid))
            if stationary:
                b.add(Load2dOp(w_l1, k, zero, b_l0, "copy"))
            else:
                load_weights(blk, co, k)
                b.add(Load2dOp(w_l1, zero, zero, b_l0, "copy"))
            b.add(MmadOp(a_l0, b_l0, c_l0, first))

        b.accumulation(g.block_k1, tiles.k1, "k", k_step)
        out_c1 = b.add_index(b.affine(blk, g.out_c1_step), co)
        offsets = [n_iv, out_c1, oh, zero, zero]
        if chain is None:
            b.add(
                FixpipeOp(
                    c_l0,
                    out_arg,
                    offsets,
                    bias_l1,
                    layout="nc1hwc0",
                    relu=epilogue.relu,
                    rows=tiles.rows,
                )  # fmt: skip
            )
            return
        assert acc_ub is not None
        b.add(FixpipeOp(c_l0, acc_ub, [zero] * 5, bias_l1, layout="nc1hwc0", rows=tiles.rows))
        chain.epilogue(b, {epilogue.anchor_value: acc_ub}, offsets, out_arg, epilogue.out_value)

    with b.loop(g.batch, 1, "n", True) as n_iv, b.loop(g.blocks, 1, "blk", True) as blk:
        if stationary:
            with b.loop(g.block_n1, tiles.n1, "co", True) as co:
                load_weights(blk, co, zero)
                load_bias(blk, co)
                with b.loop(g.out_h, tiles.rows, "oh", True) as oh:
                    load_fmap(n_iv, blk, oh)
                    output_tile(n_iv, blk, oh, co)
        else:
            with b.loop(g.out_h, tiles.rows, "oh", True) as oh:
                load_fmap(n_iv, blk, oh)
                with b.loop(g.block_n1, tiles.n1, "co", True) as co:
                    load_bias(blk, co)
                    output_tile(n_iv, blk, oh, co)
    b.tiles = g.batch * g.blocks * -(-g.out_h // tiles.rows) * -(-g.block_n1 // tiles.n1)
    return None


def _load3d(
    fmap: SSAValue, k: SSAValue, dst: SSAValue, g: ConvGeometry, valid: SSAValue | None
) -> Load3dOp:
    return Load3dOp(
        fmap,
        k,
        dst,
        valid_channels=valid,
        kernel_shape=g.kernel,
        strides=g.strides,
        dilations=g.dilations,
        pad_left=g.pad_left,
        out_width=g.out_w,
        channels=g.block_channels,
    )


# ---- matrix multiplication ---------------------------------------------------------------


@dataclass(frozen=True)
class MatmulOperand:
    """Where a cube operand comes from and how it reaches L0."""

    arg: SSAValue
    layout: str
    """"nd", "nz" (FRACTAL_NZ) or "fz" (2-D FRACTAL_Z)."""
    transposed: bool
    """Held as (K, M) for A or (N, K) for B."""


def _operand(body: KernelBody, value: SSAValue, transposed: bool) -> MatmulOperand | str:
    arg = body.source(value)
    if arg is None:
        return "a matmul operand computed inside the kernel"
    t = _storage(value)
    if t.storage_format == F.FRACTAL_NZ:
        return MatmulOperand(arg, "nz", transposed)
    if t.storage_format == F.FRACTAL_Z and len(t.origin_shape) == 2:
        return MatmulOperand(arg, "fz", transposed)
    if t.storage_format in (F.ND, F.NCHW, F.NHWC) or t.storage_format == t.origin_format:
        return MatmulOperand(arg, "nd", transposed)
    return f"a matmul operand in {t.storage_format}"


@dataclass(frozen=True)
class MatmulPlan:
    a: MatmulOperand
    b: MatmulOperand
    batch: tuple[int, ...]
    m: int
    k: int
    n: int
    m1: int
    n1: int
    k1: int
    element: Attribute
    bias: SSAValue | None
    """A per-column C added by fixpipe (Gemm with alpha = beta = 1)."""
    c: SSAValue | None
    """A C added on UB (scaled by beta)."""
    alpha: float
    beta: float
    nz_out: bool
    """The result stays FRACTAL_NZ (fixpipe writes fractals, no NZ -> ND)."""


def _frac(n: int) -> int:
    return -(-n // FRACTAL)


def plan_matmul(body: KernelBody, kernel: CubeKernel, epilogue: Epilogue, hw) -> MatmulPlan | str:
    op = kernel.anchor
    for pre in kernel.prologue:
        if _nd_source(kernel, pre.results[0]) is pre.results[0]:
            return "a matmul prologue other than ND -> FRACTAL_NZ"
    alpha, beta, c_value = 1.0, 1.0, None
    if isinstance(op, GemmOp):
        a = _operand(body, _nd_source(kernel, op.a), bool(op.attr("transA")))
        b = _operand(body, _nd_source(kernel, op.b), bool(op.attr("transB")))
        alpha, beta, c_value = float(op.attr("alpha")), float(op.attr("beta")), op.c
    elif isinstance(op, MatMulOp):
        if len(_storage(op.lhs).origin_shape) < 2 or len(_storage(op.rhs).origin_shape) < 2:
            return "a matmul with a 1-D operand"
        a = _operand(body, _nd_source(kernel, op.lhs), False)
        b = _operand(body, _nd_source(kernel, op.rhs), False)
    else:
        return f"no cube lowering for {op.name}"
    if isinstance(a, str):
        return a
    if isinstance(b, str):
        return b
    out = _storage(epilogue.anchor_value)
    nz_out = out.storage_format == F.FRACTAL_NZ
    if nz_out and epilogue.chain is not None:
        return "a FRACTAL_NZ matmul result with a vector epilogue"
    if not nz_out and out.storage_format != F.ND and out.storage_format != out.origin_format:
        return f"a matmul result in {out.storage_format}"
    if a.layout == "fz" or (b.layout == "fz" and b.transposed):
        return "a FRACTAL_Z operand in this position"
    if a.layout == "nz" and a.transposed:
        return "a transposed FRACTAL_NZ left operand"
    a_origin = _storage(kernel.anchor.operands[0]).origin_shape
    *batch, m, n = (int(d) for d in out.origin_shape)
    k = int(a_origin[-2] if a.transposed else a_origin[-1])
    element = out.element_type
    if str(element) not in ("f32", "f16", "bf16"):
        return f"a {element} matmul"
    frac = FRACTAL * FRACTAL * element_bytes(element)
    l0a, l0b, l0c = (hw.capacity(s) // 2 for s in ("L0A", "L0B", "L0C"))
    m1 = min(_frac(m), 8)
    n1 = max(1, min(_frac(n), 16, l0c // (m1 * FRACTAL * FRACTAL * 4)))
    k1 = min(_frac(k), l0a // (m1 * frac), l0b // (n1 * frac))
    while k1 < 1 and (m1 > 1 or n1 > 1):  # small presets: smaller base blocks
        m1, n1 = max(1, m1 // 2), max(1, n1 // 2)
        k1 = min(_frac(k), l0a // (m1 * frac), l0b // (n1 * frac))
    if k1 < 1:
        return "no matmul base block fits L0"
    bias = c = None
    if c_value is not None:
        c_shape = [int(d) for d in _storage(c_value).origin_shape]
        per_column = len(c_shape) <= 2 and c_shape[-1:] == [n] and prod(c_shape) == n
        if per_column and alpha == 1.0 and beta == 1.0 and _storage(c_value).storage_format == F.ND:
            bias = body.source(c_value)
        else:
            c = body.source(c_value)
        if bias is None and c is None:
            return "a Gemm C computed inside the kernel"
    need_ub = alpha != 1.0 or c is not None or epilogue.chain is not None

    def ub_bytes(m1: int, n1: int) -> int:
        tile = [1] * len(batch) + [m1 * FRACTAL, n1 * FRACTAL]
        return prod(tile) * 4 * 3 + epilogue.ub_bytes(hw, tile, element)

    while need_ub and ub_bytes(m1, n1) > hw.ub_bytes // 2 and (m1 > 1 or n1 > 1):
        if n1 >= m1:
            n1 = max(1, n1 // 2)
        else:
            m1 = max(1, m1 // 2)
    if need_ub and ub_bytes(m1, n1) > hw.ub_bytes // 2:
        return "the matmul epilogue tile does not fit UB"
    if nz_out and (alpha != 1.0 or c is not None):
        return "a FRACTAL_NZ Gemm result with alpha or a full C"
    return MatmulPlan(
        a, b, tuple(batch), m, k, n, m1, n1, k1, element, bias, c, alpha, beta, nz_out
    )


def _batch_offsets(
    b: KernelBuilder, arg: SSAValue, batch_ivs: Sequence[SSAValue], kept: int
) -> list[SSAValue]:
    """Offsets of a (possibly broadcast) operand's leading dims for the output batch index."""
    shape = memref_shape(arg)
    lead = shape[: len(shape) - kept]
    ivs = list(batch_ivs)[len(batch_ivs) - len(lead) :] if lead else []
    return [b.index(0) if d == 1 else iv for d, iv in zip(lead, ivs, strict=True)]


def _load_a(b: KernelBuilder, p: MatmulPlan, batch, m_off, k_off, buf_l1, buf_l0) -> None:
    a = p.a
    zero = b.index(0)
    if a.layout == "nd":
        outer = _batch_offsets(b, a.arg, batch, 2)
        rows, cols = (k_off, m_off) if a.transposed else (m_off, k_off)
        b.add(Nd2NzOp(a.arg, [*outer, b.affine(rows, FRACTAL), b.affine(cols, FRACTAL)], buf_l1))
        b.add(
            Load2dOp(buf_l1, zero, zero, buf_l0, "transpose_fractals" if a.transposed else "swap")
        )
    else:  # NZ of (..., M, K): (..., K1, M1, 16, 16)
        outer = _batch_offsets(b, a.arg, batch, 4)
        b.add(CopyOp(a.arg, [*outer, k_off, m_off, zero, zero], buf_l1, [zero] * (len(outer) + 4)))
        b.add(Load2dOp(buf_l1, zero, zero, buf_l0, "swap"))


def _load_b(b: KernelBuilder, p: MatmulPlan, batch, k_off, n_off, buf_l1, buf_l0) -> None:
    op = p.b
    zero = b.index(0)
    if op.layout == "nd":
        outer = _batch_offsets(b, op.arg, batch, 2)
        rows, cols = (n_off, k_off) if op.transposed else (k_off, n_off)
        b.add(Nd2NzOp(op.arg, [*outer, b.affine(rows, FRACTAL), b.affine(cols, FRACTAL)], buf_l1))
        b.add(Load2dOp(buf_l1, zero, zero, buf_l0, "copy" if op.transposed else "transpose"))
    elif op.layout == "nz":
        # NZ of (K, N) is (N1, K1, 16, 16); NZ of (N, K) is (K1, N1, 16, 16) = ZN already.
        first, second = (k_off, n_off) if op.transposed else (n_off, k_off)
        outer = _batch_offsets(b, op.arg, batch, 4)
        b.add(
            CopyOp(op.arg, [*outer, first, second, zero, zero], buf_l1, [zero] * (len(outer) + 4))
        )
        b.add(Load2dOp(buf_l1, zero, zero, buf_l0, "copy" if op.transposed else "transpose"))
    else:  # 2-D FRACTAL_Z of (K, N): (K1, N1, 16, C0) = ZN
        b.add(CopyOp(op.arg, [k_off, n_off, zero, zero], buf_l1, [zero] * 4))
        b.add(Load2dOp(buf_l1, zero, zero, buf_l0, "copy"))


def emit_matmul(body: KernelBody, kernel: CubeKernel, b: KernelBuilder) -> str | None:
    epilogue = Epilogue(body, kernel)
    reason = epilogue.unsupported()
    if reason:
        return reason
    p = plan_matmul(body, kernel, epilogue, b.hw)
    if isinstance(p, str):
        return p
    if b.dry_run:
        return None
    from tilegraph.lowering.tiling.elementwise import load_broadcast

    el, acc_type = p.element, _accumulator(p.element)
    a_l1_shape = (
        [p.m1, p.k1, FRACTAL, FRACTAL] if p.a.transposed else [p.k1, p.m1, FRACTAL, FRACTAL]
    )
    cube = b.cube_element(el)
    a_lead = [1] * (len(memref_shape(p.a.arg)) - 4) if p.a.layout == "nz" else []
    a_l1 = b.buffer([*a_lead, *a_l1_shape], cube, "L1", "a_l1")
    b_kn = p.b.transposed or p.b.layout == "fz"
    b_l1_shape = [p.k1, p.n1, FRACTAL, FRACTAL] if b_kn else [p.n1, p.k1, FRACTAL, FRACTAL]
    b_lead = [1] * (len(memref_shape(p.b.arg)) - 4) if p.b.layout != "nd" else []
    b_l1 = b.buffer([*b_lead, *b_l1_shape], cube, "L1", "b_l1")
    a_l0 = b.buffer([p.m1, p.k1, FRACTAL, FRACTAL], cube, "L0A", "a_l0a")
    b_l0 = b.buffer([p.k1, p.n1, FRACTAL, FRACTAL], cube, "L0B", "b_l0b")
    c_l0 = b.buffer([p.n1, p.m1, FRACTAL, FRACTAL], acc_type, "L0C", "c_l0c")
    bias_l1 = None
    if p.bias is not None:
        rank = len(memref_shape(p.bias))
        bias_l1 = b.buffer([1] * (rank - 1) + [p.n1 * FRACTAL], el, "L1", "bias_l1")
    out_arg = epilogue.out_arg
    out_shape = memref_shape(out_arg)
    tile = [1] * len(p.batch) + [p.m1 * FRACTAL, p.n1 * FRACTAL]
    chain = epilogue.chain
    on_ub = p.alpha != 1.0 or p.c is not None or chain is not None
    acc_ub = b.buffer(tile, el, "UB", "acc_ub") if on_ub else None
    c_ub = None
    if p.c is not None:
        c_shape = memref_shape(p.c)
        c_tile = [
            1 if d == 1 else t
            for d, t in zip(c_shape, tile[len(tile) - len(c_shape) :], strict=True)
        ]
        c_ub = b.buffer(c_tile, el, "UB", "c_ub")
    if chain is not None:
        chain.allocate(b, tile, given=[epilogue.anchor_value])
    zero = b.index(0)
    from contextlib import ExitStack

    with ExitStack() as stack:
        batch = [stack.enter_context(b.loop(d, 1, f"b{i}", True)) for i, d in enumerate(p.batch)]
        mi = stack.enter_context(b.loop(_frac(p.m), p.m1, "m", True))
        ni = stack.enter_context(b.loop(_frac(p.n), p.n1, "n", True))

        def k_step(ki: SSAValue, first: SSAValue) -> None:
            _load_a(b, p, batch, mi, ki, a_l1, a_l0)
            _load_b(b, p, batch, ki, ni, b_l1, b_l0)
            b.add(MmadOp(a_l0, b_l0, c_l0, first))

        b.accumulation(_frac(p.k), p.k1, "k", k_step)
        n_elem = b.affine(ni, FRACTAL)
        if bias_l1 is not None and p.bias is not None:
            lead = [zero] * (len(memref_shape(p.bias)) - 1)
            b.add(CopyOp(p.bias, [*lead, n_elem], bias_l1, [zero] * (len(lead) + 1)))
        offsets = [*batch, b.affine(mi, FRACTAL), n_elem]
        if p.nz_out:
            b.add(
                FixpipeOp(
                    c_l0,
                    out_arg,
                    [*batch, ni, mi, zero, zero],
                    bias_l1,
                    layout="nz",
                    relu=epilogue.relu,
                )  # fmt: skip
            )
        elif acc_ub is None:
            b.add(FixpipeOp(c_l0, out_arg, offsets, bias_l1, relu=epilogue.relu))
        else:
            b.add(FixpipeOp(c_l0, acc_ub, [zero] * len(tile), bias_l1))
            if p.alpha != 1.0:
                b.add(SCALAR_OPS["vmuls"](acc_ub, p.alpha, acc_ub))
            if p.c is not None and c_ub is not None:
                load_broadcast(b, p.c, out_shape, offsets, c_ub)
                if p.beta != 1.0:
                    b.add(SCALAR_OPS["vmuls"](c_ub, p.beta, c_ub))
                b.add(BINARY_OPS["vadd"](acc_ub, c_ub, acc_ub))
            if chain is not None:
                given: dict[SSAValue, SSAValue] = {epilogue.anchor_value: acc_ub}
                chain.epilogue(b, given, offsets, out_arg, epilogue.out_value)
            else:
                if epilogue.relu:
                    b.add(UNARY_OPS["vrelu"](acc_ub, acc_ub))
                store(b, acc_ub, out_arg, offsets)
    b.tiles = prod(p.batch) * -(-_frac(p.m) // p.m1) * -(-_frac(p.n) // p.n1)
    return None


def emit_cube_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    kernel = split_cube_kernel(body)
    if isinstance(kernel, str):
        return kernel
    if isinstance(kernel.anchor, Conv2dOp):
        return emit_conv(body, kernel, b)
    if isinstance(kernel.anchor, MatMulOp | GemmOp):
        return emit_matmul(body, kernel, b)
    return f"no cube lowering for {kernel.anchor.name}"
