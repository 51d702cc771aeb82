"""projection-parts-outermost: a fused projection viewed with its parts on an inner axis
(BLOOM's ``[B, S, H, 3, D]``, Falcon's ``[B, S, n_kv, q_per_kv + 2, D]``) computes its parts
contiguously; values stay bit-identical, near misses stay as they are."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import SSAValue

from tests.passes.test_rules_arith import _check_bitwise
from tilegraph.builder import GraphBuilder
from tilegraph.dialects.graph.binary import AddOp
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.layout_type import TensorType

RNG = np.random.default_rng(25)
ONLY = "algebraic-simplify{only=projection-parts-outermost}"
B, S, K = 2, 5, 16


def _i64(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


def _projection(
    b: GraphBuilder,
    view: list[int],
    *,
    bias: bool = True,
    weight_input: bool = False,
    bias_input: bool = False,
) -> tuple[SSAValue, SSAValue]:
    """(the view of x @ W + b as ``view``, the product); W of N = prod(view[2:]) columns;
    W or b inputs of the graph (not constants) with ``weight_input`` / ``bias_input``."""
    n = int(np.prod(view[2:]))
    x = b.input("x", [B, S, K])
    w = (
        b.input("w", [K, n])
        if weight_input
        else b.constant(RNG.standard_normal((K, n)).astype(np.float32))
    )
    product = b.op("matmul", x, w)
    if bias_input:
        y = b.op("add", product, b.input("b", [n]))
    elif bias:
        y = b.op("add", product, b.constant(RNG.standard_normal(n).astype(np.float32)))
    else:
        y = product
    return b.op("reshape", y, b.constant(_i64(*view))), product


def _bloom(b: GraphBuilder, *, take: Callable | None = None, **kw) -> ModuleOp:
    """[B, S, H=2, 3, D=4]: q, k, v the constant selects of axis 3, each then transposed to
    [B, H, S, D] (or ``take(b, view)``'s outputs)."""
    view, _ = _projection(b, [B, S, 2, 3, 4], **kw)
    if take is not None:
        return b.build(*take(b, view))
    parts = [b.op("gather", view, b.constant(np.int64(i)), axis=3) for i in (0, 1, -1)]
    return b.build(*[b.op("transpose", p, perm=[0, 2, 1, 3]) for p in parts])


def _falcon(
    b: GraphBuilder, *, q_end: int = -2, perm: tuple[int, ...] = (3, 0, 1, 2, 4)
) -> ModuleOp:
    """[B, S, n_kv=2, q_per_kv + 2 = 4, D=4]: q = view[..., :q_end, :]; k / v the gathers
    [-2] / [-1] of axis 3 brought first by a Transpose ``perm``, viewed back and expanded to
    the query heads, as transformers' Falcon exports them."""
    view, _ = _projection(b, [B, S, 2, 4, 4], bias=False)
    q = b.op("slice", view, b.constant(_i64(0)), b.constant(_i64(q_end)), b.constant(_i64(3)))
    moved = b.op("transpose", view, perm=list(perm))
    axis = perm.index(3)
    kv = [b.op("gather", moved, b.constant(_i64(i)), axis=axis) for i in (-2, -1)]
    shape = b.constant(_i64(B, S, 2, 1, 4))
    heads = b.constant(_i64(B, S, 2, 2, 4))
    return b.build(q, *[b.op("expand", b.op("reshape", t, shape), heads) for t in kv])


def _ops(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


def _inputs(module: ModuleOp) -> dict[str, np.ndarray]:
    """Random data for every input of ``module`` (x, and W or b when they are inputs)."""
    (main,) = [op for op in module.walk() if isinstance(op, FuncOp)]
    inputs = {}
    for arg in main.body.block.args:
        assert isinstance(arg.type, TensorType) and arg.name_hint is not None
        shape = [int(d) for d in arg.type.origin_shape]  # type: ignore[arg-type]
        inputs[arg.name_hint] = RNG.standard_normal(shape).astype(np.float32)
    inputs["x"][1, 3, 2] = np.nan  # a NaN row stays in its rows of every part
    return inputs


def _split_of_the_product(module: ModuleOp) -> list[int]:
    """The widths of the Split that reads the projection (its last axis)."""
    (split,) = [op for op in module.walk() if op.name == "graph.split"]
    assert isinstance(split.operands[0].owner, AddOp | MatMulOp)
    assert int(split.properties["axis"].value.data) == 2  # type: ignore[attr-defined]
    return [int(r.type.origin_shape[2]) for r in split.results]  # type: ignore[attr-defined]


def test_bloom_selects_on_an_inner_axis_become_a_split_of_the_projection():
    module = _bloom(GraphBuilder())
    _check_bitwise(module, ONLY, _inputs(module))
    ops = _ops(module)
    assert ops["graph.gather"] == 0 and _split_of_the_product(module) == [8, 8, 8]


def test_bloom_split_on_an_inner_axis_becomes_a_split_of_the_projection():
    """selects-as-split's form: one Split of axis 3 into three pieces."""

    def split(b: GraphBuilder, view: SSAValue) -> list[SSAValue]:
        return list(b.op_results("split", view, b.constant(_i64(1, 1, 1)), axis=3))

    module = _bloom(GraphBuilder(), take=split)
    _check_bitwise(module, ONLY, _inputs(module))
    assert _split_of_the_product(module) == [8, 8, 8]


def test_falcon_query_group_and_gathered_kv_become_a_split_of_the_projection():
    module = _falcon(GraphBuilder())
    _check_bitwise(module, ONLY, _inputs(module))
    ops = _ops(module)
    assert ops["graph.gather"] == ops["graph.slice"] == ops["graph.transpose"] == 0
    assert _split_of_the_product(module) == [16, 8, 8]  # q's 2 groups x 2 heads, k, v


def _partial(b: GraphBuilder, view: SSAValue) -> list[SSAValue]:
    """Parts 0 and 1 of axis 3 only (part 2 unread)."""
    return [b.op("gather", view, b.constant(np.int64(i)), axis=3) for i in (0, 1)]


def _strided(b: GraphBuilder, view: SSAValue) -> list[SSAValue]:
    """Parts 0 and 2 of axis 3 as one strided slice, part 1 as a gather."""
    ends = b.constant(_i64(3))
    both = b.op("slice", view, b.constant(_i64(0)), ends, b.constant(_i64(3)), b.constant(_i64(2)))
    return [both, b.op("gather", view, b.constant(np.int64(1)), axis=3)]


def _overlapping(b: GraphBuilder, view: SSAValue) -> list[SSAValue]:
    """Slices [0, 2) and [1, 3) of axis 3."""
    axes = b.constant(_i64(3))
    return [b.op("slice", view, b.constant(_i64(s)), b.constant(_i64(s + 2)), axes) for s in (0, 1)]


def _other_reader(b: GraphBuilder, view: SSAValue) -> list[SSAValue]:
    """The three selects and the whole view read by a relu."""
    parts = [b.op("gather", view, b.constant(np.int64(i)), axis=3) for i in (0, 1, 2)]
    return [*parts, b.op("relu", view)]


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda b: _bloom(b, take=_partial), id="a-part-unread"),
        pytest.param(lambda b: _bloom(b, take=_strided), id="strided"),
        pytest.param(lambda b: _bloom(b, take=_overlapping), id="overlapping"),
        pytest.param(lambda b: _bloom(b, take=_other_reader), id="view-read-whole"),
        pytest.param(lambda b: _bloom(b, weight_input=True), id="weight-not-constant"),
        pytest.param(lambda b: _bloom(b, bias_input=True), id="bias-not-constant"),
        pytest.param(lambda b: _falcon(b, q_end=1), id="q-partial"),
        # the transpose puts the part's non-1 dims in another order: not a view of it
        pytest.param(lambda b: _falcon(b, perm=(3, 0, 2, 1, 4)), id="transpose-reorders"),
    ],
)
def test_near_misses_stay(build):
    module = build(GraphBuilder())
    before = _ops(module)
    _check_bitwise(module, ONLY, _inputs(module))
    assert _ops(module) == before


def test_a_product_with_another_reader_stays():
    b = GraphBuilder()
    view, product = _projection(b, [B, S, 2, 3, 4], bias=False)
    parts = [b.op("gather", view, b.constant(np.int64(i)), axis=3) for i in (0, 1, 2)]
    module = b.build(*parts, b.op("relu", product))
    before = _ops(module)
    _check_bitwise(module, ONLY, _inputs(module))
    assert _ops(module) == before
