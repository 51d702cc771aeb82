"""When the blocks of a launch may run as one call (the fast executor's block merging).

The fast executor runs every block of a ``tile.launch`` with the index and count the launch
gives (:mod:`.codegen`). Running ``n`` blocks one after the other costs ``n`` times the
Python dispatch of a kernel, each on ``1/n`` of the work; where the IR *proves* that the
blocks together compute what one block of one computes, the launch calls the kernel once
as block 0 of 1 instead, which batches the whole work loop (:mod:`.batching`).

The proof, :func:`blocks_run_as_one`, reads the kernel, not ``split-cores``' intentions:

* the block queries feed nothing but the bounds of ``tile.parallel`` loops (through
  ``+``, ``-``, ``*`` with constants), nested only in ``tile.parallel`` loops, the
  flags of ``inject-sync`` (whose event ids follow a block's own iteration count; the fast
  executor runs one op at a time and ignores flags, so they change no value), and a mix
  part's workspace region (:mod:`tilegraph.lowering.analysis.mix_workspace`: scratch
  that a core group writes and reads back itself, so block 0 of 1 keeps all of it in
  region 0);
* no op outside those loops writes GM (everything a block does outside them is on-chip,
  so doing it once or ``n`` times is the same);
* evaluating each loop's bounds for each block ``b`` of ``n`` gives iteration sets that
  are pairwise disjoint and together exactly the iterations of block 0 of 1;
* with several such loops (``split-cores`` shares each nest of a data-movement, concat or
  resize kernel on its own), no tile op of the kernel reads a GM buffer one of them
  writes (:func:`~tilegraph.lowering.analysis.gm_access.passes_data_through_gm`), so
  which block runs a nest's iterations, and when, changes nothing.

``tile.parallel`` promises that the loop's iterations write disjoint GM and keep no
on-chip state from one to the next, so their order and grouping do not matter. A wrong
split (an offset that repeats or skips iterations, a wrong share) fails the last check, and
its blocks run one by one, as the IR says: the numbers come out as wrong as on the chip.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import func, scf
from xdsl.ir import Operation, SSAValue, Use

from tilegraph.dialects import index_arith
from tilegraph.dialects.tile import BlockIdxOp, BlockNumOp, TileOp
from tilegraph.dialects.tile.sync import SyncOp
from tilegraph.lowering.analysis.gm_access import passes_data_through_gm
from tilegraph.lowering.analysis.kernel_attrs import PARALLEL_ATTR, mix_part
from tilegraph.lowering.analysis.mix_workspace import WORKSPACE_ACCESSES
from tilegraph.runtime.fast_executor.batching import BLOCK_COUNT, BLOCK_INDEX, Bound, loop_bounds

Harmless = Callable[[Use], bool]
"""Uses of a block query (or of arithmetic on one) that a caller knows change no result
of a merged run (a batched mix part's workspace offsets, :mod:`.mix_batch`)."""


def _places_workspace(fn: func.FuncOp, use: Use) -> bool:
    """``use`` is the offset of a mix part's workspace access (the operand right after the
    workspace, its last argument): the running group's region."""
    op, workspace = use.operation, fn.body.block.args[-1]
    return (
        mix_part(fn) is not None
        and use.index > 0
        and isinstance(op, WORKSPACE_ACCESSES)
        and op.operands[use.index - 1] is workspace
    )


def _block_loops(fn: func.FuncOp, harmless: Harmless | None = None) -> list[scf.ForOp] | None:
    """The loops whose bounds the block queries feed, or None when a query (or arithmetic
    on one) has any other use (but ``harmless`` ones)."""
    loops: list[scf.ForOp] = []
    pending: list[SSAValue] = [
        op.results[0] for op in fn.walk() if isinstance(op, BlockIdxOp | BlockNumOp)
    ]
    seen: set[SSAValue] = set()
    while pending:
        value = pending.pop()
        if value in seen:
            continue
        seen.add(value)
        for use in value.uses:
            user = use.operation
            if isinstance(user, SyncOp) or _places_workspace(fn, use):
                continue  # flags order the pipes; a group's workspace region is its own
            if harmless is not None and harmless(use):
                continue
            if isinstance(user, index_arith.INDEX_OPS):
                pending.extend(user.results)
            elif isinstance(user, scf.ForOp) and use.index < 3:  # lb, ub, step
                if user not in loops:
                    loops.append(user)
            else:
                return None
    return loops


def iterations(bounds: tuple[Bound, Bound, Bound], block: int, blocks: int) -> range:
    """The iterations of a loop of bounds ``bounds`` (:func:`loop_bounds`) when block
    ``block`` of ``blocks`` runs it."""
    names = {**index_arith.NAMESPACE, BLOCK_INDEX: block, BLOCK_COUNT: blocks}
    lb, ub, step = (eval(str(b), names) for b in bounds)
    return range(lb, ub, step)


def _enclosed_by_parallel_loops(loop: scf.ForOp, fn: func.FuncOp) -> bool:
    parent = loop.parent_op()
    while parent is not fn and parent is not None:
        if isinstance(parent, scf.ForOp) and PARALLEL_ATTR not in parent.attributes:
            return False
        parent = parent.parent_op()
    return True


def _writes_gm_outside(fn: func.FuncOp, loops: list[scf.ForOp]) -> bool:
    inside: set[Operation] = {op for loop in loops for op in loop.walk()}
    for op in fn.walk():
        if isinstance(op, TileOp) and op not in inside and op.writes_gm():
            return True
    return False


def blocks_run_as_one(fn: func.FuncOp, blocks: int, harmless: Harmless | None = None) -> bool:
    """Whether ``blocks`` blocks of kernel ``fn`` compute exactly what block 0 of 1 does
    (see the module docstring for the proof; ``harmless``: uses of the block queries the
    caller vouches for)."""
    if blocks == 1:
        return True
    loops = _block_loops(fn, harmless)
    if not loops or _writes_gm_outside(fn, loops):
        return False
    if len(loops) > 1 and passes_data_through_gm(fn):
        return False  # block b's second nest may read what block b + 1's first writes
    return all(_shares_partition(loop, fn, blocks) for loop in loops)


def _shares_partition(loop: scf.ForOp, fn: func.FuncOp, blocks: int) -> bool:
    """Whether ``loop`` is a parallel loop, nested in parallel loops only, whose
    iterations for each of ``blocks`` blocks are disjoint and together those of block 0
    of 1."""
    if PARALLEL_ATTR not in loop.attributes or not _enclosed_by_parallel_loops(loop, fn):
        return False
    bounds = loop_bounds(loop)
    if bounds is None:
        return False
    try:
        whole = iterations(bounds, 0, 1)
        shares = [iterations(bounds, b, blocks) for b in range(blocks)]
    except ValueError:  # a step of 0 for some block
        return False
    covered = sorted(i for share in shares for i in share)
    return covered == list(whole)
