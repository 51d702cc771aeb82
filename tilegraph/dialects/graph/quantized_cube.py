"""The int8 cube anchors that ``fold-qdq`` makes of QDQ convolutions and matmuls.

``graph.quant_conv2d`` is ``Conv(DequantizeLinear(x), DequantizeLinear(w),
DequantizeLinear(b))`` of a QDQ model with the dequantisation moved behind the
convolution, as GE runs AMCT-quantised models: the int8 data and int8 weights are
multiplied on the cube in int32, the int32 bias is added, and the sum is dequantised once
per output channel (``scale[m] = x_scale * w_scale[m]``). The result is what ONNX's
DequantizeLinear of the int32 accumulator gives: ``acc * scale`` rounded once to the
scale's type. It is not an ONNX op (no frontend makes it); :mod:`tilegraph.passes.fold_qdq`
does, under the ``int8`` precision. ``graph.quant_matmul`` is the same for a QDQ MatMul /
Gemm, with the weight held as rows of K (``[..., N, K]``, Gemm's ``transB = 1``: the
cube's right operand fractals hold K0 = 32 int8 values of one output column each).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, result_def, traits_def
from xdsl.traits import Pure

from tilegraph.dialects.graph.base import (
    GraphOp,
    ShapeError,
    int_attr,
    tensor_type,
)
from tilegraph.dialects.graph.facts import (
    FormatRole,
    FusionKind,
    KernelVariant,
    OpCost,
    OpFacts,
)
from tilegraph.dialects.graph.quantized_linalg import QuantizedConvBase, correlate
from tilegraph.dialects.graph.shape_utils import broadcast_shapes, require
from tilegraph.dialects.graph.windows import known, nc_result, window, window_kernel
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType, Format
from tilegraph.formats.dims import Dim, dims_compatible

F = Format
_Slots = Sequence[SSAValue | None]
_Props = Mapping[str, Attribute]


class Int8ConvBase(QuantizedConvBase):
    """The operands, ``pad_value`` and the int32 sum of the int8 cube's convolutions
    (:class:`QuantConv2dOp`, and :class:`~.requantized_cube.RequantConv2dOp`, which
    requantises the sum where this one dequantises it): what the convolution strategy
    tiles.

    What the padding holds is ``pad_value`` (a compile-time int8) or, when the data's zero
    point is computed at run time (DynamicQuantizeLinear's), the optional operand
    ``pad_zero``: a one-element int8 tensor (``[]`` or ``[1]``) the kernel reads on the
    scalar unit and hands to the loads that pad (Load3Dv2's padding value is a register,
    Ascend C ``SetLoadDataPaddingValue``). Exactly one of the two: an op with the operand
    has no ``pad_value``."""

    pad_value = int_attr()
    DEFAULTS: ClassVar = {**QuantizedConvBase.DEFAULTS, "pad_value": 0}
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = operand_def(TensorType)
    scale = operand_def(TensorType)
    pad_zero = opt_operand_def(TensorType)
    output = result_def(TensorType)
    X_SLOTS: ClassVar = (0,)
    W_SLOTS: ClassVar = (1,)
    """The data and the weight (no zero points: they are 0); the weight's slot gives the
    flops of the inherited :meth:`cost` (as Conv's)."""

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        """The dequantised result: ``[N, M, OH, OW]`` in the scale's type."""
        x = require(tensor_type(operands[0]), "input")
        w = require(tensor_type(operands[1]), "weight")
        bias = require(tensor_type(operands[2]), "bias")
        scale = require(tensor_type(operands[3]), "scale")
        if x.rank != 4 or w.rank != 4:
            raise ShapeError(f"{cls.name} takes a 4-D input and weight")
        if x.dtype != DType.int8 or w.dtype != DType.int8:
            raise ShapeError(f"input and weight must be int8, got {x.dtype.value}, {w.dtype.value}")
        group = int(cls.read_attr(props, "group"))
        nb, c, *spatial = x.origin_shape
        m, cg, *kw = w.origin_shape
        if group < 1 or (known(m) and m % group) or (known(c) and known(cg) and cg * group != c):
            raise ShapeError(f"group {group} does not fit {c} input and {m} output channels")
        _check_column_params(bias, scale, m)
        _check_pad_zero(tensor_type(operands[4]) if len(operands) > 4 else None, props)
        axes = window(cls, props, spatial, window_kernel(cls, props, len(spatial), kw))
        out = nc_result(x, [nb, m, *(a.out for a in axes)])
        return [TensorType(out.origin_shape, scale.element_type, out.origin_format)]

    def accumulate(
        self, x: np.ndarray, w: np.ndarray, bias: np.ndarray, pad_zero: np.ndarray | None
    ) -> np.ndarray:
        """``conv(x padded with the pad, w) + bias`` in int32 (exact, wrapping): the
        correlation of ``x - pad`` (zero padded) plus ``pad · Σ w``; the pad is
        ``pad_zero``'s value when the operand is given, else ``pad_value``."""
        axes = window(type(self), self.properties, x.shape[2:], w.shape[2:])
        if pad_zero is not None:
            pad = float(pad_zero.reshape(-1)[0])
        else:
            pad = float(self.attr("pad_value"))
        w64 = w.astype(np.float64)
        acc = correlate(x.astype(np.float64) - pad, w64, axes, int(self.attr("group")))
        taps = w64.reshape(w.shape[0], -1).sum(axis=1) * pad
        acc = acc + (bias.astype(np.float64) + taps).reshape(1, -1, 1, 1)
        return acc.astype(np.int64).astype(np.int32)


@irdl_op_definition
class QuantConv2dOp(Int8ConvBase):
    """``graph.quant_conv2d %x, %w, %bias, %scale[, %pad_zero] {pad_value}``: ``(conv(x,
    w) + bias) * scale`` with ``x`` padded with ``pad_value`` (default 0), or with the
    run-time int8 ``pad_zero`` when given (:class:`Int8ConvBase`).

    ``x`` int8 ``[N, C, H, W]``, ``w`` int8 ``[M, C/group, kh, kw]`` (weight zero point 0),
    ``bias`` int32 ``[M]``, ``scale`` float ``[M]`` (the product of the data's and the
    weight's scales). A data zero point ``zx`` is ``pad_value = zx`` (the float graph's
    zero padding is ``zx`` in x's quantised domain) with ``-zx · Σ w[m]`` folded into
    ``bias`` by ``fold-qdq``. The sum is exact in int32 (wrapping as ONNX's
    ConvInteger may) and the result is ``acc * scale`` rounded once to the scale's type
    (ONNX DequantizeLinear of an int32 tensor, per output channel).
    """

    name = "graph.quant_conv2d"
    FACTS: ClassVar = OpFacts(
        FormatRole.SENSITIVE,
        FusionKind.OUT_ELEMWISE_FUSABLE,
        data_format=F.NCHW,
        kernels=(
            KernelVariant(
                (F.NC1HWC0, F.FRACTAL_Z, F.NC1HWC0, F.NC1HWC0, F.ND), (F.NC1HWC0,), "cube"
            ),
            KernelVariant((F.NCHW, F.NCHW, F.ND, F.ND, F.ND), (F.NCHW,), "plain"),
        ),
        heavy=True,
        reshape_types={2: "C", 3: "C"},
    )

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, w, bias, scale, pad_zero = inputs
        assert x is not None and w is not None and bias is not None and scale is not None
        acc = self.accumulate(x, w, bias, pad_zero)
        return (dequantize_accumulator(acc, scale.reshape(1, -1, 1, 1)),)


def dequantize_accumulator(acc: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """ONNX DequantizeLinear of an int32 accumulator: ``float32(acc) * scale``, rounded
    once to the scale's type (the product of the exact int32 and the scale is formed in
    float64, exact to 53 bits, as :class:`~.quantize.DequantizeLinearOp` does)."""
    return (acc.astype(np.float64) * scale.astype(np.float64)).astype(scale.dtype)


def _check_pad_zero(pad_zero: TensorType | None, props: _Props) -> None:
    """A run-time pad: one int8 element, and no ``pad_value`` beside it."""
    if pad_zero is None:
        return
    if "pad_value" in props:
        raise ShapeError("pad_value and the pad_zero operand exclude each other")
    if pad_zero.dtype != DType.int8 or pad_zero.rank > 1 or pad_zero.num_elements() != 1:
        raise ShapeError(
            f"pad_zero must be one int8 ([] or [1]), got {pad_zero.dtype.value} "
            f"{list(pad_zero.origin_shape)}"
        )


def _check_column_params(bias: TensorType, scale: TensorType | None, columns: Dim) -> None:
    """An int32 bias and a float scale (when given), one of each per output column
    (channel)."""
    if bias.dtype != DType.int32:
        raise ShapeError(f"the bias must be int32, got {bias.dtype.value}")
    if scale is not None and scale.dtype not in (DType.float16, DType.float32):
        raise ShapeError(f"the scale must be float16 or float32, got {scale.dtype.value}")
    for p, what in ((bias, "bias"), (scale, "scale")):
        if p is None:
            continue
        if p.rank != 1 or not dims_compatible(p.origin_shape[0], columns):
            raise ShapeError(f"the {what} must have shape [{columns}], got {list(p.origin_shape)}")


class Int8MatMulBase(GraphOp):
    """The operands, shapes and int32 sum of the int8 cube's matmuls (:class:`QuantMatMulOp`,
    and :class:`~.requantized_cube.RequantMatMulOp`, which requantises the sum where this
    one dequantises it): what the matmul strategy tiles.

    ``a`` int8 ``[..., M, K]``, ``b`` int8 ``[..., N, K]`` (rows of K, as Gemm's
    ``transB = 1``; batch dims broadcast as numpy's matmul), both with zero point 0 (an
    asymmetric data zero point is folded into ``bias`` by ``fold-qdq``), ``bias`` int32
    ``[N]``, ``scale`` float ``[N]`` (one per column). The sum ``a · bᵀ + bias`` is exact in
    int32 (wrapping, as ONNX's MatMulInteger may). Without ``scale`` the result is that
    int32 sum itself: the cube's raw accumulator, for an epilogue that finishes it in int32
    on the vector unit (``fold-qdq``'s activation x activation products, whose zero-point
    corrections are per row and per column)."""

    a = operand_def(TensorType)
    b = operand_def(TensorType)
    bias = operand_def(TensorType)
    scale = opt_operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        """The dequantised result: ``[..., M, N]`` in the scale's type (int32 without one)."""
        a = require(tensor_type(operands[0]), "a")
        b = require(tensor_type(operands[1]), "b")
        bias = require(tensor_type(operands[2]), "bias")
        scale_slot = operands[3] if len(operands) > 3 else None
        scale = None if scale_slot is None else require(tensor_type(scale_slot), "scale")
        if a.rank < 2 or b.rank < 2:
            raise ShapeError(f"{cls.name} takes operands of rank >= 2")
        if a.dtype != DType.int8 or b.dtype != DType.int8:
            raise ShapeError(f"a and b must be int8, got {a.dtype.value}, {b.dtype.value}")
        *batch_a, m, k = a.origin_shape
        *batch_b, n, k2 = b.origin_shape
        if not dims_compatible(k, k2):
            raise ShapeError(f"a has K = {k}, b (rows of K) has K = {k2}")
        _check_column_params(bias, scale, n)
        shape = [*broadcast_shapes(list(batch_a), list(batch_b)), m, n]
        return [TensorType(shape, bias.element_type if scale is None else scale.element_type)]

    def accumulate(self, a: np.ndarray, b: np.ndarray, bias: np.ndarray) -> np.ndarray:
        """``a · bᵀ + bias`` in int32 (exact in float64 below 2**53, then wrapping)."""
        acc = np.matmul(a.astype(np.float64), np.swapaxes(b.astype(np.float64), -1, -2))
        return (acc + bias.astype(np.float64)).astype(np.int64).astype(np.int32)

    def cost(self) -> OpCost:
        """flops = 2 * M * N * K * prod(batch), as MatMul."""
        out, a = self.output.type, self.a.type
        assert isinstance(out, TensorType) and isinstance(a, TensorType)
        n, k = out.num_elements(), a.origin_shape[-1]
        flops = 2 * n * int(k) if n is not None and known(k) else 0
        return OpCost(flops=int(flops), bytes=super().cost().bytes)


@irdl_op_definition
class QuantMatMulOp(Int8MatMulBase):
    """``graph.quant_matmul %a, %b, %bias(, %scale)``: ``(a · bᵀ + bias) * scale``.

    The operands are :class:`Int8MatMulBase`'s, ``scale`` the data's scale times the
    weight's, per column. The result ``[..., M, N]`` is ``acc * scale`` rounded once to
    the scale's type (ONNX DequantizeLinear of the int32 accumulator, per column); without
    ``scale`` it is ``acc``, int32 (fixpipe writes the accumulator as it is).
    """

    name = "graph.quant_matmul"
    FACTS: ClassVar = OpFacts(
        role=FormatRole.ND_ONLY,
        fusion=FusionKind.OUT_ELEMWISE_FUSABLE,
        heavy=True,
        kernels=(
            KernelVariant((F.FRACTAL_NZ, F.FRACTAL_NZ, F.ND, F.ND), (F.FRACTAL_NZ,), "cube"),
            KernelVariant((F.ND, F.ND, F.ND, F.ND), (F.ND,), "plain"),
        ),
    )

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        a, b, bias, *rest = inputs
        assert a is not None and b is not None and bias is not None
        acc = self.accumulate(a, b, bias)
        scale = rest[0] if rest else None
        return (acc if scale is None else dequantize_accumulator(acc, scale),)


QUANTIZED_CUBE_OPS = [QuantConv2dOp, QuantMatMulOp]
