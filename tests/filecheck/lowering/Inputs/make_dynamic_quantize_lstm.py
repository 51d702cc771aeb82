"""Write a DynamicQuantizeLSTM model (onnxruntime's com.microsoft op; X [3, 2, 5], hidden 4,
int8 weights, per-tensor scales, zero points 0) to argv[1]."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
inits = [
    numpy_helper.from_array(rng.integers(-127, 128, (1, 5, 16)).astype(np.int8), "W"),
    numpy_helper.from_array(rng.integers(-127, 128, (1, 4, 16)).astype(np.int8), "R"),
    numpy_helper.from_array(np.array([0.004], np.float32), "W_scale"),
    numpy_helper.from_array(np.array([0], np.int8), "W_zp"),
    numpy_helper.from_array(np.array([0.006], np.float32), "R_scale"),
    numpy_helper.from_array(np.array([0], np.int8), "R_zp"),
]
node = helper.make_node(
    "DynamicQuantizeLSTM",
    ["X", "W", "R", "", "", "", "", "", "W_scale", "W_zp", "R_scale", "R_zp"],
    ["Y", "Y_h", "Y_c"],
    domain="com.microsoft",
    hidden_size=4,
    name="lstm_quant",
)
graph = helper.make_graph(
    [node],
    "dqlstm",
    [helper.make_tensor_value_info("X", TensorProto.FLOAT, [3, 2, 5])],
    [
        helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, 1, 2, 4]),
        helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, [1, 2, 4]),
        helper.make_tensor_value_info("Y_c", TensorProto.FLOAT, [1, 2, 4]),
    ],
    inits,
)
opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
onnx.save(helper.make_model(graph, opset_imports=opsets), sys.argv[1])
