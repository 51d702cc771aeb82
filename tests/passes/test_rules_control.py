"""``if-as-where``: an If on a condition known only at run time, with small branches that
cannot fail, becomes both branches and a Where — the same function for either value of the
condition (the reference interpreter before and after), with no host op left; branches that
index by data, or results whose types differ, keep the If."""

from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper
from xdsl.dialects.builtin import ModuleOp

from tests.dialects.control_flow_models import if_conv_model
from tests.lowering.test_tile_differential import assert_matches, run_levels
from tilegraph.frontend import load_onnx
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.runtime import run_reference

RULE = "algebraic-simplify{only=if-as-where},dce"


def _ops(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


@pytest.mark.parametrize("flag", [True, False])
def test_an_if_of_small_branches_is_a_where(flag):
    model, inputs = if_conv_model()
    inputs = {**inputs, "flag": np.array(flag)}
    module = load_onnx(model)
    (want,) = run_reference(module, inputs)
    run_pipeline(RULE, make_context(), module)
    module.verify()
    ops = _ops(module)
    assert ops["graph.if"] == 0 and ops["graph.where"] == 1 and ops["graph.conv2d"] == 2
    (got,) = run_reference(module, inputs)
    np.testing.assert_array_equal(got, want)


def _gather_if_model() -> onnx.ModelProto:
    """``y = flag ? table[ids] : table[0:2]``: the then-branch gathers by data."""
    then_graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["t"])], "then", [],
        [helper.make_tensor_value_info("t", TP.FLOAT, [2, 3])],
    )  # fmt: skip
    else_graph = helper.make_graph(
        [helper.make_node("Slice", ["table", "zero", "two"], ["e"])], "else", [],
        [helper.make_tensor_value_info("e", TP.FLOAT, [2, 3])],
        [helper.make_tensor("zero", TP.INT64, [1], [0]), helper.make_tensor("two", TP.INT64, [1], [2])],
    )  # fmt: skip
    graph = helper.make_graph(
        [helper.make_node("If", ["flag"], ["y"], then_branch=then_graph, else_branch=else_graph)],
        "gather_if",
        [
            helper.make_tensor_value_info("table", TP.FLOAT, [5, 3]),
            helper.make_tensor_value_info("ids", TP.INT64, [2]),
            helper.make_tensor_value_info("flag", TP.BOOL, []),
        ],
        [helper.make_tensor_value_info("y", TP.FLOAT, [2, 3])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_a_branch_that_indexes_by_data_keeps_the_if():
    module = load_onnx(_gather_if_model())
    run_pipeline(RULE, make_context(), module)
    assert _ops(module)["graph.if"] == 1  # ids may be out of range when flag is false


def test_the_selected_branches_run_on_the_ai_core():
    model, inputs = if_conv_model()
    module = load_onnx(model)
    levels = run_levels(module, inputs, "test")
    assert_matches(levels)
    assert all(k.unit != "host" for k in levels.tiled_kernels)
