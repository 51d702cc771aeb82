"""ONNX Loops with a compile-time trip count on the device (``tile.loop_launches``),
against onnxruntime through both executors; a loop whose condition is data stays on the
host with its reason."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp

import tilegraph
from tilegraph.cost_model.cycles.simulate import simulate_module
from tilegraph.dialects.tile import LoopLaunchesOp

T, B, D, H = 5, 3, 20, 24  # ragged on the test preset: nothing a multiple of 16


def opset15_model(graph: onnx.GraphProto) -> onnx.ModelProto:
    """``graph`` as a checked opset-15 model (IR version 8, what onnxruntime takes)."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _rnn_loop_model(counted: bool, data_cond: bool = False) -> onnx.ModelProto:
    """``h' = tanh(x[t] W + h R + b)`` over ``T`` steps, ``h`` carried, every ``h'`` a scan
    output. ``counted``: tf2onnx's form (no M; a carried int32 time ``t`` and the condition
    ``Less(t + 1, n)`` with ``n`` carried unchanged); else M = T and a constant-true
    condition. ``data_cond``: the condition is ``ReduceSum(h') < 1e9`` (data)."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((D, H)).astype(np.float32) * 0.3, "W")
    r = numpy_helper.from_array(rng.standard_normal((H, H)).astype(np.float32) * 0.3, "R")
    bias = numpy_helper.from_array(rng.standard_normal(H).astype(np.float32), "bias")
    f32 = TensorProto.FLOAT
    nodes = [
        helper.make_node("Gather", ["xs", "t_index"], ["x_t"], axis=0),
        helper.make_node("MatMul", ["x_t", "W"], ["xw"]),
        helper.make_node("MatMul", ["h_in", "R"], ["hr"]),
        helper.make_node("Add", ["xw", "hr"], ["s"]),
        helper.make_node("Add", ["s", "bias"], ["a"]),
        helper.make_node("Tanh", ["a"], ["h_out"]),
        helper.make_node("Identity", ["h_out"], ["y_t"]),
    ]
    inputs = [
        helper.make_tensor_value_info("i", TensorProto.INT64, []),
        helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
        helper.make_tensor_value_info("h_in", f32, [B, H]),
    ]
    outputs = [
        helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
        helper.make_tensor_value_info("h_out", f32, [B, H]),
    ]
    if counted:
        inputs += [
            helper.make_tensor_value_info("t_in", TensorProto.INT32, []),
            helper.make_tensor_value_info("n_in", TensorProto.INT32, []),
        ]
        nodes = [
            helper.make_node("Identity", ["t_in"], ["t_index"]),
            helper.make_node("Constant", [], ["one"], value=helper.make_tensor("", 6, [], [1])),
            helper.make_node("Add", ["t_in", "one"], ["t_out"]),
            helper.make_node("Cast", ["t_out"], ["t_f"], to=f32),
            helper.make_node("Cast", ["n_in"], ["n_f"], to=f32),
            helper.make_node("Less", ["t_f", "n_f"], ["cond_out"]),
            helper.make_node("Identity", ["n_in"], ["n_out"]),
            *nodes,
        ]
        outputs += [
            helper.make_tensor_value_info("t_out", TensorProto.INT32, []),
            helper.make_tensor_value_info("n_out", TensorProto.INT32, []),
        ]
    else:
        nodes = [helper.make_node("Identity", ["i"], ["t_index"]), *nodes]
        if data_cond:
            nodes += [
                helper.make_node("ReduceSum", ["h_out"], ["total"], keepdims=0),
                helper.make_node(
                    "Constant", [], ["big"], value=helper.make_tensor("", 1, [], [1e9])
                ),
                helper.make_node("Less", ["total", "big"], ["cond_out"]),
            ]
        else:
            nodes.append(helper.make_node("Identity", ["cond_in"], ["cond_out"]))
    outputs.append(helper.make_tensor_value_info("y_t", f32, [B, H]))
    body = helper.make_graph(nodes, "body", inputs, outputs, initializer=[w, r, bias])
    init = [
        numpy_helper.from_array(np.array(T, np.int64), "M"),
        numpy_helper.from_array(np.array(True), "cond0"),
        numpy_helper.from_array(np.array(0, np.int32), "t0"),
        numpy_helper.from_array(np.array(T, np.int32), "n"),
    ]
    carried = ["h0", "t0", "n"] if counted else ["h0"]
    results = ["h_final", "t_final", "n_final", "ys"] if counted else ["h_final", "ys"]
    loop = helper.make_node("Loop", ["" if counted else "M", "cond0", *carried], results, body=body)
    graph = helper.make_graph(
        [loop],
        "loop",
        [
            helper.make_tensor_value_info("xs", f32, [T, B, D]),
            helper.make_tensor_value_info("h0", f32, [B, H]),
        ],
        [
            helper.make_tensor_value_info("h_final", f32, [B, H]),
            helper.make_tensor_value_info("ys", f32, [T, B, H]),
        ],
        initializer=init,
    )
    return opset15_model(graph)


def _inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    return {
        "xs": rng.standard_normal((T, B, D)).astype(np.float32),
        "h0": rng.standard_normal((B, H)).astype(np.float32),
    }


def _expected(model: onnx.ModelProto) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [np.asarray(o) for o in session.run(None, _inputs())]


def _module(compiled: tilegraph.CompiledModel) -> ModuleOp:
    """The tiles of the latest call (the model is compiled per call's shapes)."""
    assert compiled.session is not None and compiled.session.latest_tiled is not None
    return compiled.session.latest_tiled.module


@pytest.mark.parametrize("executor", ["fast", "interpret"])
@pytest.mark.parametrize("counted", [False, True], ids=["trip_count", "tf2onnx_counter"])
def test_loop_runs_on_the_device(counted: bool, executor: str):
    model = _rnn_loop_model(counted)
    compiled = tilegraph.compile(model, platform="test", executor=executor)
    got = compiled(**_inputs())  # the scan output's length is bound at the first call
    assert compiled.host_ops == []
    loops = [op for op in _module(compiled).walk() if isinstance(op, LoopLaunchesOp)]
    assert len(loops) == 1 and loops[0].trip_count == T
    for g, want in zip(got, _expected(model), strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-5)


def test_tf2onnx_time_read_as_the_iteration_number():
    """tf2onnx's ``time`` (from 0, read by Gather alone, its final value unread) is the
    iteration number in the body: no state and no ``t + 1`` kernel per iteration."""
    model = _rnn_loop_model(True)
    compiled = tilegraph.compile(model, platform="test")
    got = compiled(**_inputs())
    (loop,) = [op for op in _module(compiled).walk() if isinstance(op, LoopLaunchesOp)]
    assert len(loop.states) == 1 and len(loop.counter) == 1  # h, and the iteration
    assert not any("graph.add" in k.ops and len(k.ops) == 1 for k in compiled.kernels)
    for g, want in zip(got, _expected(model), strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-5)


def test_loop_cost_is_trip_times_its_body():
    model = _rnn_loop_model(False)
    compiled = tilegraph.compile(model, platform="test")
    compiled(**_inputs())
    cycles = simulate_module(_module(compiled))
    kernels = [k for k in cycles.kernels if k.unit not in ("control",)]
    # x[t] W of every step is one matmul before the loop (hoist-loop-projection)
    (hoisted,) = [k for k in kernels if k.launches == 1]
    assert "graph.matmul" in hoisted.ops
    body = [k for k in kernels if k is not hoisted]
    assert body and all(k.launches == T for k in body)
    (control,) = [k for k in cycles.kernels if k.unit == "control"]
    assert control.launches == T and control.launch_us > 0
    assert cycles.launches == sum(k.launches for k in kernels)  # the control entry is no launch
    # per iteration: the switch, the jump back and one copy (h's next value) + one (its slice)
    assert f"+ {T * (2 + 1 + 1)} device-loop control and copy tasks" in cycles.scheduling_text()


def test_a_data_dependent_condition_stays_on_the_host():
    model = _rnn_loop_model(False, data_cond=True)
    compiled = tilegraph.compile(model, platform="test")
    got = compiled(**_inputs())
    hosts = compiled.host_ops
    assert "graph.loop" in [h["op"] for h in hosts]
    assert all("condition is computed from data" in h["reason"] for h in hosts)
    for g, want in zip(got, _expected(model), strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-5)


def _counter_state_model() -> onnx.ModelProto:
    """``h' = 0.5 h + i`` and the scan output ``y_i = h' · i`` over ``T`` steps (``M`` =
    T): every iteration's result depends on its number and on the state the one before
    left, so a skipped launch, a stale counter or a stale state buffer changes it."""
    f32 = TensorProto.FLOAT
    nodes = [
        helper.make_node("Cast", ["i"], ["i_f"], to=f32),
        helper.make_node("Constant", [], ["half"], value=helper.make_tensor("", f32, [], [0.5])),
        helper.make_node("Mul", ["h_in", "half"], ["decayed"]),
        helper.make_node("Add", ["decayed", "i_f"], ["h_out"]),
        helper.make_node("Mul", ["h_out", "i_f"], ["y_t"]),
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
    ]
    body = helper.make_graph(
        nodes,
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("h_in", f32, [B, H]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("h_out", f32, [B, H]),
            helper.make_tensor_value_info("y_t", f32, [B, H]),
        ],
    )
    init = [
        numpy_helper.from_array(np.array(T, np.int64), "M"),
        numpy_helper.from_array(np.array(True), "cond0"),
    ]
    loop = helper.make_node("Loop", ["M", "cond0", "h0"], ["h_final", "ys"], body=body)
    graph = helper.make_graph(
        [loop],
        "counter_state",
        [helper.make_tensor_value_info("h0", f32, [B, H])],
        [
            helper.make_tensor_value_info("h_final", f32, [B, H]),
            helper.make_tensor_value_info("ys", f32, [T, B, H]),
        ],
        initializer=init,
    )
    return opset15_model(graph)


@pytest.mark.parametrize("executor", ["fast", "interpret"])
def test_every_iteration_sees_its_number_and_the_last_state(executor: str):
    """Each scan slot and the final state against the recurrence computed here, step by
    step, and against onnxruntime; twice, so a second call's loop starts from ``h0``
    again (no state left over from the first)."""
    model = _counter_state_model()
    compiled = tilegraph.compile(model, platform="test", executor=executor)
    h0 = np.random.default_rng(5).standard_normal((B, H)).astype(np.float32)
    h, want_ys = h0.copy(), []
    for i in range(T):
        h = np.float32(0.5) * h + np.float32(i)
        want_ys.append(h * np.float32(i))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    ort_h, ort_ys = (np.asarray(o) for o in session.run(None, {"h0": h0}))
    for _ in range(2):
        got_h, got_ys = compiled(h0=h0)
        assert compiled.host_ops == []
        np.testing.assert_allclose(got_h, h, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(got_ys, np.stack(want_ys), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(got_ys, ort_ys, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(got_h, ort_h, rtol=1e-6, atol=1e-6)
    (loop,) = [op for op in _module(compiled).walk() if isinstance(op, LoopLaunchesOp)]
    assert loop.trip_count == T and len(loop.counter) == 1
