"""``inject-sync``: explicit flags and barriers between the pipes of every tiled kernel.

The pipes of a core run concurrently (:mod:`tilegraph.dialects.tile.sync`). For every two
tile ops that touch the same buffer — the same value, or buffers that ``plan-local-memory``
placed at overlapping addresses — where at least one writes, on two different pipes, the
consumer must wait for the producer:

* **forward** (the producer comes first in program order): ``set_flag(p -> c)`` right after
  the producer and ``wait_flag(p -> c)`` right before the consumer, both placed in the
  innermost block holding the two (around a nested loop when one of them is inside one: a
  flag set after a loop is raised once every instance of the producer is done);
* **loop-carried** (the consumer comes first: it depends on the producer of the previous
  iteration of the innermost loop around both — e.g. the load of tile ``i + 1`` overwrites
  the buffer the cube still reads for tile ``i``): the same pair inside the loop, with one
  ``set_flag`` before the loop nest (the first iteration has nothing to wait for) and one
  ``wait_flag`` after it (every raised event is consumed). Before the *outermost* loop:
  the buffer is reused across the iterations of the loops around too, so the last event of
  one run of the inner loop is what the first iteration of the next run waits for.

The scalar unit takes part where it reads a buffer (``tile.get_value``: a gather's index
tile, after an MTE2 -> S flag); its other ops are bookkeeping.

A buffer with ``multi_buffer = 2`` (:mod:`tilegraph.lowering.analysis.buffers`) alternates slots by
iteration of its slot loop: the dependences through it carried by that loop are two
iterations apart, and its syncs use one event per slot (``set_flag [%slot]``), so that the
producer may run one iteration ahead — the point of ping-pong buffers.

On one pipe, instructions complete in order, except that the vector unit overlaps
consecutive instructions: a vector op reading another's result gets a
``pipe_barrier {pipe = "V"}`` before it (a model assumption, as for Ascend C's
``PipeBarrier<PIPE_V>``).

Minimal: first, a dependence is not synchronised again when an earlier-or-equal wait after a
later-or-equal set of the same pipe pair in the same block covers it; then every flag pair
(with its prime and drain) and barrier that the others imply — through other pipes too, as
a bias load's MTE2 -> FIX is implied by MTE2 -> MTE1 -> M -> FIX — is removed: the
pipe-queue checker still passes without it on a short walk of the kernel (every loop cut to
three iterations, which shows the first iteration, the steady state and the reuse of a
ping-pong slot; a kernel with a loop whose trip count varies, ``tile.varying_trips``, is
walked in full on every block instead: :mod:`.inject_sync_implied`). Event ids are given
per pipe pair from 0; more than 8 on one pair is a compile error naming the kernel
(:mod:`.inject_sync_events`).

:func:`tilegraph.lowering.analysis.sync_check.check_sync` proves the result sufficient by
running each pipe as its own queue. Statistics: ``kernels``, ``set-wait-pairs`` and
``barriers`` kept, ``implied-pairs-dropped`` and ``implied-barriers-dropped``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from tilegraph.dialects.graph.provenance import locate
from tilegraph.dialects.tile import PipeBarrierOp, SetFlagOp, TileOp, WaitFlagOp
from tilegraph.dialects.tile.scalar import SCALAR_UNIT_OPS
from tilegraph.dialects.tile.sync import SYNC_OPS
from tilegraph.lowering.analysis.buffers import accesses, buffer_slots, slot_loop
from tilegraph.lowering.analysis.kernel_attrs import TILES_ATTR
from tilegraph.lowering.analysis.sync_check import kernel_aliases, launch_blocks, launch_sub_blocks
from tilegraph.lowering.transforms.inject_sync_events import Events, renumber
from tilegraph.lowering.transforms.inject_sync_implied import drop_implied, sync_holds
from tilegraph.lowering.transforms.kernel_memo import KernelMemo
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import start_pass


@dataclass(frozen=True)
class _Dependence:
    block: Block
    producer: Operation
    """The producer's ancestor in ``block`` (the producer itself when it is in ``block``)."""
    consumer: Operation
    pipes: tuple[str, str]
    carried: bool
    """Loop-carried by the loop whose body is ``block``."""
    slot_loop: scf.ForOp | None
    """The slot loop whose parity picks the event (a multi-buffered buffer), or None."""

    @property
    def slotted(self) -> bool:
        return self.slot_loop is not None


@dataclass
class _Plan:
    positions: dict[Block, dict[Operation, int]] = field(default_factory=dict)

    def position(self, op: Operation) -> int:
        block = op.parent_block()
        assert block is not None
        found = self.positions.get(block)
        if found is None:
            found = self.positions[block] = {o: i for i, o in enumerate(block.ops)}
        return found[op]


def _ancestors(op: Operation, top: Block) -> list[Operation]:
    """``op`` and its ancestors up to the one in ``top``, outermost first."""
    chain = [op]
    while chain[-1].parent_block() is not top:
        parent = chain[-1].parent_op()
        assert parent is not None
        chain.append(parent)
    return chain[::-1]


def _slot_loop(buffers: list[SSAValue], block: Block, carried: bool) -> scf.ForOp | None:
    """The slot loop when the only conflicting buffer is multi-buffered and its slot loop
    holds ``block`` — its accesses in one iteration are apart from those of the next — and,
    for a loop-carried dependence, carries it (carried by a loop inside, it is one slot)."""
    if len(buffers) != 1 or buffer_slots(buffers[0]) != 2:
        return None
    loop = slot_loop(buffers[0])
    if carried:
        return loop if block.parent_op() is loop else None
    op = block.parent_op()
    while op is not None and op is not loop:
        op = op.parent_op()
    return loop if op is not None else None


_Access = tuple[tuple[SSAValue, ...], tuple[SSAValue, ...], str]
"""A tile op's (buffers read, buffers written, pipe), read once per op."""


def _conflicts(
    p: _Access, c: _Access, aliases: dict[SSAValue, frozenset[SSAValue]]
) -> list[SSAValue]:
    """Buffers through which ``c`` depends on ``p``: RAW, WAR or WAW across pipes; only RAW
    on the vector unit (its instructions read and write in order, but a result is not
    ready for the next instruction without a barrier); none on another single pipe.
    ``aliases``: each buffer's may-alias set (:func:`kernel_aliases`)."""
    p_reads, p_writes, p_pipe = p
    c_reads, c_writes, c_pipe = c
    if p_pipe == c_pipe:
        pairs = ((p_writes, c_reads),) if p_pipe == "V" else ()
    else:
        pairs = ((p_writes, c_reads), (p_reads, c_writes), (p_writes, c_writes))
    found: list[SSAValue] = []
    for a, b in pairs:
        for x in a:
            aliased = aliases[x]
            for y in b:
                if y in aliased and x not in found:
                    found.append(x)
    return found


def _dependences(
    fn: func.FuncOp, plan: _Plan, aliased: dict[SSAValue, list[SSAValue]]
) -> list[_Dependence]:
    top = fn.body.block
    ops = [
        op
        for op in fn.walk()
        if isinstance(op, TileOp)
        and not isinstance(op, SYNC_OPS)
        and (op.pipe() != "S" or isinstance(op, SCALAR_UNIT_OPS))  # S: bookkeeping, or a read
    ]
    chains = {op: _ancestors(op, top) for op in ops}
    # each op's accesses and each buffer's aliases once: the pairs of ops are quadratic
    aliases = {b: frozenset(found) for b, found in aliased.items()}
    access: dict[TileOp, _Access] = {op: (*accesses(op), op.pipe()) for op in ops}
    found: list[_Dependence] = []
    for p in ops:
        for c in ops:
            if p is c:
                continue
            buffers = _conflicts(access[p], access[c], aliases)
            if not buffers:
                continue
            pa, ca = chains[p], chains[c]
            depth = 0
            while pa[depth] is ca[depth]:
                depth += 1
            a_p, a_c = pa[depth], ca[depth]
            block = a_p.parent_block()
            assert block is not None
            carried = plan.position(a_p) > plan.position(a_c)
            if carried and not isinstance(block.parent_op(), scf.ForOp):
                continue  # the consumer runs before the producer and never again
            found.append(
                _Dependence(
                    block,
                    a_p,
                    a_c,
                    (p.pipe(), c.pipe()),
                    carried,
                    _slot_loop(buffers, block, carried),
                )
            )
    return found


MERGE_ABOVE = 2
"""More flag pairs than this for one pipe pair in one block merge into one."""


def _minimal(deps: list[_Dependence], plan: _Plan) -> list[_Dependence]:
    """Drop each dependence an earlier-or-equal wait after a later-or-equal set covers. When
    more than :data:`MERGE_ABOVE` are left for one pipe pair in one block (five loads each
    feeding a different vector op), they become one: set after the last producer, wait
    before the first consumer — what a hand-written kernel does with one event per slot,
    and the pairs of pipes have only 8 events."""
    groups: dict[tuple, list[_Dependence]] = {}
    for d in deps:
        groups.setdefault((d.block, d.pipes, d.carried, d.slot_loop), []).append(d)
    kept: list[_Dependence] = []
    for group in groups.values():
        group.sort(key=lambda d: (plan.position(d.consumer), -plan.position(d.producer)))
        latest = -1
        left: list[_Dependence] = []
        for d in group:
            if plan.position(d.producer) > latest:
                left.append(d)
                latest = plan.position(d.producer)
        if len(left) > MERGE_ABOVE:
            last = max(left, key=lambda d: plan.position(d.producer))
            first = min(left, key=lambda d: plan.position(d.consumer))
            order_ok = plan.position(last.producer) < plan.position(first.consumer)
            if order_ok != last.carried:
                left = [replace(last, consumer=first.consumer)]
        kept.extend(left)
    return kept


def _barriers(deps: list[_Dependence], plan: _Plan) -> list[tuple[Block, Operation]]:
    """One ``pipe_barrier`` V before a consumer unless one already separates the pair."""
    placed: dict[Block, list[int]] = {}
    chosen: list[tuple[Block, Operation]] = []
    for d in sorted(deps, key=lambda d: plan.position(d.consumer)):
        i, j = plan.position(d.producer), plan.position(d.consumer)
        have = placed.setdefault(d.block, [])
        if d.carried:
            covered = any(k > i or k <= j for k in have)
        else:
            covered = any(i < k <= j for k in have)
        if not covered:
            have.append(j)
            chosen.append((d.block, d.consumer))
    return chosen


def _slot_value(loop: scf.ForOp, slots: int, cache: dict[scf.ForOp, SSAValue]) -> SSAValue:
    """``((iv - lb) / step) mod slots`` at the top of the loop body."""
    found = cache.get(loop)
    if found is None:
        body = loop.body.block
        n_slots = arith.ConstantOp(IntegerAttr(slots, IndexType()))
        offset = arith.SubiOp(body.args[0], loop.lb)
        iteration = arith.FloorDivSIOp(offset, loop.step)  # offset >= 0
        slot = arith.RemSIOp(iteration, n_slots)
        slot.result.name_hint = "slot"
        first = body.first_op
        assert first is not None
        body.insert_ops_before([n_slots, offset, iteration, slot], first)
        found = cache[loop] = slot.result
    return found


def is_iteration_slot(value: SSAValue) -> bool:
    """Whether ``value`` is a loop iteration's slot as :func:`_slot_value` computes it,
    ``((iv - lb) floordiv step) remsi n`` — the same in every block that runs as many
    iterations of the loop (the cycle model simulates one of them)."""
    rem = value.owner
    if not isinstance(rem, arith.RemSIOp):
        return False
    div = rem.lhs.owner
    if not isinstance(div, arith.FloorDivSIOp):
        return False
    sub = div.lhs.owner
    if not isinstance(sub, arith.SubiOp):
        return False
    body = sub.lhs.owner
    if not isinstance(body, Block):
        return False
    loop = body.parent_op()
    return isinstance(loop, scf.ForOp) and sub.rhs is loop.lb and div.rhs is loop.step


def _outermost_loop(loop: scf.ForOp) -> scf.ForOp:
    outer = loop
    parent = loop.parent_op()
    while parent is not None:
        if isinstance(parent, scf.ForOp):
            outer = parent
        parent = parent.parent_op()
    return outer


def inject_sync(fn: func.FuncOp, blocks: int = 1, sub_blocks: int = 1) -> dict[str, int]:
    """Synchronise one tiled kernel launched with ``blocks`` blocks (``sub_blocks`` AIVs
    per group: a mix kernel's AIV part); returns counts for the statistics."""
    plan = _Plan()
    # the buffers' aliases hold throughout: the flags and barriers access no buffer
    aliases = kernel_aliases(fn)
    deps = _dependences(fn, plan, aliases)
    cross = _minimal([d for d in deps if d.pipes[0] != d.pipes[1]], plan)
    same_v = [d for d in deps if d.pipes == ("V", "V")]
    barriers = _barriers(same_v, plan)
    events = Events()
    slot_values: dict[scf.ForOp, SSAValue] = {}
    units: list[list[Operation]] = []
    for d in cross:
        src, dst = d.pipes
        loop = d.block.parent_op()
        slot: SSAValue | None = None
        if d.slot_loop is not None:
            event = events.take(d.pipes, 2)
            slot = _slot_value(d.slot_loop, 2, slot_values)
        else:
            event = events.take(d.pipes, 1)
        unit: list[Operation] = [
            SetFlagOp(src, dst, event, slot),
            WaitFlagOp(src, dst, event, slot),
        ]
        d.block.insert_op_after(unit[0], d.producer)
        d.block.insert_op_before(unit[1], d.consumer)
        if d.carried:
            assert isinstance(loop, scf.ForOp)
            nest = _outermost_loop(loop)
            outer = nest.parent_block()
            assert outer is not None
            for e in range(event, event + (2 if d.slotted else 1)):
                prime, drain = SetFlagOp(src, dst, e), WaitFlagOp(src, dst, e)
                outer.insert_op_before(prime, nest)
                outer.insert_op_after(drain, nest)
                unit += [prime, drain]
        units.append(unit)
    for block, consumer in barriers:
        barrier = PipeBarrierOp("V")
        block.insert_op_before(barrier, consumer)
        units.append([barrier])
    implied = drop_implied(fn, units, blocks, sub_blocks, aliases)
    renumber(
        fn,
        [u for u in units if u[0].parent is not None],
        lambda: sync_holds(fn, blocks, sub_blocks, aliases),
    )
    return {
        "set-wait-pairs": sum(isinstance(u[0], SetFlagOp) for u in units) - implied[0],
        "barriers": len(barriers) - implied[1],
        "implied-pairs-dropped": implied[0],
        "implied-barriers-dropped": implied[1],
    }


def _has_sync(fn: func.FuncOp) -> bool:
    return any(isinstance(op, SYNC_OPS) for op in fn.walk())


@register_pass
@dataclass(frozen=True)
class InjectSyncPass(ModulePass):
    """Insert set_flag / wait_flag / pipe_barrier into every tiled kernel."""

    name = "inject-sync"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        blocks = launch_blocks(op)
        sub_blocks = launch_sub_blocks(op)
        memo: KernelMemo[dict[str, int]] = KernelMemo()  # a model's repeated layers: once
        for fn in [f for f in op.ops if isinstance(f, func.FuncOp)]:
            if TILES_ATTR not in fn.attributes or _has_sync(fn):
                continue
            name = fn.sym_name.data
            counts = memo.apply(fn, inject_sync, blocks.get(name, 1), sub_blocks.get(name, 1))
            locate(fn.body.ops, fn.location)  # the flags: the kernel's location
            stats.add("kernels")
            for key, value in counts.items():
                stats.add(key, value)
