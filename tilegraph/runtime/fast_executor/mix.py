"""Mix launches in the fast executor: the parts of a core group as generators.

The interpreter runs the AIC and AIV parts of a core group as threads handing a baton over
(:class:`~tilegraph.runtime.tile_interpreter.cross_core.MixRun`); a switch between threads
costs tens of microseconds, a thread start more, and a mix launch of a few hundred tiles
switches thousands of times. The fast executor compiles each function with a
``tile.sync_block_wait`` as a Python generator instead (:mod:`.codegen` emits ``yield
from`` the wait's kernel here), and :func:`run_mix_launch` drives a group's generators in
the main thread, with the interpreter's flag counters and its order of turns
(:class:`~tilegraph.runtime.tile_interpreter.cross_core.MixFlags`): the running part keeps
going until it waits for a flag whose counter is zero, then the next runnable one in order
runs. Groups run one after the other (the interpreter interleaves them: each has its own
workspace region, so a correct kernel gives the same numbers bit for bit), and the same
:class:`~tilegraph.runtime.tile_interpreter.cross_core.CrossCoreError` reports a deadlock,
an overflow or a flag left set.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Generator, Iterator
from typing import Any

from tilegraph.dialects.tile.barrier import SyncAllOp
from tilegraph.dialects.tile.cross_core import CrossCoreOp
from tilegraph.runtime.tile_interpreter.cross_core import (
    CrossCoreError,
    MixFlags,
    MixPart,
    sub_blocks_of,
)

Part = tuple[str, Callable[..., Any]]
"""A part's function name and its compiled Python function."""


class _Running:
    """The group and part the generator being advanced belongs to (the flag ops' kernels
    read it; one group runs at a time, in the calling thread)."""

    flags: MixFlags | None = None
    part: MixPart | None = None


_RUNNING = _Running()


def _running(op: CrossCoreOp | SyncAllOp) -> tuple[MixFlags, MixPart]:
    flags, part = _RUNNING.flags, _RUNNING.part
    if flags is None or part is None:
        raise CrossCoreError(f"'{op.name}' outside a mix launch")
    return flags, part


def set_kernel(op: CrossCoreOp) -> Callable[..., tuple[()]]:
    """The kernel of a ``tile.sync_block_set`` in a compiled mix part."""
    base = op.flag_id

    def run(*slot: int) -> tuple[()]:
        flags, part = _running(op)
        flags.set_flag(part, op, base + (int(slot[0]) if slot else 0))
        return ()

    return run


def wait_kernel(op: CrossCoreOp) -> Callable[..., Iterator[None]]:
    """The kernel of a ``tile.sync_block_wait`` in a compiled mix part: a generator that
    yields (gives the turn away) until the flag's counters let the part go on."""
    base = op.flag_id

    def run(*slot: int) -> Iterator[None]:
        flags, part = _running(op)
        flag = base + (int(slot[0]) if slot else 0)
        while not flags.try_wait(part, flag):
            yield

    return run


def barrier_kernel(op: SyncAllOp) -> Callable[[], Iterator[None]]:
    """The kernel of a ``tile.sync_all`` in a compiled block: a generator that yields
    (gives the turn away) until every block of the launch has reached the barrier."""
    cores = op.cores.data

    def run() -> Iterator[None]:
        flags, part = _running(op)
        flags.arrive(part, cores)
        while not flags.barrier_open(part):
            yield

    return run


def run_lockstep_launch(part: Part, args: tuple[Any, ...], blocks: int, core: str) -> None:
    """A launch of ``blocks`` blocks of a kernel with an all-core barrier: its blocks
    driven as generators together, switching where one waits at the barrier (on a
    ``core`` core: "aic" / "aiv")."""
    name, fn = part

    def body(block: int) -> Callable[[], Any]:
        return lambda: fn(*args, block, blocks)

    drive(MixFlags([MixPart(name, core, body(b), 0, b) for b in range(blocks)], group_first=True))


def drive(flags: MixFlags) -> None:
    """Run a group's parts to completion in the flags' order of turns. A part's body is
    called when it first gets the turn; a body that is no generator (a part without a
    wait) runs to its end then."""
    running: dict[int, Generator[Any, Any, Any]] = {}
    try:
        while (part := flags.next_part()) is not None:
            _RUNNING.flags, _RUNNING.part = flags, part
            gen = running.get(id(part))
            if gen is None:
                started = part.body()
                if not inspect.isgenerator(started):
                    part.done = True
                    continue
                gen = running[id(part)] = started
            try:
                next(gen)
            except StopIteration:
                part.done = True
        flags.check_drained()
    finally:
        _RUNNING.flags = _RUNNING.part = None
        for gen in running.values():
            gen.close()


def run_mix_launch(parts: tuple[Part, Part], args: tuple[Any, ...], groups: int = 1,
                   aiv_blocks: int = 1, lockstep: bool = False) -> None:  # fmt: skip
    """A mix launch of ``groups`` core groups and ``aiv_blocks`` AIVs: per group, one after
    the other, its AIC function and its AIVs' driven as generators, each answering the
    block queries with its group's index and the group count and ``tile.sub_block_idx``
    with its sub-block, as the interpreter does. ``lockstep`` (a kernel with an all-core
    barrier): all groups driven together, the barrier waiting for every group's parts."""
    (aic_name, aic), (aiv_name, aiv) = parts
    sub_blocks = sub_blocks_of(groups, aiv_blocks, aic_name)

    def body(fn: Callable[..., Any], group: int, sub: int) -> Callable[[], Any]:
        return lambda: fn(*args, group, groups, sub)

    together: list[MixPart] = []
    for group in range(groups):
        members = [MixPart(aic_name, "aic", body(aic, group, 0), 0, group)]
        members += [
            MixPart(aiv_name, "aiv", body(aiv, group, s), s, group) for s in range(sub_blocks)
        ]
        if lockstep:
            together += members
        else:
            drive(MixFlags(members))
    if lockstep:
        drive(MixFlags(together, group_first=True))
