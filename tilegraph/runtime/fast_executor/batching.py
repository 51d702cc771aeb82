"""Running the iterations of loops together (the fast executor's batching).

A loop marked ``tile.parallel`` writes disjoint parts of GM per iteration and keeps no
on-chip state across iterations; its ``T`` iterations can run as one. A *nest* of such
loops runs as one too: each batched loop is an *axis*, its induction variable the array of
its values laid along that axis (size 1 along the others), every index computed from it an
array that broadcasts, and every on-chip buffer written from varying data one slot per
point of the axes it varies along (size 1 along the rest); a value a tile op reads out of
such a buffer (``tile.get_value``) is an index array too. An op whose operands do not vary
runs once — what every iteration would compute alike.

An *accumulation* loop directly inside a batched loop (``tile-kernels``' K loops: loads of
one K step, then ``mmad`` into L0C with ``init = (k == 0)``) is an axis as well, of a
different kind: its loads get one slot per K step, and the ``mmad`` multiplies the steps'
operands laid end to end along K — the sum of the steps' products that the loop computes,
with the additions in BLAS's order rather than step after step
(:func:`tilegraph.runtime.fast_executor.cube.nest_product`).

The tiling is untouched: the same tiles, the same ops, the same data loaded and stored per
tile; a tile-size bug shows up exactly as in the interpreter. Only the order of the
additions of a product differs (float32 rounding). Ops without a batched form
(:mod:`.forms`) run their ordinary kernel once per point of the batch, in order
(:func:`one_by_one`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import prod
from typing import Any

import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Operation, SSAValue

from tilegraph.dialects import index_arith
from tilegraph.dialects.tile import (
    BlockIdxOp,
    BlockNumOp,
    LaunchOp,
    MmadOp,
    ReadOp,
    TileOp,
    WriteOp,
    scope_of,
)
from tilegraph.dialects.tile.barrier import SyncAllOp
from tilegraph.dialects.tile.cross_core import CrossCoreOp
from tilegraph.dialects.tile.sync import SyncOp
from tilegraph.lowering.analysis.kernel_attrs import PARALLEL_ATTR
from tilegraph.runtime.fast_executor.forms import batched_kernel_of
from tilegraph.runtime.fast_executor.fresh_loops import HandOverLoops, fresh_iterations
from tilegraph.runtime.tile_interpreter.kernels import kernel_of

_INDEX_OPS = index_arith.INDEX_OPS
"""Index arithmetic: the fast executor evaluates it on arrays when an operand varies."""

_BATCHABLE = (TileOp, scf.ForOp, scf.YieldOp, arith.ConstantOp, *_INDEX_OPS)

Axes = frozenset[int]


Bound = int | str
"""A loop bound known before a nest runs: an int, or the Python source of one computed
from the running block (:data:`BLOCK_INDEX`, :data:`BLOCK_COUNT`) when the bound depends on
it (``split-cores``' work loop)."""

BLOCK_INDEX = "__block"
BLOCK_COUNT = "__blocks"
SUB_BLOCK_INDEX = "__sub_block"
"""The names the generated kernel functions take the running block's index and count (and
a mix launch's AIV its sub-block, ``tile.sub_block_idx``) by (:mod:`.codegen`: every block
of a launch runs with the values ``tile.launch`` gives)."""


@dataclass(frozen=True)
class Axis:
    loop: scf.ForOp | None
    """The batched loop (None: the blocks of a launch run together, :mod:`.lockstep`)."""
    trips: tuple[Bound, Bound, Bound]
    """(lower, upper, step) of the loop."""
    accumulation: bool
    """A K loop whose ``mmad`` accumulate along it (else a parallel loop)."""

    @property
    def size(self) -> Bound:
        if all(isinstance(t, int) for t in self.trips):
            return len(range(*self.trips))  # type: ignore[arg-type]
        return "len(range({}, {}, {}))".format(*self.trips)


@dataclass
class NestPlan:
    """How a nest of loops runs as one batch."""

    axes: list[Axis] = field(default_factory=list)
    axis_of: dict[scf.ForOp, int] = field(default_factory=dict)
    varying: dict[SSAValue, Axes] = field(default_factory=dict)
    """Index values that differ per point of the batch, with the axes they vary along."""
    batched: dict[SSAValue, Axes] = field(default_factory=dict)
    """On-chip buffers defined outside the nest that get one slot per point of their axes."""
    summed: dict[MmadOp, int] = field(default_factory=dict)
    """``mmad`` ops that sum along an accumulation axis, with that axis."""
    shifted: set[scf.ForOp] = field(default_factory=set)
    """Loops run trip by trip whose bounds vary along the batch, every point with as many
    trips (a lockstep launch's work loop, :mod:`.lockstep`): the induction variable
    varies, ``lb + k * step`` on trip ``k``."""

    @property
    def rank(self) -> int:
        return len(self.axes)

    def shape(self, axes: Axes) -> str:
        """The batch dims of a value varying along ``axes``, as Python source (a size may
        depend on the running block)."""
        sizes = [str(a.size) if i in axes else "1" for i, a in enumerate(self.axes)]
        return f"({', '.join(sizes)},)"

    def index_shape(self, loop: scf.ForOp) -> tuple[int, ...]:
        axis = self.axis_of[loop]
        return tuple(-1 if i == axis else 1 for i in range(self.rank))

    def axes_of(self, value: SSAValue) -> Axes:
        return self.varying.get(value) or self.batched.get(value) or frozenset()


_FOLDABLE = (arith.AddiOp, arith.SubiOp, arith.MuliOp)
"""The index arithmetic a loop bound known before the loop runs may use."""


def _constant(value: SSAValue) -> Bound | None:
    """The value of an index known before the loop runs: a constant, a block query (the
    names of the running block's index and count, :data:`BLOCK_INDEX` / :data:`BLOCK_COUNT`),
    or +, -, * of such (folded where all are ints)."""
    op = value.owner
    if isinstance(op, arith.ConstantOp):
        return index_arith.constant(op)
    if isinstance(op, BlockIdxOp | BlockNumOp):
        return BLOCK_INDEX if isinstance(op, BlockIdxOp) else BLOCK_COUNT
    if isinstance(op, _FOLDABLE):
        operands = [_constant(v) for v in op.operands]
        if any(v is None for v in operands):
            return None
        if all(isinstance(v, int) for v in operands):
            fold = index_arith.evaluator(op)
            return None if fold is None else fold(*operands)
        return index_arith.expression(op, [f"({v})" for v in operands], False)
    return None


def loop_bounds(loop: scf.ForOp) -> tuple[Bound, Bound, Bound] | None:
    """(lower, upper, step) of a loop without carried values whose bounds are known before
    it runs (:func:`_constant`) and whose step is positive, else None."""
    bounds = [_constant(v) for v in (loop.lb, loop.ub, loop.step)]
    if loop.iter_args or any(b is None for b in bounds):
        return None
    lb, ub, step = bounds
    assert lb is not None and ub is not None and step is not None
    # a step from the block count is positive: a launch runs at least one block
    positive = eval(str(step), {**index_arith.NAMESPACE, BLOCK_INDEX: 0, BLOCK_COUNT: 1}) > 0
    return (lb, ub, step) if positive else None


def _is_first_iteration(flag: SSAValue, loop: scf.ForOp, lb: Bound) -> bool:
    op = flag.owner
    if not isinstance(op, arith.CmpiOp) or op.predicate.value.data != 0:
        return False
    iv = loop.body.block.args[0]
    lhs, rhs = op.operands
    other = rhs if lhs is iv else lhs if rhs is iv else None
    return other is not None and _constant(other) == lb


def _accumulates(loop: scf.ForOp, lb: Bound) -> list[MmadOp] | None:
    """The ``mmad`` of an accumulation loop (each directly in its body, starting the
    accumulator on the first iteration, the accumulator touched by nothing else in the
    loop), or None when ``loop`` is not one."""
    body = loop.body.block
    mmads = [op for op in body.ops if isinstance(op, MmadOp)]
    if not mmads or any(
        isinstance(op, MmadOp) and op.parent_block() is not body for op in body.walk()
    ):
        return None
    accumulators = {op.c for op in mmads}
    for op in body.walk():
        if isinstance(op, MmadOp):
            if not _is_first_iteration(op.init, loop, lb):
                return None
        elif any(v in accumulators for v in op.operands):
            return None
    return mmads


def _nest_loops(
    loop: scf.ForOp, plan: NestPlan, under_accumulation: bool, handover: HandOverLoops | None
) -> None:
    """Give ``loop`` an axis, then every loop directly in its body that can have one: a
    parallel loop, an accumulation loop, or a loop whose iterations start afresh
    (:func:`~tilegraph.runtime.fast_executor.fresh_loops.fresh_iterations`)."""
    for op in loop.body.block.ops:
        if not isinstance(op, scf.ForOp):
            continue
        trips = loop_bounds(op)
        if trips is None:
            continue
        accumulation = PARALLEL_ATTR not in op.attributes
        if accumulation:
            mmads = None if under_accumulation else _accumulates(op, trips[0])
            if mmads is not None:
                plan.summed.update(dict.fromkeys(mmads, len(plan.axes)))
            elif not under_accumulation and fresh_iterations(op, handover):
                accumulation = False
            else:
                continue
        plan.axis_of[op] = len(plan.axes)
        plan.axes.append(Axis(op, trips, accumulation))
        _nest_loops(op, plan, under_accumulation or accumulation, handover)


def plan_nest(loop: scf.ForOp, handover: HandOverLoops | None = None) -> NestPlan | None:
    """How to run a parallel loop and the loops nested in it together, or None
    (``handover``: the workspace of the batched mix part being compiled, which loops
    inside may write one copy per iteration)."""
    if PARALLEL_ATTR not in loop.attributes:
        return None
    trips = loop_bounds(loop)
    if trips is None:
        return None
    plan = NestPlan()
    plan.axis_of[loop] = 0
    plan.axes.append(Axis(loop, trips, False))
    _nest_loops(loop, plan, False, handover)
    body = [op for op in loop.body.block.walk() if op is not loop]
    for op in body:
        if isinstance(op, LaunchOp | ReadOp | WriteOp | CrossCoreOp | SyncAllOp) or not isinstance(
            op, _BATCHABLE
        ):
            return None  # cross-core flags: a mix part runs tile by tile, flag by flag
    for batched_loop, axis in plan.axis_of.items():
        plan.varying[batched_loop.body.block.args[0]] = frozenset((axis,))
    return plan if propagate(plan, body, set(body)) else None


def propagate(plan: NestPlan, body: Sequence[Operation], fixed: set[Operation]) -> bool:
    """Complete ``plan`` (its ``varying`` seeded with the axes' own values) over the ops
    ``body``: the index values computed from varying ones vary too, and so does what a
    tile op reads out of a buffer that varies; an on-chip buffer a tile op writes from
    varying operands gets a slot per point of their axes (:attr:`NestPlan.batched`).
    False when the batch cannot run as one: a buffer to slot is the result of an op of
    ``fixed`` (allocated where the slots cannot replace it), an ``mmad`` start flag varies
    along a parallel axis, or the bounds of a loop that is no axis vary."""
    changed = True
    while changed:
        changed = False
        for op in body:
            if isinstance(op, _INDEX_OPS):
                axes = frozenset().union(*(plan.varying.get(v, frozenset()) for v in op.operands))
                if axes and plan.varying.get(op.results[0]) != axes:
                    plan.varying[op.results[0]] = axes
                    changed = True
            elif isinstance(op, TileOp) and op.results:
                # a value read from a buffer (tile.get_value): one per point it varies at
                axes = frozenset().union(*(plan.axes_of(v) for v in op.operands))
                if axes and plan.varying.get(op.results[0]) != axes:
                    plan.varying[op.results[0]] = axes
                    changed = True
            elif isinstance(op, TileOp) and not isinstance(op, SyncOp):
                written = op.written()
                if written is None or scope_of(written) == "GM":
                    continue
                axes = frozenset().union(
                    *(plan.axes_of(v) for v in op.operands if v is not written)
                )
                if isinstance(op, MmadOp):
                    summed = {plan.summed[op]} if op in plan.summed else set()
                    axes -= summed
                    if plan.axes_of(op.init) - summed:
                        return False  # a start flag varying along a parallel axis
                old = plan.batched.get(written, frozenset())
                if axes - old:
                    if written.owner in fixed:
                        return False  # buffers are allocated at the kernel's entry
                    plan.batched[written] = old | axes
                    changed = True
    return not varying_bounds(plan, body)


def varying_bounds(plan: NestPlan, body: Sequence[Operation]) -> list[scf.ForOp]:
    """The loops of ``body`` run trip by trip (neither an axis nor shifted) whose bounds
    vary along the batch."""
    return [
        op
        for op in body
        if isinstance(op, scf.ForOp)
        and op not in plan.axis_of
        and op not in plan.shifted
        and any(v in plan.varying for v in (op.lb, op.ub, op.step))
    ]


def one_by_one(kernel: Callable[..., Any], mask: Sequence[bool]) -> Callable[..., Any]:
    """A tile op's kernel run once per point of a flat batch, in order: operand ``i`` is
    sliced per point where ``mask[i]``."""

    def run(*args: Any) -> tuple[()]:
        count = next(len(a) for a, m in zip(args, mask, strict=True) if m)
        for t in range(count):
            kernel(*[a[t] if m else a for a, m in zip(args, mask, strict=True)])
        return ()

    return run


def per_index_value(
    kernel: Callable[..., Any], mask: Sequence[bool], by: Sequence[int], rank: int
) -> Callable[..., Any]:
    """A nest kernel for an op whose batched form takes the index operands at positions
    ``by`` as scalars (img2col of one K step for a batch of tiles, say): called once per
    point of the axes those indices vary along, on views of the other operands there."""

    def run(*args: Any) -> tuple[()]:
        axes = sorted({d for i in by for d, n in enumerate(np.shape(args[i])[:rank]) if n > 1})
        sizes = [max(np.shape(a)[d] for a, m in zip(args, mask, strict=True) if m) for d in axes]
        for point in np.ndindex(*sizes):
            call = []
            for i, (a, m) in enumerate(zip(args, mask, strict=True)):
                if m:
                    at: list[Any] = [slice(None)] * rank
                    for d, p in zip(axes, point, strict=True):
                        if np.shape(a)[d] > 1:
                            at[d] = slice(p, p + 1)
                    a = a[tuple(at)]
                    if i in by:
                        a = int(np.asarray(a).reshape(-1)[0])
                call.append(a)
            kernel(*call)
        return ()

    return run


def _shape(a: Any) -> tuple[int, ...]:
    return a.shape if isinstance(a, np.ndarray) else np.shape(a)


def _one_batch_dim(args: Sequence[Any], marked: Sequence[int]) -> bool:
    """Whether the operands at ``marked`` all have a leading dim of one size (a batch of
    one axis that needs neither broadcasting nor flattening)."""
    count = -1
    for i in marked:
        a = args[i]
        shape = a.shape if isinstance(a, np.ndarray) else np.shape(a)
        if not shape or (count >= 0 and shape[0] != count):
            return False
        count = shape[0]
    return True


def flattened(kernel: Callable[..., Any], mask: Sequence[bool], rank: int) -> Callable[..., Any]:
    """A batched kernel (one leading batch dim on the operands ``mask`` marks) called on a
    nest's operands, whose first ``rank`` dims are batch dims that broadcast: each marked
    operand is broadcast to the op's batch and flattened to one dim; a destination that
    cannot be flattened in place is written back."""

    marked = [i for i, m in enumerate(mask) if m]

    def run(*args: Any) -> tuple[()]:
        if rank == 1 and _one_batch_dim(args, marked):
            kernel(*args)  # already flat: the usual batch of a mix part's tile loop
            return ()
        call = list(args)
        shapes = [_shape(args[i]) for i in marked]
        first = shapes[0][:rank]
        same = all(s[:rank] == first for s in shapes)
        batch = first if same else np.broadcast_shapes(*(s[:rank] for s in shapes))
        count = prod(batch)
        back: list[tuple[np.ndarray, np.ndarray]] = []
        for i, shape in zip(marked, shapes, strict=True):
            a = args[i]
            rest = shape[rank:]
            if not same and shape[:rank] != batch:
                a = np.broadcast_to(a, batch + rest)
            flat = np.reshape(a, (count, *rest))
            if isinstance(a, np.ndarray) and a.flags.writeable and a.ndim > rank:
                if not np.may_share_memory(flat, a):
                    back.append((a, flat))
            call[i] = flat
        kernel(*call)
        for a, flat in back:
            a[...] = flat.reshape(a.shape)
        return ()

    return run


def kernel_over_batch(
    op: TileOp, mask: list[bool], rank: int, flat: bool = False
) -> tuple[Callable[..., Any], bool]:
    """An op's kernel over a nest's batch (``mask``: the operands that carry it): its
    batched form; else, with varying indices, its batched form once per value of those
    indices; else its kernel once per point (then True: the op runs tile by tile).
    ``flat``: every operand ``mask`` marks has the batch's one dim, of one size (a
    lockstep launch's groups, :mod:`.lockstep`), so the forms take them as they are."""
    found = batched_kernel_of(op, mask)
    if found is not None:
        return (found if flat else flattened(found, mask, rank)), False
    indices = [
        i
        for i, (v, m) in enumerate(zip(op.operands, mask, strict=True))
        if m and isinstance(v.type, IndexType)
    ]
    if indices:
        scalar = [m and i not in indices for i, m in enumerate(mask)]
        per_value = batched_kernel_of(op, scalar)
        if per_value is not None:
            kernel = per_index_value(flattened(per_value, scalar, rank), mask, indices, rank)
            return kernel, False
    each = one_by_one(kernel_of(op), mask)
    return (each if flat else flattened(each, mask, rank)), True
