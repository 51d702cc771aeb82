"""``multi-buffer{slots=2}``: ping-pong slots for the buffers the DMA loads in a loop.

A buffer that a load (a DMA op on MTE2 or MTE1: ``tile.copy`` GM -> L1/UB, ``load_5hd``,
``nd2nz``, ``load2d``, ``load3d``, ...) fills inside a loop, and that another pipe reads,
serialises the two pipes: the load of tile ``i + 1`` must wait until the cube or the vector
unit is done with tile ``i``. Marking its ``tile.alloc`` with ``multi_buffer = 2`` gives it
two slots that alternate by iteration of its slot loop (the contract of
:mod:`tilegraph.lowering.analysis.buffers`), so that load and compute overlap::

    %a_ub = tile.alloc {multi_buffer = 2 : i64} : memref<2x100xf32, "UB">

A buffer is a *candidate* when

* all its uses sit inside one loop, its slot loop (with more than one iteration when the
  bounds are constants);
* the first op touching it in that loop's body is a load placed directly in the body, and so
  are all the loads that fill it: every iteration fills its own slot before reading it
  (every load writes its whole destination), and the slots alternate load by load. A load
  in a loop nested inside the slot loop would fill one slot on every iteration of that
  inner loop, keeping the inner loads serialised while doubling the buffer;
* an op on a pipe other than that load's reads it.

Candidates are taken by decreasing load cost — the ``cost_of(op, hw)`` of the loads that fill the
buffer, times their iterations where the loop bounds are constants — and each is marked only
when the kernel's scope still fits with the extra slots, as planned by
``plan-local-memory``'s planner (:class:`~.plan_local_memory.LocalMemoryPlanner`) with the
marks made so far. A buffer already marked is left as it is.

Not counted: synchronisation events. ``inject-sync`` gives a dependence through a
multi-buffered buffer one event per slot, out of 8 per pipe pair, and names the kernel
that would need more.

What the tiling gives: the feature-map window, the bias, the matmul operands, and per K step
the L0A / L0B operands and streamed weights (the K loop is not peeled, so their slot loop is
the K loop: they ping-pong along K), and the vector kernels' inputs.

Options: ``slots`` (default 2; 1 turns the pass off). A kernel attribute
``tile.multi_buffer = n : i64`` overrides it for that kernel (1: never multi-buffer it). A
kernel that ``plan-local-memory`` already planned (marks would invalidate its addresses) or
``inject-sync`` synchronised (its flags do not know the slots) is left alone: run this pass
first.

**Executors.** The interpreter and the fast executor run one op at a time, so one numpy
array per buffer still gives the numbers the slots would: every iteration fills its slot
before reading it. The slots matter to what models the hardware's concurrency: on-chip
planning (each slot has its own address), ``inject-sync`` (accesses to different slots do
not depend on one another) and the cycle model.

**Tiling parameters** ``multi_buffer.<buffer>`` (in the kernel's ``tile.params``, see
:mod:`tilegraph.lowering.analysis.tuning_params`): one boolean per candidate, named by its
alloc's name hint (:func:`buffer_names`); off keeps the buffer at one slot, on (the default)
lets the heuristic give it slots when its scope has room. :func:`multi_buffer_space` lists
them for a tiled kernel.

Statistics: ``candidates``, ``marked``, ``skipped-capacity``, ``kernels-off`` (switched off),
``kernels-late`` (already planned or synchronised).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from tilegraph.cost_model.tile_costs import cost_of
from tilegraph.dialects.tile import AllocOp, TileOp, scope_of
from tilegraph.dialects.tile.base import module_preset
from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.buffers import (
    ADDRESS_ATTR,
    MULTI_BUFFER_ATTR,
    accesses,
    buffer_slots,
    enclosing_loops,
    mark_multi_buffer,
    on_chip_buffers,
    slot_loop,
    tile_ops,
    tiled_kernels,
)
from tilegraph.lowering.analysis.kernel_attrs import KERNEL_SLOTS_ATTR
from tilegraph.lowering.analysis.tuning_params import (
    TilingParam,
    checked_choice,
    kernel_params,
)
from tilegraph.lowering.transforms.plan_local_memory import LocalMemoryPlanner, is_synchronised
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import PassStatistics, start_pass

__all__ = [
    "KERNEL_SLOTS_ATTR",
    "LOAD_PIPES",
    "LoadedBuffer",
    "MultiBufferPass",
    "loaded_buffers",
    "multi_buffer_space",
]

LOAD_PIPES = ("MTE2", "MTE1")
"""The pipes of the loads: GM -> L1/UB (MTE2), L1 -> L0A/L0B/UB (MTE1)."""


@dataclass(frozen=True)
class LoadedBuffer:
    """A candidate: an on-chip buffer a load fills in its slot loop."""

    buffer: SSAValue
    slot_loop: scf.ForOp
    cost: int
    """Cycles of the loads that fill it, over the iterations the constant bounds give."""


def _trip_count(loop: scf.ForOp) -> int | None:
    """Iterations of a loop with constant bounds, else None."""
    bounds = []
    for value in (loop.lb, loop.ub, loop.step):
        op = value.owner
        if not isinstance(op, arith.ConstantOp) or not isinstance(op.value, IntegerAttr):
            return None
        bounds.append(op.value.value.data)
    lower, upper, step = bounds
    return max(0, -(-(upper - lower) // step)) if step > 0 else None


def _executions(op: TileOp) -> int:
    return prod(_trip_count(loop) or 1 for loop in enclosing_loops(op))


def _candidate(buffer: SSAValue, hw: HardwareModel) -> LoadedBuffer | None:
    loop = slot_loop(buffer)
    if loop is None or (_trip_count(loop) or 2) < 2:
        return None
    if not all(isinstance(use.operation, TileOp) for use in buffer.uses):
        return None  # an op whose accesses are unknown
    touching = [op for op in tile_ops(loop) if buffer in (*accesses(op)[0], *accesses(op)[1])]
    first = touching[0]
    reads, writes = accesses(first)
    if (
        first.pipe() not in LOAD_PIPES
        or buffer not in writes
        or buffer in reads
        or first.parent_op() is not loop
    ):
        return None
    loads = [op for op in touching if op.pipe() in LOAD_PIPES and buffer in accesses(op)[1]]
    if any(op.parent_op() is not loop for op in loads):
        return None  # loads in a nested loop would share one slot across its iterations
    pipes = {op.pipe() for op in loads}
    if not any(buffer in accesses(op)[0] and op.pipe() not in pipes for op in touching):
        return None
    cost = sum(cost_of(op, hw) * _executions(op) for op in loads)
    return LoadedBuffer(buffer, loop, cost)


def loaded_buffers(fn: func.FuncOp, hw: HardwareModel) -> list[LoadedBuffer]:
    """The candidates of kernel ``fn`` not marked yet, costliest loads first (ties in
    program order)."""
    found = [
        c
        for b in on_chip_buffers(fn)
        if MULTI_BUFFER_ATTR not in b.owner.attributes  # type: ignore[union-attr]
        and (c := _candidate(b, hw)) is not None
    ]
    return sorted(found, key=lambda c: -c.cost)


def _is_late(fn: func.FuncOp) -> bool:
    """Planned (extra slots would have no address) or synchronised (no flags per slot)."""
    planned = any(ADDRESS_ATTR in b.owner.attributes for b in on_chip_buffers(fn))  # type: ignore[union-attr]
    return planned or is_synchronised(fn)


def _kernel_slots(fn: func.FuncOp, default: int) -> int:
    override = fn.attributes.get(KERNEL_SLOTS_ATTR)
    return override.value.data if isinstance(override, IntegerAttr) else default


PARAM_PREFIX = "multi_buffer."
"""Tiling parameters ``multi_buffer.<buffer>``: one switch per candidate buffer."""


def buffer_names(fn: func.FuncOp) -> dict[SSAValue, str]:
    """Each on-chip buffer's name in the parameters: its alloc's name hint (``a_l1``,
    ``fmap_l1``), with ``_2``, ``_3``, ... on repeats in program order (stable across
    lowerings of a kernel at one point)."""
    names: dict[SSAValue, str] = {}
    seen: dict[str, int] = {}
    for buffer in on_chip_buffers(fn):
        hint = buffer.name_hint or "buffer"
        seen[hint] = seen.get(hint, 0) + 1
        names[buffer] = hint if seen[hint] == 1 else f"{hint}_{seen[hint]}"
    return names


def _switch(name: str) -> TilingParam:
    return TilingParam(
        PARAM_PREFIX + name,
        (False, True),
        True,
        "multi-buffer this buffer when its scope still has room (costliest loads first)",
    )


def multi_buffer_space(fn: func.FuncOp, hw: HardwareModel) -> list[TilingParam]:
    """The parameters ``multi-buffer`` reads on tiled kernel ``fn``: a switch per candidate
    buffer (in program order), default on (the pass's heuristic: every candidate whose
    scope still fits, costliest first). None for a kernel the pass leaves alone."""
    if _kernel_slots(fn, 2) < 2 or _is_late(fn):
        return []
    names = buffer_names(fn)
    candidates = {c.buffer for c in loaded_buffers(fn, hw)}
    return [_switch(names[b]) for b in on_chip_buffers(fn) if b in candidates]


def _switched_on(fn: func.FuncOp, candidates: list[LoadedBuffer]) -> list[LoadedBuffer]:
    """The candidates whose ``multi_buffer.<buffer>`` switch (default on) the kernel's
    ``tile.params`` leaves on."""
    chosen = kernel_params(fn)
    if not any(key.startswith(PARAM_PREFIX) for key in chosen):
        return candidates
    names = buffer_names(fn)
    where = f"kernel @{fn.sym_name.data}"
    return [c for c in candidates if checked_choice(_switch(names[c.buffer]), chosen, where)]


def _fitting(
    fn: func.FuncOp, hw: HardwareModel, slots: int, stats: PassStatistics
) -> list[LoadedBuffer]:
    """The candidates that get ``slots`` slots: costliest loads first (those the kernel's
    parameters switch on), each while its scope still fits with the slots chosen so far."""
    planner = LocalMemoryPlanner(fn, hw)
    chosen: dict[SSAValue, LoadedBuffer] = {}

    def slots_of(buffer: SSAValue) -> int:
        return slots if buffer in chosen else buffer_slots(buffer)

    for candidate in _switched_on(fn, loaded_buffers(fn, hw)):
        stats.add("candidates")
        chosen[candidate.buffer] = candidate
        if planner.plan_scope(scope_of(candidate.buffer), slots_of).fits:
            stats.add("marked")
        else:
            del chosen[candidate.buffer]
            stats.add("skipped-capacity")
    return list(chosen.values())


def _alloc(buffer: SSAValue) -> AllocOp:
    alloc = buffer.owner
    assert isinstance(alloc, AllocOp)
    return alloc


@register_pass
@dataclass(frozen=True)
class MultiBufferPass(ModulePass):
    """Give the buffers the DMA loads in a loop ping-pong slots where the scopes allow."""

    name = "multi-buffer"

    slots: int = 2

    def __post_init__(self) -> None:
        if self.slots < 1:
            raise ValueError(f"multi-buffer: slots must be at least 1, got {self.slots}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        hw = module_preset(op)
        for fn in tiled_kernels(op):
            slots = _kernel_slots(fn, self.slots)
            if slots < 2:
                stats.add("kernels-off")
                continue
            if _is_late(fn):
                stats.add("kernels-late")
                continue
            for candidate in _fitting(fn, hw, slots, stats):
                mark_multi_buffer(_alloc(candidate.buffer), slots)
