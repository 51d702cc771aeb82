"""``expand-recurrent-lengths`` at the graph level: RNN / GRU / LSTM with ``sequence_lens``
(every direction, initial states given and absent, lengths of the full sequence, 1 and 0,
NaN in the padding steps) against onnxruntime, and the rewrite bit for bit against the
layer it replaces (it is exact, not approximately so)."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.helper as oh
import pytest
from onnx import TensorProto, numpy_helper

from tilegraph.dialects.graph.recurrent import RecurrentOp
from tilegraph.frontend import load_onnx
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.statistics import collecting_statistics
from tilegraph.runtime import run_reference

SEQ, BATCH, INPUT, HIDDEN = 5, 4, 3, 6
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
LENGTHS = np.array([5, 1, 0, 3], np.int32)  # the full sequence, 1, 0 and ragged


def recurrent_model(
    kind: str,
    direction: str,
    initial: bool = True,
    y_c: bool = False,
    seq: int = SEQ,
    batch: int = BATCH,
    hidden: int = HIDDEN,
    symbolic: bool = False,
    used: tuple[str, ...] = ("Y", "Y_h"),
    **attrs,
) -> onnx.ModelProto:
    """One ``kind`` layer with weights as initializers; X, the lengths and the initial
    states are inputs (so nothing folds them). Outputs Y and Y_h (and Y_c when asked)."""
    rng = np.random.default_rng(1)
    dirs = 2 if direction == "bidirectional" else 1
    gates = GATES[kind]
    weights = {
        "W": rng.standard_normal((dirs, gates * hidden, INPUT)) * 0.5,
        "R": rng.standard_normal((dirs, gates * hidden, hidden)) * 0.5,
        "B": rng.standard_normal((dirs, 2 * gates * hidden)) * 0.1,
    }
    if kind == "LSTM":
        weights["P"] = rng.standard_normal((dirs, 3 * hidden)) * 0.1
    inits = [numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()]
    steps, entries = ("T", "B") if symbolic else (seq, batch)
    state = [dirs, entries, hidden]
    inputs = [
        oh.make_tensor_value_info("X", TensorProto.FLOAT, [steps, entries, INPUT]),
        oh.make_tensor_value_info("lens", TensorProto.INT32, [entries]),
    ]
    names = ["X", "W", "R", "B", "lens", "h0" if initial else ""]
    if initial:
        inputs.append(oh.make_tensor_value_info("h0", TensorProto.FLOAT, state))
    if kind == "LSTM":
        names += ["c0" if initial else "", "P"]
        if initial:
            inputs.append(oh.make_tensor_value_info("c0", TensorProto.FLOAT, state))
    outs = [n for n in ("Y", "Y_h") if n in used] + (["Y_c"] if y_c else [])
    results = [n if n in outs else "" for n in ("Y", "Y_h")] + (["Y_c"] if y_c else [])
    node = oh.make_node(
        kind, names, results, hidden_size=hidden, direction=direction, **attrs
    )  # fmt: skip
    shapes = {"Y": [steps, dirs, entries, hidden], "Y_h": state, "Y_c": state}
    outputs = [oh.make_tensor_value_info(n, TensorProto.FLOAT, shapes[n]) for n in outs]
    graph = oh.make_graph([node], kind.lower(), inputs, outputs, inits)
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 14)])


def feeds(
    model: onnx.ModelProto, lengths: np.ndarray = LENGTHS, nan: bool = True
) -> dict[str, np.ndarray]:
    """Random inputs (symbols ``T`` = SEQ, ``B`` = BATCH); NaN in X's steps past each
    entry's length (never read)."""
    rng = np.random.default_rng(2)
    sizes = {"T": SEQ, "B": BATCH}
    out: dict[str, np.ndarray] = {}
    for value in model.graph.input:
        shape = [d.dim_value or sizes[d.dim_param] for d in value.type.tensor_type.shape.dim]
        out[value.name] = rng.standard_normal(shape).astype(np.float32)
    out["lens"] = lengths.astype(np.int32)
    if nan:
        for b, n in enumerate(lengths):
            out["X"][n:, b] = np.nan
    return out


def onnxruntime_outputs(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [np.asarray(out) for out in session.run(None, inputs)]


def rewritten(model: onnx.ModelProto):
    module = load_onnx(model)
    with collecting_statistics() as stats:
        run_pipeline("expand-recurrent-lengths", make_context(), module)
    return module, stats.for_pass("expand-recurrent-lengths")


KINDS = ["RNN", "GRU", "LSTM"]
DIRECTIONS = ["forward", "reverse", "bidirectional"]


@pytest.mark.parametrize("initial", [True, False], ids=["initial", "no_initial"])
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_rewrite_matches_onnxruntime_and_is_exact(kind: str, direction: str, initial: bool):
    model = recurrent_model(kind, direction, initial)
    inputs = feeds(model)
    original = run_reference(load_onnx(model), inputs)
    module, stats = rewritten(model)
    assert not any(isinstance(op, RecurrentOp) and op.sequence_lens for op in module.walk())
    assert stats["expanded-recurrent-lengths"] == 1
    got = run_reference(module, inputs)
    for want, have, exact in zip(onnxruntime_outputs(model, inputs), got, original, strict=True):
        assert not np.isnan(have).any()
        np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(have, exact)  # the same arithmetic, bit for bit


@pytest.mark.parametrize(
    ("kind", "attrs"),
    [
        ("GRU", {"linear_before_reset": 1, "clip": 0.8}),
        (
            "LSTM",
            {
                "activations": ["HardSigmoid", "Tanh", "Affine"] * 2,
                "activation_alpha": [0.3, 0.5, 0.25, 0.6],
                "activation_beta": [0.4, 0.1, 0.45, -0.2],
            },
        ),  # fmt: skip
        ("RNN", {"activations": ["Tanh", "Relu"]}),
    ],
)
def test_bidirectional_attributes_split_per_direction(kind: str, attrs: dict):
    """Each direction's half of the activations, alphas and betas (consumed in order by
    the activations that take one), the clip and the GRU's linear_before_reset."""
    model = recurrent_model(kind, "bidirectional", **attrs)
    inputs = feeds(model)
    module, _ = rewritten(model)
    got = run_reference(module, inputs)
    for want, have in zip(onnxruntime_outputs(model, inputs), got, strict=True):
        np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("used", [("Y", "Y_h"), ()], ids=["all", "y_c_alone"])
@pytest.mark.parametrize("initial", [True, False], ids=["initial", "no_initial"])
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_an_lstm_whose_cell_state_is_used(direction: str, initial: bool, used: tuple[str, ...]):
    """Y_c cannot be read from Y: each direction's layer is a graph.lstm_cells, whose cell
    state after each step gives Y_c at step len[b] - 1 (zeros for the entry of length 0;
    NaN in the padding never reaches it) — onnxruntime's result, and bit for bit the
    layer's with its sequence_lens."""
    model = recurrent_model("LSTM", direction, initial, y_c=True, used=used)
    inputs = feeds(model)
    original = run_reference(load_onnx(model), inputs)
    module, stats = rewritten(model)
    assert stats["expanded-recurrent-lengths"] == 1
    layers = [op for op in module.walk() if isinstance(op, RecurrentOp)]
    assert [op.name for op in layers] == ["graph.lstm_cells"] * (1 + (direction == "bidirectional"))
    assert all(op.sequence_lens is None for op in layers)
    got = run_reference(module, inputs)
    assert len(got) == len(used) + 1
    for want, have, exact in zip(onnxruntime_outputs(model, inputs), got, original, strict=True):
        assert not np.isnan(have).any()
        np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(have, exact)
    assert not got[-1][:, 2].any()  # the entry of length 0: a zero final cell state


@pytest.mark.parametrize("kind", KINDS)
def test_symbolic_steps_and_batch(kind: str):
    """T and B symbols (a model whose batch comes from data): the step numbers are
    Range(0, Shape(X)[0]), the rest does not depend on the sizes."""
    model = recurrent_model(kind, "bidirectional", symbolic=True)
    inputs = feeds(model)
    module, stats = rewritten(model)
    assert stats["expanded-recurrent-lengths"] == 1
    assert any(op.name == "graph.range" for op in module.walk())
    got = run_reference(module, inputs)
    for want, have in zip(onnxruntime_outputs(model, inputs), got, strict=True):
        np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("used", [("Y",), ("Y_h",)])
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_only_the_results_used_are_made(direction: str, used: tuple[str, ...]):
    model = recurrent_model("GRU", direction, used=used)
    inputs = feeds(model)
    module, stats = rewritten(model)
    assert stats["expanded-recurrent-lengths"] == 1
    reversals = sum(op.name == "graph.reverse_sequence" for op in module.walk())
    dirs = 2 if direction == "bidirectional" else 1
    backward = int(direction != "forward")  # directions that reverse X
    assert reversals == backward + (dirs if used == ("Y_h",) else backward)
    got = run_reference(module, inputs)
    for want, have in zip(onnxruntime_outputs(model, inputs), got, strict=True):
        np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6)
