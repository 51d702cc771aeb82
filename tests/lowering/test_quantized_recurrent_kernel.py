"""DynamicQuantizeLSTM's recurrence (``graph.dynamic_quantize_lstm_steps``) as one AI-core
kernel under ``int8``: every level — the graph reference, the macro kernels, the tiles on
both executors — equals the imported op's reference exactly (tolerance 0: the integer
products are exact, the float32 steps the reference's, in its order), with NaN in the
on-chip buffers' unwritten lanes, on the decoupled ``test`` and ``ascend910b`` (a mix
kernel: the AIV quantises each step's state and hands it to the AIC by a cross-core flag)
and the coupled ``ascend310p``. Cases: forward / reverse / bidirectional, initial states
given and absent, per-tensor and per-channel scales, int8 and uint8 ``R`` (a zero point
off the centre: the row-sum correction), hidden sizes off 16 (ragged blocks) and inputs
off 32, batch 1, 2 and 16 (the ones row in a fractal of its own), peepholes, clip,
input_forget, several cores. No kernel is left on the host."""

from __future__ import annotations

import numpy as np
import pytest

from tests.frontend.test_dynamic_quantize_lstm import _model
from tests.lowering.test_quantized_lstm_projection import CASES as PROJECTION_CASES
from tests.lowering.test_tile_differential import (
    NAN,
    assert_matches,
    assert_units,
    make_context,
    run_levels,
    run_pipeline,
)
from tilegraph.dialects.tile import LaunchOp
from tilegraph.frontend import load_onnx

STEPS = "graph.dynamic_quantize_lstm_steps"

CASES = {
    **PROJECTION_CASES,  # forward, reverse-uint8-states, bidirectional, ...
    "bidirectional-two-blocks-states": dict(seq=4, batch=2, inp=9, hidden=20,
                                            direction="bidirectional", per_channel=True,
                                            states=True),
    "clip-input-forget-states": dict(seq=4, batch=2, inp=33, hidden=20, states=True,
                                     clip=0.7, input_forget=1),
    "batch16-reverse": dict(seq=3, batch=16, inp=12, hidden=9, direction="reverse"),
    "seq1-states": dict(seq=1, batch=2, inp=8, hidden=5, states=True, peephole=True),
    "cores-seq7": dict(seq=7, batch=1, inp=35, hidden=29, direction="bidirectional",
                       states=True),
}  # fmt: skip
BIG = ("batch16-reverse",)
"""Cases whose step tiles outgrow the `test` preset's UB."""
PRESETS = {
    "test": sorted(set(CASES) - set(BIG)),
    "ascend910b": ["bidirectional-two-blocks-states", "reverse-uint8-states", "cores-seq7", *BIG],
    "ascend310p": ["bidirectional", "per-channel-uint8-peephole", "cores-seq7", *BIG],
}


def _module(name: str):
    model, feeds = _model(np.random.default_rng(len(name)), **CASES[name])  # type: ignore[arg-type]
    return load_onnx(model), feeds


@pytest.mark.parametrize(
    ("platform", "case"), [(p, c) for p, cases in PRESETS.items() for c in cases]
)
def test_the_kernel_equals_the_reference(platform: str, case: str):
    module, feeds = _module(case)
    levels = run_levels(module, feeds, platform, precision="int8", pad_value=NAN)
    assert_matches(levels, rtol=0, atol=0)
    for level, outputs in levels.outputs.items():
        for out in outputs:
            assert not np.isnan(out).any(), f"{level}: NaN from an unwritten lane"
    assert_units(levels.tiled_kernels, {STEPS: "cube"}, f"tile-kernels{{platform={platform}}}")


def test_the_kernel_is_shared_over_cores():
    """29 hidden columns are 2 fractals: the `test` preset's two cores share them (each core
    quantises the whole state into its own workspace region)."""
    module, feeds = _module("cores-seq7")
    levels = run_levels(module, feeds, "test", precision="int8")
    (kernel,) = [k for k in levels.tiled_kernels if STEPS in k.ops]
    blocks = [
        op.block_count
        for op in levels.module.walk()
        if isinstance(op, LaunchOp) and "dynamic_quantize_lstm_steps" in op.callee.string_value()
    ]
    assert kernel.unit in ("cube", "mix") and blocks == [2]


@pytest.mark.slow
@pytest.mark.parametrize("platform", ["test", "ascend910b", "ascend310p"])
@pytest.mark.parametrize("case", ["bidirectional-two-blocks-states", "cores-seq7"])
def test_the_kernel_through_the_npu_passes(case: str, platform: str):
    """The whole lowering pipeline (multi-buffer .. inject-sync, then verify-sync and the
    barrier checker) takes the kernel: the state flags after each quantisation are
    balanced, the events within their budget."""
    from tilegraph.passes.pipelines import lowering_pipeline

    module, _ = _module(case)
    target = f"set-target{{platform={platform} precision=int8}},O2,"
    run_pipeline(target + lowering_pipeline(), make_context(), module)
    module.verify()


def test_one_step_from_a_zero_state_stays_on_the_host():
    """No gate product (h_{-1} is 0): no cube work, the op runs on the host, saying why."""
    model, feeds = _model(np.random.default_rng(1), seq=1, batch=1, inp=4, hidden=3)
    levels = run_levels(load_onnx(model), feeds, "test", precision="int8")
    assert_matches(levels, rtol=0, atol=0)
    (kernel,) = [k for k in levels.tiled_kernels if STEPS in k.ops]
    assert kernel.unit == "host" and kernel.reason is not None
    assert "one step from a zero state" in kernel.reason
