"""Transformer pieces as exported: a LayerNormalization block at opset 17 and an Attention
(opset 23) model, against onnxruntime through the reference and the O2 tiled path."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.helper as oh
import pytest
from onnx import TensorProto, numpy_helper

import tilegraph
from tilegraph.frontend import load_onnx
from tilegraph.runtime import run_reference

rng = np.random.default_rng(0)
B, T, D = 2, 6, 16


def _w(name: str, *shape: int) -> onnx.TensorProto:
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)


def _ort(model: onnx.ModelProto, **feeds: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def _check(model: onnx.ModelProto) -> None:
    x = rng.standard_normal((B, T, D)).astype(np.float32)
    want = _ort(model, x=x)
    (ref,) = run_reference(load_onnx(model), [x])
    (tiled,) = tilegraph.compile(model, "O2")(x)
    np.testing.assert_allclose(ref, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(tiled, want, rtol=1e-4, atol=1e-4)


def test_a_layer_norm_mlp_block_at_opset_17():
    """x -> MatMul + bias -> LayerNormalization -> MatMul -> GELU (Erf) -> MatMul -> + x."""
    half = numpy_helper.from_array(np.array(0.5, np.float32), "half")
    one = numpy_helper.from_array(np.array(1.0, np.float32), "one")
    root2 = numpy_helper.from_array(np.array(np.sqrt(2.0), np.float32), "root2")
    nodes = [
        oh.make_node("MatMul", ["x", "w0"], ["a"]),
        oh.make_node("Add", ["a", "b0"], ["ab"]),
        oh.make_node("LayerNormalization", ["ab", "gamma", "beta"], ["n"], axis=-1),
        oh.make_node("MatMul", ["n", "w1"], ["h"]),
        oh.make_node("Div", ["h", "root2"], ["hs"]),
        oh.make_node("Erf", ["hs"], ["e"]),
        oh.make_node("Add", ["e", "one"], ["e1"]),
        oh.make_node("Mul", ["h", "e1"], ["he"]),
        oh.make_node("Mul", ["he", "half"], ["g"]),
        oh.make_node("MatMul", ["g", "w2"], ["o"]),
        oh.make_node("Add", ["o", "x"], ["y"]),
    ]
    inits = [_w("w0", D, D), _w("b0", D), _w("gamma", D), _w("beta", D), _w("w1", D, 4 * D),
             _w("w2", 4 * D, D), half, one, root2]  # fmt: skip
    graph = oh.make_graph(
        nodes,
        "mlp",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, [B, T, D])],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, [B, T, D])],
        inits,
    )
    _check(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)]))


def test_a_self_attention_block_at_opset_23():
    """x -> Q, K, V projections -> Attention (3-D, 4 heads, causal) -> output projection."""
    nodes = [
        oh.make_node("MatMul", ["x", "wq"], ["q"]),
        oh.make_node("MatMul", ["x", "wk"], ["k"]),
        oh.make_node("MatMul", ["x", "wv"], ["v"]),
        oh.make_node(
            "Attention", ["q", "k", "v"], ["a"], q_num_heads=4, kv_num_heads=4, is_causal=1
        ),  # fmt: skip
        oh.make_node("MatMul", ["a", "wo"], ["y"]),
    ]
    inits = [_w(n, D, D) for n in ("wq", "wk", "wv", "wo")]
    graph = oh.make_graph(
        nodes,
        "attention",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, [B, T, D])],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, [B, T, D])],
        inits,
    )
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 23)])
    try:
        _ort(model, x=np.zeros((B, T, D), np.float32))
    except Exception as e:  # an older onnxruntime without Attention-23
        pytest.skip(f"onnxruntime cannot run Attention-23 here: {str(e).splitlines()[0]}")
    _check(model)
