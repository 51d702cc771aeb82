"""Costs of the scalar unit's ops: a value read from UB or GM (``tile.get_value``), and the
scalar loops of ScatterND / ScatterElements (``tile.scatter_rows``) and GatherElements on a
long axis (``tile.gather_rows``). The per-element figures are model assumptions
(:data:`SCALAR_READ_CYCLES`, :data:`SCALAR_WRITE_CYCLES`; docs/hardware.md).
"""

from __future__ import annotations

from math import prod

from tilegraph.cost_model.tile_costs.registry import tile_cost
from tilegraph.dialects.tile.base import (
    memref_shape,
    scope_of,
)
from tilegraph.dialects.tile.scalar import GatherRowsOp, GetValueOp, ScatterRowsOp
from tilegraph.hardware import HardwareModel

SCALAR_READ_CYCLES = 10
"""One ``tile.get_value``: a load of one UB element into a scalar register and the index
arithmetic around it (the wrap of a negative index). Not a figure of our sources — the
Ascend C guide only warns that ``GetValue`` is slow next to vector work; a model
assumption, of the order of a scalar load through the scalar unit's data cache."""


SCALAR_WRITE_CYCLES = SCALAR_READ_CYCLES
"""One element stored from a scalar register into UB: taken as a scalar read's cost (a model
assumption like :data:`SCALAR_READ_CYCLES`)."""


@tile_cost(GetValueOp)
def get_value(op: GetValueOp, hw: HardwareModel) -> int:
    """:data:`SCALAR_READ_CYCLES`; a read of GM waits for the GM round trip of a small
    transfer too (:attr:`~HardwareModel.gm_read_latency_cycles`: the scalar unit's load
    stalls until its data is back, where a DMA's issue does not)."""
    if scope_of(op.buffer) == "GM":
        return SCALAR_READ_CYCLES + hw.gm_read_latency_cycles
    return SCALAR_READ_CYCLES


@tile_cost(ScatterRowsOp)
def scatter_rows(op: ScatterRowsOp, hw: HardwareModel) -> int:
    """Per tuple its ``K`` components read (:data:`SCALAR_READ_CYCLES` each, with the wrap
    and the block test); per element written the update read and the element stored, the
    destination read too with a reduction — the scalar loop ``tile.vput`` runs on a core
    without a vector scatter. Which tuples fall in the block is known only when it runs:
    the block's share of the output's rows is charged (tuples spread evenly, an
    assumption; exact for a mask's ``index_put``, whose tuples name each row once)."""
    tuples, width = memref_shape(op.indices)
    block, inner = memref_shape(op.dst)
    # ScatterElements' form: every element a tuple of one component, a row of one element
    lines, length = (tuples * width, 1) if op.per_element else (tuples, inner)
    written = -(-lines * min(block, prod(op.depth_sizes)) // prod(op.depth_sizes))
    per_move = (2 if op.reduce is not None else 1) * SCALAR_READ_CYCLES + SCALAR_WRITE_CYCLES
    return tuples * width * SCALAR_READ_CYCLES + written * length * per_move


@tile_cost(GatherRowsOp)
def gather_rows(op: GatherRowsOp, hw: HardwareModel) -> int:
    """Per element its index read (:data:`SCALAR_READ_CYCLES`, with the wrap and the block
    test); per element in the block the block's element read and the result's written, as
    :func:`scatter_rows` charges a move. Which indices fall in the block is known only when
    it runs: the block's share of the axis is charged (indices spread evenly, an
    assumption)."""
    elements = prod(memref_shape(op.indices))
    block = memref_shape(op.src)[0]
    taken = -(-elements * min(block, op.bound_value) // op.bound_value)
    return elements * SCALAR_READ_CYCLES + taken * (SCALAR_READ_CYCLES + SCALAR_WRITE_CYCLES)
