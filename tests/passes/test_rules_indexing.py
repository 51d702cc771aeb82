"""``gather-nd-as-gather``: GatherND by constant index tuples is a Gather of the flattened
indexed dims (DLRM's pairwise-interaction triangle as PyTorch's default exporter writes
it), bit for bit, negative entries included; the tiled model runs with no host op. So is
GatherND by run-time indices of one entry each (the dynamo exporter's ``torch.bucketize``).
``masked-fill-as-where``: the default exporter's masked assignment of one value (ScatterND
at NonZero's positions) is a Where, bit for bit, and runs with no host op."""

from __future__ import annotations

from collections import Counter

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from tests.lowering.test_tile_differential import assert_matches, run_levels
from tests.passes.test_rules_arith import _check_bitwise
from tilegraph.builder import GraphBuilder
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline

RNG = np.random.default_rng(7)
RULE = "algebraic-simplify{only=gather-nd-as-gather}"


def _ops(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


def _triangle(n: int = 5, batch: int = 3) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """z [n, n, batch] (the interaction, batch last) at the strict lower triangle's
    (i, j), one tuple spelled with negative entries -> [K, batch]."""
    li, lj = np.tril_indices(n, -1)
    tuples = np.stack([li, lj], 1).astype(np.int64)
    tuples[2] -= n
    b = GraphBuilder()
    z = b.input("z", [n, n, batch])
    module = b.build(b.op("gather_nd", z, b.constant(tuples)))
    return module, {"z": RNG.standard_normal((n, n, batch)).astype(np.float32)}


def test_gather_nd_of_constant_tuples_is_a_gather_bit_exact():
    module, inputs = _triangle()
    _check_bitwise(module, RULE, inputs)
    ops = _ops(module)
    assert ops["graph.gather_nd"] == 0 and ops["graph.gather"] == 1


def test_gather_nd_with_batch_dims_stays():
    b = GraphBuilder()
    x = b.input("x", [2, 4, 3])
    tuples = np.array([[[1], [3]], [[0], [2]]], np.int64)
    module = b.build(b.op("gather_nd", x, b.constant(tuples), batch_dims=1))
    _check_bitwise(module, RULE, {"x": RNG.standard_normal((2, 4, 3)).astype(np.float32)})
    assert _ops(module)["graph.gather_nd"] == 1


def _lookup(depth: int = 1) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """table [9] (or [3, 3]) read at run-time index tuples [2, 5, depth]."""
    b = GraphBuilder()
    table = b.input("table", [9] if depth == 1 else [3, 3])
    where = b.input("where", [2, 5, depth], dtype="int64")
    module = b.build(b.op("gather_nd", table, where))
    picks = RNG.integers(-3, 3, (2, 5, depth)) if depth > 1 else RNG.integers(-9, 9, (2, 5, 1))
    return module, {
        "table": RNG.standard_normal([9] if depth == 1 else [3, 3]).astype(np.float32),
        "where": picks.astype(np.int64),
    }


def test_gather_nd_of_run_time_single_entries_is_a_gather_bit_exact():
    module, inputs = _lookup()
    _check_bitwise(module, RULE, inputs)
    ops = _ops(module)
    assert ops["graph.gather_nd"] == 0 and ops["graph.gather"] == 1


def test_gather_nd_of_run_time_pairs_stays():
    module, inputs = _lookup(depth=2)
    _check_bitwise(module, RULE, inputs)
    assert _ops(module)["graph.gather_nd"] == 1


def test_the_run_time_lookup_runs_on_the_ai_core():
    module, inputs = _lookup()  # 4-byte rows by run-time index: the host before
    levels = run_levels(module, inputs, "test")
    assert_matches(levels, rtol=0, atol=0)
    assert all(k.unit != "host" for k in levels.tiled_kernels)


def test_the_triangle_runs_on_the_ai_core():
    module, inputs = _triangle(batch=1)  # 4-byte rows: GatherND of them had no kernel
    levels = run_levels(module, inputs, "test")
    assert_matches(levels, rtol=0, atol=0)
    assert all(k.unit != "host" for k in levels.tiled_kernels)


# ---- masked-fill-as-where ----------------------------------------------------------------
FILL_RULE = "algebraic-simplify{only=masked-fill-as-where},dce"


def _masked_fill(mask_shape: list[int] | None = None, fill: float = 0.5, reduction: str = "none"):
    """``y[y < 0] = fill`` as PyTorch's default exporter writes it: ScatterND of the value
    expanded to the mask's count (ReduceSum of the mask) at Transpose(NonZero(mask))."""
    b = GraphBuilder()
    y = b.input("y", [2, 3, 4])
    probe = y if mask_shape is None else b.input("m", mask_shape)
    mask = b.op("less", probe, b.constant(np.float32(0.0)))
    where = b.op("transpose", b.op("non_zero", mask), perm=[1, 0])
    count = b.op(
        "reduce_sum",
        b.op("cast", b.op("reshape", mask, b.constant(np.array([-1]))), to=7),
        keepdims=1,
    )
    updates = b.op("expand", b.constant(np.float32(fill)), count)
    return b.build(b.op("scatter_nd", y, where, updates, reduction=reduction))


def test_a_masked_fill_is_a_where_bit_exact():
    module = _masked_fill()
    inputs = {"y": RNG.standard_normal((2, 3, 4)).astype(np.float32)}
    _check_bitwise(module, FILL_RULE, inputs)
    ops = _ops(module)
    assert ops["graph.scatter_nd"] == 0 and ops["graph.non_zero"] == 0 and ops["graph.where"] == 1


def test_a_mask_of_other_dims_or_a_reduction_stays():
    for module in (_masked_fill(mask_shape=[2, 3]), _masked_fill(reduction="add")):
        run_pipeline(FILL_RULE, make_context(), module)
        assert _ops(module)["graph.scatter_nd"] == 1


def test_the_masked_fill_runs_on_the_ai_core():
    module = _masked_fill()
    levels = run_levels(module, {"y": RNG.standard_normal((2, 3, 4)).astype(np.float32)}, "test")
    assert_matches(levels, rtol=0, atol=0)
    assert all(k.unit != "host" for k in levels.tiled_kernels)


# ---- scatter-nd-as-concat ----------------------------------------------------------------
CONCAT_RULE = "algebraic-simplify{only=scatter-nd-as-concat},dce"


def _shifted(rows: list[int], size: int = 11) -> ModuleOp:
    """BART's shift_tokens_right as the default exporter writes it: zeros [size, 3] with
    the updates scattered at the constant ``rows`` of axis 0."""
    b = GraphBuilder()
    u = b.input("u", [len(rows), 3], dtype="int64")
    zeros = b.constant(np.zeros((size, 3), np.int64))
    where = b.constant(np.array(rows, np.int64).reshape(-1, 1))
    return b.build(b.op("scatter_nd", zeros, where, u))


def test_a_slice_assignment_is_a_concat_bit_exact():
    for rows in (list(range(1, 11)), list(range(0, 4)), [-3, -2, -1], list(range(3, 7))):
        module = _shifted(rows)
        u = RNG.integers(0, 100, (len(rows), 3)).astype(np.int64)
        _check_bitwise(module, CONCAT_RULE, {"u": u})
        ops = _ops(module)
        assert ops["graph.scatter_nd"] == 0 and ops["graph.concat"] == 1, rows


def test_scattered_or_descending_rows_stay():
    for rows in ([1, 3, 5], [4, 3, 2]):
        module = _shifted(rows)
        run_pipeline(CONCAT_RULE, make_context(), module)
        assert _ops(module)["graph.scatter_nd"] == 1


def test_the_shift_runs_on_the_ai_core():
    module = _shifted(list(range(1, 11)))
    u = RNG.integers(0, 100, (10, 3)).astype(np.int64)
    levels = run_levels(module, {"u": u}, "test")
    assert_matches(levels, rtol=0, atol=0)
    assert all(k.unit != "host" for k in levels.tiled_kernels)
