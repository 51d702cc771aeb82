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

On a coupled preset the claim follows GE by default (``fuse-ops{coupled-attention=ge}``):
the 310P's ATC fuses an attention into one kernel only through
``ZAttentionScoreFusionPass``, whose conditions are a BERT-base / -large layer's shape —
fp16 scores ``[B, H, S, S]`` with ``H`` 12 or 16, a head dim of 64, ``S`` a multiple of 32
up to 512, ``B`` at most 128 and ``B·H`` a multiple of 8 (:func:`ge_declines`;
docs/cycle-model.md). Elsewhere GE runs the three kernels, and so does tilegraph.
``coupled-attention=always`` claims every pattern the in-core kernel takes (a study of
the kernel itself).

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
from tilegraph.lowering.analysis.attention_pattern import (
    AttentionPattern,
    match_attention,
    shapes,
    unqualified,
)
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


COUPLED_ATTENTION = ("ge", "always")
"""``fuse-ops``' choices on a coupled preset (see the module docstring)."""

_GE_HEADS = (12, 16)
_GE_HEAD_DIM = 64
_GE_SEQUENCE_STEP = 32
_GE_MAX_SEQUENCE = 512
_GE_MAX_BATCH = 128
_GE_BATCH_HEADS_STEP = 8


def ge_declines(pattern: AttentionPattern) -> str | None:
    """Why ``ZAttentionScoreFusionPass`` (GE's one attention fusion on the 310P) would
    leave ``pattern`` unfused, None when it fuses it (module docstring)."""
    found = shapes(pattern)
    scores = pattern.softmax.results[0].type
    if found is None or not isinstance(scores, TensorType):
        return "symbolic attention shapes"
    batch, sq, sk, d = found
    if str(scores.element_type) != "f16":
        return "GE fuses a 310P attention with fp16 scores only"
    if len(batch) != 2 or batch[1] not in _GE_HEADS:
        return "GE fuses a 310P attention of 12 or 16 heads only"
    if sq != sk or d != _GE_HEAD_DIM:
        return "GE fuses a 310P self-attention of head dim 64 only"
    if sq % _GE_SEQUENCE_STEP or sq > _GE_MAX_SEQUENCE or batch[0] > _GE_MAX_BATCH:
        return "GE fuses a 310P attention of a sequence a multiple of 32 up to 512 only"
    if batch[0] * batch[1] % _GE_BATCH_HEADS_STEP:
        return "GE fuses a 310P attention whose batch x heads is a multiple of 8 only"
    return None


def claim_refused(pattern: AttentionPattern, hw: HardwareModel, coupled: str = "ge") -> str | None:
    """Why ``fuse-ops`` does not claim ``pattern`` on ``hw`` (None: it does): the flash
    kernel's limits (:func:`unqualified`), and on a coupled preset under ``coupled="ge"``
    GE's (:func:`ge_declines`)."""
    reason = unqualified(pattern, hw)
    if reason is None and hw.coupled and coupled == "ge":
        reason = ge_declines(pattern)
    return reason


def attention_claims(
    groups: Sequence[set[Operation]],
    ops: Sequence[Operation],
    hw: HardwareModel,
    coupled: str = "ge",
) -> tuple[list[AttentionClaim], list[str]]:
    """The claims among ``groups`` (the member sets ``fuse-ops`` grew over ``ops``), and
    the reasons of the attention patterns left as they are; ``coupled``: the choice on a
    coupled preset (:data:`COUPLED_ATTENTION`)."""
    where = {op: i for i, members in enumerate(groups) for op in members}
    claims: list[AttentionClaim] = []
    kept: list[str] = []
    for op in ops:
        pattern = match_attention(op)
        if pattern is None:
            continue
        reason = claim_refused(pattern, hw, coupled)
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


def attention_operands_to_nd(block: Block, hw: HardwareModel, coupled: str = "ge") -> int:
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
        if pattern is None or claim_refused(pattern, hw, coupled) is not None:
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
