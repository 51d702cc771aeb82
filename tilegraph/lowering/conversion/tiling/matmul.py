"""The matmul / gemm strategy of cube kernels (see :mod:`.cube` for the tiling scheme).

The base block (baseM, baseN, baseK) — the operands of one ``mmad`` — is the tiling
parameters ``matmul.m1`` / ``n1`` / ``k1`` (:mod:`.matmul_block`: Ascend C's convention
scaled to L0 halves by default, or one ``tile-kernels{base-block="128,256,64"}`` asks for).

**L1 windows** (:func:`plan_l1_reuse`). By default every output block runs its own K loop
and loads, per window of up to :data:`L1_K_STEPS` base K steps (Ascend C's stepKa /
stepKb), an A window and a B window GM -> L1. When one operand's *whole-K panel* (A's
baseM x K, or B's K x baseN) fits half of L1 beside one window of the other, it is loaded
once and kept for a group of ``s`` output blocks along the other axis (Ascend C's stepN for
A, stepM for B); the other operand still streams in K windows::

    for m, ng (parallel; split-cores collapses them):  # ng: groups of s N blocks
      A panel (m, all of K) -> L1                       # once per group
      for nb in group:                                  # s blocks, one after the other
        for kc: B window (kc, n) -> L1; for ks: L1 -> L0A/L0B (A at kc + ks), mmad
        fixpipe / epilogue of block (m, n)

Why per-block K loops and not "K windows outside, blocks inside": the latter keeps ``s``
accumulators live in L0C at once, and the block sizes are already chosen for L0C (the
tuned (128, 256, 64) fp32 accumulator is all of 910B's 128 KiB), so it would only be a
larger base block in disguise. Keeping the accumulator per block, a window can serve
several blocks only if it outlives a whole K loop, i.e. holds all of K: the panel. So
reuse needs ``baseM·K`` (or ``K·baseN``) elements in half of L1 — on 910B fp16 with
baseM 128, K ≤ ~900; the 4096- and 5120-deep GEMMs of the validation cannot use it (their
MTE2 bytes per MAC are set by the L0C-sized block, see docs/cycle-model.md).
``s`` divides the block count (no partial groups; ragged edges stay the last block's
padded loads and cut stores) and is chosen to minimise the GM -> L1 bytes of the busiest
core, ``ceil(groups / cube_cores)`` groups of ``panel + s·streamed`` bytes: fewer, bigger
groups that would leave cores idle are not taken. The group loop is ``tile.parallel`` (the
groups write disjoint blocks); the loop over a group's blocks is not (they share the panel).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod
from typing import Any

from xdsl.dialects import arith
from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.graph.linalg import GemmOp, MatMulOp
from tilegraph.dialects.graph.quantized_cube import Int8MatMulBase
from tilegraph.dialects.tile import (
    BINARY_OPS,
    SCALAR_OPS,
    UNARY_OPS,
    CopyOp,
    FixpipeOp,
    Load2dOp,
    MmadOp,
    Nd2NzOp,
    memref_shape,
)
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.cube import (
    FRACTAL,
    CubeKernel,
    Epilogue,
    F,
    accumulator_type,
    nd_source,
    requantisation,
)
from tilegraph.lowering.conversion.tiling.elementwise import store
from tilegraph.lowering.conversion.tiling.matmul_block import base_block, fractals
from tilegraph.lowering.conversion.tiling.matmul_l1 import chosen_l1_reuse, k_trips
from tilegraph.lowering.conversion.tiling.matmul_views import (
    from_fractal,
    is_view_op,
    lead_offsets,
    operand_as_view,
    operand_chain,
)
from tilegraph.lowering.conversion.tiling.sub_blocks import emit_shares


@dataclass(frozen=True)
class MatmulOperand:
    """Where a cube operand comes from and how it reaches L0."""

    arg: SSAValue
    layout: str
    """"nd", "nz" (FRACTAL_NZ) or "fz" (2-D FRACTAL_Z)."""
    transposed: bool
    """Held as (K, M) for A or (N, K) for B."""
    groups: tuple[int, ...] = ()
    """Each dim's group factor when the operand repeats batch dims (a view of LLaMA's
    grouped K / V heads: :func:`~.matmul_views.lead_offsets`), else empty."""


def matmul_operand(
    body: KernelBody, value: SSAValue, transposed: bool, b: KernelBuilder
) -> MatmulOperand | str:
    """Where the ND matmul operand ``value`` is read from (an input, or a GM view of one
    through its reshape / transpose chain), or why it cannot be."""
    arg = body.source(value)
    if arg is None:  # a reshape / transpose chain of an input: read through a GM view
        chain = operand_chain(body, value)
        if chain is None:
            return "a matmul operand computed inside the kernel"
        if isinstance(chain, str):
            return chain
        view, flipped, groups = operand_as_view(b, body, chain)
        return MatmulOperand(view, "nd", transposed != flipped, groups)
    t = tensor_of(value)
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
    """The result's element type (the UB tiles' and fixpipe's destination type)."""
    operand_element: Attribute
    """The operands' element type in GM: the result's, or i8 on the int8 cube."""
    k0: int
    """K elements per fractal row: 16, or 32 for int8 operands (16 x 32 fractals)."""
    bias: SSAValue | None
    """A per-column C added by fixpipe (Gemm with alpha = beta = 1; int32 on the int8
    cube)."""
    deq: SSAValue | None
    """The per-column dequantisation scales of an int8 matmul (fixpipe's deq), else None."""
    c: SSAValue | None
    """A C added on UB (scaled by beta)."""
    alpha: float
    beta: float
    nz_out: bool
    """The result stays FRACTAL_NZ (fixpipe writes fractals, no NZ -> ND)."""
    requant: tuple[int, bool] | None = None
    """Fixpipe requantises the int32 sum to int8 ND (``graph.requant_matmul``): its
    (zero point, ReLU first); ``deq`` holds the multipliers."""

    def fixpipe_options(self, relu: bool) -> dict[str, Any]:
        """Fixpipe's ``relu`` and ``zero_point`` keywords (the epilogue's ReLU, or the
        requantisation's)."""
        if self.requant is None:
            return {"relu": relu}
        zero_point, requant_relu = self.requant
        return {"relu": relu or requant_relu, "zero_point": zero_point}

    @property
    def k_fractals(self) -> int:
        """Fractals of K0 elements that cover K."""
        return -(-self.k // self.k0)


def plan_matmul(
    body: KernelBody, kernel: CubeKernel, epilogue: Epilogue, builder: KernelBuilder
) -> MatmulPlan | str:
    hw = builder.hw
    op = kernel.anchor
    for pre in kernel.prologue:
        if is_view_op(pre) or from_fractal(pre.results[0]):
            continue  # an operand's view chain (and what it starts from): matmul_operand's
        if nd_source(kernel, pre.results[0]) is pre.results[0]:
            return "a matmul prologue other than ND -> FRACTAL_NZ"
    alpha, beta, c_value, deq = 1.0, 1.0, None, None
    int8 = isinstance(op, Int8MatMulBase)
    # Whether the anchor's own A is (K, M) (Gemm's transA): K is read from its shape.
    # ``a.transposed`` may also be a GM view's flip, after which the anchor's A is (M, K).
    trans_a = False
    if isinstance(op, Int8MatMulBase):  # int8 x int8, B held as rows of K: (N, K)
        a = matmul_operand(body, nd_source(kernel, op.a), False, builder)
        b = matmul_operand(body, nd_source(kernel, op.b), True, builder)
        c_value = op.bias
        # without scales the result is the raw int32 sum (an int32 vector epilogue
        # finishes it): fixpipe writes the accumulator as it is
        deq = None if op.scale is None else body.source(op.scale)
        if op.scale is not None and deq is None:
            return "the int8 matmul's scales are not a kernel input"
    elif isinstance(op, GemmOp):
        trans_a = bool(op.attr("transA"))
        a = matmul_operand(body, nd_source(kernel, op.a), trans_a, builder)
        b = matmul_operand(body, nd_source(kernel, op.b), bool(op.attr("transB")), builder)
        alpha, beta, c_value = float(op.attr("alpha")), float(op.attr("beta")), op.c
    elif isinstance(op, MatMulOp):
        if len(tensor_of(op.lhs).origin_shape) < 2 or len(tensor_of(op.rhs).origin_shape) < 2:
            return "a matmul with a 1-D operand"
        a = matmul_operand(body, nd_source(kernel, op.lhs), False, builder)
        b = matmul_operand(body, nd_source(kernel, op.rhs), False, builder)
    else:
        return f"no cube lowering for {op.name}"
    if isinstance(a, str):
        return a
    if isinstance(b, str):
        return b
    out = tensor_of(epilogue.anchor_value)
    # fixpipe writes ND: the result is ND, or an NZ one whose epilogue ends in NZ -> ND
    nd_out = epilogue.nz_to_nd or out.storage_format in (F.ND, out.origin_format)
    nz_out = out.storage_format == F.FRACTAL_NZ and not epilogue.nz_to_nd
    if nz_out and epilogue.chain is not None:
        return "a FRACTAL_NZ matmul result with a vector epilogue"
    if not nz_out and not nd_out:
        return f"a matmul result in {out.storage_format}"
    if a.layout == "fz" or (b.layout == "fz" and b.transposed):
        return "a FRACTAL_Z operand in this position"
    if a.layout == "nz" and a.transposed:
        return "a transposed FRACTAL_NZ left operand"
    a_origin = tensor_of(kernel.anchor.operands[0]).origin_shape
    *batch, m, n = (int(d) for d in out.origin_shape)
    k = int(a_origin[-2] if trans_a else a_origin[-1])
    element = out.element_type
    requant = requantisation(op)
    if requant is not None and (nz_out or epilogue.ops):
        return "an epilogue or a FRACTAL_NZ result on a requantised (int8) matmul"
    raw_int32 = int8 and deq is None and str(element) == "i32"
    if str(element) not in ("f32", "f16", "bf16") and requant is None and not raw_int32:
        return f"a {element} matmul"
    operand_element = tensor_of(kernel.anchor.operands[0]).element_type
    k0 = FRACTAL
    if int8:
        if a.transposed or not b.transposed:
            return "an int8 matmul operand in this position"
        k0 = 32
    frac = FRACTAL * k0 * element_bytes(operand_element if int8 else element)
    block = base_block(builder, m, n, k, frac, k0)
    if isinstance(block, str):
        return block
    m1, n1, k1 = block
    bias = c = None
    if c_value is not None:
        c_shape = [int(d) for d in tensor_of(c_value).origin_shape]
        per_column = len(c_shape) <= 2 and c_shape[-1:] == [n] and prod(c_shape) == n
        if (
            per_column
            and alpha == 1.0
            and beta == 1.0
            and tensor_of(c_value).storage_format == F.ND
        ):
            bias = body.source(c_value)
        else:
            c = body.source(c_value)
        if bias is None and c is None:
            return "a Gemm C computed inside the kernel"
    vector_work = alpha != 1.0 or c is not None or epilogue.chain is not None
    need_ub = vector_work or epilogue.through_ub(hw)

    def ub_bytes(m1: int, n1: int) -> int:
        tile = [1] * len(batch) + [m1 * FRACTAL, n1 * FRACTAL]
        scratch = prod(tile) * 4 * 3 if vector_work else 0  # C's tile and the vector ops'
        return scratch + epilogue.ub_bytes(hw, tile, element)

    while need_ub and ub_bytes(m1, n1) > hw.ub_bytes // 2 and (m1 > 1 or n1 > 1):
        if n1 >= m1:
            n1 = max(1, n1 // 2)
        else:
            m1 = max(1, m1 // 2)
    if need_ub and ub_bytes(m1, n1) > hw.ub_bytes // 2:
        return "the matmul epilogue tile does not fit UB"
    if nz_out and (alpha != 1.0 or c is not None):
        return "a FRACTAL_NZ Gemm result with alpha or a full C"
    if int8 and bias is None:
        return "an int8 matmul bias that is not a kernel input"
    return MatmulPlan(
        a,
        b,
        tuple(batch),
        m,
        k,
        n,
        m1,
        n1,
        k1,
        element,
        operand_element,
        k0,
        bias,
        deq,
        c,
        alpha,
        beta,
        nz_out,
        requant,
    )


def _batch_offsets(
    b: KernelBuilder, op: MatmulOperand, batch_ivs: Sequence[SSAValue], kept: int
) -> list[SSAValue]:
    """Offsets of a (possibly broadcast or repeated) operand's leading dims for the output
    batch index."""
    return lead_offsets(b, op.arg, batch_ivs, kept, op.groups)


def _fill_a(b: KernelBuilder, p: MatmulPlan, batch, m_off, k_off, buf_l1, m_valid, k_valid) -> None:
    """A's (M, K) window at fractal offsets (m_off, k_off) GM -> L1 as NZ (an ND A: its
    first ``m_valid`` rows and ``k_valid`` K when given, a ragged block's or K window's)."""
    a = p.a
    zero = b.index(0)
    if a.layout == "nd":
        outer = _batch_offsets(b, a, batch, 2)
        rows, cols = (b.affine(k_off, p.k0), b.affine(m_off, FRACTAL))
        valid = (k_valid, m_valid)
        if not a.transposed:
            rows, cols = (b.affine(m_off, FRACTAL), b.affine(k_off, p.k0))
            valid = (m_valid, k_valid)
        b.add(Nd2NzOp(a.arg, [*outer, rows, cols], buf_l1, *valid))
    else:  # NZ of (..., M, K): (..., K1, M1, 16, 16)
        outer = _batch_offsets(b, a, batch, 4)
        b.add(CopyOp(a.arg, [*outer, k_off, m_off, zero, zero], buf_l1, [zero] * (len(outer) + 4)))


def _a_to_l0(b: KernelBuilder, p: MatmulPlan, buf_l1, k_in_l1, buf_l0, m_valid, k_valid) -> None:
    """The base block at K fractal ``k_in_l1`` of A's L1 window into L0A as ZZ (its first
    ``m_valid`` rows' and ``k_valid`` K's fractals when given: a ragged block, K step)."""
    zero = b.index(0)
    if p.a.layout == "nd" and p.a.transposed:  # L1 holds (M1, K1): K on the columns
        b.add(Load2dOp(buf_l1, zero, k_in_l1, buf_l0, "transpose_fractals", m_valid, k_valid))
    else:  # L1 holds (K1, M1)
        b.add(Load2dOp(buf_l1, k_in_l1, zero, buf_l0, "swap", m_valid, k_valid))


def _b_holds_kn(p: MatmulPlan) -> bool:
    """B's L1 window is (K1, N1) fractals (else (N1, K1))."""
    return p.b.transposed or p.b.layout == "fz"


def _fill_b(b: KernelBuilder, p: MatmulPlan, batch, k_off, n_off, buf_l1, n_valid, k_valid) -> None:
    """B's (K, N) window at fractal offsets (k_off, n_off) GM -> L1 (an ND B: its first
    ``n_valid`` columns and ``k_valid`` K when given, a ragged block's or K window's)."""
    op = p.b
    zero = b.index(0)
    if op.layout == "nd":
        outer = _batch_offsets(b, op, batch, 2)
        rows, cols = (b.affine(k_off, p.k0), b.affine(n_off, FRACTAL))
        valid = (k_valid, n_valid)
        if op.transposed:
            rows, cols = (b.affine(n_off, FRACTAL), b.affine(k_off, p.k0))
            valid = (n_valid, k_valid)
        b.add(Nd2NzOp(op.arg, [*outer, rows, cols], buf_l1, *valid))
    elif op.layout == "nz":
        # NZ of (K, N) is (N1, K1, 16, 16); NZ of (N, K) is (K1, N1, 16, 16) = ZN already.
        first, second = (k_off, n_off) if op.transposed else (n_off, k_off)
        outer = _batch_offsets(b, op, batch, 4)
        b.add(
            CopyOp(op.arg, [*outer, first, second, zero, zero], buf_l1, [zero] * (len(outer) + 4))
        )
    else:  # 2-D FRACTAL_Z of (K, N): (K1, N1, 16, C0) = ZN
        b.add(CopyOp(op.arg, [k_off, n_off, zero, zero], buf_l1, [zero] * 4))


def _b_to_l0(b: KernelBuilder, p: MatmulPlan, buf_l1, k_in_l1, buf_l0, n_valid, k_valid) -> None:
    """The base block at K fractal ``k_in_l1`` of B's L1 window into L0B as ZN (its first
    ``n_valid`` columns' and ``k_valid`` K's fractals when given: a ragged block, K step)."""
    zero = b.index(0)
    if _b_holds_kn(p):
        b.add(Load2dOp(buf_l1, k_in_l1, zero, buf_l0, "copy", n_valid, k_valid))
    else:  # (N1, K1) NZ: transposed on the way, K on the columns
        b.add(Load2dOp(buf_l1, zero, k_in_l1, buf_l0, "transpose", n_valid, k_valid))


def _valid_extent(
    b: KernelBuilder, total: int, at: SSAValue, block: int, size: int = FRACTAL
) -> SSAValue | None:
    """The ``mmad``'s valid rows (or columns, or K) of the block at fractal ``at`` of a
    ``total`` long axis cut in blocks of ``block`` fractals of ``size`` elements (16, or
    K0 along K): ``min(block * size, total - at * size)``, as Ascend C's ``MmadParams`` m
    / n / k (the last block's fractals that remain, not the whole block: CANN's tiling
    charges the real fractal counts, docs/cycle-model.md). None when the blocks cover
    the axis's fractals exactly (every block is whole)."""
    if fractals(total, size) % block == 0:
        return None
    rest = b.affine(at, -size, total)
    return b.add(arith.MinSIOp(b.index(block * size), rest)).results[0]


def emit_matmul(body: KernelBody, kernel: CubeKernel, b: KernelBuilder) -> str | None:
    epilogue = Epilogue(body, kernel, b)
    reason = epilogue.unsupported()
    if reason:
        return reason
    p = plan_matmul(body, kernel, epilogue, b)
    if isinstance(p, str):
        return p
    el, acc_type = p.element, accumulator_type(p.operand_element)
    cube = b.cube_element(p.operand_element)
    reuse = chosen_l1_reuse(b, p, element_bytes(cube))
    if isinstance(reuse, str):
        return reuse
    if b.dry_run:
        return None
    from tilegraph.lowering.conversion.tiling.elementwise import load_broadcast

    k_l1 = p.k1 * reuse.k_steps
    a_panel, b_panel = reuse.axis == "n", reuse.axis == "m"
    k_pad = k_trips(p) * p.k1  # a panel holds every K fractal the K loop visits
    a_k, b_k = (k_pad if a_panel else k_l1), (k_pad if b_panel else k_l1)
    a_l1_shape = (
        [p.m1, a_k, FRACTAL, FRACTAL]
        if p.a.layout == "nd" and p.a.transposed
        else [a_k, p.m1, FRACTAL, p.k0]
    )
    a_lead = [1] * (len(memref_shape(p.a.arg)) - 4) if p.a.layout == "nz" else []
    a_l1 = b.buffer([*a_lead, *a_l1_shape], cube, "L1", "a_l1")
    b_kn = _b_holds_kn(p)
    b_l1_shape = [b_k, p.n1, FRACTAL, p.k0] if b_kn else [p.n1, b_k, FRACTAL, FRACTAL]
    b_lead = [1] * (len(memref_shape(p.b.arg)) - 4) if p.b.layout != "nd" else []
    b_l1 = b.buffer([*b_lead, *b_l1_shape], cube, "L1", "b_l1")
    a_l0 = b.buffer([p.m1, p.k1, FRACTAL, p.k0], cube, "L0A", "a_l0a")
    b_l0 = b.buffer([p.k1, p.n1, FRACTAL, p.k0], cube, "L0B", "b_l0b")
    c_l0 = b.buffer([p.n1, p.m1, FRACTAL, FRACTAL], acc_type, "L0C", "c_l0c")
    bias_l1 = deq_l1 = None
    if p.bias is not None:
        rank = len(memref_shape(p.bias))
        bias_type = (
            tensor_of(kernel.anchor.operands[2]).element_type
            if str(p.operand_element) == "i8"
            else el
        )
        bias_l1 = b.buffer([1] * (rank - 1) + [p.n1 * FRACTAL], bias_type, "L1", "bias_l1")
    if p.deq is not None:
        deq_type = tensor_of(kernel.anchor.operands[3]).element_type
        deq_l1 = b.buffer([p.n1 * FRACTAL], deq_type, "L1", "deq_l1")
    out_arg = epilogue.out_arg
    out_shape = memref_shape(out_arg)
    tile = [1] * len(p.batch) + [p.m1 * FRACTAL, p.n1 * FRACTAL]
    chain = epilogue.chain
    on_ub = p.alpha != 1.0 or p.c is not None or chain is not None
    # No L0C -> GM (310P): fixpipe (bias, ReLU, cast) into UB, MTE3 copies the tile out.
    out_via_ub = not on_ub and not b.hw.l0c_to_gm
    if out_via_ub:
        ub_tile = [1] * len(p.batch) + ([p.n1, p.m1, FRACTAL, FRACTAL] if p.nz_out else tile[-2:])
        out_ub = b.buffer(ub_tile, el, "UB", "out_ub")
    acc_ub = b.buffer(tile, el, "UB", "acc_ub") if on_ub else None
    shared = on_ub and b.hw.aiv_per_aic > 1  # the AIVs of a group share a tile

    def allocate_epilogue(shape: list[int]) -> SSAValue | None:
        """The UB tiles of the epilogue on a tile of ``shape``: C's (returned), the chain's."""
        c_ub = None
        if p.c is not None:
            c_shape = memref_shape(p.c)
            c_tile = [
                1 if d == 1 else t
                for d, t in zip(c_shape, shape[len(shape) - len(c_shape) :], strict=True)
            ]
            c_ub = b.buffer(c_tile, el, "UB", "c_ub")
        if chain is not None:
            chain.allocate(b, shape, given=[epilogue.anchor_value])
        return c_ub

    def finish(acc: SSAValue, c_ub: SSAValue | None, at: list[SSAValue]) -> None:
        """The epilogue on the accumulator tile ``acc`` at offsets ``at`` of the output."""
        if p.alpha != 1.0:
            b.add(SCALAR_OPS["vmuls"](acc, p.alpha, acc))
        if p.c is not None and c_ub is not None:
            load_broadcast(b, p.c, out_shape, at, c_ub)
            if p.beta != 1.0:
                b.add(SCALAR_OPS["vmuls"](c_ub, p.beta, c_ub))
            b.add(BINARY_OPS["vadd"](acc, c_ub, acc))
        if chain is not None:
            given: dict[SSAValue, SSAValue] = {epilogue.anchor_value: acc}
            chain.epilogue(b, given, at, out_arg, epilogue.out_value)
        else:
            if epilogue.relu:
                b.add(UNARY_OPS["vrelu"](acc, acc))
            store(b, acc, out_arg, at)

    c_whole = None if shared or not on_ub else allocate_epilogue(tile)
    zero = b.index(0)
    from contextlib import ExitStack

    with ExitStack() as stack:
        batch = [stack.enter_context(b.loop(d, 1, f"b{i}", True)) for i, d in enumerate(p.batch)]
        group = reuse.blocks
        if b_panel:  # B's panel over `group` blocks along M: N outside, groups of M inside
            ni = stack.enter_context(b.loop(fractals(p.n), p.n1, "n", True))
            n_valid = _valid_extent(b, p.n, ni, p.n1)
            mg = stack.enter_context(b.loop(fractals(p.m), p.m1 * group, "mg", True))
            _fill_b(b, p, batch, zero, ni, b_l1, n_valid, _valid_extent(b, p.k, zero, k_pad, p.k0))
            mi = b.add_index(mg, stack.enter_context(b.loop(p.m1 * group, p.m1, "mb")))
            m_valid = _valid_extent(b, p.m, mi, p.m1)
        else:
            mi = stack.enter_context(b.loop(fractals(p.m), p.m1, "m", True))
            m_valid = _valid_extent(b, p.m, mi, p.m1)
            if a_panel:  # A's panel over `group` blocks along N
                ng = stack.enter_context(b.loop(fractals(p.n), p.n1 * group, "ng", True))
                panel_k = _valid_extent(b, p.k, zero, k_pad, p.k0)
                _fill_a(b, p, batch, mi, zero, a_l1, m_valid, panel_k)
                ni = b.add_index(ng, stack.enter_context(b.loop(p.n1 * group, p.n1, "nb")))
            else:
                ni = stack.enter_context(b.loop(fractals(p.n), p.n1, "n", True))
            n_valid = _valid_extent(b, p.n, ni, p.n1)

        def k_step(ki: SSAValue, first: SSAValue) -> None:
            k_valid = _valid_extent(b, p.k, ki, p.k1, p.k0)  # MmadParams k: a ragged K step
            _fill_a(b, p, batch, mi, ki, a_l1, m_valid, k_valid)
            _a_to_l0(b, p, a_l1, zero, a_l0, m_valid, k_valid)
            _fill_b(b, p, batch, ki, ni, b_l1, n_valid, k_valid)
            _b_to_l0(b, p, b_l1, zero, b_l0, n_valid, k_valid)
            b.add(MmadOp(a_l0, b_l0, c_l0, first, m_valid, n_valid, k_valid))

        if group == 1 and reuse.k_steps == 1:
            b.accumulation(p.k_fractals, p.k1, "k", k_step)
        else:  # one L1 window per `k_steps` base blocks (or a panel), then each block L1 -> L0
            with b.loop(p.k_fractals, k_l1, "kc") as kc:
                window_k = _valid_extent(b, p.k, kc, k_l1, p.k0)
                if not a_panel:
                    _fill_a(b, p, batch, mi, kc, a_l1, m_valid, window_k)
                if not b_panel:
                    _fill_b(b, p, batch, kc, ni, b_l1, n_valid, window_k)
                with b.loop(k_l1, p.k1, "ks") as ks:
                    k = b.add_index(kc, ks)
                    if k is zero:
                        first = b.flag(True)
                    else:
                        first = b.add(arith.CmpiOp(k, zero, "eq")).results[0]
                        first.name_hint = "first"
                    k_valid = _valid_extent(b, p.k, k, p.k1, p.k0)
                    _a_to_l0(b, p, a_l1, k if a_panel else ks, a_l0, m_valid, k_valid)
                    _b_to_l0(b, p, b_l1, k if b_panel else ks, b_l0, n_valid, k_valid)
                    b.add(MmadOp(a_l0, b_l0, c_l0, first, m_valid, n_valid, k_valid))
        n_elem = b.affine(ni, FRACTAL)
        if bias_l1 is not None and p.bias is not None:
            lead = [zero] * (len(memref_shape(p.bias)) - 1)
            b.add(CopyOp(p.bias, [*lead, n_elem], bias_l1, [zero] * (len(lead) + 1)))
        if deq_l1 is not None and p.deq is not None:
            b.add(CopyOp(p.deq, [n_elem], deq_l1, [zero]))
        offsets = [*batch, b.affine(mi, FRACTAL), n_elem]
        layout = "nz" if p.nz_out else "nd"
        if p.nz_out:
            offsets = [*batch, ni, mi, zero, zero]  # in fractals
        if out_via_ub:
            zeros = [zero] * len(offsets)
            b.add(
                FixpipeOp(
                    c_l0,
                    out_ub,
                    zeros,
                    bias_l1,
                    deq=deq_l1,
                    layout=layout,
                    **p.fixpipe_options(epilogue.relu),
                    m=m_valid,  # FixpipeParams mSize / nSize: the valid part only
                    n=n_valid,
                )
            )
            store(b, out_ub, out_arg, offsets)
        elif p.nz_out:
            relu = epilogue.relu
            b.add(
                FixpipeOp(
                    c_l0,
                    out_arg,
                    offsets,
                    bias_l1,
                    deq=deq_l1,
                    layout="nz",
                    relu=relu,
                    m=m_valid,
                    n=n_valid,
                )
            )
        elif acc_ub is None:
            fix = p.fixpipe_options(epilogue.relu)
            b.add(
                FixpipeOp(c_l0, out_arg, offsets, bias_l1, deq=deq_l1, **fix, m=m_valid, n=n_valid)
            )
        else:
            at = [zero] * len(tile)
            b.add(FixpipeOp(c_l0, acc_ub, at, bias_l1, deq=deq_l1, m=m_valid, n=n_valid))
            if not shared:
                finish(acc_ub, c_whole, offsets)
            else:

                def share_epilogue(acc: SSAValue, shape: list[int], at: list[SSAValue]) -> None:
                    finish(acc, allocate_epilogue(shape), at)

                emit_shares(b, acc_ub, tile, el, offsets, share_epilogue)
    b.tiles = prod(p.batch) * -(-fractals(p.m) // p.m1) * -(-fractals(p.n) // p.n1)
    return None
