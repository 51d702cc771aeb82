"""The tuning database: keys by content (names do not matter, the preset and precision
do), the best point kept whatever order results arrive in, ``apply-tuning`` and
``compile`` / ``Session`` applying it (a missing file is an error, an empty database the
default compile)."""

from __future__ import annotations

import dataclasses

import numpy as np
import onnx
import pytest

import tilegraph
from tests.search.conftest import two_matmuls
from tilegraph.cost_model.cycles import simulate_module
from tilegraph.hardware import hardware_preset
from tilegraph.lowering.analysis.tuning_params import kernel_params
from tilegraph.lowering.tuning_db import (
    Candidate,
    TuningDatabase,
    TuningDatabaseError,
    kernel_key,
)
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.statistics import collecting_statistics
from tilegraph.runtime.compiled import CompileError
from tilegraph.search.tune import load_static, macro_kernels

POINT: dict[str, int | bool | str] = {"matmul.k1": 1, "matmul.m1": 1, "matmul.n1": 2}


def _kernels(path: str):
    module = load_static(path, {}, "ascend910b", "")
    run_pipeline("O2,lower-graph-to-kernels", make_context(), module)
    return module, macro_kernels(module)


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "mm.onnx"
    onnx.save(two_matmuls(), str(path))
    return str(path)


def test_the_key_ignores_names_and_keeps_preset_and_precision(model):
    _, (first, _) = _kernels(model)
    hw = hardware_preset("ascend910b")
    renamed = first.clone()
    renamed.sym_name = type(first.sym_name)("another_name")
    for arg in renamed.body.block.args:
        arg.name_hint = "x"
    assert kernel_key(renamed, hw, "origin") == kernel_key(first, hw, "origin")
    assert kernel_key(first, hw, "fp16") != kernel_key(first, hw, "origin")
    bigger_ub = dataclasses.replace(hw, cube_cores=2 * hw.cube_cores)  # an overridden preset
    assert kernel_key(first, bigger_ub, "origin") != kernel_key(first, hw, "origin")
    assert kernel_key(first, hardware_preset("ascend310p"), "origin") != kernel_key(
        first, hw, "origin"
    )


def test_the_best_does_not_depend_on_arrival_order(tmp_path):
    results = [Candidate({"a": 1}, 5.0), Candidate({"a": 2}, 3.0), Candidate({"a": 3}, 3.0)]
    best = []
    for order in (results, results[::-1]):
        with TuningDatabase(tmp_path / f"{len(best)}.sqlite") as db:
            db.add_kernel("k", "@k", {"a": 1})
            for candidate in order:
                db.record("k", candidate)
            db.record("k", Candidate({"a": 4}, None, "too big"))
            best.append(db.best("k"))
            assert db.candidates("k")['{"a": 4}'].infeasible == "too big"
    assert best[0] == best[1] == ({"a": 2}, 3.0)


def test_a_tie_keeps_the_default(tmp_path):
    with TuningDatabase(tmp_path / "t.sqlite") as db:
        db.add_kernel("k", "@k", {"a": 2})
        db.record("k", Candidate({"a": 1}, 3.0))
        db.record("k", Candidate({"a": 2}, 3.0))
        assert db.best("k") == ({"a": 2}, 3.0)


def _db_with_point(path, model) -> None:
    module, kernels = _kernels(model)
    hw = hardware_preset("ascend910b")
    with TuningDatabase(path) as db:
        for fn in kernels:
            key = kernel_key(fn, hw, "origin")
            db.add_kernel(key, fn.sym_name.data, {})
            db.record(key, Candidate(POINT, 1.0))


def test_apply_tuning_writes_the_points_it_knows(model, tmp_path):
    db = tmp_path / "t.sqlite"
    _db_with_point(db, model)
    module = load_static(model, {}, "ascend910b", "")
    with collecting_statistics() as stats:
        run_pipeline(f'O2,lower-graph-to-kernels,apply-tuning{{db="{db}"}}', make_context(), module)
    assert [kernel_params(fn) for fn in macro_kernels(module)] == [POINT, POINT]
    assert stats.as_dict()["apply-tuning"]["tuned"] == 2


def test_compile_applies_the_database_and_estimates_the_tuned_total(model, tmp_path):
    db = tmp_path / "t.sqlite"
    _db_with_point(db, model)
    default = tilegraph.compile(model, platform="ascend910b")
    tuned = tilegraph.compile(model, platform="ascend910b", tune_db=db)
    assert simulate_module(tuned.module).total_us != simulate_module(default.module).total_us
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in ((64, 128), (128, 96), (96, 96))]
    for ours, theirs in zip(tuned(*inputs), default(*inputs), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-3)


def test_an_empty_database_is_the_default_compile(model, tmp_path):
    db = tmp_path / "empty.sqlite"
    TuningDatabase(db).close()
    default = tilegraph.compile(model, platform="ascend910b")
    tuned = tilegraph.compile(model, platform="ascend910b", tune_db=db)
    assert str(tuned.module) == str(default.module)


def test_a_missing_database_is_an_error(model, tmp_path):
    with pytest.raises(CompileError, match="no such file"):
        tilegraph.compile(model, platform="ascend910b", tune_db=tmp_path / "none.sqlite")
    with pytest.raises(Exception, match="no such file"):
        tilegraph.Session(model, target="tiles", tune_db=tmp_path / "none.sqlite")
    with pytest.raises(TuningDatabaseError, match="no such file"):
        TuningDatabase(tmp_path / "none.sqlite", create=False)


def test_a_session_applies_the_database(model, tmp_path):
    db = tmp_path / "t.sqlite"
    _db_with_point(db, model)
    session = tilegraph.Session(model, target="tiles", platform="ascend910b", tune_db=db)
    rng = np.random.default_rng(0)
    session(*[rng.standard_normal(s).astype(np.float32) for s in ((64, 128), (128, 96), (96, 96))])
    assert session.latest_tiled is not None
    from xdsl.dialects import func

    params = [
        kernel_params(f)
        for f in session.latest_tiled.module.ops
        if isinstance(f, func.FuncOp) and "tile.params" in f.attributes
    ]
    assert params and all(p == POINT for p in params)
