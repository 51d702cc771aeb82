"""``hoist-loop-projection``: a loop body's ``MatMul(Gather(X, t), W)`` of loop-invariant
``X`` and ``W`` and the loop's counter ``t`` becomes row ``t`` of ``MatMul(X, W)`` computed
before the loop — against onnxruntime and bit for bit against the loop it replaces (each
product is the same sum); loops whose gathered data or index changes otherwise are left
alone."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from tests.lowering.test_loop_launches import _inputs, _rnn_loop_model, opset15_model
from tests.passes.loop_hoisting import check_outputs, hoisted
from tilegraph.dialects.graph.control_flow import LoopOp
from tilegraph.dialects.graph.data_movement import GatherOp
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.layout_type import TensorType

T, B, D, H = 4, 2, 5, 3
F32 = TensorProto.FLOAT


def _projection_loop(data: str, index: str) -> onnx.ModelProto:
    """M = T steps of ``y_t = Gather(data, index) · W`` (W an outer initializer, read by
    the body as a capture), ``s`` carried (doubled each step), every ``y_t`` a scan
    output. ``data``: ``"xs"`` (the input) or ``"scaled"`` (``xs · s``: new every step);
    ``index``: ``"i"`` (the iteration number) or ``"reversed"`` (``T - 1 - i``)."""
    nodes = [
        helper.make_node("Constant", [], ["two"], value=helper.make_tensor("", F32, [], [2.0])),
        helper.make_node("Mul", ["s_in", "two"], ["s_out"]),
        helper.make_node("Mul", ["xs", "s_in"], ["scaled"]),
        helper.make_node("Constant", [], ["last"], value=helper.make_tensor("", 7, [], [T - 1])),
        helper.make_node("Sub", ["last", "i"], ["reversed"]),
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        helper.make_node("Gather", [data, index], ["x_t"], axis=0),
        helper.make_node("MatMul", ["x_t", "W"], ["y_t"]),
    ]
    body = helper.make_graph(
        nodes,
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("s_in", F32, []),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("s_out", F32, []),
            helper.make_tensor_value_info("y_t", F32, [B, H]),
        ],
    )
    rng = np.random.default_rng(2)
    init = [
        numpy_helper.from_array(np.array(T, np.int64), "M"),
        numpy_helper.from_array(np.array(True), "cond0"),
        numpy_helper.from_array(np.array(1.0, np.float32), "s0"),
        numpy_helper.from_array(rng.standard_normal((D, H)).astype(np.float32), "W"),
    ]
    loop = helper.make_node("Loop", ["M", "cond0", "s0"], ["s_final", "ys"], body=body)
    graph = helper.make_graph(
        [loop],
        "projection",
        [helper.make_tensor_value_info("xs", F32, [T, B, D])],
        [helper.make_tensor_value_info("ys", F32, [T, B, H])],
        initializer=init,
    )
    return opset15_model(graph)


def _hoisted(model: onnx.ModelProto) -> tuple[ModuleOp, int]:
    return hoisted(model, "hoist-loop-projection", "hoisted-loop-projections")


def _body_products(module: ModuleOp) -> list[MatMulOp]:
    (loop,) = [op for op in module.walk() if isinstance(op, LoopOp)]
    return [op for op in loop.body.block.ops if isinstance(op, MatMulOp)]


def _shape(value: SSAValue) -> list[int]:
    t = value.type
    assert isinstance(t, TensorType)
    return [int(d) for d in t.origin_shape]


def _check_outputs(model: onnx.ModelProto, module: ModuleOp, inputs: dict[str, np.ndarray]):
    check_outputs(model, module, inputs, rtol=1e-5)  # exact: the same sums, rounded once each


def test_iteration_number_row_is_hoisted():
    model = _projection_loop("xs", "i")
    module, hoisted = _hoisted(model)
    assert hoisted == 1
    assert _body_products(module) == []
    (outer,) = [op for op in module.walk() if isinstance(op, MatMulOp)]
    # all T·B rows as one matrix (B = 2 rows a slice would each be padded to 16 batched)
    assert _shape(outer.operands[0]) == [T * B, D]
    assert _shape(outer.results[0]) == [T * B, H]
    (loop,) = [op for op in module.walk() if isinstance(op, LoopOp)]
    gathers = [op for op in loop.body.block.ops if isinstance(op, GatherOp) and op.results[0].uses]
    assert [g.operands[0] for g in gathers] == [loop.body.block.args[-1]]  # the new capture
    assert _shape(loop.operands[-1]) == [T, B, H]  # reshaped back
    xs = np.random.default_rng(3).standard_normal((T, B, D)).astype(np.float32)
    _check_outputs(model, module, {"xs": xs})


def test_tf2onnx_counter_row_is_hoisted():
    """tf2onnx's form: a carried int32 time, W a constant of the body, the product summed
    with the recurrent one and a bias after (the bias stays in the body)."""
    model = _rnn_loop_model(counted=True)
    module, hoisted = _hoisted(model)
    assert hoisted == 1
    (recurrent,) = _body_products(module)  # h · R stays: h changes every step
    assert not isinstance(recurrent.operands[0].owner, GatherOp)
    _check_outputs(model, module, _inputs())


@pytest.mark.parametrize(
    ("data", "index"),
    [("scaled", "i"), ("xs", "reversed")],
    ids=["data_of_the_iteration", "index_not_the_counter"],
)
def test_left_alone(data: str, index: str):
    model = _projection_loop(data, index)
    module, hoisted = _hoisted(model)
    assert hoisted == 0
    assert len(_body_products(module)) == 1
    xs = np.random.default_rng(4).standard_normal((T, B, D)).astype(np.float32)
    _check_outputs(model, module, {"xs": xs})
