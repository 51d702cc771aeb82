"""A data-dependent size the tiles compute differently from the reference.

The sizes of a statically imported model are observed by running the graph-level reference
on the call's inputs (:func:`~tilegraph.runtime.binding.observe_unknown_dims`). A count that
turns on a comparison (NMS's IoU at its threshold, a detector's score filter) can come out
otherwise in the tiles, whose rounding differs; the run then observes again from the data
the tiles produced. Here the observation is made to see other data than the run (its
inputs are perturbed), which is what a rounding difference looks like to the run."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import pytest

import tilegraph.runtime.reference as reference
from tests.runtime.test_binding import _onnxruntime, _positives, nonzero_model
from tilegraph.runtime.binding import import_bound, observe_unknown_dims
from tilegraph.runtime.interpreter import KernelError
from tilegraph.runtime.session import Session
from tilegraph.tools.run.cli import run


@pytest.fixture
def observation_sees_one_more_positive(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The reference used for observing sizes runs on inputs with one more positive entry."""
    real = reference.run_reference

    def perturbed(module: Any, inputs: Mapping[str, np.ndarray], **kw: Any) -> Sequence[Any]:
        x = np.array(inputs["x"])
        negative = np.argwhere(x.reshape(-1) < 0)[0, 0]
        x.reshape(-1)[negative] = 1.0
        return real(module, {**inputs, "x": x}, **kw)

    monkeypatch.setattr(reference, "run_reference", perturbed)
    yield


def test_observation_continues_from_the_data_a_tiled_run_produced():
    x = _positives(9)
    bound = import_bound(nonzero_model(), {"x": x}, static=True)
    produced = np.zeros((2, 4), np.int64)  # as if the tiles found 4 positives
    label = "%nz of node 'NonZero' (graph.non_zero)"
    observed = observe_unknown_dims(bound.module, {"x": x}, {label: produced})
    # the reference saw 9 positives; the values from NonZero on follow the tiles' data
    assert {o.value: o.shape for o in observed}[label] == (2, 4)
    assert all(4 in o.shape and 9 not in o.shape for o in observed)


def test_a_produced_value_the_model_does_not_have_is_an_internal_error():
    x = _positives(9)
    bound = import_bound(nonzero_model(), {"x": x}, static=True)
    with pytest.raises(KernelError, match="no such value") as e:
        observe_unknown_dims(bound.module, {"x": x}, {"%nope (graph.non_zero)": np.zeros(2)})
    assert e.value.internal


@pytest.mark.usefixtures("observation_sees_one_more_positive")
def test_session_tiles_again_for_the_size_the_tiles_produced():
    model = nonzero_model()
    x = _positives(9)
    log: list[str] = []
    session = Session(model, target="tiles", log=log.append)
    (ours,) = session(x=x)
    (theirs,) = _onnxruntime(model, {"x": x})
    assert ours.shape == (9, 16)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    tilings = [line for line in log if line.startswith("tiling")]
    assert len(tilings) == 2
    assert "observed as [2, 10]" in tilings[0]
    assert "from the tiles' data for %nz of node 'NonZero' (graph.non_zero)" in tilings[1]


@pytest.mark.usefixtures("observation_sees_one_more_positive")
def test_tilegraph_run_compiles_again_for_the_size_the_tiles_produced(tmp_path):
    path = tmp_path / "nz.onnx"
    onnx.save(nonzero_model(), path)
    np.save(tmp_path / "x.npy", _positives(9))
    report = tmp_path / "r.json"
    argv = [str(path), "--input", f"x={tmp_path / 'x.npy'}", "--compare", "--json", str(report)]
    assert run(argv) == 0
    data = json.loads(report.read_text())
    assert data["compare_ok"] and data["target"] == "tiles"
    assert data["outputs"]["y"]["shape"] == [9, 16]
    assert (
        "observed from the tiles' data: %nz of node 'NonZero' (graph.non_zero)" in data["bindings"]
    )
