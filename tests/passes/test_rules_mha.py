"""selects-as-split and matmul-operand-scales: nn.MultiheadAttention's dynamo export."""

from __future__ import annotations

from collections import Counter

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from tests.passes.semantics import run_pipeline_checked
from tests.passes.test_rules_arith import _check_bitwise
from tilegraph.builder import GraphBuilder
from tilegraph.passes.statistics import collecting_statistics

RNG = np.random.default_rng(7)


def _rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _ops(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


def _packed_selects(order: tuple[int, ...]) -> ModuleOp:
    """x [S, 3E] -> reshape [S, 3, E] -> transpose [3, S, E] -> select each of 0..2."""
    b = GraphBuilder()
    x = b.input("x", [5, 12])
    packed = b.op("reshape", x, b.constant(np.array([5, 3, 4], np.int64)))
    packed = b.op("transpose", packed, perm=[1, 0, 2])
    parts = [b.op("gather", packed, b.constant(np.array(i, np.int64)), axis=0) for i in order]
    return b.build(*parts)


def test_selects_as_split_bit_exact_with_nan():
    module = _packed_selects((2, 0, -2))
    x = _rand(5, 12)
    x[1, 3] = np.nan  # a NaN in one part must stay in that part only
    _check_bitwise(module, "algebraic-simplify{only=selects-as-split}", {"x": x})
    ops = _ops(module)
    assert ops["graph.gather"] == 0 and ops["graph.split"] == 1 and ops["graph.squeeze"] == 3


def test_selects_as_split_needs_every_index_once():
    module = _packed_selects((0, 1, 1))
    _check_bitwise(module, "algebraic-simplify{only=selects-as-split}", {"x": _rand(5, 12)})
    assert _ops(module)["graph.gather"] == 3


def _scaled_scores(a: float) -> ModuleOp:
    b = GraphBuilder()
    q, k = b.input("q", [2, 4, 8]), b.input("k", [2, 8, 4])
    scale = b.constant(np.float32(a))
    return b.build(b.op("matmul", b.op("mul", q, scale), b.op("mul", scale, k)))


def test_operand_scales_power_of_two_bit_exact():
    module = _scaled_scores(0.5)
    inputs = {"q": _rand(2, 4, 8) * np.float32(1e3), "k": _rand(2, 8, 4)}
    _check_bitwise(module, "algebraic-simplify{only=matmul-operand-scales}", inputs)
    assert _ops(module)["graph.mul"] == 1


def test_operand_scales_any_is_fast_math_only():
    a = 12.0**-0.25  # torch's sqrt(1 / sqrt(d)) for d = 12
    module = _scaled_scores(a)
    rules = "matmul-operand-scales,matmul-operand-scales-any"
    run_pipeline_checked(module, f"algebraic-simplify{{only={rules}}}")
    assert _ops(module)["graph.mul"] == 2
    with collecting_statistics() as collector:
        run_pipeline_checked(
            module, f"algebraic-simplify{{only={rules} fast-math=true}}", rtol=1e-5, atol=1e-5
        )
    stats = collector.as_dict()["algebraic-simplify"]
    assert stats["rule.matmul-operand-scales-any"] == 1
    assert _ops(module)["graph.mul"] == 1
