"""Zero-size tensors in ``lower-graph-to-kernels``: decided before any tiling strategy runs.

A data-dependent size can be 0 on ordinary inputs (no box above a detector's score
threshold, an NMS that keeps nothing, a NonZero of all-false). GE runs no task for an op
whose output is empty, and Ascend C kernels' tilings return before any work for 0 elements
(docs/hardware.md, "Empty tensors"). Here:

- a kernel whose results all have a zero dim and that reads an empty tensor is **no
  launch**: its results are empty GM allocations (nothing to compute, nothing to write);
  its results' shapes follow from its empty input's. A kernel that makes an empty result
  from inputs that are not empty (a NonZero that finds nothing, an NMS that keeps no box)
  still runs, on the host: its result's size comes from the data, and only running it
  tells a later call whose data give another size (``ShapeChanged``: the Session tiles
  again);
- a kernel with some results that are not empty but an empty tensor among its inputs,
  results or intermediates (a reduction over an empty axis, a matmul with K = 0, a concat
  with an empty part) is a **host kernel**: its value is not empty (ReduceSum over nothing
  is 0, a K = 0 matmul is zeros, then its epilogue) and the reference kernels state that
  rule, where the strategies' tile plans assume at least one element per dim (a tile plan
  over a zero dim divides by zero). A fused group so judged is split as any host group is,
  so its parts that touch no empty tensor still run on a unit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from xdsl.ir import Operation, SSAValue
from xdsl.traits import ConstantLike

from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.layout_type import TensorType

EMPTY_REASON = "a zero-size tensor"


def is_empty(value: SSAValue) -> bool:
    """Whether ``value`` is a tensor with a dim of size 0 (a symbolic or unknown dim is not)
    that data flows through: an empty constant is a parameter given as empty (a Resize's
    ``roi`` or ``scales`` of Paddle's exports), which the op reads as absent, not a tensor
    to tile."""
    t = value.type
    if not isinstance(t, TensorType) or all(d != 0 for d in t.origin_shape):
        return False
    owner = value.owner
    return not (isinstance(owner, Operation) and owner.has_trait(ConstantLike))


def no_launch(inputs: Iterable[SSAValue], results: Sequence[SSAValue]) -> bool:
    """Whether a kernel reading ``inputs`` has nothing to compute: it has results, all
    empty, and an empty input that makes them so (see the module's contract)."""
    return bool(results) and all(is_empty(r) for r in results) and any(is_empty(v) for v in inputs)


def empty_host_reason(
    inputs: Sequence[SSAValue], ops: Sequence[Operation], outputs: Sequence[SSAValue]
) -> str | None:
    """Why a kernel over ``inputs`` computing ``outputs`` with ``ops`` stays on the host
    because of a zero-size tensor (the first one found, named with its shape), or None
    when it touches none. The values inside an op's regions (an If's branches) are not
    looked at: such an op is no tile plan's, and a branch may not run."""
    values: list[SSAValue] = [*inputs]
    taken: set[SSAValue] = set()  # empty operands the op's kernel takes (its facts)
    for op in ops:
        values.extend(op.operands)
        values.extend(op.results)
        if isinstance(op, GraphOp):
            taken.update(op.operands[index] for index in op.FACTS.empty_operands)
    values.extend(outputs)
    for value in values:
        if is_empty(value) and value not in taken:
            t = value.type
            assert isinstance(t, TensorType)
            name = f"%{value.name_hint}" if value.name_hint else "a value"
            shape = "x".join(str(d) for d in t.origin_shape)
            return f"{EMPTY_REASON} ({name} is {shape}): the tile plans need one element per dim"
    return None
