"""RNN, GRU and LSTM against onnxruntime: directions, sequence lengths, layouts, initial
states, activations; and a small LSTM model through the reference and O2."""

from __future__ import annotations

import numpy as np
import onnx.helper as oh
import pytest
from onnx import TensorProto, numpy_helper

import tilegraph
from tests.dialects.op_harness import build_op, check_op
from tilegraph.dialects.graph import recurrent as rc
from tilegraph.frontend import load_onnx
from tilegraph.runtime import run_reference

rng = np.random.default_rng(0)
SEQ, BATCH, INPUT, HIDDEN = 5, 3, 4, 6


def _weights(gates: int, dirs: int):
    w = rng.standard_normal((dirs, gates * HIDDEN, INPUT)).astype(np.float32) * 0.5
    r = rng.standard_normal((dirs, gates * HIDDEN, HIDDEN)).astype(np.float32) * 0.5
    b = rng.standard_normal((dirs, 2 * gates * HIDDEN)).astype(np.float32) * 0.1
    return w, r, b


CASES = [(rc.RNNOp, 1), (rc.GRUOp, 3), (rc.LSTMOp, 4)]


@pytest.mark.parametrize(("op", "gates"), CASES, ids=lambda c: getattr(c, "ONNX_OP", ""))
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_directions_with_sequence_lengths(op, gates, direction):
    dirs = 2 if direction == "bidirectional" else 1
    x = rng.standard_normal((SEQ, BATCH, INPUT)).astype(np.float32)
    w, r, b = _weights(gates, dirs)
    lens = np.array([5, 2, 4], np.int32)
    h0 = rng.standard_normal((dirs, BATCH, HIDDEN)).astype(np.float32)
    operands = [x, w, r, b, lens, h0]
    attrs = {"direction": direction, "hidden_size": HIDDEN}
    check_op(op, operands, attrs, opset=14, rtol=1e-4, atol=1e-5)


def test_peepholes_clip_activations_and_layout_1():
    """onnxruntime has no layout 1 (batch-first): the batch-first run must equal the
    sequence-first run of the transposed input, which is checked against onnxruntime."""
    x = rng.standard_normal((SEQ, BATCH, INPUT)).astype(np.float32)
    w, r, b = _weights(4, 1)
    p = rng.standard_normal((1, 3 * HIDDEN)).astype(np.float32) * 0.1
    attrs = {"hidden_size": HIDDEN, "clip": 3.0,
             "activations": ["HardSigmoid", "Tanh", "Softsign"]}  # fmt: skip
    operands = [x, w, r, b, None, None, None, p]
    y, y_h, y_c = check_op(rc.LSTMOp, operands, attrs, opset=14, rtol=1e-4, atol=1e-5)
    check_op(rc.GRUOp, [x, *_weights(3, 1)], {"hidden_size": HIDDEN, "linear_before_reset": 1},
             opset=14, rtol=1e-4, atol=1e-5)  # fmt: skip
    batch_first = np.swapaxes(x, 0, 1).copy()
    _, op = build_op(rc.LSTMOp, [batch_first, w, r, b, None, None, None, p], {**attrs, "layout": 1})
    y1, y_h1, y_c1 = op.reference(batch_first, w, r, b, None, None, None, p)
    np.testing.assert_allclose(y1, np.transpose(y, (2, 0, 1, 3)), rtol=1e-6)
    np.testing.assert_allclose(y_h1, np.swapaxes(y_h, 0, 1), rtol=1e-6)
    np.testing.assert_allclose(y_c1, np.swapaxes(y_c, 0, 1), rtol=1e-6)


def test_an_lstm_model_matches_onnxruntime():
    """x[batch, seq, feat] -> Transpose -> LSTM -> Y_h -> MatMul -> Sigmoid (a VAD-like
    head)."""
    import onnxruntime as ort

    w, r, b = _weights(4, 1)
    head = rng.standard_normal((HIDDEN, 1)).astype(np.float32)
    nodes = [
        oh.make_node("Transpose", ["x"], ["xt"], perm=[1, 0, 2]),
        oh.make_node("LSTM", ["xt", "w", "r", "b"], ["", "h"], hidden_size=HIDDEN),
        oh.make_node("Squeeze", ["h", "axis"], ["h2"]),  # [1, batch, hidden] -> [batch, hidden]
        oh.make_node("MatMul", ["h2", "head"], ["logit"]),
        oh.make_node("Sigmoid", ["logit"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(a, n) for a, n in ((w, "w"), (r, "r"), (b, "b"), (head, "head"))
    ]
    inits.append(numpy_helper.from_array(np.array([0], np.int64), "axis"))
    graph = oh.make_graph(
        nodes,
        "vad",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, SEQ, INPUT])],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, [BATCH, 1])],
        inits,
    )
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])
    x = rng.standard_normal((BATCH, SEQ, INPUT)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"x": x})
    (ref,) = run_reference(load_onnx(model), [x])
    (tiled,) = tilegraph.compile(model, "O2")(x)
    np.testing.assert_allclose(ref, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(tiled, want, rtol=1e-4, atol=1e-5)


STATES = [(op, gates, "initial_h") for op, gates in CASES] + [(rc.LSTMOp, 4, "initial_c")]


@pytest.mark.parametrize(("op", "gates", "state"), STATES, ids=lambda c: getattr(c, "ONNX_OP", c))
def test_an_initial_state_of_another_batch_is_a_located_error(op, gates, state):
    """onnxruntime refuses it at run time (``Input initial_h must have shape {2,2,64}``);
    the import says so first (speechmos' AECMOS models carry ``h0 [4, 1, 64]``: batch 1)."""
    w, r, b = _weights(gates, 1)
    inputs = ["x", "w", "r", "b", "", "h0"] + (["c0"] if op is rc.LSTMOp else [])
    node = oh.make_node(op.ONNX_OP, inputs, ["y"], name="rec", hidden_size=HIDDEN)
    good, bad = [1, BATCH, HIDDEN], [1, 1, HIDDEN]
    states = {"h0": bad if state == "initial_h" else good, "c0": bad}
    graph = oh.make_graph(
        [node],
        "g",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, [SEQ, BATCH, INPUT])]
        + [oh.make_tensor_value_info(n, TensorProto.FLOAT, states[n]) for n in inputs[5:]],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(a, n) for a, n in ((w, "w"), (r, "r"), (b, "b"))],
    )
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 14)])
    with pytest.raises(tilegraph.frontend.OnnxImportError) as caught:
        load_onnx(model)
    assert str(caught.value).startswith(
        f"<model>: node 'rec' ({op.ONNX_OP}): {state} must be [1, 3, 6]"
    )
    assert str(caught.value).endswith("got [1, 1, 6]")
