"""Costs of the vector unit's ops along an axis: scan, arg-reduce, top-k, take / put by an
offset tensor, one-hot, arange and taps (Ascend C's ``CumSum``, ``ReduceMax`` with
``calIndex``, ``Sort32`` / ``MrgSort``, ``Gather`` / ``Scatter``...).
"""

from __future__ import annotations

from math import ceil, log, log2, prod

from tilegraph.cost_model.tile_costs.registry import tile_cost
from tilegraph.cost_model.tile_costs.scalar import SCALAR_READ_CYCLES, SCALAR_WRITE_CYCLES
from tilegraph.cost_model.tile_costs.vector import PICK_OFFSET_BYTES, pick, vector_cycles
from tilegraph.dialects.tile.base import (
    buffer_bytes,
    memref_shape,
)
from tilegraph.dialects.tile.vector_axis import (
    ArangeOp,
    ArgOp,
    OneHotOp,
    PutOp,
    ScanOp,
    TakeOp,
    TapsOp,
    TopKOp,
)
from tilegraph.hardware import HardwareModel


@tile_cost(ScanOp)
def scan(op: ScanOp, hw: HardwareModel) -> int:
    """A log-step (Hillis-Steele) scan: ``ceil(log2 n)`` shifted adds over the tile, ``n``
    its extent along the axis (Ascend C ``CumSum`` on a UB tile)."""
    src = op.src
    n = memref_shape(src)[int(op.axis.value.data)]
    steps = max(1, ceil(log2(n))) if n > 1 else 1
    return steps * vector_cycles(hw, buffer_bytes(src), prod(memref_shape(src)), False)


@tile_cost(ArgOp)
def arg(op: ArgOp, hw: HardwareModel) -> int:
    """A reduce that keeps the index beside the value (``ReduceMax`` with ``calIndex``):
    its repeats read the source and the index of each element."""
    src = op.src
    elements = prod(memref_shape(src))
    return vector_cycles(hw, buffer_bytes(src) + PICK_OFFSET_BYTES * elements, elements, False)


SORT_RUN = 32
"""Elements one sort instruction orders (Ascend ``Sort32``); longer axes merge runs four at
a time (``MrgSort``)."""


@tile_cost(TopKOp)
def top_k(op: TopKOp, hw: HardwareModel) -> int:
    """Sort the (value, index) pairs along the axis: one pass of 32-element sorts, then
    ``ceil(log4(n / 32))`` merge passes, each over the whole tile of pairs."""
    src = op.src
    n = memref_shape(src)[int(op.axis.value.data)]
    elements = prod(memref_shape(src))
    merges = ceil(log(max(n, 1) / SORT_RUN, 4)) if n > SORT_RUN else 0
    pair_bytes = buffer_bytes(src) + PICK_OFFSET_BYTES * elements
    return (1 + merges) * vector_cycles(hw, pair_bytes, elements, False)


@tile_cost(TakeOp)
def take(op: TakeOp, hw: HardwareModel) -> int:
    """A gather by an offset tensor: repeats over the result and its offsets (as vpick)."""
    return pick(op, hw)


@tile_cost(PutOp)
def put(op: PutOp, hw: HardwareModel) -> int:
    """A scatter by an offset tensor: as a gather's repeats (over the source's bytes and
    its offsets) where the vector unit scatters (:attr:`HardwareModel.vector_scatter`),
    else per element on the scalar unit — its position and its value read, the element
    written (Ascend C's advice for A2 / A3: a scalar scatter). With a ``reduction`` on
    every core per element on the scalar unit, the destination's element read too (Ascend
    C's ``Scatter`` only writes)."""
    src = op.src
    elements = prod(memref_shape(src))
    if op.reduce is not None:  # Scatter writes, it does not combine: the scalar unit does
        return elements * (3 * SCALAR_READ_CYCLES + SCALAR_WRITE_CYCLES)
    if hw.vector_scatter:
        return vector_cycles(hw, buffer_bytes(src) + PICK_OFFSET_BYTES * elements, elements, False)
    return elements * (2 * SCALAR_READ_CYCLES + SCALAR_WRITE_CYCLES)


@tile_cost(OneHotOp)
def one_hot(op: OneHotOp, hw: HardwareModel) -> int:
    """A compare against an index vector and a select, each over the result."""
    dst = op.dst
    return 2 * vector_cycles(hw, buffer_bytes(dst), prod(memref_shape(dst)), False)


@tile_cost(ArangeOp)
def arange(op: ArangeOp, hw: HardwareModel) -> int:
    """CANN's ``Arange`` operator: ``Duplicate``, ``Mul`` and ``Add``, each over the
    result."""
    dst = op.dst
    return 3 * vector_cycles(hw, buffer_bytes(dst), prod(memref_shape(dst)), False)


@tile_cost(TapsOp)
def taps(op: TapsOp, hw: HardwareModel) -> int:
    """Per tap a multiply-add over the result; along the innermost axis each tap first
    gathers its columns by an offset table (as ``vpick``), along an outer one a tap is a
    row address and its weight a scalar (``Axpy``)."""
    dst = op.dst
    elements = prod(memref_shape(dst))
    nbytes = buffer_bytes(dst)
    per_tap = 2 * vector_cycles(hw, nbytes, elements, False)
    if int(op.axis.value.data) == len(memref_shape(dst)) - 1:
        per_tap += vector_cycles(hw, nbytes + PICK_OFFSET_BYTES * elements, elements, False)
    return op.taps() * per_tap
