"""How much GM bandwidth each core of a launch gets: HBM shared by the blocks, L2 reuse.

**Shared HBM.** The whole chip reads and writes HBM at ``hw.gm_bandwidth_gbps``; the ``n``
blocks of a launch run on ``n`` cores at once and share it evenly, so a core's GM rate is
``min(path rate, chip bytes per cycle / n)`` — the path rate is the op's own cost
(``dma_cycles``), the share is the core's GM port (:mod:`.core`). When the blocks do not
move the same bytes (a round-robin split of 64 tiles over 48 cores gives some cores two
tiles, others one), the cores with less traffic finish early and free their share; the
fluid fair share that lets the busiest block finish when the chip has moved everything is
``chip / n_eff`` with ``n_eff = launch traffic / busiest block's traffic`` (``= n`` for
balanced blocks), which is what we use: ``n`` in the formulas below is ``n_eff``.

**L2 reuse** (``l2_reuse``, on by default). 910B has a 192 MiB L2 in front of HBM. A blocked
matmul reads every A row block N/baseN times: from HBM once, then from L2. We model it per
launch, cold at its start: when everything the kernel touches in GM (its GM buffers, whole)
fits in L2, the first read of each byte comes from HBM and every re-read hits L2; writes
all go to HBM (written back once); when it does not fit, every byte comes from HBM (no
reuse assumed). With ``h`` the HBM share of the launch's GM traffic, the chip's GM traffic
can flow at ``chip HBM rate / h`` before HBM saturates, and a core gets

    gm_bytes_per_cycle = min(chip HBM bytes per cycle / (h x n),  L2 bytes per cycle / n)

(``h = 1`` without reuse: the plain shared-HBM rule). L2 bandwidth is not in our sources:
``l2_bandwidth_gbps = None`` (default) leaves L2 hits bounded only by the per-core path
rates (GM->L1 78 B/cycle, ...), which come from a per-core measurement (PTO-ISA). Data
left in L2 by the previous kernel is not credited (every launch starts cold).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilegraph.hardware import HardwareModel

INFINITE = float("inf")


@dataclass(frozen=True)
class GmTraffic:
    """GM bytes one launch moves (all blocks) and touches."""

    read: int
    write: int
    read_footprint: int
    """Bytes of the GM buffers the kernel reads (each counted once)."""
    write_footprint: int

    @property
    def total(self) -> int:
        return self.read + self.write


@dataclass(frozen=True)
class GmShare:
    """The GM rate of each core of a launch, and why."""

    blocks: int
    sharing: float
    """``n_eff``: how many cores' worth of traffic share the chip's bandwidth."""
    hbm_fraction: float
    """Share of the launch's GM traffic that goes to HBM (the rest hits L2)."""
    bytes_per_cycle: float
    """One core's GM port rate (``inf``: limited by the path rates only)."""


def gm_share(
    hw: HardwareModel,
    blocks: int,
    traffic: GmTraffic,
    busiest_block: int,
    l2_reuse: bool = True,
    l2_bandwidth_gbps: float | None = None,
) -> GmShare:
    """The GM rate of each of the ``blocks`` cores of a launch whose busiest block moves
    ``busiest_block`` bytes (see the module docstring)."""
    if traffic.total == 0 or busiest_block == 0:
        return GmShare(blocks, float(blocks), 1.0, INFINITE)
    n = min(float(blocks), traffic.total / busiest_block)
    fits = traffic.read_footprint + traffic.write_footprint <= hw.l2_bytes
    from_hbm_reads = (
        min(traffic.read, traffic.read_footprint) if l2_reuse and fits else traffic.read
    )
    h = (from_hbm_reads + traffic.write) / traffic.total
    chip = hw.gm_bandwidth_gbps / hw.clock_ghz  # bytes per cycle, whole chip
    rate = chip / (h * n) if h > 0 else INFINITE
    if l2_bandwidth_gbps is not None and h < 1:
        rate = min(rate, l2_bandwidth_gbps / hw.clock_ghz / n)
    return GmShare(blocks, n, h, rate)
