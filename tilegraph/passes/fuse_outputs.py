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

* both hold ELEMWISE / BROADCAST ops only (no anchor, shape op or conversion);
* every op outside the merged groups that reads a result of theirs comes after the last
  root (the fused op takes that root's place, so each of its outputs is defined before
  its readers, and no value leaving ``A`` can come back into ``B`` through another op);
* every result of their members has the storage shape of that root's results (one tile
  space: a result ``B`` broadcasts stays an input of its own group, as in the grower);
* the merged group fits ``max-ops`` and the UB working set (its outputs stream too).

The merged group's kernel writes every value an op outside it reads
(:func:`~tilegraph.passes.fuse_legality.leaving_values`); the elementwise strategy stores
each output's tile (:func:`~tilegraph.lowering.conversion.tiling.elementwise.
emit_vector_kernel`).
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


def _mergeable(fuser: Fuser, a: Group, readers: list[Group]) -> bool:
    """Whether ``a`` may merge with the groups ``readers`` that read its results (see the
    module docstring)."""
    members = set(a.members).union(*(g.members for g in readers))
    if len(members) > fuser.max_ops:
        return False
    root = _root(fuser, readers)
    if fuser.position[a.root] > fuser.position[root]:
        return False
    end = fuser.position[root]
    results = [r for m in members for r in m.results]
    for r in results:
        for use in r.uses:
            user = use.operation
            if user not in members and fuser.position.get(user, -1) <= end:
                return False
    shape = _shape(root.results[0])
    if shape is None or any(_shape(r) != shape for r in results):
        return False
    return fuser.working_set(members, root) <= fuser.ub_budget


def _readers(a: Group, found: list[Group]) -> list[Group]:
    """The anchor-less elementwise groups other than ``a`` that read a result of ``a``."""
    results = {r for m in a.members for r in m.results}
    return [
        g
        for g in found
        if g is not a
        and _elementwise(g)
        and any(v in results for m in g.members for v in m.operands)
    ]


def _merge_once(fuser: Fuser, found: list[Group]) -> bool:
    """Merge one group into its readers (all of them at once, else the first that it may
    merge into alone); whether one was merged."""
    for a in found:
        if not _elementwise(a):
            continue
        readers = _readers(a, found)
        choices = [readers] if len(readers) > 1 else []
        choices += [[g] for g in readers]
        for chosen in choices:
            if not _mergeable(fuser, a, chosen):
                continue
            merged = Group(_root(fuser, chosen))
            for m in set(a.members).union(*(g.members for g in chosen)):
                merged.members.add(m)
                merged.note(m)
            at = found.index(max(chosen, key=lambda g: fuser.position[g.root]))
            found[at] = merged
            for g in [a, *chosen]:
                if g in found and found.index(g) != at:
                    found.remove(g)
            return True
    return False


def merge_output_groups(fuser: Fuser, groups: list[Group]) -> tuple[list[Group], int]:
    """``groups`` (program order of roots) with anchor-less elementwise groups merged with
    the later groups that read them (see the module docstring); how many merges."""
    found = list(groups)
    merges = 0
    while _merge_once(fuser, found):
        merges += 1
    return found, merges
