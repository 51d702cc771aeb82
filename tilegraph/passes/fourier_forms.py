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

* the real signal ``[B, N]`` or ``[B, N, 1]`` viewed as ``[B, 1, 1, N]`` (a reshape: the
  same bytes);
* ``graph.conv2d`` with kernel ``[1, L]``, stride ``[1, hop]`` and the constant weight
  ``W[2k + 0, 0, 0, n] = w[n]·cos(2πkn/L)``, ``W[2k + 1, 0, 0, n] = -w[n]·sin(2πkn/L)``
  for the ``bins`` kept bins (``L // 2 + 1`` when onesided, else ``L``; ``w`` the window,
  ones when absent): the result ``[B, 2·bins, 1, frames]`` with ``frames = (N - L) //
  hop + 1``;
* a reshape to ``[B, bins, 2, frames]`` and a transpose to ``[B, frames, bins, 2]``.

**DFT** (:func:`dft_as_matmul`; a forward transform of a real signal along the axis
before the last, ``[..., N, 1]``): the signal ``[..., N]`` (a reshape) times the basis
``[N, 2·bins]`` of the transform's length ``n`` (``dft_length``, else ``N``: samples past
``n`` get zero rows — the transform cuts them — and a zero-padded tail has no rows), then a
reshape to ``[..., bins, 2]``.

Taken only for a float32 real signal, constant parameters (hop, window or frame length,
dft_length, axis) and static shapes; a complex or 16-bit signal, an inverse transform or a
run-time parameter stays a host op.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation

from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.nn import Conv2dOp
from tilegraph.dialects.graph.shape_ops import ReshapeOp, TransposeOp
from tilegraph.dialects.graph.signal import DFTOp, STFTOp
from tilegraph.passes.conv_views import static_type
from tilegraph.passes.simplify.match import constant_array, ints_constant, new_constant


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


def stft_as_conv2d(op: STFTOp) -> list[Operation] | None:
    """The ops computing ``op`` as a convolution (None: not a case this form takes)."""
    x = static_type(op.signal)
    if x is None or x.dtype.numpy != np.float32:
        return None
    if x.rank == 3 and x.origin_shape[2] != 1:
        return None  # complex
    if x.rank not in (2, 3):
        return None
    step = constant_array(op.frame_step)
    window = None if op.window is None else constant_array(op.window)
    if step is None or (op.window is not None and window is None):
        return None
    length_given = None if op.frame_length is None else constant_array(op.frame_length)
    if op.frame_length is not None and length_given is None:
        return None
    batch, samples = int(x.origin_shape[0]), int(x.origin_shape[1])
    if window is not None:
        length = int(window.shape[0])
    elif length_given is not None:
        length = int(length_given.reshape(-1)[0])
    else:
        length = samples
    weights = np.ones(length) if window is None else window.astype(np.float64)
    bins = length // 2 + 1 if op.attr("onesided") else length
    hop = int(step.reshape(-1)[0])
    if hop < 1 or length > samples:
        return None
    frames = (samples - length) // hop + 1
    ops: list[Operation] = []
    shape = ints_constant([batch, 1, 1, samples])
    rows = ReshapeOp.make(op.signal, shape)
    basis = new_constant(dft_basis(weights, bins).astype(np.float32).reshape(2 * bins, 1, 1, -1))
    conv = Conv2dOp.make(
        rows.results[0], basis.results[0], None, kernel_shape=[1, length], group=1,
        strides=[1, hop], dilations=[1, 1], pads=[0, 0, 0, 0],
    )  # fmt: skip
    parts = ints_constant([batch, bins, 2, frames])
    split = ReshapeOp.make(conv.results[0], parts)
    out = TransposeOp.make(split.results[0], perm=[0, 3, 1, 2])
    ops += [shape, rows, basis, conv, parts, split, out]
    return ops


def _scalar(value) -> int | None:
    array = None if value is None else constant_array(value)
    return None if array is None else int(array.reshape(-1)[0])


def dft_as_matmul(op: DFTOp) -> list[Operation] | None:
    """The ops computing ``op`` as a matmul with the DFT basis (None: not a case this form
    takes)."""
    x = static_type(op.input)
    if x is None or x.dtype.numpy != np.float32 or x.rank < 2 or x.origin_shape[-1] != 1:
        return None
    if op.attr("inverse"):
        return None
    axis = op.attr("axis") if op.attr("axis") is not None else -2
    if op.axis_input is not None:
        axis = _scalar(op.axis_input)
        if axis is None:
            return None
    if axis % x.rank != x.rank - 2:
        return None
    samples = int(x.origin_shape[-2])
    length = samples if op.dft_length is None else _scalar(op.dft_length)
    if length is None or length < 1:
        return None
    bins = length // 2 + 1 if op.attr("onesided") else length
    window = (np.arange(samples) < length).astype(np.float64)  # samples past n are cut
    basis = dft_basis(window, bins, length).T.astype(np.float32)  # [N, 2·bins]
    lead = [int(d) for d in x.origin_shape[:-2]]
    flat = ints_constant([*lead, samples])
    signal = ReshapeOp.make(op.input, flat)
    weight = new_constant(basis)
    product = MatMulOp.make(signal.results[0], weight.results[0])
    parts = ints_constant([*lead, bins, 2])
    out = ReshapeOp.make(product.results[0], parts)
    return [flat, signal, weight, product, parts, out]
