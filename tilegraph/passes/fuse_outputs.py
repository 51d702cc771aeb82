"""Elementwise groups of several outputs (``fuse-ops``' ``output-groups-merged``).

A group grows from one root and a producer joins only when all its readers are members, so
a value read by two elementwise chains ends a group: an LSTM cell's new cell state ``c'``
is read by ``tanh(c')`` for the hidden state and by the masked ``c`` the step carries;
tf2onnx's masked Keras cell (``SelectV2`` as ``m·new + (1 - m)·old`` for ``h``, its copy
and ``c``) then runs as five vector kernels, each re-reading the gates through GM. XLA's
multi-output fusion (and GE's fused DynamicRNN cell) computes them in one kernel that
writes each output.

:func:`merge_output_groups` merges an anchor-less elementwise group ``A`` into a later one
``B`` that reads a result of ``A`` when:

* both hold ELEMWISE / BROADCAST ops only (no anchor, shape op or conversion);
* every op outside ``A`` and ``B`` that reads a result of ``A`` comes after ``B``'s root
  (the fused op takes the root's place, so each of its outputs is defined before its
  readers, and no value leaving ``A`` can come back into ``B`` through another op);
* every result of ``A`` has the storage shape of ``B``'s root results (one tile space: a
  result ``B`` broadcasts stays an input of its own group, as in the grower);
* the merged group fits ``max-ops`` and the UB working set (its outputs stream too).

The merged group's kernel writes every value an op outside it reads
(:func:`~tilegraph.passes.fuse_legality.leaving_values`); the elementwise strategy stores
each output's tile (:func:`~tilegraph.lowering.conversion.tiling.elementwise.
emit_vector_kernel`).
"""

from __future__ import annotations

from xdsl.ir import SSAValue

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


def _mergeable(fuser: Fuser, a: Group, b: Group) -> bool:
    """Whether ``a`` may merge into the later ``b`` (see the module docstring)."""
    members = a.members | b.members
    reads = {v for m in b.members for v in m.operands}
    results = [r for m in a.members for r in m.results]
    if not reads.intersection(results) or len(members) > fuser.max_ops:
        return False
    end = fuser.position[b.root]
    for r in results:
        for use in r.uses:
            user = use.operation
            if user not in members and fuser.position.get(user, -1) <= end:
                return False
    shape = _shape(b.root.results[0])
    if shape is None or any(_shape(r) != shape for r in (*results, *b.root.results)):
        return False
    return fuser.working_set(members, b.root) <= fuser.ub_budget


def merge_output_groups(fuser: Fuser, groups: list[Group]) -> tuple[list[Group], int]:
    """``groups`` (program order of roots) with anchor-less elementwise groups merged into
    the later groups that read them (see the module docstring); how many merges."""
    found = list(groups)
    merges = 0
    changed = True
    while changed:
        changed = False
        for j, b in enumerate(found):
            if not _elementwise(b):
                continue
            for i in range(j):
                a = found[i]
                if _elementwise(a) and _mergeable(fuser, a, b):
                    for m in a.members:
                        b.members.add(m)
                        b.note(m)
                    del found[i]
                    merges += 1
                    changed = True
                    break
            if changed:
                break
    return found, merges
