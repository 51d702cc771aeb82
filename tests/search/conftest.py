"""Small models for the tuner's tests: two matmuls (a tiling space of three parameters), two
convolutions around a ReLU and a residual add (where the storage strategies differ)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnx.helper as oh
import pytest
from onnx import TensorProto, numpy_helper


def two_matmuls(m: int = 64, k: int = 128, n: int = 96) -> onnx.ModelProto:
    """``relu(a @ b) @ c``: two cube kernels."""
    graph = oh.make_graph(
        [
            oh.make_node("MatMul", ["a", "b"], ["t"]),
            oh.make_node("Relu", ["t"], ["u"]),
            oh.make_node("MatMul", ["u", "c"], ["y"]),
        ],
        "mm",
        [
            oh.make_tensor_value_info("a", TensorProto.FLOAT, [m, k]),
            oh.make_tensor_value_info("b", TensorProto.FLOAT, [k, n]),
            oh.make_tensor_value_info("c", TensorProto.FLOAT, [n, n]),
        ],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
    )
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])


def _saved(model: onnx.ModelProto, path: Path) -> str:
    onnx.save(model, str(path))
    return str(path)


@pytest.fixture
def mm_model(tmp_path: Path) -> str:
    return _saved(two_matmuls(), tmp_path / "mm.onnx")


def two_convolutions() -> onnx.ModelProto:
    """``conv(relu(conv(x)) + x)`` on ``[1, 16, 8, 8]``: GE's strategy keeps NC1HWC0 between
    the convolutions, the naive one converts back to NCHW around the ReLU and the add."""
    rng = np.random.default_rng(0)
    weights = [
        numpy_helper.from_array(rng.standard_normal((16, 16, 3, 3)).astype(np.float32), name)
        for name in ("w1", "w2")
    ]
    graph = oh.make_graph(
        [
            oh.make_node("Conv", ["x", "w1"], ["c"], pads=[1, 1, 1, 1]),
            oh.make_node("Relu", ["c"], ["r"]),
            oh.make_node("Add", ["r", "x"], ["s"]),
            oh.make_node("Conv", ["s", "w2"], ["y"], pads=[1, 1, 1, 1]),
        ],
        "convs",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8, 8])],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 8, 8])],
        weights,
    )
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])


@pytest.fixture
def conv_model(tmp_path: Path) -> str:
    return _saved(two_convolutions(), tmp_path / "convs.onnx")
