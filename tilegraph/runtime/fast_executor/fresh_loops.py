"""Loops whose iterations start afresh: a mix part's tile loops that ``tile.parallel`` does
not mark, proved independent from the IR so that they run as one batch too.

The cube part of a batched mix kernel (:mod:`.mix_batch`) loops over the N blocks of an
output tile inside its parallel M loop: per N block, the K loop's loads and ``mmad``,
then the bias / dequantisation loads and the ``fixpipe`` of the hand-over into the
workspace. The lowering leaves that loop unmarked; run one by one, its iterations cost the
Python dispatch of every op again (16 to 32 times per tile of a transformer's GEMMs). A
loop is *fresh* (:func:`fresh_iterations`) when nothing an iteration computes depends on
an earlier one:

* every on-chip buffer an op in the loop writes is *wholly* written by the first op in
  the loop's body that touches it, before anything in the iteration reads it — by an op
  whose kernel writes its whole destination (:data:`_WHOLE_WRITES`: ``nd2nz``,
  ``load2d``, a load by ``tile.copy``, which fills what the window leaves), or by an
  ``mmad`` that starts its accumulator (its start flag true when every loop inside the
  loop around it is at its lower bound: ``k == 0`` of a K loop, ``kc + k == 0`` of a K
  loop split in two); that first op sits directly in the loop or in loops inside it whose
  constant bounds give at least one iteration;
* the only GM it writes is the hand-over workspace of a batched mix part, every access
  of which is inside the loop and keyed by its iteration number (each iteration its own
  copy of the workspace); no other op writes GM;
* no cross-core flag, barrier, launch, op with results but index arithmetic, or op with a
  buffer operand it neither reads nor names as its destination (a second output).

Buffers the loop only reads (the A tile loaded before it) are the same in every
iteration. So the loop's iterations can run in any grouping, and the last iteration's
buffers are what the loop leaves — the promise ``tile.parallel`` makes.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, Operation, SSAValue

from tilegraph.dialects import index_arith
from tilegraph.dialects.tile import CopyOp, Load2dOp, MmadOp, Nd2NzOp, TileOp, scope_of
from tilegraph.dialects.tile.sync import SyncOp

_WHOLE_WRITES = (Nd2NzOp, Load2dOp)
"""Ops whose kernels write every element of their destination (zero filled around the
data); a load by ``tile.copy`` does too (:func:`_writes_whole`)."""

HandOverLoops = tuple[SSAValue, Sequence[scf.ForOp]]
"""A batched mix part's workspace and the loops keying its copies (:mod:`.mix_batch`)."""


def _constant_trips(loop: scf.ForOp) -> int | None:
    bounds = [_first_value(v, loop) for v in (loop.lb, loop.ub, loop.step)]
    if not all(isinstance(v, int) for v in bounds):
        return None
    lb, ub, step = (int(v) for v in bounds)  # type: ignore[arg-type] - checked just above
    return len(range(lb, ub, step)) if step > 0 else None


def _first_value(value: SSAValue, loop: scf.ForOp) -> int | bool | None:
    """``value`` the first time an op inside ``loop`` reads it in an iteration: a constant,
    the lower bound of a loop inside ``loop`` (its first iteration), or index arithmetic
    of such; None for anything else (``loop``'s own index: it differs per iteration)."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp):
        return index_arith.constant(owner)
    if isinstance(owner, Block):
        inner = owner.parent_op()
        if not isinstance(inner, scf.ForOp) or inner is loop or value is not owner.args[0]:
            return None
        if not loop.is_ancestor(inner):
            return None
        return _first_value(inner.lb, loop)
    if isinstance(owner, index_arith.INDEX_OPS):
        fold = index_arith.evaluator(owner)
        operands = [_first_value(v, loop) for v in owner.operands]
        if fold is None or any(v is None for v in operands):
            return None
        return fold(*operands)
    return None


def _starts_accumulator(op: MmadOp, loop: scf.ForOp) -> bool:
    """``op``'s start flag is true the first time it runs in an iteration of ``loop``."""
    first = _first_value(op.init, loop)
    return first is not None and bool(first)


def _writes_whole(op: TileOp, loop: scf.ForOp) -> bool:
    if isinstance(op, _WHOLE_WRITES):
        return True
    if isinstance(op, CopyOp):  # a load: the window, and the fill where it is cut
        return scope_of(op.src) == "GM" or scope_of(op.dst) == "UB"
    return isinstance(op, MmadOp) and _starts_accumulator(op, loop)


def _runs_at_least_once(op: Operation, loop: scf.ForOp) -> bool:
    """Every loop between ``op`` and ``loop`` has constant bounds and an iteration."""
    parent = op.parent_op()
    while parent is not loop:
        if not isinstance(parent, scf.ForOp) or not _constant_trips(parent):
            return False
        parent = parent.parent_op()
    return True


def _on_chip(value: SSAValue) -> bool:
    return isinstance(value.type, MemRefType) and scope_of(value) != "GM"


def fresh_iterations(loop: scf.ForOp, handover: HandOverLoops | None) -> bool:
    """Whether ``loop``'s iterations are independent (see the module docstring):
    ``handover``, the workspace of the batched mix part being compiled and the loops keying
    its copies (None: no GM write allowed at all)."""
    if loop.iter_args:
        return False
    ops = [op for op in loop.body.block.walk()]
    written = {w for op in ops if isinstance(op, TileOp) and (w := op.written()) is not None}
    fresh: set[SSAValue] = set()
    for op in ops:
        if isinstance(op, SyncOp | scf.ForOp | scf.YieldOp | arith.ConstantOp):
            continue
        if isinstance(op, index_arith.INDEX_OPS):
            continue
        if not isinstance(op, TileOp) or op.results:
            return False  # flags, barriers, launches, scalar reads: not proved here
        target = op.written()
        accounted = {*op.read(), target}
        if any(isinstance(v.type, MemRefType) and v not in accounted for v in op.operands):
            return False  # a buffer the op neither reads nor names as written: a 2nd output
        if target is not None and not _on_chip(target):
            if handover is None or target is not handover[0] or loop not in handover[1]:
                return False  # GM that iterations may share
        starts = isinstance(op, MmadOp) and _starts_accumulator(op, loop)
        for value in op.read():
            if value is target and starts:
                continue  # read after the start (the K loop's later steps)
            if _on_chip(value) and value in written and value not in fresh:
                return False  # read before this iteration wrote it: an earlier one's
        if target is not None and _on_chip(target) and target not in fresh:
            if not (_writes_whole(op, loop) and _runs_at_least_once(op, loop)):
                return False
            fresh.add(target)
    return True
