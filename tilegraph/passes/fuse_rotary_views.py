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

The kernel also takes a scale of its result as its tail (Falcon's and Phi-3's q and k
times ``head_dim ** -0.25``: a multiply by a one-element constant, after order-keeping
reshapes; :func:`~tilegraph.lowering.analysis.rotary_views.rotary_tail`), when those ops
too are in no group or in groups of their own: the group's root is then the scale.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph.constant_ops import ConstantOp
from tilegraph.dialects.graph.rotary import ApplyRotaryOp
from tilegraph.lowering.analysis.operand_views import ViewChain
from tilegraph.lowering.analysis.rotary_views import rotary_input_view, rotary_tail


@dataclass(frozen=True)
class RotaryClaim:
    """``rotary`` takes the view ``chain`` of its x (None: x is read whole) and the
    ``tail`` after it (empty or ending in a scale); ``groups``: the indices of the
    groups those ops formed (each of them only), empty when they were in none."""

    rotary: ApplyRotaryOp
    chain: ViewChain | None
    tail: tuple[Operation, ...]
    groups: tuple[int, ...]

    @property
    def root(self) -> Operation:
        """The op whose result leaves the kernel."""
        return self.tail[-1] if self.tail else self.rotary

    @property
    def members(self) -> set[Operation]:
        return {*self.views, self.rotary, *self.tail}

    @property
    def views(self) -> tuple[Operation, ...]:
        return self.chain.ops if self.chain is not None else ()


def _constant(value: SSAValue) -> bool:
    return isinstance(value.owner, ConstantOp)


def rotary_claims(groups: Sequence[set[Operation]], ops: Iterable[Operation]) -> list[RotaryClaim]:
    """The rotary ops among ``ops`` whose x's view chain (and tail) join their kernel, with
    the groups of ``groups`` (member sets) they replace: a chain's ops may have formed
    several (a split's copy alone, the head split's reshape / transpose together), but
    none that holds another op. A chain without a view still takes its tail."""
    where = {op: i for i, members in enumerate(groups) for op in members}
    claims: list[RotaryClaim] = []
    for op in ops:
        if not isinstance(op, ApplyRotaryOp) or op in where:
            continue
        chain = rotary_input_view(op.x)
        for tail in dict.fromkeys([rotary_tail(op, _constant), ()]):  # with the scale, else not
            claim = RotaryClaim(op, chain, tail, ())
            found = tuple(sorted({where[m] for m in claim.members if m in where}))
            if claim.members != {op} and all(groups[i] <= claim.members for i in found):
                claims.append(RotaryClaim(op, chain, tail, found))
                break
    return claims
