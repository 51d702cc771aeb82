"""Running a mix launch: the AIC and AIV parts in an order their cross-core flags allow.

A mix launch (``tile.launch @aic(...) {aiv = @aiv, blocks = n, aiv_blocks = r * n}``) runs,
per core group ``g``, AIC instance ``g`` and AIV instances ``g * r .. g * r + r - 1``
(sub-blocks ``0 .. r-1``, :class:`~tilegraph.dialects.tile.cores.SubBlockIdxOp`) side by
side; they exchange data through a multi-buffered GM workspace and order it with
``tile.sync_block_set`` / ``tile.sync_block_wait`` (:mod:`tilegraph.dialects.tile.
cross_core`) in Ascend C's mode 2: a set on the AIC adds one to the flag's counter on
*every* AIV of its group; a set on an AIV adds one to the AIC's counter of that flag *from
that AIV*, and a wait on the AIC takes one from the counter of every AIV of the group (it
waits until all of them have set the flag). Running the whole AIC part first would
overwrite workspace slots the AIVs have not read yet, so both executors run the parts as
coroutines: each part in a thread of its own, exactly one of them running at a time
(:class:`MixRun` hands a baton over), switching only where a part waits for a flag whose
counter is zero. The running part keeps going as long as it can (the AIC runs ahead as far
as the free slots let it), so a run is deterministic.

:class:`CrossCoreError` (a ``KernelError`` for the executors' callers) reports what real
hardware would hang on or lose:

* a *deadlock*: every unfinished part waits for a flag nobody will set;
* an *overflow*: a flag set more than :data:`CROSS_CORE_MAX_PENDING` times without a wait;
* a flag *left set* when all parts finished (a wait is missing: on the next launch it would
  release a wait too early).

The kernels of the flag ops (registered here for both executors) act on the run of the
calling thread; outside a mix launch they are errors.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from tilegraph.dialects.tile.cross_core import (
    CROSS_CORE_MAX_PENDING,
    CrossCoreOp,
    SyncBlockSetOp,
)
from tilegraph.runtime.tile_interpreter.kernels import Kernel, tile_kernel


class CrossCoreError(RuntimeError):
    """A mix launch's cross-core flags are wrong (deadlock, overflow, a flag left set)."""


class _Cancelled(BaseException):
    """Unwinds a part's thread after another part failed (not an error of its own)."""


Counter = tuple[str, int, int]
"""(receiving part, flag id, sending sub-block): one flag counter of a core group."""


class MixPart:
    """One part of a core group: its AIC or one of its AIVs."""

    def __init__(self, name: str, core: str, body: Callable[[], Any], sub: int = 0):
        self.name = name
        self.core = core
        self.sub = sub
        """The AIV's sub-block in its group (0 for the AIC)."""
        self.body = body
        self.waiting: list[Counter] | None = None
        """The counters the part waits for (each must be positive), or None."""
        self.done = False
        self.error: BaseException | None = None

    @property
    def key(self) -> str:
        """The part's name among its group's: "aic", "aiv0", "aiv1", ..."""
        return "aic" if self.core == "aic" else f"aiv{self.sub}"


class _Part(MixPart):
    def __init__(self, name: str, core: str, body: Callable[[], Any], sub: int = 0):
        super().__init__(name, core, body, sub)
        self.turn = threading.Event()


_LOCAL = threading.local()


class MixFlags:
    """The flag counters of one core group and the order its parts run in, whatever runs
    them (the interpreter's threads, the fast executor's generators): a set adds to the
    counters mode 2 names, a wait takes from them once all are positive, the scheduler
    gives the turn to the next runnable part from the current one on."""

    def __init__(self, parts: Sequence[MixPart]):
        self.parts = list(parts)
        self.counters: dict[Counter, int] = {}
        self._current = 0
        self._aiv_parts = [p for p in self.parts if p.core == "aiv"]

    def _aivs(self) -> list[MixPart]:
        return self._aiv_parts

    def set_flag(self, part: MixPart, op: CrossCoreOp, flag: int) -> None:
        """``part`` sets ``flag``: one more on every counter it reaches (an overflow is a
        :class:`CrossCoreError`)."""
        if part.core == "aic":  # mode 2: seen by every AIV of the group
            keys = [(aiv.key, flag, 0) for aiv in self._aivs()]
        else:  # the AIC counts each AIV's sets apart
            keys = [("aic", flag, part.sub)]
        for key in keys:
            count = self.counters.get(key, 0) + 1
            if count > CROSS_CORE_MAX_PENDING:
                raise CrossCoreError(
                    f"'{op.name}' in @{part.name}: flag {flag} of the {key[0].upper()} set "
                    f"{count} times without a wait (a counter holds {CROSS_CORE_MAX_PENDING})"
                )
            self.counters[key] = count

    def try_wait(self, part: MixPart, flag: int) -> bool:
        """``part`` waits for ``flag``: True when every counter it needs is positive (one
        taken from each), else False with ``part.waiting`` naming them (it must yield)."""
        if part.core == "aic":  # waits until every AIV of the group has set it
            keys = [("aic", flag, aiv.sub) for aiv in self._aivs()]
        else:
            keys = [(part.key, flag, 0)]
        if any(self.counters.get(key, 0) == 0 for key in keys):
            part.waiting = keys
            return False
        part.waiting = None
        for key in keys:
            self.counters[key] -= 1
        return True

    def _runnable(self, part: MixPart) -> bool:
        return not part.done and (
            part.waiting is None or all(self.counters.get(k, 0) > 0 for k in part.waiting)
        )

    def next_part(self) -> MixPart | None:
        """The part to run next (the current one while it can, then the next runnable one
        in order), None when all are done; a :class:`CrossCoreError` on a deadlock."""
        current = self.parts[self._current]
        if self._runnable(current):
            return current
        if all(p.done for p in self.parts):
            return None
        order = [*self.parts[self._current :], *self.parts[: self._current]]
        part = next((p for p in order if self._runnable(p)), None)
        if part is None:
            stuck = "; ".join(
                f"@{p.name} ({p.key}) waits for flag {p.waiting[0][1]}"
                for p in self.parts
                if not p.done and p.waiting
            )
            raise CrossCoreError(f"deadlock between the parts of a mix launch: {stuck}")
        self._current = self.parts.index(part)
        return part

    def check_drained(self) -> None:
        """A :class:`CrossCoreError` when a flag is left set after every part finished."""
        left = {k: n for k, n in self.counters.items() if n}
        if left:
            names = ", ".join(
                f"flag {flag} of the {receiver.upper()}"
                + (f" from aiv{sender}" if receiver == "aic" else "")
                + f" ({n} pending)"
                for (receiver, flag, sender), n in sorted(left.items())
            )
            raise CrossCoreError(f"a mix launch ended with flags set but not waited: {names}")


class MixRun(MixFlags):
    """One core group of a mix launch run by threads, one running at a time (the baton)."""

    parts: list[_Part]  # pyright: ignore[reportIncompatibleVariableOverride]

    def __init__(
        self,
        parts: Sequence[tuple[str, str, Callable[[], Any], int]],
        save_state: Callable[[], Callable[[], None]] | None = None,
    ):
        """``parts``: (name, core "aic"/"aiv", a callable running that part, sub-block),
        one AIC and the AIVs of its group. ``save_state``: captures the executor's state a
        part runs in (the interpreter's scope of values, the block being run) and returns
        what restores it; called when a part stops at a wait, the restore when it goes on."""
        super().__init__([_Part(*p) for p in parts])
        self._save_state = save_state
        self._back = threading.Event()
        self._cancelled = False

    # ---- called from the parts' threads, through the flag ops' kernels -----------------
    def set(self, op: CrossCoreOp, flag: int) -> None:
        self.set_flag(_part(), op, flag)

    def wait(self, op: CrossCoreOp, flag: int) -> None:
        part = _part()
        while not self.try_wait(part, flag):
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
            while (part := self.next_part()) is not None:
                assert isinstance(part, _Part)
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


def _part() -> _Part:
    part = getattr(_LOCAL, "part", None)
    if part is None:
        raise CrossCoreError("a cross-core flag op outside a mix launch")
    return part


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
) -> None:
    """Run ``groups`` core groups of a mix launch one after the other (groups share no
    flags), each of one AIC and ``sub_blocks`` AIVs; ``part_runner(group, core, sub)``
    gives the callable running that core's part (AIV instance ``group * sub_blocks +
    sub``)."""
    aic_name, aiv_name = names
    for group in range(groups):
        parts = [(aic_name, "aic", part_runner(group, "aic", 0), 0)]
        parts += [
            (aiv_name, "aiv", part_runner(group, "aiv", sub), sub) for sub in range(sub_blocks)
        ]
        MixRun(parts, save_state).run()


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
