"""tilegraph-sweep's logic: the configurations, static input shapes, a cell's figures, the
outputs (CSV, JSON, PNG read back), the same figures on one worker and on two, a failing
cell recorded and not fatal."""

from __future__ import annotations

import csv
import json
from dataclasses import replace

import onnx
import pytest
from onnx import TensorProto, helper

from tests.test_hardware_overrides import relu_model
from tilegraph.search.sweep import (
    CSV_COLUMNS,
    UNITS,
    SweepConfig,
    SweepError,
    model_spec,
    run_cell,
    run_sweep,
    static_model,
    sweep_configs,
    sweep_tasks,
    write_outputs,
)

PRESETS = ["test", "ascend910b"]
OVERRIDE = "ub=16KiB"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("models") / "tiny.onnx"
    onnx.save(relu_model((1, 8, 16, 16)), str(path))
    return str(path)


@pytest.fixture(scope="module")
def swept(tiny):
    """The tiny model × (test, ascend910b) × (as is, ub=16KiB), on one worker."""
    configs = sweep_configs(PRESETS, [OVERRIDE])
    return configs, run_sweep(sweep_tasks([model_spec(tiny)], configs))


def test_each_override_is_one_more_configuration_of_every_preset():
    configs = sweep_configs(["ascend910b", "ascend310p"], ["ub=384KiB", "ub = 256KiB, L1=1MiB"])
    assert [(c.preset, c.override) for c in configs] == [
        ("ascend910b", ""),
        ("ascend910b", "ub=384KiB"),
        ("ascend910b", "ub=256KiB,l1=1MiB"),
        ("ascend310p", ""),
        ("ascend310p", "ub=384KiB"),
        ("ascend310p", "ub=256KiB,l1=1MiB"),
    ]
    assert configs[2].platform == "ascend910b:ub=256KiB,l1=1MiB"
    with_strategies = sweep_configs(["ascend910b"], ["ub=384KiB"], ["naive", "ge"])
    assert [c.label for c in with_strategies] == [
        "ascend910b naive",
        "ascend910b",
        "ascend910b ub=384KiB naive",
        "ascend910b ub=384KiB",
    ]


@pytest.mark.parametrize(
    ("presets", "overrides", "strategies", "message"),
    [
        (["h100"], [], ["ge"], "unknown platform 'h100'"),
        (["ascend910b"], ["ub=1XB"], ["ge"], "override 'ub': unknown unit"),
        (["ascend910b"], ["size=1"], ["ge"], "unknown override key 'size'; valid keys"),
        (["ascend910b"], [], ["fastest"], "unknown strategy 'fastest'"),
        (["ascend910b:ub=1KiB"], [], ["ge"], "give overrides with --override"),
        # a count that suits one preset and not another is refused up front
        (["ascend910b", "ascend310p"], ["cube_cores=30"], ["ge"], "counts must be equal"),
    ],
)
def test_bad_configurations_are_refused_before_anything_runs(
    presets, overrides, strategies, message
):
    with pytest.raises(SweepError, match=message):
        sweep_configs(presets, overrides, strategies)


def test_a_missing_model_is_refused(tmp_path):
    with pytest.raises(SweepError, match="no such model file, nor a light model"):
        model_spec(str(tmp_path / "missing.onnx"))


def test_dynamic_axes_are_sized_by_dims_shapes_or_a_batch_of_one(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 4])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    path = tmp_path / "dyn.onnx"
    onnx.save(helper.make_model(graph), str(path))

    def dims_of(spec) -> list[int]:
        return [d.dim_value for d in static_model(spec).graph.input[0].type.tensor_type.shape.dim]

    assert dims_of(model_spec(str(path), {"seq": 7})) == [1, 7, 4]
    assert dims_of(model_spec(str(path), shapes={"x": (2, 3, 4)})) == [2, 3, 4]
    with pytest.raises(SweepError, match=r"axis 1 is dynamic \(seq\): give --dim seq=N"):
        static_model(model_spec(str(path)))
    with pytest.raises(SweepError, match="2 sizes for an input of rank 3"):
        static_model(model_spec(str(path), shapes={"x": (2, 3)}))


def test_a_cell_records_the_figures_the_units_add_up(swept):
    configs, cells = swept
    assert [(c.model, c.preset, c.override) for c in cells] == [
        ("tiny", c.preset, c.override) for c in configs
    ]
    for cell in cells:
        assert not cell.error
        assert set(cell.unit_us) == set(UNITS)
        assert sum(cell.unit_us.values()) == pytest.approx(cell.total_us, abs=0.01)
        assert cell.kernels >= 1 and cell.launches >= cell.kernels
    assert [c.platform for c in cells] == [
        "test",
        "test:ub=16KiB",
        "ascend910b",
        "ascend910b:ub=16KiB",
    ]
    # the override changes what the test preset's tiny UB forced: fewer, bigger tiles
    assert cells[1].total_us != cells[0].total_us


def test_outputs_are_written_and_read_back(swept, tmp_path):
    configs, cells = swept
    written = write_outputs(tmp_path, cells, configs)
    assert {p.name for p in written} == {"sweep.csv", "sweep.json", "sweep.png", "sweep_tiny.png"}
    with (tmp_path / "sweep.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == list(CSV_COLUMNS)
    assert [(r["preset"], r["override"], r["platform"]) for r in rows] == [
        (c.preset, c.override, c.platform) for c in cells
    ]
    assert [float(r["total_us"]) for r in rows] == [c.total_us for c in cells]
    data = json.loads((tmp_path / "sweep.json").read_text())
    assert data["units"] == list(UNITS)
    assert [c["platform"] for c in data["configs"]] == [c.platform for c in cells]
    assert data["cells"] == [c.to_json() for c in cells]
    for png in ("sweep.png", "sweep_tiny.png"):
        assert (tmp_path / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_two_workers_give_the_same_figures(swept, tiny):
    configs, cells = swept
    again = run_sweep(sweep_tasks([model_spec(tiny)], configs), workers=2)
    assert [replace(c, compile_s=0.0) for c in again] == [replace(c, compile_s=0.0) for c in cells]


def test_a_failing_cell_is_recorded_and_the_sweep_goes_on(tiny, tmp_path):
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model")
    configs = [SweepConfig("test")]
    cells = run_sweep(sweep_tasks([model_spec(str(broken)), model_spec(tiny)], configs))
    assert cells[0].model == "broken" and cells[0].error and "\n" not in cells[0].error
    # the importer's plain words, not an exception's class name or an internal error
    assert "not a valid ONNX model" in cells[0].error
    assert not cells[0].error.startswith(("DecodeError", "internal error"))
    assert not cells[1].error and cells[1].total_us > 0
    write_outputs(tmp_path / "out", cells, configs, plots=False)
    rows = list(csv.DictReader((tmp_path / "out" / "sweep.csv").open()))
    assert rows[0]["error"] == cells[0].error and rows[0]["total_us"] == ""


def test_a_light_model_is_named_by_its_name():
    assert model_spec("resnet50").label == "resnet50"
    assert model_spec("tests/zoo/models/bert.onnx").label == "bert"


@pytest.mark.slow
def test_light_resnet50_gains_from_a_bigger_ub_on_910b():
    cells = [
        run_cell(task)
        for task in sweep_tasks(
            [model_spec("resnet50")], sweep_configs(["ascend910b"], ["ub=384KiB"])
        )
    ]
    assert not any(c.error for c in cells)
    assert cells[1].total_us < cells[0].total_us


@pytest.mark.slow
def test_ray_gives_the_same_figures(swept, tiny):
    pytest.importorskip("ray")
    configs, cells = swept
    on_ray = run_sweep(sweep_tasks([model_spec(tiny)], configs), workers=2, ray="")
    assert [replace(c, compile_s=0.0) for c in on_ray] == [replace(c, compile_s=0.0) for c in cells]
