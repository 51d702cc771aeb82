"""The coupled flash kernel (``tiling/attention_coupled.py``): on ascend310p the attention
is one in-core kernel (a cube kernel with vector ops: S and P·V by the fixpipe into UB, P
through its GM workspace back into L1), not Q·Kᵀ, the softmax and ·V apart.

Checked against the graph level on both executors with NaN in every padding lane, on the
310P preset and on :data:`SMALL_COUPLED` (the 310P with the ``test`` preset's small
buffers: 16 x 16 blocks, several K / V steps with a ragged last one, ragged Q blocks);
fp32 and fp16; additive masks, GPT-2's causal where, T5's bias; and lowered in full
(``split-cores`` over several cores, ``inject-sync``, the pipe-queue checker) on both
executors.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func

from tests.lowering.test_flash_attention import (
    CASES,
    F16_ATOL,
    F16_RTOL,
    NAN,
    _attention,
    _flash_kernels,
)
from tests.lowering.test_tile_differential import assert_matches, assert_no_nan, run_levels
from tilegraph.cost_model.cycles.simulate import simulate_kernel
from tilegraph.cost_model.kernel_report import kernel_report
from tilegraph.dialects.tile import (
    CopyOp,
    FixpipeOp,
    Nd2NzOp,
    SyncBlockSetOp,
    memref_shape,
    scope_of,
)
from tilegraph.hardware import hardware_preset
from tilegraph.lowering.analysis.tuning_params import set_kernel_params
from tilegraph.lowering.conversion.tiling import tiled_copy
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import lowering_pipeline, option_value, run_pipeline
from tilegraph.passes.statistics import collecting_statistics
from tilegraph.runtime import run_reference
from tilegraph.runtime.tiles import run_tiles

SMALL_COUPLED = "ascend310p:l1=16KiB,l0a=4KiB,l0b=4KiB,l0c=8KiB,ub=16KiB"
"""A coupled preset whose buffers take 16 x 16 blocks only (the ``test`` preset's sizes)."""
PLATFORMS = {"310p": "ascend310p", "small": SMALL_COUPLED}
COUPLED_ALWAYS = "coupled-attention=always"
"""These shapes are not GE's (``ZAttentionScoreFusionPass``'s): the kernel is claimed on
request (:mod:`tilegraph.passes.fuse_attention`)."""


def _levels(case: str, platform: str, dtype: type[np.generic] = np.float32):
    module, inputs = _attention(*CASES[case], dtype=dtype)
    with collecting_statistics() as stats:
        levels = run_levels(
            module,
            inputs,
            option_value(PLATFORMS[platform]),
            pad_value=NAN,
            o2_options=COUPLED_ALWAYS,
        )
    return levels, stats.as_dict()["fuse-ops"]


def _one_coupled_kernel(levels) -> None:
    kernels = levels.tiled_kernels
    assert all(k.unit != "host" for k in kernels), [(k.name, k.reason) for k in kernels]
    flash = _flash_kernels(levels)
    assert len(kernels) == 1 and flash and flash[0].unit == "cube", [
        (k.name, k.unit, k.ops) for k in kernels
    ]


@pytest.mark.parametrize(
    ("platform", "case"),
    [(p, c) for p in sorted(PLATFORMS) for c in sorted(CASES) if (p, c) != ("small", "pse")],
)  # the small buffers split pse's epilogue as the test preset's do (SMALL_UB_KEPT)
def test_coupled_flash_attention_nan_padding(platform: str, case: str):
    """One in-core kernel runs the whole attention; both executors match the graph with
    NaN in every padding lane (ragged Sq / Sk / D, cross attention, masks, T5's bias)."""
    levels, fuse = _levels(case, platform)
    assert_no_nan(levels)
    assert_matches(levels)
    _one_coupled_kernel(levels)
    assert fuse["attention-claimed"] == 1


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
@pytest.mark.parametrize("case", ["ragged", "causal", "long", "t5"])
def test_coupled_f16_attention(platform: str, case: str):
    """fp16: the chain in fp16, the softmax and O in fp32, O rounded once."""
    levels, _ = _levels(case, platform, np.float16)
    assert_no_nan(levels)
    assert_matches(levels, rtol=F16_RTOL, atol=F16_ATOL)
    _one_coupled_kernel(levels)


def test_the_kernel_is_in_core():
    """No cross-core flag and no mix split: S and P·V reach UB by the fixpipe, P goes UB
    -> GM -> L1 through a workspace of one region per (batch, head, Q block)."""
    levels, _ = _levels("long", "small")
    ops = [op for op in levels.module.walk()]
    assert not any(isinstance(op, SyncBlockSetOp) for op in ops)
    fixpipes = [op for op in ops if isinstance(op, FixpipeOp)]
    assert len(fixpipes) == 2 and all(scope_of(op.dst) == "UB" for op in fixpipes)
    stores = [op for op in ops if isinstance(op, CopyOp) and scope_of(op.src) == "UB"]
    (p_store,) = [op for op in stores if op.dst.name_hint == "p_workspace"]
    (p_load,) = [op for op in ops if isinstance(op, Nd2NzOp) and op.src is p_store.dst]
    assert scope_of(p_load.dst) == "L1"
    batch, sq, _, heads, _, _ = CASES["long"]
    # [B, H, Sq rounded up to the 16-row Q block, 16 keys]
    assert memref_shape(p_store.dst) == (batch, heads, 48, 16)


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
@pytest.mark.parametrize("case", ["cross", "causal", "long"])
def test_coupled_flash_attention_lowered_in_full(platform: str, case: str):
    """The whole lowering (``split-cores`` over several cores, ``inject-sync``, the
    pipe-queue checker): one cube kernel on more than one core, both executors match the
    graph with NaN in the padding lanes."""
    module, inputs = _attention(*CASES[case])
    target = f"set-target{{platform={option_value(PLATFORMS[platform])}}},O2{{{COUPLED_ALWAYS}}}"
    run_pipeline(target, make_context(), module)
    reference = run_reference(module, inputs, pad_value=NAN)
    with collecting_statistics() as stats:
        run_pipeline(lowering_pipeline(), make_context(), module)
    (kernel,) = kernel_report(module)
    assert kernel.unit == "cube" and "graph.softmax" in kernel.ops
    assert stats.as_dict()["split-cores"]["blocks"] > 1
    for executor in ("interpret", "fast"):
        (got,) = run_tiles(module, inputs, executor=executor, pad_value=NAN)
        np.testing.assert_allclose(got, reference[0], rtol=1e-4, atol=1e-5, err_msg=executor)


def test_the_default_blocks_favour_long_key_steps():
    """On the coupled core one vector unit does each step's row work (two cross-lane
    reductions per query row, the row statistics) for ``Bk`` keys: the default blocks take
    the longest K step that fits, and the cycle model finds them faster than the largest
    Q block with the short K step the decoupled kernel's order would pick (Bq 128, Bk 32
    at BERT's D 64 in fp16)."""
    module, _ = _attention(1, 256, 256, 4, 64, "additive", dtype=np.float16)
    run_pipeline(
        f"set-target{{platform=ascend310p}},O2{{{COUPLED_ALWAYS}}},lower-graph-to-kernels",
        make_context(),
        module,
    )
    (macro,) = [f for f in module.ops if isinstance(f, func.FuncOp) and "graph.softmax" in str(f)]
    hw = hardware_preset("ascend310p")
    short = {"attention.block_q": 128, "attention.block_k": 32}
    times = []
    for params in ({}, short):
        fn = macro.clone()
        set_kernel_params(fn, params)
        tiled, space = tiled_copy(fn, hw)
        (kernel,) = [f for f in tiled.ops if isinstance(f, func.FuncOp)]
        times.append(simulate_kernel(kernel, hw).us)
    default = {p.name: p.default for p in space}
    assert int(default["attention.block_k"]) > short["attention.block_k"], default
    assert times[0] < times[1], times


def _fuse_stats(platform: str, *shape, dtype: type[np.generic], o2: str = "O2") -> dict:
    module, _ = _attention(*shape, "additive", dtype=dtype)
    with collecting_statistics() as stats:
        run_pipeline(f"set-target{{platform={platform}}},{o2}", make_context(), module)
    return stats.as_dict()["fuse-ops"]


@pytest.mark.parametrize(
    ("batch", "seq", "heads", "dtype", "kept"),
    [
        (2, 32, 12, np.float16, None),  # BERT-base's shape, batch x heads 24
        (1, 32, 12, np.float16, "batch x heads is a multiple of 8"),  # batch 1: 12
        (2, 32, 12, np.float32, "fp16 scores"),
        (2, 40, 12, np.float16, "a multiple of 32"),
        (2, 32, 4, np.float16, "12 or 16 heads"),
    ],
)
def test_the_310p_claims_what_ge_fuses(batch, seq, heads, dtype, kept):
    """By default a coupled preset claims an attention only where GE's
    ``ZAttentionScoreFusionPass`` fuses one (fp16, 12 or 16 heads, head dim 64, a sequence
    a multiple of 32 up to 512, batch x heads a multiple of 8); ``coupled-attention=always``
    claims the others, and a decoupled preset claims all of them."""
    shape = (batch, seq, seq, heads, 64)
    stats = _fuse_stats("ascend310p", *shape, dtype=dtype)
    if kept is None:
        assert stats.get("attention-claimed") == 1, stats
    else:
        assert "attention-claimed" not in stats, stats
        assert [k for k in stats if k.startswith("attention-kept.") and kept in k], stats
    always = _fuse_stats("ascend310p", *shape, dtype=dtype, o2=f"O2{{{COUPLED_ALWAYS}}}")
    assert always.get("attention-claimed") == 1, always
    assert _fuse_stats("ascend910b", *shape, dtype=dtype).get("attention-claimed") == 1
