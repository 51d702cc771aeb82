"""The inverse DFT (complex and IRFFT), STFT and MelWeightMatrix against onnxruntime; the
forward DFT is in ``test_rearrange_ops``."""

from __future__ import annotations

import numpy as np
import pytest

from tests.dialects.model_oracles import chain_model, onnx_reference_outputs, ours
from tests.dialects.op_harness import Const, build_op, check_op
from tilegraph.dialects.graph import ShapeError
from tilegraph.dialects.graph.signal import DFTOp, MelWeightMatrixOp, STFTOp
from tilegraph.dialects.layout_type import TensorType

rng = np.random.default_rng(0)


def _shape(op_cls, operands, attrs) -> tuple:
    _, op = build_op(op_cls, operands, attrs)
    t = op.results[0].type
    assert isinstance(t, TensorType)
    return t.origin_shape


@pytest.mark.parametrize("length", [None, 6, 12])
def test_inverse_dft(length):
    spectrum = rng.standard_normal((2, 8, 2)).astype(np.float32)
    n = None if length is None else Const(np.array(length, np.int64))
    axis = Const(np.array(1, np.int64))
    (y,) = check_op(DFTOp, [spectrum, n, axis], {"inverse": 1}, opset=20, rtol=1e-4, atol=1e-5)
    assert y.shape == (2, length or 8, 2)
    # inverse(forward(x)) == x
    (back,) = build_op(DFTOp, [y, None, axis], {})[1].reference(y, None, axis.array)
    if length is None:
        np.testing.assert_allclose(back, spectrum, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("length", [None, 6, 9])
def test_irfft(length):
    """A one-sided spectrum of 5 bins -> a real signal of 8 samples (default), or of a
    length whose one-sided spectrum has 5 bins (9) or fewer (6: the last bin is dropped)."""
    spectrum = rng.standard_normal((3, 5, 2)).astype(np.float32)
    n = None if length is None else Const(np.array(length, np.int64))
    attrs = {"inverse": 1, "onesided": 1}
    operands = [spectrum, n, Const(np.array(-2, np.int64))]
    (y,) = check_op(DFTOp, operands, attrs, opset=20, rtol=1e-4, atol=1e-5)
    assert y.shape == _shape(DFTOp, operands, attrs) == (3, length or 8, 1)


@pytest.mark.parametrize("length", [7, 14])
def test_irfft_of_a_padded_or_cut_spectrum(length):
    """A length whose one-sided spectrum has more or fewer bins than given: the spectrum is
    zero-padded or cut to ``length // 2 + 1`` bins (numpy's irfft). Checked against onnx's
    ReferenceEvaluator, whose DFT is exactly that: onnxruntime differs here (it keeps the
    given bins and mirrors them, treating the last one as the Nyquist bin)."""
    spectrum = rng.standard_normal((3, 5, 2)).astype(np.float32)
    inits = {"n": np.array(length, np.int64), "axis": np.array(1, np.int64)}
    node = ("DFT", ["x", "n", "axis"], {"inverse": 1, "onesided": 1})
    model = chain_model([node], {"x": spectrum}, inits, opset=20)
    (got,), (want,) = ours(model, {"x": spectrum}), onnx_reference_outputs(model, {"x": spectrum})
    assert got.shape == want.shape == (3, length, 1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_dft_17_attribute_axis_and_a_run_time_axis():
    x = rng.standard_normal((2, 6, 4, 1)).astype(np.float32)
    attrs = {"inverse": 1, "onesided": 1, "axis": 2}
    assert _shape(DFTOp, [x], attrs) == (2, 6, 6, 1)
    # an axis known at run time only: the dims are unknown, the real/imaginary dim is not
    assert _shape(DFTOp, [x, None, np.array(1, np.int64)], attrs) == (-1, -1, -1, 1)


@pytest.mark.parametrize("window", [False, True])
@pytest.mark.parametrize("onesided", [0, 1])
def test_stft(window, onesided):
    signal = rng.standard_normal((2, 40, 1)).astype(np.float32)
    hann = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(10) / 10)).astype(np.float32)
    operands = [signal, Const(np.array(6, np.int64)), hann if window else None]
    operands.append(None if window else Const(np.array(10, np.int64)))
    attrs = {"onesided": onesided}
    (y,) = check_op(STFTOp, operands, attrs, opset=17, rtol=1e-4, atol=1e-4)
    assert y.shape == _shape(STFTOp, operands, attrs) == (2, 6, 6 if onesided else 10, 2)


@pytest.mark.parametrize("onesided", [0, 1])
def test_stft_of_a_real_signal_without_its_trailing_dim(onesided):
    """onnx-asr's feature extractors pass ``[batch, length]``; onnxruntime reads it as real."""
    signal = rng.standard_normal((2, 40)).astype(np.float32)
    hann = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(10) / 10)).astype(np.float32)
    operands = [signal, Const(np.array(4, np.int64)), hann]
    (y,) = check_op(STFTOp, operands, {"onesided": onesided}, opset=17, rtol=1e-4, atol=1e-4)
    assert y.shape == (2, 8, 6 if onesided else 10, 2)
    with pytest.raises(ShapeError, match="must be floating-point"):
        build_op(STFTOp, [signal.astype(np.int32), Const(np.array(4, np.int64)), hann])


def test_stft_of_a_complex_signal_and_bad_frames():
    signal = rng.standard_normal((1, 32, 2)).astype(np.float32)
    operands = [signal, Const(np.array(8, np.int64)), None, Const(np.array(16, np.int64))]
    check_op(STFTOp, operands, {"onesided": 0}, opset=17, rtol=1e-4, atol=1e-4)
    too_long = [signal, Const(np.array(8, np.int64)), None, Const(np.array(64, np.int64))]
    with pytest.raises(ShapeError, match="frame_length 64 exceeds"):
        build_op(STFTOp, too_long)


@pytest.mark.parametrize(
    ("bins", "dft_length", "rate", "low", "high"),
    [(8, 16, 8192, 0.0, 4096.0), (10, 64, 16000, 20.0, 7600.0), (4, 32, 8000, 100.0, 3000.0)],
)
def test_mel_weight_matrix(bins, dft_length, rate, low, high):
    operands = [
        Const(np.array(bins, np.int64)),
        Const(np.array(dft_length, np.int64)),
        Const(np.array(rate, np.int64)),
        Const(np.array(low, np.float32)),
        Const(np.array(high, np.float32)),
    ]
    (w,) = check_op(MelWeightMatrixOp, operands, opset=17)
    assert w.shape == (dft_length // 2 + 1, bins)
    (w64,) = check_op(MelWeightMatrixOp, operands, {"output_datatype": 11}, opset=17)
    assert w64.dtype == np.float64


def test_a_signal_whose_last_dim_is_not_known_yet():
    """The dynamo exporter's complex input ``Concat(Unsqueeze(x), Expand(0, Shape(...)))``
    has an unknown last dim until sizes are given: the DFT is built (its result ends in 2)
    and the run checks the dim."""
    from tilegraph.builder import GraphBuilder
    from tilegraph.runtime.interpreter import KernelError
    from tilegraph.runtime.reference import run_reference

    b = GraphBuilder()
    x = b.input("x", [2, 8, "parts"])
    module = b.build(b.op("dft", x, None, b.constant(np.array(1, np.int64))))
    (result,) = [op for op in module.walk() if isinstance(op, DFTOp)]
    assert isinstance(result.results[0].type, TensorType)
    assert result.results[0].type.origin_shape[-1] == 2
    real = rng.standard_normal((2, 8, 1)).astype(np.float32)
    (y,) = run_reference(module, {"x": real})
    np.testing.assert_allclose(
        y[..., 0] + 1j * y[..., 1], np.fft.fft(real[..., 0], axis=1), rtol=1e-4, atol=1e-5
    )
    with pytest.raises(
        KernelError, match=r"end in a dim of 1 \(real\) or 2 \(complex\), got \[2, 8, 3\]"
    ):
        run_reference(module, {"x": np.zeros((2, 8, 3), np.float32)})
