"""A ``tile.copy`` whose window its GM tensor's end cuts: charged for what it moves.

``tile.copy`` moves the part of its window inside both buffers (the executors cut the
rest). These copies are charged here by the part they move rather than by the whole
window:

* an operand already in a fractal layout in GM (FRACTAL_NZ ``(..., K1, M1, 16, C0)``,
  FRACTAL_Z) copied GM -> L1 as it is (a matmul's ragged last block): each index of the
  dims before the last two is one fractal, so the cut window moves the whole fractals it
  covers (the tensor holds whole fractals: its padding rows are in it);
* a copy between GM and UB (a vector kernel's tile at the tensor's end, since the
  twenty-sixth session; on a coupled core without L0C -> GM (310P) the UB -> GM store of
  the tile that fixpipe put in UB, since the twenty-fourth): the rows inside the tensor,
  each in the 32-byte blocks of Ascend C's ``DataCopy`` (``DataCopyParams`` blockCount
  rows of blockLen 32 B units), so a row's run is rounded up to a whole block. A window
  whose cut axes would take more than :data:`MAX_CUT_RECORDS` records (both a long row
  and many rows cut) stays charged whole: each record costs compile time.

The vector op on such a tile is charged for the whole tile: the IR computes it whole (the
executors too), and so would a kernel that does not pass a shorter count.

An axis is cut when its GM dim is not a multiple of the window's (or is shorter); its
valid extent is the GM dim less the instance's offset, counted in units of one index
(a fractal of a fractal tensor, a row) or, along an ND store's contiguous last dim, of
one 32-byte block. :mod:`.ragged` makes one record per combination of unit counts and
picks each instance's by its offsets, as for the other ragged ops.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from math import ceil, prod
from typing import TYPE_CHECKING

from xdsl.ir import SSAValue

from tilegraph.cost_model.tile_costs import dma_cycles, gm_latency_cycles
from tilegraph.dialects.tile import CopyOp
from tilegraph.dialects.tile.base import element_bytes, memref_element, memref_shape, scope_of
from tilegraph.hardware import HardwareModel

if TYPE_CHECKING:  # program.py imports ragged.py, which imports this module
    from tilegraph.cost_model.cycles.program import OpRecord

DMA_BLOCK_BYTES = 32
"""The unit of a DMA run to or from UB / L1 (Ascend C ``DataCopyParams``: blockLen in 32 B
blocks, docs/hardware.md)."""

FRACTAL_BYTES = 512
"""One 16 x C0 fractal."""

MAX_CUT_RECORDS = 4096
"""The most records a cut copy gets (the product of its cut axes' unit counts); a copy that
would take more is charged whole. Not a hardware figure: a bound on the kernel's compile
time (a ragged ``nd2nz``'s records number up to a few thousand too)."""


@dataclass(frozen=True)
class CutExtent:
    """The valid extent, in elements, of a copy's window along a cut axis: the GM tensor's
    ``limit`` along it less the instance's ``offset`` there."""

    offset: SSAValue
    limit: int

    def source(self, name: str) -> str:
        """Python source of the extent, the offset being named ``name``."""
        return f"({self.limit} - {name})"


def _fractal_window(op: CopyOp, gm: tuple[int, ...], window: tuple[int, ...]) -> bool:
    """The GM tensor's last two dims are one whole fractal, which the window spans."""
    element = element_bytes(memref_element(op.src))
    return (
        len(gm) >= 3
        and gm[-2:] == window[-2:]
        and gm[-2] == 16
        and gm[-1] * gm[-2] * element == FRACTAL_BYTES
    )


def cut_axes(op: CopyOp) -> tuple[tuple[int, int, int], ...]:
    """(dim, units the window holds along it, elements per unit) of each axis along which
    the GM tensor's end can cut ``op``'s window, when ``op`` is one of the module
    docstring's copies; else empty."""
    path = (scope_of(op.src), scope_of(op.dst))
    if path == ("GM", "L1"):
        gm, window = memref_shape(op.src), memref_shape(op.dst)
        if not _fractal_window(op, gm, window):
            return ()
        last_unit = 1  # never cut: the fractal's own dims are whole
    elif path in (("UB", "GM"), ("GM", "UB")):
        gm_side, ub_side = (op.dst, op.src) if path[1] == "GM" else (op.src, op.dst)
        gm, window = memref_shape(gm_side), memref_shape(ub_side)
        last_unit = max(1, DMA_BLOCK_BYTES // element_bytes(memref_element(op.src)))
    else:
        return ()
    if len(gm) != len(window):
        return ()
    axes = []
    for dim, (w, g) in enumerate(zip(window, gm, strict=True)):
        if g % w == 0 and w <= g:
            continue
        unit = last_unit if dim == len(window) - 1 else 1
        axes.append((dim, ceil(w / unit), unit))
    if prod(units for _, units, _ in axes) > MAX_CUT_RECORDS:
        return ()
    return tuple(axes)


def cut_extents(op: CopyOp) -> tuple[tuple[CutExtent, int, int], ...]:
    """:func:`cut_axes` as :func:`.ragged.ragged_axes` gives them: (extent, units, unit)."""
    gm = memref_shape(op.dst if scope_of(op.dst) == "GM" else op.src)
    offsets = op.gm_offsets()
    return tuple(
        (CutExtent(offsets[dim], gm[dim]), units, unit) for dim, units, unit in cut_axes(op)
    )


def valid_window(
    whole: tuple[int, ...], axes: tuple[tuple[int, int, int], ...], counts: tuple[int, ...]
) -> tuple[int, ...]:
    """The extents of a ``whole`` window whose cut ``axes`` (:func:`cut_axes`) hold
    ``counts`` of their units (the last, rounded up, no more than the window)."""
    window = list(whole)
    for (dim, _, unit), n in zip(axes, counts, strict=True):
        window[dim] = min(window[dim], n * unit)
    return tuple(window)


def cut_records(
    op: CopyOp, base: OpRecord, hw: HardwareModel, counts: Iterable[tuple[int, ...]]
) -> list[OpRecord]:
    """The records of ``op``'s instances whose cut axes hold each of ``counts`` units
    (the op's axes and window read once: reading an op's operands costs microseconds)."""
    whole, axes = op.gm_window() or (), cut_axes(op)
    return [_cut_record(op, base, hw, valid_window(whole, axes, c)) for c in counts]


def _cut_record(op: CopyOp, base: OpRecord, hw: HardwareModel, window: tuple[int, ...]) -> OpRecord:
    """The record of an instance of ``op`` moving ``window``: its bytes (pipe time at its
    runs' efficiency, GM traffic, the round trip of that size) and the L2 model's rows
    cut to it."""
    moved, burst = op.moved_bytes(window), op.gm_burst_bytes(window)
    gm_rows = base.gm_rows
    if gm_rows is not None:
        extents, dims = gm_rows
        gm_rows = (tuple(min(e, w) for e, w in zip(extents, window, strict=False)), dims)
    return replace(
        base,
        cost=dma_cycles(hw, base.path, moved, burst),
        moved_bytes=moved,
        gm_bytes=ceil(moved / hw.gm_efficiency(burst)),
        latency=gm_latency_cycles(hw, base.path, moved),
        gm_rows=gm_rows,
    )
