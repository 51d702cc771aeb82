"""Running a mix launch: the AIC and AIV parts in an order their cross-core flags allow.

A mix launch (``tile.launch @aic(...) {aiv = @aiv}``) runs, per core group ``b``, AIC
instance ``b`` and AIV instance ``b`` side by side; they exchange data through a
multi-buffered GM workspace and order it with ``tile.sync_block_set`` /
``tile.sync_block_wait`` (:mod:`tilegraph.dialects.tile.cross_core`). Running the whole AIC
part first would overwrite workspace slots the AIV has not read yet, so both executors run
the parts as coroutines: each part in a thread of its own, exactly one of them running at a
time (:class:`MixRun` hands a baton over), switching only where a part waits for a flag
whose counter is zero. The running part keeps going as long as it can (the AIC runs ahead
as far as the free slots let it), so a run is deterministic.

The flags are counters per (receiving core, flag id). :class:`CrossCoreError` (a
``KernelError`` for the executors' callers) reports what real hardware would hang on or
lose:

* a *deadlock*: every unfinished part waits for a flag nobody will set;
* an *overflow*: a flag set more than :data:`CROSS_CORE_MAX_PENDING` times without a wait;
* a flag *left set* when both parts finished (a wait is missing: on the next launch it would
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


class _Part:
    def __init__(self, name: str, core: str, body: Callable[[], Any]):
        self.name = name
        self.core = core
        self.body = body
        self.turn = threading.Event()
        self.waiting: tuple[str, int] | None = None
        self.done = False
        self.error: BaseException | None = None


_LOCAL = threading.local()
CORES = ("aic", "aiv")


class MixRun:
    """One core group of a mix launch: its parts, their flag counters and the baton."""

    def __init__(
        self,
        parts: Sequence[tuple[str, str, Callable[[], Any]]],
        save_state: Callable[[], Callable[[], None]] | None = None,
    ):
        """``parts``: (name, core "aic"/"aiv", a callable running that part).
        ``save_state``: captures the executor's state a part runs in (the interpreter's
        scope of values, the block being run) and returns what restores it; called when a
        part stops at a wait, the restore when it goes on."""
        self.parts = [_Part(*p) for p in parts]
        self._save_state = save_state
        self.counters: dict[tuple[str, int], int] = {}
        self._back = threading.Event()
        self._cancelled = False

    # ---- called from the parts' threads, through the flag ops' kernels -----------------
    def set(self, op: CrossCoreOp, flag: int) -> None:
        receiver = "aiv" if op.core == "aic" else "aic"
        key = (receiver, flag)
        count = self.counters.get(key, 0) + 1
        if count > CROSS_CORE_MAX_PENDING:
            raise CrossCoreError(
                f"'{op.name}' in @{_part().name}: flag {flag} of the {receiver.upper()} set "
                f"{count} times without a wait (a counter holds {CROSS_CORE_MAX_PENDING})"
            )
        self.counters[key] = count

    def wait(self, op: CrossCoreOp, flag: int) -> None:
        part = _part()
        key = (part.core, flag)
        while self.counters.get(key, 0) == 0:
            part.waiting = key
            self._yield(part)
        part.waiting = None
        self.counters[key] -= 1

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
    def _runnable(self, part: _Part) -> bool:
        return not part.done and (part.waiting is None or self.counters.get(part.waiting, 0) > 0)

    def run(self) -> None:
        """Run the parts to completion; raises what a part raised or :class:`CrossCoreError`."""
        threads = [
            threading.Thread(target=self._thread, args=(p,), daemon=True) for p in self.parts
        ]
        try:
            for part, thread in zip(self.parts, threads, strict=True):
                part.turn.clear()
                thread.start()
            current = 0
            while not all(p.done for p in self.parts):
                order = [*self.parts[current:], *self.parts[:current]]
                part = next((p for p in order if self._runnable(p)), None)
                if part is None:
                    stuck = "; ".join(
                        f"@{p.name} waits for flag {p.waiting[1]}"
                        for p in self.parts
                        if not p.done and p.waiting is not None
                    )
                    raise CrossCoreError(f"deadlock between the parts of a mix launch: {stuck}")
                current = self.parts.index(part)
                self._back.clear()
                part.turn.set()
                self._back.wait()
                if part.error is not None:
                    raise part.error
            left = {k: n for k, n in self.counters.items() if n}
            if left:
                names = ", ".join(
                    f"flag {flag} of the {core.upper()} ({n} pending)"
                    for (core, flag), n in sorted(left.items())
                )
                raise CrossCoreError(f"a mix launch ended with flags set but not waited: {names}")
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


def run_mix_groups(
    groups: int,
    part_runner: Callable[[int, str], Callable[[], Any]],
    names: tuple[str, str],
    save_state: Callable[[], Callable[[], None]] | None = None,
) -> None:
    """Run ``groups`` core groups of a mix launch one after the other (groups share no
    flags); ``part_runner(group, core)`` gives the callable running that core's part."""
    for group in range(groups):
        parts = [
            (name, core, part_runner(group, core)) for name, core in zip(names, CORES, strict=True)
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
