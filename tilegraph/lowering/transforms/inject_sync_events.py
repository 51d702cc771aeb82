"""Event ids of ``inject-sync`` (:mod:`tilegraph.lowering.transforms.inject_sync`): the flag
pairs a kernel keeps get events 0, 1, ... per pipe pair (a slotted pair takes two), and a
kernel that needs more than the hardware's :data:`~tilegraph.dialects.tile.EVENTS_PER_PAIR`
on a pair is fenced between its loop nests (a ``pipe_barrier`` across all pipes awaits
every event, so each stretch numbers from 0 again; a time loop's nests are fenced apart
too). :func:`renumber` raises :class:`InjectSyncError` naming the kernel when that is not
enough.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import Block, Operation

from tilegraph.dialects.tile import EVENTS_PER_PAIR, PipeBarrierOp, WaitFlagOp
from tilegraph.dialects.tile.sync import ALL_PIPES, FlagOp


class InjectSyncError(ValueError):
    """A kernel needs more events than the hardware has (the message names it)."""


class Events:
    """Distinct event ids per pipe pair, numbered from 0 (renumbered densely, and checked
    against the hardware's 8, once implied flags are dropped: :func:`renumber`)."""

    def __init__(self) -> None:
        self.next: dict[tuple[str, str], int] = {}

    def take(self, pipes: tuple[str, str], count: int) -> int:
        first = self.next.get(pipes, 0)
        self.next[pipes] = first + count
        return first


def _flags(unit: list[Operation]) -> list[FlagOp]:
    return [op for op in unit if isinstance(op, FlagOp)]


def _place_events(unit: list[Operation], first: int) -> None:
    """Move a flag pair's events (its slots, prime and drain alike) to start at ``first``."""
    flags = _flags(unit)
    base = min(op.event_id for op in flags)
    for op in flags:
        op.event = IntegerAttr(first + op.event_id - base, i64)


def _width(unit: list[Operation]) -> int:
    flags = _flags(unit)
    ids = [op.event_id for op in flags]
    return max(ids) - min(ids) + (2 if flags[0].slot is not None else 1)


def _number(units: list[list[Operation]]) -> dict[tuple[str, str], int]:
    """Events 0, 1, ... per pipe pair (a slotted flag pair takes two); events used per pair."""
    used: dict[tuple[str, str], int] = {}
    for unit in units:
        flags = _flags(unit)
        if flags:
            first = used.get(flags[0].pair, 0)
            width = _width(unit)
            _place_events(unit, first)
            used[flags[0].pair] = first + width
    return used


def _top_level(op: Operation, body: Block) -> Operation:
    while op.parent_block() is not body:
        parent = op.parent_op()
        assert parent is not None
        op = parent
    return op


def _nest_end(nest: scf.ForOp, units: list[list[Operation]]) -> Operation:
    """The last op of ``nest``'s side of a fence: of the flags right after it, the last
    wait or the last op of a flag pair used inside the nest (its carried pairs' drains may
    follow the set of a pair the nest produces for a later op, in either order)."""
    inner = {op for unit in units if any(_inside(o, nest.body.block) for o in unit) for op in unit}
    anchor: Operation = nest
    op = nest.next_op
    while isinstance(op, FlagOp):
        if isinstance(op, WaitFlagOp) or op in inner:
            anchor = op
        op = op.next_op
    return anchor


def _fence_nests(
    body: Block, units: list[list[Operation]], cyclic: bool = False
) -> list[list[list[Operation]]]:
    """A barrier across all pipes after each loop nest of ``body`` but the last (after its
    drains): every event is awaited there, so each stretch between barriers numbers its
    events from 0 again. Flag pairs across a barrier go (the barrier implies them). Returns
    the flag pairs left, per stretch. ``cyclic``: ``body`` is a loop's body (a time loop):
    a barrier at its start (the pairs from before the loop go) and after its last nest
    and at its end too (what one iteration leaves is awaited before the next starts), and
    those of its pairs whose prime and drain sit around the loop (a nest's carried pairs)
    prime and drain around their nest instead."""
    nests = [op for op in body.ops if isinstance(op, scf.ForOp)]
    if cyclic:
        _prime_per_nest(body, units)
    fences: list[Operation] = []
    for nest in nests if cyclic else nests[:-1]:
        anchor = _nest_end(nest, units)
        fence = PipeBarrierOp(ALL_PIPES)
        body.insert_op_after(fence, anchor)
        fences.append(fence)
    first, last = body.first_op, body.last_op
    if cyclic and first is not None and last is not None:
        if last.prev_op not in fences:
            fence = PipeBarrierOp(ALL_PIPES)
            body.insert_op_before(fence, last)  # before the yield
            fences.append(fence)
        body.insert_op_before(PipeBarrierOp(ALL_PIPES), first)
    stretch: dict[Operation, int] = {}
    n = 0
    for op in body.ops:
        if op in fences:
            n += 1
        stretch[op] = n
    found: list[list[list[Operation]]] = [[] for _ in range(n + 1)]
    for unit in units:
        where = {stretch.get(_top_level(op, body), -1) for op in unit if _inside(op, body)}
        if len(where) == 1 and all(_inside(op, body) for op in unit):
            found[where.pop()].append(unit)
            continue
        for op in unit:
            op.detach()
            op.erase()
    return found


def _inside(op: Operation, body: Block) -> bool:
    found: Operation | None = op
    while found is not None and found.parent_block() is not body:
        found = found.parent_op()
    return found is not None


def _prime_per_nest(body: Block, units: list[list[Operation]]) -> None:
    """Move the prime and drain of each flag pair set and awaited inside one loop nest of
    ``body`` from around ``body``'s loop to around that nest (each run of the nest starts
    and ends with its events balanced)."""
    for unit in units:
        pair, primes = unit[:2], unit[2:]
        if not primes or not all(_inside(op, body) for op in pair):
            continue
        nests = {_top_level(op, body) for op in pair}
        nest = nests.pop()
        if nests or not isinstance(nest, scf.ForOp) or any(_inside(op, body) for op in primes):
            continue
        for prime, drain in zip(primes[::2], primes[1::2], strict=True):
            prime.detach()
            drain.detach()
            body.insert_op_before(prime, nest)
            body.insert_op_after(drain, nest)


def _reuse(units: list[list[Operation]], body: Block) -> dict[tuple[str, str], int]:
    """Events per pipe pair given by :func:`_number`'s rule, but an event is free again
    once its pair's last op has run: a pair whose ops all come (at ``body``'s top level)
    after another's last one takes that one's event — what a loop does with its one
    event every iteration, the set of the next use possibly issued before the previous
    wait has run. Pairs in one loop nest overlap (their top-level op is the nest) and
    keep distinct events. Events used per pair."""
    position = {op: i for i, op in enumerate(body.ops)}
    spans = []
    for unit in units:
        flags = _flags(unit)
        if flags:
            places = [position[_top_level(op, body)] for op in unit]
            spans.append((min(places), max(places), unit, flags[0].pair))
    busy: dict[tuple[str, str], list[int]] = {}  # per event: the last place it is held
    for start, end, unit, pair in sorted(spans, key=lambda s: (s[0], s[1])):
        held, width = busy.setdefault(pair, []), _width(unit)
        first = next(
            e
            for e in range(len(held) + 1)
            if all(e + k >= len(held) or held[e + k] < start for k in range(width))
        )
        held.extend([-1] * max(0, first + width - len(held)))
        for k in range(width):
            held[first + k] = end
        _place_events(unit, first)
    return {pair: len(held) for pair, held in busy.items()}


def renumber(
    fn: func.FuncOp, units: list[list[Operation]], holds: Callable[[], bool] = lambda: True
) -> None:
    """Give the flag pairs left events 0, 1, ... per pipe pair. A kernel that needs more
    than the hardware's 8 on a pair reuses an event after its pair's last op (straight-line
    code: a gather of constant indices, unrolled, with a flag pair per tile; :func:`_reuse`)
    when ``holds`` (the pipe-queue checker on the kernel so numbered) says it is safe;
    if that is not enough (a chain of loop nests whose buffers share addresses: a concat),
    it gets a barrier across all pipes between its loop nests instead, and numbers
    each stretch between them from 0; a stretch that still needs more and holds a loop of
    loop nests (a recurrent layer's time loop) has its loop's nests fenced apart too."""
    if all(n <= EVENTS_PER_PAIR for n in _number(units).values()):
        return
    top = fn.body.block
    if _fits(_reuse(units, top)) and holds():  # the checker: no event raised twice
        return
    _number(units)  # back to distinct events before fencing
    for stretch in _fence_nests(top, units):
        if _fits(_number(stretch)):
            continue
        loops = {_top_level(op, top) for unit in stretch for op in unit}
        loops = [op for op in loops if isinstance(op, scf.ForOp)]
        inner = [u for u in stretch if loops and _inside(u[0], loops[0].body.block)]
        outside = [u for u in stretch if u not in inner]
        if len(loops) != 1:
            _raise_over(fn, _number(stretch))
        for part in _fence_nests(loops[0].body.block, inner, cyclic=True):
            _raise_over(fn, _number(outside + part))


def _fits(used: dict[tuple[str, str], int]) -> bool:
    return all(n <= EVENTS_PER_PAIR for n in used.values())


def _raise_over(fn: func.FuncOp, used: dict[tuple[str, str], int]) -> None:
    for (src, dst), n in used.items():
        if n > EVENTS_PER_PAIR:
            raise InjectSyncError(
                f"@{fn.sym_name.data}: more than {EVENTS_PER_PAIR} events needed between "
                f"{src} and {dst} in one loop nest"
            )
