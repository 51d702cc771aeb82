"""A strided convolution of a one-channel signal over the signal's hops as channels (part of
``conv-forms``; the mechanism :mod:`.fourier_forms`' STFT uses too).

The cube pads a convolution's input channels to C0: a signal of one channel, convolved
with ``L``-tap filters at stride ``s``, multiplies ``C0 · L`` products per output where
``L`` are needed (16 times for float16) and moves as much through the img2col. Cut into
hops of ``s`` samples, the signal is ``s`` channels: viewed as ``[B, chunks, s]`` and
transposed to ``[B, s, 1, chunks]``, the same outputs are a stride-1 convolution with
``taps = ceil(L / s)`` taps whose filter ``j`` at channel ``c`` is the original tap
``j·s + c`` (zero past ``L``): frame ``f`` reads hops ``f .. f + taps - 1``. The padding
left is the last hop's zeros and channels up to C0 once ``s < C0``.

:func:`strided_conv_over_hops` takes a ``graph.conv2d`` of a static ``[B, 1, 1, N]``
input (a 1-D convolution after ``conv1d-as-conv2d``) with a constant ``[O, 1, 1, L]``
filter, stride ``s >= 2`` along the signal, dilation 1, one group, padding along the
signal only (zeros in, via a Pad; the unused tail cut): basic-pitch's constant-Q
transform (strides 256 .. 2 over 256 taps) and its decimating low-pass filters. The sums
are the same products in another order of accumulation on the cube.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph.data_movement import PadOp
from tilegraph.dialects.graph.nn import Conv2dOp
from tilegraph.dialects.graph.shape_ops import TransposeOp
from tilegraph.dialects.graph.windows import window
from tilegraph.passes.conv_views import static_type
from tilegraph.passes.simplify.match import constant_array, ints_constant, new_constant, reshaped


def signal_by_hops(
    signal: SSAValue, hop: int, chunks: int, ops: list[Operation], before: int = 0
) -> SSAValue:
    """The ``[B, N]`` ``signal`` with ``before`` zeros in front, padded with zeros (or its
    unused tail cut) to ``chunks`` hops and laid out as ``[B, hop, 1, chunks]``: a hop's
    samples are the channels."""
    t = static_type(signal)
    assert t is not None and t.rank == 2
    batch, samples = (int(d) for d in t.origin_shape)
    after = chunks * hop - samples - before
    if before or after:
        pads = ints_constant([0, before, 0, after])
        fitted = PadOp.make(signal, pads)
        ops += [pads, fitted]
        signal = fitted.results[0]
    by_chunk = reshaped(signal, [batch, chunks, hop], ops)
    channels = TransposeOp.make(by_chunk, perm=[0, 2, 1])
    ops.append(channels)
    return reshaped(channels.results[0], [batch, hop, 1, chunks], ops)


def filters_over_hops(filters: np.ndarray, hop: int) -> np.ndarray:
    """``[O, L]`` filters as the ``[O, hop, 1, taps]`` float32 filter of the hops'
    convolution: ``W'[o, c, 0, j] = filters[o, j·hop + c]``, zero past ``L``."""
    outputs, length = filters.shape
    taps = -(-length // hop)
    padded = np.zeros((outputs, taps * hop))
    padded[:, :length] = filters
    return padded.reshape(outputs, taps, hop).transpose(0, 2, 1)[:, :, None, :].astype(np.float32)


def hops_conv(
    rows: SSAValue, filters: np.ndarray, hop: int, bias: SSAValue | None, ops: list[Operation]
) -> Operation:
    """The stride-1 convolution of :func:`signal_by_hops`' ``rows`` with ``[O, L]``
    ``filters`` (appended to ``ops``)."""
    weight = new_constant(filters_over_hops(filters, hop))
    taps = -(-filters.shape[1] // hop)
    conv = Conv2dOp.make(
        rows, weight.results[0], bias, kernel_shape=[1, taps], group=1,
        strides=[1, 1], dilations=[1, 1], pads=[0, 0, 0, 0],
    )  # fmt: skip
    ops += [weight, conv]
    return conv


def strided_conv_over_hops(op: Conv2dOp) -> list[Operation] | None:
    """The ops computing ``op`` over the signal's hops (None: not a case this form takes;
    see the module docstring)."""
    x, w = static_type(op.input), static_type(op.weight)
    filters = constant_array(op.weight)
    if x is None or w is None or filters is None or x.dtype.numpy != np.float32:
        return None
    if x.rank != 4 or list(x.origin_shape[1:3]) != [1, 1] or list(w.origin_shape[1:3]) != [1, 1]:
        return None
    if int(op.attr("group") or 1) != 1:
        return None
    batch, samples, length = int(x.origin_shape[0]), int(x.origin_shape[3]), int(w.origin_shape[3])
    rows_axis, axis = window(Conv2dOp, op.properties, [1, samples], [1, length])
    if rows_axis.begin or rows_axis.end or axis.dilation != 1 or axis.stride < 2:
        return None
    hop = axis.stride
    frames = (samples + axis.begin + axis.end - length) // hop + 1
    chunks = frames + -(-length // hop) - 1
    ops: list[Operation] = []
    signal = reshaped(op.input, [batch, samples], ops)
    rows = signal_by_hops(signal, hop, chunks, ops, before=axis.begin)
    hops_conv(rows, filters.reshape(filters.shape[0], length).astype(np.float64), hop, op.bias, ops)
    return ops
