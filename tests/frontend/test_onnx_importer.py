"""The ONNX importer: structure of the imported IR, and one clear error per bad input."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import sympy
from onnx import TensorProto, helper, numpy_helper

from tilegraph.dialects.entry import entry_function
from tilegraph.dialects.graph import ConstantOp
from tilegraph.dialects.layout import TensorType
from tilegraph.frontend import OnnxImportError, load_onnx
from tilegraph.runtime import run_reference


def make_model(nodes, inputs, outputs, initializers=(), opset=17, ir_version=8):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    return model


def conv_model(opset=17):
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
    return make_model(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["y"], name="relu1"),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [w],
        opset=opset,
    )


def test_structure_names_symbols_and_formats():
    module = load_onnx(conv_model())
    fn = entry_function(module)
    (arg,) = fn.body.block.args
    assert isinstance(arg.type, TensorType)
    assert str(arg.type) == "!layout.tensor<[N, 3, 8, 8], f32, NCHW>"
    ops = [op for op in fn.body.block.ops]
    assert isinstance(ops[0], ConstantOp)
    assert ops[0].results[0].name_hint == "w"
    conv = ops[1]
    assert conv.name == "graph.conv2d"
    assert conv.results[0].type.origin_format.value == "NCHW"
    assert fn.attributes["onnx.input_names"].data[0].data == "x"


def test_anonymous_dim_params_are_distinct_dimensions():
    # Paddle2ONNX writes x[-1, 3, '?', '?']: the two '?' are unrelated, only equal *named*
    # dim_params are the same dimension
    model = make_model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 3, "?", "?"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    module = load_onnx(model)
    (arg,) = entry_function(module).body.block.args
    assert isinstance(arg.type, TensorType)
    _, channels, height, width = arg.type.origin_shape
    assert channels == 3
    assert isinstance(height, sympy.Symbol) and isinstance(width, sympy.Symbol)
    assert height != width
    x = np.random.default_rng(1).standard_normal((2, 3, 48, 192)).astype(np.float32)
    (y,) = run_reference(module, {"x": x})
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_equal_named_dim_params_are_one_dimension():
    model = make_model(
        [helper.make_node("Add", ["a", "b"], ["y"], name="add")],
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n", "?"]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, ["n", ""]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    a_arg, b_arg = entry_function(load_onnx(model)).body.block.args
    assert isinstance(a_arg.type, TensorType) and isinstance(b_arg.type, TensorType)
    assert a_arg.type.origin_shape[0] == b_arg.type.origin_shape[0]
    assert a_arg.type.origin_shape[1] != b_arg.type.origin_shape[1]


def test_fresh_symbols_avoid_dim_params_named_like_them():
    # the anonymous axis of 'a' comes first, but 's0' is a name 'b' uses for its own axis
    model = make_model(
        [helper.make_node("Relu", ["a"], ["y"]), helper.make_node("Relu", ["b"], ["z"])],
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, ["?"]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, ["s0"]),
        ],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, None),
        ],
    )
    a_arg, b_arg = entry_function(load_onnx(model)).body.block.args
    assert isinstance(a_arg.type, TensorType) and isinstance(b_arg.type, TensorType)
    assert a_arg.type.origin_shape[0] != b_arg.type.origin_shape[0]
    assert b_arg.type.origin_shape[0] == sympy.Symbol("s0", integer=True, positive=True)


def test_runs_and_matches_numpy():
    module = load_onnx(conv_model())
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    (y,) = run_reference(module, {"x": x})
    assert y.shape == (2, 4, 8, 8)
    # all-ones 3x3x3 kernel with padding 1 = box sum over channels and a 3x3 window
    padded = np.pad(x.sum(1), ((0, 0), (1, 1), (1, 1)))
    box = sum(padded[:, i : i + 8, j : j + 8] for i in range(3) for j in range(3))
    np.testing.assert_allclose(y[:, 0], np.maximum(box, 0), rtol=1e-5, atol=1e-5)


def test_old_opset_is_converted():
    module = load_onnx(conv_model(opset=9))
    assert any(op.name == "graph.conv2d" for op in module.walk())


def test_initializers_listed_as_inputs_become_constants():
    model = conv_model()
    model.graph.input.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 3, 3, 3]))
    model.ir_version = 3
    fn = entry_function(load_onnx(model))
    assert len(fn.body.block.args) == 1


def test_unknown_ops_are_all_listed_before_anything_runs():
    model = make_model(
        [
            helper.make_node("Relu", ["x"], ["a"], name="ok"),
            helper.make_node("Frobnicate", ["a"], ["b"], name="f1"),
            helper.make_node("Wibble", ["b"], ["y"], name="w1"),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    with pytest.raises(OnnxImportError) as e:
        load_onnx(model)
    assert "unsupported operators: Frobnicate (node 'f1'), Wibble (node 'w1')" in str(e.value)


def test_corrupt_file(tmp_path):
    path = tmp_path / "bad.onnx"
    data = conv_model().SerializeToString()
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(OnnxImportError, match="not a valid ONNX model"):
        load_onnx(str(path))


def test_missing_file(tmp_path):
    with pytest.raises(OnnxImportError, match="no such file"):
        load_onnx(str(tmp_path / "nope.onnx"))


def test_undefined_input_is_named():
    model = make_model(
        [helper.make_node("Add", ["x", "ghost"], ["y"], name="add1")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    with pytest.raises(
        OnnxImportError, match="node 'add1' \\(Add\\): input 'ghost' is not defined"
    ):
        load_onnx(model)


def test_bad_attribute_is_named():
    model = make_model(
        [helper.make_node("Relu", ["x"], ["y"], name="r", bogus=3)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    with pytest.raises(OnnxImportError, match="node 'r' \\(Relu\\): unsupported attribute 'bogus'"):
        load_onnx(model)


def test_inconsistent_shapes_are_reported_with_the_node():
    model = make_model(
        [helper.make_node("Add", ["x", "z"], ["y"], name="add1")],
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, [4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    with pytest.raises(OnnxImportError, match="node 'add1' \\(Add\\): .*do not broadcast"):
        load_onnx(model)


def test_used_extra_output_is_an_error(monkeypatch):
    """Every ONNX optional output has a graph op that produces it today; with only the
    one-result Dropout on offer, a model that uses the mask is refused, naming the output."""
    from tilegraph.dialects.graph.elementwise import DropoutOp
    from tilegraph.frontend import onnx_importer

    table = {**onnx_importer.ops_by_onnx_type(), "Dropout": [DropoutOp]}
    monkeypatch.setattr(onnx_importer, "ops_by_onnx_type", lambda: table)
    model = make_model(
        [
            helper.make_node("Dropout", ["x"], ["y", "mask"], name="d"),
            helper.make_node("Identity", ["mask"], ["m"], name="i"),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("m", TensorProto.BOOL, [2])],
    )
    with pytest.raises(OnnxImportError, match="output #1 \\('mask'\\) is used"):
        load_onnx(model)


def test_constant_node_forms():
    model = make_model(
        [
            helper.make_node("Constant", [], ["c"], value_floats=[1.0, 2.0]),
            helper.make_node("Add", ["x", "c"], ["y"]),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    (y,) = run_reference(load_onnx(model), [np.array([1.0, 1.0], np.float32)])
    assert y.tolist() == [2.0, 3.0]


def test_every_opset_from_1_imports_and_newer_ones_are_refused():
    x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)
    newest = onnx.defs.onnx_opset_version()
    (want,) = run_reference(load_onnx(conv_model(opset=17)), [x])
    for opset in (1, 5):  # converted to opset 18 by onnx's version converter
        (got,) = run_reference(load_onnx(conv_model(opset=opset)), [x])
        np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(OnnxImportError, match=f"opset {newest + 1} is not supported"):
        load_onnx(conv_model(opset=newest + 1))


def test_onnx_bytes_are_accepted():
    module = load_onnx(conv_model().SerializeToString())
    assert isinstance(module, onnx.ModelProto) is False


def test_the_first_op_variant_that_takes_the_node_is_chosen():
    """BatchNormalization in training mode whose running statistics nobody reads: graph.
    batch_norm (one result) refuses training_mode = 1, graph.batch_norm_training takes it,
    and Y matches onnxruntime."""
    import onnxruntime as ort

    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    params = {n: rng.standard_normal(3).astype(np.float32) for n in ("s", "b", "m")}
    params["v"] = rng.random(3).astype(np.float32) + 0.5
    node = helper.make_node(
        "BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"], training_mode=1
    )
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, n) for n, v in params.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
    module = load_onnx(model)
    assert "graph.batch_norm_training" in {op.name for op in module.walk()}
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(
        run_reference(module, {"x": x})[0], session.run(None, {"x": x})[0], rtol=1e-5, atol=1e-6
    )


def _external_model(folder) -> str:
    """conv_model with its weight in ``weights.bin`` beside it (as dynamo exports write)."""
    path = folder / "ext.onnx"
    onnx.save(conv_model(), str(path), save_as_external_data=True, location="weights.bin",
              size_threshold=0)  # fmt: skip
    return str(path)


def test_external_data_is_read_from_beside_the_model(tmp_path, monkeypatch):
    path = _external_model(tmp_path)
    monkeypatch.chdir("/")  # not the model's folder
    module = load_onnx(path)
    weights = [op for op in module.walk() if isinstance(op, ConstantOp)]
    assert any(
        op.constant_array().shape == (4, 3, 3, 3) and np.all(op.constant_array() == 1.0)
        for op in weights
    )


def test_a_missing_external_data_file_is_named(tmp_path):
    path = _external_model(tmp_path)
    (tmp_path / "weights.bin").unlink()
    with pytest.raises(
        OnnxImportError, match="external data file 'weights.bin', which is not next"
    ):
        load_onnx(path)


def test_bytes_that_name_external_data_ask_for_the_path(tmp_path):
    path = _external_model(tmp_path)
    with open(path, "rb") as f:
        data = f.read()
    with pytest.raises(OnnxImportError, match="load the model by its path"):
        load_onnx(data)
