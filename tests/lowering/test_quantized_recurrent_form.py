"""The int8 cube's re-centred form of DynamicQuantizeLSTM's recurrent gate product
(``tiling/quantized_recurrent.py``) equals onnxruntime's exact product bit for bit: one
step (batch 1 and 2, int8 and uint8 ``R``, per-tensor and per-channel scales, odd sizes,
states of one sign or all zero) and whole recurrences (forward / reverse / bidirectional,
initial states, peepholes) through the op's reference with the product swapped."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import numpy_helper

from tests.lowering.test_quantized_lstm_projection import CASES, _case
from tilegraph.dialects.graph.quantized_recurrent import (
    DynamicQuantizeLSTMOp,
    input_projection,
    quantized_lstm_steps,
    quantized_product,
)
from tilegraph.frontend import load_onnx
from tilegraph.lowering.conversion.tiling.quantized_recurrent import (
    MAX_HIDDEN,
    centred_product,
    centred_weights,
)


def _weights(rng: np.random.Generator, k: int, n: int, signed: bool) -> tuple[np.ndarray, int]:
    if signed:
        return rng.integers(-128, 128, (k, n)).astype(np.int8), 0
    return rng.integers(0, 256, (k, n)).astype(np.uint8), int(rng.integers(0, 256))


STATES = {
    "mixed": lambda rng, shape: rng.standard_normal(shape).astype(np.float32),
    "positive": lambda rng, shape: rng.uniform(0.1, 1.0, shape).astype(np.float32),
    "negative": lambda rng, shape: -rng.uniform(0.1, 1.0, shape).astype(np.float32),
    "zero": lambda rng, shape: np.zeros(shape, np.float32),
}


@pytest.mark.parametrize("state", sorted(STATES))
@pytest.mark.parametrize("signed", [True, False])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize(("batch", "hidden"), [(1, 5), (2, 17), (2, 40), (1, 128)])
def test_one_step_equals_the_exact_product(
    state: str, signed: bool, per_channel: bool, batch: int, hidden: int
):
    rng = np.random.default_rng(hidden * 7 + batch)
    h = STATES[state](rng, (batch, hidden))
    r, r_zero = _weights(rng, hidden, 4 * hidden, signed)
    scale = rng.uniform(2e-3, 8e-3, 4 * hidden if per_channel else 1).astype(np.float32)
    want = quantized_product(h, r, r_zero, scale)
    got = centred_product(h, r, r_zero, scale)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


def test_extreme_operands_stay_exact():
    """The largest magnitudes of every term: u = -128 everywhere, v = -128, a and b at
    their ends (a state all of one sign puts z_h at 0 or 255)."""
    hidden = 64
    for h in (np.full((2, hidden), -1.0, np.float32), np.full((2, hidden), 1.0, np.float32)):
        for r, r_zero in (
            (np.full((hidden, 8), 0, np.uint8), 255),
            (np.full((hidden, 8), 255, np.uint8), 0),
            (np.full((hidden, 8), -128, np.int8), 0),
        ):
            scale = np.ones(1, np.float32)
            np.testing.assert_array_equal(
                centred_product(h, r, r_zero, scale), quantized_product(h, r, r_zero, scale)
            )


def test_uint8_weights_are_recentred():
    r = np.array([[0, 128, 255]], np.uint8)
    np.testing.assert_array_equal(centred_weights(r), np.array([[-128, 0, 127]], np.int8))


def test_a_hidden_size_past_the_int32_bound_is_refused():
    r = np.zeros((MAX_HIDDEN + 1, 1), np.int8)
    with pytest.raises(ValueError, match="exceeds"):
        centred_product(np.zeros((1, MAX_HIDDEN + 1), np.float32), r, 0, np.ones(1, np.float32))


@pytest.mark.parametrize("case", sorted(CASES))
def test_whole_recurrences_equal_the_reference(case: str):
    model, feeds = _case(case)
    (op,) = [o for o in load_onnx(model).walk() if isinstance(o, DynamicQuantizeLSTMOp)]
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    g = input_projection(feeds["X"], init["W"], init["W_scale"], init["W_zp"])
    args = (
        op, g, init["R"], init.get("B"), feeds.get("h0"), feeds.get("c0"), init.get("P"),
        init["R_scale"], init["R_zp"],
    )  # fmt: skip
    want = quantized_lstm_steps(*args)
    got = quantized_lstm_steps(*args, product=centred_product)
    assert len(got) == 3
    for gv, wv in zip(got, want, strict=True):
        np.testing.assert_array_equal(gv, wv)
