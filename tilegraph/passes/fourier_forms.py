"""STFT and DFT as the cube's products with the DFT basis (part of ``conv-forms``).

The cube has no FFT; a transform of length ``L`` is, bin by bin, a dot product with that
bin's cosine and sine — a matmul with the DFT basis, or for an STFT a strided convolution
whose filters are the windowed basis (what onnx-asr's ``*_conv`` front ends spell out by
hand, and what a GE-compiled model runs as a cube op). Both are direct DFTs: ``L``
products per bin, accumulated in float32 on the cube, so a bin's rounding grows with ``L``
where an FFT's grows with ``log L`` — for float32 and the lengths of speech front ends
(400, 512) well inside the tolerance onnxruntime's FFT is compared with. The basis
(:func:`dft_basis`) is computed in float64 and rounded once to float32.

**STFT** (:func:`stft_as_conv2d`):

* the real signal ``[B, N]`` (or ``[B, N, 1]``) cut into hops: padded with zeros (or its
  unused tail cut) to ``chunks · hop`` samples, ``chunks = frames + taps - 1`` with
  ``frames = (N - L) // hop + 1`` and ``taps = ceil(L / hop)``, viewed as ``[B, chunks,
  hop]`` and transposed to ``[B, hop, 1, chunks]``: a hop's samples are the channels;
* ``graph.conv2d`` with kernel ``[1, taps]``, stride 1 and the constant weight
  ``W[o, c, 0, j] = basis[o, j·hop + c]`` (zero past ``L``), where ``basis[2k] =
  w[n]·cos(2πkn/L)`` and ``basis[2k + 1] = -w[n]·sin(2πkn/L)`` for the ``bins`` kept bins
  (``L // 2 + 1`` when onesided, else ``L``; ``w`` the window, ones when absent): frame
  ``f`` reads hops ``f .. f + taps - 1``, the result ``[B, 2·bins, 1, frames]``;
* a reshape to ``[B, bins, 2, frames]`` and a transpose to ``[B, frames, bins, 2]``.

Why hops as channels: the direct form (the signal as one channel, kernel ``[1, L]``,
stride ``hop``) pads that one channel to C0 in NC1HWC0 and FRACTAL_Z, 16 times the
products and the img2col traffic for float32 (whisper's front end: 862 µs of a 985 µs
estimate on ascend910b); with ``hop`` channels the padding is at most the last hop's
zeros past ``L`` (400 of 480 for whisper's 400 / 160).

**DFT** (:func:`dft_as_matmul`; forward or inverse, of a real ``[..., N, 1]`` or complex
``[..., N, 2]`` signal along any axis but the last): the transformed axis swapped next to
the last (a transpose, none when it is there already), the signal's interleaved
``(re, im)`` samples ``[..., parts·N]`` (a reshape) times the basis
``[parts·N, 2·bins]`` of the transform's length ``n`` (``dft_length``, else ``N``:
samples past ``n`` get zero rows — the transform cuts them — and a zero-padded tail has no
rows; :func:`transform_basis`), a reshape to ``[..., bins, 2]`` and the axis swapped back.
A complex sample's two rows carry ``re · e^{∓iθ}`` and ``i·im · e^{∓iθ}``, so one matmul
computes the complex product; an inverse transform's basis has ``e^{+iθ} / n``. PyTorch's
``torch.fft.fft2`` (FNet's token mixing) exports as a real signal made complex by a
Concat with zeros and two such transforms.

Taken only for a float32 signal, constant parameters (hop, window or frame length,
dft_length, axis) and static shapes; a 16-bit signal, an inverse one-sided transform
(IRFFT) or a run-time parameter stays a host op.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.shape_ops import TransposeOp
from tilegraph.dialects.graph.signal import DFTOp, STFTOp
from tilegraph.passes.conv_views import static_type
from tilegraph.passes.hop_forms import hops_conv, signal_by_hops
from tilegraph.passes.simplify.match import constant_array, new_constant, reshaped


def dft_basis(window: np.ndarray, bins: int, length: int | None = None) -> np.ndarray:
    """``[2·bins, len(window)]``: row ``2k`` the windowed cosine of bin ``k`` of a
    transform of ``length`` (default: the window's), row ``2k + 1`` its negated sine (a
    forward DFT's real and imaginary parts), in float64."""
    samples = window.shape[0]
    period = samples if length is None else length
    angle = 2 * np.pi * np.outer(np.arange(bins), np.arange(samples)) / period
    basis = np.empty((2 * bins, samples))
    basis[0::2] = np.cos(angle) * window
    basis[1::2] = -np.sin(angle) * window
    return basis


def _scalar(value: SSAValue | None) -> int | None:
    """The integer a constant scalar operand holds (None: absent or computed)."""
    array = None if value is None else constant_array(value)
    return None if array is None else int(array.reshape(-1)[0])


def stft_as_conv2d(op: STFTOp) -> list[Operation] | None:
    """The ops computing ``op`` as a convolution (None: not a case this form takes)."""
    x = static_type(op.signal)
    if x is None or x.dtype.numpy != np.float32:
        return None
    if x.rank == 3 and x.origin_shape[2] != 1:
        return None  # complex
    if x.rank not in (2, 3):
        return None
    hop = _scalar(op.frame_step)
    window = None if op.window is None else constant_array(op.window)
    length_given = _scalar(op.frame_length)
    if hop is None or (op.window is not None and window is None):
        return None
    if op.frame_length is not None and length_given is None:
        return None
    batch, samples = int(x.origin_shape[0]), int(x.origin_shape[1])
    if window is not None:
        length = int(window.shape[0])
    elif length_given is not None:
        length = length_given
    else:
        length = samples
    weights = np.ones(length) if window is None else window.astype(np.float64)
    bins = length // 2 + 1 if op.attr("onesided") else length
    if hop < 1 or length > samples:
        return None
    frames = (samples - length) // hop + 1
    chunks = frames + -(-length // hop) - 1  # a frame spans ceil(L / hop) hops
    ops: list[Operation] = []
    signal = reshaped(op.signal, [batch, samples], ops)
    rows = signal_by_hops(signal, hop, chunks, ops)
    conv = hops_conv(rows, dft_basis(weights, bins), hop, None, ops)
    split = reshaped(conv.results[0], [batch, bins, 2, frames], ops)
    ops.append(TransposeOp.make(split, perm=[0, 3, 1, 2]))
    return ops


def transform_basis(
    samples: int, bins: int, length: int, *, complex_input: bool, inverse: bool
) -> np.ndarray:
    """``[parts · samples, 2 · bins]`` (``parts`` 2 for a complex signal, else 1): the
    matrix a signal's row of interleaved ``(re, im)`` samples is multiplied by for the
    interleaved ``(re, im)`` bins of a DFT of ``length``; samples past ``length`` get zero
    rows (the transform cuts them), an inverse transform divides by ``length``. In
    float64."""
    sign = 1.0 if inverse else -1.0
    angle = 2 * np.pi * np.outer(np.arange(samples), np.arange(bins)) / length
    kept = (np.arange(samples) < length)[:, None] / (length if inverse else 1)
    cos, sin = np.cos(angle) * kept, sign * np.sin(angle) * kept
    parts = 2 if complex_input else 1
    basis = np.empty((samples, parts, bins, 2))
    basis[:, 0, :, 0], basis[:, 0, :, 1] = cos, sin  # (re · e^{±iθ})
    if complex_input:
        basis[:, 1, :, 0], basis[:, 1, :, 1] = -sin, cos  # (i · im · e^{±iθ})
    return basis.reshape(samples * parts, 2 * bins)


def _moved(value: SSAValue, rank: int, axis: int, ops: list[Operation]) -> SSAValue:
    """``value`` with dims ``axis`` and ``rank - 2`` swapped (the last, re / im, stays):
    the transformed axis next to the parts, or back; ``value`` itself when they are one."""
    if axis == rank - 2:
        return value
    perm = list(range(rank))
    perm[axis], perm[rank - 2] = rank - 2, axis
    swap = TransposeOp.make(value, perm=perm)
    ops.append(swap)
    return swap.results[0]


def dft_as_matmul(op: DFTOp) -> list[Operation] | None:
    """The ops computing ``op`` as a matmul with the DFT basis (None: not a case this form
    takes)."""
    x = static_type(op.input)
    if x is None or x.dtype.numpy != np.float32 or x.rank < 2 or x.origin_shape[-1] not in (1, 2):
        return None
    inverse, onesided = bool(op.attr("inverse")), bool(op.attr("onesided"))
    if inverse and onesided:
        return None  # IRFFT: a one-sided spectrum in, its conjugate half implied
    axis = op.attr("axis") if op.attr("axis") is not None else -2
    if op.axis_input is not None:
        axis = _scalar(op.axis_input)
        if axis is None:
            return None
    if not -x.rank <= axis < x.rank or axis % x.rank == x.rank - 1:
        return None
    axis %= x.rank
    complex_input = x.origin_shape[-1] == 2
    samples = int(x.origin_shape[axis])
    length = samples if op.dft_length is None else _scalar(op.dft_length)
    if length is None or length < 1:
        return None
    bins = length // 2 + 1 if onesided else length
    basis = transform_basis(samples, bins, length, complex_input=complex_input, inverse=inverse)
    ops: list[Operation] = []
    signal = _moved(op.input, x.rank, axis, ops)
    moved = [int(d) for d in x.origin_shape]
    moved[axis], moved[x.rank - 2] = moved[x.rank - 2], moved[axis]
    rows = reshaped(signal, [*(moved[:-2] or [1]), basis.shape[0]], ops)  # a row at least
    weight = new_constant(basis.astype(np.float32))
    product = MatMulOp.make(rows, weight.results[0])
    ops += [weight, product]
    spectrum = reshaped(product.results[0], [*moved[:-2], bins, 2], ops)
    _moved(spectrum, x.rank, axis, ops)
    return ops
