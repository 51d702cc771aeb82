"""Running a mix launch: the AIC and AIV parts in an order their cross-core flags allow.

A mix launch (``tile.launch @aic(...) {aiv = @aiv, blocks = n, aiv_blocks = r * n}``) runs,
per core group ``g``, AIC instance ``g`` and AIV instances ``g * r .. g * r + r - 1``
(sub-blocks ``0 .. r-1``, :class:`~tilegraph.dialects.tile.cores.SubBlockIdxOp`) side by
side; they exchange data through the group's region of a multi-buffered GM workspace
(:mod:`tilegraph.lowering.analysis.mix_workspace`) and order it with
``tile.sync_block_set`` / ``tile.sync_block_wait`` (:mod:`tilegraph.dialects.tile.
cross_core`) in Ascend C's mode 2: a set on the AIC adds one to the flag's counter on
*every* AIV of its group; a set on an AIV adds one to the AIC's counter of that flag *from
that AIV*, and a wait on the AIC takes one from the counter of every AIV of the group (it
waits until all of them have set the flag); each group has counters of its own. Running the
whole AIC part first would overwrite workspace slots the AIVs have not read yet, so both
executors run the parts as coroutines, exactly one of them running at a time and switching
where a part waits for a flag whose counter is zero.

The interpreter (:class:`MixRun`: each part in a thread of its own, a baton handed over)
runs *all* the groups of a launch in one run, interleaved as the chip runs them at once:
after every cross-core flag op the running part gives the turn to the next runnable part,
round robin over the groups' parts (:meth:`MixFlags.next_part` with ``rotate``). So a
workspace region two groups share is overwritten between one group's write and its read,
and gives a wrong number rather than passing unnoticed. The order of turns depends on
nothing but the IR, so a run is deterministic. The fast executor runs the groups one after
the other, each part going on as long as it can (the AIC runs ahead as far as the free
slots let it): a correct kernel gives the same numbers in any order.

:class:`CrossCoreError` (a ``KernelError`` for the executors' callers) reports what real
hardware would hang on or lose:

* a *deadlock*: every unfinished part waits for a flag nobody will set;
* an *overflow*: a flag set more than :data:`CROSS_CORE_MAX_PENDING` times without a wait;
* a flag *left set* when all parts finished (a wait is missing: on the next launch it would
  release a wait too early).

**The all-core barrier** (``tile.sync_all``, :mod:`tilegraph.dialects.tile.barrier`): a
launch of a kernel holding one runs all its blocks (a mix launch's parts of every group)
in one run, the barrier a wait of its own — a part that arrives waits until every part it
synchronises with (all, or the AIVs) has arrived as often (:meth:`MixFlags.arrive`,
:meth:`MixFlags.barrier_open`); a part that finishes without arriving leaves the others in
a deadlock, reported like a flag's.

The kernels of the flag ops (registered here for both executors) act on the run of the
calling thread; outside a mix launch they are errors.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from tilegraph.dialects.tile.barrier import SOFT_SLOT_ELEMENTS, SyncAllOp
from tilegraph.dialects.tile.base import TileOp
from tilegraph.dialects.tile.cross_core import (
    CROSS_CORE_MAX_PENDING,
    CrossCoreOp,
    SyncBlockSetOp,
)
from tilegraph.runtime.tile_interpreter.kernels import Kernel, tile_kernel

if TYPE_CHECKING:
    from tilegraph.runtime.tile_interpreter.gm_races import GmRaces


class CrossCoreError(RuntimeError):
    """A mix launch's cross-core flags are wrong (deadlock, overflow, a flag left set)."""


class _Cancelled(BaseException):
    """Unwinds a part's thread after another part failed (not an error of its own)."""


Counter = tuple[int, str, int, int]
"""(core group, receiving part, flag id, sending sub-block): one flag counter."""


class MixPart:
    """One part of a core group: its AIC or one of its AIVs."""

    def __init__(self, name: str, core: str, body: Callable[[], Any], sub: int = 0, group: int = 0):
        self.name = name
        self.core = core
        self.sub = sub
        """The AIV's sub-block in its group (0 for the AIC)."""
        self.group = group
        """The part's core group (its ``tile.block_idx``)."""
        self.body = body
        self.waiting: list[Counter] | None = None
        """The counters the part waits for (each must be positive), or None."""
        self.done = False
        self.error: BaseException | None = None
        self.barriers = 0
        """The all-core barriers (``tile.sync_all``) the part has arrived at."""
        self.at_barrier: str | None = None
        """While the part waits at a barrier: whose arrival it waits for ("all" / "aiv")."""

    @property
    def key(self) -> str:
        """The part's name among its group's: "aic", "aiv0", "aiv1", ..."""
        return "aic" if self.core == "aic" else f"aiv{self.sub}"


class _Part(MixPart):
    def __init__(self, name: str, core: str, body: Callable[[], Any], sub: int = 0, group: int = 0):
        super().__init__(name, core, body, sub, group)
        self.turn = threading.Event()


_LOCAL = threading.local()


class MixFlags:
    """The flag counters of the core groups of a mix launch (one group, or all of them)
    and the order their parts run in, whatever runs them (the interpreter's threads, the
    fast executor's generators): a set adds to the counters mode 2 names in its group, a
    wait takes from them once all are positive, the scheduler gives the turn to the next
    runnable part from the current one on."""

    def __init__(self, parts: Sequence[MixPart], group_first: bool = False):
        """``group_first``: when the running part stops, the turn goes to the next runnable
        part of its own core group before any other group's (the fast executor's
        lockstep: a group runs as far ahead as its flags and barriers let it, so a block
        that reads what another has not written yet for want of a barrier reads stale
        data)."""
        self.parts = list(parts)
        self.group_first = group_first
        self.counters: dict[Counter, int] = {}
        self._current = 0
        self._fewest: dict[str, int] = {}
        self._aiv_parts: dict[int, list[MixPart]] = {}
        self._keys: dict[tuple[int, int, bool], list[Counter]] = {}
        """The counters per (part's index, flag, a set): a recurrent kernel sets and waits
        for the same few flags thousands of times."""
        self._index = {id(p): i for i, p in enumerate(self.parts)}
        self._orders: dict[tuple[int, bool], list[MixPart]] = {}
        """The parts in the order the scheduler tries them, per (current part, rotate)."""
        for p in self.parts:
            if p.core == "aiv":
                self._aiv_parts.setdefault(p.group, []).append(p)

    def _aivs(self, group: int) -> list[MixPart]:
        return self._aiv_parts.get(group, [])

    def set_keys(self, part: MixPart, flag: int) -> list[Counter]:
        """The counters ``part`` setting ``flag`` adds to."""
        return self._kept_keys(part, flag, True)

    def _kept_keys(self, part: MixPart, flag: int, sets: bool) -> list[Counter]:
        """:meth:`set_keys` (``sets``) or :meth:`wait_keys`, worked out once per part
        and flag."""
        key = (self._index[id(part)], flag, sets)
        found = self._keys.get(key)
        if found is None:
            found = self._keys[key] = (self._set_keys if sets else self._wait_keys)(part, flag)
        return found

    def _set_keys(self, part: MixPart, flag: int) -> list[Counter]:
        g = part.group
        if part.core == "aic":  # mode 2: seen by every AIV of the group
            return [(g, aiv.key, flag, 0) for aiv in self._aivs(g)]
        return [(g, "aic", flag, part.sub)]  # the AIC counts each AIV's sets apart

    def wait_keys(self, part: MixPart, flag: int) -> list[Counter]:
        """The counters ``part`` waiting for ``flag`` takes from."""
        return self._kept_keys(part, flag, False)

    def _wait_keys(self, part: MixPart, flag: int) -> list[Counter]:
        g = part.group
        if part.core == "aic":  # waits until every AIV of the group has set it
            return [(g, "aic", flag, aiv.sub) for aiv in self._aivs(g)]
        return [(g, part.key, flag, 0)]

    def set_flag(self, part: MixPart, op: CrossCoreOp, flag: int) -> None:
        """``part`` sets ``flag``: one more on every counter it reaches (an overflow is a
        :class:`CrossCoreError`)."""
        for key in self.set_keys(part, flag):
            count = self.counters.get(key, 0) + 1
            if count > CROSS_CORE_MAX_PENDING:
                raise CrossCoreError(
                    f"'{op.name}' in @{part.name}: flag {flag} of the {key[1].upper()} set "
                    f"{count} times without a wait (a counter holds {CROSS_CORE_MAX_PENDING})"
                )
            self.counters[key] = count

    def try_wait(self, part: MixPart, flag: int) -> bool:
        """``part`` waits for ``flag``: True when every counter it needs is positive (one
        taken from each), else False with ``part.waiting`` naming them (it must yield)."""
        keys = self.wait_keys(part, flag)
        counters = self.counters
        for key in keys:  # a loop, not any(): a recurrent step waits thousands of times
            if not counters.get(key, 0):
                part.waiting = keys
                return False
        part.waiting = None
        for key in keys:
            counters[key] -= 1
        return True

    def _fewest_arrivals(self, cores: str) -> int:
        """The fewest barriers any part synchronising over ``cores`` has arrived at (cached
        until the next arrival: the scheduler asks it for every waiting part)."""
        found = self._fewest.get(cores)
        if found is None:
            found = self._fewest[cores] = min(
                (p.barriers for p in self.parts if cores == "all" or p.core == cores), default=0
            )
        return found

    def arrive(self, part: MixPart, cores: str) -> None:
        """``part`` issues a ``tile.sync_all`` over ``cores``: it waits at the barrier until
        every participant has arrived as often (:meth:`barrier_open`)."""
        part.barriers += 1
        part.at_barrier = cores
        self._fewest.clear()

    def barrier_open(self, part: MixPart) -> bool:
        """Whether the barrier ``part`` waits at lets it go on (then it stops waiting)."""
        cores = part.at_barrier
        if cores is not None and self._fewest_arrivals(cores) < part.barriers:
            return False
        part.at_barrier = None
        return True

    def _runnable(self, part: MixPart) -> bool:
        if part.done:
            return False
        if part.at_barrier is not None:
            return self._fewest_arrivals(part.at_barrier) >= part.barriers
        return part.waiting is None or all(self.counters.get(k, 0) > 0 for k in part.waiting)

    def next_part(self, rotate: bool = False) -> MixPart | None:
        """The part to run next — the current one while it can (unless ``rotate``: the
        current one gave its turn away), then the next runnable one in order — or None
        when all are done; a :class:`CrossCoreError` on a deadlock."""
        current = self.parts[self._current]
        if not rotate and self._runnable(current):
            return current
        order = self._orders.get((self._current, rotate))
        if order is None:
            after = self._current + 1
            order = [*self.parts[after:], *self.parts[:after]]
            if self.group_first and not rotate:
                order.sort(key=lambda p: p.group != current.group)  # stable: in order within
            self._orders[(self._current, rotate)] = order
        part = next((p for p in order if self._runnable(p)), None)
        if part is None:
            if all(p.done for p in self.parts):  # a done part is never runnable
                return None
            groups = len({p.group for p in self.parts}) > 1
            stuck = "; ".join(
                f"@{p.name} ({p.key}{f' of group {p.group}' if groups else ''}) {why}"
                for p in self.parts
                if (why := _stuck_at(p))
            )
            raise CrossCoreError(f"deadlock between the blocks of a launch: {stuck}")
        self._current = self._index[id(part)]
        return part

    def check_drained(self) -> None:
        """A :class:`CrossCoreError` when a flag is left set after every part finished."""
        left = {k: n for k, n in self.counters.items() if n}
        if left:
            groups = len({p.group for p in self.parts}) > 1
            names = ", ".join(
                f"flag {flag} of the {receiver.upper()}"
                + (f" from aiv{sender}" if receiver == "aic" else "")
                + (f" of group {group}" if groups else "")
                + f" ({n} pending)"
                for (group, receiver, flag, sender), n in sorted(left.items())
            )
            raise CrossCoreError(f"a mix launch ended with flags set but not waited: {names}")


class MixRun(MixFlags):
    """The core groups of a mix launch run by threads, one running at a time (the baton),
    interleaved at the cross-core flag ops (see the module docstring)."""

    parts: list[_Part]  # pyright: ignore[reportIncompatibleVariableOverride]

    def __init__(
        self,
        parts: Sequence[tuple[str, str, Callable[[], Any], int, int]],
        save_state: Callable[[], Callable[[], None]] | None = None,
        races: GmRaces | None = None,
    ):
        """``parts``: (name, core "aic"/"aiv", a callable running that part, sub-block,
        group), each group's AIC and its AIVs, group by group. ``save_state``: captures the
        executor's state a part runs in (the interpreter's scope of values, the block being
        run) and returns what restores it; called when a part stops at a wait or gives its
        turn away, the restore when it goes on. ``races``: the check of the groups' GM
        exchange (:mod:`.gm_races`), told of every flag and barrier."""
        super().__init__([_Part(*p) for p in parts])
        self.races = races
        self._save_state = save_state
        self._back = threading.Event()
        self._cancelled = False
        self._gave_way = False
        """The last part to run stopped of its own accord (after a flag op), not at a
        wait it could not pass: the turn goes to the next part."""

    # ---- called from the parts' threads, through the flag ops' kernels -----------------
    def set(self, op: CrossCoreOp, flag: int) -> None:
        part = _part()
        self.set_flag(part, op, flag)
        if self.races is not None:
            self.races.release(self._index[id(part)], self.set_keys(part, flag))
        self._give_way(part)

    def wait(self, op: CrossCoreOp, flag: int) -> None:
        part = _part()
        keys = self.wait_keys(part, flag)
        while not self.try_wait(part, flag):
            self._yield(part)
        if self.races is not None:
            self.races.acquire(self._index[id(part)], keys)
        self._give_way(part)

    def sync_all(self, cores: str) -> None:
        part = _part()
        self.arrive(part, cores)
        if self.races is not None:
            self.races.arrive(self._index[id(part)], cores, part.barriers)
        while not self.barrier_open(part):
            self._yield(part)
        if self.races is not None:
            self.races.depart(self._index[id(part)], cores, part.barriers)
        self._give_way(part)

    def access(self, op: TileOp, args: Sequence[Any]) -> None:
        """The running part issues ``op`` on ``args``: checked against the other groups'
        GM accesses (a race is a :class:`CrossCoreError`)."""
        if self.races is not None:
            self.races.access(self._index[id(_part())], op, args)

    def _give_way(self, part: _Part) -> None:
        """After a flag op: the next runnable part runs (another group's, most often), as
        the groups of the chip run at once."""
        self._gave_way = True
        self._yield(part)

    def _yield(self, part: _Part) -> None:
        restore = self._save_state() if self._save_state is not None else None
        part.turn.clear()
        self._back.set()
        part.turn.wait()
        if self._cancelled:
            raise _Cancelled()
        if restore is not None:
            restore()

    # ---- the scheduler (the launching thread) -------------------------------------------
    def run(self) -> None:
        """Run the parts to completion; raises what a part raised or :class:`CrossCoreError`."""
        threads = [
            threading.Thread(target=self._thread, args=(p,), daemon=True) for p in self.parts
        ]
        try:
            for part, thread in zip(self.parts, threads, strict=True):
                part.turn.clear()
                thread.start()
            while (part := self.next_part(rotate=self._gave_way)) is not None:
                assert isinstance(part, _Part)
                self._gave_way = False
                self._back.clear()
                part.turn.set()
                self._back.wait()
                if part.error is not None:
                    raise part.error
            self.check_drained()
        finally:
            self._cancelled = True
            for part in self.parts:
                part.turn.set()
            for thread in threads:
                thread.join()

    def _thread(self, part: _Part) -> None:
        part.turn.wait()
        if self._cancelled:
            return
        _LOCAL.run, _LOCAL.part = self, part
        try:
            part.body()
        except _Cancelled:
            return
        except BaseException as error:  # reported by the scheduler, in its thread
            part.error = error
        finally:
            part.done = True
            _LOCAL.run = _LOCAL.part = None
            self._back.set()


def _stuck_at(part: MixPart) -> str:
    """What an unfinished part waits for ("" when it is done or not waiting)."""
    if part.done:
        return ""
    if part.at_barrier is not None:
        return f"waits at all-core barrier {part.barriers} (tile.sync_all)"
    return f"waits for flag {part.waiting[0][2]}" if part.waiting else ""


def _part() -> _Part:
    part = getattr(_LOCAL, "part", None)
    if part is None:
        raise CrossCoreError("a cross-core flag op outside a mix launch")
    return part


def note_access(op: TileOp, args: Sequence[Any]) -> None:
    """Tell the run of the calling thread (if any) that its part issues ``op``."""
    run = getattr(_LOCAL, "run", None)
    if run is not None:
        run.access(op, args)


def sub_blocks_of(groups: int, aiv_blocks: int, callee: str) -> int:
    """AIVs per core group of a mix launch of ``groups`` AIC blocks and ``aiv_blocks`` AIV
    blocks (``aiv_blocks`` must be a multiple of ``groups``)."""
    if aiv_blocks % groups:
        raise CrossCoreError(
            f"a mix launch of @{callee} with {groups} AIC and {aiv_blocks} AIV blocks: "
            "the AIV blocks must be a whole number of AIVs per group"
        )
    return aiv_blocks // groups


def run_mix_groups(
    groups: int,
    part_runner: Callable[[int, str, int], Callable[[], Any]],
    names: tuple[str, str],
    save_state: Callable[[], Callable[[], None]] | None = None,
    sub_blocks: int = 1,
    races: GmRaces | None = None,
) -> None:
    """Run the ``groups`` core groups of a mix launch, each of one AIC and ``sub_blocks``
    AIVs, interleaved in one :class:`MixRun` (each group with its own flag counters);
    ``part_runner(group, core, sub)`` gives the callable running that core's part (AIV
    instance ``group * sub_blocks + sub``)."""
    aic_name, aiv_name = names
    parts: list[tuple[str, str, Callable[[], Any], int, int]] = []
    for group in range(groups):
        parts.append((aic_name, "aic", part_runner(group, "aic", 0), 0, group))
        parts += [
            (aiv_name, "aiv", part_runner(group, "aiv", sub), sub, group)
            for sub in range(sub_blocks)
        ]
    MixRun(parts, save_state, races).run()


@tile_kernel(SyncAllOp)
def sync_all(op: SyncAllOp) -> Kernel:
    cores = op.cores.data

    def run(*workspaces: Any) -> tuple[()]:
        # the lockstep realises the barrier; a soft one also counts the arrival in its
        # block's slot of the GM workspace, as Ascend C's soft SyncAll does
        mix = getattr(_LOCAL, "run", None)
        if mix is None:
            raise CrossCoreError(f"'{op.name}' outside a launch run in lockstep")
        if workspaces:
            _count_arrival(op, workspaces[0], _part())
        mix.sync_all(cores)
        return ()

    return run


def _count_arrival(op: SyncAllOp, workspace: Any, part: MixPart) -> None:
    """A soft barrier's arrival: the block's slot of the GM workspace holds the barriers it
    passed in this launch, and is incremented. Anything else there is what an earlier user
    of those bytes left — another launch's arrival counters, which would let the waits
    through before every block arrived: the workspace was not zero-filled before the
    launch (Ascend C's ``SyncAll`` requires it zeroed)."""
    slot = part.group * SOFT_SLOT_ELEMENTS
    flat = workspace.reshape(-1)
    if slot >= flat.size:
        raise CrossCoreError(
            f"'{op.name}': block {part.group} has no slot in a soft barrier workspace of "
            f"{flat.size} i32"
        )
    found = int(flat[slot])
    if found != part.barriers:
        raise CrossCoreError(
            f"'{op.name}': block {part.group} arrives at soft barrier #{part.barriers + 1} "
            f"and finds {found} in its slot of the GM workspace, not {part.barriers}: the "
            "workspace was not zero-filled before the launch (Ascend C's SyncAll needs it "
            "zeroed; the launch's zero_fill)"
        )
    flat[slot] = found + 1


@tile_kernel(CrossCoreOp)
def cross_core(op: CrossCoreOp) -> Kernel:
    base = op.flag_id
    sends = isinstance(op, SyncBlockSetOp)

    def run(*slot: int) -> tuple[()]:
        mix = getattr(_LOCAL, "run", None)
        if mix is None:
            raise CrossCoreError(f"'{op.name}' outside a mix launch")
        flag = base + (int(slot[0]) if slot else 0)
        if sends:
            mix.set(op, flag)
        else:
            mix.wait(op, flag)
        return ()

    return run
