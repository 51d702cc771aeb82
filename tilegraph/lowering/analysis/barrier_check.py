"""The cross-block checker: do the blocks of a launch that hand data to one another through
GM meet at an all-core barrier between the write and the read?

The pipe-queue checker (:mod:`.sync_check`) takes each block's GM as its own; this one
looks at what one launch's blocks share. A kernel whose blocks exchange data through GM (a
recurrent layer over the cores: block ``i`` stores its columns of ``h_t`` in step ``t``,
every block reads the whole ``h_t`` in step ``t + 1``) is ordered across blocks only by
``tile.sync_all`` (:mod:`tilegraph.dialects.tile.barrier`): flags never cross a core
group. So each GM access of block ``b`` is placed between barriers:

* ``release``: the most barriers known to be passed by every block when it issues —
  its core's own barriers before it, or (a mix kernel's AIC, which does not take part in
  its AIVs' barrier) the count carried by the cross-core flags it waited for;
* ``arrive``: the first barrier that it is known to precede everywhere — its core's next
  one, or the one its AIVs reach after waiting for a flag it set after the access.

Two accesses of different blocks (core groups), or of two AIVs of one group (no flag
passes between them), are ordered when one's ``arrive`` is at most the other's
``release``; otherwise they run concurrently, and if they touch
overlapping elements of one GM buffer and one of them writes, that is a race:
:class:`~.sync_error.SyncError` names the kernel, the buffer, both ops and the blocks.

Windows are the ops' GM windows (:meth:`~tilegraph.dialects.tile.base.TileOp.gm_offsets`
and ``gm_window``) at the walk's index values, else the whole buffer. Only the GM
arguments a kernel both reads and writes can carry data from one block to another, so only
they are tracked (a plain kernel's blocks read shared inputs and write disjoint outputs);
a mix kernel's workspace (its last argument) is the core group's own region
(:mod:`.mix_workspace`) and is left to :func:`~.sync_check.check_mix`.

``check_blocks(module)`` checks every launch of more than one block or AIV.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument

from tilegraph.dialects.tile import LaunchOp, TileOp, memref_shape, scope_of
from tilegraph.dialects.tile.barrier import SyncAllOp
from tilegraph.dialects.tile.cross_core import CrossCoreOp, SyncBlockSetOp
from tilegraph.dialects.tile.workspace import gm_base
from tilegraph.lowering.analysis.buffers import accesses
from tilegraph.lowering.analysis.kernel_walk import KernelWalk
from tilegraph.lowering.analysis.sync_error import SyncError

_NEVER = 1 << 60
"""``arrive`` of an access no barrier is known to follow."""

Window = tuple[tuple[int, int], ...]
"""Per dim of a GM buffer, the half-open range of elements an access touches."""


@dataclass
class _Access:
    op: TileOp
    argument: int
    window: Window
    writes: bool
    position: int
    """Its place in its core's event list."""


@dataclass
class _Core:
    """One core's trace in one block (core group): its barriers, flags and GM accesses."""

    group: int
    name: str
    """"" for a plain kernel's block; "aic" / "aiv0", "aiv1", ... in a mix kernel."""
    events: list[tuple[str, object]]
    """("barrier", None), ("set", flag), ("wait", flag), ("access", _Access), in order."""
    release: list[int]
    arrive: list[int]


def exchanged_arguments(fns: Sequence[func.FuncOp], mix: bool = False) -> frozenset[int]:
    """Positions of the GM arguments the kernel (all its ``fns``: a mix kernel's parts,
    whose arguments match by position) both reads and writes; a ``mix`` kernel's
    workspace, its last argument, left out."""
    skip = len(fns[0].body.block.args) - 1 if mix and fns and fns[0].body.blocks else None
    read: set[int] = set()
    written: set[int] = set()
    for fn in fns:
        entry = fn.body.block
        for op in fn.walk():
            reads, writes = accesses(op)
            for into, values in ((read, reads), (written, writes)):
                for value in values:
                    base = gm_base(value)
                    if isinstance(base, BlockArgument) and base.block is entry:
                        into.add(base.index)
    return frozenset(p for p in read & written if p != skip)


def _window(op: TileOp, walk: KernelWalk, buffer_shape: tuple[int, ...]) -> Window:
    whole = tuple((0, d) for d in buffer_shape)
    extent = op.gm_window()
    offsets = op.gm_offsets()
    if extent is None or len(extent) != len(buffer_shape) or len(offsets) != len(extent):
        return whole
    try:
        starts = [int(walk.value(v)) for v in offsets]
    except (KeyError, TypeError, ValueError):  # a data-dependent offset
        return whole
    return tuple((s, s + e) for s, e in zip(starts, extent, strict=True))


def _trace(
    fn: func.FuncOp,
    name: str,
    group: int,
    groups: int,
    tracked: frozenset[int],
    max_trips: int | None,
    sub_block: int = 0,
) -> _Core:
    entry = fn.body.block
    events: list[tuple[str, object]] = []
    walk = KernelWalk(fn, group, groups, max_trips, sub_block)
    for op in walk:
        if isinstance(op, SyncAllOp):
            events.append(("barrier", None))
        elif isinstance(op, CrossCoreOp):
            events.append(("set" if isinstance(op, SyncBlockSetOp) else "wait", op.flag_id))
        else:
            reads, writes = accesses(op)
            for values, writing in ((reads, False), (writes, True)):
                for value in values:
                    base = gm_base(value)
                    if (
                        not isinstance(base, BlockArgument)
                        or base.block is not entry
                        or base.index not in tracked
                        or scope_of(base) != "GM"
                    ):
                        continue
                    shape = tuple(memref_shape(base.type))
                    window = (
                        _window(op, walk, shape) if value is base else tuple((0, d) for d in shape)
                    )
                    access = _Access(op, base.index, window, writing, len(events))
                    events.append(("access", access))
    return _Core(group, name, events, [0] * len(events), [_NEVER] * len(events))


def _place(cores: list[_Core]) -> None:
    """Each event's ``release`` and ``arrive`` (see the module docstring): own barriers
    first, then carried over the cross-core flags of a core group to a fixpoint (the k-th
    set of a flag by one core meets the k-th wait of it by the other)."""
    for core in cores:
        total = sum(1 for kind, _ in core.events if kind == "barrier")
        before = 0  # barriers strictly before the event
        for i, (kind, _) in enumerate(core.events):
            if kind == "barrier":
                before += 1
                core.release[i] = core.arrive[i] = before
                continue
            core.release[i] = before
            core.arrive[i] = before + 1 if before < total else _NEVER
    groups: dict[int, list[_Core]] = defaultdict(list)
    for core in cores:
        groups[core.group].append(core)
    for members in groups.values():
        if len(members) > 1:
            _carry(members)


def _pairs(members: list[_Core]) -> list[tuple[_Core, int, _Core, int]]:
    """(setting core, its set's position, waiting core, its wait's position) of every
    cross-core flag hand-over in one core group (an AIC's set reaches each AIV; an AIC's
    wait takes a set from each AIV)."""
    found = []
    for sender in members:
        for receiver in members:
            if sender is receiver or ("aic" not in (sender.name, receiver.name)):
                continue
            sets: dict[object, list[int]] = defaultdict(list)
            waits: dict[object, list[int]] = defaultdict(list)
            for i, (kind, flag) in enumerate(sender.events):
                if kind == "set":
                    sets[flag].append(i)
            for i, (kind, flag) in enumerate(receiver.events):
                if kind == "wait":
                    waits[flag].append(i)
            for flag, positions in sets.items():
                for s, w in zip(positions, waits.get(flag, []), strict=False):
                    found.append((sender, s, receiver, w))
    return found


def _carry(members: list[_Core]) -> None:
    pairs = _pairs(members)
    changed = True
    while changed:
        changed = False
        for sender, s, receiver, w in pairs:
            if sender.release[s] > receiver.release[w]:
                receiver.release[w] = sender.release[s]
                changed = True
            if receiver.arrive[w] < sender.arrive[s]:
                sender.arrive[s] = receiver.arrive[w]
                changed = True
        for core in members:  # program order: later events inherit release, earlier arrive
            for i in range(1, len(core.events)):
                if core.release[i - 1] > core.release[i]:
                    core.release[i] = core.release[i - 1]
                    changed = True
            for i in range(len(core.events) - 2, -1, -1):
                if core.arrive[i + 1] < core.arrive[i]:
                    core.arrive[i] = core.arrive[i + 1]
                    changed = True


def _overlap(a: Window, b: Window) -> bool:
    return all(x0 < y1 and y0 < x1 for (x0, x1), (y0, y1) in zip(a, b, strict=True))


def _describe(op: TileOp) -> str:
    text = str(op).split("\n")[0]
    return text if len(text) <= 140 else text[:137] + "..."


def _check_races(name: str, fn: func.FuncOp, cores: list[_Core]) -> None:
    """Raise on two concurrent accesses (:func:`_concurrent`) to overlapping GM
    elements, one of them a write. Accesses are bucketed by buffer and by the barrier intervals they
    may run in, so only those that can meet are compared."""
    buckets: dict[tuple[int, int], list[tuple[_Core, int, _Access]]] = defaultdict(list)
    last = max((r for c in cores for r in c.release), default=0)
    for core in cores:
        for i, (kind, access) in enumerate(core.events):
            if kind != "access":
                continue
            assert isinstance(access, _Access)
            lo, hi = core.release[i], min(core.arrive[i], last + 1)
            for interval in range(lo, max(lo, hi - 1) + 1):
                buckets[(access.argument, interval)].append((core, i, access))
    reported: set[tuple[int, int]] = set()
    for (argument, _interval), members in buckets.items():
        writers = [m for m in members if m[2].writes]
        for wc, wi, write in writers:
            for oc, oi, other in members:
                if not _concurrent(wc, oc) or (id(write.op), id(other.op)) in reported:
                    continue
                if not _overlap(write.window, other.window):
                    continue
                if wc.arrive[wi] <= oc.release[oi] or oc.arrive[oi] <= wc.release[wi]:
                    continue
                reported.add((id(write.op), id(other.op)))
                buffer = fn.body.block.args[argument]
                label = f"%{buffer.name_hint}" if buffer.name_hint else f"argument #{argument}"
                verb = "overwrites" if other.writes else "reads"
                raise SyncError(
                    f"@{name}: {_who(oc, wc)} {verb} GM {label} that {_who(wc, oc)} "
                    f"writes, with no all-core barrier (tile.sync_all) between them\n"
                    f"  writer (block {wc.group}{_core(wc)}): {_describe(write.op)}\n"
                    f"  {'writer' if other.writes else 'reader'} (block {oc.group}"
                    f"{_core(oc)}): {_describe(other.op)}"
                )


def _concurrent(a: _Core, b: _Core) -> bool:
    """Whether only barriers order the two cores: cores of different groups, or two AIVs
    of one group (no flag passes between them; an AIC and its AIVs are ordered by their
    flags, :func:`~.sync_check.check_mix`'s business)."""
    if a.group != b.group:
        return True
    return a is not b and a.name.startswith("aiv") and b.name.startswith("aiv")


def _who(core: _Core, other: _Core) -> str:
    """``core`` in a message about it and ``other``: its block, and its AIV where both
    are of one block."""
    same = core.group == other.group and core.name
    return f"block {core.group}" + (f" {core.name.upper()}" if same else "")


def _core(core: _Core) -> str:
    return f", {core.name.upper()}" if core.name else ""


def check_launch(
    fn: func.FuncOp,
    blocks: int,
    aiv: func.FuncOp | None = None,
    sub_blocks: int = 1,
    max_trips: int | None = None,
) -> None:
    """Check one launch of ``fn`` over ``blocks`` blocks (a mix launch: ``fn`` its AIC
    part, ``aiv`` its AIV part with ``sub_blocks`` AIVs per group); raises
    :class:`SyncError`."""
    if blocks < 2 and (aiv is None or sub_blocks < 2):
        return
    parts = [fn] if aiv is None else [fn, aiv]
    tracked = exchanged_arguments(parts, mix=aiv is not None)
    if not tracked:
        return
    cores: list[_Core] = []
    for group in range(blocks):
        if aiv is None:
            cores.append(_trace(fn, "", group, blocks, tracked, max_trips))
            continue
        cores.append(_trace(fn, "aic", group, blocks, tracked, max_trips))
        for sub in range(sub_blocks):
            cores.append(_trace(aiv, f"aiv{sub}", group, blocks, tracked, max_trips, sub))
    _place(cores)
    _check_races(fn.sym_name.data, fn, cores)


@dataclass(frozen=True)
class SharedLaunch:
    """A launch of more than one block: its kernel (a mix launch's AIC part), the blocks,
    a mix launch's AIV part and its AIVs per group."""

    fn: func.FuncOp
    blocks: int
    aiv: func.FuncOp | None
    sub_blocks: int

    def check(self, max_trips: int | None = None) -> None:
        check_launch(self.fn, self.blocks, self.aiv, self.sub_blocks, max_trips)


def shared_launches(module: ModuleOp) -> list[SharedLaunch]:
    """The distinct launches of ``module`` that run more than one block (a mix launch:
    more than one AIV)."""
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    found: dict[tuple[str, str | None, int, int], SharedLaunch] = {}
    for launch in module.walk():
        if not isinstance(launch, LaunchOp) or launch.aiv_block_count < 2:
            continue
        aiv_name = launch.aiv_callee
        sub = max(1, launch.aiv_block_count // launch.block_count) if aiv_name else 1
        key = (launch.callee.string_value(), aiv_name, launch.block_count, sub)
        fn = functions.get(key[0])
        aiv = functions.get(aiv_name) if aiv_name else None
        if key in found or fn is None or not fn.body.blocks or (aiv_name and aiv is None):
            continue
        found[key] = SharedLaunch(fn, launch.block_count, aiv, sub)
    return list(found.values())


def check_blocks(module: ModuleOp, max_trips: int | None = None) -> int:
    """Check every distinct launch of more than one block (or AIV) of ``module``;
    returns how many were checked. Raises :class:`SyncError`."""
    launches = shared_launches(module)
    for launch in launches:
        launch.check(max_trips)
    return len(launches)
