"""The table-declared unary math ops, Celu, ThresholdedRelu, IsNaN, IsInf, CastLike against
onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.dialects.op_harness import build_op, check_op
from tilegraph.dialects.graph import ShapeError
from tilegraph.dialects.graph import math_ops as mo
from tilegraph.dialects.graph.elementwise import CastLikeOp

rng = np.random.default_rng(0)
X = rng.standard_normal((2, 3, 5)).astype(np.float32)
UNIT = rng.uniform(-0.9, 0.9, (2, 3, 5)).astype(np.float32)
BY_NAME = {cls.ONNX_OP: cls for cls in mo.TABLE_OPS}
DOMAIN = {"Asin": UNIT, "Acos": UNIT, "Atanh": UNIT, "Acosh": np.abs(X) + 1.0}


@pytest.mark.parametrize("onnx_op", sorted(BY_NAME))
def test_table_ops_match_onnxruntime(onnx_op):
    opset = 18 if onnx_op == "Mish" else 17
    check_op(BY_NAME[onnx_op], [DOMAIN.get(onnx_op, X * 2)], opset=opset, rtol=1e-5, atol=1e-6)


def test_round_is_half_to_even():
    (y,) = check_op(BY_NAME["Round"], [np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4], np.float32)])
    assert y.tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, 2.0]


def test_attribute_ops_match_onnxruntime():
    check_op(mo.CeluOp, [X], {"alpha": 0.7})
    check_op(mo.ThresholdedReluOp, [X], {"alpha": 0.4})
    special = np.array([np.nan, np.inf, -np.inf, 0.0, 1.5], np.float32)
    check_op(mo.IsNaNOp, [special])
    for pos, neg in ((1, 1), (1, 0), (0, 1)):
        check_op(mo.IsInfOp, [special], {"detect_positive": pos, "detect_negative": neg})


def test_cast_like_takes_the_second_operands_type():
    check_op(CastLikeOp, [X * 10, np.zeros(1, np.int32)], opset=19)
    check_op(CastLikeOp, [np.array([0, 1, 2], np.int64), np.zeros(2, np.float16)], opset=19)


def test_integer_inputs_are_refused():
    with pytest.raises(ShapeError, match="Sin takes floating-point tensors, not i32"):
        build_op(BY_NAME["Sin"], [np.ones(3, np.int32)])
