"""The registry of tile-op costs: ``@tile_cost(*op_classes)`` and :func:`cost_of`, and the
costs of the ops that only count their issue (the one-cycle default, cross-core flags,
the all-core barrier).

A cost function ``cost(op, hw) -> int`` is registered for op classes with
:func:`tile_cost`, xDSL ``@impl`` style; :func:`cost_of` finds it through the op's class
hierarchy (the most derived registered class wins). ``TileOp`` itself is registered with
:func:`one_cycle`: the cost of the ops that are bookkeeping on the scalar unit or on the
host (allocation, constants, views, flags, barriers, block queries, launches) — an op
that moves or computes data registers its own (tests/test_tile_registries.py lists
the ops allowed the default). The package (:mod:`tilegraph.cost_model.tile_costs`)
imports every module that registers one, so :func:`cost_of` sees them all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilegraph.dialects.tile.barrier import SyncAllOp
from tilegraph.dialects.tile.base import (
    TileOp,
)
from tilegraph.dialects.tile.cross_core import CrossCoreOp
from tilegraph.dialects.tile.registry import OpClassRegistry
from tilegraph.hardware import HardwareModel

CostFunction = Callable[[Any, HardwareModel], int]


"""Cycles of one op on one core of ``hw``."""

_COSTS: OpClassRegistry[CostFunction] = OpClassRegistry("a cost")

tile_cost = _COSTS.register
"""``@tile_cost(*op_classes)``: register the decorated function as the cost of
``op_classes`` (and of their subclasses that have none of their own)."""


def cost_function(op_class: type[TileOp]) -> CostFunction:
    """The cost registered for ``op_class`` or its nearest base (at worst :func:`one_cycle`)."""
    found = _COSTS.lookup(op_class)
    if found is None:
        raise TypeError(f"{op_class.__name__} is not a tile op")
    return found


def cost_of(op: TileOp, hw: HardwareModel) -> int:
    """Cycles ``op`` occupies its pipe on one core of ``hw``."""
    return cost_function(type(op))(op, hw)


@tile_cost(TileOp)
def one_cycle(op: TileOp, hw: HardwareModel) -> int:
    """The default: one cycle (see the module docstring)."""
    return 1


@tile_cost(CrossCoreOp)
def cross_core_flag(op: CrossCoreOp, hw: HardwareModel) -> int:
    """Issuing a cross-core set or wait: one cycle on its pipe (the wait's stall and the
    flag's trip between the cores are the scheduling's, not the op's)."""
    return 1


@tile_cost(SyncAllOp)
def sync_all(op: SyncAllOp, hw: HardwareModel) -> int:
    """The all-core barrier once every block has arrived (the cycle model runs one block of
    a launch whose blocks do equal work, so none waits longer for a slower one): a hard
    barrier is two trips of a message between cores — the arrival and the release, each
    :attr:`~HardwareModel.cross_core_flag_cycles` — a soft one (310P, through a GM
    workspace) adds a GM write of the core's flag and a GM read of the others'. An
    assumption built on the flag's: no barrier latency is published (docs/hardware.md)."""
    trips = 2 * hw.cross_core_flag_cycles
    if op.mode.data == "hard":
        return trips
    return trips + hw.gm_write_latency_cycles + hw.gm_read_latency_cycles
