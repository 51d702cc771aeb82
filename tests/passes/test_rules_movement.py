"""Rules 38 and 39: sibling convs / matmuls combined when it pays; casts and transposes
moved across Concat and Slice."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from xdsl.dialects.func import FuncOp

from tests.passes.semantics import run_pipeline_checked
from tilegraph.builder import GraphBuilder
from tilegraph.dialects.graph.binary import AddOp
from tilegraph.dialects.graph.data_movement import SplitOp

RNG = np.random.default_rng(5)


def _ops(module) -> Counter[str]:
    return Counter(op.name for op in module.walk() if op.name != "graph.constant")


def _w(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("bias", [True, False])
def test_sibling_convs_become_one(bias: bool):
    b = GraphBuilder()
    x = b.input("x", [1, 4, 6, 6], origin_format="NCHW")
    outs = []
    for cout in (3, 5, 2):
        w = b.constant(_w(cout, 4, 1, 1), "NCHW")
        outs.append(b.op("conv2d", x, w, b.constant(_w(cout)) if bias else None))
    module = b.build(*(b.op("concat", *outs, axis=1), *outs))
    run_pipeline_checked(module, "algebraic-simplify{only=combine-parallel},dce")
    ops = _ops(module)
    assert ops["graph.conv2d"] == 1 and ops["graph.split"] == 1


def test_siblings_with_epilogues_stay_apart():
    """Inception's branches: each 1x1 conv has a ReLU that fuses into it; after a Split the
    ReLUs would be kernels of their own, so combining costs launches."""
    b = GraphBuilder()
    x = b.input("x", [1, 4, 6, 6], origin_format="NCHW")
    outs = [b.op("relu", b.op("conv2d", x, b.constant(_w(3, 4, 1, 1), "NCHW"))) for _ in range(3)]
    module = b.build(*outs)
    run_pipeline_checked(module, "algebraic-simplify{only=combine-parallel}")
    assert _ops(module)["graph.conv2d"] == 3


def test_sibling_matmuls_become_one():
    b = GraphBuilder()
    x = b.input("x", [4, 8])
    outs = [b.op("matmul", x, b.constant(_w(8, n))) for n in (8, 8, 8)]
    module = b.build(*outs)
    run_pipeline_checked(module, "algebraic-simplify{only=combine-parallel},dce")
    assert _ops(module)["graph.matmul"] == 1


def test_siblings_of_a_returned_input_become_one():
    """The shared input is also a result of the function (AIMv2 returns its last hidden
    state and projects it): the ``func.return`` among its users is no sibling."""
    b = GraphBuilder()
    x = b.op("relu", b.input("x", [2, 4, 8]))
    outs = [b.op("matmul", x, b.constant(_w(8, 8))) for _ in range(3)]
    module = b.build(x, *outs)
    run_pipeline_checked(module, "algebraic-simplify{only=combine-parallel},dce")
    assert _ops(module)["graph.matmul"] == 1


def _projections(b: GraphBuilder, x, biases: list, bias_first: bool = False) -> list:
    """BERT's Q, K, V: ``MatMul(x, Wi)`` plus ``biases[i]`` (an operand; None: no Add)."""
    outs = []
    for bias in biases:
        mm = b.op("matmul", x, b.constant(_w(8, 8)))
        if bias is None:
            outs.append(mm)
        else:
            outs.append(b.op("add", bias, mm) if bias_first else b.op("add", mm, bias))
    return outs


@pytest.mark.parametrize("bias_shape", [(8,), (1, 1, 8)])
@pytest.mark.parametrize("bias_first", [False, True])
def test_sibling_matmuls_combine_with_their_row_biases(bias_shape, bias_first: bool):
    """The bias Adds are no lost epilogues: they become one Add of the concatenated biases
    after the combined MatMul, before the Split (outputs checked by the interpreter)."""
    b = GraphBuilder()
    x = b.input("x", [2, 5, 8])
    biases = [b.constant(_w(*bias_shape)) for _ in range(3)]
    module = b.build(*_projections(b, x, biases, bias_first))
    run_pipeline_checked(module, "algebraic-simplify{only=combine-parallel},dce")
    ops = _ops(module)
    assert (ops["graph.matmul"], ops["graph.add"], ops["graph.split"]) == (1, 1, 1)
    split = next(op for op in module.walk() if isinstance(op, SplitOp))
    assert isinstance(split.operands[0].owner, AddOp)


def test_row_biased_matmuls_keep_their_result_users():
    """What read each bias Add's result (BERT's head reshape) reads the Split's result."""
    b = GraphBuilder()
    x = b.input("x", [2, 5, 8])
    heads = b.constant(np.array([2, 5, 2, 4]))
    outs = _projections(b, x, [b.constant(_w(8)) for _ in range(3)])
    module = b.build(
        *(b.op("transpose", b.op("reshape", o, heads), perm=[0, 2, 1, 3]) for o in outs)
    )
    run_pipeline_checked(module, "algebraic-simplify{only=combine-parallel},dce")
    assert _ops(module)["graph.matmul"] == 1


def _refused(b: GraphBuilder, *outs) -> None:
    module = b.build(*outs)
    run_pipeline_checked(module, "algebraic-simplify{only=combine-parallel},dce")
    assert _ops(module)["graph.matmul"] == 3


def test_a_bias_that_is_no_constant_row_is_not_combined():
    """A bias computed at run time, or one that varies over the rows ([5, 8]: a position
    term, not a bias of the projection), stays with its matmul."""
    for make_bias in (lambda b: b.input("b", [8]), lambda b: b.constant(_w(5, 8))):
        b = GraphBuilder()
        x = b.input("x", [2, 5, 8])
        bias = make_bias(b)
        _refused(b, *_projections(b, x, [b.constant(_w(8)), b.constant(_w(8)), bias]))


def test_biased_and_unbiased_siblings_are_not_combined():
    b = GraphBuilder()
    x = b.input("x", [2, 5, 8])
    _refused(b, *_projections(b, x, [b.constant(_w(8)), b.constant(_w(8)), None]))


def test_a_matmul_read_besides_its_bias_add_is_not_combined():
    """Its product without the bias is still needed: the combined op does not make it."""
    b = GraphBuilder()
    x = b.input("x", [2, 5, 8])
    product = b.op("matmul", x, b.constant(_w(8, 8)))
    other = b.op("relu", product)  # the product's first user, then its bias Add
    outs = [b.op("add", product, b.constant(_w(8)))]
    outs += _projections(b, x, [b.constant(_w(8)) for _ in range(2)])
    _refused(b, *outs, other)


def test_a_2d_matmul_bias_waits_for_its_gemm_fold():
    """A 2-D input's bias Add is fold-batchnorm's (MatMul + Add -> Gemm): not combined."""
    b = GraphBuilder()
    x = b.input("x", [5, 8])
    _refused(b, *_projections(b, x, [b.constant(_w(8)) for _ in range(3)]))


SCALE = "algebraic-simplify{only=combine-parallel,combined-projection-scale},dce"


def _scaled_pieces(b: GraphBuilder, scale, *, other=None) -> list:
    """An SDPA export's q and k: biased projections (and two more), q and k scaled by
    ``scale``; ``other(b, k)`` adds a reader of k's result. Rule 38 counts a scale it can
    fold as no lost epilogue; combined-projection-scale then folds it."""
    x = b.input("x", [2, 5, 8])
    q, k, v, u = _projections(b, x, [b.constant(_w(8)) for _ in range(4)])
    outs = [b.op("mul", q, scale), b.op("mul", scale, k), v, u]
    return outs if other is None else [*outs, other(b, k)]


def test_a_scale_of_a_combined_piece_folds_into_its_columns():
    """q and k scaled: their columns of the combined weight and bias take the scale, the
    Muls go (not bit-exact: ``x·(W·c)`` rounds apart from ``(x·W)·c``)."""
    b = GraphBuilder()
    module = b.build(*_scaled_pieces(b, b.constant(np.array(0.6, np.float32))))
    run_pipeline_checked(module, SCALE, rtol=1e-5, atol=1e-5)
    ops = _ops(module)
    assert (ops["graph.matmul"], ops["graph.mul"], ops["graph.split"]) == (1, 0, 1)


def test_a_piece_whose_shape_is_read_takes_its_scale():
    """torch's SDPA export reads k's shape through its head reshape: that reader still
    sees the same shape, so the scale folds."""
    b = GraphBuilder()
    heads = b.constant(np.array([2, 5, 2, 4]))

    def shape_of(b: GraphBuilder, k):
        return b.op("shape", b.op("transpose", b.op("reshape", k, heads), perm=[0, 2, 1, 3]))

    module = b.build(*_scaled_pieces(b, b.constant(np.array(0.6, np.float32)), other=shape_of))
    run_pipeline_checked(module, SCALE, rtol=1e-5, atol=1e-5)
    assert _ops(module)["graph.mul"] == 0


def test_scales_that_do_not_fold_stay():
    """A scale computed at run time or one that varies over the rows keeps its Mul; so does
    a piece also read unscaled (k's, read by a ReLU; q's scale folds)."""
    cases = [
        (lambda b: b.input("s", []), None, 2),
        (lambda b: b.constant(_w(5, 1)), None, 2),
        (lambda b: b.constant(np.array(0.6, np.float32)), lambda b, k: b.op("relu", k), 1),
    ]
    for make_scale, other, muls in cases:
        b = GraphBuilder()
        module = b.build(*_scaled_pieces(b, make_scale(b), other=other))
        run_pipeline_checked(module, SCALE, rtol=1e-5, atol=1e-5)
        assert _ops(module)["graph.mul"] == muls


def test_siblings_wait_for_their_batchnorm_fold():
    b = GraphBuilder()
    x = b.input("x", [1, 4, 6, 6], origin_format="NCHW")
    outs = []
    for _ in range(3):
        conv = b.op("conv2d", x, b.constant(_w(4, 4, 1, 1), "NCHW"))
        outs.append(b.op("mul", conv, b.constant(_w(4, 1, 1))))
    module = b.build(*outs)
    run_pipeline_checked(module, "algebraic-simplify{only=combine-parallel}")
    assert _ops(module)["graph.conv2d"] == 3
    run_pipeline_checked(module, "fold-batchnorm,algebraic-simplify{only=combine-parallel},dce")
    assert _ops(module)["graph.conv2d"] == 1


def test_two_siblings_do_not_pay():
    """Two launches become two (conv + split) and the split copies the outputs: no gain."""
    b = GraphBuilder()
    x = b.input("x", [1, 4, 6, 6], origin_format="NCHW")
    module = b.build(*(b.op("conv2d", x, b.constant(_w(4, 4, 1, 1), "NCHW")) for _ in range(2)))
    run_pipeline_checked(module, "algebraic-simplify{only=combine-parallel}")
    assert _ops(module)["graph.conv2d"] == 2


def test_different_attributes_are_not_combined():
    b = GraphBuilder()
    x = b.input("x", [1, 4, 6, 6], origin_format="NCHW")
    a = b.op("conv2d", x, b.constant(_w(2, 4, 3, 3), "NCHW"), pads=[1, 1, 1, 1])
    c = b.op("conv2d", x, b.constant(_w(2, 4, 3, 3), "NCHW"))
    module = b.build(a, c)
    run_pipeline_checked(module, "algebraic-simplify{only=combine-parallel}")
    assert _ops(module)["graph.conv2d"] == 2


def test_concat_of_casts_and_transposes():
    b = GraphBuilder()
    x = b.input("x", [2, 3])
    y = b.input("y", [4, 3])
    casts = b.op("concat", b.op("cast", x, to=11), b.op("cast", y, to=11), axis=0)
    t = b.op("concat", *(b.op("transpose", v, perm=[1, 0]) for v in (x, y)), axis=1)
    module = b.build(casts, t)
    run_pipeline_checked(
        module, "algebraic-simplify{only=concat-of-casts,concat-of-transposes},dce"
    )
    ops = _ops(module)
    assert ops["graph.cast"] == 1 and ops["graph.transpose"] == 1 and ops["graph.concat"] == 2


def test_mixed_source_types_are_not_merged():
    b = GraphBuilder()
    x = b.input("x", [2, 3])
    y = b.input("y", [2, 3], "float64")
    module = b.build(b.op("concat", b.op("cast", x, to=10), b.op("cast", y, to=10), axis=0))
    run_pipeline_checked(module, "algebraic-simplify{only=concat-of-casts}")
    assert _ops(module)["graph.cast"] == 2


def test_slice_moves_before_cast_and_transpose():
    b = GraphBuilder()
    x = b.input("x", [4, 6])
    starts, ends = b.constant(np.array([1])), b.constant(np.array([3]))
    s1 = b.op("slice", b.op("cast", x, to=11), starts, ends, b.constant(np.array([1])))
    s2 = b.op("slice", b.op("transpose", x, perm=[1, 0]), starts, ends, b.constant(np.array([0])))
    module = b.build(s1, s2)
    run_pipeline_checked(
        module, "algebraic-simplify{only=slice-before-cast,slice-before-transpose},dce"
    )
    fn = next(iter(module.ops))
    assert isinstance(fn, FuncOp)
    order = [op.name for op in fn.body.blocks[0].ops if op.name != "graph.constant"]
    assert order.index("graph.cast") > order.index("graph.slice")
    assert order.count("graph.slice") == 2


@pytest.mark.parametrize(
    ("batch", "m", "regroup", "folded"),
    [
        ([2, 3], 16, False, True),
        ([4], 16, False, True),
        ([2, 3], 16, True, False),
        ([1], 5, False, True),  # one slice: nothing padded more than the flat form
        ([30], 2, False, False),  # 30 slices of 2 rows, each padded to 16: kept flat
    ],
)
def test_reshape_across_matmul(batch: list[int], m: int, regroup: bool, folded: bool):
    b = GraphBuilder()
    x = b.input("x", [*batch, m, 8])
    rows = int(np.prod(batch)) * m
    flat = b.op("reshape", x, b.constant(np.array([rows, 8])))
    mm = b.op("matmul", flat, b.constant(_w(8, 6)))
    back = [*batch, m, 6] if not regroup else [m, *batch, 6]
    module = b.build(b.op("reshape", mm, b.constant(np.array(back))))
    run_pipeline_checked(module, "algebraic-simplify{only=reshape-across-matmul},dce")
    assert (_ops(module)["graph.reshape"] == 0) == folded
