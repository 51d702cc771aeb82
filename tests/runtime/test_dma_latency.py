"""The GM latency of the cycle model (docs/hardware.md, "DMA latencies"): a DMA from or to GM
delivers its data the GM round trip after its pipe time, so a load that the next
instruction waits for pays it every time, a double-buffered stream pays it once, and loads
issued back to back overlap their latencies (the pipe is not held); the 310P charges it to
small copies only."""

from __future__ import annotations

from dataclasses import replace

from xdsl.dialects.builtin import ModuleOp, f16

from tests.runtime.test_cycle_model import FAST_GM, Kernel, _pipeline, cycles
from tilegraph.cost_model.tile_costs import cost_of, dma_head_cycles, gm_latency_cycles
from tilegraph.hardware import HardwareModel, hardware_preset
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.target import pin_target

B910 = hardware_preset("ascend910b")
P310 = hardware_preset("ascend310p")

# ---- documented figures (docs/hardware.md), written out here, not read from the code ----
DOC_GM_READ_910B = 307 + 4
"""pypto's cycle-accurate A2/A3 pipe model: ``ddrRdLatency`` (307, as ``SimulatorA2A3::Run``
sets it) + ``ddrRdLatencyDiver`` (4)."""
DOC_GM_WRITE_910B = 153 + 4
DOC_HEAD_310P = 100
"""CANN's GEMM tiling cycle model for chips without L0C -> GM: ``kHeadCostNum``."""
DOC_HEAD_BELOW_310P = 512 * 32
"""... charged to copies of fewer than ``kCopyLoadSize`` = 512 blocks of 32 B."""
EXTRA = 300
"""A GM read latency added on top of the test preset's, to see where it is paid."""


def test_the_presets_carry_the_documented_gm_latencies():
    assert (B910.gm_read_latency_cycles, B910.gm_write_latency_cycles) == (
        DOC_GM_READ_910B,
        DOC_GM_WRITE_910B,
    )
    assert B910.gm_latency_below_bytes is None
    assert (P310.gm_read_latency_cycles, P310.gm_write_latency_cycles) == (
        DOC_HEAD_310P,
        DOC_HEAD_310P,
    )
    assert P310.gm_latency_below_bytes == DOC_HEAD_BELOW_310P


def test_310p_charges_the_head_to_copies_below_16_kib_only():
    for path in ("GM->UB", "UB->GM"):
        assert gm_latency_cycles(P310, path, DOC_HEAD_BELOW_310P - 32) == DOC_HEAD_310P
        assert gm_latency_cycles(P310, path, DOC_HEAD_BELOW_310P) == 0
        assert dma_head_cycles(P310, path) == P310.dma_issue_cycles
    # between on-chip buffers: no GM round trip whatever the size
    assert gm_latency_cycles(P310, "L1->UB", 32) == 0


def test_a_copy_pays_the_latency_of_its_direction_after_its_pipe_time():
    kern = Kernel(B910)
    gm = kern.gm((64, 1024), f16)
    ub = kern.buf((1, 1024), "UB", f16)
    load, store = kern.load(gm, ub), kern.store(ub, gm)
    rate = B910.dma_bytes_per_cycle
    assert cost_of(load, B910) == B910.dma_issue_cycles + 2048 // int(rate["GM->UB"]) + 1
    assert cost_of(store, B910) == B910.dma_issue_cycles + -(-2048 // int(rate["UB->GM"]))
    assert gm_latency_cycles(B910, "GM->UB", 2048) == DOC_GM_READ_910B
    assert gm_latency_cycles(B910, "UB->GM", 2048) == DOC_GM_WRITE_910B


def _slower(hw: HardwareModel) -> HardwareModel:
    return replace(hw, gm_read_latency_cycles=hw.gm_read_latency_cycles + EXTRA)


def test_a_load_the_compute_waits_for_pays_the_latency_every_tile():
    trips = 6
    fn, _ = _pipeline(trips, slots=1)
    assert cycles(fn, _slower(FAST_GM)) - cycles(fn, FAST_GM) == trips * EXTRA


def test_a_double_buffered_stream_longer_in_compute_hides_it_but_the_first():
    trips = 6
    fn, (load, vexp, _) = _pipeline(trips, slots=2, computes=80)
    slow = _slower(FAST_GM)
    # compute-bound even with it: a tile's compute outlasts the next load and its trip
    assert 80 * cost_of(vexp, slow) > cost_of(load, slow) + EXTRA
    assert cycles(fn, slow) - cycles(fn, FAST_GM) == EXTRA


def test_loads_issued_back_to_back_overlap_their_latencies():
    # a slot per tile: nothing makes a load wait for another's data, so the pipe streams
    # the loads and only the last one's round trip shows (charged as pipe time, every
    # load would pay it: trips x EXTRA)
    trips = 6
    fn, _ = _pipeline(trips, slots=trips)
    assert cycles(fn, _slower(FAST_GM)) - cycles(fn, FAST_GM) == EXTRA


def test_a_flag_after_a_load_is_raised_when_the_data_is_there():
    trips = 4
    fn, _ = _pipeline(trips, slots=1)
    data = cycles(fn, _slower(FAST_GM), mode="data")
    module = ModuleOp([fn])
    pin_target(module, "the test", "test")
    run_pipeline("inject-sync", make_context(), module)
    # the flags order the vexp after the load's data, as the data mode does: the latency
    # is paid every tile in both modes
    slow_flags = cycles(fn, _slower(FAST_GM), mode="flags")
    fast_flags = cycles(fn, FAST_GM, mode="flags")
    # (each set_flag's own cycle falls inside the round trip it waits for)
    assert trips * EXTRA - trips <= slow_flags - fast_flags <= trips * EXTRA
    assert data <= slow_flags
