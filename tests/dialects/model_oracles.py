"""Small ONNX models run by tilegraph (``load_onnx`` + ``run_reference``) and by an oracle:
onnxruntime, or onnx's ``ReferenceEvaluator`` where onnxruntime has no kernel or cannot
exchange the element type with numpy (float4, float8e8m0, 2-bit and most 4-bit types)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from tilegraph.frontend import load_onnx
from tilegraph.runtime import run_reference

Node = tuple[str, Sequence[str], Mapping[str, Any]]
"""(op type, input names, attributes); the input name "_" is the previous node's output."""


def chain_model(
    nodes: Sequence[Node],
    feeds: Mapping[str, np.ndarray],
    inits: Mapping[str, np.ndarray] | None = None,
    *,
    opset: int,
    n_outputs: int = 1,
) -> onnx.ModelProto:
    """Nodes in a chain over graph inputs typed like ``feeds`` and initializers ``inits``;
    the last node's outputs ``y0, y1, ...`` are the graph outputs."""
    onnx_nodes, previous = [], ""
    for i, (op, names, attrs) in enumerate(nodes):
        last = i == len(nodes) - 1
        outs = [f"y{k}" for k in range(n_outputs)] if last else [f"t{i}"]
        ins = [previous if n == "_" else n for n in names]
        onnx_nodes.append(helper.make_node(op, ins, outs, **attrs))
        previous = outs[0]
    graph_inputs = [
        helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(array.dtype), list(array.shape)
        )
        for name, array in feeds.items()
    ]
    outputs = [helper.make_empty_tensor_value_info(f"y{k}") for k in range(n_outputs)]
    initializers = [numpy_helper.from_array(a, n) for n, a in (inits or {}).items()]
    graph = helper.make_graph(onnx_nodes, "g", graph_inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


def ours(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    return list(run_reference(load_onnx(model), dict(feeds)))


def onnxruntime_outputs(
    model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]
) -> list[np.ndarray]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return [np.asarray(v) for v in session.run(None, dict(feeds))]


def onnx_reference_outputs(
    model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]
) -> list[np.ndarray]:
    from onnx.reference import ReferenceEvaluator

    return [np.asarray(v) for v in ReferenceEvaluator(model).run(None, dict(feeds))]


def assert_same(got: np.ndarray, want: np.ndarray) -> None:
    """Equal values (NaN equal to NaN) and the same element type (tilegraph returns the
    declared type: ``ml_dtypes`` arrays for bfloat16, int4, float8 ...)."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))
