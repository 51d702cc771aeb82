"""Ops whose cost depends on an index value: a matmul's ragged last block.

``tile.mmad`` with ``m`` / ``n`` / ``k``, ``tile.load2d`` with ``valid`` / ``k`` (Ascend
C's ``MmadParams`` m / n / k, and the L1 -> L0 loads feeding such an ``mmad``),
``tile.nd2nz`` with ``rows`` / ``cols`` (the block's GM -> L1 window, ``Nd2NzParams``
nValue / dValue) and ``tile.fixpipe`` with ``m`` / ``n`` (``FixpipeParams`` mSize / nSize)
work on the leading fractals their extents leave, ``ceil(extent / size)`` of the buffer's
along each ragged axis (``size``: 16, K0 along K, an NZ window's C0 along its columns;
1 along an ``nd2nz``'s and a fixpipe's rows, which the DMA and FIX move one by one), and
are charged for those only. The cycle model's records are static, so such an op has
one record per combination of fractal counts (:func:`ragged_records`, the first axis
major), and each instance issues the one its extents pick (:func:`record_index`, Python
source evaluated in the compiled kernel). :func:`ragged_axes` says which ops are ragged.
A cube-path ``tile.copy`` cut at its GM tensor's end is ragged too, its extents computed
from its offsets (:mod:`.cut_window`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from itertools import product
from math import ceil, prod
from typing import TYPE_CHECKING

from xdsl.ir import SSAValue

from tilegraph.cost_model.cycles.cut_window import CutExtent, cut_extents, cut_records
from tilegraph.cost_model.tile_costs import (
    fixpipe_cycles,
    fixpipe_gm_burst_bytes,
    fixpipe_out_bytes,
    fixpipe_read_bytes,
    gm_latency_cycles,
    load2d_cycles,
    mmad_cycles,
    nd2nz_cycles,
)
from tilegraph.dialects.tile import CopyOp, FixpipeOp, Load2dOp, MmadOp, Nd2NzOp, TileOp
from tilegraph.dialects.tile.base import memref_shape
from tilegraph.hardware import HardwareModel

if TYPE_CHECKING:  # program.py imports this module
    from tilegraph.cost_model.cycles.program import OpRecord


Extent = SSAValue | CutExtent
"""A ragged axis's valid extent in elements: an operand, or a cut copy's GM dim less its
offset."""


def ragged_axes(op: TileOp) -> tuple[tuple[Extent, int, int], ...]:
    """(extent in elements, the buffer's fractals along it, elements a fractal holds along
    it) of each ragged axis of ``op``, in record order; empty when ``op`` is not ragged (a
    cut copy's units stand for fractals: :mod:`.cut_window`)."""
    if isinstance(op, CopyOp):
        return cut_extents(op)
    if isinstance(op, MmadOp):
        m1, n1 = op.valid_fractals()
        k0 = memref_shape(op.a)[-1]
        extents = ((op.m, m1, 16), (op.n, n1, 16), (op.k, op.k_fractals(), k0))
    elif isinstance(op, FixpipeOp):  # rows one by one: FIX moves mSize rows
        m1, n1 = op.valid_fractals()
        extents = ((op.m, 16 * m1, 1), (op.n, n1, 16))
    elif isinstance(op, Load2dOp):
        k0 = memref_shape(op.dst)[-1]
        extents = ((op.valid, op.ragged_fractals(), 16), (op.valid_k, op.k_fractals(), k0))
    elif isinstance(op, Nd2NzOp):  # rows one by one: the DMA moves nValue rows
        r1, c1 = op.whole_fractals()
        extents = ((op.valid_rows, 16 * r1, 1), (op.valid_cols, c1, memref_shape(op.dst)[-1]))
    else:
        return ()
    return tuple((v, whole, size) for v, whole, size in extents if v is not None)


def _whole_and_extents(op: TileOp) -> tuple[tuple[int, ...], tuple[SSAValue | None, ...]]:
    """A ragged op's fractal count along each of its axes (the whole buffer's) and each
    axis's extent operand (None: not ragged), in :func:`ragged_axes`' order."""
    if isinstance(op, Nd2NzOp):
        r1, c1 = op.whole_fractals()
        return (16 * r1, c1), (op.valid_rows, op.valid_cols)
    if isinstance(op, Load2dOp):
        return (op.ragged_fractals(), op.k_fractals()), (op.valid, op.valid_k)
    if isinstance(op, MmadOp):
        return (*op.valid_fractals(), op.k_fractals()), (op.m, op.n, op.k)
    assert isinstance(op, FixpipeOp)
    m1, n1 = op.valid_fractals()
    return (16 * m1, n1), (op.m, op.n)


RecordOf = Callable[[tuple[int, ...]], "OpRecord"]
"""A ragged op's record for its fractal count along each axis."""


def _mmad_records(op: MmadOp, base: OpRecord, hw: HardwareModel) -> RecordOf:
    k0 = memref_shape(op.a)[-1]

    def record(counts: tuple[int, ...]) -> OpRecord:
        mf, nf, kf = counts
        cost = mmad_cycles(op, hw, mf, nf, kf)
        return replace(
            base,
            cost=cost,
            mac_cycles=cost - hw.mmad_head_cycles,
            flops=2 * mf * kf * k0 * nf * 256,
        )

    return record


def _load2d_records(op: Load2dOp, base: OpRecord, hw: HardwareModel) -> RecordOf:
    def record(counts: tuple[int, ...]) -> OpRecord:
        fractals, k_fractals = counts
        cost = load2d_cycles(op, hw, fractals, k_fractals)
        return replace(base, cost=cost, moved_bytes=op.moved_bytes(fractals, k_fractals))

    return record


def _nd2nz_records(op: Nd2NzOp, base: OpRecord, hw: HardwareModel) -> RecordOf:
    """A ragged GM -> L1 window's records: the bytes of its valid rows and column
    fractals, from its window's facts read once (one record per row count: thousands when
    its columns are ragged too)."""
    window = op.window_facts()

    def record(counts: tuple[int, ...]) -> OpRecord:
        rows, cols = counts
        moved = window.moved_bytes((rows, cols))
        cost = nd2nz_cycles(window, hw, (rows, cols))
        burst = window.gm_burst_bytes((rows, cols)) if base.gm_bytes else None
        gm_rows = _valid_gm_rows(len(window.src_shape), base.gm_rows, rows)
        return _moved_record(base, hw, cost, moved, moved, burst, gm_rows)

    return record


def _fixpipe_records(op: FixpipeOp, base: OpRecord, hw: HardwareModel) -> RecordOf:
    """A ragged fixpipe's records: the bytes of its valid rows, each of its valid column
    fractals (:func:`~tilegraph.cost_model.tile_costs.fixpipe_elements`)."""

    def record(counts: tuple[int, ...]) -> OpRecord:
        valid = (counts[0], counts[1])
        moved, to_gm = fixpipe_read_bytes(op, valid), fixpipe_out_bytes(op, valid)
        burst = fixpipe_gm_burst_bytes(op, valid) if base.gm_bytes else None
        cost = fixpipe_cycles(op, hw, valid)
        return _moved_record(base, hw, cost, moved, to_gm, burst, base.gm_rows)

    return record


def _moved_record(
    base: OpRecord,
    hw: HardwareModel,
    cost: int,
    moved: int,
    to_gm: int,
    burst: int | None,
    gm_rows: tuple[tuple[int, ...], tuple[int, ...]] | None,
) -> OpRecord:
    """``base`` moving ``moved`` bytes in ``cost`` cycles, ``to_gm`` of them on its GM
    side in ``burst``-byte runs (pipe time, the GM traffic at its runs' efficiency, the
    round trip of that size); into UB / L1 (no GM side) its bytes only."""
    if not base.gm_bytes:
        return replace(base, cost=cost, moved_bytes=moved)
    return replace(
        base,
        cost=cost,
        moved_bytes=moved,
        gm_bytes=ceil(to_gm / hw.gm_efficiency(burst)),
        latency=gm_latency_cycles(hw, base.path, to_gm),
        gm_rows=gm_rows,
    )


def _valid_gm_rows(
    src_rank: int, gm_rows: tuple[tuple[int, ...], tuple[int, ...]] | None, rows: int
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The L2 model's rows (:attr:`OpRecord.gm_rows`) of a ragged nd2nz window (of a
    source of ``src_rank`` dims) moving ``rows`` rows: the whole window's, but for its rows
    axis when the window is split along it, cut to those rows — the record's bytes spread
    over the rows it moves, not over the whole window's."""
    if gm_rows is None:
        return gm_rows
    extents, dims = gm_rows
    axis = src_rank - 2  # the window's rows, after its leading dims
    if axis >= len(extents):
        return gm_rows
    cut = (*extents[:axis], min(extents[axis], rows), *extents[axis + 1 :])
    return cut, dims


_RECORDS: dict[type, Callable[..., RecordOf]] = {
    MmadOp: _mmad_records,
    Load2dOp: _load2d_records,
    Nd2NzOp: _nd2nz_records,
    FixpipeOp: _fixpipe_records,
}
"""How each ragged op class's records are made from the whole one's: the op's facts read
once, then a record per combination of fractal counts."""


def ragged_records(op: TileOp, base: OpRecord, hw: HardwareModel) -> list[OpRecord]:
    """The records of a ragged ``op`` (see the module docstring): ``base`` (the whole op's)
    with the cost and work of each combination of fractal counts, 1 .. whole per axis."""
    ranges = [range(1, whole + 1) for _, whole, _ in ragged_axes(op)]
    if isinstance(op, CopyOp):  # a cut copy's facts read once for all its records
        return cut_records(op, base, hw, product(*ranges))
    whole, extents = _whole_and_extents(op)
    record = _RECORDS[type(op)](op, base, hw)
    records: list[OpRecord] = []
    for counts in product(*ranges):  # the ragged axes' counts; the others whole
        given = iter(counts)
        records.append(
            record(
                tuple(
                    next(given) if v is not None else w for v, w in zip(extents, whole, strict=True)
                )
            )
        )
    return records


def record_index(op: TileOp, first: int, name: Callable[[SSAValue], str]) -> str:
    """Python source of the record an instance of the ragged ``op`` issues, its records
    starting at ``first``; ``name``: the Python name of an SSA value."""
    axes = ragged_axes(op)
    terms = [str(first)]
    for i, (extent, whole, size) in enumerate(axes):
        stride = prod(w for _, w, _ in axes[i + 1 :])
        if isinstance(extent, CutExtent):  # at least one unit: a window past the end
            source = extent.source(name(extent.offset))
            terms.append(f"(max(min(-(-{source} // {size}), {whole}), 1) - 1) * {stride}")
        else:
            terms.append(f"(min(-(-{name(extent)} // {size}), {whole}) - 1) * {stride}")
    return " + ".join(terms)
