"""Binding a model to its inputs before compiling (``tilegraph.runtime.binding``).

The shapes real exports produce: an If on ``Shape(x)[1] == 1`` whose branches return
different ranks (PyTorch's ``squeeze(dim)``), an If on a scalar input (Silero VAD's sample
rate), a shape computed through a long chain of ops. Each imports once bound, runs on the
tiles through a Session and ``tilegraph-run`` and matches onnxruntime; the Session's log
says why it compiled. A data-dependent size (NonZero's count) is bound when it is produced,
and a call whose data give another size compiles the tiles again.
"""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnx.helper as oh
import onnxruntime as ort
import pytest
from onnx import TensorProto, numpy_helper

import tilegraph
from tilegraph.dialects.layout_type import TensorType
from tilegraph.frontend import OnnxImportError, load_onnx
from tilegraph.frontend.onnx_errors import ValueDependentError
from tilegraph.runtime.binding import MAX_BOUND_ELEMENTS, import_bound, unknown_dims
from tilegraph.runtime.compiled import NotTiledYet
from tilegraph.runtime.interpreter import ShapeChanged
from tilegraph.runtime.session import Session
from tilegraph.tools.run.cli import run

rng = np.random.default_rng(3)
F = TensorProto.FLOAT


def _model(nodes, inputs, inits=None, outputs=("y",)) -> onnx.ModelProto:
    graph = oh.make_graph(
        nodes,
        "g",
        [oh.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [oh.make_tensor_value_info(o, F, None) for o in outputs],
        [numpy_helper.from_array(a, n) for n, a in (inits or {}).items()],
    )
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])


def _branch(name: str, nodes, output: str) -> onnx.GraphProto:
    return oh.make_graph(nodes, name, [], [oh.make_tensor_value_info(output, F, None)])


def squeeze_if_model() -> onnx.ModelProto:
    """x[N, C, 8] -> Relu; If Shape(x)[1] == 1: Squeeze axis 1 (rank 2) else Identity
    (rank 3); then * 2. PyTorch exports ``x.squeeze(1)`` of a dynamic dim this way."""
    then_g = _branch("then", [oh.make_node("Squeeze", ["r", "one"], ["sq"])], "sq")
    else_g = _branch("else", [oh.make_node("Identity", ["r"], ["id"])], "id")
    nodes = [
        oh.make_node("Relu", ["x"], ["r"]),
        oh.make_node("Shape", ["r"], ["shape"]),
        oh.make_node("Gather", ["shape", "one_scalar"], ["c"], axis=0),
        oh.make_node("Equal", ["c", "one_scalar"], ["is_one"]),
        oh.make_node(
            "If", ["is_one"], ["picked"], name="If", then_branch=then_g, else_branch=else_g
        ),
        oh.make_node("Mul", ["picked", "two"], ["y"]),
    ]
    inits = {
        "one": np.array([1], np.int64),
        "one_scalar": np.array(1, np.int64),
        "two": np.array(2.0, np.float32),
    }
    return _model(nodes, [("x", F, ["N", "C", 8])], inits)


def sample_rate_model() -> onnx.ModelProto:
    """x[N, T], sr (int64 scalar): If sr == 16000: ReduceMean over T keeping dims
    (rank 2) else ReduceMean not keeping them (rank 1); Silero VAD branches on ``sr``."""
    then_g = _branch("then", [oh.make_node("ReduceMean", ["x"], ["a"], axes=[1])], "a")
    else_g = _branch("else", [oh.make_node("ReduceMean", ["x"], ["b"], axes=[1], keepdims=0)], "b")
    nodes = [
        oh.make_node("Equal", ["sr", "rate"], ["is_16k"]),
        oh.make_node("If", ["is_16k"], ["y"], name="If", then_branch=then_g, else_branch=else_g),
    ]
    inits = {"rate": np.array(16000, np.int64)}
    return _model(nodes, [("x", F, ["N", "T"]), ("sr", TensorProto.INT64, [])], inits)


def deep_shape_model() -> onnx.ModelProto:
    """x[N, 6, 4] -> Reshape to [N, 24] with the target computed through 12 ops
    (Shape, Gather, Unsqueeze, Mul, Cast, Add, Sub, Concat, ...)."""
    nodes = [
        oh.make_node("Shape", ["x"], ["s"]),
        oh.make_node("Gather", ["s", "i0"], ["n"], axis=0),
        oh.make_node("Gather", ["s", "i1"], ["c"], axis=0),
        oh.make_node("Gather", ["s", "i2"], ["w"], axis=0),
        oh.make_node("Mul", ["c", "w"], ["cw"]),
        oh.make_node("Cast", ["cw"], ["cw32"], to=TensorProto.INT32),
        oh.make_node("Cast", ["cw32"], ["cw64"], to=TensorProto.INT64),
        oh.make_node("Add", ["cw64", "i1"], ["cw1"]),
        oh.make_node("Sub", ["cw1", "i1"], ["cw2"]),
        oh.make_node("Add", ["cw2", "i0"], ["cw3"]),
        oh.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
        oh.make_node("Unsqueeze", ["cw3", "axes"], ["k1"]),
        oh.make_node("Concat", ["n1", "k1"], ["target"], axis=0),
        oh.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    inits = {
        "i0": np.array(0, np.int64),
        "i1": np.array(1, np.int64),
        "i2": np.array(2, np.int64),
        "axes": np.array([0], np.int64),
    }
    return _model(nodes, [("x", F, ["N", 6, 4])], inits)


def _onnxruntime(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, inputs)


def test_an_if_on_a_shape_names_the_input_and_imports_once_shapes_are_bound():
    model = squeeze_if_model()
    with pytest.raises(ValueDependentError) as caught:
        load_onnx(model)
    assert caught.value.shape_inputs == ["x"] and caught.value.value_inputs == []
    assert "ranks 2 and 3 differ" in str(caught.value) and "shapes of input(s) x" in str(
        caught.value
    )
    x = rng.standard_normal((2, 1, 8)).astype(np.float32)
    bound = import_bound(model, {"x": x})
    assert bound.static and not bound.value_guards
    assert bound.reasons == ["input shapes bound: node 'If' branches on the shape of 'x'"]
    assert not any(op.name == "graph.if" for op in bound.module.walk())  # inlined
    assert unknown_dims(bound.module) == []


def test_session_on_tiles_compiles_an_if_on_a_shape_per_shape_and_matches():
    model = squeeze_if_model()
    log: list[str] = []
    session = Session(model, target="tiles", log=log.append)
    for shape in [(2, 1, 8), (3, 5, 8), (2, 1, 8)]:
        x = rng.standard_normal(shape).astype(np.float32)
        (ours,) = session(x=x)
        (theirs,) = _onnxruntime(model, {"x": x})
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert session.stats.compiles == 2 and session.stats.hits == 1
    assert "branches on the shape of 'x'" in log[0]


def test_an_if_on_a_scalar_input_is_specialised_with_a_value_guard():
    model = sample_rate_model()
    with pytest.raises(ValueDependentError) as caught:
        load_onnx(model)
    assert caught.value.value_inputs == ["sr"]
    log: list[str] = []
    session = Session(model, target="tiles", log=log.append)
    calls = [16000, 8000, 16000, 8000]
    for rate in calls:
        x = rng.standard_normal((2, 10)).astype(np.float32)
        inputs = {"x": x, "sr": np.array(rate, np.int64)}
        (ours,) = session(**inputs)
        (theirs,) = _onnxruntime(model, inputs)
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    assert session.stats.compiles == 2 and session.stats.hits == 2
    assert "input 'sr' specialised to 16000" in log[0]
    assert "expect guard sr == 16000 failed with sr = 8000" in log[1]
    assert [str(g) for g in session.artifacts[1].value_guards] == [
        "expect sr == 8000 (node 'If' depends on its value)"
    ]


def alike_branches_model() -> onnx.ModelProto:
    """x[N, T], sr: If sr == 16000: x * 2 else x * 3 — both branches typed alike (Silero
    VAD's at batch 2), so the import needs no binding; the tiles still do."""
    then_g = _branch("then", [oh.make_node("Mul", ["x", "two"], ["a"])], "a")
    else_g = _branch("else", [oh.make_node("Mul", ["x", "three"], ["b"])], "b")
    nodes = [
        oh.make_node("Equal", ["sr", "rate"], ["is_16k"]),
        oh.make_node("If", ["is_16k"], ["y"], name="If", then_branch=then_g, else_branch=else_g),
    ]
    inits = {
        "rate": np.array(16000, np.int64),
        "two": np.array(2.0, np.float32),
        "three": np.array(3.0, np.float32),
    }
    return _model(nodes, [("x", F, ["N", "T"]), ("sr", TensorProto.INT64, [])], inits)


def test_an_if_on_a_value_with_alike_branches_is_specialised_for_the_tiles():
    model = alike_branches_model()
    load_onnx(model)  # types without any binding
    log: list[str] = []
    session = Session(model, target="tiles", log=log.append)
    for rate in (8000, 16000):
        x = rng.standard_normal((2, 10)).astype(np.float32)
        inputs = {"x": x, "sr": np.array(rate, np.int64)}
        (ours,) = session(**inputs)
        (theirs,) = _onnxruntime(model, inputs)
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert session.stats.compiles == 2
    assert "input 'sr' specialised to 8000" in log[0]
    for artifact in session.artifacts:
        assert not any(op.name == "graph.if" for op in artifact.module.walk())


def test_a_branch_on_a_large_input_value_is_a_clear_error():
    model = sample_rate_model()
    model.graph.input[1].CopyFrom(oh.make_tensor_value_info("sr", TensorProto.INT64, [100]))
    model.graph.node[0].output[0] = "eq"
    model.graph.node.insert(
        1, oh.make_node("ReduceMin", ["eq_i"], ["is_16k"], keepdims=0)
    )  # a condition computed from all 100 values
    model.graph.node.insert(1, oh.make_node("Cast", ["eq"], ["eq_i"], to=TensorProto.BOOL))
    inputs = {
        "x": np.zeros((1, 4), np.float32),
        "sr": np.full(MAX_BOUND_ELEMENTS + 36, 16000, np.int64),
    }
    with pytest.raises(OnnxImportError, match="more than 64 elements"):
        import_bound(model, inputs)


def test_a_shape_computed_through_a_long_chain_folds_once_bound():
    model = deep_shape_model()
    x = rng.standard_normal((3, 6, 4)).astype(np.float32)
    bound = import_bound(model, {"x": x}, static=True)
    (y,) = [op for op in bound.module.walk() if op.name == "graph.reshape"][0].results
    assert isinstance(y.type, TensorType) and list(y.type.origin_shape) == [3, 24]


def test_tilegraph_run_binds_a_sample_rate_given_as_input(tmp_path):
    model = sample_rate_model()
    path = tmp_path / "vad.onnx"
    onnx.save(model, path)
    x = rng.standard_normal((2, 10)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "sr.npy", np.array(8000, np.int64))
    report = tmp_path / "r.json"
    argv = [str(path), "--input", f"x={tmp_path / 'x.npy'}", "--input"]
    argv += [f"sr={tmp_path / 'sr.npy'}", "--compare", "--json", str(report)]
    assert run(argv) == 0
    data = json.loads(report.read_text())
    assert data["compare_ok"] and data["target"] == "tiles"
    assert "expect sr == 8000 (node 'If' depends on its value)" in data["guards"]
    assert data["bindings"] == ["input 'sr' specialised to 8000: node 'If' depends on its value"]


def test_tilegraph_run_asks_for_the_inputs_that_decide_a_branch(tmp_path, capsys):
    path = tmp_path / "vad.onnx"
    onnx.save(sample_rate_model(), path)
    assert run([str(path)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err
    assert "value(s) of input(s) sr" in err and "missing: x, sr" in err


def squeeze_all_model() -> onnx.ModelProto:
    """x[N, 1, 2] -> Relu -> Squeeze without axes -> * 2: PyTorch's ``x.squeeze()`` of a
    dynamic batch exports this way (speechmos' AECMOS and PLCMOS models), and ``N = 1`` is
    squeezed too (rank 1), any other N not (rank 2)."""
    nodes = [
        oh.make_node("Relu", ["x"], ["r"]),
        oh.make_node("Squeeze", ["r"], ["sq"], name="Squeeze"),
        oh.make_node("Mul", ["sq", "two"], ["y"]),
    ]
    return _model(nodes, [("x", F, ["N", 1, 2])], {"two": np.array(2.0, np.float32)})


def test_a_squeeze_without_axes_of_a_symbolic_dim_names_the_input_and_binds_its_shape():
    model = squeeze_all_model()
    with pytest.raises(ValueDependentError) as caught:
        load_onnx(model)
    assert caught.value.shape_inputs == ["x"] and caught.value.value_inputs == []
    assert "node 'Squeeze'" in str(caught.value) and "[N, 1, 2]" in str(caught.value)
    log: list[str] = []
    session = Session(model, target="tiles", log=log.append)
    for n in (1, 3, 1):
        x = rng.standard_normal((n, 1, 2)).astype(np.float32)
        (ours,) = session(x=x)
        (theirs,) = _onnxruntime(model, {"x": x})
        assert ours.shape == theirs.shape == ((2,) if n == 1 else (n, 2))
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert session.stats.compiles == 2 and session.stats.hits == 1
    assert any("node 'Squeeze' has a rank set by the shape of 'x'" in line for line in log), log


def test_tilegraph_run_sizes_a_squeeze_without_axes_from_dim(tmp_path):
    path = tmp_path / "squeeze.onnx"
    onnx.save(squeeze_all_model(), path)
    for n, shape in ((1, [2]), (4, [4, 2])):
        report = tmp_path / f"r{n}.json"
        assert run([str(path), "--dim", f"N={n}", "--compare", "--json", str(report)]) == 0
        data = json.loads(report.read_text())
        assert data["compare_ok"] and data["target"] == "tiles"
        assert data["inputs"]["x"]["shape"] == [n, 1, 2]
        assert data["outputs"]["y"]["shape"] == shape


def nonzero_model() -> onnx.ModelProto:
    """x[4, 6] -> NonZero(x > 0) [2, k] -> Transpose -> Cast -> MatMul w[2, 16] -> Relu:
    k, the count of positive entries, is known only once NonZero has run."""
    nodes = [
        oh.make_node("Greater", ["x", "zero"], ["pos"]),
        oh.make_node("NonZero", ["pos"], ["nz"], name="NonZero"),
        oh.make_node("Transpose", ["nz"], ["t"], perm=[1, 0]),
        oh.make_node("Cast", ["t"], ["tf"], to=F),
        oh.make_node("MatMul", ["tf", "w"], ["m"]),
        oh.make_node("Relu", ["m"], ["y"]),
    ]
    inits = {
        "zero": np.array(0, np.float32),
        "w": rng.standard_normal((2, 16)).astype(np.float32),
    }
    return _model(nodes, [("x", F, [4, 6])], inits)


def _positives(count: int) -> np.ndarray:
    x = -np.ones(24, np.float32)
    x[rng.choice(24, count, replace=False)] = rng.uniform(0.5, 2, count)
    return x.reshape(4, 6)


def test_a_data_dependent_size_is_bound_when_produced_and_recompiled_when_it_changes():
    model = nonzero_model()
    log: list[str] = []
    session = Session(model, target="tiles", log=log.append)
    for count in (11, 14, 11, 14, 5):
        x = _positives(count)
        (ours,) = session(x=x)
        (theirs,) = _onnxruntime(model, {"x": x})
        assert ours.shape == (count, 16)
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert session.stats.compiles == 1 and session.stats.tilings == 3
    tilings = [line for line in log if line.startswith("tiling")]
    assert tilings[0].endswith(
        "data-dependent sizes; %nz of node 'NonZero' (graph.non_zero) observed as [2, 11]"
    )
    assert (
        "%nz of node 'NonZero' (graph.non_zero) has shape [2, 14] at run time; the module was compiled for "
        "[2, 11] (a size that depends on the input data): recompile; %nz of node 'NonZero' (graph.non_zero) "
        "observed as [2, 14]"
    ) in tilings[1]
    assert len(tilings) == 3  # 11 and 14 come back without a new tiling
    assert session.latest_tiled is not None
    units = {k.unit for k in session.latest_tiled.kernels}
    assert {"cube", "host"} <= units  # NonZero on the host, the MatMul on the cube


def test_a_static_op_whose_kernel_returns_another_shape_is_an_error():
    model = nonzero_model()
    x = _positives(7)
    compiled = tilegraph.compile(model)  # bound on call: a Session inside
    compiled(x=x)
    assert compiled.session is not None
    tiled = compiled.session.latest_tiled
    assert tiled is not None
    with pytest.raises(ShapeChanged, match=r"compiled for \[2, 7\]"):
        tiled(x=_positives(9))  # the tiled module alone cannot rebind


def test_tilegraph_run_reports_the_data_dependent_size_it_bound(tmp_path):
    path = tmp_path / "nz.onnx"
    onnx.save(nonzero_model(), path)
    x = _positives(9)
    np.save(tmp_path / "x.npy", x)
    report = tmp_path / "r.json"
    argv = [str(path), "--input", f"x={tmp_path / 'x.npy'}", "--compare", "--json", str(report)]
    assert run(argv) == 0
    data = json.loads(report.read_text())
    assert data["compare_ok"] and data["target"] == "tiles"
    assert data["bindings"] == [
        "data-dependent size: %nz of node 'NonZero' (graph.non_zero) observed as [2, 9]"
    ]
    assert [h["op"] for h in data["host_ops"]] == ["graph.non_zero"]


def test_session_tiles_each_shape_once_whichever_artifact_admits_it():
    """Batch 1 compiles an artifact specialised to 1, batch 4 one with a symbol that also
    admits 1: the third call (batch 1 again) reuses the first tiling."""
    model = _model(
        [oh.make_node("Relu", ["x"], ["r"]), oh.make_node("MatMul", ["r", "w"], ["y"])],
        [("x", F, ["N", 8])],
        {"w": rng.standard_normal((8, 4)).astype(np.float32)},
    )
    session = Session(model, target="tiles")
    for batch in (1, 4, 1):
        x = rng.standard_normal((batch, 8)).astype(np.float32)
        (ours,) = session(x=x)
        np.testing.assert_allclose(ours, _onnxruntime(model, {"x": x})[0], rtol=1e-5)
    assert session.stats.compiles == 2 and session.stats.tilings == 2


@pytest.mark.parametrize("executor", ["fast", "interpret"])
def test_a_scalar_input_stays_a_scalar_on_the_tiles(executor):
    """Silero VAD multiplies its scalar ``sr``: the GM buffer of a rank-0 input keeps rank 0
    (np.ascontiguousarray made it 1-D, and the copy into UB failed)."""
    graph = oh.make_graph(
        [oh.make_node("Mul", ["sr", "c"], ["y"])],
        "g",
        [oh.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [oh.make_tensor_value_info("y", TensorProto.INT64, None)],
        [numpy_helper.from_array(np.array(3, np.int64), "c")],
    )
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])
    (y,) = tilegraph.compile(model, executor=executor)(sr=np.array(16000, np.int64))
    assert y.shape == () and int(y) == 48000


def test_host_ops_of_a_model_compiled_per_shape_are_asked_after_its_first_call(tmp_path):
    """Before the first call nothing is tiled: ``host_ops`` says so instead of an empty
    list that would read as "no host ops"; after it, the latest call's tiles answer."""
    path = tmp_path / "dyn.onnx"
    graph = oh.make_graph(
        [oh.make_node("Relu", ["x"], ["y"])],
        "g",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])],
    )
    onnx.save(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)]), str(path))
    compiled = tilegraph.compile(str(path))
    assert compiled.session is not None
    with pytest.raises(NotTiledYet, match="after its first call"):
        compiled.host_ops  # noqa: B018 - the property is what is tested
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(3, 8)
    np.testing.assert_array_equal(compiled(x=x)[0], np.maximum(x, 0))
    assert compiled.host_ops == []
    assert compiled.kernels


def test_a_data_dependent_size_read_inside_a_loop_body_is_bound_there_too(tmp_path):
    """A Loop's body reads NonZero's [2, k] result (a capture; tf2onnx's LSTM loops read
    their sequences so): once k is observed, the body's capture argument takes the same
    type (piper's nakdimon model failed with an internal verifier error here)."""
    body = oh.make_graph(
        [
            oh.make_node("Identity", ["cond_in"], ["cond_out"]),
            oh.make_node("Cast", ["nz"], ["nzf"], to=F),
            oh.make_node("ReduceSum", ["nzf"], ["s"], keepdims=0),
            oh.make_node("Add", ["acc_in", "s"], ["acc_out"]),
        ],
        "body",
        [
            oh.make_tensor_value_info("i", TensorProto.INT64, []),
            oh.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            oh.make_tensor_value_info("acc_in", F, []),
        ],
        [
            oh.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            oh.make_tensor_value_info("acc_out", F, []),
        ],
    )
    nodes = [
        oh.make_node("Greater", ["x", "zero"], ["pos"]),
        oh.make_node("NonZero", ["pos"], ["nz"], name="NonZero"),
        oh.make_node("Loop", ["trips", "", "start"], ["y"], body=body),
    ]
    inits = {
        "zero": np.array(0, np.float32),
        "trips": np.array(3, np.int64),
        "start": np.array(0, np.float32),
    }
    model = _model(nodes, [("x", F, [4, 6])], inits)
    path = tmp_path / "loop.onnx"
    onnx.save(model, path)
    x = _positives(9)
    np.save(tmp_path / "x.npy", x)
    assert run([str(path), "--input", f"x={tmp_path / 'x.npy'}", "--compare"]) == 0
