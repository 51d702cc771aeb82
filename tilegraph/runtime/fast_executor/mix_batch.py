"""Mix launches run batched: the AIC part's whole tile loop, then the AIV part's.

A mix kernel of the standard protocol (:mod:`tilegraph.lowering.conversion.tiling.mix`)
hands each tile over from the AIC to the AIV through a GM workspace of a few slots; the
cross-core flags only keep the AIC from overwriting a slot the AIV has not read yet. Give
every tile its own slot and the flags order nothing: the AIC part can run all its tiles
first (batched like any cube kernel, :mod:`.batching`), then the AIV part all of its.

:func:`plan_batched_mix` decides from the IR of the two parts whether that holds — not
from names, and never for a kernel whose strategy placed its own hand-overs in both
directions (flash attention) or whose AIC reads what its AIV writes (a recurrence):

* the workspace is a function argument that the AIC only writes, with one op (its fixpipe),
  and the AIV only reads (its copies out of it); nothing else uses it in either part;
* the AIC writes no other GM, and reads no GM argument that the AIV writes — data flows
  from the AIC to the AIV through the workspace only;
* the flags are the protocol's, complete (:func:`_protocol`): per hand-over the AIC waits
  for "free" before its write and sets "ready" after it, the AIV waits for "ready" before
  its reads and sets "free" after them, the AIV sets each "free" flag once at its start
  and the AIC waits for each once at its end — a flag missing or out of place keeps the
  generator path, which reports it (a deadlock, a flag left set);
* the write and every read sit in the same nest of loops (the loops ``split_mix_kernel``
  kept in both parts: the same bounds, and the same ``tile.loop`` ids where they have
  them), whose bounds are known before the kernel runs (constants or the running block's
  index and count); a read may sit in further loops inside those (the guards of the
  AIVs' shares of a tile, :mod:`tilegraph.lowering.conversion.tiling.sub_blocks`): it
  reads the hand-over of the iteration of the nest around it.

A hand-over is then keyed by the iteration numbers ``(iv - lb) // step`` of those loops:
the batched parts (:attr:`BatchedMix.aic` / ``aiv``: the parts without their cross-core
flags) write and read ``workspace[key]`` of a private *expanded* workspace, a copy of the
IR's workspace per key — its shape and the slot offsets inside it are the IR's business,
untouched. Each core group's AIC runs, then its AIVs (sub-block by sub-block), group after
group, with the block indices of the launch; where the IR proves that the blocks of both
parts together compute what block 0 of 1 computes
(:func:`~tilegraph.runtime.fast_executor.blocks.blocks_run_as_one`), each part runs once
as block 0 of 1. The numbers are those of the generator path (:mod:`.mix`), up to the
order of the additions inside a batched product (float32 rounding, as for any batched
cube kernel).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue, Use

from tilegraph.dialects import index_arith
from tilegraph.dialects.tile import TileOp, memref_shape, scope_of
from tilegraph.dialects.tile.barrier import SyncAllOp
from tilegraph.dialects.tile.cross_core import CrossCoreOp, SyncBlockSetOp, SyncBlockWaitOp
from tilegraph.dialects.tile.host import numpy_dtype
from tilegraph.lowering.analysis.kernel_attrs import LOOP_ID_ATTR
from tilegraph.runtime.fast_executor.batching import BLOCK_COUNT, BLOCK_INDEX, Bound, loop_bounds
from tilegraph.runtime.fast_executor.blocks import blocks_run_as_one
from tilegraph.runtime.fast_executor.scratch import scratch
from tilegraph.runtime.tile_interpreter.cross_core import sub_blocks_of

_TO_AIV = "aic_to_aiv"
_TO_AIC = "aiv_to_aic"


@dataclass(frozen=True)
class HandOver:
    """The hand-over ops of one batched part: ``workspace`` (its argument) and the loops
    around its accesses, outermost first (each part's own ops)."""

    workspace: SSAValue
    loops: tuple[scf.ForOp, ...]


@dataclass
class BatchedMix:
    """How a mix kernel's parts run batched (see the module docstring): the parts' clones
    without cross-core flags, their hand-overs, and the expanded workspace's layout."""

    aic: func.FuncOp
    aiv: func.FuncOp
    aic_handover: HandOver
    aiv_handover: HandOver
    workspace_index: int
    workspace_shape: tuple[int, ...]
    workspace_dtype: Any
    bounds: tuple[tuple[Bound, Bound, Bound], ...]
    """(lower, upper, step) of the loops around the hand-over, outermost first."""
    aic_reads: frozenset[int]
    aiv_writes: frozenset[int]
    """The GM arguments the AIC reads and the AIV writes (disjoint; a launch passing one
    buffer as both runs the generator path)."""
    _extents: dict[tuple[int, int], tuple[int, ...]] = field(default_factory=dict)
    _merges: dict[int, bool] = field(default_factory=dict)

    def merges(self, blocks: int) -> bool:
        """Whether a launch of ``blocks`` groups runs each part once, as block 0 of 1: the
        blocks of both parts compute what block 0 of 1 does
        (:func:`~tilegraph.runtime.fast_executor.blocks.blocks_run_as_one`), the block
        index feeding at most the workspace offsets of the hand-overs besides (a group's
        own region of the workspace: in a merged run both parts use group 0's, in every
        hand-over's copy)."""
        found = self._merges.get(blocks)
        if found is None:
            found = self._merges[blocks] = all(
                blocks_run_as_one(part, blocks, _workspace_offset(handover.workspace))
                for part, handover in ((self.aic, self.aic_handover), (self.aiv, self.aiv_handover))
            )
        return found

    def extents(self, block: int, blocks: int) -> tuple[int, ...]:
        """Iterations per hand-over loop when block ``block`` of ``blocks`` runs."""
        found = self._extents.get((block, blocks))
        if found is None:
            names = {**index_arith.NAMESPACE, BLOCK_INDEX: block, BLOCK_COUNT: blocks}
            found = tuple(
                len(range(*(eval(str(b), names) for b in bounds)))  # noqa: S307 - our source
                for bounds in self.bounds
            )
            self._extents[(block, blocks)] = found
        return found

    def run(
        self,
        parts: tuple[Callable[..., Any], Callable[..., Any]],
        args: Sequence[Any],
        groups: int,
        aiv_blocks: int,
        merged: bool,
    ) -> None:
        """Run a launch of ``groups`` core groups (``aiv_blocks`` AIVs) with the compiled
        clones ``parts``: per group its AIC, then its AIVs; ``merged``: once, as block 0
        of 1 (proved by the caller for both parts)."""
        aic, aiv = parts
        sub_blocks = sub_blocks_of(groups, aiv_blocks, self.aic.sym_name.data)
        call = list(args)
        workspace = self.workspace_shape
        if merged and workspace and workspace[0] % groups == 0:
            # one region per group (split-cores): block 0 of 1 only uses the first
            workspace = (workspace[0] // groups, *workspace[1:])
        for block, blocks in [(0, 1)] if merged else [(b, groups) for b in range(groups)]:
            shape = (*self.extents(block, blocks), *workspace)
            call[self.workspace_index] = scratch("mix_workspace", shape, self.workspace_dtype)
            aic(*call, block, blocks, 0)
            for sub in range(sub_blocks):
                aiv(*call, block, blocks, sub)


def _workspace_offset(workspace: SSAValue) -> Callable[[Use], bool]:
    """Whether a use is a GM offset of an op accessing ``workspace`` (a hand-over)."""

    def harmless(use: Use) -> bool:
        op = use.operation
        return (
            isinstance(op, TileOp)
            and workspace in op.operands
            and op.operands[use.index] in op.gm_offsets()
        )

    return harmless


def _loops_around(op: Operation) -> tuple[scf.ForOp, ...] | None:
    """The loops around ``op``, outermost first; None when another region holds it."""
    loops: list[scf.ForOp] = []
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if not isinstance(parent, scf.ForOp):
            return None
        loops.append(parent)
        parent = parent.parent_op()
    return tuple(loops[::-1])


def _argument_of(value: SSAValue, fn: func.FuncOp) -> int | None:
    """The index of the argument of ``fn`` that ``value`` is or views (through ops that
    take a buffer and give one: views, casts), or None."""
    while not isinstance(value, BlockArgument):
        owner = value.owner
        assert isinstance(owner, Operation)
        buffers = [v for v in owner.operands if isinstance(v.type, MemRefType)]
        if len(buffers) != 1:
            return None  # an allocation, or a result of several buffers
        value = buffers[0]
    return fn.body.block.args.index(value) if value.owner is fn.body.block else None


def _gm_arguments(fn: func.FuncOp) -> tuple[set[int], set[int]] | None:
    """Indices of the GM arguments ``fn`` reads and writes; None when a GM buffer it
    touches is none of its arguments' (nor a view of one)."""
    reads: set[int] = set()
    writes: set[int] = set()
    for op in fn.walk():
        if not isinstance(op, TileOp):
            continue
        written = op.written()
        for value, into in [(v, reads) for v in op.read()] + [(written, writes)]:
            if value is None or scope_of(value) != "GM":
                continue
            found = _argument_of(value, fn)
            if found is None:
                return None
            into.add(found)
    return reads, writes


def _flags_one_way(fn: func.FuncOp, sends: str) -> bool:
    """Whether ``fn`` only sets flags of mode ``sends`` and only waits for the other."""
    for op in fn.walk():
        if isinstance(op, SyncBlockSetOp | SyncBlockWaitOp):
            if (op.mode.data == sends) != isinstance(op, SyncBlockSetOp):
                return False
        elif isinstance(op, CrossCoreOp | SyncAllOp):  # a barrier: the groups in lockstep
            return False
    return True


def _flags(fn: func.FuncOp) -> list[SyncBlockSetOp | SyncBlockWaitOp]:
    return [op for op in fn.walk() if isinstance(op, SyncBlockSetOp | SyncBlockWaitOp)]


def _top_level(op: Operation, block: Block) -> Operation | None:
    """The op of ``block`` that is or holds ``op`` (None: ``op`` is not in ``block``)."""
    while op.parent_block() is not block:
        parent = op.parent_op()
        if parent is None:
            return None
        op = parent
    return op


def _per_tile_flags(
    part: func.FuncOp, block: Block, accesses: list[Operation], waits_for: str
) -> tuple[SyncBlockWaitOp, SyncBlockSetOp] | None:
    """The wait (mode ``waits_for``) nearest before and the set (the other mode) nearest
    after a part's workspace ``accesses`` in ``block`` (the hand-over's loop body, or the
    function's of a one-tile kernel), no flag between them, and in a loop body no other
    flag; None otherwise."""
    ops = list(block.ops)
    at = [ops.index(top) for top in (_top_level(a, block) for a in accesses) if top is not None]
    if len(at) != len(accesses):
        return None
    waits = [
        o for o in ops[: min(at)] if isinstance(o, SyncBlockWaitOp) and o.mode.data == waits_for
    ]
    sets = [
        o for o in ops[max(at) + 1 :] if isinstance(o, SyncBlockSetOp) and o.mode.data != waits_for
    ]
    if not waits or not sets:
        return None
    wait, set_ = waits[-1], sets[0]
    between = ops[ops.index(wait) + 1 : ops.index(set_)]
    if any(isinstance(x, CrossCoreOp) for o in between for x in o.walk()):
        return None
    inside = [o for o in _flags(part) if o.parent_block() is block]
    if block is not part.body.block and len(inside) != 2:
        return None  # a loop body: its flags are the hand-over's two
    return wait, set_


def _once_flags(part: func.FuncOp, per_tile: tuple[Operation, Operation]) -> list[int] | None:
    """The flag ids of a part's other flag ops (the AIV's starting "free" sets, the AIC's
    final waits), each at the function's top level without a slot; None otherwise."""
    ids = []
    for op in _flags(part):
        if op in per_tile:
            continue
        if op.parent_block() is not part.body.block or op.slot is not None:
            return None
        ids.append(op.flag_id)
    return sorted(ids)


def _protocol(
    aic: func.FuncOp,
    aiv: func.FuncOp,
    writer: Operation,
    readers: list[Operation],
    depth: int,
) -> bool:
    """Whether the parts' cross-core flags are the standard protocol's, complete
    (:mod:`tilegraph.lowering.conversion.tiling.mix`): per hand-over the AIC waits for
    "free" before its write and sets "ready" after it, the AIV waits for "ready" before
    its reads and sets "free" after them; the AIV sets every "free" flag once at its
    start and the AIC waits for each once at its end. A flag missing or out of place
    keeps the generator path, which reports it (a deadlock, a flag left set)."""
    block = writer.parent_block()
    reads_in = readers[0]
    for _ in range(len(_loops_around(reads_in) or ()) - depth):
        parent = reads_in.parent_op()
        assert parent is not None
        reads_in = parent
    aiv_block = reads_in.parent_block()
    if block is None or aiv_block is None:
        return False
    aic_flags = _per_tile_flags(aic, block, [writer], _TO_AIC)
    aiv_flags = _per_tile_flags(aiv, aiv_block, readers, _TO_AIV)
    if aic_flags is None or aiv_flags is None:
        return False
    (free_wait, ready_set), (ready_wait, free_set) = aic_flags, aiv_flags
    if ready_set.flag_id != ready_wait.flag_id or free_set.flag_id != free_wait.flag_id:
        return False
    finals, starts = _once_flags(aic, aic_flags), _once_flags(aiv, aiv_flags)
    return (
        finals is not None
        and finals == starts
        and finals == list(range(free_wait.flag_id, free_wait.flag_id + len(finals)))
    )


def _loop_key(loops: tuple[scf.ForOp, ...] | None) -> tuple[Any, ...] | None:
    """The loops' ids (where ``split_mix_kernel`` numbered them; ``split-cores`` rebuilds
    the loop it shares out) and bounds; None when a loop's bounds are not known up front."""
    if loops is None:
        return None
    key = []
    for loop in loops:
        bounds = loop_bounds(loop)
        ident = loop.attributes.get(LOOP_ID_ATTR)
        if bounds is None:
            return None
        key.append((ident, tuple(str(b) for b in bounds)))
    return tuple(key)


def _without_flags(fn: func.FuncOp) -> func.FuncOp:
    clone = fn.clone()
    for op in list(clone.walk()):
        if isinstance(op, CrossCoreOp):
            op.detach()
            op.erase()
    return clone


def plan_batched_mix(aic: func.FuncOp, aiv: func.FuncOp) -> BatchedMix | None:
    """How the mix kernel ``aic`` / ``aiv`` runs batched, or None when its IR does not
    follow the one-way protocol the module docstring states."""
    if len(aic.body.block.args) != len(aiv.body.block.args):
        return None
    if not (_flags_one_way(aic, _TO_AIV) and _flags_one_way(aiv, _TO_AIC)):
        return None
    aic_gm, aiv_gm = _gm_arguments(aic), _gm_arguments(aiv)
    if aic_gm is None or aiv_gm is None:
        return None
    (aic_reads, aic_writes), (aiv_reads, aiv_writes) = aic_gm, aiv_gm
    if len(aic_writes) != 1 or aic_reads & aiv_writes:
        return None
    (index,) = aic_writes
    ws_aic, ws_aiv = aic.body.block.args[index], aiv.body.block.args[index]
    if index in aiv_writes or index not in aiv_reads or index in aic_reads:
        return None
    writers = [use.operation for use in ws_aic.uses]
    readers = [use.operation for use in ws_aiv.uses]
    if len(writers) != 1 or not readers:
        return None
    if any(not isinstance(r, TileOp) or ws_aiv not in r.read() for r in readers):
        return None  # a view of the workspace, or an op writing it
    (writer,) = writers
    if not isinstance(writer, TileOp) or writer.written() is not ws_aic:
        return None
    loops = _loops_around(writer)
    key = _loop_key(loops)
    if loops is None or key is None or not _protocol(aic, aiv, writer, readers, len(loops)):
        return None
    for reader in readers:  # in the writer's loops; a loop inside them reads one hand-over
        around = _loops_around(reader)
        if around is None or _loop_key(around[: len(loops)]) != key:
            return None
    ws_type = ws_aic.type
    assert isinstance(ws_type, MemRefType)
    aic_clone, aiv_clone = _without_flags(aic), _without_flags(aiv)
    return BatchedMix(
        aic=aic_clone,
        aiv=aiv_clone,
        aic_handover=_handover(aic_clone, index, len(loops)),
        aiv_handover=_handover(aiv_clone, index, len(loops)),
        workspace_index=index,
        workspace_shape=tuple(memref_shape(ws_type)),
        workspace_dtype=numpy_dtype(ws_type),
        bounds=tuple(b for b in (loop_bounds(loop) for loop in loops) if b is not None),
        aic_reads=frozenset(aic_reads),
        aiv_writes=frozenset(aiv_writes),
    )


def _handover(clone: func.FuncOp, index: int, depth: int) -> HandOver:
    workspace = clone.body.block.args[index]
    loops = _loops_around(next(iter(workspace.uses)).operation)
    assert loops is not None  # checked on the original
    return HandOver(workspace, loops[:depth])
