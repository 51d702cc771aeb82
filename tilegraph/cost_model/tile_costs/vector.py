"""Costs of the vector unit's elementwise, reduction, gather (``vpick``) and pooling ops: the
repeats hold the V pipe, the result arrives a latency later (pypto's A2/A3 pipe model;
docs/hardware.md, "Vector latencies").
"""

from __future__ import annotations

from math import ceil, prod
from typing import Any

from xdsl.dialects.builtin import IntegerType

from tilegraph.cost_model.tile_costs.registry import tile_cost
from tilegraph.dialects.tile.base import (
    TileOp,
    buffer_bytes,
    element_bytes,
    memref_element,
    memref_shape,
)
from tilegraph.dialects.tile.dma import int_values
from tilegraph.dialects.tile.vector import CastOp, VectorOp
from tilegraph.dialects.tile.vector_axis import (
    TakeOp,
)
from tilegraph.dialects.tile.vector_layout import PickOp, PoolOp, ReduceOp
from tilegraph.hardware import HardwareModel


def vector_cycles(hw: HardwareModel, nbytes: int, elements: int, transcendental: bool) -> int:
    """Pipe time of a vector instruction: its repeats, 256 bytes (arithmetic) or 32
    elements (transcendental) a cycle per the hardware model. The instruction's result
    arrives later (:func:`vector_latency_cycles`): pypto's A2/A3 pipe model issues the next
    vector instruction once the repeats are done (``CalcVecOp``: ``popTime`` at the
    previous ``exeTime``)."""
    if transcendental:
        repeats = ceil(elements / hw.vector_transcendental_elems_per_cycle)
    else:
        repeats = ceil(nbytes / hw.vector_bytes_per_cycle)
    return max(1, repeats)


VECTOR_DELAY_CYCLES: dict[str, int] = {
    "vadd": 6,
    "vsub": 6,
    "vsel": 6,
    "vadds": 6,
    "vmul": 7,
    "vmuls": 7,
    "vdiv": 13,
    "vexp": 12,
    "vln": 14,
    "vsqrt": 13,
    "vrsqrt": 5,
    "vrec": 5,
    "vabs": 4,
    "vmax": 4,
    "vmin": 4,
    "vmaxs": 4,
    "vmins": 4,
    "vcopy": 4,
    "vcast": 4,
}
"""Each vector instruction's own pipeline delay on floating-point data, before the common
:attr:`~HardwareModel.vector_result_latency_cycles`: the delay column of pypto's
cycle-accurate A2/A3 vector table (``model/def.h``, ``VEC_VALU_TAB``; ``vcast`` is its
``CalcVconv``), the same for fp16 and fp32. Integer add / sub / select take 4 and
multiplies 5 there (:data:`INTEGER_DELAY_CYCLES`)."""

INTEGER_DELAY_CYCLES: dict[str, int] = {"vadd": 4, "vsub": 4, "vsel": 4, "vadds": 4}
INTEGER_DELAY_CYCLES |= {"vmul": 5, "vmuls": 5}

CROSS_LANE_DELAY_CYCLES: dict[tuple[str, bool], int] = {
    ("sum", True): 23,
    ("sum", False): 20,
    ("max", True): 9,
    ("max", False): 8,
    ("min", True): 9,
    ("min", False): 8,
}
"""The delay of a row reduction's last instruction, by (kind, 16-bit data): ``vcadd``
23 (fp16) / 20 (fp32), ``vcmax`` / ``vcmin`` 9 / 8 (pypto's table, as above). Other kinds
end in a ``vcadd``."""

DEFAULT_DELAY_CYCLES = 4
"""The delay of an instruction pypto's table lacks: its least entry (``vmax``, ``vabs``,
``vcopy``, ``vconv``...) — an assumption, the optimistic end; a transcendental op the
table lacks (``vtanh``, ``verf``, ``vpow``...) takes ``vexp``'s 12 instead."""


def _is_16bit(value: Any) -> bool:
    return element_bytes(memref_element(value)) == 2


def vector_delay_cycles(op: TileOp) -> int:
    """The pipeline delay of ``op``'s last vector instruction (see
    :data:`VECTOR_DELAY_CYCLES`)."""
    if isinstance(op, ReduceOp):
        src = memref_shape(op.src)
        innermost = len(src) - 1
        if isinstance(memref_element(op.src), IntegerType):  # halving vadds / vmax / vmin
            return INTEGER_DELAY_CYCLES["vadd"]
        if innermost in op.reduced_axes() and src[innermost] > 1:
            kind = op.kind.data if op.kind.data in ("max", "min") else "sum"
            return CROSS_LANE_DELAY_CYCLES[(kind, _is_16bit(op.src))]
        return VECTOR_DELAY_CYCLES["vmax" if op.kind.data in ("max", "min") else "vadd"]
    name = op.name.removeprefix("tile.")
    if isinstance(op, VectorOp) and not isinstance(op, CastOp):
        if (
            isinstance(memref_element(op.destination()), IntegerType)
            and name in INTEGER_DELAY_CYCLES
        ):
            return INTEGER_DELAY_CYCLES[name]
        if name not in VECTOR_DELAY_CYCLES and op.TRANSCENDENTAL:
            return VECTOR_DELAY_CYCLES["vexp"]
    return VECTOR_DELAY_CYCLES.get(name, DEFAULT_DELAY_CYCLES)


def vector_latency_cycles(op: TileOp, hw: HardwareModel) -> int:
    """How long after its pipe time a vector op's result is in UB:
    :attr:`~HardwareModel.vector_result_latency_cycles` and the op's own delay
    (:func:`vector_delay_cycles`). What reads it waits (a dependent vector op behind its
    ``pipe_barrier`` V, a flag to another pipe); the next independent op does not. 0 on a
    preset without the figure."""
    if not hw.vector_result_latency_cycles:
        return 0
    return hw.vector_result_latency_cycles + vector_delay_cycles(op)


@tile_cost(VectorOp)
def vector(op: VectorOp, hw: HardwareModel) -> int:
    dst = op.destination()
    return vector_cycles(hw, buffer_bytes(dst), prod(memref_shape(dst)), op.TRANSCENDENTAL)


@tile_cost(CastOp)
def cast(op: CastOp, hw: HardwareModel) -> int:
    elements = prod(memref_shape(op.destination()))
    return max(1, ceil(elements / hw.vector_cast_elems_per_cycle))


@tile_cost(ReduceOp)
def reduce(op: ReduceOp, hw: HardwareModel) -> int:
    """One elementwise pass over the source (a halving tree of adds or maxima along the
    reduced axes), and, when the innermost axis is reduced, one cross-lane repeat per
    result element (``vcadd`` / ``vcmax`` across the lanes of the last repeat, as CANN's
    row reductions end) at :attr:`~HardwareModel.vector_cross_lane_cycles` — unless the
    sum of a short innermost axis is cheaper as pair passes (:func:`pair_sum_cycles`).
    Integers have no cross-lane instruction: their rows end by halving passes
    (:func:`integer_fold_cycles`)."""
    src = memref_shape(op.src)
    cycles = vector_cycles(hw, buffer_bytes(op.src), prod(src), False)
    innermost = len(src) - 1
    if innermost in op.reduced_axes() and src[innermost] > 1:
        if isinstance(memref_element(op.src), IntegerType):
            rows = prod(memref_shape(op.dst))
            return cycles + integer_fold_cycles(
                hw, src[innermost], rows, element_bytes(memref_element(op.src))
            )
        cycles += prod(memref_shape(op.dst)) * hw.vector_cross_lane_cycles
        if op.reduced_axes() == (innermost,) and op.kind.data == "sum":
            pairs = pair_sum_cycles(hw, src[innermost], buffer_bytes(op.src))
            cycles = min(cycles, pairs) if pairs is not None else cycles
    return cycles


def integer_fold_cycles(hw: HardwareModel, extent: int, rows: int, eb: int) -> int:
    """The last lanes of ``rows`` integer rows of ``extent`` elements (``eb`` bytes each)
    folded to one: no cross-lane instruction takes integers (``vcadd`` / ``WholeReduceSum``
    / ``vcmax``: half and float only), so each row's lanes of one repeat halve by ``vadd``
    (or ``vmax`` / ``vmin``) of its upper half onto its lower half, ``ceil(log2(lanes))``
    passes over all rows at once, each pass's repeats over the bytes left."""
    lanes = min(extent, max(1, hw.vector_bytes_per_cycle // eb))
    cycles = 0
    while lanes > 1:
        lanes = -(-lanes // 2)
        cycles += vector_cycles(hw, rows * lanes * eb, rows * lanes, False)
    return cycles


def pair_sum_cycles(hw: HardwareModel, extent: int, nbytes: int) -> int | None:
    """A sum over an innermost axis of ``extent`` elements (a power of two) as
    ``log2(extent)`` passes of Ascend C's ``PairReduceSum`` (``vcpadd``: adjacent pairs
    summed within each 256-byte repeat, on A2 / A3 and the 310P's AI core), each pass over
    half the bytes of the one before; a pass's repeats are charged as the cross-lane
    reduction's (:attr:`~HardwareModel.vector_cross_lane_cycles` each — an assumption: no
    figure of its own is published). None for an extent that is not a power of two."""
    if extent < 2 or extent & (extent - 1):
        return None
    cycles, remaining = 0, nbytes
    while extent > 1:
        cycles += ceil(remaining / hw.vector_bytes_per_cycle) * hw.vector_cross_lane_cycles
        remaining, extent = remaining // 2, extent // 2
    return cycles


PICK_OFFSET_BYTES = 4
"""Bytes of one entry of a gather's offset table (Ascend C ``Gather``: a u32 byte offset
per element), read by the vector unit alongside the data."""


@tile_cost(PickOp)
def pick(op: PickOp | TakeOp, hw: HardwareModel) -> int:
    """A gather by offset table: repeats over the result's bytes and its offsets."""
    dst = op.destination()
    elements = prod(memref_shape(dst))
    return vector_cycles(hw, buffer_bytes(dst) + PICK_OFFSET_BYTES * elements, elements, False)


@tile_cost(PoolOp)
def pool(op: PoolOp, hw: HardwareModel) -> int:
    kh, kw = int_values(op.kernel_shape)
    dst = op.destination()
    return kh * kw * vector_cycles(hw, buffer_bytes(dst), prod(memref_shape(dst)), False)
