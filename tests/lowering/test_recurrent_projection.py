"""Recurrent layers whose input projection is computed apart (``W`` absent: ``X`` is
``X·Wᵀ`` of every step, ``hoist-recurrent-projection``): the kernel multiplies only
``h_{t-1}·Rᵀ`` per step and its vector side adds the gate's columns of ``G_t``. Each level
against the one above it (graph -> macro kernels -> tiled loops on both executors, NaN in
the unwritten on-chip lanes), and the pass against the layer it rewrites."""

from __future__ import annotations

import numpy as np
import pytest

from tests.lowering.test_recurrent_kernels import recurrent
from tests.lowering.test_tile_differential import (
    NAN,
    Graph,
    assert_matches,
    assert_units,
    run_levels,
)
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.recurrent import RecurrentOp
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.statistics import collecting_statistics
from tilegraph.runtime import run_reference


def projected(kind: str, hidden: int, direction: str = "forward", initial: bool = True,
              seq: int = 3, **attrs):  # fmt: skip
    """A ``kind`` layer without ``W`` over its projection ``[seq, BATCH, dirs·gates·H]``
    (an input), ``R`` / ``B`` (/ ``P``) constants, the initial states inputs or absent."""
    return recurrent(kind, hidden, direction, initial, seq=seq, inputs=None, **attrs)


CASES = {
    "rnn_forward": projected("rnn", 20),
    # step 0 from a zero state: a gate with no matmul, the projection alone
    "rnn_no_initial": projected("rnn", 20, initial=False),
    "gru_lbr_bidirectional": projected("gru", 20, "bidirectional", linear_before_reset=1),
    "gru_lbr_no_initial": projected("gru", 20, initial=False, linear_before_reset=1),
    "gru_reverse_seq7": projected("gru", 20, "reverse", seq=7),
    "gru_no_initial": projected("gru", 7, initial=False),
    "lstm_bidirectional_peepholes": projected("lstm", 20, "bidirectional", peepholes=True),
    "lstm_no_initial": projected("lstm", 36, initial=False, seq=5),
}


def _check(name: str, platform: str) -> None:
    g = Graph()
    module = g.b.build(*CASES[name](g))
    levels = run_levels(module, g.arrays, platform, pad_value=NAN)
    assert_matches(levels)
    kind = name.split("_")[0]
    assert_units(
        levels.tiled_kernels, {f"graph.{kind}": "cube"}, f"tile-kernels{{platform={platform}}}"
    )


@pytest.mark.parametrize("name", list(CASES))
def test_projected_layer_kernel(name: str):
    _check(name, "test")


@pytest.mark.parametrize("platform", ["ascend910b", "ascend310p"])
@pytest.mark.parametrize("name", ["gru_lbr_bidirectional", "lstm_no_initial"])
def test_projected_layer_kernel_on_real_presets(name: str, platform: str):
    _check(name, platform)


def test_one_step_from_a_zero_state_stays_on_the_host():
    """No matmul at all (the projection is the whole gate sum): not a cube kernel."""
    g = Graph()
    module = g.b.build(*projected("rnn", 20, initial=False, seq=1)(g))
    levels = run_levels(module, g.arrays, "test")
    assert_matches(levels)
    (kernel,) = levels.tiled_kernels
    assert kernel.unit == "host" and kernel.reason is not None
    assert "one step from a zero state" in kernel.reason


def layer(kind: str, inputs: int, hidden: int, direction: str, seq: int = 4, **attrs):
    """A ``kind`` layer over X [seq, BATCH, inputs] with ``W`` (constants as exported), the
    initial states given, an LSTM with peepholes."""
    return recurrent(
        kind, hidden, direction, seq=seq, inputs=inputs, peepholes=kind == "lstm", **attrs
    )


def _hoisted(build, platform: str, dtype: str = "float32"):
    """The layer before and after ``hoist-recurrent-projection`` on ``platform``, its
    statistics and inputs."""
    g = Graph(dtype=dtype)
    module = g.b.build(*build(g))
    ctx = make_context()
    run_pipeline(f"set-target{{platform={platform}}}", ctx, module)
    want = run_reference(module, g.arrays)
    with collecting_statistics() as stats:
        run_pipeline("hoist-recurrent-projection", ctx, module)
    got = run_reference(module, g.arrays)
    return module, want, got, stats.for_pass("hoist-recurrent-projection")


@pytest.mark.parametrize(
    ("kind", "direction", "inputs", "attrs"),
    [("lstm", "bidirectional", 512, {}), ("gru", "reverse", 1024, {"linear_before_reset": 1}),
     ("gru", "forward", 1024, {}), ("rnn", "bidirectional", 4096, {})],
)  # fmt: skip
def test_pass_hoists_a_streaming_w(kind: str, direction: str, inputs: int, attrs: dict):
    """Hidden 512 on 910B with W too large for L1 beside R (ddddocr's LSTM: W [2, 2048,
    512]; fewer gates need a wider input): one matmul of all steps, the layer without W;
    the same results within float32 rounding (the matmul's G is float32, rounded before
    the recurrent product is added)."""
    build = layer(kind, inputs, 512, direction, seq=2, **attrs)  # 2 steps: little chaos
    module, want, got, stats = _hoisted(build, "ascend910b")
    assert stats["hoisted-recurrent-projections"] == 1
    (op,) = [op for op in module.walk() if isinstance(op, RecurrentOp)]
    assert op.W is None
    assert sum(isinstance(op, MatMulOp) for op in module.walk()) == 1
    for have, expected in zip(got, want, strict=True):
        # G's float32 sums (of 512 to 4096 products, tens in size: errors of a few 1e-5)
        # carried through the step (random weights of this size amplify them); the
        # float64 reference rounds only its result
        np.testing.assert_allclose(have, expected, rtol=1e-4, atol=5e-4)


def test_pass_leaves_a_resident_w_alone():
    """W fits L1 beside R (hidden 20, input 12 on 910B): the step's x_t matmul stays."""
    module, want, got, stats = _hoisted(layer("gru", 12, 20, "bidirectional"), "ascend910b")
    assert stats["hoisted-recurrent-projections"] == 0
    (op,) = [op for op in module.walk() if isinstance(op, RecurrentOp)]
    assert op.W is not None


def test_pass_leaves_a_16_bit_layer_alone():
    """The streaming LSTM of the test above in float16: G would be rounded to 16 bits
    before the sum the fused step accumulates in float32; the layer keeps its W."""
    build = layer("lstm", 512, 512, "bidirectional", seq=2)
    module, _, _, stats = _hoisted(build, "ascend910b", dtype="float16")
    assert stats["hoisted-recurrent-projections"] == 0
    (op,) = [op for op in module.walk() if isinstance(op, RecurrentOp)]
    assert op.W is not None


def test_hoisted_layer_through_every_level():
    """On ``test`` (16 KiB of L1) an input of 200 makes W stream: O2 hoists it, the matmul
    and the projected layer are cube kernels and every level agrees."""
    g = Graph()
    module = g.b.build(*layer("lstm", 200, 20, "bidirectional")(g))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    assert_matches(levels)
    level = "tile-kernels{platform=test}"
    # the projection's matmul (only there when hoisted) and the layer, both on the cube
    assert_units(levels.tiled_kernels, {"graph.matmul": "cube", "graph.lstm": "cube"}, level)
