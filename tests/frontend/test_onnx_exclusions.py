"""Operators refused by design say why (training, ai.onnx.ml, strings, random sampling)."""

from __future__ import annotations

import onnx.helper as oh
import pytest
from onnx import TensorProto

from tilegraph.frontend import OnnxImportError, load_onnx


def _model(op: str, domain: str = ""):
    node = oh.make_node(op, ["x"], ["y"], domain=domain)
    graph = oh.make_graph(
        [node],
        "g",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    imports = [oh.make_opsetid("", 17)] + ([oh.make_opsetid(domain, 1)] if domain else [])
    return oh.make_model(graph, opset_imports=imports)


@pytest.mark.parametrize(
    ("op", "domain", "why"),
    [
        ("RandomNormalLike", "", "random sampling"),
        ("StringNormalizer", "", "string processing"),
        ("Adam", "ai.onnx.preview.training", "the training domain"),
        ("LabelEncoder", "ai.onnx.ml", "the classical-ML domain ai.onnx.ml"),
    ],
)
def test_excluded_operators_are_refused_with_the_reason(op, domain, why):
    with pytest.raises(OnnxImportError, match=f"not supported by design: {op} .*: {why}"):
        load_onnx(_model(op, domain))


def test_a_missing_operator_is_not_called_a_design_decision():
    with pytest.raises(OnnxImportError, match="unsupported operators: NoSuchOp") as info:
        load_onnx(_model("NoSuchOp"))
    assert "by design" not in str(info.value)
