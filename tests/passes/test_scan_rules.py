"""``scan-sliding-frames``: a Scan that frames a signal with a sliding buffer (onnx-asr's
onnxscript front ends) becomes strided Slices and a Concat, with the same frames.

The models are the buffer as onnxscript spells it: ``frame = Concat(prev, x_t)``, the new
state ``Slice(frame, [H], [INT64_MAX], [1], [1])``; the first ``P`` samples are the initial
state and the rest the hops ``[B, T, H]``. Each runs on the reference and on the tiles
against onnxruntime; a buffer whose final state is read, or which scans backwards, stays.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx.helper as oh
import onnxruntime as ort
import pytest
from onnx import TensorProto, numpy_helper

import tilegraph
from tilegraph.frontend import load_onnx
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.runtime import run_reference
from tilegraph.symbolic.env import ShapeEnv

F = TensorProto.FLOAT
INT64_MAX = 2**63 - 1


def framing_model(p: int, h: int, *, read_state: bool = False, reverse: bool = False):
    """signal [B, P + T·H] -> X0 = signal[:, :P], X = signal[:, P:] as [B, T, H] -> Scan
    -> frames [B, T, P + H] (-> * 2, and the final state's sum when ``read_state``)."""
    body = oh.make_graph(
        [
            oh.make_node("Concat", ["prev", "curr"], ["frame"], axis=-1),
            oh.make_node("Slice", ["frame", "hop", "big", "one", "one"], ["next"]),
        ],
        "sliding_buffer",
        [
            oh.make_tensor_value_info("prev", F, ["B", p]),
            oh.make_tensor_value_info("curr", F, ["B", h]),
        ],
        [
            oh.make_tensor_value_info("next", F, ["B", p]),
            oh.make_tensor_value_info("frame", F, ["B", p + h]),
        ],
    )
    scan_attrs = {"num_scan_inputs": 1, "scan_input_axes": [1], "scan_output_axes": [1]}
    if reverse:
        scan_attrs["scan_input_directions"] = [1]
    nodes = [
        oh.make_node("Slice", ["signal", "zero", "p", "one", "one"], ["x0"]),
        oh.make_node("Slice", ["signal", "p", "big", "one", "one"], ["rest"]),
        oh.make_node("Reshape", ["rest", "hops"], ["x"]),
        oh.make_node("Scan", ["x0", "x"], ["last", "frames"], name="scan", body=body, **scan_attrs),
        oh.make_node("Mul", ["frames", "two"], ["y"]),
    ]
    outputs = [oh.make_tensor_value_info("y", F, None)]
    if read_state:
        nodes.append(oh.make_node("ReduceSum", ["last"], ["s"], keepdims=0))
        outputs.append(oh.make_tensor_value_info("s", F, None))
    inits = {
        "zero": np.array([0], np.int64),
        "one": np.array([1], np.int64),
        "p": np.array([p], np.int64),
        "hop": np.array([h], np.int64),
        "big": np.array([INT64_MAX], np.int64),
        "hops": np.array([0, -1, h], np.int64),
        "two": np.array(2.0, np.float32),
    }
    graph = oh.make_graph(
        nodes,
        "framing",
        [oh.make_tensor_value_info("signal", F, ["B", "N"])],
        outputs,
        [numpy_helper.from_array(a, n) for n, a in inits.items()],
    )
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])


def _onnxruntime(model: onnx.ModelProto, x: np.ndarray) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"signal": x})


def _static(model: onnx.ModelProto, shape: tuple[int, ...]):
    return load_onnx(model, shape_env=ShapeEnv("static"), input_shapes={"signal": shape})


def _scans_after_o1(model: onnx.ModelProto, shape: tuple[int, ...]) -> int:
    module = _static(model, shape)
    run_pipeline("O1", make_context(), module)
    return sum(op.name == "graph.scan" for op in module.walk())


@pytest.mark.parametrize(("p", "h", "t"), [(240, 160, 7), (3, 2, 5), (4, 4, 3), (5, 3, 1)])
def test_a_sliding_buffer_becomes_slices_with_the_same_frames(p, h, t):
    model = framing_model(p, h)
    for batch in (1, 3):
        x = np.random.default_rng(p + t).standard_normal((batch, p + t * h)).astype(np.float32)
        assert _scans_after_o1(model, x.shape) == 0
        (want,) = _onnxruntime(model, x)
        assert want.shape == (batch, t, p + h)
        (tiled,) = tilegraph.compile(_static(model, x.shape), "O2")(x)
        np.testing.assert_array_equal(tiled, want)  # copies: exact


@pytest.mark.parametrize("kind", ["final state read", "backwards", "too many pieces"])
def test_other_scans_stay(kind):
    p, h = (241, 160) if kind == "too many pieces" else (240, 160)
    model = framing_model(p, h, read_state=kind == "final state read", reverse=kind == "backwards")
    x = np.random.default_rng(0).standard_normal((2, p + 4 * h)).astype(np.float32)
    assert _scans_after_o1(model, x.shape) == 1
    want = _onnxruntime(model, x)
    got = run_reference(_static(model, x.shape), [x])
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
