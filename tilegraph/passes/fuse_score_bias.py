"""``fuse-ops``' score-bias split: an attention's score chain leaves the group that also
computes its bias, for the Q·Kᵀ group to take it.

An attention whose scores get a bias computed in the same layer (DeBERTa-v2's
disentangled attention: ``Q·Kᵀ + (c2p + p2c)``, the two position terms gathered from their
own products) grows its elementwise ops from the consumer end as one group: the mask's
``where``, the score add and the bias sum (every reader of the sum is in the group), so the
Q·Kᵀ product keeps no epilogue and the attention claim
(:mod:`tilegraph.passes.fuse_attention`) finds the scores' chain in another group than the
product (``attention-kept.the scores' epilogue is split over several groups``). A
position bias read by every layer (T5's) has readers outside and stays its own group; this
one is computed for one attention only.

:func:`split_scores_bias` splits such a group before the claim: the chain ops (and the
scores' conversion to ND) join the Q·Kᵀ group as its epilogue, and the rest, the bias
computation, stays a group of its own whose one result the chain reads. Taken only when
the pattern qualifies for the flash kernel (:func:`~tilegraph.lowering.analysis.
attention_pattern.unqualified`), the chain's group has no anchor, and its other members
leave it through one op read by the chain alone. The number of splits is counted as
``score-bias-split``.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation

from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.attention_pattern import (
    AttentionPattern,
    match_attention,
    unqualified,
)
from tilegraph.passes.fuse_legality import Group


def _read_outside(op: Operation, members: set[Operation]) -> set[Operation]:
    """The ops outside ``members`` that read a result of ``op``."""
    return {use.operation for r in op.results for use in r.uses} - members


def _split(pattern: AttentionPattern, scores: Group, chain_group: Group) -> list[Group] | None:
    """The Q·Kᵀ group with the chain as its epilogue, and the bias group; None when
    ``chain_group`` is not the chain plus one bias computation the chain alone reads."""
    chain = {pattern.scores_to_nd, *pattern.chain} - scores.members
    if chain_group.anchor is not None or not chain <= chain_group.members:
        return None
    if any(not _read_outside(m, scores.members) <= chain for m in scores.members):
        return None  # the product's group has readers past the chain
    bias = chain_group.members - chain
    leaving = [op for op in bias if _read_outside(op, bias)]
    if len(leaving) != 1 or not _read_outside(leaving[0], bias) <= chain:
        return None
    epilogue = Group(chain_group.root, scores.members | chain)
    epilogue.anchor = scores.anchor
    for member in chain:
        epilogue.note(member)
    bias_group = Group(leaving[0], set(bias))
    for member in bias:
        bias_group.note(member)
    return [epilogue, bias_group]


def split_scores_bias(
    groups: Sequence[Group], ops: Sequence[Operation], hw: HardwareModel
) -> tuple[list[Group], int]:
    """``groups`` with each qualifying attention's score chain moved from the group that
    also computes its bias into the Q·Kᵀ group (module docstring), and the number of
    splits."""
    result = list(groups)
    splits = 0
    for op in ops:
        pattern = match_attention(op)
        if pattern is None or unqualified(pattern, hw) is not None:
            continue
        where = {m: i for i, g in enumerate(result) for m in g.members}
        s = where.get(pattern.qk)
        c = where.get(pattern.chain[-1]) if pattern.chain else None
        if s is None or c is None or s == c:
            continue
        split = _split(pattern, result[s], result[c])
        if split is None:
            continue
        result[s], result[c] = split
        splits += 1
    return result, splits
