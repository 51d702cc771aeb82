"""The int8 convolution whose result fixpipe requantises: ``graph.requant_conv2d``.

``fold-requant`` (:mod:`tilegraph.passes.fold_requant`) makes it of a
``graph.quant_conv2d`` whose result feeds only a QuantizeLinear (the next quantised layer's
input): instead of dequantising the int32 sum to float and quantising that on the vector
unit, fixpipe takes the sum straight to int8 (Ascend C's ``REQ8`` / ``VREQ8`` quantisation
modes: L0C int32 -> int8 with one scale, or one per output channel; docs/hardware.md).
The result is int8 NC1HWC0 (C0 = 32), what the next int8 convolution reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition

from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.base import GraphOp, ShapeError, int_attr
from tilegraph.dialects.graph.quantized_cube import Int8ConvBase, QuantConv2dOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType

_Slots = Sequence[SSAValue | None]
_Props = Mapping[str, Attribute]

INT8_RANGE = (-128, 127)


def requantize_accumulator(
    acc: np.ndarray, multiplier: np.ndarray, zero_point: int, relu: bool
) -> np.ndarray:
    """Fixpipe's requantisation of an int32 accumulator to int8, as onnxruntime's
    QLinearConv requantises (MLAS): ``float32(acc) * multiplier`` in float32 (ReLU on that
    product when asked), rounded half to even, plus ``zero_point``, saturated to int8.
    ``multiplier`` (float32, broadcast against ``acc``) is ``x_scale · w_scale / y_scale``."""
    scaled = acc.astype(np.float32) * multiplier.astype(np.float32)
    if relu:
        scaled = np.maximum(scaled, np.float32(0))
    rounded = np.rint(scaled).astype(np.float64) + zero_point
    return np.clip(rounded, *INT8_RANGE).astype(np.int8)


@irdl_op_definition
class RequantConv2dOp(Int8ConvBase):
    """``graph.requant_conv2d %x, %w, %bias, %multiplier {pad_value, zero_point, relu}``:
    ``saturate(round((conv(x, w) + bias) · multiplier) + zero_point)`` in int8.

    The operands are ``graph.quant_conv2d``'s, with ``multiplier`` float32 ``[M]`` = the
    data's scale times the weight's over the output's scale (per output channel); the
    product is formed and rounded as :func:`requantize_accumulator` says (one rounding,
    half to even, as onnxruntime's QLinearConv). ``relu`` (0 / 1) clamps the product at 0
    first (a ReLU between the dequantised result and the QuantizeLinear, whose range makes
    it ``max(q, zero_point)``). Its facts are ``graph.quant_conv2d``'s (a TransData of
    its data joins its kernel as the DMA's conversion), but no epilogue runs on its int8
    tiles: ``fold-requant`` makes it only where an int8 cube op reads the result, so the
    result leaves any fused group it anchors.
    """

    name = "graph.requant_conv2d"
    zero_point = int_attr()
    relu = int_attr()
    DEFAULTS: ClassVar = {**QuantConv2dOp.DEFAULTS, "zero_point": 0, "relu": 0}
    FACTS: ClassVar = QuantConv2dOp.FACTS

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        (dequantized,) = super().infer_shapes(operands, props)
        if dequantized.dtype != DType.float32:
            raise ShapeError(f"the multiplier must be float32, got {dequantized.dtype.value}")
        zero = int(cls.read_attr(props, "zero_point"))
        if not INT8_RANGE[0] <= zero <= INT8_RANGE[1]:
            raise ShapeError(f"the zero point {zero} is not an int8")
        shape, fmt = dequantized.origin_shape, dequantized.origin_format
        return [TensorType(shape, element_type_of(DType.int8), fmt)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, w, bias, multiplier = inputs
        assert x is not None and w is not None and bias is not None and multiplier is not None
        acc = self.accumulate(x, w, bias)
        zero, relu = int(self.attr("zero_point")), bool(self.attr("relu"))
        return (requantize_accumulator(acc, multiplier.reshape(1, -1, 1, 1), zero, relu),)


REQUANTIZED_CUBE_OPS: list[type[GraphOp]] = [RequantConv2dOp]
