"""Small models for the tuner's tests: two matmuls (a tiling space of three parameters)."""

from __future__ import annotations

from pathlib import Path

import onnx
import onnx.helper as oh
import pytest
from onnx import TensorProto


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


@pytest.fixture
def mm_model(tmp_path: Path) -> str:
    path = tmp_path / "mm.onnx"
    onnx.save(two_matmuls(), str(path))
    return str(path)
