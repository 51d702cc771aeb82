"""fold-batchnorm: folds preserve what the reference interpreter computes, and fire only
when legal."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from tests.passes.semantics import run_pipeline_checked
from tilegraph.builder import GraphBuilder
from tilegraph.passes.statistics import collecting_statistics

RNG = np.random.default_rng(7)


def _rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _bn(b: GraphBuilder, x, channels: int):
    params = [
        RNG.uniform(0.5, 2.0, channels),
        _rand(channels),
        _rand(channels),
        RNG.uniform(0.1, 2.0, channels),
    ]
    return b.op("batch_norm", x, *(b.constant(p.astype(np.float32)) for p in params))


def _ops(module) -> Counter[str]:
    return Counter(op.name for op in module.walk())


def _fold(module, rtol: float = 1e-4) -> dict[str, float | int]:
    with collecting_statistics() as collector:
        run_pipeline_checked(module, "fold-batchnorm,dce", rtol=rtol, atol=1e-4)
    return collector.as_dict().get("fold-batchnorm", {})


@pytest.mark.parametrize("group", [1, 2])
@pytest.mark.parametrize("bias", [True, False])
def test_conv_bn(group: int, bias: bool):
    b = GraphBuilder()
    x = b.input("x", [2, 4, 6, 6], origin_format="NCHW")
    w = b.constant(_rand(6, 4 // group, 3, 3), "NCHW")
    conv = b.op("conv2d", x, w, b.constant(_rand(6)) if bias else None, group=group, pads=[1] * 4)
    module = b.build(_bn(b, conv, 6))
    stats = _fold(module)
    assert stats["rule.conv-batchnorm"] == 1
    assert "graph.batch_norm" not in _ops(module)
    assert 0 <= stats["max-abs-change"] < 1e-4


@pytest.mark.parametrize("group", [1, 2])
def test_conv_transpose_bn(group: int):
    b = GraphBuilder()
    x = b.input("x", [1, 4, 5, 5], origin_format="NCHW")
    w = b.constant(_rand(4, 3, 3, 3), "NCHW")  # [Cin, Cout/group, k, k]
    conv = b.op("conv_transpose", x, w, b.constant(_rand(3 * group)), group=group)
    module = b.build(_bn(b, conv, 3 * group))
    assert _fold(module)["rule.conv-batchnorm"] == 1
    assert "graph.batch_norm" not in _ops(module)


@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("with_c", [True, False])
def test_gemm_bn(trans_b: int, with_c: bool):
    b = GraphBuilder()
    a = b.input("a", [3, 5])
    weight = b.constant(_rand(4, 5) if trans_b else _rand(5, 4))
    c = b.constant(_rand(4)) if with_c else None
    y = b.op("gemm", a, weight, c, transB=trans_b, beta=0.5, alpha=2.0)
    module = b.build(_bn(b, y, 4))
    assert _fold(module)["rule.gemm-batchnorm"] == 1
    assert _ops(module)["graph.gemm"] == 1 and "graph.batch_norm" not in _ops(module)


@pytest.mark.parametrize("kind", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("producer_first", [True, False])
def test_conv_binary(kind: str, producer_first: bool):
    b = GraphBuilder()
    x = b.input("x", [1, 3, 4, 4], origin_format="NCHW")
    conv = b.op("conv2d", x, b.constant(_rand(5, 3, 1, 1), "NCHW"))
    k = b.constant(RNG.uniform(0.5, 2.0, (5, 1, 1)).astype(np.float32))
    y = b.op(kind, conv, k) if producer_first else b.op(kind, k, conv)
    module = b.build(y)
    stats = _fold(module)
    # k / conv is not affine in conv: it must stay
    folded = not (kind == "div" and not producer_first)
    assert stats.get("rule.conv-binary", 0) == int(folded)
    assert (f"graph.{kind}" in _ops(module)) != folded


def test_binary_that_broadcasts_the_result_stays():
    b = GraphBuilder()
    x = b.input("x", [1, 3, 4, 4], origin_format="NCHW")
    conv = b.op("conv2d", x, b.constant(_rand(5, 3, 1, 1), "NCHW"))
    module = b.build(b.op("add", conv, b.constant(_rand(2, 5, 1, 1))))
    assert _fold(module).get("rule.conv-binary", 0) == 0


def test_second_user_blocks_the_fold():
    b = GraphBuilder()
    x = b.input("x", [1, 3, 4, 4], origin_format="NCHW")
    conv = b.op("conv2d", x, b.constant(_rand(3, 3, 1, 1), "NCHW"))
    module = b.build(_bn(b, conv, 3), b.op("relu", conv))
    stats = _fold(module)
    assert "rule.conv-batchnorm" not in stats
    assert stats["rule.batchnorm-to-affine"] == 1


@pytest.mark.parametrize("through_relu", [False, True])
@pytest.mark.parametrize("group", [1, 3])
def test_input_scale(through_relu: bool, group: int):
    b = GraphBuilder()
    x = b.input("x", [1, 6, 4, 4], origin_format="NCHW")
    s = b.constant(RNG.uniform(0.5, 2.0, (6, 1, 1)).astype(np.float32))
    h = b.op("mul", x, s)
    if through_relu:
        h = b.op("relu", h)
    module = b.build(b.op("conv2d", h, b.constant(_rand(3, 6 // group, 3, 3), "NCHW"), group=group))
    assert _fold(module)["rule.conv-input-scale"] == 1
    assert "graph.mul" not in _ops(module)


def test_negative_input_scale_does_not_cross_relu():
    b = GraphBuilder()
    x = b.input("x", [1, 2, 4, 4], origin_format="NCHW")
    s = b.constant(np.array([1.0, -1.0], np.float32).reshape(2, 1, 1))
    h = b.op("relu", b.op("mul", x, s))
    module = b.build(b.op("conv2d", h, b.constant(_rand(3, 2, 1, 1), "NCHW")))
    assert "rule.conv-input-scale" not in _fold(module)


def test_lone_bn_becomes_multiply_add():
    b = GraphBuilder()
    x = b.input("x", [2, 3, 4, 4], origin_format="NCHW")
    module = b.build(_bn(b, b.op("relu", x), 3))
    assert _fold(module)["rule.batchnorm-to-affine"] == 1
    ops = _ops(module)
    assert ops["graph.mul"] == 1 and ops["graph.add"] == 1 and "graph.batch_norm" not in ops


def test_float16_weights_are_folded_in_float64_and_cast_back():
    b = GraphBuilder()
    x = b.input("x", [1, 2, 3, 3], "float16", "NCHW")
    conv = b.op("conv2d", x, b.constant(_rand(2, 2, 1, 1).astype(np.float16), "NCHW"))
    params = [np.array(v, np.float16) for v in ([2.0, 3.0], [0.5, 0.25], [0.1, 0.2], [1.0, 2.0])]
    module = b.build(b.op("batch_norm", conv, *(b.constant(p) for p in params)))
    assert _fold(module, rtol=2e-2)["rule.conv-batchnorm"] == 1
    weights = [op for op in module.walk() if op.name == "graph.constant"]
    assert all(op.constant_array().dtype == np.float16 for op in weights)
