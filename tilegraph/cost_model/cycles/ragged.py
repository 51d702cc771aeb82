"""Ops whose cost depends on an index value: a matmul's ragged last block.

``tile.mmad`` with ``m`` / ``n`` and ``tile.load2d`` with ``valid`` (Ascend C's
``MmadParams`` m / n, and the L1 -> L0 load feeding such an ``mmad``) work on the leading
fractals their extents leave, ``ceil(extent / 16)`` of the buffer's along each ragged
axis, and are charged for those only. The cycle model's records are static, so such an op
has one record per combination of fractal counts (:func:`ragged_records`, the first axis
major), and each instance issues the one its extents pick (:func:`record_index`, Python
source evaluated in the compiled kernel). :func:`ragged_axes` says which ops are ragged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from itertools import product
from math import prod
from typing import TYPE_CHECKING, Any

from xdsl.ir import SSAValue

from tilegraph.cost_model.tile_costs import load2d_cycles, mmad_cycles
from tilegraph.dialects.tile import Load2dOp, MmadOp, TileOp
from tilegraph.hardware import HardwareModel

if TYPE_CHECKING:  # program.py imports this module
    from tilegraph.cost_model.cycles.program import OpRecord


def ragged_axes(op: TileOp) -> tuple[tuple[SSAValue, int], ...]:
    """(extent operand in elements, the buffer's fractals along it) of each ragged axis of
    ``op``, in record order; empty when ``op`` is not ragged."""
    if isinstance(op, MmadOp):
        m1, n1 = op.valid_fractals()
        return tuple((v, whole) for v, whole in ((op.m, m1), (op.n, n1)) if v is not None)
    if isinstance(op, Load2dOp) and op.valid is not None:
        return ((op.valid, op.ragged_fractals()),)
    return ()


def _mmad_record(
    op: MmadOp, base: OpRecord, hw: HardwareModel, counts: tuple[int, ...]
) -> OpRecord:
    given = iter(counts)
    m1, n1 = op.valid_fractals()
    mf = next(given) if op.m is not None else m1
    nf = next(given) if op.n is not None else n1
    cost = mmad_cycles(op, hw, mf, nf)
    k = op.dims()[1]
    return replace(
        base, cost=cost, mac_cycles=cost - hw.mmad_head_cycles, flops=2 * mf * k * nf * 256
    )


def _load2d_record(
    op: Load2dOp, base: OpRecord, hw: HardwareModel, counts: tuple[int, ...]
) -> OpRecord:
    (fractals,) = counts
    return replace(base, cost=load2d_cycles(op, hw, fractals), moved_bytes=op.moved_bytes(fractals))


_RECORDS: dict[type, Callable[..., Any]] = {MmadOp: _mmad_record, Load2dOp: _load2d_record}
"""How each ragged op class's record for some fractal counts is made from the whole one."""


def ragged_records(op: TileOp, base: OpRecord, hw: HardwareModel) -> list[OpRecord]:
    """The records of a ragged ``op`` (see the module docstring): ``base`` (the whole op's)
    with the cost and work of each combination of fractal counts, 1 .. whole per axis."""
    ranges = [range(1, whole + 1) for _, whole in ragged_axes(op)]
    make = _RECORDS[type(op)]
    return [make(op, base, hw, counts) for counts in product(*ranges)]


def record_index(op: TileOp, first: int, name: Callable[[SSAValue], str]) -> str:
    """Python source of the record an instance of the ragged ``op`` issues, its records
    starting at ``first``; ``name``: the Python name of an SSA value."""
    axes = ragged_axes(op)
    terms = [str(first)]
    for i, (extent, whole) in enumerate(axes):
        stride = prod(w for _, w in axes[i + 1 :])
        terms.append(f"(min(-(-{name(extent)} // 16), {whole}) - 1) * {stride}")
    return " + ".join(terms)
