"""A launch's core groups run together: one batched step per op for all of them.

A launch whose kernel holds an all-core barrier (``tile.sync_all``: a recurrent layer
shared over the cores, :mod:`tilegraph.lowering.conversion.tiling.recurrent_cores`) runs
its blocks (a mix launch: its core groups) as generators switching at the barrier and the
cross-core flags (:mod:`.mix`), tile by tile, group by group; so does a mix launch without
one whose hand-overs are not the one-way protocol :mod:`.mix_batch` batches (flash
attention): ``G`` groups cost ``G`` times the Python dispatch of every op. Where the IR
proves that the groups run the same program on block-indexed data, this module runs them
as *one* virtual group whose every value that depends on the block index carries a
leading block axis: the block index is
``np.arange(G)``, an index computed from it an array, and every on-chip buffer written
from such data one slot per group (the batching of a nest of loops, :mod:`.batching`, with
the block axis as its only axis). Each op then runs once for all groups, through its
batched form (:mod:`.forms`).

The proof, :func:`plan_groups` per part and :func:`groups_run_together` per launch:

* every group takes the same path: the block index (and what is computed from it) feeds
  tile ops' operands and index arithmetic only — no loop-carried value, no cross-core
  flag's slot, no loop bound but those of a loop every group runs as many trips of (the
  work loop ``split-cores`` shares out by block, checked per launch: its induction
  variable is then one per group, :attr:`~.batching.NestPlan.shifted`) — so every group
  runs the same ops, the same flags and barriers, in the same order (the flags of the
  virtual group are those of every group);
* an on-chip buffer given a slot per group is allocated at the kernel's entry
  (``tile.alloc``), so the slots replace it for the whole run;
* no group reads or writes GM another group writes between two barriers
  (:func:`~tilegraph.lowering.analysis.barrier_check.check_launch`, the cross-block
  checker, passes): within an interval between barriers the groups' accesses of what they
  exchange are disjoint, so doing op ``k`` for every group before op ``k + 1`` for any
  computes what group after group does.

Running together pays from about :data:`FEWEST_GROUPS` groups: a batched form costs more
per call than a tile's kernel (it computes the windows of every group), so two groups of
small tiles run faster group by group.

Otherwise the launch keeps the generator path, which runs what the IR says group by group
(a missing barrier then gives the stale reads it gives on the chip).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import arith, func, scf

from tilegraph.dialects import index_arith
from tilegraph.dialects.tile import AllocOp, BlockIdxOp, TileOp
from tilegraph.dialects.tile.barrier import SyncAllOp
from tilegraph.dialects.tile.cross_core import CrossCoreOp
from tilegraph.lowering.analysis.barrier_check import check_launch
from tilegraph.lowering.analysis.sync_error import SyncError
from tilegraph.runtime.fast_executor.batching import (
    BLOCK_COUNT,
    Axis,
    NestPlan,
    loop_bounds,
    propagate,
    varying_bounds,
)
from tilegraph.runtime.fast_executor.blocks import iterations
from tilegraph.runtime.fast_executor.mix import drive
from tilegraph.runtime.tile_interpreter.cross_core import MixFlags, MixPart

FEWEST_GROUPS = 4
"""The fewest groups a launch runs together. Measured (CPU time, a 910B LSTM of seq 8,
hidden 16 per group): 2 groups run 1.2x slower together, 3 even, 4 / 8 / 24 groups 1.3x /
1.5x / 2x faster (docs/tile-level.md, "A lockstep launch's core groups together")."""

_RUNS_AS_GROUPS = (TileOp, scf.ForOp, scf.YieldOp, arith.ConstantOp, func.ReturnOp)
"""The ops a part run for all groups at once may hold (index arithmetic besides)."""


def plan_groups(fn: func.FuncOp) -> NestPlan | None:
    """The batch of kernel ``fn`` run for all blocks of a launch at once (one axis: the
    block; ``BLOCK_COUNT`` its size), or None when the groups may take different paths or
    a buffer to slot is not allocated at the kernel's entry (see the module docstring)."""
    entry = fn.body.block
    body = list(entry.walk())
    if any(not isinstance(op, _RUNS_AS_GROUPS + index_arith.INDEX_OPS) for op in body):
        return None
    plan = NestPlan(axes=[Axis(None, (0, BLOCK_COUNT, 1), False)])
    for op in body:
        if isinstance(op, BlockIdxOp):
            plan.varying[op.results[0]] = frozenset((0,))
    if not plan.varying:
        return None  # nothing differs from group to group: nothing to batch
    fixed = {op for op in body if not (isinstance(op, AllocOp) and op.parent_block() is entry)}
    while not propagate(plan, body, fixed):
        varied = varying_bounds(plan, body)
        if not varied or any(loop.iter_args for loop in varied):
            return None
        for loop in varied:  # a work loop shared out by block: trip by trip, iv per group
            plan.shifted.add(loop)
            plan.varying[loop.body.block.args[0]] = frozenset((0,))
    for value in plan.varying:
        for use in value.uses:
            user = use.operation
            if isinstance(user, CrossCoreOp | SyncAllOp):
                return None  # a group's own flag: the groups' flags differ
            if user in plan.shifted and use.index < 3:
                continue  # its trips are checked per launch (groups_run_together)
            if not isinstance(user, (TileOp, *index_arith.INDEX_OPS)):
                return None  # a loop bound or a carried value: the paths may differ
    return plan


def _same_trips(plan: NestPlan, groups: int) -> bool:
    """Whether every shifted loop of ``plan`` takes as many trips in each of ``groups``
    groups (its bounds known from the block index and count)."""
    for loop in plan.shifted:
        bounds = loop_bounds(loop)
        if bounds is None:
            return False
        try:
            trips = {len(iterations(bounds, b, groups)) for b in range(groups)}
        except ValueError:  # a step of 0 for some group
            return False
        if len(trips) != 1:
            return False
    return True


def groups_run_together(
    parts: Sequence[func.FuncOp], groups: int, sub_blocks: int = 1
) -> tuple[NestPlan, ...] | None:
    """Each part's batch (:func:`plan_groups`) when the ``groups`` groups of a launch of
    ``parts`` (a plain kernel, or a mix kernel's AIC and AIV with ``sub_blocks`` AIVs per
    group) may run together, else None (see the module docstring)."""
    if groups < max(2, FEWEST_GROUPS):
        return None
    plans = tuple(plan_groups(fn) for fn in parts)
    if any(plan is None or not _same_trips(plan, groups) for plan in plans):
        return None
    aiv = parts[1] if len(parts) > 1 else None
    try:
        check_launch(parts[0], groups, aiv, sub_blocks)
    except SyncError:
        return None  # the groups exchange data unordered: group by group, as the IR says
    return tuple(plan for plan in plans if plan is not None)


GroupsPart = tuple[str, str, Callable[..., Any]]
"""A part's function name, its core ("aic" / "aiv") and its compiled batched function."""


def run_groups(
    parts: Sequence[GroupsPart], args: tuple[Any, ...], groups: int, sub_blocks: int
) -> None:
    """Run a launch of ``groups`` groups with its parts compiled for all groups at once: one
    virtual group (one AIC part and ``sub_blocks`` AIVs, or a plain kernel's one block)
    driven through its flags and barriers, each part told the group count."""

    def body(fn: Callable[..., Any], sub: int) -> Callable[[], Any]:
        return lambda: fn(*args, 0, groups, sub)

    members: list[MixPart] = []
    for name, core, fn in parts:
        for sub in range(sub_blocks if core == "aiv" and len(parts) > 1 else 1):
            members.append(MixPart(name, core, body(fn, sub), sub, 0))
    drive(MixFlags(members, group_first=True))


def slotted(buffer: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
    """A buffer allocated inside a batch (:mod:`.lockstep`): one slot per point of
    ``batch``, each starting with the buffer's contents."""
    return np.broadcast_to(buffer, (*batch, *buffer.shape)).copy()


def first_point(bound: Any) -> int:
    """A loop bound of the first point of a batch (an int, or an array of one per point)."""
    return int(bound[0]) if isinstance(bound, np.ndarray) else bound


def per_group(value: Any, groups: int) -> np.ndarray:
    """An index that varies along the groups, one value per group (an int is every
    group's)."""
    return value if isinstance(value, np.ndarray) else np.full(groups, value)
