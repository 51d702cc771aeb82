"""How ``fuse-ops`` (:mod:`tilegraph.passes.fuse_ops`) grows its groups in a block: the
pass's **Choice**.

:class:`Fuser` grows a group from each op not yet grouped, from the consumer end; among the
producers that may join (:func:`~tilegraph.passes.fuse_legality.can_join`, or as a
matmul's operand or result view, :mod:`tilegraph.passes.fuse_views`) the one whose result
is largest joins first, while the group's UB working set (:meth:`Fuser.working_set`) fits
the budget and the group stays within ``max-ops``. It only decides membership; the pass
turns each group into a ``graph.fused`` op (:mod:`tilegraph.passes.fuse_materialize`).
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field

from xdsl.ir import Block, Operation, SSAValue

from tilegraph.dialects.graph import FusionKind
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.operand_views import ViewChain
from tilegraph.lowering.analysis.shared_views import rows_epilogue_fits, rows_result
from tilegraph.lowering.conversion.tiling.movement_maps import is_chain_op
from tilegraph.passes.fuse_legality import (
    ANCHOR_KINDS,
    EPILOGUE_KINDS,
    Group,
    can_join,
    epilogue_capable,
    flows_into,
    fusion_kind,
    joins_as_input_view,
    joins_with_output_view,
    leaving_values,
)
from tilegraph.passes.fuse_prepare import runs_on_cube, users_of
from tilegraph.passes.fuse_scalars import is_scalar_program
from tilegraph.passes.fuse_views import view_claims
from tilegraph.passes.statistics import PassStatistics


def _loads_cube_operand(op: Operation, members: set[Operation]) -> bool:
    """A conversion whose users are all cube members: it happens in the DMA that loads the
    cube's operand (``nd2nz``), not on UB."""
    users = users_of(op)
    return (
        isinstance(op, TransDataOp)
        and bool(users)
        and all(u in members and runs_on_cube(u) for u in users)
    )


def vector_tile_bytes(hw: HardwareModel) -> int:
    """The tile a fused vector kernel streams: large enough that an instruction's start-up
    is at most a tenth of its time (10 × start-up cycles × bytes per cycle), and at most an
    eighth of UB so that a few tensors fit at once."""
    return min(hw.vector_bytes_per_cycle * 10 * hw.vector_startup_cycles, hw.ub_bytes // 8)


def tensor_bytes(value: SSAValue) -> int | None:
    """Storage bytes of a tensor value; None for anything else."""
    t = value.type
    return t.storage_bytes() if isinstance(t, TensorType) else None


@dataclass
class Fuser:
    """The groups of one pass run: :meth:`fuse_block` grows a block's groups (its ops'
    positions, view claims and row chains are kept for the pass's later steps)."""

    hw: HardwareModel
    max_ops: int
    stats: PassStatistics
    ub_budget: int
    """Bytes a group's working set may take (the preset's UB unless told less)."""
    position: dict[Operation, int] = field(default_factory=dict)

    sizes: dict[SSAValue, int | None] = field(default_factory=dict)
    views: dict[Operation, tuple[Operation, str]] = field(default_factory=dict)
    """View op (or the conversion before a result's view chain) -> (the matmul it is a
    view for, "prologue" or "epilogue"): see :func:`view_claims`."""
    rows: dict[Operation, ViewChain] = field(default_factory=dict)
    """Matmul -> its result's leading-axes reshape chain (elementwise ops after it may
    join its epilogue: :func:`~tilegraph.lowering.analysis.shared_views.rows_result`)."""

    def size(self, value: SSAValue) -> int | None:
        """Storage bytes of ``value`` (memoised: types are immutable during the pass)."""
        if value not in self.sizes:
            self.sizes[value] = tensor_bytes(value)
        return self.sizes[value]

    def buffer(self, value: SSAValue, tile: int) -> int:
        size = self.size(value)
        return tile if size is None else min(size, tile)

    def working_set(
        self,
        members: set[Operation],
        root: Operation,
        views: Set[Operation] = frozenset(),
    ) -> int:
        """UB bytes the group's vector part needs (:mod:`tilegraph.passes.fuse_ops`);
        ``views`` are addresses (input views' results are read from GM like inputs,
        output views' operands written to GM like outputs)."""
        tile = vector_tile_bytes(self.hw)
        vector = sorted(
            (
                m
                for m in members
                if not runs_on_cube(m)
                and not _loads_cube_operand(m, members)
                and not self.is_view_member(m, members)
                and m not in views
            ),
            key=lambda m: self.position[m],
        )
        if len(vector) > 1 and all(is_chain_op(m) for m in vector):
            # a movement chain streams each output box through UB as a loaded window and
            # its picked tile, double-buffered: no intermediate is held (movement_maps)
            return 2 * 2 * tile
        defined = {r for m in vector for r in m.results}
        outputs = set(leaving_values(root, list(members)))
        inputs = {v for m in vector for v in m.operands if v not in defined}
        total = sum(2 * self.buffer(v, tile) for v in (*inputs, *outputs))
        last_use: dict[SSAValue, Operation] = {}
        for m in vector:
            for v in m.operands:
                last_use[v] = m
        live: dict[SSAValue, int] = {}
        current = peak = 0
        for m in vector:
            for r in m.results:
                if r not in outputs:
                    live[r] = self.buffer(r, tile)
                    current += live[r]
            peak = max(peak, current)
            for v in m.operands:
                if last_use.get(v) is m and v in live:
                    current -= live.pop(v)
        return total + peak

    def grow(self, root: Operation, block: Block) -> Group:
        group = Group(root)
        if fusion_kind(root) == FusionKind.OPAQUE:
            return group
        frontier: set[Operation] = set()

        def extend(member: Operation) -> None:
            for v in member.operands:
                owner = v.owner
                if isinstance(owner, Operation) and owner.parent_block() is block:
                    frontier.add(owner)
            frontier.difference_update(group.members)

        extend(root)
        while frontier and len(group.members) < self.max_ops:
            legal = [p for p in frontier if self.may_join(p, group)]
            if not legal:
                break
            best = max(legal, key=lambda p: (self.saving(p), self.position[p]))
            frontier.discard(best)
            views = group.input_views | group.output_views
            if self.input_view(best, group):
                views = views | {best}
            elif joins_with_output_view(best, group):
                views = views | group.members
            if self.working_set(group.members | {best}, root, views) > self.ub_budget:
                self.stats.add("rejected-working-set")
                continue
            self.join(best, group)
            extend(best)
        return group

    def member_order(self, group: Group) -> list[Operation]:
        """The group's members in program order, except that in an anchored group a scalar
        program defined before the anchor goes right before the member that reads it (its
        epilogue computes it there; before the anchor it would read as a prologue). Such a
        program is not the root: all its readers are members."""
        key = {m: (self.position[m], 0, 0) for m in group.members}
        anchor = group.anchor
        if anchor is not None:
            programs = [
                m
                for m in group.members
                if m is not group.root
                and self.position[m] < self.position[anchor]
                and is_scalar_program(m)
            ]
            for m in sorted(programs, key=lambda p: self.position[p], reverse=True):
                first = min(key[u][0] for u in users_of(m))
                key[m] = (first, -1, self.position[m])
        return sorted(group.members, key=lambda m: key[m])

    def is_view_member(self, op: Operation, members: set[Operation]) -> bool:
        """A view op whose matmul is in ``members`` (or a result's view, which groups only
        with its matmul): DMA addressing, not vector work."""
        claim = self.views.get(op)
        return claim is not None and (claim[0] in members or claim[1] == "epilogue")

    def may_join(self, producer: Operation, group: Group) -> bool:
        """:func:`can_join`, or as a view; an op claimed as a matmul's view joins that
        matmul's group only (not, say, the split its result feeds). A group holding a
        matmul's result view ops but not yet the matmul takes only the rest of its chain
        and the matmul (anything else could keep the matmul out and strand the views)."""
        waiting = self.waiting_anchor(group)
        if waiting is not None and producer is not waiting:
            return self.views.get(producer) == (waiting, "epilogue") and self.joins_as_view(
                producer, group
            )
        if producer in self.views:
            return self.joins_as_view(producer, group)
        return can_join(producer, group) or self.joins_as_view(producer, group)

    def joins_as_view(self, producer: Operation, group: Group) -> bool:
        """Whether ``producer`` joins ``group`` as part of a matmul's operand or result
        view (:mod:`tilegraph.passes.fuse_ops`): an operand's chain joins the group of its
        matmul; a result's chain (and its conversion) starts an anchor-less group of its own
        views only, which the matmul then joins as the anchor."""
        users = users_of(producer)
        if not users or any(u not in group.members for u in users):
            return False
        claim = self.views.get(producer)
        if claim is not None:
            anchor, side = claim
            if group.anchor is not None:
                return group.anchor is anchor and side == "prologue"
            return side == "epilogue" and self.follows(anchor, producer, group)
        return (
            fusion_kind(producer) in ANCHOR_KINDS
            and group.anchor is None
            and self.follows(producer, producer, group)
        )

    def follows(self, anchor: Operation, producer: Operation, group: Group) -> bool:
        """Whether every member of the anchor-less ``group`` may follow ``anchor``'s result
        once ``producer`` (the anchor, or one of its result view ops) joins: the result's
        view ops, and — when they only merge / split leading axes (``self.rows``) —
        elementwise ops computed from them whose other operands re-index to the rows."""
        others = [m for m in group.members if self.views.get(m) != (anchor, "epilogue")]
        if not others:
            return True
        chain = self.rows.get(anchor)
        return (
            chain is not None
            and all(
                fusion_kind(m) in EPILOGUE_KINDS and flows_into(m, producer, group.members)
                for m in others
            )
            and rows_epilogue_fits(chain, others)
        )

    def waiting_anchor(self, group: Group) -> Operation | None:
        """The matmul whose result view ops an anchor-less group holds without it."""
        if group.anchor is not None:
            return None
        for m in group.members:
            claim = self.views.get(m)
            if claim is not None and claim[1] == "epilogue" and claim[0] not in group.members:
                return claim[0]
        return None

    def input_view(self, producer: Operation, group: Group) -> bool:
        """Whether ``producer`` joins ``group`` as an elementwise operand's view
        (:func:`joins_as_input_view`), not as a matmul's (those are claimed first)."""
        return producer not in self.views and joins_as_input_view(producer, group)

    def join(self, producer: Operation, group: Group) -> None:
        users = users_of(producer)
        if self.input_view(producer, group):
            group.input_views.add(producer)
        elif joins_with_output_view(producer, group):
            group.output_views = set(group.members)
            group.has_shape_op = False
        if fusion_kind(producer) in ANCHOR_KINDS:
            group.anchor = producer
        elif group.anchor is not None and any(
            u is group.anchor or u in group.prologue for u in users
        ):
            group.prologue.add(producer)
        group.members.add(producer)
        group.note(producer)
        group.epilogue_only = group.epilogue_only and epilogue_capable(producer)

    def saving(self, producer: Operation) -> int:
        return sum(2 * (self.size(r) or 0) for r in producer.results)

    def fuse_block(self, block: Block) -> list[Group]:
        """The groups of more than one op grown in ``block``, in program order of roots."""
        ops = list(block.ops)
        self.position = {op: i for i, op in enumerate(ops)}
        self.views = view_claims(ops)
        self.rows = {}
        for op in ops:
            chain = rows_result(op)
            if chain is not None and all(self.views.get(v) == (op, "epilogue") for v in chain.ops):
                self.rows[op] = chain
        assigned: set[Operation] = set()
        groups: list[Group] = []
        for op in reversed(ops):
            if op in assigned or fusion_kind(op) is None:
                continue
            group = self.grow(op, block)
            assigned |= group.members
            if len(group.members) > 1:
                groups.append(group)
        groups.reverse()
        return groups
