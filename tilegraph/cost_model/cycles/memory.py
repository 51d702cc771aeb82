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
:func:`hbm_traffic` replays the launch's GM accesses (``KernelProgram.gm_accesses``) with its
blocks interleaved one access at a time (the cores run concurrently and share L2), keyed by
the window each touches (buffer, GM offsets, bytes). A read hits when the distinct bytes
accessed chip-wide since the last access to the same window (its *reuse distance*, reads
and writes: :class:`LruCache`), plus its own, are at most the L2 capacity, which is
when an LRU cache of that size still holds it. (Counting every byte moved since instead,
the *reuse time*, would let eight cores re-reading one shared window evict eight times its
bytes.) First reads miss unless their buffer is still in L2 from an earlier launch
(:class:`L2Residency`); a read of a window the same launch wrote recently hits.

**Writes** go into L2, which writes a line back to HBM when it evicts it dirty. GE (like
``plan-memory``) gives a dead activation's GM to a later one, so the lines of data nobody
reads again are mostly overwritten in L2 before they are evicted, and what costs HBM
bandwidth is live data that leaves L2: a launch that reads a buffer an earlier launch wrote
and finds it gone from L2 reads it from HBM and pays for its write-back too
(:meth:`L2Residency.written_back`, charged to that launch; dirty data still in L2 at the
end, the model's outputs, is not charged). Within a launch, the LRU replay marks written
windows dirty and counts those it evicts (a launch whose data does not fit in L2 writes
back as it goes: a streaming elementwise kernel over more than L2).

With ``h`` the HBM share of the launch's GM traffic (reads that miss, and write-backs), the
chip's GM traffic can flow at ``chip HBM rate / h`` before HBM saturates, and a core gets

    gm_bytes_per_cycle = min(chip HBM bytes per cycle / (h x n),  L2 bytes per cycle / n)

(``h = 1`` without reuse: the plain shared-HBM rule). A chip-wide L2 bandwidth is not in
our sources: ``l2_bandwidth_gbps = None`` (default) leaves L2 hits bounded only by the
per-core path rates (``HardwareModel.dma_bytes_per_cycle``: on 910B a per-core measurement,
PTO-ISA; on 310P its platform configuration's per-core L2 rate).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from math import prod
from typing import NamedTuple

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
    hbm_write: int = 0
    """Bytes L2 writes back to HBM on the launch's account (:class:`L2Residency`)."""

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


class HbmTraffic(NamedTuple):
    """What a launch moves to and from HBM through L2 (:func:`hbm_traffic`)."""

    reads: int
    """GM read bytes that miss L2."""
    write_backs: int
    """Bytes the launch wrote that L2 evicted, dirty, before the launch ended."""


def hbm_traffic(
    program: KernelProgram,
    blocks: int,
    l2_bytes: int,
    resident: frozenset[int] = frozenset(),
    sub_blocks: int = 1,
) -> HbmTraffic:
    """The HBM traffic of a launch of ``program`` on ``blocks`` cores through an L2 of
    ``l2_bytes`` (see the module docstring: blocks interleaved access by access, an LRU
    cache by window): GM reads that miss, and written windows evicted dirty during the
    launch. A window whose op says its extent (``gm_rows``) is tracked row by row — its
    outer dims' indices, clipped to the buffer — so that overlapping windows (a
    convolution's halo rows) share what they share. ``resident``: GM buffer numbers (of
    ``gm_accesses``) whose bytes are in L2 when the launch starts (:class:`L2Residency`):
    their first reads hit. ``sub_blocks``: instances per block (a mix kernel's AIVs), each
    a stream of its own."""
    records = program.records
    accesses: list[tuple[int, tuple[object, ...], int, bool]] = []
    """(buffer, window key, bytes, read) in the order the chip issues them."""
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
                key = (where, record.moved_bytes)
                accesses.append((where[0], key, record.gm_bytes, record.gm_read))
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
                accesses.append((where[0], (*inner, *row), row_bytes, record.gm_read))
        streams = running
    missed = 0
    cache = LruCache(l2_bytes)
    for buffer, key, nbytes, read in accesses:
        hit, seen = cache.access(key, nbytes, written=not read)
        if read and not hit and (seen or buffer not in resident):
            missed += nbytes
    return HbmTraffic(missed, cache.written_back)


class LruCache:
    """An LRU cache of ``capacity`` bytes over keyed accesses: a key is still held when the
    distinct bytes touched since its last access (its reuse distance), plus its own, fit
    in the capacity. Written keys are dirty until evicted; :attr:`written_back` counts
    the bytes of the dirty ones evicted (a write-back cache's traffic to memory)."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._held: OrderedDict[object, tuple[int, bool]] = OrderedDict()
        self._bytes = 0
        self._seen: set[object] = set()
        self.written_back = 0

    def access(self, key: object, nbytes: int, written: bool = False) -> tuple[bool, bool]:
        """Touch ``key`` (``nbytes``, a write when ``written``); whether it was held, and
        whether it had been touched before."""
        seen = key in self._seen
        held = self._held.pop(key, None)
        dirty = written
        if held is not None:
            self._bytes -= held[0]
            dirty = dirty or held[1]
        else:
            self._seen.add(key)
        self._held[key] = (nbytes, dirty)
        self._bytes += nbytes
        while self._bytes > self.capacity:
            _, (evicted, was_dirty) = self._held.popitem(last=False)
            self._bytes -= evicted
            if was_dirty:
                self.written_back += evicted
        return held is not None, seen


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
    h = (traffic.hbm_read + traffic.hbm_write) / traffic.total
    chip = hw.gm_bandwidth_gbps / hw.clock_ghz  # bytes per cycle, whole chip
    rate = chip / (h * n) if h > 0 else INFINITE
    if l2_bandwidth_gbps is not None and h < 1:
        rate = min(rate, l2_bandwidth_gbps / hw.clock_ghz / n)
    return GmShare(blocks, n, h, rate)


class L2Residency:
    """Which host buffers are still in L2 from one launch to the next.

    L2 sits in front of HBM for every kernel: what a kernel wrote or read is still there
    when the next one starts, unless enough other data went through L2 since. The model
    keeps the host buffers (launch operands) in the order launches last touched them; a
    buffer is resident at a launch's start when the bytes of the distinct buffers touched
    since, plus its own, fit in L2 (the LRU rule :func:`hbm_traffic` applies within a launch,
    for whole buffers: one that fits only in part counts as gone)."""

    def __init__(self, l2_bytes: int):
        self.l2_bytes = l2_bytes
        self.latest: dict[object, int] = {}
        """Host buffer -> its bytes, least recently touched first."""
        self.dirty: set[object] = set()
        """Buffers a launch wrote that L2 has not written back to HBM."""

    def resident(self, buffers: Sequence[object]) -> frozenset[int]:
        """Positions in ``buffers`` (a launch's operands) of those in L2 now."""
        since: dict[object, int] = {}
        newer = 0
        for buffer, size in reversed(self.latest.items()):
            since[buffer] = newer + size
            newer += size
        return frozenset(
            position
            for position, buffer in enumerate(buffers)
            if buffer in since and since[buffer] <= self.l2_bytes
        )

    def written_back(
        self, buffers: Sequence[object], reads: Sequence[int], resident: frozenset[int]
    ) -> list[int]:
        """Positions in ``buffers`` (a launch's operands, of which it reads those at
        ``reads``; ``resident``: the positions of those still in L2, :meth:`resident`) of
        dirty buffers it reads that left L2 since they were written: L2 wrote them back to
        HBM on the way out, and the launch reads them from there. They are clean from now
        on."""
        gone = [i for i in reads if buffers[i] in self.dirty and i not in resident]
        self.dirty.difference_update(buffers[i] for i in gone)
        return gone

    def launched(self, buffers: Sequence[tuple[object, int]], written: set[object]) -> None:
        """A launch touched ``buffers`` (buffer, its bytes) and wrote ``written``. When all
        it touched fits in L2, what it wrote is still there, dirty; else L2 wrote back
        what it evicted during the launch (:func:`hbm_traffic` charges it there), and the
        rest is taken as gone too (not charged again)."""
        fits = sum(size for _, size in buffers) <= self.l2_bytes
        for buffer, size in buffers:
            self.latest.pop(buffer, None)
            self.latest[buffer] = size
            if buffer in written and fits:
                self.dirty.add(buffer)
