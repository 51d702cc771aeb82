"""The cycle model compiles each distinct kernel, and simulates each distinct launch, once
(tilegraph/cost_model/cycles/memo.py): the report is the same, to the cycle, as with every
kernel compiled and simulated by name."""

from __future__ import annotations

import numpy as np
import onnx.helper as oh
import pytest
from onnx import TensorProto, numpy_helper

import tilegraph
from tilegraph.cost_model.cycles import CycleModelOptions, simulate_module

LAYERS = 4


def _layers(platform: str):
    """``LAYERS`` equal layers (MatMul + Add + Relu, then a LayerNormalization), each with
    weights of its own: equal kernels under other names and other tensors."""
    rng = np.random.default_rng(0)
    nodes, inits, x = [], [], "x"
    for i in range(LAYERS):
        w = rng.standard_normal((64, 64)).astype(np.float32)
        b = rng.standard_normal(64).astype(np.float32)
        g = np.ones(64, np.float32)
        inits += [numpy_helper.from_array(a, f"{n}{i}") for a, n in ((w, "w"), (b, "b"), (g, "g"))]
        nodes += [
            oh.make_node("MatMul", [x, f"w{i}"], [f"m{i}"]),
            oh.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"]),
            oh.make_node("Relu", [f"a{i}"], [f"r{i}"]),
            oh.make_node("LayerNormalization", [f"r{i}", f"g{i}"], [f"y{i}"], axis=-1),
        ]
        x = f"y{i}"
    graph = oh.make_graph(
        nodes,
        "layers",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, [128, 64])],
        [oh.make_tensor_value_info(x, TensorProto.FLOAT, [128, 64])],
        inits,
    )
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])
    return tilegraph.compile(model, platform=platform).module


@pytest.mark.parametrize("platform", ["ascend910b", "ascend310p"])
def test_equal_layers_are_compiled_once_and_report_the_same(platform):
    module = _layers(platform)
    memo = simulate_module(module)
    every = simulate_module(module, options=CycleModelOptions(memo=False))
    assert memo.to_json() == every.to_json()
    assert memo.kernels == every.kernels  # every field of every kernel, names included
    # without the memo each kernel is compiled; with it, one per layer's kernels
    assert every.compiled_kernels == len(memo.kernels)
    assert len(memo.kernels) % LAYERS == 0
    assert memo.compiled_kernels == len(memo.kernels) // LAYERS
