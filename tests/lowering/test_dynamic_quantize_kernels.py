"""DynamicQuantizeLinear's parameters kernel, ``graph.dynamic_quantize_params`` alone (both
extremes in one pass over chunks, the scale and zero point at its end:
:mod:`tilegraph.lowering.conversion.tiling.dynamic_quantize`), and the whole op — each
level against the one above it (the harness of :mod:`tests.lowering.test_tile_differential`)
on the ``test`` preset (ragged chunks, several of them), and against the ONNX function
body bit for bit, also for the all-zero, constant, all-positive and all-negative inputs
through both executors.

The op reads ND tensors only (its facts), so there is no blocked input whose padding lanes
could hold NaN; a ragged chunk's lanes past the tensor are loaded as 0, which is checked by
inputs all of one sign (0 would be wrong there if the range did not include it)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from xdsl.ir import Operation, SSAValue

import tilegraph
from tests.lowering.test_tile_differential import (
    VECTOR,
    Graph,
    assert_matches,
    assert_tiled,
    assert_units,
    run_levels,
)
from tilegraph.dialects.graph.quantize import DynamicQuantizeParamsOp

SHAPES = {
    "one_chunk": [3, 17],
    "ragged_chunks": [37, 300],
    "rank3_chunked_rows": [2, 50, 257],
    "rank1": [1000],
}
"""On the test preset's small UB the larger ones run in several (ragged) chunks."""


def _params(shape: Sequence[int], scale: float, offset: float, results: Sequence[int]):
    def build(g: Graph) -> list[SSAValue]:
        x = g.input(shape)
        g.arrays[-1] = (g.arrays[-1] * scale + offset).astype(np.float32)
        owner = g.b.op("dynamic_quantize_params", x).owner
        assert isinstance(owner, Operation)
        return [owner.results[i] for i in results]

    return build


def _module(shape, scale: float = 1.0, offset: float = 0.0, results: Sequence[int] = (0, 1, 2)):
    g = Graph()
    return g.b.build(*_params(shape, scale, offset, results)(g)), g.arrays


def _function_body(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ONNX function body step by step in float32 (onnxruntime's scale 1 for a zero
    range), and the zero point moved onto int8."""
    f32 = np.float32
    lo = min(f32(x.min()), f32(0))
    hi = max(f32(x.max()), f32(0))
    scale = f32(f32(hi - lo) / f32(255))
    safe = f32(1) if scale == 0 else scale
    zero = np.rint(np.clip(f32(f32(0) - f32(lo / safe)), f32(0), f32(255)))
    return np.asarray(safe, f32), np.asarray(zero, np.uint8), np.asarray(zero - 128, np.int8)


@pytest.mark.parametrize("name", list(SHAPES))
@pytest.mark.parametrize(
    ("scale", "offset"),
    [(3.0, 0.0), (1.0, 5.0), (1.0, -5.0)],
    ids=["mixed_signs", "all_positive", "all_negative"],
)
def test_dynamic_quantize_params_kernel(name: str, scale: float, offset: float):
    """Every level agrees (exactly: the program is the body's float32 steps), on one vector
    kernel; the graph level is the ONNX function body."""
    module, inputs = _module(SHAPES[name], scale, offset)
    levels = run_levels(module, inputs, "test")
    assert_matches(levels, rtol=0.0, atol=0.0)
    assert_tiled(levels.module)
    units = {DynamicQuantizeParamsOp.name: VECTOR}
    assert_units(levels.macro_kernels, units, "lower-graph-to-kernels")
    assert_units(levels.tiled_kernels, units, "tile-kernels{platform=test}")
    for got, want in zip(levels.reference, _function_body(inputs[0]), strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("results", [(0, 1), (2,), (1,)], ids=["onnx", "int8_only", "u8_only"])
def test_kernel_writes_the_results_read(results: tuple[int, ...]):
    """DynamicQuantizeLinear's two results, or only the int8 zero point fold-integer-ops
    reads: each a GM output of the one kernel, the others not written."""
    module, inputs = _module(SHAPES["ragged_chunks"], results=results)
    levels = run_levels(module, inputs, "test")
    assert_matches(levels, rtol=0.0, atol=0.0)
    want = _function_body(inputs[0])
    for got, i in zip(levels.reference, results, strict=True):
        np.testing.assert_array_equal(got, want[i])


def test_chunked_input_runs_several_chunks():
    module, inputs = _module(SHAPES["ragged_chunks"])
    levels = run_levels(module, inputs, "test")
    assert levels.counters.ops.get("tile.vreduce", 0) > 4, "expected a loop over chunks"


def _dql_model(shape: Sequence[int]) -> onnx.ModelProto:
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"])]
    graph = helper.make_graph(
        nodes,
        "dql",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info(n, t, None) for n, t in
         (("q", TensorProto.UINT8), ("s", TensorProto.FLOAT), ("z", TensorProto.UINT8))],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


CONSTANT_INPUTS = {
    "all_zero": 0.0,
    "constant_positive": 2.5,
    "constant_negative": -0.75,
}


@pytest.mark.parametrize("executor", ["fast", "interpret"])
@pytest.mark.parametrize("name", list(CONSTANT_INPUTS))
def test_constant_input_through_both_executors(executor: str, name: str):
    """The all-zero input's scale is 1 and its zero point 0 (onnxruntime's answer); a
    constant one quantises to one value. One kernel: the parameters, then the quantisation."""
    shape = [5, 70]
    model = _dql_model(shape)
    x = np.full(shape, CONSTANT_INPUTS[name], np.float32)
    compiled = tilegraph.compile(model, precision="int8", executor=executor, platform="test")
    assert not compiled.host_ops
    theirs = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    for ours, want in zip(compiled(x=x), theirs, strict=True):
        np.testing.assert_array_equal(np.asarray(ours), want)


def test_dynamic_quantize_linear_is_one_kernel():
    """fuse-dynamic-quantize groups the parameters and the QuantizeLinear: one launch."""
    model = _dql_model([4, 33])
    compiled = tilegraph.compile(model, precision="int8", platform="ascend910b")
    assert not compiled.host_ops
    assert [k.ops for k in compiled.kernels] == [
        ("graph.dynamic_quantize_params", "graph.quantize_linear")
    ], compiled.kernels
