"""Recurrent layers with ``sequence_lens`` (``expand-recurrent-lengths``) and
ReverseSequence on the AI core, each level against the one above it (the harness of
:mod:`tests.lowering.test_tile_differential`: graph -> macro kernels -> tiled loops on both
executors), with NaN in the on-chip buffers' unwritten lanes and in X's steps past each
entry's length. No kernel stays on the host."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.ir import SSAValue

from tests.lowering.test_axis_kernels import int_input
from tests.lowering.test_tile_differential import (
    NAN,
    Graph,
    assert_matches,
    assert_no_nan,
    assert_units,
    run_levels,
)

CUBE, VECTOR = "cube", "vector"
SEQ, BATCH, INPUT, HIDDEN = 5, 3, 12, 20
GATES = {"rnn": 1, "gru": 3, "lstm": 4}
LENGTHS = [5, 1, 3]  # the full sequence, 1, ragged


def lengths_input(g: Graph, values: list[int], dtype: type = np.int32) -> SSAValue:
    """A kernel input holding ``values`` (so nothing folds them)."""
    arg = int_input(g, [len(values)], 0, 1, dtype)
    g.arrays[-1][:] = values
    return arg


def layer(
    g: Graph, kind: str, direction: str, initial: bool, lengths: list[int], y_c: bool = False
):
    """A ``kind`` layer over X [SEQ, BATCH, INPUT] (NaN past each length), its lengths and
    initial states inputs; returns Y and Y_h (and LSTM's Y_c when ``y_c``)."""
    dirs = 2 if direction == "bidirectional" else 1
    gates = GATES[kind]
    x = g.input([SEQ, BATCH, INPUT])
    for b, n in enumerate(lengths):
        g.arrays[-1][n:, b] = np.nan
    w, r = g.const([dirs, gates * HIDDEN, INPUT]), g.const([dirs, gates * HIDDEN, HIDDEN])
    bias = g.const([dirs, 2 * gates * HIDDEN])
    lens = lengths_input(g, lengths)
    h0 = g.input([dirs, BATCH, HIDDEN]) if initial else None
    operands = [x, w, r, bias, lens, h0]
    if kind == "lstm":
        operands += [g.input([dirs, BATCH, HIDDEN]) if initial else None, None]
    results = g.b.op_results(kind, *operands, hidden_size=HIDDEN, direction=direction)
    return list(results[: 3 if y_c else 2])


def _check(
    kind: str, direction: str, platform: str, initial: bool = True, lengths=LENGTHS,
    y_c: bool = False,
):  # fmt: skip
    g = Graph()
    module = g.b.build(*layer(g, kind, direction, initial, lengths, y_c))
    levels = run_levels(module, g.arrays, platform, pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    level = f"tile-kernels{{platform={platform}}}"
    name = "graph.lstm_cells" if y_c else f"graph.{kind}"
    assert_units(levels.tiled_kernels, {name: CUBE}, level)
    if direction != "forward" or kind == "gru":
        assert_units(levels.tiled_kernels, {"graph.reverse_sequence": VECTOR}, level)


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("kind", ["rnn", "gru", "lstm"])
def test_layer_with_lengths_on_the_ai_core(kind: str, direction: str):
    _check(kind, direction, "test")


def test_layer_without_initial_state_and_a_length_of_zero():
    _check("gru", "bidirectional", "test", initial=False, lengths=[0, 5, 2])


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_lstm_final_cell_state_on_the_ai_core(direction: str):
    """Y_c read under sequence_lens: graph.lstm_cells' kernel stores c per step, Y_c is
    gathered at each entry's last step (lengths of the full sequence, 1 and ragged)."""
    _check("lstm", direction, "test", y_c=True)


@pytest.mark.parametrize("platform", ["test", "ascend910b", "ascend310p"])
def test_lstm_final_cell_state_with_a_length_of_zero(platform: str):
    _check("lstm", "bidirectional", platform, initial=False, lengths=[0, 5, 2], y_c=True)


@pytest.mark.parametrize("platform", ["ascend910b", "ascend310p"])
@pytest.mark.parametrize(("kind", "direction"), [("gru", "bidirectional"), ("lstm", "reverse")])
def test_layer_with_lengths_on_real_presets(kind: str, direction: str, platform: str):
    _check(kind, direction, platform)


def reverse_sequence(shape: list[int], lengths: list[int], time_axis: int, constant: bool = False):
    def build(g: Graph) -> list[SSAValue]:
        x = g.input(shape)
        lens = g.ints(lengths) if constant else lengths_input(g, lengths, np.int64)
        return [g.op("reverse_sequence", x, lens, time_axis=time_axis, batch_axis=1 - time_axis)]

    return build


REVERSALS = {
    # [T, B, 8] f32: rows of one DMA block, the 15 rows one ragged tile of 3 cores' shares
    "time_major": reverse_sequence([5, 3, 8], [5, 1, 3], 0),
    "batch_major": reverse_sequence([3, 5, 2, 8], [2, 5, 0], 1),
    # 20-element rows: not a multiple of 32 bytes, so a row per tile
    "unaligned_rows": reverse_sequence([4, 2, 20], [3, 4], 0),
    # lengths past the sequence reverse all of it
    "long_lengths": reverse_sequence([4, 2, 16], [7, 2], 0),
    # compile-time lengths: the row DMAs unrolled
    "constant_lengths": reverse_sequence([4, 3, 8], [4, 2, 1], 0, constant=True),
    # one compile-time length for all (tf2onnx's ReverseV2): a loop, not 60 unrolled rows
    # (which needed more MTE2 -> MTE3 flags than the test preset's pipes have)
    "one_constant_length": reverse_sequence([30, 2, 40], [30, 30], 0, constant=True),
    "one_short_constant_length": reverse_sequence([2, 7, 16], [5] * 2, 1, constant=True),
}


def bool_mask_reversal(shape: list[int], lengths: list[int], time_axis: int):
    """A tf2onnx bidirectional LSTM's mask: bool ``[T, B, 1]`` (1-byte rows) reversed by
    compile-time lengths."""

    def build(g: Graph) -> list[SSAValue]:
        x = int_input(g, shape, 0, 2, np.bool_)
        lens = g.ints(lengths)
        return [g.op("reverse_sequence", x, lens, time_axis=time_axis, batch_axis=1 - time_axis)]

    return build


SHORT_ROWS = {
    # ragged: 7 steps x 3 entries of 1-byte rows, one length past the end, one of 0
    "bool_time_major": bool_mask_reversal([7, 3, 1], [7, 9, 0], 0),
    "bool_batch_major": bool_mask_reversal([3, 5], [2, 5, 1], 1),
    # 4-byte rows of 3 elements (12 B): still under a DMA block
    "f32_rows_of_3": reverse_sequence([5, 2, 3], [3, 5], 0, constant=True),
}
REVERSALS.update(SHORT_ROWS)  # picked through UB (gather_ub), on the vector core too


@pytest.mark.parametrize("platform", ["test", "ascend910b", "ascend310p"])
@pytest.mark.parametrize("name", list(REVERSALS))
def test_reverse_sequence_kernel(name: str, platform: str):
    g = Graph()
    module = g.b.build(*REVERSALS[name](g))
    levels = run_levels(module, g.arrays, platform, pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels, rtol=0, atol=0)  # rows moved, not computed
    assert_units(
        levels.tiled_kernels,
        {"graph.reverse_sequence": VECTOR},
        f"tile-kernels{{platform={platform}}}",
    )


def test_reverse_sequence_reference():
    """The graph level's result, written out by hand for one small case."""
    g = Graph()
    module = g.b.build(*reverse_sequence([3, 2, 8], [2, 3], 0)(g))
    x = g.arrays[0]
    levels = run_levels(module, g.arrays, "test")
    want = np.stack([[x[1, 0], x[2, 1]], [x[0, 0], x[1, 1]], [x[2, 0], x[0, 1]]])
    np.testing.assert_array_equal(levels.reference[0], want)
    np.testing.assert_array_equal(levels.outputs["fast"][0], want)


def test_short_rows_with_run_time_lengths_stay_on_the_host():
    g = Graph()
    module = g.b.build(*reverse_sequence([4, 3], [4, 2, 1], 0)(g))
    levels = run_levels(module, g.arrays, "test")
    assert_matches(levels)
    (kernel,) = levels.tiled_kernels
    assert kernel.unit == "host"
    assert kernel.reason is not None and "rows under 32 bytes" in kernel.reason
    assert "run time" in kernel.reason


@pytest.mark.parametrize("platform", ["test", "ascend910b", "ascend310p"])
def test_through_the_npu_passes_and_the_cycle_model(platform: str):
    """The whole lowering pipeline (multi-buffer .. inject-sync, then verify-sync) takes a
    bidirectional GRU with lengths: the source rows of ReverseSequence, computed from
    lengths read from data, are unknowns to the kernel walk (a comparison, min and select
    of one give one); both executors still agree with the graph level and the cycle
    model costs every kernel."""
    from tilegraph.cost_model.cycles import simulate_module
    from tilegraph.passes.context import make_context
    from tilegraph.passes.pipelines import lowering_pipeline, run_pipeline
    from tilegraph.runtime import run_reference
    from tilegraph.runtime.tiles import run_tiles

    g = Graph()
    module = g.b.build(*layer(g, "gru", "bidirectional", True, LENGTHS))
    ctx = make_context()
    run_pipeline(f"set-target{{platform={platform} precision=origin}},O2", ctx, module)
    want = run_reference(module, g.arrays)
    run_pipeline(lowering_pipeline(), ctx, module)
    for executor in ("fast", "interpret"):
        got = run_tiles(module, g.arrays, executor=executor, pad_value=NAN)
        for have, expected in zip(got, want, strict=True):
            np.testing.assert_allclose(have, expected, rtol=1e-4, atol=1e-5)
    kernels = simulate_module(module).kernels
    reversal = [k for k in kernels if "reverse_sequence" in k.name]
    assert reversal and all(k.cycles > 0 for k in reversal)


def test_comparisons_min_and_select_of_a_data_dependent_value_are_unknown():
    from tilegraph.dialects.index_arith import DataDependent, maxsi, minsi, select

    value = DataDependent()
    assert isinstance(3 < value, DataDependent) and isinstance(value >= 3, DataDependent)
    assert isinstance(minsi(value, 7), DataDependent) and isinstance(maxsi(7, value), DataDependent)
    assert isinstance(select(value < 3, 1, 2), DataDependent)
    assert (minsi(3, 7), maxsi(3, 7), select(True, 1, 2), select(False, 1, 2)) == (3, 7, 1, 2)
    try:
        range(minsi(value, 7))  # type: ignore[call-overload]
    except TypeError:
        pass
    else:
        raise AssertionError("a loop bound cannot be a value read from data")
