"""The elementwise ops before a reduction in its kernel: the *prologue*.

``fuse-ops`` groups a reduce op with the elementwise ops that make its input and those
that use its result (``pow -> reduce_sum``, ``mul -> reduce_sum -> div``): GE runs such a
group as one vector kernel, TBE's reduce schedule computing the elementwise ops in the same
UB tile before the reduce and on the reduced tile after it. Here the group is the
reduction's kernel (:mod:`.reduction`) with

* the ops before the reduce as an elementwise :class:`~.elementwise.Chain` over the reduce
  input's tile space: each tile (each chunk, in the chunked form of
  :mod:`.reduction_chunks`) loads the chain's GM inputs at its offsets (broadcast along
  their size-1 dims; an input the same for every tile is loaded once) and computes the
  reduce's input in UB, where the ``vreduce`` reads it;
* the ops after it as the reduction's elementwise tail (:mod:`.norm_tail`) on the reduced
  tile.

A chunked prologue's chunks divide the reduced chunk axis: lanes past the tensor in a
ragged chunk would run the prologue on the loads' zero fill (``exp(0) = 1`` to a sum),
where a lone reduce fills them with the combine's identity; when no such length is at
least half the longest that fits, the group is refused.

Ops after the reduce that write a value of its input's shape (``e / sum(e)``) are a
:class:`BroadcastTail`: they run on the input's tile, the reduced tile broadcast back,
while the tile holds the reduced axes whole.

What is refused, with its reason (the group is then split): a prologue that changes the
layout (a TransData, whose tiles are 5HD while the reduced axes are the storage's), a
value of the prologue read after the reduction other than by a broadcast tail, or written
by the kernel; a broadcast tail whose reduced axes need chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.graph.reduction import ReduceOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.lowering.analysis.operand_views import ViewChain
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.elementwise import Chain, TilePlan
from tilegraph.lowering.conversion.tiling.elementwise_views import input_views
from tilegraph.lowering.conversion.tiling.matmul_views import view_of
from tilegraph.lowering.conversion.tiling.reduction_chunks import ChunkPlan
from tilegraph.lowering.conversion.tiling.vector_ops import vector_lowering


@dataclass(frozen=True)
class Parts:
    """A reduction kernel's body: the ops that compute (the reduction at ``at``, a
    prologue before it, a tail after it) and the input views the others are."""

    ops: list[Operation]
    at: int
    views: list[tuple[SSAValue, ViewChain]]
    """Operands read through a chain of reshapes / transposes / slices of a kernel input
    (:func:`~.elementwise_views.input_views`): no ops of the kernel, GM views."""

    @property
    def reduction(self) -> Operation:
        return self.ops[self.at]

    def sources(self, b: KernelBuilder, body: KernelBody) -> dict[SSAValue, SSAValue]:
        """Each viewed operand -> the GM view of the kernel argument it is read from."""
        found = {}
        for v, chain in self.views:
            arg = body.source(chain.base)
            assert arg is not None
            found[v] = view_of(b, arg, chain.view)
        return found


def reduction_parts(body: KernelBody, heads: tuple[type, ...]) -> Parts | None:
    """The parts of a reduction kernel: its first computing op one of ``heads`` (a
    reduction, maybe with a tail), or its one reduce op after a prologue, every other op
    with a vector program (or a TransData, which :class:`Prologue` judges). None for any
    other body."""
    views = list(input_views(body, body.ops))
    on_views = {op for _, chain in views for op in chain.ops}
    ops = [op for op in body.ops if op not in on_views]
    if not ops:
        return None
    if isinstance(ops[0], heads):
        return Parts(ops, 0, views)
    at = [i for i, op in enumerate(ops) if isinstance(op, ReduceOp)]
    if len(at) != 1:
        return None
    for op in ops:
        if isinstance(op, ReduceOp | TransDataOp):
            continue
        if not isinstance(op, GraphOp) or vector_lowering(op) is None:
            return None
    return Parts(ops, at[0], views)


class Prologue:
    """The ops before the reduction, computing its input ``x`` in UB per tile."""

    def __init__(
        self,
        body: KernelBody,
        ops: Sequence[Operation],
        x: SSAValue,
        shape: Sequence[int],
        sources: dict[SSAValue, SSAValue],
    ):
        """``ops``: the body's ops before the reduction; ``shape``: ``x``'s storage shape;
        ``sources``: the inputs read through GM views (:meth:`Parts.sources`)."""
        self.body, self.ops, self.x = body, list(ops), x
        self.chain = Chain(body, self.ops, shape, sources=sources)
        self.invariant: list[SSAValue] = []

    def unsupported(self, reduction: Operation, after: Sequence[Operation] = ()) -> str | None:
        """Why the prologue cannot run before ``reduction`` in its tiles (None: it can);
        ``after``: the ops after it that may read the prologue's tiles (a
        :class:`BroadcastTail`)."""
        if any(isinstance(op, TransDataOp) for op in self.ops) or self.chain.space != "storage":
            return "a layout change before the reduction"
        reason = self.chain.unsupported()
        if reason is not None:
            return reason
        if self.x.owner not in self.ops:
            return "a reduction of an input beside ops before it"
        written = {v for v, _ in self.body.writes}
        members = {*self.ops, reduction, *after}
        for op in self.ops:
            for r in op.results:
                if r in written:
                    return "the kernel writes a value computed before the reduction"
                if any(u.operation not in members for u in r.uses):
                    return "a value computed before the reduction is read after it"
        return None

    def ub_bytes(self, b: KernelBuilder, tile: Sequence[int]) -> int:
        """UB bytes of the prologue's tiles (its inputs and results, ``x``'s included)."""
        return self.chain.ub_bytes(b.hw, tile)

    def allocate(self, b: KernelBuilder, tile: Sequence[int]) -> SSAValue:
        """The prologue's UB tiles for input tiles of ``tile``; returns ``x``'s tile."""
        self.chain.allocate(b, tile)
        owner = self.x.owner
        assert isinstance(owner, Operation)
        return self.chain.op_tiles[owner][0]

    def load_invariant(self, b: KernelBuilder, plan: TilePlan) -> None:
        """Load once, before the tile loops, the inputs whose tile is the same for every
        tile of ``plan`` (after :meth:`allocate`)."""
        self.invariant = self.chain.invariant_inputs(plan)
        zeros = [b.index(0)] * len(self.chain.out_shape)
        for v in self.invariant:
            self.chain.load(b, v, zeros)

    def tiles(self) -> dict[SSAValue, SSAValue]:
        """Each value of the prologue -> its UB tile (after :meth:`allocate`)."""
        return {op.results[0]: t[0] for op, t in self.chain.op_tiles.items()}

    def emit(self, b: KernelBuilder, offsets: Sequence[SSAValue]) -> None:
        """Compute ``x``'s tile at ``offsets`` (its inputs' other tiles loaded there)."""
        for v in self.chain.input_tiles:
            if v not in self.invariant:
                self.chain.load(b, v, offsets)
        self.chain.compute(b, {}, dict(self.chain.input_tiles))


def even_chunks(plan: ChunkPlan) -> ChunkPlan | None:
    """``plan`` with its chunk length cut to the largest that divides a reduced chunk
    axis (no ragged chunk: see the module docstring); a kept chunk axis is unchanged (its
    lanes past the tensor are cut by the store). None when no divisor is at least half
    the longest chunk that fits (a prime extent would take chunks of one row: the split
    kernels are faster)."""
    if plan.axis not in plan.axes:
        return plan
    extent = plan.shape[plan.axis]
    size = next(c for c in range(plan.size, 0, -1) if extent % c == 0)
    if 2 * size < plan.size:
        return None
    return ChunkPlan(plan.shape, plan.axes, plan.axis, size)


class BroadcastTail:
    """The ops after a reduce op (its reduced dims kept) that read its result beside
    values of the input's shape, and write a value of that shape: ``x / sum(x)``,
    ``x - max(x)``. They run on the input's tile after the ``vreduce``, the reduced tile
    broadcast along the reduced axes, the input's and the prologue's tiles still in UB:
    only while a tile holds the reduced axes whole (the chunked form would need them
    again after the last chunk)."""

    def __init__(self, chain: Chain, given: list[SSAValue], written: SSAValue):
        self.chain, self.given, self.written = chain, given, written

    def ub_bytes(self, b: KernelBuilder, tile: Sequence[int]) -> int:
        return self.chain.ub_bytes(b.hw, tile, self.given)

    def allocate(self, b: KernelBuilder, tile: Sequence[int]) -> None:
        self.chain.allocate(b, tile, self.given)

    def emit(
        self,
        b: KernelBuilder,
        given: dict[SSAValue, SSAValue],
        offsets: Sequence[SSAValue],
        out_arg: SSAValue,
    ) -> None:
        """Load the tail's GM inputs at the input tile's ``offsets``, compute it from the
        ``given`` tiles (the reduced one, the input's, the prologue's) and store it."""
        self.chain.epilogue(b, given, offsets, out_arg, self.written)


def broadcast_tail(
    body: KernelBody, parts: Parts, sources: dict[SSAValue, SSAValue]
) -> BroadcastTail | str | None:
    """The ops after ``parts``' reduce op as a :class:`BroadcastTail` when they write a
    value of the reduce input's shape (None when they do not: an ordinary tail, or none),
    or why they cannot be one."""
    op, rest = parts.reduction, parts.ops[parts.at + 1 :]
    if not rest or len(body.writes) != 1 or not isinstance(op, ReduceOp):
        return None
    written, x = body.writes[0][0], op.operands[0]
    if written is not rest[-1].results[0]:
        return None
    shape = tensor_of(x).storage_shape
    if tensor_of(written).storage_shape != shape:
        return None
    if not op.attr("keepdims"):
        return "the ops after the reduction broadcast a result without its reduced dims"
    chain = Chain(body, rest, [int(d) for d in shape], sources=sources)
    computed = {op.results[0], x} | {r for p in parts.ops[: parts.at] for r in p.results}
    given = [v for v in chain.inputs if v in computed]
    reason = chain.unsupported(given=given)
    if reason is not None:
        return reason
    return BroadcastTail(chain, given, written)
