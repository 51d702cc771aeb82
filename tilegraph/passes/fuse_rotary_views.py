"""``fuse-ops``'s rotary claim: the head split before a rotary embedding joins its kernel.

LLaMA splits Q and K into heads (``[B, S, H·D] -> reshape [B, S, H, D] -> transpose ->
[B, H, S, D]``) right before ``graph.apply_rotary``. That op is opaque to ``fuse-ops`` (it
grows no group), so the chain was a transpose kernel of its own writing what the rotary
kernel then read. The chain only re-indexes its input
(:func:`~tilegraph.lowering.analysis.operand_views.operand_view`): the rotary kernel reads
its rows through the strided view (``tiling/rotary.py``), as the matmuls read the head
split. A chain qualifies when it is a view with unit stride along the rotated last axis
and no repeated dim, and its ops are in no group or in groups of their own (chain ops
only). The chain may start with the rotary's copy of a split (Phi-3's q and k columns of
the fused projection, given by ``splits-cloned``:
:func:`~tilegraph.lowering.analysis.shared_views.split_view_users`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.ir import Operation

from tilegraph.dialects.graph.rotary import ApplyRotaryOp
from tilegraph.lowering.analysis.operand_views import ViewChain
from tilegraph.lowering.analysis.shared_views import rotary_input_view


@dataclass(frozen=True)
class RotaryClaim:
    """``rotary`` takes the view ``chain`` of its x; ``groups``: the indices of the groups
    the chain's ops formed (each of chain ops only), empty when they were in none."""

    rotary: ApplyRotaryOp
    chain: ViewChain
    groups: tuple[int, ...]


def rotary_claims(groups: Sequence[set[Operation]], ops: Iterable[Operation]) -> list[RotaryClaim]:
    """The rotary ops among ``ops`` whose x's view chain joins their kernel, with the
    groups of ``groups`` (member sets) the chain replaces: a chain's ops may have formed
    several (a split's copy alone, the head split's reshape / transpose together), but
    none that holds another op."""
    where = {op: i for i, members in enumerate(groups) for op in members}
    claims: list[RotaryClaim] = []
    for op in ops:
        if not isinstance(op, ApplyRotaryOp) or op in where:
            continue
        chain = rotary_input_view(op.x)
        if chain is None:
            continue
        found = sorted({where[m] for m in chain.ops if m in where})
        if all(groups[i] <= set(chain.ops) for i in found):
            claims.append(RotaryClaim(op, chain, tuple(found)))
    return claims
