"""Batch slots of img2col tiles laid out in the row-major order the cube's GEMM reads.

A K loop run as one (:mod:`.batching`) gives its L0A buffer a slot per point of the nest
``(*batch, M1, K1, 16, K0)`` (ZZ); :func:`~tilegraph.runtime.fast_executor.cube.nest_product`
multiplies all K steps as one GEMM, which needs each tile's operand as a row-major ``(M,
S * K1 * K0)`` matrix and so copied it into that order — a strided copy as large as the
operand. When the buffer is written only by ``tile.load3d`` (whose nest form gathers
through any strides, :mod:`.load3d_steps`) and read only by ``tile.mmad`` summing along the
K axis, its slots are instead a view of bytes ordered ``(*rest, M1, 16, S, K1, K0)``: every
op still sees ZZ tiles (the view's strides say where each element lives), and the GEMM's
operand is the bytes as they lie. Only where elements live changes, never their values.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import scf
from xdsl.ir import SSAValue

from tilegraph.dialects.tile import Load3dOp, MmadOp, scope_of
from tilegraph.dialects.tile.base import memref_shape
from tilegraph.runtime.fast_executor.batching import NestPlan
from tilegraph.runtime.fast_executor.scratch import scratch


def row_major_axis(buffer: SSAValue, plan: NestPlan, nest: scf.ForOp) -> int | None:
    """The accumulation axis along which ``buffer``'s slots may be laid out row-major (see
    the module docstring), or None: an L0A buffer written inside ``nest`` only by
    ``tile.load3d`` whose K start varies along that axis, read there only as the left
    operand of ``tile.mmad`` summing along it, and not used outside the nest."""
    if scope_of(buffer) != "L0A" or len(memref_shape(buffer)) != 4:
        return None
    inside = set(nest.walk())
    axis: int | None = None
    for use in buffer.uses:
        user = use.operation
        if user not in inside:
            return None
        if isinstance(user, Load3dOp) and use.index == 2:
            continue
        if not isinstance(user, MmadOp) or use.index != 0 or user not in plan.summed:
            return None
        if axis not in (None, plan.summed[user]):
            return None
        axis = plan.summed[user]
    if axis is None or plan.batched.get(buffer) is None or axis not in plan.batched[buffer]:
        return None
    for use in buffer.uses:
        user = use.operation
        if isinstance(user, Load3dOp) and axis not in plan.varying.get(user.operands[1], ()):
            return None  # one K start for every step: the flattened img2col writes it
    return axis


def row_major_slots(
    axis: int, ordinal: int, buffer: np.ndarray, batch: tuple[int, ...]
) -> np.ndarray:
    """``buffer`` (ZZ ``(M1, K1, 16, K0)``) with a slot per point of ``batch`` (summing
    along ``axis``), as :func:`.scratch.slots` gives, but a view of bytes ordered
    ``(*batch without axis, M1, 16, S, K1, K0)``."""
    m1, k1, m0, k0 = buffer.shape
    rank = len(batch)
    rest = [n for i, n in enumerate(batch) if i != axis]
    base = scratch(f"slots{ordinal}", (*rest, m1, m0, batch[axis], k1, k0), buffer.dtype)
    order = [i if i < axis else i - 1 for i in range(rank)]
    order[axis] = rank + 1  # S
    return base.transpose(*order, rank - 1, rank + 2, rank, rank + 3)
