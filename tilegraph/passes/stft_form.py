"""STFT as a strided convolution with the windowed DFT basis (part of ``conv-forms``).

A short-time Fourier transform is, frame by frame, a dot product of the frame with each
bin's windowed cosine and sine: a 1-D convolution over the signal whose filters are those
basis rows and whose stride is the hop. The cube has that kernel and nothing FFT-shaped, so
an STFT becomes (what the export onnx-asr ships as its ``*_conv`` front ends spells out by
hand, and what a GE-compiled model runs as a cube op):

* the real signal ``[B, N]`` or ``[B, N, 1]`` viewed as ``[B, 1, 1, N]`` (a reshape: the
  same bytes);
* ``graph.conv2d`` with kernel ``[1, L]``, stride ``[1, hop]`` and the constant weight
  ``W[2k + 0, 0, 0, n] = w[n]·cos(2πkn/L)``, ``W[2k + 1, 0, 0, n] = -w[n]·sin(2πkn/L)``
  for the ``bins`` kept bins (``L // 2 + 1`` when onesided, else ``L``; ``w`` the window,
  ones when absent), computed in float64 and rounded once to the signal's type: the
  result ``[B, 2·bins, 1, frames]`` with ``frames = (N - L) // hop + 1``;
* a reshape to ``[B, bins, 2, frames]`` and a transpose to ``[B, frames, bins, 2]``,
  STFT's layout.

Rounding differs from an FFT's: each bin is a direct sum of ``L`` products (the cube
accumulates them in float32), so a bin's error grows with ``L`` where an FFT's grows with
``log L`` — for float32 and the frame lengths of speech front ends (400, 512) well inside
the tolerance onnxruntime's own FFT is compared with. Taken only for a float32 real signal,
a constant hop, a constant window or frame length, and static shapes; a complex signal, a
16-bit one (its basis and sums would lose what the FFT keeps) or a run-time window stays a
``graph.stft``.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation

from tilegraph.dialects.graph.nn import Conv2dOp
from tilegraph.dialects.graph.shape_ops import ReshapeOp, TransposeOp
from tilegraph.dialects.graph.signal import STFTOp
from tilegraph.passes.conv_views import static_type
from tilegraph.passes.simplify.match import constant_array, ints_constant, new_constant


def dft_basis(window: np.ndarray, bins: int) -> np.ndarray:
    """``[2·bins, L]``: row ``2k`` the windowed cosine of bin ``k``, row ``2k + 1`` its
    negated sine (a forward DFT's real and imaginary parts), in float64."""
    length = window.shape[0]
    angle = 2 * np.pi * np.outer(np.arange(bins), np.arange(length)) / length
    basis = np.empty((2 * bins, length))
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
