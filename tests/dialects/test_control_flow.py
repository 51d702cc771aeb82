"""Control flow (graph.if / graph.loop / graph.scan / graph.sequence_map) and sequences:
imported from ONNX, verified, printed and parsed back, interpreted, and through O2."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

import tilegraph
from tests.dialects.control_flow_models import (
    if_conv_model,
    loop_model,
    scan_model,
    sequence_model,
)
from tilegraph.dialects.graph.control_flow import IfOp, LoopOp, RegionOp, walk_outside_bodies
from tilegraph.dialects.layout import TransDataOp
from tilegraph.frontend import OnnxImportError, load_onnx
from tilegraph.frontend.onnxruntime_oracle import onnxruntime_session
from tilegraph.passes.context import make_context
from tilegraph.runtime import run_reference


def onnxruntime(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    return onnxruntime_session(model).run(None, feeds)


def assert_matches(ours, theirs) -> None:
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("flag", [True, False])
def test_if_on_a_scalar_input_matches_onnxruntime_in_reference_and_on_tiles(flag: bool):
    model, feeds = if_conv_model()
    feeds["flag"] = np.array(flag)
    expected = onnxruntime(model, feeds)
    assert_matches(run_reference(load_onnx(model), feeds), expected)
    for executor in ("fast", "interpret"):
        compiled = tilegraph.compile(model, "O2", executor=executor)
        assert_matches(compiled(**feeds), expected)


def test_if_bodies_capture_the_outer_values_they_read():
    model, _ = if_conv_model()
    (if_op,) = [op for op in load_onnx(model).walk() if isinstance(op, IfOp)]
    captured = [v.name_hint for v in if_op.captured_values]
    assert captured == ["x", "w", "b"]  # then reads x, w, b; else reads x, w
    for region in (if_op.then_region, if_op.else_region):
        assert [a.type for a in region.block.args] == [v.type for v in if_op.captured_values]


@pytest.mark.parametrize(("trips", "limit"), [(10, 12.0), (3, 1e9), (0, 1e9)])
def test_loop_carrying_state_matches_onnxruntime(trips: int, limit: float):
    """Stops by the condition (first case), by the trip count (second), or never runs."""
    model, feeds = loop_model()
    feeds["n"] = np.array(trips, np.int64)
    feeds["limit"] = np.array(limit, np.float32)
    expected = onnxruntime(model, feeds)
    assert_matches(run_reference(load_onnx(model), feeds), expected)
    assert_matches(tilegraph.compile(model, "O2", target="reference")(**feeds), expected)


@pytest.mark.parametrize(("trips", "limit"), [(10, 12.0), (3, 1e9)])
def test_loop_scan_output_length_is_data_dependent_and_the_tiles_bind_it(trips, limit):
    """The scan output's length is known once the loop has run: the tiles are compiled for
    the length the call's data gives (the trip count ``n`` is an input, bound by value)."""
    model, feeds = loop_model()
    module = load_onnx(model)
    (loop,) = [op for op in module.walk() if isinstance(op, LoopOp)]
    assert str(loop.results[1].type) == "!layout.tensor<?x2x3xf32>"
    feeds["n"] = np.array(trips, np.int64)
    feeds["limit"] = np.array(limit, np.float32)
    compiled = tilegraph.compile(model, "O2")
    assert_matches(compiled(**feeds), onnxruntime(model, feeds))
    assert compiled.session is not None and compiled.session.stats.tilings == 1


def test_scan_matches_onnxruntime_in_reference_and_on_tiles():
    model, feeds = scan_model()
    expected = onnxruntime(model, feeds)
    assert_matches(run_reference(load_onnx(model), feeds), expected)
    assert_matches(tilegraph.compile(model, "O2")(**feeds), expected)


def test_sequences_match_onnxruntime():
    model, feeds = sequence_model()
    expected = onnxruntime(model, feeds)
    assert_matches(run_reference(load_onnx(model), feeds), expected)
    assert_matches(tilegraph.compile(model, "O2", target="reference")(**feeds), expected)


@pytest.mark.parametrize("make", [if_conv_model, loop_model, scan_model, sequence_model])
def test_control_flow_prints_and_parses_back(make):
    model, _ = make()
    text = str(load_onnx(model))
    parsed = Parser(make_context(), text).parse_module()
    parsed.verify()
    assert str(parsed) == text


def test_o2_leaves_the_bodies_alone_and_optimises_around_them():
    """The convs inside the branches stay ND graph ops (no TransData, no fusion) while the
    format engine still runs on the function (if-as-where off: it would inline them)."""
    model, feeds = if_conv_model()
    compiled = tilegraph.compile(model, "O2{disable=if-as-where}", target="reference")
    module = compiled.module
    (if_op,) = [op for op in module.walk() if isinstance(op, IfOp)]
    body_ops = [op for region in if_op.regions for op in region.walk()]
    assert not any(isinstance(op, TransDataOp) for op in body_ops)
    assert any(op.name == "graph.conv2d" for op in body_ops)
    outside = list(walk_outside_bodies(module))
    assert if_op in outside and not set(body_ops) & set(outside)
    assert_matches(compiled(**feeds), onnxruntime(model, feeds))


def test_a_body_that_yields_the_wrong_type_is_rejected():
    model, _ = scan_model()
    text = str(load_onnx(model)).replace(
        "graph.yield %sum_out, %scan_out : !layout.tensor<3xf32>, !layout.tensor<3xf32>",
        "graph.yield %sum_out : !layout.tensor<3xf32>",
    )
    module = Parser(make_context(), text).parse_module()
    with pytest.raises(VerifyException):
        module.verify()


def test_yield_outside_a_body_is_rejected():
    text = """
    func.func @f(%x: !layout.tensor<2xf32>) -> !layout.tensor<2xf32> {
      graph.yield %x : !layout.tensor<2xf32>
    }"""
    module = Parser(make_context(), text).parse_module()
    with pytest.raises(VerifyException, match="graph.yield must be the terminator"):
        module.verify()


def _if_model_on(cond_nodes: list[onnx.NodeProto], then_out: str, else_out: str):
    then_graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], [then_out])],
        "then",
        [],
        [helper.make_tensor_value_info(then_out, TP.FLOAT, [4])],
    )
    else_graph = helper.make_graph(
        [helper.make_node("Neg", ["x"], [else_out])],
        "else",
        [],
        [helper.make_tensor_value_info(else_out, TP.FLOAT, [4])],
    )
    graph = helper.make_graph(
        [
            *cond_nodes,
            helper.make_node("If", ["c"], ["y"], then_branch=then_graph, else_branch=else_graph),
        ],
        "g",
        [helper.make_tensor_value_info("x", TP.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TP.FLOAT, [4])],
        [helper.make_tensor("four", TP.INT64, [], [4])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_an_if_whose_condition_follows_from_static_shapes_imports_the_taken_branch():
    model = _if_model_on(
        [helper.make_node("Size", ["x"], ["n"]), helper.make_node("Equal", ["n", "four"], ["c"])],
        "t",
        "e",
    )
    module = load_onnx(model)
    assert not any(isinstance(op, RegionOp) for op in module.walk())
    x = np.array([-1.0, 2.0, -3.0, 4.0], np.float32)
    (y,) = run_reference(module, {"x": x})
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_a_subgraph_reading_an_undefined_name_is_refused_with_its_location():
    model = _if_model_on([], "t", "e")
    model.graph.input.append(helper.make_tensor_value_info("c", TP.BOOL, []))
    model.graph.node[0].attribute[0].g.node[0].input[0] = "nowhere"
    with pytest.raises(OnnxImportError, match=r"\(If\): a subgraph reads 'nowhere'"):
        load_onnx(model)


def test_scan_8_is_refused_clearly():
    model, _ = scan_model()
    model.opset_import[0].version = 8
    with pytest.raises(OnnxImportError, match=r"Scan-8 \(opset 8: batched"):
        load_onnx(model)


def test_sequence_and_optional_inputs_and_outputs_run_in_the_reference():
    seq = helper.make_tensor_sequence_value_info("s", TP.FLOAT, None)
    length = helper.make_tensor_value_info("n", TP.INT64, [])
    graph = helper.make_graph(
        [
            helper.make_node("Identity", ["s"], ["t"]),
            helper.make_node("SequenceLength", ["s"], ["n"]),
            helper.make_node("Optional", ["s"], ["o"]),
            helper.make_node("OptionalHasElement", ["o"], ["has"]),
        ],
        "g",
        [seq],
        [
            helper.make_tensor_sequence_value_info("t", TP.FLOAT, None),
            length,
            helper.make_tensor_value_info("has", TP.BOOL, []),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    items = [np.ones((2, 2), np.float32), np.zeros((3,), np.float32)]
    t, n, has = run_reference(load_onnx(model), {"s": items})
    assert [a.tolist() for a in t] == [a.tolist() for a in items]
    assert int(n) == 2 and bool(has)
