"""DynamicQuantizeLSTM under ``int8`` (``expand-quantized-lstm``): the input projection of
all steps as DynamicQuantizeLinear + an int8 quant matmul on the cube, the recurrence
(``graph.dynamic_quantize_lstm_steps``) a kernel of its own (no host op left; its cases
are ``test_quantized_recurrent_kernel.py``'s).

The tiled model (both executors; presets ``test``, ``ascend910b``, ``ascend310p``) must
equal the reference of the imported op exactly: the integer products are exact, the
projection is ``float32(acc)`` times the same float32 ``x_scale · W_scale`` product, and
the recurrence's kernel equals the op's reference (tolerance 0). Cases: forward / reverse / bidirectional,
with and without initial states, per-tensor and per-channel scales, int8 and uint8
weights (the uint8 ones leave int8 after their zero point: split weights), hidden sizes
off 16 and inputs off 32, batch 1 and 2.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilegraph
from tests.frontend.test_dynamic_quantize_lstm import _model
from tilegraph.dialects.graph.quantized_recurrent import DynamicQuantizeLSTMStepsOp
from tilegraph.frontend import load_onnx
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.statistics import collecting_statistics
from tilegraph.runtime import run_reference

CASES = {
    "forward": dict(seq=5, batch=1, inp=7, hidden=5),
    "reverse-uint8-states": dict(seq=4, batch=2, inp=33, hidden=3, direction="reverse",
                                 signed=False, states=True),
    "bidirectional": dict(seq=6, batch=1, inp=40, hidden=17, direction="bidirectional"),
    "bidirectional-per-channel-states": dict(seq=4, batch=2, inp=9, hidden=7,
                                             direction="bidirectional", per_channel=True,
                                             states=True),
    "per-channel-uint8-peephole": dict(seq=3, batch=2, inp=5, hidden=6, per_channel=True,
                                       signed=False, peephole=True),
}  # fmt: skip
PRESETS = {
    "test": sorted(CASES),
    "ascend910b": ["bidirectional-per-channel-states", "reverse-uint8-states"],
    "ascend310p": ["bidirectional", "per-channel-uint8-peephole"],
}


def _case(name: str):
    return _model(np.random.default_rng(len(name)), **CASES[name])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("platform", "case"), [(p, c) for p, cases in PRESETS.items() for c in cases]
)
@pytest.mark.parametrize("executor", ["fast", "interpret"])
def test_the_tiles_equal_the_reference(platform: str, case: str, executor: str):
    model, feeds = _case(case)
    want = run_reference(load_onnx(model), feeds)
    compiled = tilegraph.compile(
        model, "O2", platform=platform, precision="int8", executor=executor
    )
    got = compiled(*feeds.values())
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    assert compiled.host_ops == []


def _optimised(case: str, precision: str):
    model, _ = _case(case)
    module = load_onnx(model)
    run_pipeline(f"set-target{{precision={precision}}},O2", make_context(), module)
    return module


def test_the_projection_is_one_quant_matmul_for_both_directions():
    with collecting_statistics() as stats:
        module = _optimised("bidirectional-per-channel-states", "int8")
    names = [op.name for op in module.walk()]
    assert names.count("graph.quant_matmul") == 1
    assert "graph.dynamic_quantize_lstm" not in names
    (steps,) = [op for op in module.walk() if isinstance(op, DynamicQuantizeLSTMStepsOp)]
    assert steps.attr("direction") == "bidirectional"
    assert stats.for_pass("expand-quantized-lstm").counters["expanded-quantized-lstm"] == 1


def test_other_precisions_keep_the_op():
    names = [op.name for op in _optimised("forward", "origin").walk()]
    assert "graph.dynamic_quantize_lstm" in names
    assert "graph.dynamic_quantize_lstm_steps" not in names
