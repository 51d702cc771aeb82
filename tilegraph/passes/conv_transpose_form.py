"""conv_transpose as the img2col of the zero-inserted input (part of ``conv-forms``).

Of the two ways a cube computes a transposed convolution — (a) a convolution over the input
with ``s - 1`` zeros inserted between its pixels (stride ``s``) and padded, with the
filter flipped in space and its channel axes swapped, or (b) a GEMM ``W^T · X`` followed by
col2img (the scatter-add of each kernel offset's slab) — tilegraph takes (a), as CANN's
Conv2DBackpropInput does (a ``Dilation`` of the input, then the convolution kernel): it
runs on the one convolution kernel there is (:mod:`tilegraph.lowering.conversion.tiling.conv`),
with its tiling, epilogues and cost, and needs no scatter-add. Its price: with stride ``s``
the img2col holds ``s_h·s_w`` times the taps a GEMM would multiply (most of them zeros;
PaddleOCR's 2x2 stride-2 upsamplers: 4x the cube MACs of (b)) and the zero-inserted input
goes through GM (``s_h·s_w`` times the input's bytes).

For a ``[N, C, H, W]`` input, ``W [C, M/g, kh, kw]``, stride ``s``, dilation ``d``, the
pads ``pb`` / output size ``out`` ONNX's attributes resolve to (``output_padding``,
``output_shape`` and ``auto_pad`` included, :meth:`ConvTransposeOp._geometry`), per axis:

* zero insertion: ``[N, C, H, W] -> [N, C, H, 1, W, 1]`` (reshape), pad the unit axes at
  the end to ``s`` (``graph.pad``, constant 0), reshape to ``[N, C, H·s, W·s]`` — the
  dilated input ``(H - 1)·s + 1`` with ``s - 1`` zeros behind it;
* the convolution's padding: ``(k - 1)·d - pb`` before, ``out - H·s + pb`` after (the
  trailing zeros counted); a negative side is cropped by a ``graph.pad`` of negative width;
* ``graph.conv2d`` with stride 1, dilation ``d``, the same group and bias, and the weight
  ``W'[j·M/g + m, c, i, k] = W[j·C/g + c, m, kh-1-i, kw-1-k]`` (group ``j``).

A 1-D conv_transpose (``[N, C, L]``) is the 2-D one with H = 1 between an unsqueeze and a
squeeze (:mod:`tilegraph.passes.conv_views`). The weight must be a constant (the flip and
channel swap are done here, once); static shapes only.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph.data_movement import PadOp
from tilegraph.dialects.graph.nn import Conv2dOp, ConvTransposeOp
from tilegraph.dialects.graph.windows import Axis
from tilegraph.passes.conv_views import ROW_AXIS, as_rows, squeezed, static_type
from tilegraph.passes.simplify.match import constant_array, ints_constant, new_constant, reshaped


def transposed_weight(w: np.ndarray, group: int) -> np.ndarray:
    """The conv2d filter ``[M, C/g, kh, kw]`` of a conv_transpose filter ``[C, M/g, kh,
    kw]``: channel axes swapped within each group, flipped along every spatial axis."""
    c, mg, *kernel = w.shape
    per_group = w.reshape(group, c // group, mg, *kernel).swapaxes(1, 2)
    dense = per_group.reshape(group * mg, c // group, *kernel)
    return np.ascontiguousarray(dense[(slice(None), slice(None), *(slice(None, None, -1),) * 2)])


def _pad(value: SSAValue, widths: list[tuple[int, int]], ops: list[Operation]) -> SSAValue:
    """``value`` padded with zeros (negative widths crop), per dim (begin, end)."""
    pads = ints_constant([b for b, _ in widths] + [e for _, e in widths])
    pad = PadOp.make(value, pads, None, None, mode="constant")
    ops.extend([pads, pad])
    return pad.results[0]


def zero_inserted(x: SSAValue, shape: list[int], strides: list[int], ops: list[Operation]):
    """``x`` ``[N, C, H, W]`` with ``s - 1`` zeros after every pixel along each spatial
    axis: ``[N, C, H·s_h, W·s_w]`` (``x`` itself when both strides are 1)."""
    if all(s == 1 for s in strides):
        return x
    n, c, h, w = shape
    (sh, sw) = strides
    split = reshaped(x, [n, c, h, 1, w, 1], ops)
    spread = _pad(split, [(0, 0)] * 3 + [(0, sh - 1), (0, 0), (0, sw - 1)], ops)
    return reshaped(spread, [n, c, h * sh, w * sw], ops)


def transposed_as_conv2d_2d(
    op: ConvTransposeOp, x: SSAValue, shape: list[int], weight: np.ndarray, axes: list[Axis],
    ops: list[Operation],
) -> SSAValue:  # fmt: skip
    """The conv2d of a 2-D conv_transpose (``x`` ``[N, C, H, W]`` of ``shape``, the 4-D
    ``weight``, its resolved ``axes``); the ops appended to ``ops``, the result returned."""
    group = op.attr("group")
    data = zero_inserted(x, shape, [a.stride for a in axes], ops)
    begins, ends = [], []
    for a in axes:
        assert isinstance(a.kernel, int) and isinstance(a.size, int) and isinstance(a.out, int)
        begins.append((a.kernel - 1) * a.dilation - a.begin)
        ends.append(a.out - a.size * a.stride + a.begin)
    if min(begins + ends) < 0:  # what the convolution must not see: cropped first
        crop = [(min(0, b), min(0, e)) for b, e in zip(begins, ends, strict=True)]
        data = _pad(data, [(0, 0), (0, 0), *crop], ops)
    filt = new_constant(transposed_weight(weight, group))
    conv = Conv2dOp.make(
        data, filt, op.bias, kernel_shape=list(weight.shape[2:]), group=group,
        strides=[1, 1], dilations=[a.dilation for a in axes],
        pads=[max(0, b) for b in begins] + [max(0, e) for e in ends],
    )  # fmt: skip
    ops.extend([filt, conv])
    return conv.results[0]


def transposed_as_conv2d(op: ConvTransposeOp) -> list[Operation] | None:
    """The ops computing a static 1-D or 2-D ``op`` with a constant weight as a conv2d over
    the zero-inserted input (module docstring); None for any other conv_transpose."""
    x, w = static_type(op.input), static_type(op.weight)
    weight = constant_array(op.weight)
    if x is None or w is None or weight is None or x.rank not in (3, 4):
        return None
    spatial = [int(d) for d in x.origin_shape[2:]]
    axes = ConvTransposeOp._geometry(op.properties, spatial, list(weight.shape[2:]))
    ops: list[Operation] = []
    data: SSAValue = op.input
    if x.rank == 3:
        data = as_rows(op.input, ops)
        weight = weight.reshape(weight.shape[0], weight.shape[1], 1, -1)
        axes = [ROW_AXIS, *axes]
    shape = [int(x.origin_shape[0]), int(x.origin_shape[1]), *(int(a.size) for a in axes)]
    y = transposed_as_conv2d_2d(op, data, shape, weight, axes, ops)
    if x.rank == 3:
        squeezed(y, ops)
    return ops
