"""``fuse-ops{platform=... max-ops=64 ub-percent=100}``: group ops into fused kernels.

Each group becomes one ``graph.fused`` op (:mod:`tilegraph.dialects.graph.fused`) whose body
holds the grouped ops; a lone op stays as it is (it is its own kernel).

**Legality** follows TVM's pattern-kind lattice (``FusionKind`` in each op's facts):

* an *anchor* — OUT_ELEMWISE_FUSABLE (conv, matmul, gemm, pooling) or COMM_REDUCE — takes
  at most one per group; what follows it in the group (its *epilogue*) is ELEMWISE or
  BROADCAST ops and ``layout.trans_data`` on the anchor's result: each epilogue op is fed
  by the anchor through the group (its other operands come from outside the group, read
  tile by tile from global memory; a side branch computed in the kernel has no pipe to run
  on between the cube's tiles);
* what feeds an OUT_ELEMWISE_FUSABLE anchor inside the group (its *prologue*) is only
  ``layout.trans_data`` (the conversion happens in the DMA on the way in); a COMM_REDUCE
  anchor also takes ELEMWISE / BROADCAST / INJECTIVE prologues;
* without an anchor, ELEMWISE, BROADCAST and INJECTIVE ops chain, except that a *shape
  op* (an INJECTIVE op other than ``layout.trans_data``: reshape, transpose, slice, ...) and
  an ELEMWISE / BROADCAST op never share an anchor-less group: no strategy runs such a mix
  as one kernel (a vector chain computes elementwise tiles, a reshape or transpose kernel
  moves bytes), so the group would be split into a kernel per op, and the elementwise ops
  would be lost to the epilogue of the matmul that feeds them (BERT's bias add between the
  Q projection and its head split);
* likewise a conversion and a shape op share an anchor-less group only as the reshape
  kernel runs them (NC1HWC0 -> NCHW, then reshapes): a matmul's FRACTAL_NZ -> ND result
  conversion belongs to the matmul (fixpipe converts on the way out), an ND -> FRACTAL_NZ
  one to the matmul it feeds (``nd2nz`` on the way in);
* a cube anchor joins no group holding a conversion *into* FRACTAL_NZ: the matmul's
  epilogue converts its result out of NZ once (fixpipe), never back (that conversion is
  the next matmul's prologue);
* a reshape / transpose chain that only re-indexes a matmul operand or result (attention's
  head split and merge, :mod:`tilegraph.lowering.analysis.operand_views`) joins that
  matmul's group: as the operand's prologue, or as the tail of the result's epilogue
  (with the FRACTAL_NZ -> ND conversion before it); the matmul's DMAs address the tensor
  through a strided view instead of a kernel moving its bytes (``views-absorbed``). A
  chain between two matmuls (the merge feeding the output projection) goes with the
  matmul that writes it;
* when that result chain only merges / splits leading axes of the row-major result
  (GPT-2's addmm ``[B·S, N] -> [B, S, N]``), the elementwise ops computed from it (the
  residual add, the GELU chain) join the matmul's epilogue across it: the matmul's 2-D
  output tile is a tile of the reshaped tensor, and their other operands are read
  re-indexed to its rows (:mod:`tilegraph.lowering.analysis.shared_views`);
* a conversion between NCDHW and NDC1HWC0 (around a 3-D convolution) stays alone: no
  strategy converts those on the way in or out of another op's tiles (a 3-D convolution
  reads and writes NDC1HWC0 planes, its ReLU still joins it), so it runs as a kernel of its
  own;
* OPAQUE ops stay alone;
* an op whose result an elementwise user broadcasts to a larger shape does not join that
  user's group (the group's tiles are its elementwise results'; a broadcast operand is read
  whole from global memory) — unless it is an elementwise op on one-element tensors only
  (a *scalar program*, :mod:`tilegraph.passes.fuse_scalars`: a dynamically quantised
  convolution's zero point cast to int32, its scale product) joining a group without an
  anchor, or an anchored group's epilogue (placed right before the member that reads it):
  the vector code computes it as cheaply as it would read it. A scalar program read by
  several elementwise ops is first copied once per user (``scalar-programs-cloned``).

Before the groups grow, a block is prepared (:mod:`tilegraph.passes.fuse_prepare`). First,
the elementwise ops the format engine left in FRACTAL_NZ on a matmul's result (a pre-norm
layer's residual adds, LLaMA's gate product, T5's position-bias add) move to ND, so that
they run in the matmul's epilogue (``epilogues-to-nd``,
:mod:`tilegraph.passes.fuse_epilogue_formats`).

A conversion whose every user is a cube op (the ND -> FRACTAL_NZ of a LayerNorm's output
that feeds BERT's Q, K and V projections) is first cloned once per user, so that each
matmul takes its own copy as prologue (``nd2nz`` on the way in, as GE's matmuls read ND)
instead of the conversion running as a kernel of its own (``conversions-cloned``).

A static split whose every output is a view operand of a matmul (GPT-2's Q, K, V cut out of
c_attn's ``[B, S, 3N]`` result) is likewise cloned once per matmul reading it: each output
is an offset view of the split's input, so each matmul takes its copy as part of its
operands' view chains and the split runs no kernel (``splits-cloned``,
:mod:`tilegraph.lowering.analysis.shared_views`).

A producer joins a group only when every user of its results is in the group: no work is
duplicated, each group has one root whose results leave it, and no cycle can form (any path
leaving the group would have to return into an ancestor of the root). ``layout.trans_data``
counts as INJECTIVE: absorbed into a group it moves no bytes of its own
(``transdata-absorbed``).

**Choice** by cost: groups grow from the consumer end (reverse dataflow order); among the
producers that may join, the one whose result is largest joins first — it saves writing
and re-reading that tensor in global memory (XLA priority fusion, Inductor's score). A
producer joins only if the group's UB working set still fits the preset's UB. The working
set models the vector part of the kernel streaming tiles through UB: every tensor it reads
from or writes to global memory holds two tile buffers (ping-pong), and the intermediates
hold one each while live; a tile is the tensor itself when smaller than
:func:`vector_tile_bytes`. A cube anchor (conv, matmul) runs on L0/L1, and so do the
conversions that load its operands; its result tile is an input of the vector part.
``max-ops`` bounds a group's size; ``ub-percent`` lowers the UB budget of the working set
(a graph-level choice ``tilegraph-tune`` searches).

Statistics: ``groups``, ``fused-ops``, ``largest-group``, ``transdata-absorbed``,
``bytes-saved`` (global-memory traffic removed), ``rejected-working-set``,
``epilogues-to-nd``, ``conversions-cloned``, ``splits-cloned``,
``scalar-programs-cloned``, ``views-absorbed``, and the attention and rotary claims' (below).

**Attention** (decoupled presets): Q·Kᵀ's group, the softmax and ·V's group are claimed as
one group when the flash kernel takes them (:mod:`tilegraph.passes.fuse_attention`:
``attention-claimed``, else ``attention-kept.<reason>``).

**Rotary embeddings**: a ``graph.apply_rotary`` grows no group, but the head split that makes
its x (a reshape / transpose chain that is a view of a tensor) joins its kernel as a view
(:mod:`tilegraph.passes.fuse_rotary_views`: ``rotary-views-claimed``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.graph import ConstantOp, FusedOp, FusionKind, GraphOp, YieldOp
from tilegraph.dialects.graph.fused import new_body
from tilegraph.dialects.graph.provenance import locate, location_of
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.hardware import HardwareModel, hardware_preset
from tilegraph.lowering.analysis.operand_views import ViewChain
from tilegraph.lowering.analysis.shared_views import rows_epilogue_fits, rows_result
from tilegraph.passes.fuse_attention import attention_claims
from tilegraph.passes.fuse_prepare import PREPARATIONS, runs_on_cube, users_of
from tilegraph.passes.fuse_rotary_views import rotary_claims
from tilegraph.passes.fuse_scalars import is_scalar_program
from tilegraph.passes.fuse_views import view_claims
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import PassStatistics, start_pass
from tilegraph.target import pin_target

ANCHOR_KINDS = frozenset({FusionKind.OUT_ELEMWISE_FUSABLE, FusionKind.COMM_REDUCE})
EPILOGUE_KINDS = frozenset({FusionKind.ELEMWISE, FusionKind.BROADCAST})


def fusion_kind(op: Operation) -> FusionKind | None:
    """The op's pattern kind; None for what never fuses (constants, terminators, groups)."""
    if isinstance(op, TransDataOp):
        return FusionKind.INJECTIVE
    if isinstance(op, GraphOp) and not isinstance(op, ConstantOp):
        return op.FACTS.fusion
    return None


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
    t = value.type
    return t.storage_bytes() if isinstance(t, TensorType) else None


@dataclass
class Group:
    """Ops that will run as one kernel; ``root`` is the only op whose results leave it."""

    root: Operation
    members: set[Operation] = field(default_factory=set)
    anchor: Operation | None = None
    prologue: set[Operation] = field(default_factory=set)
    """Members that feed the anchor (its inputs' producers)."""
    epilogue_only: bool = True
    """Every member could follow an anchor (ELEMWISE, BROADCAST or a conversion)."""
    has_elementwise: bool = False
    """A member is ELEMWISE or BROADCAST."""
    has_shape_op: bool = False
    """A member is a shape op (:func:`is_shape_op`)."""

    def __post_init__(self) -> None:
        self.members.add(self.root)
        if fusion_kind(self.root) in ANCHOR_KINDS:
            self.anchor = self.root
        self.epilogue_only = _epilogue_capable(self.root)
        self.note(self.root)

    def note(self, member: Operation) -> None:
        """Record ``member``'s kind in the group's flags."""
        self.has_elementwise = self.has_elementwise or fusion_kind(member) in EPILOGUE_KINDS
        self.has_shape_op = self.has_shape_op or is_shape_op(member)

    def kind(self) -> FusionKind:
        if self.anchor is not None:
            kind = fusion_kind(self.anchor)
            return FusionKind.OPAQUE if kind is None else kind
        kinds = [fusion_kind(m) for m in self.members]
        return max(FusionKind.OPAQUE if k is None else k for k in kinds)


def is_shape_op(op: Operation) -> bool:
    """An INJECTIVE op that moves bytes (reshape, transpose, slice, ...), not a conversion."""
    return fusion_kind(op) == FusionKind.INJECTIVE and not isinstance(op, TransDataOp)


def _mixes_shape_and_elementwise(producer: Operation, group: Group) -> bool:
    """Whether ``producer`` joining anchor-less ``group`` would put a shape op and an
    elementwise op in one group (module docstring), or a cube result's conversion with
    shape ops."""
    if isinstance(producer, TransDataOp):
        return group.has_shape_op and not _feeds_reshape_kernel(producer)
    if fusion_kind(producer) in EPILOGUE_KINDS:
        return group.has_shape_op
    if not is_shape_op(producer):
        return False
    return group.has_elementwise or any(
        isinstance(m, TransDataOp) and not _feeds_reshape_kernel(m) for m in group.members
    )


def _feeds_reshape_kernel(op: TransDataOp) -> bool:
    """A conversion the reshape kernel runs before its reshapes (NC1HWC0 -> NCHW)."""
    t = op.input.type
    return isinstance(t, TensorType) and t.storage_format == Format.NC1HWC0


def _converts_planes(op: Operation) -> bool:
    """A conversion between NCDHW and NDC1HWC0 (module docstring: it stays alone)."""
    if not isinstance(op, TransDataOp):
        return False
    types = (op.input.type, op.results[0].type)
    return any(isinstance(t, TensorType) and t.storage_format == Format.NDC1HWC0 for t in types)


def _converts_into_nz(op: Operation) -> bool:
    t = op.results[0].type if isinstance(op, TransDataOp) else None
    return isinstance(t, TensorType) and t.storage_format == Format.FRACTAL_NZ


def _epilogue_capable(op: Operation) -> bool:
    return fusion_kind(op) in EPILOGUE_KINDS or isinstance(op, TransDataOp)


def _origin_shapes(op: Operation) -> set[tuple[object, ...]]:
    return {tuple(r.type.origin_shape) for r in op.results if isinstance(r.type, TensorType)}


def _broadcast_by(producer: Operation, users: list[Operation]) -> bool:
    """Whether an elementwise user stretches ``producer``'s result to a larger shape.
    Such a producer stays out of its users' group: a fused kernel's tiles are the shape of
    its elementwise ops' results, and a broadcast operand is read whole from global memory
    (SE-ResNet's excitation — a 1 x 1 conv and a sigmoid on the pooled vector, then a
    multiply with the whole feature map — has no tile of the feature map to run in)."""
    produced = _origin_shapes(producer)
    return any(
        fusion_kind(u) in EPILOGUE_KINDS and not _origin_shapes(u) <= produced for u in users
    )


def _scalar_program(producer: Operation, group: Group) -> bool:
    """A scalar program joining a group without an anchor, or feeding only the epilogue of
    an anchored one: the vector code computes it and broadcasts it like an operand read
    from GM, instead of a launch of its own."""
    if not is_scalar_program(producer):
        return False
    if group.anchor is None:
        return True
    users = users_of(producer)
    return all(
        u is not group.anchor
        and u not in group.prologue
        and is_scalar_program(u)
        or _flows_into(u, group.anchor, group.members)
        for u in users
    )


def _flows_into(op: Operation, source: Operation, members: set[Operation]) -> bool:
    """Whether ``source``'s results reach ``op``'s operands through ``members`` only."""
    stack, seen = [op], {op}
    while stack:
        for v in stack.pop().operands:
            owner = v.owner
            if owner is source:
                return True
            if isinstance(owner, Operation) and owner in members and owner not in seen:
                seen.add(owner)
                stack.append(owner)
    return False


def can_join(producer: Operation, group: Group) -> bool:
    """Whether ``producer`` may join ``group`` under the kind lattice (module docstring)."""
    kind = fusion_kind(producer)
    if kind is None or kind == FusionKind.OPAQUE:
        return False
    users = users_of(producer)
    if not users or any(u not in group.members for u in users):
        return False
    is_conversion = isinstance(producer, TransDataOp)
    if _converts_planes(producer) or any(_converts_planes(m) for m in group.members):
        return False
    if _broadcast_by(producer, users) and not _scalar_program(producer, group):
        return False
    if kind in ANCHOR_KINDS:
        return (
            group.anchor is None
            and group.epilogue_only
            and not (runs_on_cube(producer) and any(_converts_into_nz(m) for m in group.members))
            and all(
                _flows_into(m, producer, group.members) or is_scalar_program(m)
                for m in group.members
            )
        )
    if group.anchor is None:
        return not _mixes_shape_and_elementwise(producer, group)
    feeds_anchor = any(u is group.anchor or u in group.prologue for u in users)
    if feeds_anchor:
        if fusion_kind(group.anchor) == FusionKind.COMM_REDUCE:
            return True
        return is_conversion
    epilogue = kind in EPILOGUE_KINDS or is_conversion
    return (epilogue and _flows_into(producer, group.anchor, group.members)) or _scalar_program(
        producer, group
    )


@dataclass
class _Fuser:
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

    def working_set(self, members: set[Operation], root: Operation) -> int:
        """UB bytes the group's vector part needs (module docstring)."""
        tile = vector_tile_bytes(self.hw)
        vector = sorted(
            (
                m
                for m in members
                if not runs_on_cube(m)
                and not _loads_cube_operand(m, members)
                and not self.is_view_member(m, members)
            ),
            key=lambda m: self.position[m],
        )
        defined = {r for m in vector for r in m.results}
        outputs = set(root.results)
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
            if self.working_set(group.members | {best}, root) > self.ub_budget:
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
        view (module docstring): an operand's chain joins the group of its matmul; a
        result's chain (and its conversion) starts an anchor-less group of its own views
        only, which the matmul then joins as the anchor."""
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
                fusion_kind(m) in EPILOGUE_KINDS and _flows_into(m, producer, group.members)
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

    @staticmethod
    def join(producer: Operation, group: Group) -> None:
        users = users_of(producer)
        if fusion_kind(producer) in ANCHOR_KINDS:
            group.anchor = producer
        elif group.anchor is not None and any(
            u is group.anchor or u in group.prologue for u in users
        ):
            group.prologue.add(producer)
        group.members.add(producer)
        group.note(producer)
        group.epilogue_only = group.epilogue_only and _epilogue_capable(producer)

    def saving(self, producer: Operation) -> int:
        return sum(2 * (self.size(r) or 0) for r in producer.results)

    def fuse_block(self, block: Block) -> list[Group]:
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


def kernel_name(members: Sequence[Operation], index: int) -> str:
    """``fused_conv2d_add_relu_3``: the member kinds in order (repeats collapsed, at most
    five), then the group's index in its function."""
    names: list[str] = []
    for op in members:
        short = op.name.split(".", 1)[-1]
        if not names or names[-1] != short:
            names.append(short)
    if len(names) > 5:
        names = [*names[:4], "etc"]
    return "_".join(["fused", *names, str(index)])


def materialize(group: Group, members: Sequence[Operation], index: int) -> FusedOp:
    """Replace the group's ops by one ``graph.fused`` op at the root's place."""
    member_set = set(members)
    inputs: list[SSAValue] = []
    for op in members:
        for v in op.operands:
            if v.owner not in member_set and v not in inputs:
                inputs.append(v)
    body, block = new_body([v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = {}
    for v, arg in zip(inputs, block.args, strict=True):
        arg.name_hint = v.name_hint
        mapping[v] = arg
    for op in members:
        block.add_op(op.clone(value_mapper=mapping))
    root = group.root
    block.add_op(YieldOp(*(mapping[r] for r in root.results)))
    fused = FusedOp(
        kernel_name(members, index), group.kind(), inputs, [r.type for r in root.results], body
    )
    locate([fused], location_of(members))  # the fused op and its yield
    Rewriter.insert_op(fused, InsertPoint.before(root))
    for old, new in zip(root.results, fused.outputs, strict=True):
        new.name_hint = old.name_hint
        old.replace_all_uses_with(new)
    for op in reversed(members):
        Rewriter.erase_op(op)
    return fused


def _claim_attention(
    groups: list[Group], block: Block, hw: HardwareModel, stats: PassStatistics
) -> list[Group]:
    """Merge each claimed attention pattern's two groups and its softmax into one group
    (:mod:`tilegraph.passes.fuse_attention`), in place of the ·V group."""
    claims, kept = attention_claims([g.members for g in groups], list(block.ops), hw)
    for reason in kept:
        stats.add(f"attention-kept.{reason}")
    merged: dict[int, Group] = {}
    dropped: set[int] = set()
    for claim in claims:
        scores, output = groups[claim.scores], groups[claim.output]
        group = Group(output.root, scores.members | output.members | {claim.softmax})
        group.anchor = output.anchor
        merged[claim.output] = group
        dropped.add(claim.scores)
        stats.add("attention-claimed")
    return [merged.get(i, g) for i, g in enumerate(groups) if i not in dropped]


def _claim_rotary_views(
    fuser: _Fuser, groups: list[Group], block: Block, stats: PassStatistics
) -> list[Group]:
    """Give each rotary op whose x is a view of a tensor the view's ops as its group
    (:mod:`tilegraph.passes.fuse_rotary_views`), in place of the group they formed."""
    claims = rotary_claims([g.members for g in groups], list(block.ops))
    found = list(groups)
    for claim in sorted(claims, key=lambda c: c.group is None):  # replace, then insert
        group = Group(claim.rotary, set(claim.chain.ops))
        if claim.group is not None:
            found[claim.group] = group
        else:
            at = fuser.position[claim.rotary]
            later = [i for i, g in enumerate(found) if fuser.position[g.root] > at]
            found.insert(later[0] if later else len(found), group)
        stats.add("rotary-views-claimed")
    return found


def _functions(module: ModuleOp) -> Iterable[func.FuncOp]:
    return (op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks)


@register_pass
@dataclass(frozen=True)
class FuseOpsPass(ModulePass):
    """Group ops into fused kernels (``graph.fused``) by TVM's kinds, bytes saved and UB.

    Only the function's top-level ops are grouped; control-flow bodies are skipped (they
    run as host code, unoptimised).
    """

    name = "fuse-ops"

    platform: str = ""
    """Preset name; empty: the module's target (:mod:`tilegraph.target`)."""
    max_ops: int = 64
    ub_percent: int = 100
    """The UB budget of a group's working set, in percent of the preset's UB."""

    def __post_init__(self) -> None:
        if self.platform:
            hardware_preset(self.platform)
        if self.max_ops < 1:
            raise ValueError(f"fuse-ops: max-ops must be at least 1, got {self.max_ops}")
        if not 1 <= self.ub_percent <= 100:
            raise ValueError(f"fuse-ops: ub-percent must be in 1..100, got {self.ub_percent}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        hw = pin_target(op, f"pass '{self.name}'", self.platform).hw
        fuser = _Fuser(hw, self.max_ops, stats, hw.ub_bytes * self.ub_percent // 100)
        index = 0
        for fn in _functions(op):
            block = fn.body.blocks[0]
            for statistic, prepare in PREPARATIONS:
                changed = prepare(block)
                if changed:
                    stats.add(statistic, changed)
            grown = _claim_attention(fuser.fuse_block(block), block, hw, stats)
            for group in _claim_rotary_views(fuser, grown, block, stats):
                members = fuser.member_order(group)
                root_bytes = {r for r in group.root.results}
                saved = sum(
                    2 * (tensor_bytes(r) or 0)
                    for m in members
                    for r in m.results
                    if r not in root_bytes
                )
                materialize(group, members, index)
                index += 1
                stats.add("groups")
                stats.add("fused-ops", len(members))
                stats.maximum("largest-group", len(members))
                stats.add("transdata-absorbed", sum(isinstance(m, TransDataOp) for m in members))
                views = sum(
                    fuser.is_view_member(m, group.members) and not isinstance(m, TransDataOp)
                    for m in members
                )
                if views:
                    stats.add("views-absorbed", views)
                stats.add("bytes-saved", saved)
