"""constant-fold: folds compute what the interpreter computes, respect the size limits,
survive failing kernels and share equal constants."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from tests.passes.semantics import run_pipeline_checked
from tilegraph.builder import GraphBuilder
from tilegraph.dialects.graph.binary import AddOp
from tilegraph.passes.constant_fold import ConstantFoldPass
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.statistics import collecting_statistics


def _ops(module) -> Counter[str]:
    return Counter(op.name for op in module.walk())


def _run(module, spec: str = "constant-fold,dce") -> dict[str, float | int]:
    with collecting_statistics() as collector:
        run_pipeline_checked(module, spec)
    return collector.as_dict().get("constant-fold", {})


def test_chain_of_constant_ops_folds_to_one_constant():
    b = GraphBuilder()
    x = b.input("x", [2, 3])
    c = b.op("exp", b.op("transpose", b.constant(np.arange(6.0, dtype=np.float32).reshape(3, 2))))
    module = b.build(b.op("add", x, c))
    stats = _run(module)
    assert stats["folded"] == 2
    assert _ops(module) == Counter(
        {"builtin.module": 1, "func.func": 1, "graph.constant": 1, "graph.add": 1, "func.return": 1}
    )


def test_shape_of_static_part_of_symbolic_shape():
    b = GraphBuilder()
    x = b.input("x", ["N", 3, 4])
    shape = b.op("shape", x)
    hw = b.op("gather", shape, b.constant(np.array([1, 2])), axis=0)
    n = b.op("gather", shape, b.constant(np.array([0])), axis=0)
    module = b.build(hw, n)
    assert _run(module)["shape-queries"] == 1
    assert _ops(module)["graph.gather"] == 1  # the symbolic dim stays a query


def test_constant_of_shape_folds():
    b = GraphBuilder()
    z = b.op("constant_of_shape", b.constant(np.array([2, 3])))
    module = b.build(z)
    _run(module)
    assert "graph.constant_of_shape" not in _ops(module)


@pytest.mark.parametrize(
    ("option", "key"), [({"max_bytes": 16}, "skipped-too-large"), ({}, "skipped-growth")]
)
def test_size_limits(option: dict[str, int], key: str):
    b = GraphBuilder()
    e = b.op("expand", b.constant(np.ones([1], np.float32)), b.constant(np.array([512, 512])))
    module = b.build(e)
    with collecting_statistics() as collector:
        ConstantFoldPass(**option).apply(make_context(), module)
    assert collector.as_dict()["constant-fold"][key] == 1
    assert "graph.expand" in _ops(module)


def _grown_filter(b: GraphBuilder):
    """A [64, 512] filter built by a broadcast add of small constants, then scaled (as
    torchaudio's resampler builds its sinc filter): 128 KiB from 2 KiB of operands."""
    rows = b.constant(np.arange(64, dtype=np.float32).reshape(64, 1))
    cols = b.constant(np.linspace(0, 1, 512, dtype=np.float32))
    return b.op("mul", b.op("add", rows, cols), b.constant(np.array(0.5, np.float32)))


def test_what_only_computes_a_weight_may_grow():
    b = GraphBuilder()
    x = b.input("x", [8, 64])
    module = b.build(b.op("matmul", x, _grown_filter(b)))
    expected = np.arange(64, dtype=np.float32)[:, None] + np.linspace(0, 1, 512, dtype=np.float32)
    stats = _run(module)
    assert stats["parameters-grown"] == 1 and stats["folded"] == 2
    assert "skipped-growth" not in stats
    (weight,) = [op for op in module.walk() if op.name == "graph.constant"]
    np.testing.assert_array_equal(weight.value.array, expected * np.float32(0.5))


def test_a_grown_value_that_is_also_data_stays():
    b = GraphBuilder()
    filt = _grown_filter(b)
    module = b.build(b.op("matmul", filt, b.input("w", [512, 4])), b.op("exp", filt))
    stats = _run(module)
    assert stats["skipped-growth"] >= 1 and "parameters-grown" not in stats
    assert _ops(module)["graph.add"] == 1


def test_failing_kernel_leaves_the_op_and_says_why(monkeypatch: pytest.MonkeyPatch):
    def broken(self, *inputs):
        raise FloatingPointError("overflow in the kernel")

    monkeypatch.setattr(AddOp, "reference", broken)
    b = GraphBuilder()
    one = b.constant(np.ones([2], np.float32))
    module = b.build(b.op("add", one, one))
    with collecting_statistics() as collector:
        run_pipeline("constant-fold", make_context(), module)
    stats = collector.as_dict()["constant-fold"]
    assert stats["kernel-failed(graph.add: FloatingPointError: overflow in the kernel)"] == 1
    assert "graph.add" in _ops(module)


def test_dedup_keeps_distinct_types_apart():
    b = GraphBuilder()
    x = b.input("x", [2])
    f = [b.constant(np.array([1.0, 2.0], np.float32)) for _ in range(3)]
    module = b.build(b.op("sum", x, *f), b.constant(np.array([1.0, 2.0])))
    assert _run(module)["deduplicated"] == 2
    assert _ops(module)["graph.constant"] == 2


def test_options_are_checked():
    with pytest.raises(ValueError, match="max-bytes"):
        ConstantFoldPass(max_bytes=-1)
    with pytest.raises(ValueError, match="growth"):
        ConstantFoldPass(growth=0.5)
