"""Flash attention on a coupled preset (310P): one in-core kernel with a K/V loop.

On a coupled core (``HardwareModel.coupled``: cube and vector in one AI core) the flash
kernel of :mod:`.attention` needs no cross-core hand-over: the accumulator reaches UB
through the fixpipe (L0C -> UB, the path the 310P's matmul epilogues take), so per
(batch, head, block of ``Bq`` query rows) — the parallel loops ``split-cores`` shares over
the cores — the kernel runs::

    Q block GM -> L1 -> L0A                                          (once per Q block)
    for j in K/V blocks:
      Kⱼ -> L1 -> L0B; mmad S = Q·Kⱼᵀ (L0C); fixpipe S -> UB (ND rows)
      Vⱼ -> L1 -> L0B
      the chain (scale, additive mask, causal where) on the scores tile, the key mask of a
      ragged last block, the online softmax (:meth:`~.attention.FlashAttention.
      _online_softmax`): P = exp(x - m_new) on UB
      P UB -> GM (its rows of the P workspace) -> L1 (nd2nz, rounded to the cube's type)
        -> L0A; mmad PV = P·Vⱼ (L0C); fixpipe PV -> UB; O = a·O + PV
    O / l -> the output (through the head merge's view)

The pipes of the one core are ordered by ``inject-sync``'s flags (no ``tile.sync_block``
flags, no AIC / AIV split): the kernel is an ordinary cube kernel with vector ops, as a
coupled matmul with an epilogue is.

P's way back to the cube: the 310P has a UB -> L1 DMA (``copy_ubuf_to_cbuf``: Ascend C's
``DataCopy`` from VECOUT to A1 / B1 on the Atlas inference products, the path its own
GM -> L1 ND2NZ takes piece by piece, docs/hardware.md), but P is ND rows on UB and the
cube reads NZ fractals; the ND -> NZ reorder on UB (Ascend C's ``TransND2NZ``, a vector
``Adds`` per column block) is not an op of the tile dialect. So P goes through a GM
workspace, as the decoupled kernel's does: ``UB -> GM`` (MTE3) and ``nd2nz`` back into L1
(MTE2). The workspace has a region per (batch, head, Q block), ``[*batch, Sq padded to Bq,
Bk]`` fp32: no two cores write the same bytes, whatever ``split-cores`` gives each (no
per-core region logic, at the cost of the whole ``B·H·Sq·Bk`` floats).

Everything else is :class:`~.attention.FlashAttention`'s: the blocks' plan and fit, the
chain (16-bit graphs: the chain in the graph's type, the softmax in fp32), the key mask of
a ragged last K block, torch's NaN guard (:mod:`.attention_guard`), rows past ``Sq``
computed and never stored.

Not done: S is computed per step, not one block ahead (the decoupled kernel's two S
slots): ``multi-buffer`` gives the K / V loads two slots, and the cube waits for the
vector side's softmax of block ``j`` only through P; P through UB -> L1 without GM
(above).
"""

from __future__ import annotations

from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from tilegraph.dialects.tile import (
    CopyOp,
    FixpipeOp,
    Load2dOp,
    MmadOp,
    Nd2NzOp,
    memref_shape,
    scoped_memref,
)
from tilegraph.lowering.conversion.kernel_body import KernelBody
from tilegraph.lowering.conversion.tiling.attention import FlashAttention, emit_attention_kernel
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.mix import add_workspace_argument


class CoupledFlashAttention(FlashAttention):
    """The flash kernel on one coupled core (module docstring)."""

    def _block_order(self, q_sizes: list[int], k_sizes: list[int]) -> list[tuple[int, int]]:
        """The largest K block first: the one vector unit of the core does each step's
        row work (two cross-lane reductions per row, the row statistics) for ``Bk`` keys,
        so a wider step costs less per key; ``Bq`` only shares the Q load."""
        return [(bq, bk) for bk in k_sizes for bq in q_sizes]

    def _workspace(self) -> None:
        """P's GM workspace: a region of ``Bq x Bk`` per (batch, head, Q block)."""
        rows = -(-self.sq // self.bq) * self.bq
        ws_type = scoped_memref([*self.batch, rows, self.bk], f32, "GM")
        self.ws = add_workspace_argument(self.body.fn, ws_type)
        self.ws.name_hint = "p_workspace"

    def _loads_per_step(self) -> int:
        """S and P·V come by the fixpipe: the GM -> UB loads of a step are the chain's
        varying inputs and the key probe."""
        return super()._loads_per_step() - 2

    def _start(self) -> None:
        """No cross-core flags."""

    def _end(self) -> None:
        """No cross-core flags."""

    def _before_k_loop(self, ivs: list[SSAValue]) -> None:
        """S of a block is computed in its own step."""

    def _step(self, ivs: list[SSAValue], qi: SSAValue, j: SSAValue) -> None:
        """One K / V block at key ``j``: S to UB, the softmax, P through GM to the cube,
        P·V to UB and into O."""
        b, e, zero = self.b, self.e, self.b.index(0)
        true = b.flag(True)
        at_ub = [zero] * len(memref_shape(self.s_ub))
        self._k_operand(ivs, j)
        b.add(MmadOp(self.q_l0, self.k_l0, self.s_l0, true))
        b.add(FixpipeOp(self.s_l0, self.s_ub, at_ub, None))
        self._v_operand(ivs, j)
        x = self._masked_scores(self.s_ub, ivs, qi, j)
        self._online_softmax(x)
        region = [*ivs, qi, zero]
        b.add(CopyOp(x, at_ub, self.ws, region))
        b.add(Nd2NzOp(self.ws, region, self.p_l1))
        b.add(Load2dOp(self.p_l1, zero, zero, self.p_l0, "swap"))
        b.add(MmadOp(self.p_l0, self.v_l0, self.o_l0, true))
        b.add(FixpipeOp(self.o_l0, self.pv, at_ub, None))
        e.binary("vadd", self.o, self.pv, self.o)


def emit_coupled_attention_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile an attention group as the coupled flash kernel; why it cannot (None when
    emitted)."""
    return emit_attention_kernel(body, b, CoupledFlashAttention)
