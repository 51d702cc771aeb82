"""Write a small static ONNX model whose nodes all have names, to argv[1]:
Conv -> BatchNormalization -> Relu -> MaxPool -> Flatten -> Gemm (opset 13)."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
C = 16


def tensor(name: str, shape: tuple[int, ...]) -> onnx.TensorProto:
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


initializers = [
    tensor("w", (C, 3, 3, 3)),
    tensor("scale", (C,)),
    tensor("bias", (C,)),
    tensor("mean", (C,)),
    numpy_helper.from_array(np.abs(rng.standard_normal(C)).astype(np.float32) + 1, "var"),
    tensor("fc_w", (10, C * 4 * 4)),
    tensor("fc_b", (10,)),
]
nodes = [
    helper.make_node("Conv", ["x", "w"], ["c"], name="Conv_0", pads=[1, 1, 1, 1]),
    helper.make_node(
        "BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["b"], name="BN_1"
    ),
    helper.make_node("Relu", ["b"], ["r"], name="Relu_2"),
    helper.make_node("MaxPool", ["r"], ["p"], name="Pool_3", kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Flatten", ["p"], ["f"], name="Flatten_4"),
    helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["y"], name="Gemm_5", transB=1),
]
graph = helper.make_graph(
    nodes,
    "located",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
    initializers,
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
onnx.save(model, sys.argv[1])
