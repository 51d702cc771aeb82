"""The last step of ``inject-sync`` (:mod:`tilegraph.lowering.transforms.inject_sync`):
every flag pair (with its prime and drain) and barrier that the others imply is removed —
the pipe-queue checker (:mod:`tilegraph.lowering.analysis.sync_check`) still passes without
it on short walks of the kernel (:func:`drop_implied`).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.tile import PipeBarrierOp, SetFlagOp
from tilegraph.lowering.analysis.kernel_attrs import VARYING_TRIPS_ATTR
from tilegraph.lowering.analysis.kernel_walk import WalkPlan
from tilegraph.lowering.analysis.sync_check import (
    SyncError,
    check_trace,
    distinct_traces,
    kernel_aliases,
    trace_kernel,
)

_SHORT_WALK = 3
"""Iterations per loop the implication check walks: the first, the steady state, and the
reuse of a ping-pong slot two iterations on."""


def _may_be_implied(unit: list[Operation], others: list[list[Operation]]) -> bool:
    """Cheap necessary condition: another barrier, or a chain of other flags leading from
    the unit's source pipe to its destination pipe."""
    first = unit[0]
    if isinstance(first, PipeBarrierOp):
        return any(isinstance(u[0], PipeBarrierOp) for u in others)
    assert isinstance(first, SetFlagOp)
    src, dst = first.pair
    edges = [u[0].pair for u in others if isinstance(u[0], SetFlagOp)]
    reached, frontier = {src}, [src]
    while frontier:
        pipe = frontier.pop()
        for a, b in edges:
            if a == pipe and b not in reached:
                reached.add(b)
                frontier.append(b)
    return dst in reached


def _traces(fn: func.FuncOp, blocks: int, sub_blocks: int):  # noqa: ANN202
    """The walks the checks run: the first and the last block on short walks (every block
    in full when a loop's trip count varies), each AIV sub-block of a mix kernel."""
    # a loop whose trip count varies shows all its patterns only on the full walk of
    # every block (each block's share of the outer loops meets other trip counts)
    varying = any(VARYING_TRIPS_ATTR in op.attributes for op in fn.walk())
    walk = None if varying else _SHORT_WALK
    plan = WalkPlan()  # the blocks' walks run the same IR
    return distinct_traces(  # every sub-block of a mix kernel's AIV: other shares of a tile
        trace_kernel(fn, block, blocks, walk, sub, plan)
        for block in (range(blocks) if varying else {0, blocks - 1})
        for sub in range(sub_blocks)
    )


def sync_holds(
    fn: func.FuncOp,
    blocks: int,
    sub_blocks: int = 1,
    aliases: dict[SSAValue, list[SSAValue]] | None = None,
) -> bool:
    """Whether the pipe-queue checker passes ``fn`` as it is on :func:`drop_implied`'s walks
    (``inject-sync`` asks after reusing events: a set must not raise an event again before
    its previous wait). ``aliases``: ``fn``'s :func:`kernel_aliases` (default: read now;
    adding or removing flags does not change them)."""
    aliases = kernel_aliases(fn) if aliases is None else aliases
    try:
        for trace in _traces(fn, blocks, sub_blocks):
            check_trace(fn, trace, aliases, set())
    except SyncError:
        return False
    return True


def drop_implied(
    fn: func.FuncOp,
    units: list[list[Operation]],
    blocks: int,
    sub_blocks: int = 1,
    aliases: dict[SSAValue, list[SSAValue]] | None = None,
) -> tuple[int, int]:
    """Remove each flag pair (with its prime and drain) or barrier the remaining ones imply:
    the pipe-queue checker still passes without it on short walks of the kernel (every
    loop cut to a few iterations) as the first and the last of its ``blocks`` run it — the
    blocks' share of the split loop differs by at most one iteration, and what is implied
    can depend on it (with one iteration per block, a producer runs further ahead), and as
    each of ``sub_blocks`` AIVs of a group runs it (their shares of a tile differ). Latest
    inserted first, so that a flag implied through other pipes (a bias load's MTE2 -> FIX,
    implied by MTE2 -> MTE1 -> M -> FIX) goes and the direct chain stays. ``aliases``: as
    :func:`sync_holds`'."""
    traces = _traces(fn, blocks, sub_blocks)
    aliases = kernel_aliases(fn) if aliases is None else aliases
    removed: set[Operation] = set()
    dropped = [0, 0]
    for unit in reversed(units):
        if not _may_be_implied(unit, [u for u in units if u is not unit and u[0] not in removed]):
            continue
        trial = removed | set(unit)
        try:
            for trace in traces:
                check_trace(fn, trace, aliases, trial)
        except SyncError:
            continue
        removed = trial
        dropped[isinstance(unit[0], PipeBarrierOp)] += 1
    for op in removed:
        op.detach()
        op.erase()
    return dropped[0], dropped[1]
