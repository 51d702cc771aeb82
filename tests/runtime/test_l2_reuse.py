"""The cycle model's L2: which GM reads of a launch come from HBM (cycles/memory.py),
within a launch and from one launch to the next.

Every expected byte count below follows from the access pattern and the rule (a read hits
when the distinct bytes accessed since the last access to its window fit in L2), not from a run.
"""

from __future__ import annotations

from dataclasses import replace

import onnx.helper as oh
import pytest
from onnx import TensorProto
from xdsl.dialects.builtin import ModuleOp, f32

from tests.runtime.test_cycle_model import TEST, Kernel, cycles
from tilegraph.cost_model.cycles import CycleModelOptions, simulate_module
from tilegraph.cost_model.cycles.memory import L2Residency, LruCache, hbm_traffic
from tilegraph.cost_model.cycles.program import compile_kernel
from tilegraph.dialects.tile import CopyOp
from tilegraph.frontend import load_onnx
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline

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
    # between two reads of a tile the other 7 tiles go by: 28 KiB of reuse distance, and the
    # tile itself must stay too: 32 KiB of L2 keep the sweep, one byte less keeps nothing
    program = compile_kernel(fn, TEST)
    assert hbm_traffic(program, 1, 32 * KiB).reads == 8 * TILE
    assert hbm_traffic(program, 1, 32 * KiB - 1).reads == 3 * 8 * TILE


def test_blocks_reading_the_same_windows_share_l2():
    fn = _reread_kernel(tiles=8, passes=1)
    program = compile_kernel(fn, TEST)
    # 4 blocks, none of them indexed by its block: interleaved, each tile is read by the
    # 4 blocks one after the other, so only the first of the 4 goes to HBM
    assert hbm_traffic(program, 4, 64 * KiB).reads == 8 * TILE
    assert hbm_traffic(program, 4, 0).reads == 4 * 8 * TILE


def test_overlapping_windows_share_their_rows():
    rows, width = 10, 256  # (10, 256) f32: 1 KiB rows
    kern = Kernel()
    src = kern.gm((rows + 2, width), f32)
    t = kern.buf((3, width))
    with kern.b.loop(rows, name="i") as i:  # rows i .. i+2: a 3-row halo window
        kern.load(src, t, i)
    program = compile_kernel(kern.done(), TEST)
    # 30 row reads; only the 12 distinct rows come from HBM
    assert hbm_traffic(program, 1, 1 << 20).reads == (rows + 2) * width * 4
    assert hbm_traffic(program, 1, 0).reads == 3 * rows * width * 4


def test_l2_hits_relieve_the_shared_hbm_bandwidth():
    fn = _reread_kernel(tiles=8, passes=8)
    cached = cycles(fn, replace(TEST, l2_bytes=1 << 20), 4)
    uncached = cycles(fn, replace(TEST, l2_bytes=0), 4)
    assert cached < uncached


def test_cores_re_reading_shared_windows_do_not_evict_each_other():
    """4 blocks sweep the same 8 tiles twice: 4 x 8 tile reads go by between a tile's two
    sweeps, but only 8 distinct tiles (32 KiB), so 32 KiB of L2 serves every second sweep
    (an LRU cache holds what its reuse distance fits, however often the rest was read)."""
    program = compile_kernel(_reread_kernel(tiles=8, passes=2), TEST)
    assert hbm_traffic(program, 4, 32 * KiB).reads == 8 * TILE
    assert hbm_traffic(program, 4, 32 * KiB - 1).reads == 2 * 8 * TILE


def test_a_buffer_stays_resident_until_enough_other_bytes_pass():
    residency = L2Residency(l2_bytes=100)
    residency.launched([("a", 40)], set())
    assert residency.resident(["a", "b"]) == frozenset({0})  # b never touched
    residency.launched([("b", 50)], set())  # 50 bytes since a: 50 + 40 <= 100
    assert residency.resident(["a", "b"]) == frozenset({0, 1})
    residency.launched([("c", 20)], set())  # 70 bytes since a: 70 + 40 > 100
    assert residency.resident(["a", "b", "c"]) == frozenset({1, 2})


def test_touching_a_buffer_again_does_not_evict_others():
    """LRU by distinct buffers: launches that re-read b over and over leave a in L2."""
    residency = L2Residency(l2_bytes=100)
    residency.launched([("a", 40)], set())
    for _ in range(5):
        residency.launched([("b", 50)], set())
    assert residency.resident(["a", "b"]) == frozenset({0, 1})
    residency.launched([("a", 40)], set())  # a is the newest again; c then evicts only b
    residency.launched([("c", 30)], set())
    assert residency.resident(["a", "b", "c"]) == frozenset({0, 2})


def test_the_l2_holds_what_its_reuse_distance_fits():
    cache = LruCache(30)
    assert cache.access("x", 10) == (False, False)
    assert cache.access("y", 20) == (False, False)
    assert cache.access("y", 20) == (True, True)  # nothing else since
    assert cache.access("z", 5) == (False, False)  # x (10) leaves: 20 + 5 + 10 > 30
    assert cache.access("y", 20) == (True, True)  # z since: 5 + 20 <= 30
    assert cache.access("x", 10) == (False, True)  # y and z since: 25 + 10 > 30
    assert cache.access("big", 40) == (False, False)  # larger than the cache: never held
    assert cache.access("big", 40) == (False, True)


def _two_kernels() -> ModuleOp:
    """exp(x) then exp(that) + x: the second kernel reads what the first wrote, and x."""
    graph = oh.make_graph(
        [
            oh.make_node("Exp", ["x"], ["e"]),
            oh.make_node("Exp", ["e"], ["f"]),
            oh.make_node("Add", ["f", "x"], ["y"]),
        ],
        "two",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT16, [64, 1024])],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT16, [64, 1024])],
    )
    module = load_onnx(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)]))
    run_pipeline(
        "set-target{platform=ascend310p},O1,lower-graph-to-kernels,tile-kernels,split-cores,"
        "inject-sync",
        make_context(),
        module,
    )
    return module


def test_the_next_kernel_reads_what_the_last_one_left_in_l2():
    module = _two_kernels()
    warm = simulate_module(module).kernels
    # the first reads x cold; its writes stay in L2
    reads = sum(n for path, n in warm[0].bytes_per_path.items() if path.startswith("GM"))
    moved = sum(n for path, n in warm[0].bytes_per_path.items() if "GM" in path)
    assert len(warm) >= 2 and warm[0].hbm_fraction == pytest.approx(reads / moved)
    # the later kernels read only what earlier launches touched (128 KiB each): all in L2,
    # and what they write stays there (nothing evicts it): no HBM traffic at all
    for k in warm[1:]:
        assert k.hbm_fraction == 0.0
    cold = simulate_module(module, options=CycleModelOptions(l2_reuse=False)).kernels
    assert all(k.hbm_fraction == 1.0 for k in cold)
    assert sum(k.us for k in warm) <= sum(k.us for k in cold)


def test_live_data_evicted_from_l2_is_written_back_by_its_reader():
    """Writes stay in L2 until evicted; a launch that reads a buffer written earlier and
    since evicted reads it from HBM and pays for its write-back (charged once)."""
    residency = L2Residency(l2_bytes=100)
    residency.launched([("a", 60)], {"a"})
    residency.launched([("b", 60)], {"b"})  # a is evicted, still dirty
    operands = ["a", "b"]
    resident = residency.resident(operands)
    assert resident == frozenset({1})
    assert residency.written_back(operands, [0, 1], resident) == [0]  # a, not b (in L2)
    assert residency.written_back(operands, [0, 1], resident) == []  # a is clean now


def test_a_launch_larger_than_l2_leaves_nothing_dirty():
    residency = L2Residency(l2_bytes=100)
    residency.launched([("x", 60), ("y", 60)], {"y"})  # the launch wrote y back as it went
    assert residency.written_back(["y"], [0], frozenset()) == []


def test_a_write_stream_larger_than_l2_is_written_back_as_it_goes():
    """A kernel that copies 8 tiles: with room for all 16 windows nothing is evicted; with
    room for 4 KiB of the 64 KiB it touches, every written tile is evicted dirty but the
    last one, still in L2 at the end."""
    kern = Kernel()
    src, dst = kern.gm((8, 1024), f32), kern.gm((8, 1024), f32)
    t = kern.buf((1, 1024))
    with kern.b.loop(8, name="i") as i:
        kern.load(src, t, i)
        kern.store(t, dst, i)
    program = compile_kernel(kern.done(), TEST)
    assert hbm_traffic(program, 1, 1 << 20) == (8 * TILE, 0)
    assert hbm_traffic(program, 1, TILE) == (8 * TILE, 7 * TILE)


def test_an_access_without_offsets_is_keyed_too(monkeypatch):
    # an op whose GM window no index operand places (gm_offsets() is empty): its accesses
    # are still tuples, one key for all of them
    monkeypatch.setattr(CopyOp, "gm_offsets", lambda self: ())
    monkeypatch.setattr(CopyOp, "gm_window", lambda self: None)
    kern = Kernel()
    src = kern.gm((4, 1024), f32)
    t = kern.buf((4, 1024))
    with kern.b.loop(3, name="j"):
        kern.load(src, t)
    program = compile_kernel(kern.done(), TEST)
    accesses = list(program.gm_accesses(0, 1))
    assert len(accesses) == 3 and all(where == (0,) for _, where in accesses)
    assert hbm_traffic(program, 1, 1 << 20).reads == 4 * TILE  # read three times, from HBM once
