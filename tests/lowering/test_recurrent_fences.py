"""A recurrent kernel whose loop nests need more than 8 events on a pipe pair is fenced
apart (``inject-sync``'s ``_fence_nests``): each nest's carried flag pairs (the next tile's
load waiting for the cube to finish with the last) must stay on the nest's side of the
fence. They were erased when the set of a flag the nest produces for a later op came
between the nest and their drains, and every LSTM of hidden 512 or more failed
``verify-sync`` ("event 0 of MTE2 -> MTE1 raised again before it was awaited")."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import tilegraph
from tilegraph.frontend.onnxruntime_oracle import onnxruntime_session


def _lstm(hidden: int, inputs: int, direction: str) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    dirs = 2 if direction == "bidirectional" else 1
    w = (0.03 * rng.standard_normal((dirs, 4 * hidden, inputs))).astype(np.float32)
    r = (0.03 * rng.standard_normal((dirs, 4 * hidden, hidden))).astype(np.float32)
    node = helper.make_node("LSTM", ["x", "W", "R"], ["y"], hidden_size=hidden, direction=direction)
    graph = helper.make_graph(
        [node],
        "lstm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 1, inputs])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("platform", ["ascend310p", "ascend910b"])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_lstm_of_hidden_512_passes_verify_sync(platform: str, direction: str):
    model = _lstm(512, 512, direction)
    x = np.random.default_rng(1).standard_normal((3, 1, 512)).astype(np.float32)
    compiled = tilegraph.compile(model, platform=platform)  # verify-sync runs
    assert not compiled.host_ops
    (ours,) = compiled.run({"x": x})
    (theirs,) = onnxruntime_session(model).run(None, {"x": x})
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
