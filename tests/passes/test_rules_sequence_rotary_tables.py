"""Two shapes a dynamo export of Pixtral's vision encoder has, on the AI core.

``sequence-at-of-split``: ``torch.unbind`` then indexing is SplitToSequence and
SequenceAt of constant positions; as Gathers the model has no sequence value left, so it
lowers to tiles (before, the whole model ran on the reference interpreter: the tile level
has no sequence buffers). ``recompose-rotary-half`` with 2-D tables against ``[B, H, S,
D]``: the op takes the tables with 1s prepended, so the rotary kernel runs it (before: a
host op, "rotary tables of another rank than x"). Both against onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import tilegraph

RNG = np.random.default_rng(7)


def _model(nodes, inputs, outputs, inits) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], platform: str) -> None:
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    compiled = tilegraph.compile(model, platform=platform)
    got = compiled(**feeds)
    assert compiled.not_lowered is None
    assert compiled.host_ops == []
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
def test_unbind_then_index_runs_on_tiles(platform: str):
    """x [3, 4, 5] unbound along axis 0; items 0 and -1 scaled and added."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4, 5])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 5])
    inits = [
        numpy_helper.from_array(np.array(0, np.int64), "p0"),
        numpy_helper.from_array(np.array(-1, np.int64), "p1"),
    ]
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["s"], axis=0, keepdims=0),
        helper.make_node("SequenceAt", ["s", "p0"], ["a"]),
        helper.make_node("SequenceAt", ["s", "p1"], ["b"]),
        helper.make_node("Mul", ["a", "b"], ["ab"]),
        helper.make_node("Add", ["ab", "a"], ["y"]),
    ]
    model = _model(nodes, [x], [y], inits)
    _check(model, {"x": RNG.standard_normal((3, 4, 5)).astype(np.float32)}, platform)


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
def test_rotary_with_two_dimensional_tables_runs_on_the_vector_core(platform: str):
    """Hugging Face's ``x * cos + rotate_half(x) * sin`` with constant [S, D] tables
    against x [B, H, S, D] (D = 8, S = 5: a ragged row)."""
    b, h, s, d = 2, 3, 5, 8
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [b, h, s, d])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [b, h, s, d])
    angles = RNG.uniform(0, 3, (s, d // 2))
    table = np.concatenate([angles, angles], axis=-1)
    inits = [
        numpy_helper.from_array(np.cos(table).astype(np.float32), "cos"),
        numpy_helper.from_array(np.sin(table).astype(np.float32), "sin"),
        numpy_helper.from_array(np.array([0], np.int64), "zero"),
        numpy_helper.from_array(np.array([d // 2], np.int64), "half"),
        numpy_helper.from_array(np.array([d], np.int64), "end"),
        numpy_helper.from_array(np.array([-1], np.int64), "axis"),
    ]
    nodes = [
        helper.make_node("Mul", ["x", "cos"], ["xc"]),
        helper.make_node("Slice", ["x", "zero", "half", "axis"], ["x1"]),
        helper.make_node("Slice", ["x", "half", "end", "axis"], ["x2"]),
        helper.make_node("Neg", ["x2"], ["n"]),
        helper.make_node("Concat", ["n", "x1"], ["r"], axis=-1),
        helper.make_node("Mul", ["r", "sin"], ["rs"]),
        helper.make_node("Add", ["xc", "rs"], ["y"]),
    ]
    model = _model(nodes, [x], [y], inits)
    _check(model, {"x": RNG.standard_normal((b, h, s, d)).astype(np.float32)}, platform)
