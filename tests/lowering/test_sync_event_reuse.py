"""A kernel of straight-line code with more flag pairs on one pipe pair than the hardware's
8 events reuses an event once its pair's last op has run (``inject-sync``'s ``_reuse``).
UperNet's export upsamples by a Gather of constant indices (all zeros: a broadcast): the
gather kernel is unrolled, a flag pair per tile, and failed with "more than 8 events
needed between MTE2 and MTE3 in one loop nest"."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import tilegraph
from tilegraph.dialects.tile import EVENTS_PER_PAIR, SetFlagOp
from tilegraph.frontend.onnxruntime_oracle import onnxruntime_session


def _constant_gather(rows: int) -> onnx.ModelProto:
    """``Gather(x [1, 3, 2048], zeros [rows, 1, 6, 1], axis 0)``: UperNet's shape."""
    indices = numpy_helper.from_array(np.zeros((rows, 1, 6, 1), np.int64), "idx")
    node = helper.make_node("Gather", ["x", "idx"], ["y"], axis=0)
    graph = helper.make_graph(
        [node],
        "constant_gather",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 2048])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [indices],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_an_unrolled_gather_reuses_events_and_runs():
    model = _constant_gather(6)
    x = np.random.default_rng(0).standard_normal((1, 3, 2048)).astype(np.float32)
    compiled = tilegraph.compile(model, platform="ascend910b")  # verify-sync runs
    assert not compiled.host_ops
    (theirs,) = onnxruntime_session(model).run(None, {"x": x})
    events: dict[tuple[str, str], set[int]] = defaultdict(set)
    sets: dict[tuple[str, str], int] = defaultdict(int)
    for op in compiled.module.walk():
        if isinstance(op, SetFlagOp):
            events[op.pair].add(op.event_id)
            sets[op.pair] += 1
    assert any(sets[pair] > EVENTS_PER_PAIR for pair in sets), sets  # more pairs than events
    assert all(max(ids) < EVENTS_PER_PAIR for ids in events.values()), events
    for executor in ("fast", "interpret"):
        (ours,) = tilegraph.compile(model, platform="ascend910b", executor=executor).run({"x": x})
        np.testing.assert_array_equal(ours, theirs)
