"""The int8 cube anchor that ``fold-qdq`` makes of a QDQ convolution.

``graph.quant_conv2d`` is ``Conv(DequantizeLinear(x), DequantizeLinear(w),
DequantizeLinear(b))`` of a QDQ model with the dequantisation moved behind the
convolution, as GE runs AMCT-quantised models: the int8 data and int8 weights are
multiplied on the cube in int32, the int32 bias is added, and the sum is dequantised once
per output channel (``scale[m] = x_scale * w_scale[m]``). The result is what ONNX's
DequantizeLinear of the int32 accumulator gives: ``acc * scale`` rounded once to the
scale's type. It is not an ONNX op (no frontend makes it); :mod:`tilegraph.passes.fold_qdq`
does, under the ``int8`` precision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, result_def

from tilegraph.dialects.graph.base import (
    ShapeError,
    tensor_type,
)
from tilegraph.dialects.graph.facts import FormatRole, FusionKind, KernelVariant, OpFacts
from tilegraph.dialects.graph.quantized_linalg import QuantizedConvBase, correlate
from tilegraph.dialects.graph.shape_utils import require
from tilegraph.dialects.graph.windows import known, nc_result, window, window_kernel
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType, Format
from tilegraph.formats.dims import dims_compatible

F = Format
_Slots = Sequence[SSAValue | None]
_Props = Mapping[str, Attribute]


@irdl_op_definition
class QuantConv2dOp(QuantizedConvBase):
    """``graph.quant_conv2d %x, %w, %bias, %scale``: ``(conv(x, w) + bias) * scale``.

    ``x`` int8 ``[N, C, H, W]``, ``w`` int8 ``[M, C/group, kh, kw]`` (both with zero point
    0: the padding holds 0), ``bias`` int32 ``[M]``, ``scale`` float ``[M]`` (the product
    of the data's and the weight's scales). The sum is exact in int32 (wrapping as ONNX's
    ConvInteger may) and the result is ``acc * scale`` rounded once to the scale's type
    (ONNX DequantizeLinear of an int32 tensor, per output channel).
    """

    name = "graph.quant_conv2d"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = operand_def(TensorType)
    scale = operand_def(TensorType)
    output = result_def(TensorType)
    X_SLOTS: ClassVar = (0,)
    W_SLOTS: ClassVar = (1,)
    """The data and the weight (no zero points: they are 0); the weight's slot gives the
    flops of the inherited :meth:`cost` (as Conv's)."""
    FACTS: ClassVar = OpFacts(
        FormatRole.SENSITIVE,
        FusionKind.OUT_ELEMWISE_FUSABLE,
        data_format=F.NCHW,
        kernels=(
            KernelVariant((F.NC1HWC0, F.FRACTAL_Z, F.NC1HWC0, F.NC1HWC0), (F.NC1HWC0,), "cube"),
            KernelVariant((F.NCHW, F.NCHW, F.ND, F.ND), (F.NCHW,), "plain"),
        ),
        heavy=True,
        reshape_types={2: "C", 3: "C"},
    )

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        w = require(tensor_type(operands[1]), "weight")
        bias = require(tensor_type(operands[2]), "bias")
        scale = require(tensor_type(operands[3]), "scale")
        if x.rank != 4 or w.rank != 4:
            raise ShapeError(f"{cls.name} takes a 4-D input and weight")
        if x.dtype != DType.int8 or w.dtype != DType.int8:
            raise ShapeError(f"input and weight must be int8, got {x.dtype.value}, {w.dtype.value}")
        if bias.dtype != DType.int32:
            raise ShapeError(f"the bias must be int32, got {bias.dtype.value}")
        if scale.dtype not in (DType.float16, DType.float32):
            raise ShapeError(f"the scale must be float16 or float32, got {scale.dtype.value}")
        group = int(cls.read_attr(props, "group"))
        nb, c, *spatial = x.origin_shape
        m, cg, *kw = w.origin_shape
        if group < 1 or (known(m) and m % group) or (known(c) and known(cg) and cg * group != c):
            raise ShapeError(f"group {group} does not fit {c} input and {m} output channels")
        for p, what in ((bias, "bias"), (scale, "scale")):
            if p.rank != 1 or not dims_compatible(p.origin_shape[0], m):
                raise ShapeError(f"the {what} must have shape [{m}], got {list(p.origin_shape)}")
        axes = window(cls, props, spatial, window_kernel(cls, props, len(spatial), kw))
        out = nc_result(x, [nb, m, *(a.out for a in axes)])
        return [TensorType(out.origin_shape, scale.element_type, out.origin_format)]

    def accumulate(self, x: np.ndarray, w: np.ndarray, bias: np.ndarray) -> np.ndarray:
        """``conv(x, w) + bias`` in int32 (exact, wrapping)."""
        axes = window(type(self), self.properties, x.shape[2:], w.shape[2:])
        acc = correlate(x.astype(np.float64), w.astype(np.float64), axes, int(self.attr("group")))
        acc = acc + bias.astype(np.float64).reshape(1, -1, 1, 1)
        return acc.astype(np.int64).astype(np.int32)

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, w, bias, scale = inputs
        assert x is not None and w is not None and bias is not None and scale is not None
        acc = self.accumulate(x, w, bias)
        return (dequantize_accumulator(acc, scale.reshape(1, -1, 1, 1)),)


def dequantize_accumulator(acc: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """ONNX DequantizeLinear of an int32 accumulator: ``float32(acc) * scale``, rounded
    once to the scale's type (the product of the exact int32 and the scale is formed in
    float64, exact to 53 bits, as :class:`~.quantize.DequantizeLinearOp` does)."""
    return (acc.astype(np.float64) * scale.astype(np.float64)).astype(scale.dtype)


QUANTIZED_CUBE_OPS = [QuantConv2dOp]
