"""LLaMA's grouped K / V heads (``repeat_kv``) read by the attention's matmuls as views.

Q has ``kv·n_rep`` heads, K and V ``kv``; Hugging Face's ``repeat_kv`` repeats each K / V
head ``n_rep`` times (``[B, kv, S, D] -> unsqueeze -> [B, kv, 1, S, D] -> expand ->
[B, kv, n_rep, S, D] -> reshape -> [B, kv·n_rep, S, D]``). The chain is a view whose head
dim is grouped (``StridedView.groups``): the matmuls' DMAs read head ``h // n_rep`` of the
un-repeated tensor, so no kernel expands K or V. Checked against the graph on both
executors with NaN in every padding lane, ragged S and D, for n_rep 1, 2 and 4 (and one
K / V head for all query heads): the flash kernel, the mix kernel on the decoupled presets
and the in-core kernel on ``ascend310p``; fp32 and fp16; the view algebra; and an
expand of a matmul operand's size-1 batch dim, read as a broadcast view.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.lowering.test_flash_attention_coupled import COUPLED_ALWAYS
from tests.lowering.test_tile_differential import assert_matches, assert_no_nan, run_levels
from tilegraph.builder import GraphBuilder
from tilegraph.lowering.analysis.operand_views import StridedView
from tilegraph.passes.statistics import collecting_statistics

NAN = float("nan")
F16_RTOL, F16_ATOL = 1e-2, 2e-3
"""fp16's tolerance, as the flash attention tests' (the kernel keeps its sums in fp32)."""


def _grouped_attention(
    batch: int,
    seq: int,
    kv_heads: int,
    n_rep: int,
    dim: int,
    dtype: type[np.generic] = np.float32,
    seed: int = 0,
):
    """(module, inputs): causal attention of ``q`` [B, S, kv·n_rep·D] over ``k``, ``v``
    [B, S, kv·D], K and V repeated to the query's heads as Hugging Face's ``repeat_kv``."""
    rng = np.random.default_rng(seed)
    heads = kv_heads * n_rep
    b = GraphBuilder()
    q_in = b.input("q", [batch, seq, heads * dim], dtype)
    k_in = b.input("k", [batch, seq, kv_heads * dim], dtype)
    v_in = b.input("v", [batch, seq, kv_heads * dim], dtype)

    def heads_of(x, count: int):
        split = b.constant(np.array([batch, seq, count, dim], np.int64))
        return b.op("transpose", b.op("reshape", x, split), perm=[0, 2, 1, 3])

    def repeat_kv(x):
        x = b.op("unsqueeze", x, b.constant(np.array([2], np.int64)))
        x = b.op("expand", x, b.constant(np.array([batch, kv_heads, n_rep, seq, dim], np.int64)))
        return b.op("reshape", x, b.constant(np.array([batch, heads, seq, dim], np.int64)))

    q = heads_of(q_in, heads)
    k = b.op("transpose", repeat_kv(heads_of(k_in, kv_heads)), perm=[0, 1, 3, 2])
    v = repeat_kv(heads_of(v_in, kv_heads))
    scores = b.op("mul", b.op("matmul", q, k), b.constant(dtype(1 / np.sqrt(dim))))
    allowed = np.tril(np.ones((seq, seq), bool))[None, None]
    low = b.constant(np.asarray(ml_dtypes.finfo(dtype).min, dtype))
    scores = b.op("where", b.constant(allowed), scores, low)
    out = b.op("matmul", b.op("softmax", scores, axis=-1), v)
    merged = b.op("transpose", out, perm=[0, 2, 1, 3])
    merged = b.op("reshape", merged, b.constant(np.array([batch, seq, heads * dim], np.int64)))
    inputs = {
        "q": rng.standard_normal((batch, seq, heads * dim)).astype(dtype),
        "k": rng.standard_normal((batch, seq, kv_heads * dim)).astype(dtype),
        "v": rng.standard_normal((batch, seq, kv_heads * dim)).astype(dtype),
    }
    return b.build(merged), inputs


CASES = {
    "n_rep1": (2, 20, 2, 1, 12),  # nothing repeated: the expand is the identity
    "n_rep2": (2, 20, 2, 2, 12),  # S = 20: two K blocks, the second ragged, on `test`
    "n_rep4": (1, 20, 2, 4, 12),
    "one_kv_head": (1, 20, 1, 4, 12),  # multi-query: every query head reads head 0
}


def _check(platform: str, case: str, dtype: type[np.generic]) -> None:
    module, inputs = _grouped_attention(*CASES[case], dtype=dtype)
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, platform, pad_value=NAN, o2_options=COUPLED_ALWAYS)
    assert_no_nan(levels)
    if dtype == np.float32:
        assert_matches(levels)
    else:
        assert_matches(levels, rtol=F16_RTOL, atol=F16_ATOL)
    kernels = levels.tiled_kernels
    assert all(k.unit != "host" for k in kernels), [(k.name, k.reason) for k in kernels]
    # no kernel moves K's or V's bytes: the unsqueeze and expand ride the matmuls' views
    assert all("graph.matmul" in k.ops for k in kernels if "graph.expand" in k.ops)
    assert all("graph.matmul" in k.ops or "graph.softmax" in k.ops for k in kernels), [
        k.ops for k in kernels
    ]
    fuse = stats.as_dict()["fuse-ops"]
    assert fuse["attention-claimed"] == 1, fuse
    unit = "cube" if platform == "ascend310p" else "mix"  # coupled: the in-core kernel
    assert len(kernels) == 1 and kernels[0].unit == unit, [k.ops for k in kernels]


@pytest.mark.parametrize("platform", ["test", "ascend910b", "ascend310p"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_grouped_kv_nan_padding(platform: str, case: str):
    """fp32: one flash kernel (a mix kernel on decoupled presets, an in-core one on the
    310P) reads K and V of ``kv`` heads for ``kv·n_rep`` query heads; exact on both
    executors."""
    _check(platform, case, np.float32)


@pytest.mark.parametrize("platform", ["test", "ascend910b", "ascend310p"])
@pytest.mark.parametrize("case", ["n_rep2", "n_rep4"])
def test_grouped_kv_f16(platform: str, case: str):
    """fp16 as fp32, within fp16's tolerance."""
    _check(platform, case, np.float16)


def test_repeat_view_algebra():
    """``repeat_kv`` on the head split of ``[B, S, kv·D]`` is a view of it whose head dim
    reads stored head ``h // n_rep``; a grouped dim is never split or merged again."""
    batch, seq, kv, n_rep, dim = 2, 5, 3, 4, 8
    split = StridedView.row_major([batch, seq, kv * dim]).reshape([batch, seq, kv, dim])
    assert split is not None
    heads = split.transpose([0, 2, 1, 3]).reshape([batch, kv, 1, seq, dim])
    assert heads is not None
    expanded = heads.expand([batch, kv, n_rep, seq, dim])
    assert expanded is not None and expanded.group(2) == n_rep
    view = expanded.reshape([batch, kv * n_rep, seq, dim])
    assert view is not None
    assert view.shape == (batch, kv * n_rep, seq, dim)
    assert view.strides == (seq * kv * dim, dim, kv * dim, 1)
    assert view.groups == (1, n_rep, 1, 1)
    assert view.stored() == StridedView((batch, kv, seq, dim), view.strides)
    # every element of the view is the one numpy's repeat_kv reads
    x = np.arange(batch * seq * kv * dim)
    repeated = np.repeat(x.reshape(batch, seq, kv, dim).transpose(0, 2, 1, 3), n_rep, axis=1)
    index = np.indices(view.shape)
    at = sum(index[d] // view.group(d) * view.strides[d] for d in range(4))
    np.testing.assert_array_equal(x[at], repeated)
    assert view.extent() == x.size
    # the repeat split again, or the grouped heads merged with the batch: a copy
    assert expanded.reshape([batch, kv, n_rep * seq, dim]) is None
    assert view.reshape([batch * kv * n_rep, seq, dim]) is None
    assert view.transpose([0, 1, 3, 2]).groups == (1, n_rep, 1, 1)
    # an expand of a dim that is not of size 1 is no view
    assert heads.expand([batch, kv, n_rep, seq, 2 * dim]) is None


@pytest.mark.parametrize("platform", ["test", "ascend910b", "ascend310p"])
def test_expanded_batch_operand_is_a_broadcast_view(platform: str):
    """An expand of a matmul operand's size-1 batch dim (a ``[1, K, N]`` weight expanded
    to the batch) is the same view: the matmul reads batch 0 for every batch, and no
    kernel expands it."""
    batch, m, k, n = 3, 20, 24, 12
    b = GraphBuilder()
    x = b.input("x", [batch, m, k])
    w = b.input("w", [1, k, n])
    wide = b.op("expand", w, b.constant(np.array([batch, k, n], np.int64)))
    module = b.build(b.op("matmul", x, wide))
    rng = np.random.default_rng(0)
    inputs = {
        "x": rng.standard_normal((batch, m, k)).astype(np.float32),
        "w": rng.standard_normal((1, k, n)).astype(np.float32),
    }
    levels = run_levels(module, inputs, platform, pad_value=NAN, o2_options=COUPLED_ALWAYS)
    assert_no_nan(levels)
    assert_matches(levels)
    kernels = levels.tiled_kernels
    assert len(kernels) == 1 and "graph.expand" in kernels[0].ops, [k.ops for k in kernels]
    assert kernels[0].unit != "host", kernels[0].reason
