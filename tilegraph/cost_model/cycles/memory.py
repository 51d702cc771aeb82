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

**L2 reuse** (``l2_reuse``, on by default). The chip's L2 (910B: 192 MiB, 310P: 16 MiB)
sits in front of HBM. A tiled kernel reads some GM windows more than once (a blocked matmul
reads each row block of A once per column block of B; every output tile re-reads its
weights); whether a re-read comes from L2 depends on how much else went through L2 since.
:func:`hbm_reads` replays the launch's GM accesses (``KernelProgram.gm_accesses``) with its
blocks interleaved one access at a time (the cores run concurrently and share L2), keyed by
the window each touches (buffer, GM offsets, bytes). A read hits when the bytes accessed
chip-wide since the last access to the same window (its *reuse time*, reads and writes),
plus its own, are at most the L2 capacity: an LRU cache of that size keeps everything
whose reuse *distance* (distinct bytes since) fits, and the reuse time is never smaller,
so the rule errs towards misses. First reads miss unless their buffer is still in L2
from an earlier launch (:class:`L2Residency`); a read of a window the same launch wrote
recently hits; writes all go to HBM (written back once). With ``h`` the HBM share of the launch's GM
traffic, the chip's GM traffic can flow at ``chip HBM rate / h`` before HBM saturates, and
a core gets

    gm_bytes_per_cycle = min(chip HBM bytes per cycle / (h x n),  L2 bytes per cycle / n)

(``h = 1`` without reuse: the plain shared-HBM rule). L2 bandwidth is not in our sources:
``l2_bandwidth_gbps = None`` (default) leaves L2 hits bounded only by the per-core path
rates (GM->L1 78 B/cycle, ...), which come from a per-core measurement (PTO-ISA).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from math import prod

from tilegraph.cost_model.cycles.program import KernelProgram
from tilegraph.hardware import HardwareModel

INFINITE = float("inf")


@dataclass(frozen=True)
class GmTraffic:
    """GM bytes one launch moves (all blocks)."""

    read: int
    write: int
    hbm_read: int
    """Bytes of ``read`` served by HBM (the rest hit L2)."""

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


def hbm_reads(
    program: KernelProgram,
    blocks: int,
    l2_bytes: int,
    resident: frozenset[int] = frozenset(),
    sub_blocks: int = 1,
) -> int:
    """GM read bytes of a launch of ``program`` on ``blocks`` cores that miss an L2 of
    ``l2_bytes`` (see the module docstring: blocks interleaved access by access, a read
    hits when its window's reuse time plus its own bytes are at most ``l2_bytes``). A
    window whose op says its extent (``gm_rows``) is tracked row by row — its outer dims'
    indices, clipped to the buffer — so that overlapping windows (a convolution's halo
    rows) share what they share. ``resident``: GM buffer numbers (of ``gm_accesses``) whose
    bytes are in L2 when the launch starts (:class:`L2Residency`): their first reads hit.
    ``sub_blocks``: instances per block (a mix kernel's AIVs), each a stream of its own."""
    records = program.records
    last: dict[tuple[object, ...], int] = {}
    clock = 0
    missed = 0

    def touch(buffer: int, key: tuple[object, ...], nbytes: int, read: bool) -> None:
        nonlocal clock, missed
        if read:
            seen = last.get(key)
            if seen is None:
                if buffer not in resident:
                    missed += nbytes
            elif clock - seen + nbytes > l2_bytes:
                missed += nbytes
        clock += nbytes
        last[key] = clock

    streams = [
        program.gm_accesses(b, blocks, sub) for b in range(blocks) for sub in range(sub_blocks)
    ]
    while streams:
        running = []
        for stream in streams:
            access = next(stream, None)
            if access is None:
                continue
            running.append(stream)
            index, where = access
            record = records[index]
            if record.gm_rows is None:
                touch(where[0], (where, record.moved_bytes), record.gm_bytes, record.gm_read)
                continue
            extents, dims = record.gm_rows
            outer = len(extents)
            row_bytes = record.gm_bytes // prod(extents)
            inner = (where[0], *where[1 + outer :], record.moved_bytes)
            ranges = [
                range(max(0, start), min(start + extent, dim))
                for start, extent, dim in zip(where[1 : 1 + outer], extents, dims, strict=True)
            ]
            for row in product(*ranges):
                touch(where[0], (*inner, *row), row_bytes, record.gm_read)
        streams = running
    return missed


def gm_share(
    hw: HardwareModel,
    blocks: int,
    traffic: GmTraffic,
    busiest_block: int,
    l2_bandwidth_gbps: float | None = None,
) -> GmShare:
    """The GM rate of each of the ``blocks`` cores of a launch whose busiest block moves
    ``busiest_block`` bytes (see the module docstring)."""
    if traffic.total == 0 or busiest_block == 0:
        return GmShare(blocks, float(blocks), 1.0, INFINITE)
    n = min(float(blocks), traffic.total / busiest_block)
    h = (traffic.hbm_read + traffic.write) / traffic.total
    chip = hw.gm_bandwidth_gbps / hw.clock_ghz  # bytes per cycle, whole chip
    rate = chip / (h * n) if h > 0 else INFINITE
    if l2_bandwidth_gbps is not None and h < 1:
        rate = min(rate, l2_bandwidth_gbps / hw.clock_ghz / n)
    return GmShare(blocks, n, h, rate)


class L2Residency:
    """Which host buffers are still in L2 from one launch to the next.

    L2 sits in front of HBM for every kernel: what a kernel wrote or read is still there
    when the next one starts, unless enough other bytes went through L2 since. The model
    keeps a chip-wide clock of the bytes the launches moved through GM and, per host buffer
    (a launch operand), the clock of the last launch that touched it; a buffer is resident
    at a launch's start when the bytes moved since, plus its own size, fit in L2 (the same
    reuse-time rule as within a launch, for the whole buffer: one that fits only in part
    counts as gone)."""

    def __init__(self, l2_bytes: int):
        self.l2_bytes = l2_bytes
        self.clock = 0
        self.last: dict[object, tuple[int, int]] = {}
        """Host buffer -> (clock after the launch that last touched it, its bytes)."""

    def resident(self, buffers: Sequence[object]) -> frozenset[int]:
        """Positions in ``buffers`` (a launch's operands) of those in L2 now."""
        found = set()
        for position, buffer in enumerate(buffers):
            seen = self.last.get(buffer)
            if seen is not None and self.clock - seen[0] + seen[1] <= self.l2_bytes:
                found.add(position)
        return frozenset(found)

    def launched(self, buffers: Sequence[tuple[object, int]], moved: int) -> None:
        """A launch moved ``moved`` GM bytes and touched ``buffers`` (buffer, its bytes)."""
        self.clock += moved
        for buffer, size in buffers:
            self.last[buffer] = (self.clock, size)
