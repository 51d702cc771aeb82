"""``count-in-float``: an integer sum of a boolean mask is the same count summed in float32
(bit for bit in the integer type) while each sum counts at most 2**24 elements, and runs on
the AI core where the integer reduction had no kernel."""

from __future__ import annotations

from collections import Counter

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from tests.lowering.test_tile_differential import assert_matches, run_levels
from tests.passes.test_rules_arith import _check_bitwise
from tilegraph.builder import GraphBuilder
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline

RNG = np.random.default_rng(11)
RULE = "algebraic-simplify{only=count-in-float},dce"
INT64, UINT8 = 7, 2  # ONNX TensorProto numbers


def _count(shape: list[int], axes: list[int] | None, to: int = INT64, keepdims: int = 0):
    """ReduceSum(Cast(x > 0 -> to), axes) of x [shape]."""
    b = GraphBuilder()
    x = b.input("x", shape)
    mask = b.op("cast", b.op("greater", x, b.constant(np.float32(0.0))), to=to)
    operands = [mask] if axes is None else [mask, b.constant(np.array(axes, np.int64))]
    return b.build(b.op("reduce_sum", *operands, keepdims=keepdims))


def _ops(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


def _inputs(shape: list[int]) -> dict[str, np.ndarray]:
    return {"x": RNG.standard_normal(shape).astype(np.float32)}


def test_a_count_is_summed_in_float_bit_exact():
    for axes, keepdims in (([-1], 0), ([0, 2], 1), (None, 0)):
        module = _count([3, 5, 7], axes, keepdims=keepdims)
        _check_bitwise(module, RULE, _inputs([3, 5, 7]))
        ops = _ops(module)
        assert ops["graph.reduce_sum"] == 1 and ops["graph.cast"] == 2, (axes, ops)


def test_a_count_beyond_float32_or_the_type_stays():
    too_long = _count([1, 2**24 + 1], [1])  # only compiled: the rule reads the shape
    run_pipeline(RULE, make_context(), too_long)
    narrow = _count([2, 300], [1], to=UINT8)  # 300 does not fit uint8
    run_pipeline(RULE, make_context(), narrow)
    for module in (too_long, narrow):
        ops = _ops(module)
        assert ops["graph.cast"] == 1 and ops["graph.reduce_sum"] == 1


def test_a_sum_of_other_integers_stays():
    b = GraphBuilder()
    x = b.input("x", [4, 6], dtype="int32")
    module = b.build(b.op("reduce_sum", b.op("cast", x, to=INT64), b.constant(np.array([1]))))
    run_pipeline(RULE, make_context(), module)
    assert _ops(module)["graph.cast"] == 1


def test_the_count_runs_on_the_ai_core():
    module = _count([3, 5, 7], [-1])
    levels = run_levels(module, _inputs([3, 5, 7]), "test")
    assert_matches(levels, rtol=0, atol=0)
    assert all(k.unit != "host" for k in levels.tiled_kernels)


def _one_hot_tokens(tokens: int, experts: int, k: int) -> ModuleOp:
    """A MoE router's tokens per expert (JetMoE's dynamo export): the int64 sum over tokens
    of a float one-hot, ones scattered at the top-k expert ids into expanded zeros."""
    b = GraphBuilder()
    ids = b.input("ids", [tokens, k], dtype="int64")
    zeros = b.op("expand", b.constant(np.float32(0.0)), b.constant(np.array([tokens, experts])))
    ones = b.op(
        "constant_of_shape", b.constant(np.array([tokens, k])), value=np.ones(1, np.float32)
    )
    hot = b.op("scatter_elements", zeros, ids, ones, axis=1)
    counts = b.op("cast", hot, to=INT64)
    return b.build(b.op("reduce_sum", counts, b.constant(np.array([0])), keepdims=0))


def _ids(tokens: int, experts: int, k: int) -> dict[str, np.ndarray]:
    return {"ids": np.stack([RNG.permutation(experts)[:k] for _ in range(tokens)])}


def test_a_float_one_hot_count_is_summed_in_float_bit_exact_on_the_ai_core():
    module = _one_hot_tokens(33, 4, 2)
    _check_bitwise(module, RULE, _ids(33, 4, 2))
    ops = _ops(module)
    assert ops["graph.reduce_sum"] == 1 and ops["graph.cast"] == 1, ops  # nothing cast in
    levels = run_levels(_one_hot_tokens(33, 4, 2), _ids(33, 4, 2), "test")
    assert_matches(levels, rtol=0, atol=0)
    assert all(k.unit != "host" for k in levels.tiled_kernels), levels.tiled_kernels


def test_a_sum_of_narrow_integers_is_an_int32_sum_on_the_ai_core():
    rule = "algebraic-simplify{only=sum-in-int32},dce"

    def build(shape: list[int], dtype: str) -> ModuleOp:
        b = GraphBuilder()
        x = b.op("cast", b.input("x", shape, dtype=dtype), to=INT64)
        return b.build(b.op("reduce_sum", x, b.constant(np.array([1])), keepdims=0))

    info = np.iinfo(np.int8)
    x = {"x": RNG.integers(info.min, info.max + 1, [5, 300]).astype(np.int8)}
    module = build([5, 300], "int8")
    _check_bitwise(module, rule, x)
    assert _ops(module)["graph.cast"] == 2
    levels = run_levels(build([5, 300], "int8"), x, "test")
    assert_matches(levels, rtol=0, atol=0)
    assert all(k.unit != "host" for k in levels.tiled_kernels), levels.tiled_kernels
    too_long = build([2, 70000], "int16")  # 70000 x 32768 passes 2**31
    run_pipeline(rule, make_context(), too_long)
    assert _ops(too_long)["graph.cast"] == 1
