"""On-chip memory as the plan says: one byte arena per scope of the running block.

After ``plan-local-memory`` every on-chip ``tile.alloc`` carries the byte address of each
of its slots (:func:`~tilegraph.lowering.analysis.buffers.placement`). The interpreter
then gives every block of a launch a zeroed ``uint8`` arena per scope (L1, L0A, L0B, L0C,
UB), and each buffer is a numpy view of its dtype and shape into that arena at its address.
Buffers the plan lets share bytes share them, so an overlapping plan (two live buffers at
one address) gives wrong numbers, not only an error of the plan's checker.

A buffer with ``multi_buffer = n`` has ``n`` slots (:mod:`tilegraph.lowering.analysis.
buffers`): the ``i``-th iteration (from 0) of its slot loop uses slot ``i mod n``. The
interpreter counts the iterations of every running loop (:class:`LoopCountingFunctions`)
and hands each tile op the slot view of the iteration it runs in
(:func:`slotted_operands`).

A module that was not planned (no addresses) keeps one array per buffer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func, scf
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import SSAValue

from tilegraph.dialects.tile import ON_CHIP, AllocOp, TileOp
from tilegraph.dialects.tile.base import memref_shape
from tilegraph.dialects.tile.host import numpy_dtype
from tilegraph.lowering.analysis.buffers import buffer_slots, placement, slot_loop


@dataclass(frozen=True)
class Placed:
    """A planned on-chip buffer: its scope and the byte address of each slot."""

    scope: str
    addresses: tuple[int, ...]
    nbytes: int


def placed(alloc: AllocOp) -> Placed | None:
    """The plan of an on-chip alloc, None for GM or an unplanned module."""
    found = placement(alloc.result)
    if found is None or found[0] not in ON_CHIP:
        return None
    scope, starts, nbytes = found
    return Placed(scope, starts, nbytes)


def arena_sizes(fn: func.FuncOp) -> dict[str, int]:
    """Bytes each scope's arena needs for kernel ``fn``: the end of its highest slot (so a
    plan outside the scope's capacity still runs, on the addresses it states)."""
    sizes: dict[str, int] = {}
    for op in fn.walk():
        if isinstance(op, AllocOp) and (plan := placed(op)) is not None:
            end = max(plan.addresses) + plan.nbytes
            sizes[plan.scope] = max(sizes.get(plan.scope, 0), end)
    return sizes


def slot_views(alloc: AllocOp, plan: Placed, arenas: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """The buffer's view at each slot's address in its scope's arena."""
    shape = memref_shape(alloc.result.type)
    dtype = np.dtype(numpy_dtype(alloc.result.type))
    arena = arenas[plan.scope]
    return [np.ndarray(shape, dtype, buffer=arena, offset=a) for a in plan.addresses]


@dataclass(frozen=True)
class SlottedOperand:
    """An operand of a tile op that is a multi-buffered planned buffer."""

    position: int
    buffer: SSAValue
    loop: scf.ForOp
    slots: int


def slotted_operands(op: TileOp) -> tuple[SlottedOperand, ...]:
    """The operands of ``op`` whose slot follows the iteration of their slot loop."""
    found = []
    for i, value in enumerate(op.operands):
        alloc = value.owner
        if not isinstance(alloc, AllocOp) or placed(alloc) is None:
            continue
        slots = buffer_slots(value)
        loop = slot_loop(value) if slots > 1 else None
        if loop is not None:
            found.append(SlottedOperand(i, value, loop, slots))
    return tuple(found)


@register_impls
class LoopCountingFunctions(InterpreterFunctions):
    """``scf.for`` as xDSL runs it, recording in ``iterations`` (by loop identity) the
    iteration, counted from 0, each running loop is in: the slot of a multi-buffered
    buffer is that count modulo its slots."""

    def __init__(self, iterations: dict[int, int]) -> None:
        self.iterations = iterations

    @impl(scf.ForOp)
    def run_for(self, interpreter: Interpreter, op: scf.ForOp, args: PythonValues) -> PythonValues:
        lb, ub, step, *carried = args
        values = tuple(carried)
        key = id(op)
        for count, i in enumerate(range(lb, ub, step)):
            self.iterations[key] = count
            values = interpreter.run_ssacfg_region(op.body, (i, *values), "for_loop")
        return values
