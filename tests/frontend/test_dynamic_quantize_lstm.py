"""onnxruntime's com.microsoft DynamicQuantizeLSTM: small random models built with
onnx.helper, the reference and the tiled path against onnxruntime (one intra-op thread, so
the batch's hidden state is quantised whole each step, as the op states).

Tolerance: the integer products are exact and the quantisation grids identical, so what
differs is float32 rounding of the scale products, the bias sums and onnxruntime's
approximated sigmoid / tanh (MLAS): measured at most 1.8e-7 on these cases, so atol 1e-6
on values of order 1; the same LSTM in float on the dequantised weights (no quantisation
of X and h) is 1.8e-3 away."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.helper as oh
import pytest
from onnx import TensorProto, numpy_helper

import tilegraph
from tilegraph.frontend import load_onnx
from tilegraph.frontend.onnx_errors import OnnxImportError
from tilegraph.lowering.conversion.tiling.recurrent import QUANTIZED_LSTM_HOST_REASON
from tilegraph.runtime import run_reference

ATOL = 1e-6


def _model(
    rng: np.random.Generator, *, seq: int, batch: int, inp: int, hidden: int,
    direction: str = "forward", signed: bool = True, per_channel: bool = False,
    states: bool = False, bias: bool = True, peephole: bool = False, **attrs: float,
) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:  # fmt: skip
    """A DynamicQuantizeLSTM with random quantised weights (``attrs``: more attributes of
    the node, e.g. ``clip``); the model and its feeds."""
    dirs = 2 if direction == "bidirectional" else 1
    wtype = np.int8 if signed else np.uint8
    lo, hi = (-127, 128) if signed else (0, 256)
    channels = (dirs, 4 * hidden) if per_channel else (dirs,)

    def zero_point(name: str) -> onnx.TensorProto:
        # int8 zero points must be 0, uint8 ones all equal (onnxruntime)
        return numpy_helper.from_array(np.full(channels, 0 if signed else 121, wtype), name)

    def scale(name: str) -> onnx.TensorProto:
        return numpy_helper.from_array(rng.uniform(2e-3, 8e-3, channels).astype(np.float32), name)

    inits = [
        numpy_helper.from_array(rng.integers(lo, hi, (dirs, inp, 4 * hidden)).astype(wtype), "W"),
        numpy_helper.from_array(rng.integers(lo, hi, (dirs, hidden, 4 * hidden)).astype(wtype), "R"),
        scale("W_scale"), zero_point("W_zp"), scale("R_scale"), zero_point("R_zp"),
    ]  # fmt: skip
    names = ["X", "W", "R", "", "", "", "", ""]
    if bias:
        b = (rng.standard_normal((dirs, 8 * hidden)) * 0.3).astype(np.float32)
        inits.append(numpy_helper.from_array(b, "B"))
        names[3] = "B"
    if peephole:
        p = (rng.standard_normal((dirs, 3 * hidden)) * 0.3).astype(np.float32)
        inits.append(numpy_helper.from_array(p, "P"))
        names[7] = "P"
    feeds = {"X": rng.standard_normal((seq, batch, inp)).astype(np.float32)}
    graph_inputs = [oh.make_tensor_value_info("X", TensorProto.FLOAT, [seq, batch, inp])]
    if states:
        for i, name in ((5, "h0"), (6, "c0")):
            feeds[name] = (rng.standard_normal((dirs, batch, hidden)) * 0.5).astype(np.float32)
            graph_inputs.append(
                oh.make_tensor_value_info(name, TensorProto.FLOAT, [dirs, batch, hidden])
            )
            names[i] = name
    node = oh.make_node(
        "DynamicQuantizeLSTM",
        [*names, "W_scale", "W_zp", "R_scale", "R_zp"],
        ["Y", "Y_h", "Y_c"],
        domain="com.microsoft",
        direction=direction,
        hidden_size=hidden,
    )
    node.attribute.extend(oh.make_attribute(k, v) for k, v in attrs.items())
    outputs = [
        oh.make_tensor_value_info("Y", TensorProto.FLOAT, [seq, dirs, batch, hidden]),
        oh.make_tensor_value_info("Y_h", TensorProto.FLOAT, [dirs, batch, hidden]),
        oh.make_tensor_value_info("Y_c", TensorProto.FLOAT, [dirs, batch, hidden]),
    ]
    graph = oh.make_graph([node], "dqlstm", graph_inputs, outputs, inits)
    opsets = [oh.make_opsetid("", 17), oh.make_opsetid("com.microsoft", 1)]
    return oh.make_model(graph, opset_imports=opsets), feeds


def _onnxruntime(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return [np.asarray(a) for a in session.run(None, feeds)]


CASES = {
    "forward": dict(seq=5, batch=1, inp=7, hidden=5),
    "reverse-uint8": dict(seq=4, batch=3, inp=6, hidden=3, direction="reverse", signed=False),
    "bidirectional-states": dict(seq=6, batch=2, inp=9, hidden=4, direction="bidirectional",
                                 states=True),
    "per-channel": dict(seq=3, batch=2, inp=5, hidden=6, per_channel=True, states=True),
    "bidirectional-per-channel-uint8": dict(seq=4, batch=1, inp=3, hidden=7,
                                            direction="bidirectional", per_channel=True,
                                            signed=False),
    "no-bias-peephole": dict(seq=5, batch=2, inp=4, hidden=5, bias=False, peephole=True,
                             states=True),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_reference_matches_onnxruntime(case: str):
    model, feeds = _model(np.random.default_rng(len(case)), **CASES[case])  # type: ignore[arg-type]
    want = _onnxruntime(model, feeds)
    got = run_reference(load_onnx(model), feeds)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=0, atol=ATOL)


def test_the_tiled_path_matches_onnxruntime():
    model, feeds = _model(np.random.default_rng(3), **CASES["bidirectional-states"])  # type: ignore[arg-type]
    want = _onnxruntime(model, feeds)
    compiled = tilegraph.compile(model, "O2")
    got = compiled(*feeds.values())
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=0, atol=ATOL)
    # a host kernel until the per-step quantisation of h has an AI-core form
    assert compiled.host_ops == [
        {"op": "graph.dynamic_quantize_lstm", "reason": QUANTIZED_LSTM_HOST_REASON}
    ]


def test_the_quantisation_is_visible_against_a_float_lstm():
    """The dequantised weights in a plain float LSTM differ from the op by more than the
    tolerance: the test above can tell the quantisation of X and h apart from none."""
    model, feeds = _model(np.random.default_rng(5), **CASES["forward"])  # type: ignore[arg-type]
    (want, *_) = _onnxruntime(model, feeds)
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    w = inits["W"].astype(np.float64) * inits["W_scale"][:, None, None]
    r = inits["R"].astype(np.float64) * inits["R_scale"][:, None, None]
    x = feeds["X"].astype(np.float64)
    h = np.zeros((1, 5))
    c = np.zeros((1, 5))
    b = inits["B"][0, :20] + inits["B"][0, 20:]
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    for t in range(5):
        g = x[t] @ w[0] + h @ r[0] + b
        i, o, f, cand = (g[:, k * 5 : (k + 1) * 5] for k in range(4))
        c = sig(f) * c + sig(i) * np.tanh(cand)
        h = sig(o) * np.tanh(c)
    assert np.abs(h - want[-1, 0]).max() > 100 * ATOL  # measured 1.8e-3


def test_sequence_lens_and_other_contrib_ops_are_refused():
    model, _ = _model(np.random.default_rng(0), **CASES["forward"])  # type: ignore[arg-type]
    node = model.graph.node[0]
    node.input[4] = "lens"
    model.graph.initializer.append(numpy_helper.from_array(np.array([5], np.int32), "lens"))
    with pytest.raises(OnnxImportError, match="sequence_lens is not supported"):
        load_onnx(model)
    other, _ = _model(np.random.default_rng(0), **CASES["forward"])  # type: ignore[arg-type]
    other.graph.node[0].op_type = "DynamicQuantizeGRU"
    with pytest.raises(OnnxImportError, match="unsupported operators: DynamicQuantizeGRU"):
        load_onnx(other)
