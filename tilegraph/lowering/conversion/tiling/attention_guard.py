"""torch's SDPA NaN guard in the flash kernel (:mod:`.attention`): the attention
``where(isnan(P), 0, P)·V`` with ``P = softmax(x)``, exact against the graph.

The graph: a row of ``x`` that is -inf everywhere (fully masked) has ``max = -inf``,
``x - max = NaN`` and ``P = NaN``, which the guard makes 0, so its output is ``0·V`` — 0,
or NaN in a column where V holds ±inf or NaN (``0·inf``). A row with one finite score has
``P`` exactly 0 at its -inf keys, so its output is NaN wherever V holds an infinity at a
masked key too (``0·inf`` again), the guard or not.

The online softmax reaches the same values with a *safe* maximum per step and a *safe*
sum at the end (FlashAttention-2's ``m_safe``), row tiles only, nothing on the scores'
tile:

* ``m_new = max(m_old, rowmax(x_j))`` is -inf while every key so far is masked; the step
  subtracts ``m_safe = (m_new == -inf ? 0 : m_new)`` instead: ``P_j = exp(x_j - m_safe)``
  is then ``exp(-inf) = 0`` on such a row (the graph's guarded 0, not NaN), and the
  rescale ``exp(m_old - m_safe)`` is ``exp(-inf) = 0`` where it would be
  ``exp(-inf - -inf) = NaN``. The accumulator it scales is then ``0·V`` of the earlier
  blocks: 0 stays 0, NaN stays NaN (``0·NaN``), as the graph's sum over those keys. Where
  ``m_new`` is finite ``m_safe = m_new`` and the step is the unguarded one; ``m`` keeps
  ``m_new`` (not ``m_safe``), so a later finite maximum is taken as it is.
* ``l``, the sum of ``P``, is at least 1 on a row with a finite score (its maximum
  contributes ``exp(0)``) and exactly 0 on a fully masked row, whose ``O / l`` would be
  ``0 / 0``; ``O / (l == 0 ? 1 : l)`` gives the accumulated ``0·V`` itself.

So the kernel matches the graph for finite scores (finite Q and K: the chain's scale and
its additive -inf / large-negative masks, GPT-2's causal where) and any V, infinities
included, under masked and unmasked keys. A NaN score (a NaN in Q, K or a mask) is not
matched: the graph's guard zeroes that row's P, the kernel's row max and sum carry the NaN
into O. The lanes past ``Sk`` of a ragged K block are -inf (the key mask) and V's rows
there zeros, so they add ``0·0``.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import inf

from xdsl.dialects.builtin import f32, i1
from xdsl.ir import SSAValue

from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.vector_emitter import VectorEmitter


def guard_ub_bytes(hw: HardwareModel, rows: int) -> int:
    """UB bytes of :class:`NanGuard`'s tiles for ``rows`` query rows per AIV."""
    return 3 * aligned_bytes(hw, "UB", rows * 4) + aligned_bytes(hw, "UB", rows)


class NanGuard:
    """The guard's row tiles and steps (module docstring) for one flash kernel."""

    def __init__(self, b: KernelBuilder, e: VectorEmitter, row_tile: Sequence[int]):
        self.e = e
        self.low = b.buffer(row_tile, f32, "UB", "guard_neg_inf_ub")
        self.fill = b.buffer(row_tile, f32, "UB", "guard_fill_ub")
        self.safe = b.buffer(row_tile, f32, "UB", "safe_max_ub")
        self.mask = b.buffer(row_tile, i1, "UB", "guard_mask_ub")

    def start(self) -> None:
        """Per Q block: the constant row tiles."""
        self.e.fill(self.low, -inf)
        self.e.fill(self.fill, 0.0)

    def safe_max(self, m_new: SSAValue) -> SSAValue:
        """``m_new == -inf ? 0 : m_new``, the maximum a step subtracts."""
        self.e.compare("gt", m_new, self.low, self.mask)
        self.e.select(self.mask, m_new, self.fill, self.safe)
        return self.safe

    def safe_sum(self, total: SSAValue) -> SSAValue:
        """``total == 0 ? 1 : total`` into ``total``, the divisor of O (a fully masked
        row's O stays the accumulated ``0·V``). After the K loop: ``safe`` is free."""
        self.e.compare("eq", total, self.fill, self.mask)  # fill: 0 since start()
        self.e.fill(self.safe, 1.0)
        self.e.select(self.mask, self.safe, total, total)
        return total
