"""``plan-memory``: every intermediate tensor of the host sequence gets an offset in one GM
workspace.

After ``lower-graph-to-kernels`` (and usually ``tile-kernels``) the host function is a
straight line of ``tile.constant`` (weights), ``tile.alloc : memref<..., "GM">`` (one per
kernel result) and ``tile.launch @k(inputs..., outputs...)``. This pass replaces the GM
allocations by views into a single workspace allocated at the top::

    %workspace = tile.alloc : memref<2048xi8, "GM">
    %a = tile.view %workspace[0] : memref<2048xi8, "GM"> to memref<1x4x8x8xf32, "GM">
    tile.launch @conv(%x, %w, %a) : ...
    %b = tile.view %workspace[1024] : memref<2048xi8, "GM"> to memref<1x4x8x8xf32, "GM">
    tile.launch @relu(%a, %b) : ...

and records the report on the host function (``tile.memory = {peak = ..., lower_bound =
..., no_reuse = ..., constants = ..., in_place = ..., buffers = ..., arguments = ...}``, in
bytes, and ``barrier_workspace = ...`` when soft all-core barriers have workspaces among
the buffers). Function arguments stay caller-owned; weights (``tile.constant``) are a separate
constant region, counted apart. Byte sizes are the executors' containers
(:func:`~tilegraph.dialects.tile.workspace.container_bytes`), each rounded up to the
preset's GM alignment (32 B); offsets are multiples of it.

**Liveness.** The launches are numbered 0..L-1 and the ``func.return`` is point L. A
buffer is *born* at the launch that writes it (an argument position the callee writes:
``tile.write`` in a macro body, the destination of a tile op in a tiled one) and *dies* at
its last reader; a returned buffer lives to L. Two buffers conflict when their closed
intervals [birth, death] meet: at a launch, the inputs that die there and the outputs born
there are live together.

**In place.** At a launch of a single-output kernel that computes only elementwise graph
ops (fusion kinds ELEMWISE and BROADCAST, read from the macro body or from ``tile.ops``
after tiling), the output may take the exact place of an input of *the same memref type*
that dies there (a workspace buffer, so neither an argument nor a constant, and not
returned). Such a kernel reads each element of that input only where it writes the same
element of the output, tile by tile, loads before stores (a same-typed operand is never
broadcast in storage; a C0-lane or fractal broadcast stays inside one tile), so writing
over it is safe. (One output only: a macro body writes its outputs one after the other,
and a second output could still read the input the first one overwrote.) The first
dying input of the output's type is chosen; a chain of such pairs forms one block with
one offset.

**Placement.** Blocks (buffers merged by in-place pairs) are placed one by one at the
best-fitting gap among the already placed blocks whose lifetimes meet theirs (or on top),
trying a few orders (largest first, earliest first, longest-lived first; best fit and
first fit) and keeping the smallest peak; while that is above the lower bound, seeded
random perturbations of the largest-first order are tried too (at most
:data:`SEARCH_ROUNDS`; the plan stays deterministic).

**The lower bound** (:func:`lower_bound`): the maximum over the points p = 0..L of
live(p) - shared(p), where live(p) is the sum of A(b) over the buffers b live at p, A(b)
the size rounded up to the alignment, and shared(p) is A(o) when launch p may write its
output o in place of an input dying there (0 otherwise, and at L). It bounds the peak of
every valid plan under these rules: two buffers live at p may overlap only as an in-place
pair of p, and then they coincide exactly; only p's output can be in such a pair, and not
with two inputs (those would overlap each other), so at most A(o) is shared. Offsets and
the workspace size are aligned, so disjoint buffers stay disjoint when each is widened to
A(b), and every widened range still ends inside the workspace: the buffers live at p fill
at least live(p) - shared(p) bytes of it. Hence peak >= lower_bound.

:func:`check_memory_plan` proves a planned module right: at every point, no two live views
of a workspace overlap, unless they are an in-place pair of that launch (by the same rule,
re-derived from the IR, not from the planner's choices) at exactly the same offset.

Statistics: ``buffers``, ``in-place``, ``peak-bytes``, ``lower-bound-bytes``,
``no-reuse-bytes``, ``constant-bytes`` (summed over host functions).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import MISSING, dataclass, fields

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, i8, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass

from tilegraph.dialects.graph.provenance import location_of, replace_located
from tilegraph.dialects.tile import AllocOp, ConstantOp, ViewOp
from tilegraph.dialects.tile.base import module_preset, scope_of, scoped_memref
from tilegraph.dialects.tile.workspace import container_bytes
from tilegraph.lowering.analysis.barrier_workspace import barrier_workspace_bytes
from tilegraph.lowering.analysis.host_liveness import (
    Buffer,
    HostSequence,
    KernelFacts,
    MemoryPlanError,
    analyse_host,
    host_function,
    host_functions,
    in_place_pair,
    is_in_place_pair,
)
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import start_pass

__all__ = [
    "MEMORY_ATTR",
    "MemoryPlan",
    "MemoryPlanError",
    "MemoryReport",
    "PlanMemoryPass",
    "check_memory_plan",
    "lower_bound",
    "memory_report",
    "plan_function",
]

MEMORY_ATTR = "tile.memory"
"""Host-function attribute: the plan's report (bytes), set by ``plan-memory``."""


# ---- placement ----------------------------------------------------------------------------


def align_up(size: int, alignment: int) -> int:
    return -(-size // alignment) * alignment


@dataclass(eq=False)
class _Block:
    """Buffers that share one place: an in-place chain (or a single buffer)."""

    members: list[Buffer]
    size: int
    start: int
    end: int

    def meets(self, other: _Block) -> bool:
        return self.start <= other.end and other.start <= self.end


def _blocks(seq: HostSequence, alignment: int, in_place: bool) -> tuple[list[_Block], int]:
    """Buffers merged along the in-place pairs; (blocks, number of pairs)."""
    block_of: dict[Buffer, _Block] = {}
    blocks: list[_Block] = []
    for buffer in sorted(seq.buffers, key=lambda b: b.birth):
        block = _Block([buffer], align_up(buffer.size, alignment), buffer.birth, buffer.death)
        block_of[buffer] = block
        blocks.append(block)
    pairs = 0
    for step in seq.steps if in_place else ():
        pair = in_place_pair(step)
        if pair is None:
            continue
        source, output = pair
        into = block_of[source]
        blocks.remove(block_of[output])
        into.members.append(output)
        into.end = max(into.end, output.death)
        block_of[output] = into
        pairs += 1
    return blocks, pairs


def _place(blocks: Sequence[_Block], best_fit: bool) -> tuple[int, dict[_Block, int]]:
    """Offsets for ``blocks`` taken in order: the best-fitting (or first) gap among the
    placed blocks whose lifetimes meet, else on top of them. (peak, offsets)."""
    offsets: dict[_Block, int] = {}
    placed: list[_Block] = []
    peak = 0
    for block in blocks:
        conflicts = sorted((p for p in placed if p.meets(block)), key=offsets.__getitem__)
        cursor, chosen, chosen_gap = 0, None, None
        for other in conflicts:
            gap = offsets[other] - cursor
            if gap >= block.size and (chosen_gap is None or (best_fit and gap < chosen_gap)):
                chosen, chosen_gap = cursor, gap
            cursor = max(cursor, offsets[other] + other.size)
        offset = cursor if chosen is None else chosen
        offsets[block] = offset
        placed.append(block)
        peak = max(peak, offset + block.size)
    return peak, offsets


_ORDERS: tuple[Callable[[_Block], tuple[int, ...]], ...] = (
    lambda b: (-b.size, b.start),
    lambda b: (b.start, -b.size),
    lambda b: (b.start - b.end, -b.size, b.start),
)


SEARCH_ROUNDS = 200
"""Perturbed largest-first orders tried while the peak is above the lower bound."""


def _best_placement(blocks: list[_Block], bound: int) -> tuple[int, dict[_Block, int]]:
    """The smallest peak of the fixed orders, then of seeded random perturbations of
    largest-first (sizes scaled by a factor in [0.5, 1.5]) until ``bound`` is reached."""
    best: tuple[int, dict[_Block, int]] = (0, {})
    for order in _ORDERS:
        for best_fit in (True, False):
            found = _place(sorted(blocks, key=order), best_fit)
            if not best[1] or found[0] < best[0]:
                best = found
    rng = random.Random(0)  # deterministic: the same module always gets the same plan
    for _ in range(SEARCH_ROUNDS):
        if best[0] <= bound:
            break
        found = _place(sorted(blocks, key=lambda b: -b.size * rng.uniform(0.5, 1.5)), True)
        if found[0] < best[0]:
            best = found
    return best


# ---- the plan and its report --------------------------------------------------------------


@dataclass(frozen=True)
class MemoryReport:
    """The GM memory of one host function, in bytes (see the module docstring)."""

    function: str
    peak: int
    """Workspace size: the planned peak of intermediate tensors."""
    lower_bound: int
    """Max over program points of the bytes live there (in-place pairs once)."""
    no_reuse: int
    """Every intermediate in its own place."""
    constants: int
    """The constant region (weights), counted apart."""
    in_place: int
    """Outputs written over a dying input."""
    buffers: int
    arguments: int
    """Caller-owned input buffers (not planned)."""
    barrier_workspace: int = 0
    """The soft all-core barriers' GM workspaces (32 B per block,
    :mod:`tilegraph.lowering.analysis.barrier_workspace`), aligned and summed: planned
    among the buffers like the others (so part of ``peak`` where they are live)."""

    @property
    def ratio(self) -> float:
        """peak / lower_bound (1.0 for an empty plan)."""
        return self.peak / self.lower_bound if self.lower_bound else 1.0

    @property
    def saving(self) -> float:
        """1 - peak / no_reuse: the fraction of no-reuse memory the plan saves."""
        return 1 - self.peak / self.no_reuse if self.no_reuse else 0.0

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "function"}

    def as_attribute(self) -> DictionaryAttr:
        """The report as recorded on the host function; a module without soft barriers
        records no ``barrier_workspace`` (it reads back as 0)."""
        values = self.as_dict()
        if not values["barrier_workspace"]:
            del values["barrier_workspace"]
        return DictionaryAttr({k: IntegerAttr(v, i64) for k, v in values.items()})

    @classmethod
    def from_attribute(cls, function: str, attr: Attribute) -> MemoryReport:
        values: dict[str, int] = {}
        if isinstance(attr, DictionaryAttr):
            values = {k: v.value.data for k, v in attr.data.items() if isinstance(v, IntegerAttr)}
        names = [f.name for f in fields(cls) if f.name != "function"]
        optional = {f.name for f in fields(cls) if f.default is not MISSING}
        missing = [n for n in names if n not in values and n not in optional]
        if missing:
            raise MemoryPlanError(
                f"plan-memory: @{function} has a malformed {MEMORY_ATTR} (missing "
                f"{', '.join(missing)})"
            )
        return cls(function, **{n: values[n] for n in names if n in values})


@dataclass
class MemoryPlan:
    """Where each buffer of a host sequence goes, and the report."""

    sequence: HostSequence
    offsets: dict[Buffer, int]
    report: MemoryReport


def lower_bound(seq: HostSequence, alignment: int, in_place: bool = True) -> int:
    """The max-live lower bound of the module docstring, in aligned bytes."""
    best = 0
    for point in range(seq.end + 1):
        live = sum(align_up(b.size, alignment) for b in seq.buffers if b.live_at(point))
        pair = in_place_pair(seq.steps[point]) if in_place and point < seq.end else None
        if pair is not None:
            live -= align_up(pair[1].size, alignment)
        best = max(best, live)
    return best


def _is_planned_alloc(value: SSAValue) -> bool:
    op = value.owner
    return (
        isinstance(op, AllocOp)
        and scope_of(value) == "GM"
        and not any(isinstance(use.operation, ViewOp) for use in value.uses)
    )


def _aligned_sum(values: Iterable[SSAValue], alignment: int) -> int:
    return sum(align_up(container_bytes(v.type), alignment) for v in values)


def plan_function(fn: func.FuncOp, module: ModuleOp, in_place: bool = True) -> MemoryPlan:
    """Plan ``fn``'s GM allocations (analysis only: the IR is not changed)."""
    alignment = module_preset(fn).alignment["GM"]
    seq = analyse_host(fn, KernelFacts.of(module), _is_planned_alloc)
    blocks, pairs = _blocks(seq, alignment, in_place)
    bound = lower_bound(seq, alignment, in_place)
    peak, block_offsets = _best_placement(blocks, bound)
    offsets = {b: block_offsets[block] for block in blocks for b in block.members}
    constants = [op.result for op in fn.body.block.ops if isinstance(op, ConstantOp)]
    report = MemoryReport(
        function=fn.sym_name.data,
        peak=peak,
        lower_bound=bound,
        no_reuse=sum(align_up(b.size, alignment) for b in seq.buffers),
        constants=_aligned_sum(constants, alignment),
        in_place=pairs,
        buffers=len(seq.buffers),
        arguments=_aligned_sum(fn.body.block.args, alignment),
        barrier_workspace=barrier_workspace_bytes(
            [b.value for b in seq.buffers], module, alignment
        ),
    )
    return MemoryPlan(seq, offsets, report)


def memory_report(module: ModuleOp, function: str | None = None) -> MemoryReport:
    """The GM memory report of the module's host function (``function``, else the only
    one, else ``@main``): the recorded one when ``plan-memory`` ran, else the plan it
    would make (the module is not changed)."""
    fn = host_function(module, function)
    recorded = fn.attributes.get(MEMORY_ATTR)
    if recorded is not None:
        return MemoryReport.from_attribute(fn.sym_name.data, recorded)
    return plan_function(fn, module).report


# ---- the pass -----------------------------------------------------------------------------


def _apply_plan(plan: MemoryPlan) -> None:
    fn = plan.sequence.fn
    block = fn.body.block
    if plan.sequence.buffers:
        workspace = AllocOp(scoped_memref([plan.report.peak], i8, "GM"))
        workspace.result.name_hint = "workspace"
        # the workspace holds every planned intermediate: it stands for all their nodes
        workspace.location = location_of(
            b.value.owner for b in plan.sequence.buffers if isinstance(b.value.owner, Operation)
        )
        first = block.first_op
        if first is None:
            block.add_op(workspace)
        else:
            block.insert_op_before(workspace, first)
        for buffer in plan.sequence.buffers:
            alloc = buffer.value.owner
            assert isinstance(alloc, AllocOp)
            view = ViewOp(workspace.result, plan.offsets[buffer], buffer.memref)
            view.result.name_hint = buffer.value.name_hint
            replace_located(alloc, [view])
    fn.attributes[MEMORY_ATTR] = plan.report.as_attribute()


@register_pass
@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Give every GM intermediate of the host sequence an offset in one workspace."""

    name = "plan-memory"

    in_place: bool = True
    """Let elementwise kernels write over an input that dies there."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        hosts = host_functions(op)
        if not hosts:
            host_function(op)  # raises the error that names what is missing
        for fn in hosts:
            if MEMORY_ATTR in fn.attributes:
                continue  # planned already
            plan = plan_function(fn, op, self.in_place)
            _apply_plan(plan)
            report = plan.report
            stats.add("buffers", report.buffers)
            stats.add("in-place", report.in_place)
            stats.add("peak-bytes", report.peak)
            stats.add("lower-bound-bytes", report.lower_bound)
            stats.add("no-reuse-bytes", report.no_reuse)
            stats.add("constant-bytes", report.constants)


# ---- the checker --------------------------------------------------------------------------


def _is_view(value: SSAValue) -> bool:
    return isinstance(value.owner, ViewOp)


def check_memory_plan(module: ModuleOp) -> int:
    """Prove the plan of every planned host function: views aligned and inside their
    workspace, and no two buffers live at the same point overlapping, except an in-place
    pair of that launch at exactly the same place. Raises :class:`MemoryPlanError` naming
    both buffers and the point; returns the number of buffers checked."""
    kernels = KernelFacts.of(module)
    checked = 0
    for fn in host_functions(module):
        seq = analyse_host(fn, kernels, _is_view)
        where = f"plan-memory check: @{fn.sym_name.data}"
        alignment = module_preset(fn).alignment["GM"]
        placed: dict[Buffer, tuple[SSAValue, int]] = {}
        for buffer in seq.buffers:
            view = buffer.value.owner
            assert isinstance(view, ViewOp)
            offset, capacity = view.byte_offset, container_bytes(view.workspace.type)
            span = f"{buffer.name} at [{offset}, {offset + buffer.size})"
            if offset % alignment:
                raise MemoryPlanError(f"{where}: {span} is not aligned to {alignment} B")
            if offset < 0 or offset + buffer.size > capacity:
                raise MemoryPlanError(f"{where}: {span} is outside its {capacity} B workspace")
            placed[buffer] = (view.workspace, offset)
        for point in range(seq.end + 1):
            live = sorted(
                (b for b in seq.buffers if b.live_at(point) and b.size > 0),
                key=lambda b: placed[b][1],
            )
            for i, a in enumerate(live):
                ws_a, lo_a = placed[a]
                for b in live[i + 1 :]:
                    ws_b, lo_b = placed[b]
                    if lo_b >= lo_a + a.size:
                        break
                    if ws_a is not ws_b:
                        continue
                    legal = point < seq.end and is_in_place_pair(seq.steps[point], a, b)
                    if legal and lo_a == lo_b:
                        continue
                    raise MemoryPlanError(
                        f"{where}: {a.name} [{lo_a}, {lo_a + a.size}) and {b.name} "
                        f"[{lo_b}, {lo_b + b.size}) overlap while both are live at "
                        f"{seq.point(point)}"
                    )
        checked += len(seq.buffers)
    return checked
