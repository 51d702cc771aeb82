"""Hardware presets: the figures the tile level and fusion read."""

from __future__ import annotations

import re
from pathlib import Path

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


def test_fix_and_scheduling_figures_are_fields_with_their_sources():
    hw = hardware_preset("ascend910b")
    # CANN's GEMM tiling cycle model (GemmCycleModelL0c2out): L0C read, then write-out
    assert (hw.fix_l0c_read_bytes_per_cycle, hw.fix_write_bytes_per_cycle) == (256, 128)
    assert "L0C->GM" not in hw.dma_bytes_per_cycle  # FIX is not a path rate any more
    assert hw.task_overhead_us < hw.launch_overhead_us
    doc = (Path(__file__).parents[1] / "docs" / "hardware.md").read_text()
    for fact in ("GemmCycleModelL0c2out", "256 B/cycle", "128 B/cycle", "**Assumption**"):
        assert fact in doc


def test_docs_do_not_point_outside_the_repository():
    root = Path(__file__).parents[1]
    for page in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        text = page.read_text()
        outside = re.findall(r"\.\./(?:\.\./)*shared/[^\s)`]*", text)
        assert not outside, f"{page.name} points outside the repository: {outside}"


def test_short_gm_runs_cost_on_a2_only():
    # Ascend C's best practices: 32 B-aligned runs at down to 70% of 512 B-aligned ones,
    # an effect the page states for A2 products only
    a2, p310 = hardware_preset("ascend910b"), hardware_preset("ascend310p")
    assert a2.gm_efficiency(1792) == pytest.approx(0.7) and a2.gm_efficiency(2048) == 1.0
    assert p310.gm_efficiency(1792) == p310.gm_efficiency(32) == 1.0
