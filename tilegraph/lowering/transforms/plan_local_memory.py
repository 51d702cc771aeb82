"""``plan-local-memory``: every on-chip buffer of every tiled kernel gets its address.

After ``tile-kernels`` a cube or vector kernel allocates its scoped buffers (L1, L0A, L0B,
L0C, UB) with ``tile.alloc`` at its entry. This pass gives each one a byte address in its
scope, on the module's preset (``tilegraph.target``), and records it on the alloc::

    %fmap_l1 = tile.alloc {address = 0 : i64} : memref<1x2x5x9x16xf32, "L1">
    %a_l0a = tile.alloc {address = 0 : i64, addresses = array<i64: 0, 2048>,
                         multi_buffer = 2 : i64} : memref<2x1x16x16xf32, "L0A">

A buffer with ``multi_buffer = n`` (:mod:`tilegraph.lowering.analysis.buffers`) gets ``n`` slots,
``addresses`` one per slot and ``address`` the first. The kernel records what it uses of
each scope, the end of its highest slot, as ``tile.local_memory = {L0A = 4096 : i64, ...}``.

**Liveness** (:func:`~tilegraph.lowering.analysis.buffers.live_ranges`): program order of the
kernel's entry block; a buffer used anywhere inside a loop is live across the whole loop.
Buffers (and slots) whose live ranges meet never share a byte; the others may (a kernel with
several loop nests, e.g. a concat, reuses one nest's buffers in the next).

**Order.** Run it after ``multi-buffer`` (slots need addresses) and before ``inject-sync``,
which orders the accesses of buffers that share bytes. A kernel that is already
synchronised is planned without sharing, so that the plan adds no dependence its flags miss.

**Placement**, per scope: sizes rounded up to the scope's alignment (``hw.alignment``: UB and
L1 32 B, L0A/L0B/L0C 512 B) so every address is aligned; slots taken one by one, each at
the best-fitting gap among the placed slots whose ranges meet its own, else on top of them;
two orders are tried (largest first, earliest first) and the lower peak kept.

**Capacity** (``hw.capacity(scope)``): a scope whose plan does not fit is a compile error,
never a spill: ``plan-local-memory: @k: UB needs 12288 B but holds 8192 B on test; live at
the peak: %a_ub (4096 B), ...`` — the kernel, the scope, bytes needed and held, and the
buffers live where the most bytes are live at once (that sum is a lower bound of any plan:
when the placement needs more, the message gives both).

:func:`check_local_plan` proves a planned module right from the IR alone: every on-chip
buffer has one aligned address per slot inside its scope, and no two slots whose buffers'
live ranges meet overlap. ``multi-buffer`` asks the same planner whether extra slots fit.

Statistics: ``kernels``, ``buffers``, ``slots``, ``peak-<scope>-bytes`` (the largest use of
each scope over the kernels).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, IntegerAttr, ModuleOp, i64
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from tilegraph.dialects.tile import SCOPES, SYNC_OPS, AllocOp, scope_of
from tilegraph.dialects.tile.base import buffer_bytes, module_preset
from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.buffers import (
    ADDRESS_ATTR,
    ADDRESSES_ATTR,
    aligned_bytes,
    buffer_slots,
    live_ranges,
    on_chip_buffers,
    placement,
    tiled_kernels,
)
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import start_pass

__all__ = [
    "LOCAL_MEMORY_ATTR",
    "LocalMemoryError",
    "LocalMemoryPlanner",
    "PlanLocalMemoryPass",
    "ScopePlan",
    "check_local_plan",
    "is_synchronised",
    "plan_kernel",
]

LOCAL_MEMORY_ATTR = "tile.local_memory"
"""Kernel attribute: bytes used of each on-chip scope (the end of the highest slot)."""

SlotCount = Callable[[SSAValue], int]
"""How many slots a buffer gets (default: its ``multi_buffer`` mark)."""


class LocalMemoryError(PassFailedException, ValueError):
    """A kernel's buffers do not fit a scope, or a plan is wrong (the message says where).

    A diagnostic, so ``tilegraph-opt`` prints it as one ``error:`` line (and
    ``--verify-diagnostics`` goes on with the next chunk of a split input)."""


def _describe(buffer: SSAValue) -> str:
    """``%name`` of a buffer, else its type."""
    return f"%{buffer.name_hint}" if buffer.name_hint else f"a {buffer.type} buffer"


def _kernel_name(buffer: SSAValue) -> str:
    """``@name`` of the function that allocates ``buffer``."""
    fn = buffer.owner.parent_op()
    while fn is not None and not isinstance(fn, func.FuncOp):
        fn = fn.parent_op()
    return f"@{fn.sym_name.data}" if fn is not None else "a kernel"


# ---- placement ----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Slot:
    """One slot of one buffer: aligned bytes, and the buffer's live range."""

    buffer: SSAValue
    order: int
    """The buffer's place among the kernel's allocations (ties go in program order)."""
    index: int
    size: int
    first: int
    last: int

    def meets(self, other: _Slot) -> bool:
        return self.first <= other.last and other.first <= self.last


def _place(slots: Sequence[_Slot]) -> tuple[int, dict[_Slot, int]]:
    """Addresses for ``slots`` taken in order, each at the best-fitting gap among the placed
    slots it meets, else on top of them: (peak, addresses)."""
    address: dict[_Slot, int] = {}
    peak = 0
    for slot in slots:
        cursor, chosen, chosen_gap = 0, None, None
        for other in sorted((p for p in address if p.meets(slot)), key=address.__getitem__):
            gap = address[other] - cursor
            if gap >= slot.size and (chosen_gap is None or gap < chosen_gap):
                chosen, chosen_gap = cursor, gap
            cursor = max(cursor, address[other] + other.size)
        address[slot] = cursor if chosen is None else chosen
        peak = max(peak, address[slot] + slot.size)
    return peak, address


_ORDERS: tuple[Callable[[_Slot], tuple[int, ...]], ...] = (
    lambda s: (-s.size, s.first, s.order, s.index),
    lambda s: (s.first, -s.size, s.order, s.index),
)


@dataclass(frozen=True)
class ScopePlan:
    """The plan of one scope of one kernel."""

    kernel: str
    scope: str
    platform: str
    capacity: int
    addresses: dict[SSAValue, tuple[int, ...]]
    """Buffer -> address of each slot."""
    peak: int
    """Bytes the plan uses: the end of its highest slot."""
    live_peak: int
    """The most bytes live at one point (aligned, slots included): no plan needs less."""
    live_at_peak: tuple[SSAValue, ...]
    """The buffers live at that point."""

    @property
    def fits(self) -> bool:
        return self.peak <= self.capacity

    def overflow_error(self) -> LocalMemoryError:
        needed = f"{self.peak} B"
        if self.peak > self.live_peak:
            needed += f" ({self.live_peak} B live at once)"
        live = ", ".join(_buffer_bytes(b, len(self.addresses[b])) for b in self.live_at_peak)
        return LocalMemoryError(
            f"plan-local-memory: {self.kernel}: {self.scope} needs {needed} but holds "
            f"{self.capacity} B on {self.platform}; live at the peak: {live}"
        )


def _buffer_bytes(buffer: SSAValue, slots: int) -> str:
    size = buffer_bytes(buffer)
    return f"{_describe(buffer)} ({f'{slots} slots x ' if slots > 1 else ''}{size} B)"


def is_synchronised(fn: func.FuncOp) -> bool:
    """Whether ``inject-sync`` already put flags or barriers in kernel ``fn``."""
    return any(isinstance(op, SYNC_OPS) for op in fn.walk())


class LocalMemoryPlanner:
    """One kernel's on-chip buffers and their live ranges; plans them scope by scope.

    In a kernel already synchronised, no two buffers share bytes (every buffer is live
    throughout): the flags were placed for the aliases of the plan they saw, and bytes
    shared now would be a dependence no flag orders."""

    def __init__(self, fn: func.FuncOp, hw: HardwareModel):
        self.fn = fn
        self.hw = hw
        self.ranges = live_ranges(fn)
        if is_synchronised(fn):
            self.ranges = dict.fromkeys(self.ranges, (0, 0))
        self.by_scope: dict[str, list[SSAValue]] = {}
        for buffer in on_chip_buffers(fn):
            self.by_scope.setdefault(scope_of(buffer), []).append(buffer)

    @property
    def scopes(self) -> list[str]:
        return [s for s in SCOPES if s in self.by_scope]

    def _aligned(self, buffer: SSAValue) -> int:
        return aligned_bytes(self.hw, scope_of(buffer), buffer_bytes(buffer))

    def plan_scope(self, scope: str, slots_of: SlotCount = buffer_slots) -> ScopePlan:
        slots = [
            _Slot(buffer, order, i, self._aligned(buffer), *self.ranges[buffer])
            for order, buffer in enumerate(self.by_scope.get(scope, []))
            for i in range(slots_of(buffer))
        ]
        best: tuple[int, dict[_Slot, int]] | None = None
        for order in _ORDERS:
            found = _place(sorted(slots, key=order))
            if best is None or found[0] < best[0]:
                best = found
        peak, address = best if best is not None else (0, {})
        addresses: dict[SSAValue, tuple[int, ...]] = {}
        for slot in sorted(slots, key=lambda s: s.index):
            addresses[slot.buffer] = (*addresses.get(slot.buffer, ()), address[slot])
        live_peak, live_at = 0, ()
        for point in sorted({s.first for s in slots}):
            live = [s for s in slots if s.first <= point <= s.last]
            total = sum(s.size for s in live)
            if total > live_peak:
                live_peak = total
                live_at = tuple(dict.fromkeys(s.buffer for s in live))
        return ScopePlan(
            kernel=f"@{self.fn.sym_name.data}",
            scope=scope,
            platform=self.hw.name,
            capacity=self.hw.capacity(scope),
            addresses=addresses,
            peak=peak,
            live_peak=live_peak,
            live_at_peak=live_at,
        )

    def plan(self, slots_of: SlotCount = buffer_slots) -> dict[str, ScopePlan]:
        return {scope: self.plan_scope(scope, slots_of) for scope in self.scopes}


def plan_kernel(fn: func.FuncOp, hw: HardwareModel | None = None) -> dict[str, ScopePlan]:
    """Plan ``fn``'s on-chip buffers, scope by scope (analysis only: the IR is not changed)."""
    return LocalMemoryPlanner(fn, hw or module_preset(fn)).plan()


def record_plan(fn: func.FuncOp, plans: dict[str, ScopePlan]) -> None:
    """Write the addresses on the allocs and the use per scope on the kernel."""
    for plan in plans.values():
        for buffer, starts in plan.addresses.items():
            alloc = buffer.owner
            assert isinstance(alloc, AllocOp)
            alloc.attributes[ADDRESS_ATTR] = IntegerAttr(starts[0], i64)
            if len(starts) > 1:
                alloc.attributes[ADDRESSES_ATTR] = DenseArrayBase.from_list(i64, starts)
            else:
                alloc.attributes.pop(ADDRESSES_ATTR, None)
    fn.attributes[LOCAL_MEMORY_ATTR] = DictionaryAttr(
        {scope: IntegerAttr(plan.peak, i64) for scope, plan in plans.items()}
    )


# ---- the checker --------------------------------------------------------------------------


def check_local_plan(module: ModuleOp) -> int:
    """Prove the on-chip plan of every tiled kernel of ``module``: each buffer has one
    address per slot, aligned, inside its scope's capacity, and no two slots whose buffers'
    live ranges meet share a byte. Re-derived from the IR (liveness, sizes, the preset),
    not from the planner. Returns how many kernels hold on-chip buffers; raises
    :class:`LocalMemoryError` naming the kernel, scope and buffers."""
    hw = module_preset(module)
    checked = 0
    for fn in tiled_kernels(module):
        ranges = live_ranges(fn)
        placed: list[tuple[SSAValue, str, int, int]] = []  # buffer, scope, start, end
        for buffer in ranges:
            placed += [(buffer, scope_of(buffer), s, e) for s, e in _checked_slots(buffer, hw)]
        for i, (a, scope, a_start, a_end) in enumerate(placed):
            for b, other_scope, b_start, b_end in placed[i + 1 :]:
                meet = ranges[a][0] <= ranges[b][1] and ranges[b][0] <= ranges[a][1]
                if other_scope == scope and meet and a_start < b_end and b_start < a_end:
                    raise LocalMemoryError(
                        f"check_local_plan: @{fn.sym_name.data}: {_describe(a)} [{a_start}, "
                        f"{a_end}) and {_describe(b)} [{b_start}, {b_end}) overlap in {scope} "
                        f"while both are live"
                    )
        checked += bool(ranges)
    return checked


def _checked_slots(buffer: SSAValue, hw: HardwareModel) -> list[tuple[int, int]]:
    """[start, end) of each slot of a planned buffer, after the per-buffer checks."""
    where = f"check_local_plan: {_kernel_name(buffer)}: {_describe(buffer)}"
    found = placement(buffer)
    if found is None:
        raise LocalMemoryError(f"{where} has no address (run plan-local-memory)")
    scope, starts, size = found
    slots = buffer_slots(buffer)
    if len(starts) != slots:
        raise LocalMemoryError(f"{where} has {len(starts)} addresses for {slots} slots")
    alloc = buffer.owner
    assert isinstance(alloc, AllocOp)
    first = alloc.attributes.get(ADDRESS_ATTR)
    if not isinstance(first, IntegerAttr) or first.value.data != starts[0]:
        raise LocalMemoryError(f"{where}: address must be the first of its addresses")
    align, capacity = hw.alignment[scope], hw.capacity(scope)
    for start in starts:
        if start % align:
            raise LocalMemoryError(f"{where} at {start} is not aligned to {align} B in {scope}")
        if start < 0 or start + size > capacity:
            raise LocalMemoryError(
                f"{where} at [{start}, {start + size}) is outside {scope} "
                f"({capacity} B on {hw.name})"
            )
    return [(start, start + size) for start in starts]


# ---- the pass -----------------------------------------------------------------------------


@register_pass
@dataclass(frozen=True)
class PlanLocalMemoryPass(ModulePass):
    """Give every on-chip buffer of the tiled kernels an address in its scope."""

    name = "plan-local-memory"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        hw = module_preset(op)
        for fn in tiled_kernels(op):
            plans = LocalMemoryPlanner(fn, hw).plan()
            if not plans:
                continue
            for plan in plans.values():
                if not plan.fits:
                    raise plan.overflow_error()
            record_plan(fn, plans)
            stats.add("kernels")
            for scope, plan in plans.items():
                stats.add("buffers", len(plan.addresses))
                stats.add("slots", sum(len(a) for a in plan.addresses.values()))
                stats.maximum(f"peak-{scope}-bytes", plan.peak)
