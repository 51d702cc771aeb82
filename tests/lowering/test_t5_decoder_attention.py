"""hf_t5's decoder attentions and ERNIE's pooler lower whole (issue 25).

* T5's decoder self-attention: one fused QKV projection split into Q, K and V, no scale,
  and a position bias that is a constant (the causal mask folded into it). The format
  engine stores the constant in FRACTAL_NZ for the NZ add it reads; ``fuse-ops``'
  ``epilogues-to-nd`` stores it in ND instead (converted at compile time), so the add is
  the scores' ND epilogue and the attention is claimed as one flash kernel.
* T5's cross-attention: Q is its own projection, written in FRACTAL_NZ for the head split
  that reads it; ``fuse-ops`` gives the NZ -> ND conversion to the projection (fixpipe),
  so Q's head split is a strided view of the projection's ND output in the attention
  kernel (before: "a matmul operand re-indexed by a chain that is no strided view").
* ERNIE's pooler ``tanh(x[:, 0]·W + b)`` feeding its classifier: the tanh read a Gemm's NZ
  result and fed the classifier in NZ, so it stayed NZ ("a FRACTAL_NZ matmul result with
  a vector epilogue": three kernels); ``epilogues-to-nd`` treats a Gemm as a matmul.

Every level (graph, macro, both tile executors) must agree, with NaN in every padding lane.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.lowering.test_tile_differential import assert_matches, assert_no_nan, run_levels
from tilegraph.builder import GraphBuilder
from tilegraph.passes.statistics import collecting_statistics

NAN = float("nan")
PRESETS = ("test", "ascend910b")


def _heads(b: GraphBuilder, x, batch: int, s: int, heads: int, dim: int, perm: list[int]):
    shape = b.constant(np.array([batch, s, heads, dim], np.int64))
    return b.op("transpose", b.op("reshape", x, shape), perm=perm)


def _projection(b: GraphBuilder, rng: np.random.Generator, x, rows: int, cols: int):
    w = b.constant((rng.standard_normal((rows, cols)) / np.sqrt(rows)).astype(np.float32))
    return b.op("matmul", x, w)


def _t5_attention(batch: int, sq: int, sk: int, heads: int, dim: int, cross: bool, layers: int = 1):
    """(module, inputs): ``layers`` of T5's unscaled attention, each adding the same
    constant ``[B, H, Sq, Sk]`` position bias (hf_t5's batch is 1; a causal -1e4 folded in
    for self-attention). Self: Q, K, V split out of one projection of the layer's input;
    cross: Q projected from it, K and V split out of one projection of the encoder's
    ``enc``."""
    rng = np.random.default_rng(1)
    hidden = heads * dim
    b = GraphBuilder()
    x = b.input("x", [batch, sq, hidden])
    inputs = {"x": rng.standard_normal((batch, sq, hidden)).astype(np.float32)}
    enc = None
    if cross:
        enc = b.input("enc", [batch, sk, hidden])
        inputs["enc"] = rng.standard_normal((batch, sk, hidden)).astype(np.float32)
    bias = rng.standard_normal((batch, heads, sq, sk))  # the scores' shape: NZ-stored
    if not cross:
        bias += np.where(np.tril(np.ones((sq, sk), bool)), 0.0, -1e4)
    bias_value = b.constant(bias.astype(np.float32))
    for _ in range(layers):
        if enc is not None:
            q = _projection(b, rng, x, hidden, hidden)
            kv = _projection(b, rng, enc, hidden, 2 * hidden)
            sizes = b.constant(np.array([hidden, hidden], np.int64))
            k, v = b.op_results("split", kv, sizes, axis=-1)
        else:
            qkv = _projection(b, rng, x, hidden, 3 * hidden)
            sizes = b.constant(np.array([hidden] * 3, np.int64))
            q, k, v = b.op_results("split", qkv, sizes, axis=-1)
        scores = b.op(
            "matmul",
            _heads(b, q, batch, sq, heads, dim, [0, 2, 1, 3]),
            _heads(b, k, batch, sk, heads, dim, [0, 2, 3, 1]),
        )
        probs = b.op("softmax", b.op("add", scores, bias_value), axis=-1)
        out = b.op("matmul", probs, _heads(b, v, batch, sk, heads, dim, [0, 2, 1, 3]))
        merged = b.op("transpose", out, perm=[0, 2, 1, 3])
        x = b.op("reshape", merged, b.constant(np.array([batch, sq, hidden], np.int64)))
    return b.build(x), inputs


CASES = {
    "self": (2, 20, 20, 4, 12, False),  # S and D ragged against the fractals
    "cross": (1, 9, 37, 2, 16, True),  # S_q != S_k, D a whole fractal
    "cross_ragged": (2, 5, 7, 4, 4, True),  # hf_t5's shapes: D under a fractal
}


@pytest.mark.parametrize(("platform", "case"), [(p, c) for p in PRESETS for c in sorted(CASES)])
def test_t5_decoder_attention_is_one_flash_kernel(platform: str, case: str):
    """The projections' kernels and one mix kernel for the whole attention, nothing split;
    both executors match the graph with NaN in every padding lane."""
    module, inputs = _t5_attention(*CASES[case])
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, platform, pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    kernels = levels.tiled_kernels
    flash = [k for k in kernels if "graph.softmax" in k.ops]
    assert len(flash) == 1, [(k.name, k.ops) for k in kernels]
    assert flash[0].ops.count("graph.matmul") == 2 and flash[0].unit == "mix"
    projections = 2 if CASES[case][-1] else 1
    assert len(kernels) == 1 + projections, [(k.name, k.ops) for k in kernels]
    assert stats.as_dict()["fuse-ops"]["attention-claimed"] == 1


@pytest.mark.parametrize("layers", [1, 2])
def test_the_bias_constant_is_stored_nd(layers: int):
    """The self-attention's bias reaches the flash kernel as an ND constant (the NZ copy
    the format engine made is gone), read by the add on the scores' ND tile: one copy
    when two layers share it."""
    from tilegraph.dialects.graph.constant_ops import ConstantOp
    from tilegraph.dialects.layout_type import TensorType
    from tilegraph.passes.context import make_context
    from tilegraph.passes.pipelines import run_pipeline

    module, _ = _t5_attention(*CASES["self"], layers=layers)
    run_pipeline("set-target{platform=ascend910b},O2", make_context(), module)
    shaped = [
        op.output.type
        for op in module.walk()
        if isinstance(op, ConstantOp)
        and isinstance(op.output.type, TensorType)
        and op.output.type.rank == 4
    ]
    assert [str(t.storage_format) for t in shaped] == ["ND"], shaped


def _pooler(batch: int, seq: int, hidden: int, classes: int):
    """(module, inputs): ERNIE's pooler and classifier: ``tanh(h[:, 0]·W + b)·Wc + bc``."""
    rng = np.random.default_rng(2)
    b = GraphBuilder()
    h = b.input("h", [batch, seq, hidden])

    def ints(values: list[int]):
        return b.constant(np.array(values, np.int64))

    first = b.op("slice", h, ints([0]), ints([1]), ints([1]))
    cls = b.op("squeeze", first, ints([1]))

    def dense(x, n: int, k: int):
        w = b.constant((rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32))
        return b.op("gemm", x, w, b.constant(rng.standard_normal(n).astype(np.float32)))

    pooled = b.op("tanh", dense(cls, hidden, hidden))
    logits = dense(pooled, classes, hidden)
    inputs = {"h": rng.standard_normal((batch, seq, hidden)).astype(np.float32)}
    return b.build(logits), inputs


@pytest.mark.parametrize("platform", ("ascend910b", "ascend310p"))
@pytest.mark.parametrize("shape", [(1, 7, 32, 3), (3, 5, 40, 37)])
def test_ernie_pooler_is_not_split(platform: str, shape: tuple[int, int, int, int]):
    """The pooler's gemm and tanh are one kernel (no vector kernel of the tanh), the
    classifier another; every level agrees with NaN padding, ragged N and K too. (Not on
    the ``test`` preset: its small UB does not hold the epilogue tile.)"""
    module, inputs = _pooler(*shape)
    levels = run_levels(module, inputs, platform, pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    kernels = levels.tiled_kernels
    pooler = [k for k in kernels if "graph.tanh" in k.ops]
    assert len(pooler) == 1 and "graph.gemm" in pooler[0].ops, [(k.name, k.ops) for k in kernels]
    assert sum("graph.gemm" in k.ops for k in kernels) == 2
    assert all(k.unit != "host" for k in kernels)


# Before fuse-ops gave a product's NZ -> ND conversion to the product, hf_t5's
# cross-attention group held Q's conversion: its head split was a view of a FRACTAL_NZ
# input converted in the kernel, which a strided view cannot address.
NZ_VIEW = """
func.func @main(%x: !layout.tensor<5x16xf32, ND -> FRACTAL_NZ [1, 1, 16, 16]>, %w: !layout.tensor<4x8xf32, ND -> FRACTAL_NZ [1, 1, 16, 16]>) -> !layout.tensor<4x5x8xf32> {
  %s = graph.constant dense<[5, 4, 4]> : !layout.tensor<3xi64>
  %y = graph.fused "fused_trans_data_reshape_transpose_matmul_0" <out_elemwise_fusable> (%x, %s, %w) : (!layout.tensor<5x16xf32, ND -> FRACTAL_NZ [1, 1, 16, 16]>, !layout.tensor<3xi64>, !layout.tensor<4x8xf32, ND -> FRACTAL_NZ [1, 1, 16, 16]>) -> !layout.tensor<4x5x8xf32> {
  ^bb0(%x1: !layout.tensor<5x16xf32, ND -> FRACTAL_NZ [1, 1, 16, 16]>, %s1: !layout.tensor<3xi64>, %w1: !layout.tensor<4x8xf32, ND -> FRACTAL_NZ [1, 1, 16, 16]>):
    %x2 = layout.trans_data %x1 : !layout.tensor<5x16xf32, ND -> FRACTAL_NZ [1, 1, 16, 16]> -> !layout.tensor<5x16xf32>
    %h = graph.reshape %x2, %s1 : (!layout.tensor<5x16xf32>, !layout.tensor<3xi64>) -> !layout.tensor<5x4x4xf32>
    %t = graph.transpose %h {perm = [1, 0, 2]} : (!layout.tensor<5x4x4xf32>) -> !layout.tensor<4x5x4xf32>
    %t2 = layout.trans_data %t : !layout.tensor<4x5x4xf32> -> !layout.tensor<4x5x4xf32, ND -> FRACTAL_NZ [4, 1, 1, 16, 16]>
    %m = graph.matmul %t2, %w1 : (!layout.tensor<4x5x4xf32, ND -> FRACTAL_NZ [4, 1, 1, 16, 16]>, !layout.tensor<4x8xf32, ND -> FRACTAL_NZ [1, 1, 16, 16]>) -> !layout.tensor<4x5x8xf32, ND -> FRACTAL_NZ [4, 1, 1, 16, 16]>
    %o = layout.trans_data %m : !layout.tensor<4x5x8xf32, ND -> FRACTAL_NZ [4, 1, 1, 16, 16]> -> !layout.tensor<4x5x8xf32>
    graph.yield %o : !layout.tensor<4x5x8xf32>
  }
  func.return %y : !layout.tensor<4x5x8xf32>
}
"""


def test_a_view_of_an_nz_input_is_refused_with_its_reason():
    """A head split of an NZ input's conversion inside the kernel: the group splits and
    says why (before: "a matmul prologue other than ND -> FRACTAL_NZ")."""
    from tilegraph.lowering.conversion.graph_to_kernels_remarks import (
        SPLIT_KIND,
        lowering_remarks,
    )
    from tilegraph.passes.context import make_context, parse_mlir
    from tilegraph.passes.pipelines import run_pipeline

    module = parse_mlir(NZ_VIEW)
    with collecting_statistics() as stats:
        run_pipeline(
            "set-target{platform=ascend910b},lower-graph-to-kernels", make_context(), module
        )
    (split,) = [r for r in lowering_remarks(stats) if r.kind == SPLIT_KIND]
    assert "from a FRACTAL_NZ input converted in the kernel" in split.details["reason"]
