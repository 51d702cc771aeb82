"""Elementwise groups of several outputs (``fuse-ops``' ``output-groups-merged``).

A group grows from one root and a producer joins only when all its readers are members, so
a value read by two elementwise chains ends a group: an LSTM cell's new cell state ``c'``
is read by ``tanh(c')`` for the hidden state and by the masked ``c`` the step carries;
tf2onnx's masked Keras cell (``SelectV2`` as ``m·new + (1 - m)·old`` for ``h``, its copy
and ``c``) then runs as five vector kernels, each re-reading the gates through GM. XLA's
multi-output fusion (and GE's fused DynamicRNN cell) computes them in one kernel that
writes each output.

:func:`merge_output_groups` merges an anchor-less elementwise group ``A`` with the later
groups that read its results — all of them at once (``c'`` read by the ``h`` chain and by
the masked ``c``, whose ops interleave), else one ``B`` alone — when:

* both hold ELEMWISE / BROADCAST ops only (no anchor, shape op or conversion); a lone
  elementwise op counts as a group of one, as ``A`` or as a reader (Mamba-2's ``dt·A``,
  one multiply of the clamped ``softplus(dt + b)``, was a kernel of its own; so were
  YOLOv8's box corners ``anchor ∓ distance``, each read by the centre and the size);
* no op outside the merged groups that reads a result of theirs before the last root (the
  fused op takes that root's place) leads back into them; such readers, and what reads
  them before that root, move right after it (``output-readers-moved``), so each output is
  defined before its readers and no value leaving ``A`` comes back into ``B`` (Mamba-2's
  ``x·dt[..., None]``, which broadcasts ``dt`` and so stays a kernel of its own, came
  between ``dt`` and ``dt·A``);
* every result of their members has the storage shape of that root's results (one tile
  space: a result ``B`` broadcasts stays an input of its own group, as in the grower);
* the merged group fits ``max-ops`` and the UB working set (its outputs stream too).

The merged group's kernel writes every value an op outside it reads
(:func:`~tilegraph.passes.fuse_legality.leaving_values`); the elementwise strategy stores
each output's tile (:func:`~tilegraph.lowering.conversion.tiling.elementwise.
emit_vector_kernel`).

Recomputing ``A`` in each reader's kernel instead (no GM round trip, no output) is not done:
on the models measured (Mamba-2, SwiftFormer, Pegasus-X, DAB-DETR) no fan-out had every
reader able to take a copy — one broadcasts it (``x·dt[..., None]``), feeds a matmul
(SwiftFormer's normalised query) or slices it (DAB-DETR's sine embedding) — so ``A``'s
kernel would stay and the copies would only add reads of ``A``'s inputs.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.fuse_grow import Fuser
from tilegraph.passes.fuse_legality import EPILOGUE_KINDS, Group, fusion_kind


def _elementwise(group: Group) -> bool:
    return group.anchor is None and all(fusion_kind(m) in EPILOGUE_KINDS for m in group.members)


def _shape(value: SSAValue) -> tuple[int, ...] | None:
    t = value.type
    if not isinstance(t, TensorType) or not t.is_static:
        return None
    return tuple(int(d) for d in t.storage_shape)


def _root(fuser: Fuser, groups: list[Group]) -> Operation:
    return max((g.root for g in groups), key=lambda r: fuser.position[r])


def _readers_to_move(
    fuser: Fuser, members: set[Operation], end: int, found: list[Group]
) -> list[Operation] | None:
    """The ops outside ``members`` at or before position ``end`` (the merged group's root)
    that read its results, directly or through each other, in program order: they move
    right after the root. None when one of them leads back into ``members`` (the merged
    kernel would read what it feeds), or is a member of another group whose root stays at
    or before ``end`` while the mover would not (that group's kernel runs at its root)."""
    moving: set[Operation] = set()
    stack = [r for m in members for r in m.results]
    while stack:
        for use in stack.pop().uses:
            user = _in_block(fuser, use.operation)
            if user is None or user in members:
                continue
            at = fuser.position[user]
            if at > end or user in moving:
                continue
            moving.add(user)
            stack.extend(user.results)
    if not moving:
        return []
    if _feeds(moving, members):
        return None
    for g in found:
        if fuser.position[g.root] <= end and (g.members & moving) and g.root not in moving:
            return None
    return sorted(moving, key=lambda op: fuser.position[op])


def _in_block(fuser: Fuser, op: Operation) -> Operation | None:
    """``op``, or the op of the fused block that holds it (a loop whose body reads)."""
    found: Operation | None = op
    while found is not None and found not in fuser.position:
        found = found.parent_op()
    return found


def _feeds(sources: set[Operation], members: set[Operation]) -> bool:
    """Whether a member reads a result of ``sources`` (directly; ``sources`` is closed
    under readers before the root, so an indirect path goes through one of them)."""
    return any(
        isinstance(v.owner, Operation) and v.owner in sources for m in members for v in m.operands
    )


def _mergeable(
    fuser: Fuser, a: Group, readers: list[Group], found: list[Group]
) -> list[Operation] | None:
    """The readers to move when ``a`` may merge with the groups ``readers`` that read its
    results (see the module docstring); None when it may not."""
    members = set(a.members).union(*(g.members for g in readers))
    if len(members) > fuser.max_ops:
        return None
    root = _root(fuser, readers)
    if fuser.position[a.root] > fuser.position[root]:
        return None
    results = [r for m in members for r in m.results]
    shape = _shape(root.results[0])
    if shape is None or any(_shape(r) != shape for r in results):
        return None
    if fuser.working_set(members, root) > fuser.ub_budget:
        return None
    return _readers_to_move(fuser, members, fuser.position[root], found)


def _readers(fuser: Fuser, a: Group, found: list[Group]) -> list[Group]:
    """The anchor-less elementwise groups other than ``a`` that read a result of ``a``, and
    the lone elementwise ops that do (:func:`_lone`)."""
    users = {use.operation for m in a.members for r in m.results for use in r.uses}
    return [
        g for g in found if g is not a and _elementwise(g) and not users.isdisjoint(g.members)
    ] + _lone(fuser, found, list(users))


def _lone(fuser: Fuser, found: list[Group], ops: list[Operation]) -> list[Group]:
    """Each elementwise op of ``ops`` in the block and in no group, as a group of one (a
    kernel of its own all the same), in program order."""
    grouped = {m for g in found for m in g.members}
    lone = {
        op
        for op in ops
        if op in fuser.position and op not in grouped and fusion_kind(op) in EPILOGUE_KINDS
    }
    return [Group(op) for op in sorted(lone, key=lambda op: fuser.position[op])]


def _move_after(fuser: Fuser, ops: list[Operation], root: Operation) -> None:
    """Move ``ops`` (program order) right after ``root``, keeping their order; positions
    are renumbered."""
    block = root.parent_block()
    assert block is not None
    at = root
    for op in ops:
        op.detach()
        block.insert_op_after(op, at)
        at = op
    fuser.position = {op: i for i, op in enumerate(block.ops)}


def _merge_once(fuser: Fuser, found: list[Group]) -> tuple[bool, int]:
    """Merge one group into its readers (all of them at once, else the first that it may
    merge into alone); whether one was merged, and how many readers moved."""
    candidates = [*found, *_lone(fuser, found, list(fuser.position))]
    for a in sorted(candidates, key=lambda g: fuser.position[g.root]):
        if not _elementwise(a):
            continue
        readers = _readers(fuser, a, found)
        choices = [readers] if len(readers) > 1 else []
        choices += [[g] for g in readers]
        for chosen in choices:
            moved = _mergeable(fuser, a, chosen, found)
            if moved is None:
                continue
            merged = Group(_root(fuser, chosen))
            for m in set(a.members).union(*(g.members for g in chosen)):
                merged.members.add(m)
                merged.note(m)
            if moved:
                _move_after(fuser, moved, merged.root)
            for g in [a, *chosen]:
                if g in found:
                    found.remove(g)
            found.append(merged)
            found.sort(key=lambda g: fuser.position[g.root])
            return True, len(moved)
    return False, 0


def merge_output_groups(fuser: Fuser, groups: list[Group]) -> tuple[list[Group], int, int]:
    """``groups`` (program order of roots) with anchor-less elementwise groups merged with
    the later groups that read them (see the module docstring); how many merges, and how
    many readers moved after a merged group."""
    found = list(groups)
    merges = moves = 0
    while True:
        merged, moved = _merge_once(fuser, found)
        if not merged:
            return found, merges, moves
        merges += 1
        moves += moved
