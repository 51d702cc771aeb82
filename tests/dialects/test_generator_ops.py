"""Range, EyeLike, Trilu, CumSum, CumProd, Hardmax, GatherElements and the two losses
against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.dialects.op_harness import Const, build_op, check_op
from tilegraph.dialects.graph import ShapeError
from tilegraph.dialects.graph import generators as ge
from tilegraph.dialects.graph.indexing import GatherElementsOp
from tilegraph.dialects.graph.losses import NegativeLogLikelihoodLossOp, SoftmaxCrossEntropyLossOp
from tilegraph.dialects.layout_type import TensorType

rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4, 5)).astype(np.float32)


def test_range_lengths_are_known_from_constants():
    for start, limit, delta in ((1, 10, 3), (10.0, 1.0, -2.5), (0, 0, 1)):
        dt = np.float32 if isinstance(start, float) else np.int64
        operands = [Const(np.array(v, dt)) for v in (start, limit, delta)]
        (y,) = check_op(ge.RangeOp, operands, opset=11)
        _, op = build_op(ge.RangeOp, operands)
        t = op.results[0].type
        assert isinstance(t, TensorType) and t.origin_shape == (len(y),)


def test_range_of_run_time_scalars_has_an_unknown_length():
    scalars = [np.array(v, np.int64) for v in (2, 9, 2)]
    _, op = build_op(ge.RangeOp, scalars)
    t = op.results[0].type
    assert isinstance(t, TensorType) and t.origin_shape == (-1,)
    assert op.reference(*scalars)[0].tolist() == [2, 4, 6, 8]


def test_range_of_shape_arithmetic_is_known_once_shapes_are_bound():
    """A KV-cache decoder's position ids: ``Range(past, past + seq)`` with ``past`` and
    ``seq`` read from the inputs' shapes. Bound to static shapes (the tiles' import), the
    length is known; it was unknown, so every call was tiled again as data-dependent."""
    import onnx.helper as oh
    from onnx import TensorProto

    from tilegraph.frontend import load_onnx
    from tilegraph.symbolic import ShapeEnv

    def dim(name: str, source: str, axis: int) -> list:
        shape = oh.make_node("Shape", [source], [f"{name}_shape"])
        index = oh.make_node("Constant", [], [f"{name}_axis"], value_int=axis)
        return [shape, index, oh.make_node("Gather", [f"{name}_shape", f"{name}_axis"], [name])]

    nodes = [
        *dim("past", "past_key", 2),
        *dim("seq", "ids", 1),
        oh.make_node("Add", ["past", "seq"], ["total"]),
        oh.make_node("Constant", [], ["one"], value_int=1),
        oh.make_node("Range", ["past", "total", "one"], ["positions"]),
    ]
    graph = oh.make_graph(
        nodes,
        "positions",
        [
            oh.make_tensor_value_info("ids", TensorProto.INT64, ["b", "s"]),
            oh.make_tensor_value_info("past_key", TensorProto.FLOAT, ["b", 4, "p", 8]),
        ],
        [oh.make_tensor_value_info("positions", TensorProto.INT64, None)],
    )
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])
    shapes = {"ids": (2, 5), "past_key": (2, 4, 9, 8)}
    module = load_onnx(model, shape_env=ShapeEnv("static"), input_shapes=shapes)
    (op,) = [o for o in module.walk() if isinstance(o, ge.RangeOp)]
    t = op.results[0].type
    assert isinstance(t, TensorType) and t.origin_shape == (5,)


@pytest.mark.parametrize(("upper", "k"), [(1, 0), (0, 1), (1, -2)])
def test_trilu(upper, k):
    check_op(ge.TriluOp, [X, Const(np.array(k, np.int64))], {"upper": upper}, opset=14)


@pytest.mark.parametrize(("exclusive", "reverse"), [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumulative_ops(exclusive, reverse):
    attrs = {"exclusive": exclusive, "reverse": reverse}
    check_op(ge.CumSumOp, [X, Const(np.array(1, np.int64))], attrs, opset=14)
    small = (rng.uniform(0.5, 1.5, (3, 4))).astype(np.float32)
    check_op(ge.CumProdOp, [small, Const(np.array(-1, np.int64))], attrs, opset=26, atol=1e-5)


def test_hardmax_eye_like_and_gather_elements():
    ties = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]], np.float32)
    (y,) = check_op(ge.HardmaxOp, [ties])
    assert y.tolist() == [[0, 1, 0], [1, 0, 0]]  # the first maximum
    check_op(ge.EyeLikeOp, [np.zeros((3, 5), np.float32)], {"k": 1})
    idx = rng.integers(-4, 4, (3, 2, 5)).astype(np.int64)
    check_op(GatherElementsOp, [X, idx], {"axis": 1})


def test_gather_elements_indices_smaller_off_the_axis_read_the_leading_part():
    """onnxruntime crops the data to the indices off the axis; larger indices are refused."""
    idx = rng.integers(-4, 4, (2, 3, 4)).astype(np.int64)
    check_op(GatherElementsOp, [X, idx], {"axis": 1})  # X is [3, 4, 5]
    with pytest.raises(ShapeError, match="indices dim 2 is 6, larger than the data's 5"):
        build_op(GatherElementsOp, [X, Const(np.zeros((3, 2, 6), np.int64))], {"axis": 1})


def test_gather_elements_out_of_range_is_refused():
    with pytest.raises(ShapeError, match="index 4 is out of range for an axis of size 4"):
        build_op(GatherElementsOp, [X, Const(np.full((3, 1, 5), 4, np.int64))], {"axis": 1})


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_losses(reduction):
    scores = rng.standard_normal((4, 3, 2)).astype(np.float32)
    labels = rng.integers(0, 3, (4, 2)).astype(np.int64)
    labels[0, 0] = 1
    weight = np.array([0.2, 1.0, 0.7], np.float32)
    attrs = {"reduction": reduction, "ignore_index": 1}
    check_op(NegativeLogLikelihoodLossOp, [scores, labels, weight], attrs, opset=13)
    check_op(SoftmaxCrossEntropyLossOp, [scores, labels], {"reduction": reduction}, opset=13)


def test_layer_norm_with_its_statistics_matches_onnxruntime():
    from tilegraph.dialects.graph.normalization import LayerNormStatsOp

    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    scale = rng.standard_normal((3, 4)).astype(np.float32)
    bias = rng.standard_normal((3, 4)).astype(np.float32)
    y, mean, inv_std = check_op(LayerNormStatsOp, [x, scale, bias], {"axis": 1})
    assert mean.shape == inv_std.shape == (2, 1, 1)


def test_shape_computations_of_static_tensors_are_known_values():
    """Concat(Slice(Shape(x)), ConstantOfShape(Size(Shape(x)) - 1)): the shape an exporter
    computes for LayerNormalization's Mean is known when x's shape is static."""
    from xdsl.dialects.builtin import f32, i64
    from xdsl.ir import Block

    from tilegraph.dialects.graph import ConstantOp
    from tilegraph.dialects.graph.binary import SubOp
    from tilegraph.dialects.graph.constant_ops import ConstantOfShapeOp, ShapeOp, SizeOp
    from tilegraph.dialects.graph.data_movement import ConcatOp, SliceOp
    from tilegraph.dialects.graph.dense import DenseAttr
    from tilegraph.dialects.graph.operand_values import known_value

    (x,) = Block(arg_types=[TensorType([2, 3, 4], f32)]).args
    shape = ShapeOp.make(x).results[0]
    one = ConstantOp(np.array([1], np.int64)).results[0]
    zero = ConstantOp(np.array([0], np.int64)).results[0]
    prefix = SliceOp.make(shape, zero, one).results[0]
    rank = SizeOp.make(shape).results[0]
    rest = SubOp.make(rank, one).results[0]
    fill = DenseAttr.from_array(np.array([1], np.int64))
    suffix = ConstantOfShapeOp.make(rest, value=fill).results[0]
    reduced = ConcatOp.make(prefix, suffix, axis=0).results[0]
    assert suffix.type == TensorType([2], i64)
    value = known_value(reduced)
    assert value is not None and value.tolist() == [2, 1, 1]
