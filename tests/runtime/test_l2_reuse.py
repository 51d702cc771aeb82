"""The cycle model's L2: which GM reads of a launch come from HBM (cycles/memory.py).

Every expected byte count below follows from the access pattern and the rule (a read hits
when the bytes accessed since the last access to its window fit in L2), not from a run.
"""

from __future__ import annotations

from dataclasses import replace

from xdsl.dialects.builtin import f32

from tests.runtime.test_cycle_model import TEST, Kernel, cycles
from tilegraph.cost_model.cycles.memory import hbm_reads
from tilegraph.cost_model.cycles.program import compile_kernel

KiB = 1024
TILE = 4 * KiB  # one (1, 1024) f32 tile


def _reread_kernel(tiles: int, passes: int):
    """``passes`` sweeps over ``tiles`` tiles of one GM buffer, each tile loaded per sweep."""
    kern = Kernel()
    src = kern.gm((tiles, 1024), f32)
    t = kern.buf((1, 1024))
    with kern.b.loop(passes, name="j"):
        with kern.b.loop(tiles, name="i") as i:
            kern.load(src, t, i)
    return kern.done()


def test_a_sweep_that_fits_in_l2_is_read_from_hbm_once():
    fn = _reread_kernel(tiles=8, passes=3)
    # between two reads of a tile the other 7 tiles go by: 28 KiB of reuse time, and the
    # tile itself must stay too: 32 KiB of L2 keep the sweep, one byte less keeps nothing
    program = compile_kernel(fn, TEST)
    assert hbm_reads(program, 1, 32 * KiB) == 8 * TILE
    assert hbm_reads(program, 1, 32 * KiB - 1) == 3 * 8 * TILE


def test_blocks_reading_the_same_windows_share_l2():
    fn = _reread_kernel(tiles=8, passes=1)
    program = compile_kernel(fn, TEST)
    # 4 blocks, none of them indexed by its block: interleaved, each tile is read by the
    # 4 blocks one after the other, so only the first of the 4 goes to HBM
    assert hbm_reads(program, 4, 64 * KiB) == 8 * TILE
    assert hbm_reads(program, 4, 0) == 4 * 8 * TILE


def test_overlapping_windows_share_their_rows():
    rows, width = 10, 256  # (10, 256) f32: 1 KiB rows
    kern = Kernel()
    src = kern.gm((rows + 2, width), f32)
    t = kern.buf((3, width))
    with kern.b.loop(rows, name="i") as i:  # rows i .. i+2: a 3-row halo window
        kern.load(src, t, i)
    program = compile_kernel(kern.done(), TEST)
    # 30 row reads; only the 12 distinct rows come from HBM
    assert hbm_reads(program, 1, 1 << 20) == (rows + 2) * width * 4
    assert hbm_reads(program, 1, 0) == 3 * rows * width * 4


def test_l2_hits_relieve_the_shared_hbm_bandwidth():
    fn = _reread_kernel(tiles=8, passes=8)
    cached = cycles(fn, replace(TEST, l2_bytes=1 << 20), 4)
    uncached = cycles(fn, replace(TEST, l2_bytes=0), 4)
    assert cached < uncached
