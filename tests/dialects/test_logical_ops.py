"""Logical, comparison, bitwise, BitShift, Mod, Not and Where against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.dialects.op_harness import build_op, check_op
from tilegraph.dialects.graph import ShapeError
from tilegraph.dialects.graph import logical as lo

rng = np.random.default_rng(0)
BY_NAME = {cls.ONNX_OP: cls for cls in lo.TABLE_OPS}
A_BOOL = rng.integers(0, 2, (3, 4)).astype(bool)
B_BOOL = rng.integers(0, 2, (4,)).astype(bool)


@pytest.mark.parametrize("onnx_op", ["And", "Or", "Xor"])
def test_logical_ops_broadcast(onnx_op):
    check_op(BY_NAME[onnx_op], [A_BOOL, B_BOOL])


@pytest.mark.parametrize("onnx_op", ["GreaterOrEqual", "LessOrEqual"])
def test_comparisons(onnx_op):
    a = rng.integers(-3, 3, (3, 4)).astype(np.float32)
    check_op(BY_NAME[onnx_op], [a, a[:1]])
    check_op(BY_NAME[onnx_op], [a.astype(np.int64), a[0].astype(np.int64)])


@pytest.mark.parametrize("onnx_op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
def test_bitwise_ops(onnx_op):
    a = rng.integers(-100, 100, (3, 4)).astype(np.int32)
    check_op(BY_NAME[onnx_op], [a, a[::-1]], opset=18)
    check_op(lo.BitwiseNotOp, [a], opset=18)


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_unsigned_bit_shifts(direction):
    x = np.array([1, 4, 255, 16], np.uint8)
    check_op(lo.BitShiftOp, [x, np.array([1, 2, 1, 3], np.uint8)], {"direction": direction})


@pytest.mark.parametrize("fmod", [0, 1])
def test_mod_signs(fmod):
    a = np.array([-4, 7, 5, 4, -7, 8], np.int32)
    b = np.array([2, -3, 8, -2, 3, 5], np.int32)
    check_op(lo.ModOp, [a, b], {"fmod": fmod})
    if fmod:
        check_op(lo.ModOp, [a.astype(np.float32) + 0.5, b.astype(np.float32)], {"fmod": 1})


def test_not_and_where():
    check_op(lo.NotOp, [A_BOOL])
    x = rng.standard_normal((3, 4)).astype(np.float32)
    check_op(lo.WhereOp, [A_BOOL, x, np.float32(0.5) * np.ones((4,), np.float32)])


def test_wrong_element_types_are_refused():
    with pytest.raises(ShapeError, match="And takes bool tensors, not f32"):
        build_op(BY_NAME["And"], [np.ones(2, np.float32), np.ones(2, np.float32)])
    with pytest.raises(ShapeError, match='direction "LEFT" or "RIGHT"'):
        build_op(lo.BitShiftOp, [np.ones(2, np.uint8), np.ones(2, np.uint8)], {"direction": "UP"})
    with pytest.raises(ShapeError, match="condition must be bool"):
        x = np.ones(2, np.float32)
        build_op(lo.WhereOp, [x, x, x])
