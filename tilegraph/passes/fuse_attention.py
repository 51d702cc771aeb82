"""``fuse-ops``'s attention claim: Q·Kᵀ's group, the softmax and ·V's group become one group.

After ``fuse-ops`` has grown its groups, an attention pattern
(:mod:`tilegraph.lowering.analysis.attention_pattern`) is three kernels: the Q·Kᵀ matmul
with its scale / mask / causal-where epilogue (one group, with Q's and K's head-split
views), the softmax (alone), and the ·V matmul (one group, with V's view and the head
merge). Where the flash kernel takes the shapes
(:func:`~tilegraph.lowering.analysis.attention_pattern.unqualified`), the three are
claimed as one group, which ``tile-kernels`` runs as the flash-style kernel: the mix
kernel on a decoupled preset (:mod:`tilegraph.lowering.conversion.tiling.attention`), one
in-core kernel on a coupled one (310P,
:mod:`tilegraph.lowering.conversion.tiling.attention_coupled`). Otherwise they stay three
kernels, and the reason is counted as the statistic ``attention-kept.<reason>``
(``attention-claimed`` counts the claims).

T5's position bias has the scores' shape, so the format engine adds it in FRACTAL_NZ;
``fuse-ops`` first moves the add to ND (:mod:`tilegraph.passes.fuse_epilogue_formats`), and
the pattern follows each operand of the scores' shape back to the matmul (the bias is
itself a sum).

torch's SDPA NaN guard after the softmax (every Hugging Face export) is the softmax
kernel's tail (:func:`~tilegraph.passes.fuse_legality.normalisation_tail`): a softmax
grouped with exactly its guard is claimed as a lone softmax is, the guard with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import Block, Operation
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.attention_pattern import match_attention, unqualified
from tilegraph.lowering.analysis.operand_views import matrix_operands


@dataclass(frozen=True)
class AttentionClaim:
    """Merge group ``scores`` (Q·Kᵀ and its chain) and group ``output`` (·V) with the
    ``softmax`` between them."""

    scores: int
    output: int
    softmax: Operation
    probs: int | None = None
    """The group of the softmax with the NaN guard as its tail (None: the softmax alone)."""


def attention_claims(
    groups: Sequence[set[Operation]], ops: Sequence[Operation], hw: HardwareModel
) -> tuple[list[AttentionClaim], list[str]]:
    """The claims among ``groups`` (the member sets ``fuse-ops`` grew over ``ops``), and
    the reasons of the attention patterns left as they are."""
    where = {op: i for i, members in enumerate(groups) for op in members}
    claims: list[AttentionClaim] = []
    kept: list[str] = []
    for op in ops:
        pattern = match_attention(op)
        if pattern is None:
            continue
        reason = unqualified(pattern, hw)
        scores, output = where.get(pattern.qk), where.get(pattern.pv)
        if reason is None and (scores is None or output is None or scores == output):
            reason = "the matmuls are not grouped as Q·Kᵀ with its epilogue and ·V"
        probs = where.get(pattern.softmax)
        if reason is None and probs is not None:
            if groups[probs] != {pattern.softmax, *pattern.guard}:
                reason = "the softmax is grouped with other ops"
        if reason is None:
            assert scores is not None and output is not None
            owned = {pattern.qk, pattern.scores_to_nd, *pattern.chain}
            if not owned <= groups[scores] or pattern.probs_to_nz not in groups[output]:
                reason = "the scores' epilogue is split over several groups"
        if reason is not None:
            kept.append(reason)
            continue
        assert scores is not None and output is not None
        claims.append(AttentionClaim(scores, output, pattern.softmax, probs))
    return claims, kept


def attention_operands_to_nd(block: Block, hw: HardwareModel) -> int:
    """Give an attention the flash kernel takes (:func:`unqualified` on ``hw``) its Q, K
    and V in ND when a product writes one straight in FRACTAL_NZ (SqueezeBERT's Q, K and V
    products: no head split between them and the attention): a conversion to ND right after
    the product (its fixpipe's, claimed as its epilogue by
    :func:`~tilegraph.passes.fuse_views.view_claims`) and back into FRACTAL_NZ before the
    attention (the flash kernel's ``nd2nz``; it reads ND operands only). The number of
    operands converted."""
    converted = 0
    for op in list(block.ops):
        pattern = match_attention(op)
        if pattern is None or unqualified(pattern, hw) is not None:
            continue
        for reader, index in ((pattern.qk, 0), (pattern.qk, 1), (pattern.pv, 1)):
            value = reader.operands[index]
            t = value.type
            if not isinstance(t, TensorType) or t.storage_format != Format.FRACTAL_NZ:
                continue
            producer = value.owner
            if not isinstance(producer, Operation) or not matrix_operands(producer):
                continue  # not a product's result (a conversion is already there)
            if len(list(value.uses)) != 1:
                continue
            to_nd = TransDataOp(value, t.with_storage(Format.ND))
            to_nz = TransDataOp(to_nd.output, t)
            Rewriter.insert_op(to_nd, InsertPoint.after(producer))
            Rewriter.insert_op(to_nz, InsertPoint.before(reader))
            reader.operands[index] = to_nz.output
            converted += 1
    return converted
