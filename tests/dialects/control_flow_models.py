"""ONNX models with control flow for the tests: If on a scalar input, a Loop carrying state
with a scan output, a Scan, and sequences. Built with ``onnx.helper``; each returns the
model and inputs that exercise it."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper


def _value(name: str, elem: int, shape: list[int | str] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _model(graph: onnx.GraphProto, opset: int = 18) -> onnx.ModelProto:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def if_conv_model() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """``y = flag ? relu(conv(x, w)) : conv(x, w) * 0.5``: both branches capture ``x`` and the
    weight, the then-branch also the bias."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    then_graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w", "b"], ["c1"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c1"], ["t"]),
        ],
        "then",
        [],
        [_value("t", TP.FLOAT, [1, 4, 8, 8])],
    )
    else_graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c2"], pads=[1, 1, 1, 1]),
            helper.make_node("Mul", ["c2", "half"], ["e"]),
        ],
        "else",
        [],
        [_value("e", TP.FLOAT, [1, 4, 8, 8])],
        [helper.make_tensor("half", TP.FLOAT, [], [0.5])],
    )
    graph = helper.make_graph(
        [
            helper.make_node("Add", ["x", "x"], ["x2"]),
            helper.make_node("If", ["flag"], ["y"], then_branch=then_graph, else_branch=else_graph),
            helper.make_node("Sigmoid", ["y"], ["out"]),
        ],
        "if_conv",
        [_value("x", TP.FLOAT, [1, 3, 8, 8]), _value("flag", TP.BOOL, [])],
        [_value("out", TP.FLOAT, [1, 4, 8, 8])],
        [helper.make_tensor("w", TP.FLOAT, w.shape, w), helper.make_tensor("b", TP.FLOAT, [4], b)],
    )
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    return _model(graph), {"x": x, "flag": np.array(True)}


def loop_model() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A Loop of at most ``n`` iterations carrying ``acc`` (``acc = acc * 0.5 + x``) and
    stopping once its sum exceeds ``limit``; the scan output collects ``acc`` per iteration."""
    body = helper.make_graph(
        [
            helper.make_node("Mul", ["acc_in", "half"], ["scaled"]),
            helper.make_node("Add", ["scaled", "x"], ["acc_out"]),
            helper.make_node("ReduceSum", ["acc_out"], ["total"], keepdims=0),
            helper.make_node("Less", ["total", "limit"], ["cond_out"]),
            helper.make_node("Identity", ["acc_out"], ["scan_out"]),
        ],
        "body",
        [
            _value("i", TP.INT64, []),
            _value("cond_in", TP.BOOL, []),
            _value("acc_in", TP.FLOAT, [2, 3]),
        ],
        [
            _value("cond_out", TP.BOOL, []),
            _value("acc_out", TP.FLOAT, [2, 3]),
            _value("scan_out", TP.FLOAT, [2, 3]),
        ],
        [helper.make_tensor("half", TP.FLOAT, [], [0.5])],
    )
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "acc0"], ["acc", "history"], body=body)],
        "loop",
        [
            _value("n", TP.INT64, []),
            _value("acc0", TP.FLOAT, [2, 3]),
            _value("x", TP.FLOAT, [2, 3]),
            _value("limit", TP.FLOAT, []),
        ],
        [_value("acc", TP.FLOAT, [2, 3]), _value("history", TP.FLOAT, ["k", 2, 3])],
    )
    feeds = {
        "n": np.array(10, np.int64),
        "acc0": np.zeros((2, 3), np.float32),
        "x": np.arange(6, dtype=np.float32).reshape(2, 3) / 4,
        "limit": np.array(12.0, np.float32),
    }
    return _model(graph), feeds


def scan_model() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A running sum over the rows of ``xs`` read backwards, with the running sums stacked
    along axis 1 of the output."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["sum_in", "row"], ["sum_out"]),
            helper.make_node("Identity", ["sum_out"], ["scan_out"]),
        ],
        "body",
        [_value("sum_in", TP.FLOAT, [3]), _value("row", TP.FLOAT, [3])],
        [_value("sum_out", TP.FLOAT, [3]), _value("scan_out", TP.FLOAT, [3])],
    )
    node = helper.make_node(
        "Scan",
        ["init", "xs"],
        ["total", "sums"],
        body=body,
        num_scan_inputs=1,
        scan_input_directions=[1],
        scan_output_axes=[1],
    )
    graph = helper.make_graph(
        [node],
        "scan",
        [_value("init", TP.FLOAT, [3]), _value("xs", TP.FLOAT, [5, 3])],
        [_value("total", TP.FLOAT, [3]), _value("sums", TP.FLOAT, [3, 5])],
    )
    feeds = {
        "init": np.ones(3, np.float32),
        "xs": np.arange(15, dtype=np.float32).reshape(5, 3),
    }
    return _model(graph), feeds


def sequence_model() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """Split ``x`` into a sequence of rows, insert ``extra`` at the front, and concatenate the
    elements again along a new axis; also the sequence's length."""
    graph = helper.make_graph(
        [
            helper.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
            helper.make_node("SequenceInsert", ["rows", "extra", "zero"], ["more"]),
            helper.make_node("ConcatFromSequence", ["more"], ["stacked"], axis=0, new_axis=1),
            helper.make_node("SequenceLength", ["more"], ["length"]),
        ],
        "sequences",
        [_value("x", TP.FLOAT, [3, 4]), _value("extra", TP.FLOAT, [4])],
        [_value("stacked", TP.FLOAT, [4, 4]), _value("length", TP.INT64, [])],
        [helper.make_tensor("zero", TP.INT64, [], [0])],
    )
    feeds = {
        "x": np.arange(12, dtype=np.float32).reshape(3, 4),
        "extra": np.full(4, -1.0, np.float32),
    }
    return _model(graph, opset=18), feeds
