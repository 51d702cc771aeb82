"""``fuse-ops``'s attention claim: Q·Kᵀ's group, the softmax and ·V's group become one group.

After ``fuse-ops`` has grown its groups, an attention pattern
(:mod:`tilegraph.lowering.analysis.attention_pattern`) is three kernels: the Q·Kᵀ matmul
with its scale / mask / causal-where epilogue (one group, with Q's and K's head-split
views), the softmax (alone), and the ·V matmul (one group, with V's view and the head
merge). On a decoupled preset whose flash kernel takes the shapes
(:func:`~tilegraph.lowering.analysis.attention_pattern.unqualified`), the three are
claimed as one group, which ``tile-kernels`` runs as the flash-style mix kernel
(:mod:`tilegraph.lowering.conversion.tiling.attention`). Otherwise they stay three
kernels, and the reason is counted as the statistic ``attention-kept.<reason>``
(``attention-claimed`` counts the claims).

Before the groups grow, :func:`scores_chains_to_nd` moves a scores' chain that the format
engine left in FRACTAL_NZ (T5's add of its ``[1, H, S, S]`` relative-position bias: an
add whose operands have one shape keeps the matmul's format) behind the scores'
conversion to ND, where the pattern wants it: the same ops on the ND operands (the
inputs of their ND -> FRACTAL_NZ conversions, which go when nothing else reads them), so
the group is Q·Kᵀ with an ND epilogue, as a BERT mask's, and the flash kernel can take it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.attention_pattern import (
    fractal_chain,
    match_attention,
    nd_source,
    unqualified,
)

SHARED_FORMAT_ATTR = "layout.shared"
"""The format engine's mark of an op computing in its operands' shared storage format."""


@dataclass(frozen=True)
class AttentionClaim:
    """Merge group ``scores`` (Q·Kᵀ and its chain) and group ``output`` (·V) with the
    ``softmax`` between them."""

    scores: int
    output: int
    softmax: Operation


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
        if reason is None and pattern.softmax in where:
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
        claims.append(AttentionClaim(scores, output, pattern.softmax))
    return claims, kept


def scores_chains_to_nd(block: Block) -> int:
    """Move every scores' chain of ``block`` that computes in FRACTAL_NZ behind the scores'
    conversion to ND (module docstring); the number of chains moved."""
    moved = 0
    for op in list(block.ops):
        found = fractal_chain(op)
        if found is None:
            continue
        scores = found.qk.results[0]
        to_nd = TransDataOp(scores, found.to_nd.output.type)
        to_nd.output.name_hint = scores.name_hint
        to_nd.location = found.to_nd.location
        Rewriter.insert_op(to_nd, InsertPoint.after(found.qk))
        previous, value = scores, to_nd.output
        converted: list[Operation] = []
        for old in found.chain:
            operands: list[SSAValue] = []
            for v in old.operands:
                if v is previous:
                    operands.append(value)
                    continue
                source = nd_source(v)
                assert source is not None  # fractal_chain checked it
                operands.append(source)
                if source is not v:
                    converted.append(v.owner)  # type: ignore[arg-type] - a TransDataOp
            attributes = {k: a for k, a in old.attributes.items() if k != SHARED_FORMAT_ATTR}
            new = old.create(
                operands=operands,
                result_types=[_in_origin_format(r.type) for r in old.results],
                properties=dict(old.properties),
                attributes=attributes,
            )
            new.location = old.location
            for r_old, r_new in zip(old.results, new.results, strict=True):
                r_new.name_hint = r_old.name_hint
            Rewriter.insert_op(new, InsertPoint.before(found.to_nd))
            previous, value = old.results[0], new.results[0]
        found.to_nd.output.replace_all_uses_with(value)
        for old in (found.to_nd, *reversed(found.chain)):
            Rewriter.erase_op(old)
        for conversion in converted:
            if conversion.parent is not None and not conversion.results[0].uses:
                Rewriter.erase_op(conversion)
        moved += 1
    return moved


def _in_origin_format(t: object) -> TensorType:
    assert isinstance(t, TensorType)
    return t.with_storage(t.origin_format)
