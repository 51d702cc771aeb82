"""tilegraph.builder: graphs built in Python run, print, parse and compile like imported ones.

Numbers are checked against numpy written here, independently of the reference kernels.
The examples of docs/builder.md and of the module docstring run here too.
"""

from __future__ import annotations

import contextlib
import doctest
import inspect
import io
import re
from pathlib import Path

import numpy as np
import pytest
import sympy
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import func

import tilegraph
import tilegraph.builder
from tilegraph.builder import ALIASES, OP_METHODS, GraphBuilder
from tilegraph.dialects.graph import GRAPH_OPS, ConstantOp, ShapeError
from tilegraph.dialects.graph.dense import elide_limit
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import shape_symbol
from tilegraph.passes.context import parse_mlir

DOC = Path(__file__).parents[1] / "docs" / "builder.md"
RNG = np.random.default_rng(7)


def _f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


# ---- numpy written for these tests ---------------------------------------------------------


def conv2d_nchw(x: np.ndarray, w: np.ndarray, bias=None, stride=(1, 1), pads=(0, 0, 0, 0)):
    """Direct convolution: pads = [top, left, bottom, right], no groups or dilation."""
    top, left, bottom, right = pads
    xp = np.pad(x, [(0, 0), (0, 0), (top, bottom), (left, right)])
    n, _, h, wd = xp.shape
    m, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride[0] + 1, (wd - kw) // stride[1] + 1
    out = np.zeros([n, m, oh, ow], np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride[0] : i * stride[0] + kh, j * stride[1] : j * stride[1] + kw]
            out[:, :, i, j] = np.einsum("nchw,mchw->nm", patch, w)
    if bias is not None:
        out += bias.reshape(1, -1, 1, 1)
    return out.astype(np.float32)


def max_pool_2x2(x: np.ndarray) -> np.ndarray:
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _conv_block() -> tuple[tilegraph.builder.GraphBuilder, dict[str, np.ndarray]]:
    """conv(stride 2, pad 1, bias) -> relu -> max_pool 2x2 -> flatten -> matmul + bias ->
    softmax, with the weights returned for the numpy check."""
    p = {
        "w": _f32(6, 3, 3, 3),
        "b": _f32(6),
        "fc": _f32(6 * 2 * 2, 5),
        "fc_b": _f32(5),
    }
    b = GraphBuilder("net")
    x = b.input("x", [2, 3, 8, 8], format="NCHW")
    y = b.conv2d(x, p["w"], p["b"], strides=[2, 2], pads=[1, 1, 1, 1], name="conv")
    y = b.max_pool(b.relu(y), kernel_shape=[2, 2], strides=[2, 2])
    y = b.add(b.matmul(b.flatten(y, axis=1), p["fc"]), p["fc_b"])
    b.output(b.softmax(y, axis=-1), name="probs")
    return b, p


def _conv_block_numpy(x: np.ndarray, p: dict[str, np.ndarray]) -> np.ndarray:
    y = conv2d_nchw(x, p["w"], p["b"], stride=(2, 2), pads=(1, 1, 1, 1))
    y = max_pool_2x2(np.maximum(y, 0)).reshape(x.shape[0], -1)
    return softmax(y @ p["fc"] + p["fc_b"], axis=-1)


# ---- the module it builds -------------------------------------------------------------------


def test_conv_block_runs_prints_parses_and_compiles():
    b, params = _conv_block()
    module = b.build()
    x = _f32(2, 3, 8, 8)
    want = _conv_block_numpy(x, params)

    (got,) = tilegraph.run_reference(module, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)

    with elide_limit(None):
        text = str(module)
    assert text.startswith("builtin.module @net {")
    assert "func.func @main(%x: !layout.tensor<2x3x8x8xf32, NCHW>)" in text
    assert 'onnx.output_names = ["probs"]' in text
    parsed = parse_mlir(text)
    with elide_limit(None):
        assert str(parsed) == text
    np.testing.assert_allclose(tilegraph.run_reference(parsed, [x])[0], want, rtol=1e-4)

    compiled = tilegraph.compile(module, "O2")
    assert compiled.output_names == ["probs"]
    np.testing.assert_allclose(compiled(x=x)[0], want, rtol=1e-3, atol=1e-5)
    assert {k.unit for k in compiled.kernels} >= {"cube", "vector"}


def test_it_builds_what_the_importer_builds():
    """The same conv + relu as an ONNX model and through the builder print the same IR
    (the importer always writes the name attributes, the builder only where needed)."""
    w, bias = _f32(4, 3, 3, 3), _f32(4)
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "b")],
    )
    imported = tilegraph.load_onnx(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    )
    b = GraphBuilder()
    x = b.input("x", ["N", 3, 8, 8], format="NCHW")
    conv = b.conv(x, b.constant(w, name="w"), b.constant(bias, name="b"), pads=[1] * 4, name="c")
    built = b.build(b.relu(conv, name="y"))
    texts = []
    for module in (imported, built):
        fn = module.ops.first
        assert isinstance(fn, func.FuncOp)
        for key in ("onnx.input_names", "onnx.output_names"):
            fn.attributes.pop(key, None)
        with elide_limit(None):
            texts.append(str(module))
    assert texts[0] == texts[1]


def test_multi_result_ops_return_tuples():
    b = GraphBuilder()
    x = b.input("x", [3, 10])
    values, indices = b.top_k(x, np.array([4], np.int64), axis=1)
    parts = b.split(x, np.array([3, 7], np.int64), axis=1)
    assert isinstance(parts, tuple) and len(parts) == 2
    mean, total = b.reduce_mean(x, np.array([1], np.int64)), b.reduce_sum(x)
    b.output(values, indices, *parts, mean, total)
    module = b.build()
    data = _f32(3, 10)
    out = tilegraph.run_reference(module, [data])
    order = np.argsort(-data, axis=1, kind="stable")[:, :4]
    np.testing.assert_array_equal(out[0], np.take_along_axis(data, order, axis=1))
    np.testing.assert_array_equal(out[1], order)
    np.testing.assert_array_equal(out[2], data[:, :3])
    np.testing.assert_array_equal(out[3], data[:, 3:])
    np.testing.assert_allclose(out[4], data.mean(axis=1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(out[5], data.sum(keepdims=True), rtol=1e-5)


def test_variadic_optional_and_keyword_operands():
    b = GraphBuilder()
    x, y = b.input("x", [2, 3]), b.input("y", [2, 3])
    both = b.concat(x, y, x, axis=0)
    total = b.sum(x, y, y)
    clipped = b.clip(x, max=np.float32(0.5))  # min left out, max by name
    gemm = b.gemm(a=x, b=y, transB=1, alpha=2.0)
    module = b.build(both, total, clipped, gemm)
    xs, ys = _f32(2, 3), _f32(2, 3)
    out = tilegraph.run_reference(module, {"x": xs, "y": ys})
    np.testing.assert_array_equal(out[0], np.concatenate([xs, ys, xs]))
    np.testing.assert_allclose(out[1], xs + 2 * ys, rtol=1e-6)
    np.testing.assert_array_equal(out[2], np.minimum(xs, 0.5))
    np.testing.assert_allclose(out[3], 2 * xs @ ys.T, rtol=1e-5)
    assert clipped.owner.operand_slots()[1] is None  # type: ignore[union-attr]


def test_conv_takes_every_rank_and_aliases_are_the_same_op():
    b = GraphBuilder()
    x1, x2 = b.input("a", [1, 2, 9]), b.input("b", [1, 2, 5, 5])
    assert b.conv(x1, _f32(4, 2, 3)).owner.name == "graph.conv"  # type: ignore[union-attr]
    assert b.conv(x2, _f32(4, 2, 3, 3)).owner.name == "graph.conv2d"  # type: ignore[union-attr]
    mean, var = np.zeros(2, np.float32), np.ones(2, np.float32)
    one, zero = np.ones(2, np.float32), np.zeros(2, np.float32)
    y = b.batch_normalization(x2, one, zero, mean, var, epsilon=0.5)
    assert y.owner.name == "graph.batch_norm"  # type: ignore[union-attr]
    assert b.and_(b.input("p", [2], "bool"), b.input("q", [2], "bool")).owner.name == "graph.and"  # type: ignore[union-attr]
    assert set(ALIASES) <= set(OP_METHODS)


def test_every_graph_op_has_a_method_with_its_signature():
    built = {cls for spec in OP_METHODS.values() for cls in spec.classes}
    expected = {
        cls for cls in GRAPH_OPS if cls is not ConstantOp and not cls.get_irdl_definition().regions
    }
    assert expected <= built
    for method, spec in OP_METHODS.items():
        fn = getattr(GraphBuilder, method)
        params = inspect.signature(fn).parameters
        assert {s.name for s in spec.slots} | set(spec.attributes) | {"self", "name"} == set(params)
        assert spec.classes[0].name in (fn.__doc__ or "")
    conv = inspect.signature(GraphBuilder.conv2d).parameters
    assert conv["group"].default == 1 and conv["bias"].default is None
    assert conv["strides"].kind is inspect.Parameter.KEYWORD_ONLY


W = _f32(4, 3, 3, 3)

OP_ERRORS = [
    pytest.param(
        TypeError, r"conv2d\(\) missing operand 'weight'", lambda b, x, o: b.conv2d(x), id="missing"
    ),
    pytest.param(
        TypeError,
        r"relu\(\) takes at most 1 operand\(s\) \(input\), got 2",
        lambda b, x, o: b.relu(x, x),
        id="extra",
    ),
    pytest.param(
        TypeError,
        r"relu\(\) got operand 'input' twice",
        lambda b, x, o: b.relu(x, input=x),
        id="twice",
    ),
    pytest.param(
        TypeError,
        r"'stride' \(did you mean 'strides'\?\).*attributes: auto_pad",
        lambda b, x, o: b.conv2d(x, W, stride=[2, 2]),
        id="unknown-keyword",
    ),
    pytest.param(
        TypeError,
        r"conv2d\(\): attribute 'strides' takes a list of ints, got 2",
        lambda b, x, o: b.conv2d(x, W, strides=2),
        id="ints-attribute",
    ),
    pytest.param(
        TypeError,
        r"softmax\(\): attribute 'axis' takes an int, got 1.5",
        lambda b, x, o: b.softmax(x, axis=1.5),
        id="int-attribute",
    ),
    pytest.param(
        TypeError,
        r"gelu\(\): attribute 'approximate' takes a string, got 1",
        lambda b, x, o: b.gelu(x, approximate=1),
        id="string-attribute",
    ),
    pytest.param(
        TypeError,
        r"add\(\): operand 'rhs' must be a value .* got float 1.0 \(for data",
        lambda b, x, o: b.add(x, 1.0),
        id="python-number",
    ),
    pytest.param(
        TypeError,
        r"concat\(\): operand 'inputs' must be a value .* got tuple .*unpack",
        lambda b, x, o: b.concat((x, x), axis=1),
        id="tuple",
    ),
    pytest.param(
        ValueError,
        r"add\(\): operand 'rhs' is not a value of this builder",
        lambda b, x, o: b.add(x, o),
        id="other-builder",
    ),
    pytest.param(
        ShapeError,
        r"conv2d\(\) 'c1': weight expects 5 channels",
        lambda b, x, o: b.conv2d(x, _f32(4, 5, 3, 3), name="c1"),
        id="shape",
    ),
    pytest.param(
        ShapeError,
        r"softmax\(\): axis 7 is out of range",
        lambda b, x, o: b.softmax(x, axis=7),
        id="axis",
    ),
    pytest.param(
        ValueError,
        r"none of graph.conv2d, graph.conv takes operands of ranks \[2, 2\]",
        lambda b, x, o: b.conv(b.input("m", [2, 2]), _f32(2, 2)),
        id="no-family-member",
    ),
    pytest.param(
        AttributeError,
        r"no op method 'conv2'; did you mean .*conv2d",
        lambda b, x, o: b.conv2,
        id="unknown-method",
    ),
    pytest.param(
        ValueError,
        r"op\(\): there is no graph op 'convv'; did you mean conv",
        lambda b, x, o: b.op("convv", x),
        id="unknown-op",
    ),
]


@pytest.mark.parametrize("error, message, call", OP_ERRORS)
def test_op_errors_name_the_method_and_the_argument(error, message, call):
    b = GraphBuilder()
    x = b.input("x", [1, 3, 8, 8], format="NCHW")
    other = GraphBuilder().input("z", [1, 3, 8, 8])
    with pytest.raises(error, match=message):
        call(b, x, other)
    # nothing half-made stays behind (numpy operands made into constants are removed)
    assert not b.block.ops


INPUT_ERRORS = [
    pytest.param(
        ValueError,
        r"input 'x': there is already an input of that name",
        lambda b: b.input("x", [2]),
        id="repeated-name",
    ),
    pytest.param(
        ValueError,
        r"input 'n' axis 1: a dim is >= 0",
        lambda b: b.input("n", [2, -1]),
        id="negative-dim",
    ),
    pytest.param(
        TypeError,
        r"input 'f' axis 0: a dim is an int, a name or None, got 2.5",
        lambda b: b.input("f", [2.5]),
        id="float-dim",
    ),
    pytest.param(
        ValueError,
        r"input 'd': unknown dtype 'float33'",
        lambda b: b.input("d", [2], "float33"),
        id="dtype",
    ),
    pytest.param(
        ValueError,
        r"input 'g': unknown format 'NCWH'",
        lambda b: b.input("g", [1, 2, 3, 4], format="NCWH"),
        id="format",
    ),
    pytest.param(
        ValueError,
        r"input 's': NC1HWC0 is a storage format",
        lambda b: b.input("s", [1, 2, 3, 4], format="NC1HWC0"),
        id="storage-as-origin",
    ),
    pytest.param(
        ValueError,
        r"input 'r': a rank 5 shape cannot have format NCHW",
        lambda b: b.input("r", [1] * 5, format="NCHW"),
        id="rank",
    ),
    pytest.param(
        TypeError,
        r"give format or origin_format",
        lambda b: b.input("o", [1], format="ND", origin_format="ND"),
        id="both-spellings",
    ),
    pytest.param(
        ValueError,
        r"constant: cannot make a tensor of str",
        lambda b: b.constant("abc"),
        id="constant-data",
    ),
]


@pytest.mark.parametrize("error, message, call", INPUT_ERRORS)
def test_input_errors_name_the_input(error, message, call):
    b = GraphBuilder()
    b.input("x", [2])
    with pytest.raises(error, match=message):
        call(b)
    assert len(b.block.args) == 1 and not b.block.ops


def test_outputs_and_build_are_checked():
    b = GraphBuilder()
    x = b.input("x", [2])
    with pytest.raises(ValueError, match="no outputs"):
        b.build()
    with pytest.raises(TypeError, match=r"must be a value, got tuple \(unpack"):
        b.output(b.top_k(x, np.array([1], np.int64)))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="1 value\\(s\\) but 2 name\\(s\\)"):
        b.output(x, name=["a", "b"])
    b.output(x, name="a")
    b.build(b.neg(x), b.relu(x))
    with pytest.raises(RuntimeError, match="build\\(\\) was called"):
        b.relu(x)
    with pytest.raises(RuntimeError, match="build\\(\\) was called"):
        b.build()


def test_repeated_output_names_are_refused():
    b = GraphBuilder()
    x = b.input("x", [1])
    b.output(x, name="y")
    b.output(b.neg(x), name="y")
    with pytest.raises(ValueError, match="output names repeat: \\['y', 'y'\\]"):
        b.build()


def test_names_reach_the_runtime():
    b = GraphBuilder()
    x = b.input("input.1", [2, 2])
    y = b.input("y", [2, 2])
    b.output(b.mul(x, y), name="product:0")
    module = b.build(b.sub(x, y))
    fn = module.ops.first
    assert isinstance(fn, func.FuncOp)
    assert [a.data for a in fn.attributes["onnx.input_names"].data] == ["input.1", "y"]  # type: ignore[attr-defined]
    assert fn.args[1].name_hint == "y"
    data = {"input.1": _f32(2, 2), "y": _f32(2, 2)}
    product, difference = tilegraph.run_reference(module, data)
    np.testing.assert_array_equal(product, data["input.1"] * data["y"])
    np.testing.assert_array_equal(difference, data["input.1"] - data["y"])
    compiled = tilegraph.compile(module, "O1", target="reference")
    assert compiled.input_names == ["input.1", "y"]
    assert compiled.output_names == ["product:0", "output1"]


def test_symbolic_inputs_are_symbols_as_the_importer_makes_them():
    b = GraphBuilder()
    x = b.input("x", ["N", 3, 4, 4], format="NCHW")
    mask = b.input("mask", ["N", None, "?"])
    t = x.type
    assert isinstance(t, TensorType) and t.origin_shape[0] == shape_symbol("N")
    mt = mask.type
    assert isinstance(mt, TensorType)
    assert mt.origin_shape == (shape_symbol("N"), shape_symbol("s0"), shape_symbol("s1"))
    with pytest.raises(
        ValueError, match="'s0' is the symbol of the unnamed dim of input 'mask' axis 1"
    ):
        b.input("other", ["s0"])
    scale = np.array([1.0, 2.0, 3.0], np.float32).reshape(3, 1, 1)
    y = b.mul(b.relu(x), scale, name="scaled")
    pooled = b.global_avg_pool(y)
    assert str(pooled.type) == "!layout.tensor<[N, 3, 1, 1], f32, NCHW>"
    assert isinstance(pooled.type, TensorType)
    assert isinstance(pooled.type.origin_shape[0], sympy.Symbol)
    module = b.build(pooled)
    for n in (1, 3):
        data = _f32(n, 3, 4, 4)
        (got,) = tilegraph.run_reference(
            module, {"x": data, "mask": np.zeros([n, 2, 2], np.float32)}
        )
        want = (np.maximum(data, 0) * scale).mean(axis=(2, 3), keepdims=True)
        np.testing.assert_allclose(got, want, rtol=1e-5)
    compiled = tilegraph.compile(module, "O2", target="reference")
    data = _f32(5, 3, 4, 4)
    (got,) = compiled(x=data, mask=np.zeros([5, 1, 7], np.float32))
    np.testing.assert_allclose(
        got, (np.maximum(data, 0) * scale).mean(axis=(2, 3), keepdims=True), rtol=1e-5
    )


def test_constants_take_python_data_as_onnx_models_have_it():
    b = GraphBuilder()
    kinds = [b.constant(v).type for v in (1.5, [1, 2], [True, False], np.float16(1))]
    assert [str(k) for k in kinds] == [
        "!layout.tensor<f32>",
        "!layout.tensor<2xi64>",
        "!layout.tensor<2xi1>",
        "!layout.tensor<f16>",
    ]
    w = b.constant(np.ones([4, 3, 1, 1], np.float32), "NCHW", name="w")
    assert str(w.type) == "!layout.tensor<4x3x1x1xf32, NCHW>" and w.name_hint == "w"


def test_storage_format_inputs_run_in_origin_layout():
    b = GraphBuilder()
    x = b.input("x", [1, 20, 3, 3], format="NCHW", storage_format="NC1HWC0")
    assert str(x.type) == "!layout.tensor<1x20x3x3xf32, NCHW -> NC1HWC0 [1, 2, 3, 3, 16]>"
    module = b.build(b.relu(x))
    data = _f32(1, 20, 3, 3)
    np.testing.assert_array_equal(tilegraph.run_reference(module, [data])[0], np.maximum(data, 0))


# ---- the documentation runs ---------------------------------------------------------------


def _expected_prints(code: str) -> list[str]:
    """What the block says its prints print: ``print(...)  # text`` or a ``# text`` line
    right after the print."""
    lines = code.splitlines()
    expected = []
    for i, line in enumerate(lines):
        if not line.lstrip().startswith("print("):
            continue
        if "  # " in line:
            expected.append(line.split("  # ", 1)[1])
        elif i + 1 < len(lines) and lines[i + 1].startswith("# "):
            expected.append(lines[i + 1][2:])
    return expected


def test_docs_examples_run_and_print_what_they_say():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) >= 5
    namespace: dict[str, object] = {}
    for i, code in enumerate(blocks):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"{DOC.name} block {i}", "exec"), namespace)
        assert out.getvalue().splitlines() == _expected_prints(code), f"block {i}"


def test_module_docstring_example_runs():
    results = doctest.testmod(tilegraph.builder, verbose=False)
    assert results.attempted >= 8 and results.failed == 0
