"""benchmarks/hardware_validation.py: the published figures it holds, how it splits an
estimate, and (slow) one estimate end to end."""

from __future__ import annotations

import dataclasses

import pytest

from tests.validation.benchmark_scripts import load_script
from tilegraph.cost_model.cycles import ModelCycles
from tilegraph.cost_model.cycles.report import KernelCycles

validation = load_script("hardware_validation")


def test_published_latencies_are_batch_over_throughput():
    figures = {(p.model, p.batch): p for p in validation.PUBLISHED}
    # the figures: 1134.63 fps at batch 1 is 0.8813 ms; 4250 fps at 64 is 15.06 ms
    assert figures["se_resnet50", 1].latency_ms == pytest.approx(1000 / 1134.63)
    assert figures["resnet50", 64].latency_ms == pytest.approx(64_000 / 4250)
    assert len(figures) == len(validation.PUBLISHED) == 10


def test_kept_back_figures_are_apart_from_the_calibration():
    calibration = {(p.model, p.batch, p.seq, p.platform) for p in validation.PUBLISHED}
    kept = {(p.model, p.batch, p.seq, p.platform) for p in validation.KEPT_BACK}
    assert len(kept) == len(validation.KEPT_BACK) and not kept & calibration
    # another transformer and a 910B model: kept back, never in the calibration
    transformers = {"vit_b16", "vit_b32", "swin_t"}
    assert not transformers & {p.model for p in validation.PUBLISHED}
    # ResNet-34 was converted without AIPP and small-channel mode; the others with them
    assert {p.model for p in validation.KEPT_BACK if not p.small_channel} == {"resnet34"}
    bert = [p for p in validation.KEPT_BACK if p.model == "bert_base"]
    assert sorted(p.seq for p in bert) == [128, 384]
    assert all(p.seq <= 512 for p in validation.KEPT_BACK)


def _kernel(name: str, unit: str, us: float, workspace_us: float = 0.0) -> KernelCycles:
    return KernelCycles(
        name=name,
        unit=unit,
        ops=(),
        blocks=1,
        launches=1,
        cycles=round(us * 1000),
        us=us,
        launch_us=2.0,
        bound="M",
        cube_utilisation=0.0,
        mode="data",
        workspace_us=workspace_us,
    )


def test_the_split_adds_up_to_the_total():
    kernels = [
        _kernel("conv", "cube", 10.0),
        _kernel("mix", "mix", 7.0, workspace_us=1.5),
        _kernel("add", "vector", 3.0),
    ]
    cycles = ModelCycles("ascend910b", 1.0, kernels, "host", ["conv", "mix", "add"], "sunk", 2.0)
    parts = validation.split(cycles)
    assert parts["cube"] == pytest.approx(10.0 + 7.0 - 1.5)  # a mix kernel's cube side
    assert parts["vector"] == pytest.approx(3.0)
    assert parts["workspace"] == pytest.approx(1.5)
    assert parts["scheduling"] == pytest.approx(3 * 2.0)
    assert sum(parts.values()) == pytest.approx(cycles.total_us)


def test_kernels_group_by_kind_and_charge_their_dram_share():
    def kernel(name: str, us: float, flops: int, gm: int, hbm: float) -> KernelCycles:
        base = _kernel(name, "cube", us)
        paths = {"GM->L1": gm // 2, "UB->GM": gm - gm // 2, "L1->L0A": 999}
        return dataclasses.replace(base, cube_flops=flops, bytes_per_path=paths, hbm_fraction=hbm)

    kernels = [
        kernel("matmul_add_3", 6.0, 150_000_000, 4_000_000, 0.5),
        kernel("matmul_add_11", 8.0, 150_000_000, 4_000_000, 0.25),
        kernel("matmul_add_4", 25.0, 600_000_000, 10_000_000, 0.5),  # another shape
        dataclasses.replace(_kernel("softmax_7", "vector", 2.0), launches=3),
    ]
    cycles = ModelCycles("ascend310p", 1.0, kernels, "host", [], "sunk", 2.0)
    # the DRAM bytes: GM bytes (L0A's are not) times the share that misses L2, per launch
    assert validation.dram_bytes(cycles) == pytest.approx(2e6 + 1e6 + 5e6)
    kinds = validation.kernel_kinds(cycles)
    assert [(k.kind, k.count) for k in kinds] == [
        ("matmul_add", 1),  # 25 µs: the largest total first
        ("matmul_add", 2),
        ("softmax", 3),
    ]
    pair = kinds[1]
    assert pair.us == pytest.approx(7.0) and pair.total_us == pytest.approx(14.0)
    assert pair.cube_mflop == pytest.approx(150.0) and pair.dram_mb == pytest.approx(1.5)
    text = validation.kinds_table(cycles, top=2)
    assert text.splitlines()[-1].split()[:3] == ["(others)", "3", "6.0"]


def test_batch_lines_split_slope_from_the_batch_1_remainder():
    def figure(model: str, batch: int, published: float, estimated: float) -> dict:
        where = {"model": model, "platform": "ascend310p", "seq": None, "batch": batch}
        return where | {"published_ms": published, "estimated_ms": estimated}

    found = [
        figure("vit", 1, 3.0, 2.0) | {"dram_bytes": 180e6},
        figure("vit", 16, 3.0 + 15 * 1.5, 2.0 + 15 * 1.4),  # the two smallest batches
        figure("vit", 64, 99.0, 99.0),
        figure("cnn", 4, 2.0, 2.0),  # no batch 1: no line
        figure("cnn", 8, 4.0, 4.0),
        figure("bert", 1, 5.0, 4.0),  # one batch: no line
        {"model": "resnet50", "platform": "ascend910b", "split_us": {}},  # not a figure
    ]
    rows = validation.batch_lines(found)
    assert len(rows) == 1 and rows[0][:3] == ["vit", "ascend310p", "1, 16"]
    slope, once, est_slope, est_once = (float(v) for v in rows[0][3:7])
    assert (slope, once) == pytest.approx((1.5, 1.5)) and (est_slope, est_once) == pytest.approx(
        (1.4, 0.6)
    )
    # 180 MB of DRAM traffic in the 1.5 ms the published batch-1 inference pays once
    assert rows[0][7:] == ["0.93", "0.40", "180", "120"]


def test_tables_line_up():
    text = validation.table(["a", "bb"], [[1, 22], [333, 4]])
    lines = text.splitlines()
    assert lines[0].split() == ["a", "bb"] and set(lines[1]) == {"-"}
    assert [line.split() for line in lines[2:]] == [["1", "22"], ["333", "4"]]


@pytest.mark.slow
def test_resnet50_batch_1_is_estimated_without_running():
    cycles, _ = validation.estimate("resnet50", 1)
    assert cycles.launches > 50 and cycles.host_us == 0.0
    assert 0.2 < cycles.total_us / 1000 < 10.0  # ms: a sanity range, not a calibration


def test_vision_transformer_figures_are_kept_back_on_their_platforms():
    figures = {
        (p.model, p.batch, p.platform): p
        for p in validation.KEPT_BACK
        if p.model in ("vit_b16", "vit_b32", "swin_t")
    }
    assert set(figures) == {
        ("vit_b16", 1, "ascend310p"),
        ("vit_b16", 16, "ascend310p"),
        ("vit_b32", 1, "ascend310p"),
        ("vit_b32", 64, "ascend310p"),
        ("swin_t", 1, "ascend310p"),
        ("swin_t", 4, "ascend310p"),
        ("swin_t", 8, "ascend310p"),
        ("swin_t", 1, "ascend910b"),
    }
    assert figures["vit_b16", 16, "ascend310p"].latency_ms == pytest.approx(16_000 / 660.64)
    assert all(p.platform == "ascend310p" for p in validation.PUBLISHED)
    # the 910B figure is 8x the 310P3's at batch 1: kept, and labelled suspicious
    flagged = [p for p in validation.KEPT_BACK if p.note]
    assert flagged == [figures["swin_t", 1, "ascend910b"]] and "suspicious" in flagged[0].note
    assert all(p.small_channel for p in figures.values())


@pytest.mark.slow
def test_vit_b32_batch_1_is_estimated_on_the_device_alone():
    cycles, _ = validation.estimate("vit_b32", 1)
    assert cycles.launches > 12 and cycles.host_us == 0.0
    assert 0.2 < cycles.total_us / 1000 < 10.0  # ms: a sanity range, not a calibration
