"""``graph.apply_rotary``: its shape function (broadcast tables, even last axis, float
types) and its reference against the halves written out (Hugging Face's rotate_half)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.dialects.op_harness import build_op
from tilegraph.dialects.graph import ShapeError
from tilegraph.dialects.graph.rotary import ApplyRotaryOp
from tilegraph.dialects.layout_type import TensorType

rng = np.random.default_rng(0)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_reference_rotates_the_halves(dtype: type):
    x = rng.standard_normal((2, 3, 5, 6)).astype(dtype)
    cos, sin = (rng.standard_normal((2, 1, 5, 6)).astype(dtype) for _ in range(2))
    _, op = build_op(ApplyRotaryOp, [x, cos, sin])
    (y,) = op.reference(x, cos, sin)
    x1, x2 = x[..., :3], x[..., 3:]
    first = x1 * cos[..., :3] + (-x2) * sin[..., :3]
    second = x2 * cos[..., 3:] + x1 * sin[..., 3:]
    assert y.dtype == dtype and y.shape == x.shape
    np.testing.assert_array_equal(y, np.concatenate([first, second], axis=-1))


def test_result_type_is_the_broadcast_shape():
    x = np.zeros((2, 3, 5, 8), np.float32)
    _, op = build_op(ApplyRotaryOp, [x, np.zeros((2, 1, 5, 8), np.float32), x[:1, :1]])
    result = op.results[0].type
    assert isinstance(result, TensorType) and list(result.origin_shape) == [2, 3, 5, 8]


@pytest.mark.parametrize(
    ("x", "table", "message"),
    [
        (np.zeros((2, 5), np.float32), np.zeros((2, 5), np.float32), "even part"),
        (np.zeros((2, 4), np.int32), np.zeros((2, 4), np.int32), "floating-point"),
        (np.zeros((2, 4), np.float32), np.zeros((2, 4), np.float16), "x's element type"),
        (np.zeros((4,), np.float32), np.zeros((2, 4), np.float32), "broadcast to x"),
    ],
)
def test_bad_operands_are_rejected(x: np.ndarray, table: np.ndarray, message: str):
    with pytest.raises(ShapeError, match=message):
        build_op(ApplyRotaryOp, [x, table, table])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_interleaved_reference_rotates_adjacent_pairs(dtype: type):
    # GPT-J's rotate_every_two written out: stack((-x[1::2], x[::2]), -1).flatten(-2)
    x = rng.standard_normal((2, 3, 5, 6)).astype(dtype)
    cos, sin = (rng.standard_normal((2, 1, 5, 6)).astype(dtype) for _ in range(2))
    _, op = build_op(ApplyRotaryOp, [x, cos, sin], {"interleaved": 1})
    (y,) = op.reference(x, cos, sin)
    every_two = np.stack([-x[..., 1::2], x[..., ::2]], axis=-1).reshape(x.shape)
    assert y.dtype == dtype and y.shape == x.shape
    np.testing.assert_array_equal(y, x * cos + every_two * sin)


@pytest.mark.parametrize("interleaved", [0, 1])
def test_partial_rotary_passes_the_rest_through(interleaved: int):
    # Phi / GPT-J: the first rotary_dim = 4 of 10 rotate (tables 4 wide), the rest is x's
    x = rng.standard_normal((2, 3, 5, 10)).astype(np.float32)
    cos, sin = (rng.standard_normal((2, 1, 5, 4)).astype(np.float32) for _ in range(2))
    attrs = {"rotary_dim": 4, "interleaved": interleaved}
    _, op = build_op(ApplyRotaryOp, [x, cos, sin], attrs)
    (y,) = op.reference(x, cos, sin)
    _, whole = build_op(ApplyRotaryOp, [x[..., :4], cos, sin], {"interleaved": interleaved})
    (rotated,) = whole.reference(x[..., :4], cos, sin)
    result = op.results[0].type
    assert isinstance(result, TensorType) and list(result.origin_shape) == [2, 3, 5, 10]
    assert y.shape == x.shape
    np.testing.assert_array_equal(y[..., :4], rotated)
    np.testing.assert_array_equal(y[..., 4:], x[..., 4:])


def test_rotary_dim_must_be_even_and_inside_x():
    x, table = np.zeros((2, 8), np.float32), np.zeros((2, 3), np.float32)
    with pytest.raises(ShapeError, match="even part"):
        build_op(ApplyRotaryOp, [x, table, table], {"rotary_dim": 3})
    with pytest.raises(ShapeError, match=r"rotary_dim 10 is past the last axis of 8"):
        wide = np.zeros((2, 10), np.float32)
        build_op(ApplyRotaryOp, [x, wide, wide], {"rotary_dim": 10})
