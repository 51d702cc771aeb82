"""Hardware presets: the figures the tile level and fusion read."""

from __future__ import annotations

import pytest

from tilegraph.formats import PLATFORMS
from tilegraph.hardware import PRESETS, hardware_preset


def test_ascend910b_figures():
    hw = hardware_preset("ascend910b")
    assert (hw.cube_cores, hw.vector_cores, hw.clock_ghz) == (24, 48, 1.8)
    kib = 1024
    assert hw.capacity("L1") == 512 * kib and hw.capacity("UB") == 192 * kib
    assert hw.capacity("L0A") == hw.capacity("L0B") == 64 * kib
    assert hw.capacity("L0C") == 128 * kib
    assert hw.alignment["UB"] == 32 and hw.alignment["L0C"] == 512
    # 16x16x16 fp16 MACs per cycle per cube core: 24 cores at 1.8 GHz ~ 354 TFLOPS
    peak = 2 * hw.cube_macs_per_cycle["float16"] * hw.cube_cores * hw.clock_ghz * 1e9
    assert peak == pytest.approx(354e12, rel=0.01)


def test_every_format_platform_has_a_preset_and_back():
    assert set(PRESETS) == set(PLATFORMS)


def test_test_preset_buffers_are_tiny():
    assert hardware_preset("test").ub_bytes < hardware_preset("ascend910b").ub_bytes // 8


def test_unknown_platform_names_the_valid_ones():
    with pytest.raises(ValueError, match="ascend910b"):
        hardware_preset("h100")
    with pytest.raises(KeyError, match="no memory scope"):
        hardware_preset().capacity("L3")
