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

The bias's kernel (that group, or a lone elementwise op the chain reads) then takes as its
head a GatherElements that only it reads (DeBERTa-v2's c2p term) when the gather's kernel
can run the bias ops as its elementwise tail
(:mod:`tilegraph.lowering.conversion.tiling.elements_tail`): one kernel less, the gathered
rows never written to GM (``bias-gathers-joined``).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation

from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.graph.indexing import GatherElementsOp
from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.attention_pattern import AttentionPattern, match_attention
from tilegraph.lowering.conversion.tiling.elements_tail import tail_fits
from tilegraph.lowering.conversion.tiling.vector_ops import vector_lowering
from tilegraph.passes.fuse_attention import claim_refused
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


def _gather_joins(bias: Group, groups: list[Group]) -> GatherElementsOp | None:
    """A GatherElements in no group that ``bias`` may take as its kernel's head
    (:func:`~tilegraph.lowering.conversion.tiling.elements_tail.tail_fits`: the bias ops
    its elementwise tail, every reader of the gather among them), or None."""
    grouped = {m for g in groups for m in g.members}
    tail = sorted(bias.members, key=_position)
    for member in tail:
        for v in member.operands:
            gather = v.owner
            if not isinstance(gather, GatherElementsOp) or gather in grouped:
                continue
            if not _read_outside(gather, bias.members) and tail_fits(gather, tail):
                return gather
    return None


def _position(op: Operation) -> int:
    block = op.parent_block()
    assert block is not None
    return block.get_operation_index(op)


def _bias_groups(pattern: AttentionPattern, groups: list[Group]) -> list[int | Operation]:
    """What computes the operands the score chain reads from outside (a bias, a mask): the
    index of the group holding the producer, or the producer itself when it is in none."""
    chain = set(pattern.chain)
    where = {m: i for i, g in enumerate(groups) for m in g.members}
    found: list[int | Operation] = []
    for op in pattern.chain:
        for v in op.operands:
            producer = v.owner
            if not isinstance(producer, Operation) or producer in chain:
                continue
            if producer in (pattern.scores_to_nd, pattern.qk):
                continue
            index = where.get(producer)
            found.append(producer if index is None else index)
    return found


def _with_gather(bias: Group, groups: list[Group]) -> Group | None:
    """``bias`` headed by a gather it reads (:func:`_gather_joins`), or None."""
    gather = _gather_joins(bias, groups)
    if gather is None:
        return None
    joined = Group(bias.root, {gather, *bias.members})
    for member in joined.members:
        joined.note(member)
    return joined


def split_scores_bias(
    groups: Sequence[Group], ops: Sequence[Operation], hw: HardwareModel, coupled: str = "ge"
) -> tuple[list[Group], int, int]:
    """``groups`` with each qualifying attention's score chain moved from the group that
    also computes its bias into the Q·Kᵀ group, and the bias's kernel headed by one of
    the gathers it reads when that kernel can run it (module docstring); the number of
    splits and of gathers so joined."""
    result = list(groups)
    splits = joins = 0
    for op in ops:
        pattern = match_attention(op)
        if pattern is None or claim_refused(pattern, hw, coupled) is not None:
            continue
        where = {m: i for i, g in enumerate(result) for m in g.members}
        s = where.get(pattern.qk)
        c = where.get(pattern.chain[-1]) if pattern.chain else None
        if s is not None and c is not None and s != c:
            split = _split(pattern, result[s], result[c])
            if split is not None:
                result[s], result[c] = split
                splits += 1
        for found in _bias_groups(pattern, result):
            lone = isinstance(found, Operation)
            if lone and not (isinstance(found, GraphOp) and vector_lowering(found) is not None):
                continue
            bias = Group(found, {found}) if lone else result[found]
            joined = _with_gather(bias, result)
            if joined is None:
                continue
            if lone:
                result.append(joined)
            else:
                result[found] = joined
            joins += 1
    return result, splits, joins
