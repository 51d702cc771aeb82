"""The flash attention kernel (``tiling/attention.py``): Q·Kᵀ, scale, mask, softmax and ·V
as one mix kernel with a K / V loop and an online softmax on decoupled presets.

Checked against the graph level on both executors with NaN in every padding lane of the
``test`` preset (16 x 16 blocks: several K / V steps and a ragged tail) and ``ascend910b``:
ragged S, D not a multiple of 16, one head, S_q != S_k (cross attention), an additive
mask, GPT-2's causal ``where``, T5's unscaled ``[B, H, Sq, Sk]`` position bias (which the
format engine adds in FRACTAL_NZ: ``fuse-ops`` moves it behind the scores' conversion) and a
scaled ``[1, H, Sq, Sk]`` one broadcast over the batch (FlashAttentionScore's ``pse``);
``fuse-ops``'s claim and its reasons. The online softmax
reorders the sums (a running max rescales the partial sums), so results match the graph
within the differential tests' tolerance (fp32: ~1e-6 relative).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.lowering.test_tile_differential import assert_matches, assert_no_nan, run_levels
from tilegraph.builder import GraphBuilder
from tilegraph.passes.statistics import collecting_statistics

NAN = float("nan")


def _attention(
    batch: int,
    sq: int,
    sk: int,
    heads: int,
    dim: int,
    mask: str = "",
    seed: int = 0,
    dtype: type[np.generic] = np.float32,
    guard: bool | str = False,
):
    """(module, inputs): attention of ``q`` [B, Sq, H·D] over ``kv`` [B, Sk, H·D] (the
    same projection for K and V, split into heads by views), scaled by 1/sqrt(D), with an
    additive ``mask`` [B, 1, 1, Sk] ("additive"), a causal ``where`` ("causal"), a position
    bias [1, H, Sq, Sk] ("pse"), or none; or not scaled, with T5's bias [B, H, Sq, Sk]
    ("position"); every tensor and constant of ``dtype``. ``guard``: the probabilities
    pass torch's SDPA NaN guard ``where(isnan(p), 0, p)`` on their way to ·V, as every
    Hugging Face export writes it; ``guard="input"``: with a one-element graph input
    ``fill`` (0.25) in place of the 0."""
    rng = np.random.default_rng(seed)
    hidden = heads * dim
    b = GraphBuilder()
    q_in, k_in, v_in = (
        b.input(n, [batch, s, hidden], dtype) for n, s in (("q", sq), ("k", sk), ("v", sk))
    )

    def heads_of(x, s: int, perm: list[int]):
        split = b.constant(np.array([batch, s, heads, dim], np.int64))
        return b.op("transpose", b.op("reshape", x, split), perm=perm)

    q = heads_of(q_in, sq, [0, 2, 1, 3])
    k = heads_of(k_in, sk, [0, 2, 3, 1])
    v = heads_of(v_in, sk, [0, 2, 1, 3])
    scores = b.op("matmul", q, k)
    if mask != "position":
        scores = b.op("mul", scores, b.constant(dtype(1 / np.sqrt(dim))))
    inputs = {
        n: rng.standard_normal((batch, s, hidden)).astype(dtype)
        for n, s in (("q", sq), ("k", sk), ("v", sk))
    }
    if mask == "additive":
        scores = b.op("add", scores, b.input("mask", [batch, 1, 1, sk], dtype))
        keep = rng.random((batch, 1, 1, sk)) < 0.8
        keep[..., 0] = True
        inputs["mask"] = np.where(keep, 0.0, -10000.0).astype(dtype)
    elif mask in ("position", "pse"):
        shape = [batch if mask == "position" else 1, heads, sq, sk]
        scores = b.op("add", b.input("bias", shape, dtype), scores)
        bias = rng.standard_normal(shape)
        if mask == "position":  # and padding: T5 adds its extended mask to the bias
            bias[-1, ..., -3:] = -10000.0
        inputs["bias"] = bias.astype(dtype)
    elif mask == "causal":
        allowed = np.tril(np.ones((sq, sk), bool), k=sk - sq)[None, None]
        low = b.constant(np.asarray(ml_dtypes.finfo(dtype).min, dtype))
        scores = b.op("where", b.constant(allowed), scores, low)
    probs = b.op("softmax", scores, axis=-1)
    if guard:
        fill = b.constant(dtype(0))
        if guard == "input":
            fill = b.input("fill", [], dtype)
            inputs["fill"] = np.asarray(0.25, dtype)
        probs = b.op("where", b.op("is_nan", probs), fill, probs)
    out = b.op("matmul", probs, v)
    merged = b.op("transpose", out, perm=[0, 2, 1, 3])
    merged = b.op("reshape", merged, b.constant(np.array([batch, sq, hidden], np.int64)))
    return b.build(merged), inputs


CASES = {
    "ragged": (2, 20, 20, 4, 12, "additive"),  # S and D ragged against the fractals
    "one_head": (1, 20, 20, 1, 24, ""),
    "cross": (1, 9, 37, 2, 12, "additive"),  # S_q != S_k: two full K blocks and a tail
    "causal": (1, 20, 20, 2, 12, "causal"),  # GPT-2's where
    "long": (1, 40, 70, 2, 8, "additive"),
    "t5": (2, 20, 20, 4, 12, "position"),  # unscaled, its bias added in FRACTAL_NZ
    "t5_cross": (1, 9, 37, 2, 12, "position"),
    "pse": (2, 20, 20, 2, 12, "pse"),  # scaled, the bias broadcast over the batch
}


def _flash_kernels(levels) -> list:
    return [
        k
        for k in levels.tiled_kernels
        if "graph.softmax" in k.ops and k.ops.count("graph.matmul") == 2
    ]


SMALL_UB_KEPT = ("test", "pse")
"""A case the ``test`` preset keeps as three kernels: Q·Kᵀ's scale and full-shape bias
tiles do not fit its small UB as one epilogue (``rejected-working-set``), so the scores'
epilogue is split over two groups and not claimed."""


@pytest.mark.parametrize(
    ("platform", "case"),
    [(p, c) for p in ("test", "ascend910b") for c in sorted(CASES) if (p, c) != SMALL_UB_KEPT],
)
def test_flash_attention_nan_padding(platform: str, case: str):
    """One mix kernel runs the whole attention; both executors match the graph with NaN
    in every padding lane."""
    module, inputs = _attention(*CASES[case])
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, platform, pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    kernels = levels.tiled_kernels
    assert all(k.unit != "host" for k in kernels), [(k.name, k.reason) for k in kernels]
    flash = _flash_kernels(levels)
    assert len(flash) == 1 and flash[0].unit == "mix", [(k.name, k.ops) for k in kernels]
    assert len(kernels) == 1  # no softmax, no reshape, no transpose kernel of its own
    fuse = stats.as_dict()["fuse-ops"]
    assert fuse["attention-claimed"] == 1
    # T5's bias has the scores' shape: added in FRACTAL_NZ until fuse-ops moves it
    assert fuse.get("epilogues-to-nd", 0) == (CASES[case][-1] == "position"), fuse


def test_small_ub_keeps_a_split_epilogue_unclaimed():
    """``SMALL_UB_KEPT``: three kernels with the reason counted, still exact."""
    platform, case = SMALL_UB_KEPT
    module, inputs = _attention(*CASES[case])
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, platform, pad_value=NAN)
    assert_matches(levels)
    assert not _flash_kernels(levels)
    fuse = stats.as_dict()["fuse-ops"]
    assert fuse.get("attention-kept.the scores' epilogue is split over several groups") == 1


@pytest.mark.parametrize("case", ["ragged", "t5"])
def test_coupled_preset_keeps_three_kernels(case: str):
    """By default 310P (coupled) claims only the attentions GE fuses there (fp16 BERT-like
    shapes): these stay Q·Kᵀ with its epilogue, the softmax and ·V; T5's bias is added in
    Q·Kᵀ's ND epilogue there too (not in a vector kernel of its own)."""
    module, inputs = _attention(*CASES[case])
    levels = run_levels(module, inputs, "ascend310p", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    assert not _flash_kernels(levels)
    ops = [k.ops for k in levels.tiled_kernels]
    assert ("graph.softmax",) in ops
    assert len(ops) == 3, ops


def test_head_dim_over_the_limit_is_kept_with_its_reason():
    """D = 160 is more than the kernel keeps on chip: three kernels, the reason counted."""
    module, inputs = _attention(1, 4, 4, 1, 160)
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, "ascend910b")
    assert_matches(levels)
    assert not _flash_kernels(levels)
    fuse = stats.as_dict()["fuse-ops"]
    assert fuse.get("attention-kept.a head dim 160 over 128") == 1, fuse


F16_RTOL, F16_ATOL = 1e-2, 2e-3
"""An fp16 attention against its graph: the kernel keeps S, the softmax statistics, P·V
and O in fp32 (as CANN's FlashAttentionScore) where the graph rounds every op's result to
fp16, and rounds P to fp16 before its normalisation (the graph: after)."""


@pytest.mark.parametrize(
    ("platform", "case"),
    [
        (p, c)
        for p in ("test", "ascend910b")
        for c in ("ragged", "causal", "long", "t5", "pse")
        if (p, c) != SMALL_UB_KEPT
    ],
)
def test_f16_attention_is_one_flash_kernel(platform: str, case: str):
    """An fp16 attention is claimed and runs as the flash kernel as fp32's does: its
    fp16 chain (scale, mask) on the scores rounded to fp16, the softmax in fp32, O
    rounded to fp16 once; both executors match the graph within fp16's tolerance."""
    module, inputs = _attention(*CASES[case], dtype=np.float16)
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, platform, pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels, rtol=F16_RTOL, atol=F16_ATOL)
    kernels = levels.tiled_kernels
    assert all(k.unit != "host" for k in kernels), [(k.name, k.reason) for k in kernels]
    assert len(kernels) == 1 and _flash_kernels(levels)[0].unit == "mix", [
        (k.name, k.ops) for k in kernels
    ]
    assert stats.as_dict()["fuse-ops"]["attention-claimed"] == 1


def test_bf16_attention_is_one_flash_kernel():
    """bf16 as fp16: one flash kernel, within bf16's tolerance (8 bits of mantissa)."""
    module, inputs = _attention(*CASES["ragged"], dtype=ml_dtypes.bfloat16)
    levels = run_levels(module, inputs, "ascend910b", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels, rtol=4e-2, atol=2e-2)
    assert len(levels.tiled_kernels) == 1 and _flash_kernels(levels)


def test_a_claim_the_kernel_refuses_lowers_as_the_three_kernels():
    """·V's result read by another op too: ``fuse-ops`` claims the attention, but its
    group ends at ·V's NZ result (the head merge stays out), which the flash kernel
    refuses. The group is lowered as the three kernels it was claimed from (Q·Kᵀ with its
    views and scale, the softmax, ·V with V's view), not one kernel per op."""
    batch, seq, heads, dim = 1, 20, 2, 12
    b = GraphBuilder()
    q_in, k_in, v_in = (b.input(n, [batch, seq, heads * dim]) for n in "qkv")
    split = b.constant(np.array([batch, seq, heads, dim], np.int64))
    q, k, v = (
        b.op("transpose", b.op("reshape", x, split), perm=perm)
        for x, perm in ((q_in, [0, 2, 1, 3]), (k_in, [0, 2, 3, 1]), (v_in, [0, 2, 1, 3]))
    )
    scores = b.op("mul", b.op("matmul", q, k), b.constant(np.float32(1 / np.sqrt(dim))))
    out = b.op("matmul", b.op("softmax", scores, axis=-1), v)
    merged = b.op("transpose", out, perm=[0, 2, 1, 3])
    merged = b.op("reshape", merged, b.constant(np.array([batch, seq, heads * dim], np.int64)))
    module = b.build(merged, b.op("relu", out))
    rng = np.random.default_rng(0)
    inputs = {n: rng.standard_normal((batch, seq, heads * dim)).astype(np.float32) for n in "qkv"}
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, "ascend910b", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    lowered = stats.as_dict()["lower-graph-to-kernels"]
    assert stats.as_dict()["fuse-ops"]["attention-claimed"] == 1
    assert lowered.get("unclaimed-attention") == 1, lowered
    ops = [k.ops for k in levels.tiled_kernels]
    assert ("graph.softmax",) in ops
    matmuls = [o for o in ops if "graph.matmul" in o]
    assert len(matmuls) == 2 and all("graph.transpose" in o for o in matmuls), ops
    assert sum("graph.mul" in o for o in matmuls) == 1, ops  # the scale in Q·Kᵀ's epilogue
