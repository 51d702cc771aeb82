"""Costs of the DMAs between GM and a core's buffers (MTE2 / MTE3 copies, the 5HD loads and
stores, ``nd2nz`` / ``nz2nd``): a head, the bytes at the path rate (GM runs that are not
512 B multiples at the misaligned share), and the GM round trip as a latency after the
pipe time (:func:`gm_latency_cycles`). The figures are the presets'
(:mod:`tilegraph.hardware`, docs/hardware.md).
"""

from __future__ import annotations

from math import ceil

from tilegraph.cost_model.tile_costs.registry import tile_cost
from tilegraph.dialects.tile.base import (
    scope_of,
)
from tilegraph.dialects.tile.dma import Load5hdOp, PathCopyOp, Store5hdOp
from tilegraph.dialects.tile.fractal import Nd2NzOp, Nz2NdOp, NzWindowFacts
from tilegraph.hardware import HardwareModel


def dma_head_cycles(hw: HardwareModel, path: str) -> int:
    """Cycles one DMA on ``path`` ("GM->UB", "L1->L0A", ...) holds its pipe before its
    bytes flow: the MTE1 start of an L1 -> L0A / L0B load, else the DMA issue cycles. The GM
    round trip is not part of it (:func:`gm_latency_cycles`)."""
    src, _, dst = path.partition("->")
    if src == "L1" and dst in ("L0A", "L0B"):
        return hw.mte1_start_cycles
    return hw.dma_issue_cycles


def gm_latency_cycles(hw: HardwareModel, path: str, nbytes: int) -> int:
    """The GM round trip of one DMA of ``nbytes`` on ``path``: how long after its pipe is
    done with it the data has arrived (a read) or landed (a write) —
    :attr:`~HardwareModel.gm_read_latency_cycles` / ``gm_write_latency_cycles`` for a
    transfer from / to GM below :attr:`~HardwareModel.gm_latency_below_bytes`, else 0.

    A latency, not pipe time: the next DMA on the pipe issues without waiting for it, and
    what waits for the data (a consumer ordered by data or by a flag, a barrier) waits for
    it (the cycle model, :mod:`tilegraph.cost_model.cycles.core`). Charged as pipe time, it
    would cap a blocked GEMM's cube utilisation far below the published ~90%
    (docs/cycle-model.md)."""
    src, _, dst = path.partition("->")
    if "GM" not in (src, dst):
        return 0
    below = hw.gm_latency_below_bytes
    if below is not None and nbytes >= below:
        return 0
    return hw.gm_read_latency_cycles if src == "GM" else hw.gm_write_latency_cycles


def dma_cycles(hw: HardwareModel, path: str, nbytes: int, burst: int | None = None) -> int:
    """Cycles of one DMA of ``nbytes`` on ``path``: its head (:func:`dma_head_cycles`) and
    its bytes at the path rate; a GM side made of ``burst``-byte runs that are not 512 B
    multiples moves at :attr:`HardwareModel.gm_misaligned_efficiency`."""
    rate = hw.dma_bytes_per_cycle.get(path, 64.0)
    if "GM" in path:
        rate *= hw.gm_efficiency(burst)
    return dma_head_cycles(hw, path) + ceil(nbytes / rate)


@tile_cost(PathCopyOp)
def path_copy(op: PathCopyOp, hw: HardwareModel) -> int:
    a, b = op.path()
    return dma_cycles(hw, f"{a}->{b}", op.moved_bytes(), op.gm_burst_bytes())


@tile_cost(Load5hdOp)
def load_5hd(op: Load5hdOp, hw: HardwareModel) -> int:
    # Channel-strided reads: at most C0 contiguous elements per burst.
    return dma_cycles(hw, f"GM->{scope_of(op.dst)}", 2 * op.moved_bytes())


@tile_cost(Store5hdOp)
def store_5hd(op: Store5hdOp, hw: HardwareModel) -> int:
    return dma_cycles(hw, f"{scope_of(op.src)}->GM", 2 * op.moved_bytes())


@tile_cost(Nd2NzOp)
def nd2nz(op: Nd2NzOp, hw: HardwareModel) -> int:
    """The whole destination (a ragged window's instances: :func:`nd2nz_cycles`)."""
    return nd2nz_cycles(op.window_facts(), hw, None)


def nd2nz_cycles(window: NzWindowFacts, hw: HardwareModel, valid: tuple[int, int] | None) -> int:
    """An ``nd2nz`` (its :meth:`~Nd2NzOp.window_facts`) moving ``valid`` (rows, column
    fractals) of its destination (all of it, None, but on a matmul's ragged last block:
    :class:`Nd2NzOp`'s rows / cols), in GM runs as long as those columns."""
    path = f"GM->{window.dst_scope}"
    return dma_cycles(hw, path, window.moved_bytes(valid), window.gm_burst_bytes(valid))


@tile_cost(Nz2NdOp)
def nz2nd(op: Nz2NdOp, hw: HardwareModel) -> int:
    return dma_cycles(hw, f"{scope_of(op.src)}->GM", op.moved_bytes())
