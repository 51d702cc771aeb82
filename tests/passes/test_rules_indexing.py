"""``gather-nd-as-gather``: GatherND by constant index tuples is a Gather of the flattened
indexed dims (DLRM's pairwise-interaction triangle as PyTorch's default exporter writes
it), bit for bit, negative entries included; the tiled model runs with no host op."""

from __future__ import annotations

from collections import Counter

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from tests.lowering.test_tile_differential import assert_matches, run_levels
from tests.passes.test_rules_arith import _check_bitwise
from tilegraph.builder import GraphBuilder

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


def test_the_triangle_runs_on_the_ai_core():
    module, inputs = _triangle(batch=1)  # 4-byte rows: GatherND of them had no kernel
    levels = run_levels(module, inputs, "test")
    assert_matches(levels, rtol=0, atol=0)
    assert all(k.unit != "host" for k in levels.tiled_kernels)
