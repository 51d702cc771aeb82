"""Flash attention: ``softmax(mask(scale(Q·Kᵀ)))·V`` as one mix kernel with a K/V loop.

``fuse-ops`` claims the attention pattern as one group on a decoupled preset
(:mod:`tilegraph.passes.fuse_attention`, :mod:`~tilegraph.lowering.analysis.attention_pattern`);
this strategy runs it as CANN's FlashAttentionScore does on Atlas A2: per (batch, head,
block of ``Bq`` query rows) — the parallel loops that ``split-cores`` shares over the core
groups — a loop over blocks of ``Bk`` keys::

    AIC: Q block GM -> L1 -> L0A                               (once per Q block)
    AIC: S₀ = Q·K₀ᵀ -> ws[0] (as below)                        (the cube one block ahead)
    for j in K/V blocks:
      AIC: unless j is the last: Kⱼ₊₁ -> L1 -> L0B; mmad S = Q·Kⱼ₊₁ᵀ (L0C)
           wait S_FREE[s']; fixpipe S -> ws[s']; set S_READY[s']   (s' = (j + 1) mod 2)
           Vⱼ -> L1 -> L0B
      AIV: wait S_READY[s]; ws[s] -> UB (its rows); set S_FREE[s]  (s = j mod 2)
           the chain (scale, additive mask, causal where) on the scores tile
           m_new = max(m, rowmax); a = exp(m - m_new); l = a·l + rowsum(exp(x - m_new))
           O = a·O; P = exp(x - m_new)
           wait P_FREE; P -> ws[2]; set P_READY
      AIC: wait P_READY; ws[2] -> L1 (nd2nz, rounded to the cube's type) -> L0A; set P_FREE
           mmad PV = P·Vⱼ (L0C)
           wait O_FREE; fixpipe PV -> ws[3]; set O_READY
      AIV: wait O_READY; ws[3] -> UB; set O_FREE; O += PV
    AIV: O / l -> the output (through the head merge's view)

Each AIV of a group takes ``Bq / r`` of the block's rows (``tile.sub_block_idx``); the
softmax statistics ``m`` and ``l`` and the output block ``O`` stay on UB for the whole K
loop, so neither the scores nor the probabilities of a whole row ever go to GM: only the
workspace's four ``Bq x max(Bk, D)`` fp32 regions per core group (S's two slots, P, P·V;
``split-cores`` gives each group its own, :mod:`tilegraph.lowering.transforms.
mix_workspace`). S in two slots lets the AIC compute S of block ``j + 1`` before it waits
for P of block ``j``: the cube's Q·Kᵀ runs under the AIVs' softmax (CV pipelining, as
AscendNPU-IR's ``cv-pipelining``). Every hand-over has a "ready" and a
"free" flag (:data:`FLAGS`); the consumer sets the "free" flags once at its start and the
producer waits for the last ones at its end, so every set is waited for. The kernel is
written as one function with both units' ops and all flags, marked
:data:`~.mix.EXPLICIT_ATTR`; :func:`~.mix.split_mix_kernel` sorts it into the AIC and AIV
parts.

The last K block may be ragged (``Sk % Bk`` keys). It runs the same loop body (a peeled
step would double the MTE2 -> MTE1 events of the K / V / P loads past the 8 a pipe pair
has): the AIV sets the scores of keys past ``Sk`` to -inf before the row's max, through a
key mask made each step by loading the first element of each key row of K with -inf as
the padding (``tile.copy`` pads lanes past the tensor) and comparing it with -inf
(:mod:`.attention_keys`). So P is 0 there, and V's rows past ``Sk`` are zeros (``nd2nz``
pads): no padding lane enters a row's max, sum or P·V. Query rows past ``Sq`` (a ragged
Q block) are computed and never stored. Q, K and V are read as the matmuls read them
(their head-split views, :mod:`.matmul_views`): no kernel moves their bytes.

``multi-buffer`` gives the loads of a step two slots each (one event per slot between the
pipes); a kernel whose AIV would load more than four tiles per step (the scores, P·V, two
mask inputs varying with the keys and the key probe: GPT-2's causal ``where`` with a
padding mask) is marked ``tile.multi_buffer = 1`` instead, as the 8 events of a pipe pair
would not do.

A 16-bit graph (fp16 / bf16, a ``.half()`` export) runs the same kernel as
FlashAttentionScore runs 16-bit inputs: Q, K, V and P enter the cube in the graph's type,
S, P·V, the softmax statistics and O stay fp32 on L0C, in the workspace and on UB. The
chain computes in the graph's type, as the graph does, on the scores rounded to it (S is
cast to a 16-bit tile, the chain's result back to fp32: the graph's scale and mask
round as they do unfused); O is rounded once, at its store. So the kernel is more exact
than the unfused sequence, which rounds the softmax's output and ·V's to 16 bits.

torch's SDPA NaN guard ``where(isnan(P), 0, P)`` between the softmax and ·V (a Hugging
Face export) runs as a safe row max per step and a safe divisor at the end, exact against
the guarded graph (:mod:`.attention_guard`).

Not done: P and P·V keep one workspace slot each (the AIVs' P of block ``j + 1`` waits
for the cube to have read P of block ``j``); P goes through
the workspace in fp32 (the cube's rounding happens in ``nd2nz``); Q / K / V operands that
reach the kernel in FRACTAL_NZ keep the three-kernel sequence.
"""

from __future__ import annotations

from contextlib import ExitStack
from math import inf, prod

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, UnitAttr, f32, i64
from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.tile import (
    CopyOp,
    FixpipeOp,
    Load2dOp,
    MmadOp,
    Nd2NzOp,
    SubBlockIdxOp,
    SyncBlockSetOp,
    SyncBlockWaitOp,
    memref_shape,
    scoped_memref,
)
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.dialects.tile.sync import EVENTS_PER_PAIR
from tilegraph.lowering.analysis.attention_pattern import (
    AttentionPattern,
    attention_in,
    shapes,
    unqualified,
)
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.analysis.kernel_attrs import KERNEL_SLOTS_ATTR
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.attention_guard import NanGuard, guard_ub_bytes
from tilegraph.lowering.conversion.tiling.attention_keys import KeyMask, key_mask_ub_bytes
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.cube import FRACTAL
from tilegraph.lowering.conversion.tiling.elementwise import Chain, broadcast_mask, store
from tilegraph.lowering.conversion.tiling.matmul import MatmulOperand, matmul_operand
from tilegraph.lowering.conversion.tiling.matmul_views import lead_offsets, result_chain, view_of
from tilegraph.lowering.conversion.tiling.mix import (
    EXPLICIT_ATTR,
    WORKSPACE_SLOTS,
    add_workspace_argument,
)
from tilegraph.lowering.conversion.tiling.reduction_chunks import vreduce
from tilegraph.lowering.conversion.tiling.vector_emitter import VectorEmitter

FLAGS = {
    "S_READY": (0, "aic_to_aiv"),  # and 1: one per S slot
    "S_FREE": (2, "aiv_to_aic"),  # and 3
    "P_READY": (4, "aiv_to_aic"),
    "P_FREE": (5, "aic_to_aiv"),
    "O_READY": (6, "aic_to_aiv"),
    "O_FREE": (7, "aiv_to_aic"),
}
"""The cross-core flags of the three hand-overs (scores S, probabilities P, P·V); S has
one "ready" and one "free" flag per slot (the flag id plus the slot)."""
S_SLOTS = 2
"""Workspace slots of S: the AIC writes S of block ``j + 1`` while the AIV reads block
``j``'s."""
S_REGION, P_REGION, O_REGION = 0, S_SLOTS, S_SLOTS + 1
"""The workspace's regions (its leading index): S's slots, then P, then P·V."""
BLOCKS = (128, 64, 32, 16)
"""Block sizes (rows of Q, keys of K / V) the strategy considers, largest first."""


def _pad(n: int) -> int:
    return -(-n // FRACTAL) * FRACTAL


def _fits(
    b: KernelBuilder, cube: Attribute, bq: int, bk: int, dp: int, ub_tiles: int, share: float
) -> bool:
    """Whether the blocks fit ``share`` of each on-chip buffer (``cube``: the cube's input
    element; ``ub_tiles``: the UB bytes one AIV's tiles take)."""
    hw = b.hw
    cb = element_bytes(cube)
    need = {
        "L1": (bq * dp + 2 * bk * dp + bq * bk) * cb,
        "L0A": (bq * dp + bq * bk) * cb,
        "L0B": 2 * bk * dp * cb,
        "L0C": (bq * bk + bq * dp) * 4,
        "UB": ub_tiles,
    }
    return all(n <= hw.capacity(scope) * share for scope, n in need.items())


class FlashAttention:
    """One attention kernel's plan and emission (the module docstring): the decoupled
    preset's mix kernel. A subclass changes the hand-overs between the cube and the
    vector side (:meth:`_workspace`, :meth:`_start`, :meth:`_end`,
    :meth:`_before_k_loop`, :meth:`_step`) and keeps the plan, the buffers, the chain and
    the online softmax (:mod:`.attention_coupled`)."""

    def __init__(self, body: KernelBody, b: KernelBuilder, pattern: AttentionPattern):
        self.body, self.b, self.p = body, b, pattern

    # ---- checks ------------------------------------------------------------------------
    def plan(self) -> str | None:
        body, b, p = self.body, self.b, self.p
        reason = unqualified(p, b.hw)
        if reason is not None:
            return reason
        found = shapes(p)
        assert found is not None
        self.batch, self.sq, self.sk, self.d = found
        self.element = tensor_of(p.pv.results[0]).element_type  # one type: unqualified()
        self.narrow = self.element != f32
        if len(body.writes) != 1:
            return "an attention kernel with several outputs"
        operands: list[MatmulOperand] = []
        for value in (p.qk.lhs, p.qk.rhs, p.pv.rhs):
            owner = value.owner  # the prologue's ND -> NZ: nd2nz does it on the way in
            nd = owner.input if isinstance(owner, TransDataOp) else value
            found_operand = matmul_operand(body, nd, False, b)
            if isinstance(found_operand, str):
                return found_operand
            if found_operand.layout != "nd":
                return f"an attention operand in {found_operand.layout}"
            operands.append(found_operand)
        self.q, self.k, self.v = operands
        if self.q.transposed:
            return "a transposed Q"
        reason = self._output()
        if reason is not None:
            return reason
        self.scores = p.scores_to_nd.output
        scores_shape = [int(d) for d in tensor_of(self.scores).origin_shape]
        self.chain = Chain(body, list(p.chain), scores_shape)
        reason = self.chain.unsupported(given=[self.scores])
        if reason is not None:
            return reason
        return self._blocks()

    def _output(self) -> str | None:
        """Where O goes: the written value itself, or through the head merge's view."""
        body, pv = self.body, self.p.pv
        index = body.ops.index(pv)
        after = body.ops[index + 1 :]
        if (
            not after
            or not isinstance(after[0], TransDataOp)
            or after[0].input is not pv.results[0]
        ):
            return "an attention output without its conversion out of FRACTAL_NZ"
        nd = after[0].results[0]
        out_value, out_arg = body.writes[0]
        if len(after) == 1 and out_value is nd:
            self.out = out_arg
            return None
        chain = result_chain(body, nd, after[1:])
        if chain is None:
            return "an attention output with ops after ·V"
        self.out = view_of(self.b, out_arg, chain.view) if not self.b.dry_run else out_arg
        return None

    def _ub_bytes(self, bq: int, bk: int, dp: int) -> int:
        hw = self.b.hw
        rows = bq // max(1, hw.aiv_per_aic)
        nb = len(self.batch)
        tile = [1] * nb + [rows, bk]
        chain = self.chain.ub_bytes(hw, tile, [self.scores])
        own = [rows * bk * 4, 2 * rows * dp * 4] + [rows * 4] * 4
        narrow = element_bytes(self.element)
        if self.narrow:  # the scores rounded to the graph's type, O rounded for its store
            own += [rows * bk * narrow, rows * dp * narrow]
        keys = key_mask_ub_bytes(hw, bk, self.element) if self.sk % bk else 0
        guard = guard_ub_bytes(hw, rows) if self.p.guard else 0
        return chain + guard + keys + sum(aligned_bytes(hw, "UB", n) for n in own)

    def _blocks(self) -> str | None:
        b = self.b
        cube = b.cube_element(self.element)
        dp = _pad(self.d)
        q_sizes = [s for s in BLOCKS if s <= _pad(self.sq)] or [FRACTAL]
        k_sizes = [s for s in BLOCKS if s <= _pad(self.sk)] or [FRACTAL]
        default = None
        for share in (0.5, 1.0):
            for bq, bk in self._block_order(q_sizes, k_sizes):
                if default is None and _fits(
                    b, cube, bq, bk, dp, self._ub_bytes(bq, bk, dp), share
                ):
                    default = (bq, bk)
        bq0, bk0 = default or (q_sizes[-1], k_sizes[-1])
        self.bq = b.choose_int(
            "attention.block_q", q_sizes, bq0, "query rows per block (split over the cores)"
        )
        self.bk = b.choose_int("attention.block_k", k_sizes, bk0, "keys per step of the K / V loop")
        self.dp = dp
        if not _fits(b, cube, self.bq, self.bk, dp, self._ub_bytes(self.bq, self.bk, dp), 1.0):
            return (
                f"attention blocks {self.bq}x{self.bk} (D {self.d}) do not fit the on-chip buffers"
            )
        return None

    def _block_order(self, q_sizes: list[int], k_sizes: list[int]) -> list[tuple[int, int]]:
        """The (Bq, Bk) pairs in the order the default is sought (the first that fits
        half of each buffer): the largest Q block first (fewer loads of K and V)."""
        return [(bq, bk) for bq in q_sizes for bk in k_sizes]

    # ---- emission ----------------------------------------------------------------------
    def emit(self) -> None:
        """The kernel: its buffers, the hand-overs' start, the loops over (batch, Q block)
        and the hand-overs' end."""
        self._workspace()
        self._buffers()
        self._start()
        b = self.b
        with ExitStack() as stack:
            ivs = [
                stack.enter_context(b.loop(n, 1, f"b{i}", True)) for i, n in enumerate(self.batch)
            ]
            qi = stack.enter_context(b.loop(self.sq, self.bq, "q", True))
            self._q_block(ivs, qi)
        self._end()
        b.tiles = prod(self.batch) * -(-self.sq // self.bq)

    def _workspace(self) -> None:
        """The GM workspace of one core group's hand-overs (S's slots, P, P·V) and the mark
        of an explicit mix kernel."""
        nb = len(self.batch)
        width = max(self.bk, self.dp)
        ws_type = scoped_memref([O_REGION + 1, *([1] * (nb - 1)), self.bq, width], f32, "GM")
        self.ws = add_workspace_argument(self.body.fn, ws_type)
        self.body.fn.attributes[EXPLICIT_ATTR] = UnitAttr()

    def _loads_per_step(self) -> int:
        """The GM -> UB loads of one K step on the vector side: the scores, P·V (from the
        workspace), the chain's inputs varying with the block and the key probe."""
        chain = len(self.chain.input_tiles) - len(self.invariant)
        return 2 + chain + bool(self.key_mask)

    def _buffers(self) -> None:
        """The on-chip buffers, the chain's tiles, the guard's and the key mask's."""
        b, hw = self.b, self.b.hw
        nb = len(self.batch)
        bq, bk, dp = self.bq, self.bk, self.dp
        cube = b.cube_element(self.element)
        fr = FRACTAL
        self.q_l1 = b.buffer([dp // fr, bq // fr, fr, fr], cube, "L1", "q_l1")
        self.k_l1 = b.buffer(self._b_l1(self.k, dp, bk), cube, "L1", "k_l1")
        self.p_l1 = b.buffer([bk // fr, bq // fr, fr, fr], cube, "L1", "p_l1")
        self.v_l1 = b.buffer(self._b_l1(self.v, bk, dp), cube, "L1", "v_l1")
        self.q_l0 = b.buffer([bq // fr, dp // fr, fr, fr], cube, "L0A", "q_l0a")
        self.p_l0 = b.buffer([bq // fr, bk // fr, fr, fr], cube, "L0A", "p_l0a")
        self.k_l0 = b.buffer([dp // fr, bk // fr, fr, fr], cube, "L0B", "k_l0b")
        self.v_l0 = b.buffer([bk // fr, dp // fr, fr, fr], cube, "L0B", "v_l0b")
        self.s_l0 = b.buffer([bk // fr, bq // fr, fr, fr], f32, "L0C", "s_l0c")
        self.o_l0 = b.buffer([dp // fr, bq // fr, fr, fr], f32, "L0C", "pv_l0c")
        r = max(1, hw.aiv_per_aic)
        self.rows = rows = bq // r
        lead = [1] * nb
        row_tile = [*lead, rows, 1]
        self.m = b.buffer(row_tile, f32, "UB", "max_ub")
        self.l = b.buffer(row_tile, f32, "UB", "sum_ub")
        self.part = b.buffer(row_tile, f32, "UB", "rowmax_ub")
        self.rs = b.buffer(row_tile, f32, "UB", "rowsum_ub")
        self.o = b.buffer([*lead, rows, dp], f32, "UB", "o_ub")
        self.pv = b.buffer([*lead, rows, dp], f32, "UB", "pv_ub")
        self.s_ub = b.buffer([*lead, rows, bk], f32, "UB", "s_ub")
        if self.narrow:
            self.s_narrow = b.buffer([*lead, rows, bk], self.element, "UB", "s_narrow_ub")
            self.o_narrow = b.buffer([*lead, rows, dp], self.element, "UB", "o_narrow_ub")
        self.chain.allocate(b, [*lead, rows, bk], [self.scores])
        self.invariant = [
            v for v in self.chain.input_tiles if self._same_for_every_block(v)
        ]  # a scale, a scalar fill value: loaded once per Q block (fewer events per step)
        self.e = VectorEmitter(b, self.o, [])
        self.guard = NanGuard(b, self.e, row_tile) if self.p.guard else None
        self.key_mask = (
            KeyMask(b, self.e, self.k, nb, self.sk, bk, self.element) if self.sk % bk else None
        )
        if WORKSPACE_SLOTS * self._loads_per_step() > EVENTS_PER_PAIR:
            self.body.fn.attributes[KERNEL_SLOTS_ATTR] = IntegerAttr(1, i64)
        self.sub_row = b.index(0)
        if r > 1:
            sub = b.hoist(SubBlockIdxOp()).results[0]
            sub.name_hint = "sub"
            self.sub_row = b.hoist(arith.MuliOp(sub, b.index(rows))).results[0]

    def _start(self) -> None:
        """Before the loops: the consumers' first "free" sets."""
        for slot in range(S_SLOTS):  # the AIV: the workspace regions it reads are free
            self._set("S_FREE", "MTE2", slot)
        self._set("O_FREE", "MTE2")
        self._set("P_FREE", "MTE2")  # the AIC: the region it reads P from is free

    def _end(self) -> None:
        """After the loops: the producers wait for the consumers' last "free" sets."""
        for slot in range(S_SLOTS):  # the AIC drains the AIV's last "free" sets
            self._wait("S_FREE", "FIX", slot)
        self._wait("O_FREE", "FIX")
        self._wait("P_FREE", "MTE3")  # and the AIV the AIC's

    def _before_k_loop(self, ivs: list[SSAValue]) -> None:
        """The cube starts one K block ahead: S of the first block."""
        self._scores(ivs, self.b.index(0), 0)

    def _same_for_every_block(self, value: SSAValue) -> bool:
        """A chain input whose tile does not depend on the query rows or the keys."""
        arg = self.body.source(value)
        assert arg is not None
        mask = broadcast_mask(memref_shape(arg), self.chain.out_shape)
        return mask is not None and all(mask[-2:])

    def _b_l1(self, op: MatmulOperand, k: int, n: int) -> list[int]:
        """L1 shape of a right operand (K x N): ZN when it is held (N, K), else NZ."""
        fr = FRACTAL
        return [k // fr, n // fr, fr, fr] if op.transposed else [n // fr, k // fr, fr, fr]

    def _set(self, flag: str, pipe: str, slot: SSAValue | int = 0) -> None:
        """Set ``flag`` (of slot ``slot``: a constant, or computed in the kernel)."""
        ident, mode = FLAGS[flag]
        if isinstance(slot, int):
            self.b.add(SyncBlockSetOp(ident + slot, mode, pipe))
        else:
            self.b.add(SyncBlockSetOp(ident, mode, pipe, slot))

    def _wait(self, flag: str, pipe: str, slot: SSAValue | int = 0) -> None:
        """Wait for ``flag`` (of slot ``slot``, as :meth:`_set`)."""
        ident, mode = FLAGS[flag]
        if isinstance(slot, int):
            self.b.add(SyncBlockWaitOp(ident + slot, mode, pipe))
        else:
            self.b.add(SyncBlockWaitOp(ident, mode, pipe, slot))

    def _outer(self, op: MatmulOperand, ivs: list[SSAValue]) -> list[SSAValue]:
        """Offsets of an operand's leading dims for the batch indices (broadcast dims 0,
        K's and V's grouped heads ``h // n_rep``)."""
        return lead_offsets(self.b, op.arg, ivs, 2, op.groups)

    def _q_block(self, ivs: list[SSAValue], qi: SSAValue) -> None:
        b, zero = self.b, self.b.index(0)
        b.add(Nd2NzOp(self.q.arg, [*self._outer(self.q, ivs), qi, zero], self.q_l1))
        b.add(Load2dOp(self.q_l1, zero, zero, self.q_l0, "swap"))
        self.e.fill(self.m, -inf)
        self.e.fill(self.l, 0.0)
        self.e.fill(self.o, 0.0)
        if self.guard is not None:
            self.guard.start()
        if self.key_mask is not None:
            self.key_mask.start()
        at = [*ivs, b.add_index(qi, self.sub_row), zero]
        for v in self.invariant:  # the same tile for every K block: loaded once
            self.chain.load(b, v, at)
        self._before_k_loop(ivs)
        with b.loop(self.sk, self.bk, "kv") as j:
            self._step(ivs, qi, j)
        total = self.l if self.guard is None else self.guard.safe_sum(self.l)
        self.e.binary("vdiv", self.o, total, self.o)
        row = b.add_index(qi, self.sub_row)
        out = self.o
        if self.narrow:  # O rounded to the graph's type once, at its store
            self.e.cast(self.o, self.o_narrow, "rint")
            out = self.o_narrow
        store(b, out, self.out, [*ivs, row, zero])

    def _k_operand(self, ivs, j: SSAValue) -> None:
        """Kⱼ as the right operand of S = Q·Kⱼᵀ (K = D, N = keys): held (N, K) when its
        view has the keys on its rows (the usual case: not transposed in memory)."""
        b, zero = self.b, self.b.index(0)
        k = self.k
        outer = self._outer(k, ivs)
        # K's ND view is (keys, D) when the graph's Kᵀ was a transposed view (k.transposed),
        # else (D, keys).
        offsets = [*outer, j, zero] if k.transposed else [*outer, zero, j]
        b.add(Nd2NzOp(k.arg, offsets, self.k_l1))
        b.add(Load2dOp(self.k_l1, zero, zero, self.k_l0, "copy" if k.transposed else "transpose"))

    def _v_operand(self, ivs, j: SSAValue) -> None:
        """Vⱼ as the right operand of P·Vⱼ (K = keys, N = D)."""
        b, zero = self.b, self.b.index(0)
        v = self.v
        outer = self._outer(v, ivs)
        offsets = [*outer, zero, j] if v.transposed else [*outer, j, zero]
        b.add(Nd2NzOp(v.arg, offsets, self.v_l1))
        b.add(Load2dOp(self.v_l1, zero, zero, self.v_l0, "copy" if v.transposed else "transpose"))

    def _region(self, region: int | SSAValue) -> list[SSAValue]:
        b = self.b
        nb = len(self.batch)
        lead = b.index(region) if isinstance(region, int) else region
        return [lead, *([b.index(0)] * (nb - 1))]

    def _s_slot(self, j: SSAValue) -> SSAValue | int:
        """The S slot of the K block at key ``j``: its position, mod :data:`S_SLOTS`."""
        if self.sk <= self.bk:  # one K block: j is the constant 0
            return 0
        b = self.b
        position = b.add(arith.DivUIOp(j, b.index(self.bk))).results[0]
        slot = b.add(arith.RemUIOp(position, b.index(S_SLOTS))).results[0]
        slot.name_hint = "s_slot"
        return slot

    def _scores(self, ivs: list[SSAValue], j: SSAValue, slot: SSAValue | int) -> None:
        """AIC: S = Q·Kⱼᵀ into its workspace slot."""
        b, zero = self.b, self.b.index(0)
        self._k_operand(ivs, j)
        b.add(MmadOp(self.q_l0, self.k_l0, self.s_l0, b.flag(True)))
        self._wait("S_FREE", "FIX", slot)
        region = S_REGION + slot if isinstance(slot, int) else slot  # S_REGION is 0
        b.add(FixpipeOp(self.s_l0, self.ws, [*self._region(region), zero, zero], None))
        self._set("S_READY", "FIX", slot)

    def _chain(self, s_ub: SSAValue) -> SSAValue:
        """The chain (scale, mask) on the scores tile; the softmax's input, in fp32. An
        fp16 / bf16 graph's chain computes in its type, as the graph does, on the scores
        rounded to it; its result comes back to fp32 (into ``s_ub``), where the online
        softmax computes, as CANN's softmax does for 16-bit data."""
        chain, e = self.chain, self.e
        if not self.narrow or not chain.ops:
            tiles = chain.compute(self.b, {self.scores: s_ub}, dict(chain.input_tiles))
            return tiles[self.p.softmax.operands[0]]
        e.cast(s_ub, self.s_narrow, "rint")
        tiles = chain.compute(self.b, {self.scores: self.s_narrow}, dict(chain.input_tiles))
        e.cast(tiles[self.p.softmax.operands[0]], s_ub, "rint")
        return s_ub

    def _step(self, ivs: list[SSAValue], qi: SSAValue, j: SSAValue) -> None:
        """One K / V block at key ``j`` (its S is in the workspace or on its way)."""
        b, e, zero = self.b, self.e, self.b.index(0)
        true = b.flag(True)
        # AIC: S of the next K block (a loop of one trip unless j is the last), then Vⱼ,
        # loaded before the wait for P: the cube's work overlaps the AIV's softmax
        if self.sk > self.bk:
            after = b.add_index(j, b.index(self.bk))
            with b.loop_over(after, b.index(self.sk), b.index(self.sk), "kv_next") as following:
                self._scores(ivs, following, self._s_slot(following))
        self._v_operand(ivs, j)
        # AIV: the scores of its rows, the chain, the online softmax
        s_ub = self.s_ub
        slot = self._s_slot(j)
        region = S_REGION + slot if isinstance(slot, int) else slot
        self._wait("S_READY", "MTE2", slot)
        rows_at = [*self._region(region), self.sub_row, zero]
        b.add(CopyOp(self.ws, rows_at, s_ub, [zero] * len(rows_at)))
        self._set("S_FREE", "MTE2", slot)
        x = self._masked_scores(s_ub, ivs, qi, j)
        self._online_softmax(x)
        self._wait("P_FREE", "MTE3")
        p_at = [*self._region(P_REGION), self.sub_row, zero]
        b.add(CopyOp(x, [zero] * len(p_at), self.ws, p_at))
        self._set("P_READY", "MTE3")
        # AIC: P·Vⱼ into the workspace
        self._wait("P_READY", "MTE2")
        b.add(Nd2NzOp(self.ws, [*self._region(P_REGION), zero, zero], self.p_l1))
        self._set("P_FREE", "MTE2")
        b.add(Load2dOp(self.p_l1, zero, zero, self.p_l0, "swap"))
        b.add(MmadOp(self.p_l0, self.v_l0, self.o_l0, true))
        self._wait("O_FREE", "FIX")
        b.add(FixpipeOp(self.o_l0, self.ws, [*self._region(O_REGION), zero, zero], None))
        self._set("O_READY", "FIX")
        # AIV: O += P·Vⱼ
        self._wait("O_READY", "MTE2")
        o_at = [*self._region(O_REGION), self.sub_row, zero]
        b.add(CopyOp(self.ws, o_at, self.pv, [zero] * len(o_at)))
        self._set("O_FREE", "MTE2")
        e.binary("vadd", self.o, self.pv, self.o)

    def _masked_scores(
        self, s_ub: SSAValue, ivs: list[SSAValue], qi: SSAValue, j: SSAValue
    ) -> SSAValue:
        """The vector side's scores tile of the block at key ``j`` (in ``s_ub``) through
        the chain and the key mask of a ragged last block: the online softmax's input."""
        b, chain = self.b, self.chain
        at = [*ivs, b.add_index(qi, self.sub_row), j]
        for v in chain.input_tiles:
            if v not in self.invariant:
                chain.load(b, v, at)
        x = self._chain(s_ub)
        if self.key_mask is not None:
            self.key_mask.apply(x, j)
        return x

    def _online_softmax(self, x: SSAValue) -> None:
        """One step of the online softmax on the scores tile ``x``: the running max,
        the rescale of the sum and of O, and ``x`` becomes P = exp(x - m_new)."""
        b, e = self.b, self.e
        last = len(memref_shape(x)) - 1
        vreduce(b, "max", x, self.part, [last])
        e.binary("vmax", self.m, self.part, self.part)  # m_new
        shift = self.part if self.guard is None else self.guard.safe_max(self.part)
        e.binary("vsub", self.m, shift, self.m)
        e.unary("vexp", self.m, self.m)  # exp(m_old - m_new) <= 1
        e.binary("vmul", self.l, self.m, self.l)
        e.binary("vmul", self.o, self.m, self.o)
        e.binary("vsub", x, shift, x)
        e.unary("vexp", x, x)
        vreduce(b, "sum", x, self.rs, [last])
        e.binary("vadd", self.l, self.rs, self.l)
        e.unary("vcopy", self.part, self.m)


def is_attention_kernel(body: KernelBody) -> bool:
    """The kernel body is a claimed attention group (two matmuls around a softmax)."""
    return attention_in(body.ops) is not None


def emit_attention_kernel(
    body: KernelBody, b: KernelBuilder, kind: type[FlashAttention] | None = None
) -> str | None:
    """Tile an attention group as the flash kernel of ``kind`` (None: the decoupled mix
    kernel); why it cannot (None when emitted)."""
    pattern = attention_in(body.ops)
    if pattern is None:
        return "no attention pattern"
    kernel = (kind or FlashAttention)(body, b, pattern)
    reason = kernel.plan()
    if reason is not None or b.dry_run:
        return reason
    kernel.emit()
    return None
