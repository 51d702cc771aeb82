"""The kind lattice of ``fuse-ops`` (:mod:`tilegraph.passes.fuse_ops`): a :class:`Group` of
ops that will run as one kernel, and :func:`can_join`, whether a producer may join one.

The rules are the pass's **Legality** (its module docstring): TVM's pattern kinds
(``FusionKind`` in each op's facts), at most one anchor per group, what may precede or
follow it, the shape-op / elementwise split of anchor-less groups, the conversions that stay
alone, broadcast producers and scalar programs, view chains read in place as an
elementwise operand (:func:`joins_as_input_view`), and the one exception to OPAQUE ops
staying alone: a normalisation taking a short elementwise chain of its result (a
QuantizeLinear, the SDPA NaN guard) as its kernel's tail (:func:`normalisation_tail`).
Nothing here weighs a choice or rewrites IR: the pass's grower
(:mod:`tilegraph.passes.fuse_grow`) asks these predicates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph import ConstantOp, FusionKind, GraphOp
from tilegraph.dialects.graph.data_movement import ConcatOp, SplitOp
from tilegraph.dialects.graph.quantize import QuantizeLinearOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.formats.dims import UNKNOWN
from tilegraph.lowering.analysis.elementwise_views import (
    ELEMENTWISE_VIEW_OPS,
    input_view,
    output_view,
)
from tilegraph.lowering.analysis.shared_views import split_parts
from tilegraph.lowering.conversion.tiling.movement_maps import is_chain_op
from tilegraph.passes.fuse_prepare import runs_on_cube, users_of
from tilegraph.passes.fuse_scalars import is_scalar_program

ANCHOR_KINDS = frozenset({FusionKind.OUT_ELEMWISE_FUSABLE, FusionKind.COMM_REDUCE})
EPILOGUE_KINDS = frozenset({FusionKind.ELEMWISE, FusionKind.BROADCAST})


def fusion_kind(op: Operation) -> FusionKind | None:
    """The op's pattern kind; None for what never fuses (constants, terminators, groups)."""
    if isinstance(op, TransDataOp):
        return FusionKind.INJECTIVE
    if isinstance(op, GraphOp) and not isinstance(op, ConstantOp):
        return op.FACTS.fusion
    return None


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
    """A member is a shape op (:func:`is_shape_op`) that is not one of ``input_views``."""
    input_views: set[Operation] = field(default_factory=set)
    """Members that make an elementwise operand as a view of a GM tensor
    (:func:`joins_as_input_view`): addresses, no work."""
    output_views: set[Operation] = field(default_factory=set)
    """Members that re-index the elementwise result the kernel writes
    (:func:`joins_with_output_view`): addresses, no work."""

    def __post_init__(self) -> None:
        self.members.add(self.root)
        if fusion_kind(self.root) in ANCHOR_KINDS:
            self.anchor = self.root
        self.epilogue_only = epilogue_capable(self.root)
        self.note(self.root)

    def note(self, member: Operation) -> None:
        """Record ``member``'s kind in the group's flags."""
        self.has_elementwise = self.has_elementwise or fusion_kind(member) in EPILOGUE_KINDS
        self.has_shape_op = self.has_shape_op or (
            is_shape_op(member)
            and not is_view_split(member)
            and member not in self.input_views
            and member not in self.output_views
        )

    def kind(self) -> FusionKind:
        if self.anchor is not None:
            kind = fusion_kind(self.anchor)
            return FusionKind.OPAQUE if kind is None else kind
        kinds = [fusion_kind(m) for m in self.members]
        return max(FusionKind.OPAQUE if k is None else k for k in kinds)


def is_shape_op(op: Operation) -> bool:
    """An INJECTIVE op that moves bytes (reshape, transpose, slice, ...), not a conversion."""
    return fusion_kind(op) == FusionKind.INJECTIVE and not isinstance(op, TransDataOp)


def is_view_split(op: Operation) -> bool:
    """A split whose outputs are offset views of its input (static, row-major): an
    elementwise kernel reading them reads its input at their offsets, so it joins such a
    kernel as no work (:func:`~tilegraph.lowering.analysis.shared_views.split_parts`)."""
    return isinstance(op, SplitOp) and split_parts(op) is not None


def _feeds_view_split(producer: Operation, group: Group) -> bool:
    """Whether ``producer``'s result is a view split's or an input view's input in
    anchor-less ``group``: their results are views of a GM tensor, which a value computed
    in the kernel is not (a matmul's prologue has its own rule for what feeds its views)."""
    return group.anchor is None and any(
        (isinstance(m, SplitOp) or m in group.input_views) and m.operands[0].owner is producer
        for m in group.members
    )


def reads_anchor(op: Operation) -> bool:
    """Whether ``op`` reads an anchor's result (or a conversion's, a matmul's fixpipe): its
    group may still take that anchor, whose epilogue reads no views, so no view joins it."""
    return any(
        fusion_kind(v.owner) in ANCHOR_KINDS or isinstance(v.owner, TransDataOp)
        for v in op.operands
        if isinstance(v.owner, Operation)
    )


def _computes_tiles(op: Operation) -> bool:
    """An ELEMWISE / BROADCAST op the elementwise chain computes (a same-rank expand in a
    group of movement ops is the movement-chain kernel's, :func:`movement_chain`)."""
    return fusion_kind(op) in EPILOGUE_KINDS and not is_chain_op(op)


def joins_as_input_view(producer: Operation, group: Group) -> bool:
    """Whether view op ``producer`` (reshape, transpose, static slice, ...:
    :data:`~tilegraph.lowering.analysis.elementwise_views.ELEMENTWISE_VIEW_OPS`) joins
    anchor-less elementwise ``group`` as an input view: every reader of its result is an
    elementwise member or another input view, and each elementwise operand the chain of
    input views then makes is a readable strided view of the tensor it starts from
    (:func:`~tilegraph.lowering.analysis.elementwise_views.input_view`). The kernel reads
    that tensor in place; no member converts layouts (the views are of row-major tensors,
    the tiles of the output's storage layout)."""
    if not (
        isinstance(producer, ELEMENTWISE_VIEW_OPS)
        and group.anchor is None
        and any(_computes_tiles(m) for m in group.members)
        and not any(isinstance(m, TransDataOp) or reads_anchor(m) for m in group.members)
    ):
        return False
    users = users_of(producer)
    if not users or any(
        u not in group.members or (u not in group.input_views and not _computes_tiles(u))
        for u in users
    ):
        return False
    views = group.input_views | {producer}
    return all(
        input_view(v, views) is not None
        for m in group.members
        if m not in views
        for v in m.operands
        if v.owner in views
    )


def joins_with_output_view(producer: Operation, group: Group) -> bool:
    """Whether elementwise ``producer`` joins anchor-less ``group`` made only of the view
    ops that re-index its result (a reshape, squeeze, unsqueeze or transpose chain ending
    at the group's root): the kernel writes its tiles through a strided view of the root's
    result, rows contiguous, no repeats
    (:func:`~tilegraph.lowering.analysis.elementwise_views.output_view`)."""
    if (
        not _computes_tiles(producer)
        or group.anchor is not None
        or len(producer.results) != 1
        or reads_anchor(producer)
    ):
        return False
    chain = output_view(producer.results[0])
    return (
        chain is not None
        and set(chain.ops) == group.members
        and chain.base is group.root.results[0]
    )


def movement_chain(producer: Operation, group: Group) -> bool:
    """Whether ``producer`` and every member of ``group`` are movement-chain ops (slice,
    pad, a same-rank expand, ...: :func:`~.movement_maps.is_chain_op`): one kernel
    composes their maps, so a broadcast-kind expand is no elementwise op there."""
    return is_chain_op(producer) and all(is_chain_op(m) for m in group.members)


def _mixes_shape_and_elementwise(producer: Operation, group: Group) -> bool:
    """Whether ``producer`` joining anchor-less ``group`` would put a shape op and an
    elementwise op in one group (:mod:`tilegraph.passes.fuse_ops`), or a cube result's
    conversion with shape ops."""
    if isinstance(producer, TransDataOp):
        return bool(group.input_views or group.output_views) or (
            group.has_shape_op and not _feeds_reshape_kernel(producer)
        )
    if is_view_split(producer):  # read as views by the elementwise ops, moving nothing
        return group.has_shape_op or not group.has_elementwise
    if fusion_kind(producer) in EPILOGUE_KINDS:
        return group.has_shape_op
    if not is_shape_op(producer):
        return False
    return group.has_elementwise or any(
        isinstance(m, TransDataOp) and not _feeds_reshape_kernel(m) for m in group.members
    )


def _feeds_reshape_kernel(op: TransDataOp) -> bool:
    """A conversion a movement kernel runs on its way in: the reshape kernel's before its
    reshapes (NC1HWC0 -> NCHW), or an NC1HWC0 concat's of an NCHW input (the concat tiles
    each input's region with the elementwise chain, which loads NCHW into 5HD tiles: ASPP's
    resized image-pool branch, YOLOv8's C2f split halves) unless a shape op computing that
    input could follow it into the kernel, whose region chains take no shape op."""
    t = op.input.type
    if isinstance(t, TensorType) and t.storage_format == Format.NC1HWC0:
        return True
    if not _into_5hd_concat(op):
        return False
    owner = op.input.owner
    if not isinstance(owner, Operation) or not is_shape_op(owner):
        return True
    # a shape op all of whose readers are such conversions could join them: keep it out
    return not all(isinstance(u, TransDataOp) and _into_5hd_concat(u) for u in users_of(owner))


def _into_5hd_concat(op: TransDataOp) -> bool:
    """An NCHW -> NC1HWC0 conversion read by concats only."""
    out = op.output.type
    return (
        isinstance(out, TensorType)
        and out.storage_format == Format.NC1HWC0
        and out.origin_format == Format.NCHW
        and all(isinstance(u, ConcatOp) for u in users_of(op))
    )


def _converts_planes(op: Operation) -> bool:
    """A conversion between NCDHW and NDC1HWC0 (:mod:`tilegraph.passes.fuse_ops`: it stays
    alone)."""
    if not isinstance(op, TransDataOp):
        return False
    types = (op.input.type, op.results[0].type)
    return any(isinstance(t, TensorType) and t.storage_format == Format.NDC1HWC0 for t in types)


def _converts_into_nz(op: Operation) -> bool:
    t = op.results[0].type if isinstance(op, TransDataOp) else None
    return isinstance(t, TensorType) and t.storage_format == Format.FRACTAL_NZ


def epilogue_capable(op: Operation) -> bool:
    """Whether ``op`` could follow an anchor in its epilogue (ELEMWISE, BROADCAST or a
    conversion)."""
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
        or flows_into(u, group.anchor, group.members)
        for u in users
    )


def leaving_values(root: Operation, members: list[Operation]) -> list[SSAValue]:
    """What a group's kernel writes, in program order of ``members``: the results an op
    outside the group reads, and the root's results (a group grown from a root has no
    others; one of several outputs, :mod:`tilegraph.passes.fuse_outputs`, has)."""
    inside = set(members)
    found = [
        r
        for m in members
        if m is not root
        for r in m.results
        if any(use.operation not in inside for use in r.uses)
    ]
    return [*found, *root.results]


def flows_into(op: Operation, source: Operation, members: set[Operation]) -> bool:
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


MAX_TAIL = 4
"""The most ops of a normalisation's elementwise tail (the SDPA NaN guard is two)."""


def _one_element_constant(value: SSAValue) -> bool:
    owner = value.owner
    t = value.type
    return isinstance(owner, ConstantOp) and isinstance(t, TensorType) and t.num_elements() == 1


def normalisation_tail(producer: Operation, group: Group) -> bool:
    """Whether ``producer``, an op whose kernel may end with an elementwise tail (OpFacts
    ``elementwise_tail``: LayerNorm, RMS norm, Softmax, LogSoftmax), takes ``group`` as
    that tail: an anchor-less group of at most :data:`MAX_TAIL` ELEMWISE / BROADCAST ops of
    its result's shape that read only its one result, each other and one-element constants
    (a per-tensor QuantizeLinear, ``QuantizeLinearOp.quantizes_as_tail``; torch's SDPA NaN
    guard ``where(isnan(p), 0, p)``), and hold every user of that result. The kernel runs
    the tail on the tile it would store: no kernel of its own reads the result back."""
    if not (
        isinstance(producer, GraphOp)
        and producer.FACTS.elementwise_tail
        and len(producer.results) == 1
        and group.anchor is None
        and len(group.members) <= MAX_TAIL
    ):
        return False
    result = producer.results[0]
    users = users_of(producer)
    if not users or any(u not in group.members for u in users):
        return False
    shape = _origin_shapes(producer)
    for m in group.members:
        if fusion_kind(m) not in EPILOGUE_KINDS or _origin_shapes(m) != shape:
            return False
        if isinstance(m, QuantizeLinearOp) and not m.quantizes_as_tail():
            return False
        for v in m.operands:
            inside = v is result or v.owner in group.members
            if not inside and not _one_element_constant(v):
                return False
    return True


def _same_origin_shape(value: SSAValue, twin: SSAValue, members: set[Operation]) -> bool:
    """Whether ``twin`` has ``value``'s origin shape for certain: it is reached from
    ``value`` through conversions in ``members`` (a conversion keeps the origin shape, even
    one it does not know), or both types name the same dims, none unknown."""
    current = value
    while current is not twin:
        step = [
            u
            for u in (use.operation for use in current.uses)
            if isinstance(u, TransDataOp) and u in members
        ]
        if not step:
            break
        current = step[0].output
    if current is twin:
        return True
    a, b = value.type, twin.type
    return (
        isinstance(a, TensorType)
        and isinstance(b, TensorType)
        and a.origin_shape == b.origin_shape
        and UNKNOWN not in a.origin_shape
    )


def shape_twin(query: Operation, group: Group) -> SSAValue | None:
    """The root's result that a shape query (OpFacts ``shape_only``: Shape, Size) of a
    member's result reads instead once that result is inside the group's kernel: one of
    the same origin shape (:func:`_same_origin_shape`), defined before the query (the
    fused op takes the root's place). None when there is none: the query then counts as
    a reader of the value like any other, keeping its producer out of the group."""
    if not (isinstance(query, GraphOp) and query.FACTS.shape_only):
        return None
    if not group.root.is_before_in_block(query):
        return None
    value = query.operands[0]
    for r in group.root.results:
        if _same_origin_shape(value, r, group.members | {group.root}):
            return r
    return None


def fusion_users(producer: Operation, group: Group) -> list[Operation]:
    """The readers of ``producer``'s results that count for joining ``group``: a shape
    query reads no data, so one that a root's result of the same origin shape answers
    (:func:`shape_twin`) does not keep ``producer`` out (Paddle exports query the shape of
    a convolution's result that a conversion to NCHW also reads)."""
    return [u for u in users_of(producer) if shape_twin(u, group) is None]


def redirect_shape_queries(members: set[Operation], group: Group) -> int:
    """Make each shape query outside the group that reads a member's result other than
    the root's read its :func:`shape_twin` instead (the value will be inside the kernel);
    how many were redirected."""
    moved = 0
    for m in members:
        if m is group.root:
            continue
        for r in m.results:
            for use in list(r.uses):
                query = use.operation
                if query in members:
                    continue
                twin = shape_twin(query, group)
                if twin is not None:
                    query.operands = [twin if v is r else v for v in query.operands]
                    moved += 1
    return moved


def can_join(producer: Operation, group: Group) -> bool:
    """Whether ``producer`` may join ``group`` under the kind lattice
    (:mod:`tilegraph.passes.fuse_ops`)."""
    if normalisation_tail(producer, group):
        return True
    kind = fusion_kind(producer)
    if kind is None or kind == FusionKind.OPAQUE:
        return False
    if group.kind() == FusionKind.OPAQUE:  # a normalisation with its elementwise tail
        return False
    users = fusion_users(producer, group)
    if not users or any(u not in group.members for u in users):
        return False
    if joins_as_input_view(producer, group):  # an address, read in place: no broadcast
        return True
    if joins_with_output_view(producer, group):  # an address the kernel writes through
        return True
    if (group.input_views or group.output_views) and _computes_tiles(producer):
        if reads_anchor(producer):  # it stays where the anchor may take it as its epilogue
            return False
    if _feeds_view_split(producer, group):
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
                flows_into(m, producer, group.members) or is_scalar_program(m)
                for m in group.members
            )
        )
    if group.anchor is None:
        return movement_chain(producer, group) or not _mixes_shape_and_elementwise(producer, group)
    feeds_anchor = any(u is group.anchor or u in group.prologue for u in users)
    if feeds_anchor:
        if fusion_kind(group.anchor) == FusionKind.COMM_REDUCE:
            return True
        return is_conversion
    epilogue = kind in EPILOGUE_KINDS or is_conversion
    return (epilogue and flows_into(producer, group.anchor, group.members)) or _scalar_program(
        producer, group
    )
