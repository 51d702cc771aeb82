"""``einsum-as-matmul``: Einsum of one or two float operands becomes ReduceSum / Transpose /
Reshape around a batched MatMul, and computes numpy's einsum (the oracle) on static and
symbolic shapes; equations it cannot express stay Einsum; PyTorch's einsum attention runs
with no host op."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from tests.lowering.test_tile_differential import assert_matches, run_levels
from tilegraph.builder import GraphBuilder
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.simplify.einsum_rules import expand_ellipses
from tilegraph.runtime import run_reference

RNG = np.random.default_rng(11)
RULE = "algebraic-simplify{only=einsum-as-matmul},dce"


def _module(equation: str, shapes: list[list[int | str]]) -> ModuleOp:
    b = GraphBuilder()
    xs = [b.input(f"x{i}", shape) for i, shape in enumerate(shapes)]
    return b.build(b.op("einsum", *xs, equation=equation))


def _ops(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


CASES = [
    # (equation, declared shapes (str: symbolic), run-time shapes)
    ("bthd,bshd->bhts", [["b", "t", 4, 8], ["b", "s", 4, 8]], [[2, 5, 4, 8], [2, 7, 4, 8]]),
    ("bhts,bshd->bthd", [[2, 4, "t", "s"], [2, "s", 4, 8]], [[2, 4, 5, 7], [2, 7, 4, 8]]),
    ("ij,jk->ik", [[5, 6], [6, 7]], [[5, 6], [6, 7]]),
    ("ij,kj", [[5, 6], [7, 6]], [[5, 6], [7, 6]]),  # implicit output: ik
    ("i,j->ij", [[5], [3]], [[5], [3]]),  # outer product: no contracted letter
    ("ij,j->i", [["n", 6], [6]], [[9, 6], [6]]),  # matrix-vector: no column letter
    ("...ij,...jk->...ik", [[2, 3, 4, 5], [3, 5, 6]], [[2, 3, 4, 5], [3, 5, 6]]),
    ("bij,bkl->bik", [[2, 3, 4], [2, 5, 6]], [[2, 3, 4], [2, 5, 6]]),  # j, l summed alone
    ("abcd,cdef->abef", [[2, 3, 4, 5], [4, 5, 6, 7]], [[2, 3, 4, 5], [4, 5, 6, 7]]),
    ("bn,anm->bam", [[3, 4], [2, 4, 5]], [[3, 4], [2, 4, 5]]),
    ("ijk->kj", [[3, "n", 5]], [[3, 4, 5]]),  # one operand: sum i, transpose
    ("b i d, b j d -> b i j", [["b", 6, 8], ["b", 6, 8]], [[3, 6, 8], [3, 6, 8]]),
]


@pytest.mark.parametrize(("equation", "declared", "shapes"), CASES, ids=[c[0] for c in CASES])
def test_einsum_is_a_matmul_and_computes_numpys_einsum(equation, declared, shapes):
    module = _module(equation, declared)
    run_pipeline(RULE, make_context(), module)
    module.verify()
    assert _ops(module)["graph.einsum"] == 0
    arrays = {f"x{i}": RNG.standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)}
    (got,) = run_reference(module, arrays)
    want = np.einsum(equation.replace(" ", ""), *arrays.values())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("equation", "shapes", "why"),
    [
        ("ii->i", [[4, 4]], "a diagonal"),
        ("ij,jk,kl->il", [[2, 3], [3, 4], [4, 5]], "three operands"),
        ("abc,bcd->ad", [[2, "x", "y"], ["x", "y", 3]], "two unknown dims in one group"),
        ("abc,cbd->ad", [[2, "x", "y"], ["y", "x", 3]], "the same, after a transpose"),
    ],
)
def test_equations_it_cannot_express_stay(equation, shapes, why):
    module = _module(equation, shapes)
    run_pipeline(RULE, make_context(), module)
    assert _ops(module)["graph.einsum"] == 1, why
    # the ops of an abandoned decomposition keep no uses of the operands
    (main,) = [op for op in module.walk() if isinstance(op, FuncOp)]
    assert all(len(list(arg.uses)) == 1 for arg in main.body.block.args), why


def test_integer_operands_stay():
    b = GraphBuilder()
    x, y = b.input("x", [2, 3], "int32"), b.input("y", [3, 4], "int32")
    module = b.build(b.op("einsum", x, y, equation="ij,jk->ik"))
    run_pipeline(RULE, make_context(), module)
    assert _ops(module)["graph.einsum"] == 1


def test_ellipses_expand_right_aligned():
    expanded = expand_ellipses("...ij,...jk", [4, 3])
    assert expanded is not None
    (first, second), out = expanded
    assert (len(first), len(second)) == (4, 3)
    assert first[2:] == "ij" and second[1:] == "jk"
    assert second[0] == first[1] != first[0]  # the shorter ellipsis is the last dims of the longer
    assert out == first[:2] + "ik"
    assert expand_ellipses("ij,jk", [3, 2]) is None  # a term of the wrong rank


def test_einsum_attention_runs_on_the_ai_core():
    b = GraphBuilder()
    q, k = b.input("q", [2, 5, 4, 8]), b.input("k", [2, 7, 4, 8])
    module = b.build(b.op("einsum", q, k, equation="bthd,bshd->bhts"))
    inputs = {"q": RNG.standard_normal((2, 5, 4, 8)).astype(np.float32),
              "k": RNG.standard_normal((2, 7, 4, 8)).astype(np.float32)}  # fmt: skip
    levels = run_levels(module, inputs, "test")
    assert_matches(levels)
    assert all(kernel.unit != "host" for kernel in levels.tiled_kernels)
