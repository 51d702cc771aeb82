"""GatherND, ScatterElements, ScatterND, TopK, OneHot, Compress, ReverseSequence and Einsum
against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.dialects.op_harness import Const, build_op, check_op
from tilegraph.dialects.graph import ShapeError
from tilegraph.dialects.graph import indexing as ix

rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4, 5)).astype(np.float32)


def test_gather_nd_with_batch_dims():
    idx = rng.integers(0, 4, (3, 2, 1)).astype(np.int64)
    check_op(ix.GatherNDOp, [X, idx], {"batch_dims": 1})
    check_op(ix.GatherNDOp, [X, rng.integers(0, 3, (2, 2)).astype(np.int64)])


@pytest.mark.parametrize("reduction", ["none", "add", "max"])
def test_scatters(reduction):
    idx = np.array([[[0, 2, 1, 3, 0]] * 4] * 3, np.int64)[:, :2, :]
    upd = rng.standard_normal(idx.shape).astype(np.float32)
    if reduction == "none":  # duplicate indices make "none" order-dependent
        idx = np.broadcast_to(np.arange(2).reshape(1, 2, 1), (3, 2, 5)).astype(np.int64)
    check_op(ix.ScatterElementsOp, [X, idx, upd], {"axis": 1, "reduction": reduction})
    rows = np.array([[0, 1], [2, 3]], np.int64)
    check_op(ix.ScatterNDOp, [X, rows, rng.standard_normal((2, 5)).astype(np.float32)])


@pytest.mark.parametrize("largest", [1, 0])
def test_top_k_breaks_ties_by_lower_index(largest):
    x = np.array([[3, 1, 3, 2], [0, 0, 5, 5]], np.float32)
    check_op(ix.TopKOp, [x, Const(np.array([2], np.int64))], {"largest": largest})
    check_op(ix.TopKOp, [X, Const(np.array([3], np.int64))], {"axis": 1, "largest": largest})


def test_one_hot_compress_reverse_sequence_einsum():
    indices = np.array([[0, 3], [-1, 7]], np.int64)
    check_op(ix.OneHotOp, [indices, Const(np.array(5, np.int64)),
                           Const(np.array([0.0, 2.0], np.float32))], {"axis": 1})  # fmt: skip
    check_op(ix.CompressOp, [X, Const(np.array([True, False, True]))], {"axis": 0})
    check_op(ix.CompressOp, [X, Const(np.array([0, 1, 1, 0, 1], bool))])
    seq = rng.standard_normal((4, 3, 2)).astype(np.float32)
    check_op(ix.ReverseSequenceOp, [seq, np.array([4, 2, 1], np.int64)])
    a, b = X, rng.standard_normal((3, 5, 2)).astype(np.float32)
    check_op(ix.EinsumOp, [a, b], {"equation": "bij,bjk->bik"})
    check_op(ix.EinsumOp, [a], {"equation": "...ij->...ji"})


def test_bad_indices_and_equations_are_refused():
    with pytest.raises(ShapeError, match="index depth 4 exceed"):
        build_op(ix.GatherNDOp, [X, np.zeros((2, 4), np.int64)])
    with pytest.raises(ShapeError, match="Einsum equation 'ij,jk->ik'"):
        build_op(ix.EinsumOp, [X, X], {"equation": "ij,jk->ik"})


@pytest.mark.parametrize(
    ("equation", "shapes", "expected"),
    [
        ("i,j->ij", [["S"], [8]], ["S", 8]),  # piper's positional encoding: an outer product
        ("bij,bjk->bik", [["B", "S", 4], ["B", 4, 6]], ["B", "S", 6]),
        ("...ij,jk", [["B", "S", 4], [4, 6]], ["B", "S", 6]),  # implicit: ellipsis, then i, k
        ("ij,ij->i", [[1, 5], ["N", 5]], ["N"]),  # a 1 broadcasts against a symbol
    ],
)
def test_einsum_shapes_with_symbolic_dims(equation, shapes, expected):
    from tilegraph.builder import GraphBuilder

    b = GraphBuilder()
    operands = [b.input(f"x{i}", shape) for i, shape in enumerate(shapes)]
    out = b.op("einsum", *operands, equation=equation)
    assert [str(d) for d in out.type.origin_shape] == [str(d) for d in expected]


def test_einsum_refuses_a_term_of_the_wrong_rank_with_symbolic_dims():
    from tilegraph.builder import GraphBuilder

    b = GraphBuilder()
    with pytest.raises(ShapeError, match="does not match a rank-2 operand"):
        b.op("einsum", b.input("x", ["N", 4]), equation="ijk->i")
