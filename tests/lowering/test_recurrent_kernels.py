"""Recurrent layers (RNN, GRU, LSTM) on the AI core, each level against the one above it
(the harness of :mod:`tests.lowering.test_tile_differential`): graph -> macro kernels ->
tiled loops on both executors, on the ``test`` preset (a decoupled one: mix kernels whose
AIV hands each step's state back to the AIC through a cross-core flag), with NaN in the
on-chip buffers' unwritten lanes. Hidden sizes that are not multiples of 16 (20: two hidden
blocks of 16, the last ragged), batch > 1, every direction, initial states given and
absent. What stays on the host says why."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.ir import SSAValue

from tests.lowering.test_tile_differential import (
    NAN,
    Graph,
    assert_matches,
    assert_units,
    make_context,
    run_levels,
    run_pipeline,
)

CUBE = "cube"
SEQ, BATCH, INPUT = 3, 2, 12
GATES = {"rnn": 1, "gru": 3, "lstm": 4}


def recurrent(
    kind: str,
    hidden: int,
    direction: str = "forward",
    initial: bool = True,
    bias: bool = True,
    seq: int = SEQ,
    inputs: int | None = INPUT,
    peepholes: bool = False,
    **attrs,
):
    """A ``kind`` layer over X [seq, BATCH, inputs] with weights as constants (as exported
    models carry them) and the initial states as inputs (given) or absent. ``inputs``
    None: the layer without ``W`` over its projection ``[seq, BATCH, dirs·gates·hidden]``
    (``hoist-recurrent-projection``'s form). ``peepholes``: an LSTM's ``P``."""

    def build(g: Graph) -> list[SSAValue]:
        dirs = 2 if direction == "bidirectional" else 1
        gates = GATES[kind]
        x = g.input([seq, BATCH, dirs * gates * hidden if inputs is None else inputs])
        w = None if inputs is None else g.const([dirs, gates * hidden, inputs])
        r = g.const([dirs, gates * hidden, hidden])
        b = g.const([dirs, 2 * gates * hidden]) if bias else None
        h0 = g.input([dirs, BATCH, hidden]) if initial else None
        operands: list[SSAValue | None] = [x, w, r, b, None, h0]
        if kind == "lstm":
            c0 = g.input([dirs, BATCH, hidden]) if initial else None
            p = g.const([dirs, 3 * hidden]) if peepholes else None
            operands += [c0, p]
        results = g.b.op_results(kind, *operands, hidden_size=hidden, direction=direction, **attrs)
        return list(results)

    return build


CASES = {
    **{
        f"{kind}_{direction}": recurrent(kind, 20, direction)
        for kind in ("rnn", "gru", "lstm")
        for direction in ("forward", "reverse", "bidirectional")
    },
    "rnn_no_initial_no_bias": recurrent("rnn", 20, initial=False, bias=False),
    "rnn_relu_clip": recurrent("rnn", 16, activations=["Relu"], clip=0.5),
    "gru_linear_before_reset": recurrent("gru", 20, "bidirectional", linear_before_reset=1),
    "gru_lbr_no_initial": recurrent("gru", 20, initial=False, linear_before_reset=1),
    "gru_no_initial": recurrent("gru", 7, initial=False),
    "lstm_no_initial": recurrent("lstm", 20, initial=False),
    "lstm_peepholes_clip": recurrent("lstm", 20, peepholes=True, clip=1.5),
    "lstm_input_forget": recurrent("lstm", 9, "reverse", input_forget=1),
    # seq 1: no time loop; seq 7: the loop's steps alternate the workspace slots
    "rnn_seq1": recurrent("rnn", 20, "bidirectional", seq=1),
    "lstm_seq1": recurrent("lstm", 20, seq=1),
    "gru_seq7_reverse": recurrent("gru", 20, "reverse", seq=7),
    "lstm_seq7_bidirectional": recurrent("lstm", 36, "bidirectional", seq=7),
    "lstm_hardsigmoid": recurrent(
        "lstm",
        16,
        activations=["HardSigmoid", "Tanh", "Affine"],
        activation_alpha=[0.3, 0.5],
        activation_beta=[0.4, 0.1],
    ),
}


def _module(name: str):
    g = Graph()
    return g.b.build(*CASES[name](g)), g.arrays


@pytest.mark.parametrize("name", list(CASES))
def test_recurrent_kernel(name: str):
    """Every level agrees (NaN in unwritten on-chip lanes); the layer is one cube kernel."""
    module, inputs = _module(name)
    levels = run_levels(module, inputs, "test", pad_value=NAN)
    for level, outputs in levels.outputs.items():
        for out in outputs:
            assert not np.isnan(out).any(), f"{level}: NaN from an unwritten lane"
    assert_matches(levels)
    kind = name.split("_")[0]
    assert_units(levels.tiled_kernels, {f"graph.{kind}": CUBE}, "tile-kernels{platform=test}")


def test_sequence_lens_in_layout_1_stays_on_the_host():
    """``expand-recurrent-lengths`` takes layout 0 (its own tests), the kernel too."""
    g = Graph()
    x = g.input([BATCH, SEQ, INPUT])
    w, r = g.const([1, 32, INPUT]), g.const([1, 32, 8])
    lens = g.b.constant(np.array([3, 2], np.int32))
    results = g.b.op_results("lstm", x, w, r, None, lens, hidden_size=8, layout=1)
    module = g.b.build(*results)
    levels = run_levels(module, g.arrays, "test")
    assert_matches(levels)
    (kernel,) = levels.tiled_kernels
    assert kernel.unit == "host"
    assert kernel.reason is not None and "layout 1" in kernel.reason


@pytest.mark.parametrize("platform", ["ascend310p", "ascend910b"])
@pytest.mark.parametrize("name", ["lstm_bidirectional", "gru_forward", "gru_lbr_no_initial"])
def test_recurrent_kernel_on_real_presets(name: str, platform: str):
    """The coupled 310P (one kernel, no flags) and the decoupled 910B (a mix kernel) agree
    with the graph level."""
    module, inputs = _module(name)
    levels = run_levels(module, inputs, platform, pad_value=NAN)
    assert_matches(levels)
    kind = name.split("_")[0]
    assert_units(
        levels.tiled_kernels, {f"graph.{kind}": CUBE}, f"tile-kernels{{platform={platform}}}"
    )


@pytest.mark.slow
@pytest.mark.parametrize("platform", ["test", "ascend910b", "ascend310p"])
@pytest.mark.parametrize(
    "name",
    ["lstm_peepholes_clip", "gru_forward", "gru_linear_before_reset", "lstm_seq7_bidirectional"],
)
def test_recurrent_kernel_through_the_npu_passes(name: str, platform: str):
    """The whole lowering pipeline (multi-buffer .. inject-sync, then verify-sync) takes the
    time loop: each gate's K loops and vector work are loop nests in the loop's body that
    inject-sync fences apart, within its 8 events per pipe pair; the cross-core state flags
    stay balanced."""
    from tests.lowering.test_tile_differential import make_context, run_pipeline
    from tilegraph.passes.pipelines import lowering_pipeline

    module, _ = _module(name)
    target = f"set-target{{platform={platform} precision=origin}},O2,"
    run_pipeline(target + lowering_pipeline(), make_context(), module)
    module.verify()


@pytest.mark.parametrize("choice", ["none", "R", "RW"])
def test_weights_in_l1_are_a_tiling_parameter(choice: str):
    """``recurrent.l1_weights`` offers the choices that fit (the default the largest): the
    weights it keeps are copied to L1 once, the others stream per step; every choice keeps
    the numbers (both executors, NaN in padding lanes)."""
    from tilegraph.hardware import hardware_preset
    from tilegraph.lowering.analysis.tuning_params import set_kernel_params
    from tilegraph.lowering.conversion.tiling import tiling_space
    from tilegraph.passes.pipelines import lowering_pipeline
    from tilegraph.runtime.tiles import run_tiles

    module, inputs = _module("rnn_forward")
    run_pipeline("set-target{platform=test},O1,lower-graph-to-kernels", make_context(), module)
    (kernel,) = [
        f for f in module.ops if isinstance(f, func.FuncOp) and "tile.kernel" in f.attributes
    ]
    space = {p.name: p for p in tiling_space(kernel, hardware_preset("test"))}
    param = space["recurrent.l1_weights"]
    assert param.values == ("none", "R", "RW") and param.default == "RW"
    set_kernel_params(kernel, {"recurrent.l1_weights": choice})
    run_pipeline(lowering_pipeline(), make_context(), module)  # verify-sync included
    names = {op.results[0].name_hint for op in module.walk() if op.name == "tile.alloc"}
    assert ("r0_0_l1" in names) == (choice != "none")
    assert ("w0_0_l1" in names) == (choice == "RW")
    plain, _ = _module("rnn_forward")
    want = run_levels(plain, inputs, "test").reference
    for executor in ("fast", "interpret"):
        got = run_tiles(module, inputs, executor=executor, pad_value=NAN)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("cores", "choices"), [(1, ("none",)), (2, ("none", "R"))])
def test_lstm_weights_over_l1_stream(cores: int, choices: tuple[str, ...]):
    """An LSTM's four gates of R (16 KiB of f32) do not fit the `test` preset's L1 beside
    the step's tiles on one core: the only choice is to stream them; shared over its two
    cores (``recurrent.cores``), each core's half of the columns fits."""
    from tilegraph.hardware import hardware_preset
    from tilegraph.lowering.analysis.tuning_params import set_kernel_params
    from tilegraph.lowering.conversion.tiling import tiling_space

    module, _ = _module("lstm_forward")
    run_pipeline("set-target{platform=test},O1,lower-graph-to-kernels", make_context(), module)
    (kernel,) = [
        f for f in module.ops if isinstance(f, func.FuncOp) and "tile.kernel" in f.attributes
    ]
    set_kernel_params(kernel, {"recurrent.cores": cores})
    space = {p.name: p for p in tiling_space(kernel, hardware_preset("test"))}
    assert space["recurrent.cores"].values == (1, 2)
    assert space["recurrent.l1_weights"].values == choices
