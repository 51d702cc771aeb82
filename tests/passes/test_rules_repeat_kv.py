"""rotary-before-repeat and scale-before-movement through an Expand: Falcon's keys repeated
for the query heads before their rotary; values stay bit-identical, near misses stay."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from tests.passes.test_rules_arith import _check_bitwise
from tilegraph.builder import GraphBuilder

RNG = np.random.default_rng(5)
RULES = "algebraic-simplify{only=rotary-before-repeat,scale-before-movement}"
B, S, KV, N, D = 2, 5, 2, 3, 4


def _falcon_keys(*, table_heads: int = 1, repeated_axis: int = 3) -> tuple[ModuleOp, dict]:
    """k [B, S, kv, 1, D] repeated n times on ``repeated_axis`` (3: after the kv heads),
    merged to [B, S, kv·n, D], transposed to [B, kv·n, S, D], rotated with tables of
    ``table_heads`` heads, scaled."""
    b = GraphBuilder()
    shape = [B, S, KV, 1, D] if repeated_axis == 3 else [B, S, 1, KV, D]
    k = b.input("k", shape)
    target = [B, S, KV, N, D] if repeated_axis == 3 else [B, S, N, KV, D]
    repeated = b.op("expand", k, b.constant(np.array(target, np.int64)))
    heads = b.op("reshape", repeated, b.constant(np.array([B, S, KV * N, D], np.int64)))
    moved = b.op("transpose", heads, perm=[0, 2, 1, 3])
    table_shape = (1, table_heads, S, D)
    cos, sin = (b.constant(RNG.standard_normal(table_shape).astype(np.float32)) for _ in "cs")
    rotated = b.op("apply_rotary", moved, cos, sin)
    module = b.build(b.op("mul", rotated, b.constant(np.array([0.59460354], np.float32))))
    return module, {"k": RNG.standard_normal(shape).astype(np.float32)}


def _ops(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


def _rotary_and_scale_shapes(module: ModuleOp) -> list[tuple[str, list[int]]]:
    return [
        (op.name, [int(d) for d in op.results[0].type.origin_shape])  # type: ignore[attr-defined]
        for op in module.walk()
        if op.name in ("graph.apply_rotary", "graph.mul")
    ]


def test_falcon_keys_rotate_and_scale_before_their_repeat():
    module, inputs = _falcon_keys()
    _check_bitwise(module, RULES, inputs)
    # the rotary and the scale run on the kv heads, [B, kv, S, D], once each
    assert _rotary_and_scale_shapes(module) == [
        ("graph.apply_rotary", [B, KV, S, D]),
        ("graph.mul", [B, KV, S, D]),
    ]
    assert _ops(module)["graph.expand"] == 1


@pytest.mark.parametrize(
    "kw",
    [
        pytest.param({"table_heads": KV * N}, id="tables-per-head"),
        pytest.param({"repeated_axis": 2}, id="repeat-before-the-kv-heads"),
    ],
)
def test_near_misses_rotate_every_repeated_head(kw):
    module, inputs = _falcon_keys(**kw)
    _check_bitwise(module, RULES, inputs)
    rotary = [s for name, s in _rotary_and_scale_shapes(module) if name == "graph.apply_rotary"]
    assert rotary == [[B, KV * N, S, D]]
