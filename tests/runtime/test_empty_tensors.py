"""Zero-size tensors on the tiled path (lowering/conversion/graph_to_kernels_empty.py).

A NonZero that finds nothing gives an empty tensor on ordinary inputs (a detector where no
box passes). A kernel whose results are all empty runs no launch (its results are empty
GM allocations, which plan-memory places and the cycle model never sees); one that reads
an empty tensor but computes a non-empty one (a sum over an empty axis, a matmul with
K = 0, a concat with an empty part) stays on the host. Every model here runs on the tiles
with no positive entry and matches onnxruntime.
"""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnx.helper as oh
import onnxruntime as ort
import pytest
from onnx import TensorProto, numpy_helper
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.parser import Parser
from xdsl.utils.test_value import create_ssa_value

from tests.runtime.test_binding import nonzero_model
from tilegraph.cost_model.cycles import simulate_module
from tilegraph.dialects.tile import LaunchOp
from tilegraph.dialects.tile.base import scoped_memref
from tilegraph.dialects.tile.workspace import StridedViewOp, ViewOp, strided_memref
from tilegraph.lowering.conversion.graph_to_kernels_empty import EMPTY_REASON
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import lowering_pipeline, run_pipeline
from tilegraph.runtime.session import Session
from tilegraph.runtime.tile_interpreter.kernels import kernel_of
from tilegraph.tools.run.cli import run

F = TensorProto.FLOAT
rng = np.random.default_rng(25)
NONE = -np.ones((4, 6), np.float32)
"""No positive entry: NonZero(x > 0) is [2, 0]."""


def _positives(count: int) -> np.ndarray:
    x = -np.ones(24, np.float32)
    x[rng.choice(24, count, replace=False)] = rng.uniform(0.5, 2, count)
    return x.reshape(4, 6)


def _onnxruntime(model: onnx.ModelProto, x: np.ndarray) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [np.asarray(o) for o in session.run(None, {"x": x})]


def _model(nodes: list[onnx.NodeProto], inits: dict[str, np.ndarray]) -> onnx.ModelProto:
    """x[4, 6] -> NonZero(x > 0) as float, %nzf [2, k], then ``nodes`` to y."""
    head = [
        oh.make_node("Greater", ["x", "zero"], ["pos"]),
        oh.make_node("NonZero", ["pos"], ["nz"]),
        oh.make_node("Cast", ["nz"], ["nzf"], to=F),
    ]
    inits = {"zero": np.array(0, np.float32), **inits}
    graph = oh.make_graph(
        head + nodes,
        "g",
        [oh.make_tensor_value_info("x", F, [4, 6])],
        [oh.make_tensor_value_info("y", F, None)],
        [numpy_helper.from_array(a, n) for n, a in inits.items()],
    )
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])


def _bias(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def reduce_sum_model() -> onnx.ModelProto:
    """Sum over the empty axis (zeros), + b."""
    nodes = [
        oh.make_node("ReduceSum", ["nzf", "axis"], ["s"], keepdims=0),
        oh.make_node("Add", ["s", "b"], ["y"]),
    ]
    return _model(nodes, {"axis": np.array([1], np.int64), "b": _bias(2)})


def reduce_max_model() -> onnx.ModelProto:
    """Max over the empty axis (ONNX: the lowest value of the type), + b."""
    nodes = [
        oh.make_node("ReduceMax", ["nzf"], ["s"], axes=[1], keepdims=0),
        oh.make_node("Add", ["s", "b"], ["y"]),
    ]
    return _model(nodes, {"b": _bias(2)})


def matmul_k_zero_model() -> onnx.ModelProto:
    """[2, k] @ [k, 2] + b: K = 0 gives zeros, not an empty tensor."""
    nodes = [
        oh.make_node("Transpose", ["nzf"], ["t"], perm=[1, 0]),
        oh.make_node("MatMul", ["nzf", "t"], ["m"]),
        oh.make_node("Add", ["m", "b"], ["y"]),
    ]
    return _model(nodes, {"b": _bias(2, 2)})


def concat_model() -> onnx.ModelProto:
    """Concat([k, 2], x as [12, 2]) then Relu: the empty part adds no row."""
    nodes = [
        oh.make_node("Transpose", ["nzf"], ["t"], perm=[1, 0]),
        oh.make_node("Reshape", ["x", "rows"], ["xr"]),
        oh.make_node("Concat", ["t", "xr"], ["c"], axis=0),
        oh.make_node("Relu", ["c"], ["y"]),
    ]
    return _model(nodes, {"rows": np.array([12, 2], np.int64)})


def gather_model() -> onnx.ModelProto:
    """Rows of a table at the positives' row indices (none), then Relu: empty throughout."""
    nodes = [
        oh.make_node("Gather", ["nz", "first"], ["rows"], axis=0),
        oh.make_node("Gather", ["table", "rows"], ["g"], axis=0),
        oh.make_node("Relu", ["g"], ["y"]),
    ]
    return _model(nodes, {"first": np.array(0, np.int64), "table": _bias(10, 4)})


@pytest.mark.parametrize(
    "platform,executor",
    [
        ("ascend910b", "fast"),
        ("ascend910b", "interpret"),
        ("ascend310p", "fast"),
        ("test", "interpret"),
    ],
)
def test_a_nonzero_that_finds_nothing_runs_on_the_tiles(tmp_path, platform, executor):
    path, x, report = tmp_path / "nz.onnx", tmp_path / "x.npy", tmp_path / "r.json"
    onnx.save(nonzero_model(), path)
    np.save(x, NONE)
    argv = [str(path), "--input", f"x={x}", "--compare", "--json", str(report)]
    assert run([*argv, "--platform", platform, "--executor", executor, "-q"]) == 0
    result = json.loads(report.read_text())
    assert result["compare_ok"]
    assert result["outputs"]["y"]["shape"] == [0, 16]
    # the cast of the NonZero's result and the matmul group: no launch; NonZero on the host
    assert result["lowering"]["empty_no_launch"] == 2
    assert [k["ops"] for k in result["kernels"]] == [["graph.greater"], ["graph.non_zero"]]


def test_a_session_goes_from_some_positives_to_none_and_back():
    model = nonzero_model()
    session = Session(model, target="tiles")
    for count in (5, 0, 5, 0, 3):
        x = _positives(count)
        (ours,) = session(x=x)
        (theirs,) = _onnxruntime(model, x)
        assert ours.shape == (count, 16)
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert session.latest_tiled is not None


@pytest.mark.parametrize(
    "build,host",
    [
        (reduce_sum_model, True),
        (reduce_max_model, True),
        (matmul_k_zero_model, True),
        (concat_model, False),  # the graph passes drop the empty part
        (gather_model, False),
    ],
)
def test_an_op_reading_an_empty_tensor(build, host):
    """A kernel that reads the empty tensor and computes a non-empty one is a host kernel
    that names it (the NonZero that finds nothing runs on the host too: see the lit test);
    the gather of no rows (empty to the end) launches nothing that reads it."""
    model = build()
    session = Session(model, target="tiles")
    (ours,) = session(x=NONE)
    (theirs,) = _onnxruntime(model, NONE)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    tiled = session.latest_tiled
    assert tiled is not None
    readers = [
        k
        for k in tiled.kernels
        if k.reason and k.reason.startswith(EMPTY_REASON) and "graph.non_zero" not in k.ops
    ]
    assert bool(readers) == host
    assert not any("graph.gather" in k.ops for k in tiled.kernels)


EMPTY_ONLY = """
func.func @main(%e: !layout.tensor<0x16xf32>, %b: !layout.tensor<16xf32>) -> (!layout.tensor<0x16xf32>, !layout.tensor<16xf32>) {
  %r = graph.relu %e : !layout.tensor<0x16xf32>
  %y = graph.relu %b : !layout.tensor<16xf32>
  func.return %r, %y : !layout.tensor<0x16xf32>, !layout.tensor<16xf32>
}
"""


def _lowered(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    run_pipeline(f"set-target{{platform=test}},{lowering_pipeline()}", make_context(), module)
    return module


def test_an_empty_result_is_planned_and_costs_nothing():
    """The empty relu: a planned GM view (plan-memory takes a buffer no launch writes),
    no launch, so the cycle model times the other relu alone."""
    module = _lowered(EMPTY_ONLY)
    launches = [op for op in module.walk() if isinstance(op, LaunchOp)]
    assert len(launches) == 1
    views = [op for op in module.walk() if isinstance(op, ViewOp)]
    assert any(0 in v.result.type.get_shape() for v in views)
    cycles = simulate_module(module)
    assert [k.name for k in cycles.kernels] == [launches[0].callee.string_value()]


def test_an_empty_strided_view_is_an_empty_array():
    """A view of no elements past the end of an empty buffer: no numpy view of its bytes
    exists (they share no memory), the interpreter gives an empty array."""
    source = scoped_memref([1, 8, 0], f32, "GM")
    view = StridedViewOp(
        create_ssa_value(source), strided_memref(source, (1, 4, 8, 0), (0, 0, 0, 1), 8)
    )
    (out,) = kernel_of(view)(np.zeros((1, 8, 0), np.float32))
    assert out.shape == (1, 4, 8, 0)


@pytest.mark.parametrize("platform,executor", [("ascend310p", "interpret"), ("test", "fast")])
def test_a_matmul_with_k_zero_on_other_presets(platform, executor):
    """K = 0: the product is zeros, its epilogue adds the bias (a host kernel on every
    preset, run by either executor's host path)."""
    model = matmul_k_zero_model()
    session = Session(model, target="tiles", platform=platform, executor=executor)
    (ours,) = session(x=NONE)
    (theirs,) = _onnxruntime(model, NONE)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert session.latest_tiled is not None
    assert any(k.reason and EMPTY_REASON in k.reason for k in session.latest_tiled.kernels)


def test_an_empty_constant_parameter_is_no_empty_tensor(tmp_path):
    """Paddle's exports give Resize an empty ``roi`` constant (read as absent): the Resize
    still lowers to a kernel, not to the host for "a zero-size tensor"."""
    nodes = [oh.make_node("Resize", ["x", "roi", "scales"], ["y"], mode="nearest")]
    inits = {
        "roi": np.zeros(0, np.float32),
        "scales": np.array([1, 1, 2, 2], np.float32),
    }
    graph = oh.make_graph(
        nodes,
        "resize",
        [oh.make_tensor_value_info("x", F, [1, 3, 4, 6])],
        [oh.make_tensor_value_info("y", F, None)],
        [numpy_helper.from_array(a, n) for n, a in inits.items()],
    )
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 13)])
    path = tmp_path / "resize.onnx"
    onnx.save(model, path)
    report = tmp_path / "r.json"
    assert run([str(path), "--compare", "--no-format-report", "--json", str(report)]) == 0
    data = json.loads(report.read_text())
    assert data["compare_ok"] and data["host_ops"] == []
