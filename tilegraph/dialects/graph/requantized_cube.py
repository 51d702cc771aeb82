"""The int8 cube ops whose result fixpipe requantises: ``graph.requant_conv2d``,
``graph.requant_matmul``.

``fold-requant`` (:mod:`tilegraph.passes.fold_requant`) makes it of a
``graph.quant_conv2d`` whose result feeds only a QuantizeLinear (the next quantised layer's
input): instead of dequantising the int32 sum to float and quantising that on the vector
unit, fixpipe takes the sum straight to int8 (Ascend C's ``REQ8`` / ``VREQ8`` quantisation
modes: L0C int32 -> int8 with one scale, or one per output channel; docs/hardware.md).
The convolution's result is int8 NC1HWC0 (C0 = 32), what the next int8 convolution
reads; the matmul's is int8 ND, which the next int8 matmul loads into its 16 x 32 int8
fractals (ND -> NZ on the way, as it loads any ND operand).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition

from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.base import GraphOp, ShapeError, int_attr
from tilegraph.dialects.graph.facts import FormatRole, FusionKind, KernelVariant, OpFacts
from tilegraph.dialects.graph.quantized_cube import Int8ConvBase, Int8MatMulBase, QuantConv2dOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType, Format

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
    """``graph.requant_conv2d %x, %w, %bias, %multiplier[, %pad_zero] {pad_value, zero_point,
    relu}``:
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
        return [_int8_result(dequantized, props, cls)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, w, bias, multiplier, pad_zero = inputs
        assert x is not None and w is not None and bias is not None and multiplier is not None
        acc = self.accumulate(x, w, bias, pad_zero)
        zero, relu = int(self.attr("zero_point")), bool(self.attr("relu"))
        return (requantize_accumulator(acc, multiplier.reshape(1, -1, 1, 1), zero, relu),)


def _int8_result(dequantized: TensorType, props: _Props, cls: type[GraphOp]) -> TensorType:
    """The int8 result in place of the ``dequantized`` one (a float32 multiplier and an
    int8 zero point checked)."""
    if dequantized.dtype != DType.float32:
        raise ShapeError(f"the multiplier must be float32, got {dequantized.dtype.value}")
    zero = int(cls.read_attr(props, "zero_point"))
    if not INT8_RANGE[0] <= zero <= INT8_RANGE[1]:
        raise ShapeError(f"the zero point {zero} is not an int8")
    shape, fmt = dequantized.origin_shape, dequantized.origin_format
    return TensorType(shape, element_type_of(DType.int8), fmt)


@irdl_op_definition
class RequantMatMulOp(Int8MatMulBase):
    """``graph.requant_matmul %a, %b, %bias, %multiplier {zero_point, relu}``:
    ``saturate(round(((a · bᵀ) + bias) · multiplier) + zero_point)`` in int8.

    The operands are ``graph.quant_matmul``'s, with ``multiplier`` float32 ``[N]`` = the
    data's scale times the weight's over the output's scale (per column, or one repeated);
    the product is formed and rounded as :func:`requantize_accumulator` says. ``relu`` as
    ``graph.requant_conv2d``'s. Its cube kernel writes int8 ND (fixpipe's NZ -> ND on the
    way out; the int8 NZ fractal is 16 x 32, the accumulator's 16 x 16, so the next
    matmul's load makes its fractals); its facts are ``graph.quant_matmul``'s but for that
    ND result (a TransData of an operand joins its kernel as the DMA's conversion), and no
    epilogue runs on its int8 tiles (``fold-requant`` makes it only where an int8 cube op
    reads the result).
    """

    name = "graph.requant_matmul"
    zero_point = int_attr()
    relu = int_attr()
    DEFAULTS: ClassVar = {"zero_point": 0, "relu": 0}
    FACTS: ClassVar = OpFacts(
        role=FormatRole.ND_ONLY,
        fusion=FusionKind.OUT_ELEMWISE_FUSABLE,
        heavy=True,
        kernels=(
            KernelVariant(
                (Format.FRACTAL_NZ, Format.FRACTAL_NZ, Format.ND, Format.ND), (Format.ND,), "cube"
            ),
            KernelVariant((Format.ND, Format.ND, Format.ND, Format.ND), (Format.ND,), "plain"),
        ),
    )

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        # the base's scale is optional (quant_matmul's raw int32 form); the multipliers
        # are not
        if len(operands) < 4 or operands[3] is None:
            raise ShapeError(f"{cls.name} needs its multipliers")
        (dequantized,) = super().infer_shapes(operands, props)
        return [_int8_result(dequantized, props, cls)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        a, b, bias, multiplier = inputs
        assert a is not None and b is not None and bias is not None and multiplier is not None
        acc = self.accumulate(a, b, bias)
        zero, relu = int(self.attr("zero_point")), bool(self.attr("relu"))
        return (requantize_accumulator(acc, multiplier, zero, relu),)


REQUANTIZED_CUBE_OPS: list[type[GraphOp]] = [RequantConv2dOp, RequantMatMulOp]
