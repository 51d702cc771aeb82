"""``hoist-loop-elementwise``: a loop body's unary elementwise ops of row ``t`` of a
loop-invariant tensor (tf2onnx's mask row, ``Cast(Not(m_t))`` and ``Cast(m_t)``) become
rows of the ops of the whole tensor, computed before the loop — bit for bit against the
loop they replace and against onnxruntime, on the device too; a row the loop does not
read once per iteration, or data of the iteration, is left alone."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp

import tilegraph
from tests.lowering.test_loop_launches import opset15_model
from tests.passes.loop_hoisting import check_outputs, hoisted
from tilegraph.dialects.graph.control_flow import LoopOp
from tilegraph.dialects.graph.data_movement import GatherOp
from tilegraph.dialects.graph.elementwise import CastOp, UnaryElementwiseOp

T, B, H = 4, 2, 3
F32 = TensorProto.FLOAT


def _body(index: str, masked: str) -> onnx.GraphProto:
    """``h' = (1 - m_t)·h + m_t·(h + 1)`` as tf2onnx writes a masked step,
    ``Cast(Not(m_t))·h + Cast(m_t)·(h + 1)`` with ``m_t = Gather(masked, index)``;
    ``index``: ``"i"`` (the iteration number) or ``"reversed"`` (``T - 1 - i``);
    ``masked``: ``"mask"`` (the captured input) or ``"flipped"`` (``Xor(mask, s)`` with
    ``s`` a carried bool that toggles: new every step)."""
    nodes = [
        helper.make_node("Constant", [], ["last"], value=helper.make_tensor("", 7, [], [T - 1])),
        helper.make_node("Sub", ["last", "i"], ["reversed"]),
        helper.make_node("Not", ["s_in"], ["s_out"]),
        *([helper.make_node("Xor", ["mask", "s_in"], ["flipped"])] if masked == "flipped" else []),
        helper.make_node("Gather", [masked, index], ["m_t"], axis=0),
        helper.make_node("Not", ["m_t"], ["keep"]),
        helper.make_node("Cast", ["keep"], ["keep_f"], to=F32),
        helper.make_node("Cast", ["m_t"], ["m_f"], to=F32),
        helper.make_node("Constant", [], ["one"], value=helper.make_tensor("", F32, [], [1.0])),
        helper.make_node("Add", ["h_in", "one"], ["stepped"]),
        helper.make_node("Mul", ["keep_f", "h_in"], ["kept"]),
        helper.make_node("Mul", ["m_f", "stepped"], ["moved"]),
        helper.make_node("Add", ["kept", "moved"], ["h_out"]),
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
    ]
    return helper.make_graph(
        nodes,
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("h_in", F32, [B, H]),
            helper.make_tensor_value_info("s_in", TensorProto.BOOL, []),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("h_out", F32, [B, H]),
            helper.make_tensor_value_info("s_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("h_out", F32, [B, H]),
        ],
    )


def _masked_loops(index: str = "i", masked: str = "mask", loops: int = 1) -> onnx.ModelProto:
    """``loops`` loops of :func:`_body` one after the other over the same ``mask``
    ``[T, B, 1]`` (a bidirectional layer's two directions), each one's scan output the
    model's."""
    init = [
        numpy_helper.from_array(np.array(T, np.int64), "M"),
        numpy_helper.from_array(np.array(True), "cond0"),
        numpy_helper.from_array(np.array(False), "s0"),
    ]
    nodes, outputs = [], []
    for k in range(loops):
        results = [f"h_final{k}", f"s_final{k}", f"ys{k}"]
        nodes.append(
            helper.make_node("Loop", ["M", "cond0", "h0", "s0"], results, body=_body(index, masked))
        )
        outputs.append(helper.make_tensor_value_info(f"ys{k}", F32, [T, B, H]))
    graph = helper.make_graph(
        nodes,
        "masked",
        [
            helper.make_tensor_value_info("mask", TensorProto.BOOL, [T, B, 1]),
            helper.make_tensor_value_info("h0", F32, [B, H]),
        ],
        outputs,
        initializer=init,
    )
    return opset15_model(graph)


def _inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(6)
    return {
        "mask": rng.random((T, B, 1)) < 0.5,
        "h0": rng.standard_normal((B, H)).astype(np.float32),
    }


def _hoisted(model: onnx.ModelProto) -> tuple[ModuleOp, int]:
    return hoisted(model, "hoist-loop-elementwise", "hoisted-loop-elementwise")


def _check_outputs(model: onnx.ModelProto, module: ModuleOp) -> None:
    check_outputs(model, module, _inputs(), rtol=1e-6)  # exact: the same values, moved


def _loops(module: ModuleOp) -> list[LoopOp]:
    return [op for op in module.walk() if isinstance(op, LoopOp)]


def test_mask_row_ops_are_hoisted():
    model = _masked_loops()
    module, hoisted = _hoisted(model)
    assert hoisted == 3  # Not, then Cast of its row, then Cast of the mask row
    (loop,) = _loops(module)
    body = list(loop.body.block.ops)
    unary = [op for op in body if isinstance(op, UnaryElementwiseOp)]
    assert not [op for op in unary if isinstance(op.operands[0].owner, GatherOp)]
    assert not [op for op in unary if isinstance(op, CastOp)]  # Not(s), Identity(cond) stay
    gathers = [op for op in body if isinstance(op, GatherOp) and op.results[0].uses]
    args = list(loop.body.block.args)
    captured = args[len(args) - len(loop.captured_values) :]
    assert sorted(captured.index(g.operands[0]) for g in gathers) == [0, 1]  # type: ignore[arg-type]
    # the mask itself and Not(mask) are read by no row any more: no longer captured
    outer = [v.owner for v in loop.captured_values]
    assert [type(op) for op in outer] == [CastOp, CastOp]
    assert all(v.uses for v in captured)
    _check_outputs(model, module)


def test_two_loops_share_the_hoisted_ops():
    """A bidirectional layer's two directions read the same mask: one Not and two Casts
    before the first loop, both loops capture them."""
    model = _masked_loops(loops=2)
    module, hoisted = _hoisted(model)
    assert hoisted == 6
    first, second = _loops(module)
    assert list(first.captured_values) == list(second.captured_values)
    fn = first.parent_block()
    assert fn is not None
    outer = [op for op in fn.ops if isinstance(op, UnaryElementwiseOp)]
    assert len(outer) == 3 and all(op.is_before_in_block(first) for op in outer)
    _check_outputs(model, module)


@pytest.mark.parametrize(
    ("index", "masked"),
    [("reversed", "mask"), ("i", "flipped")],
    ids=["index_not_the_counter", "data_of_the_iteration"],
)
def test_left_alone(index: str, masked: str):
    model = _masked_loops(index, masked)
    module, hoisted = _hoisted(model)
    assert hoisted == 0
    (loop,) = _loops(module)
    assert len([op for op in loop.body.block.ops if isinstance(op, CastOp)]) == 2
    _check_outputs(model, module)


@pytest.mark.parametrize("executor", ["fast", "interpret"])
def test_on_the_device(executor: str):
    """Through O2 and the device loop: onnxruntime's values, no host op."""
    model = _masked_loops(loops=2)
    compiled = tilegraph.compile(model, platform="test", executor=executor)
    inputs = _inputs()
    got = compiled(**inputs)
    assert compiled.host_ops == []
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for g, want in zip(got, session.run(None, inputs), strict=True):
        np.testing.assert_allclose(g, np.asarray(want), rtol=1e-6, atol=1e-6)
