"""Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear.

Scales and zero points apply per tensor (one value), per axis (a 1-D tensor along
``axis``) or per block (``block_size`` > 0: the scale has the input's rank and
``ceil(dim / block_size)`` entries along ``axis``). Quantizing to an integer type (int8,
uint8, int16, uint16, int4, uint4, int2, uint2) rounds half to even and saturates to the
type's range; quantizing to a float8 type (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz) rounds to
nearest even and saturates unless ``saturate`` is 0, to float4 e2m1 always saturates, as the
ONNX spec says. Per-tensor quantization to 8- and 16-bit integers has a vector program
(:mod:`tilegraph.lowering.conversion.tiling.vector_ops`); the rest runs on the host.

:data:`QUANTIZE_OPS` also registers the operator-style quantized ops of
:mod:`.quantized_linalg` and BitCast (:mod:`.bitcast`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from tilegraph.dialects.element_conversion import convert
from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.base import (
    GraphOp,
    ShapeError,
    constant_value,
    int_attr,
    tensor_type,
)
from tilegraph.dialects.graph.bitcast import BitCastOp
from tilegraph.dialects.graph.elementwise import onnx_dtype_name
from tilegraph.dialects.graph.facts import ND_OPAQUE, FormatRole, FusionKind, OpFacts
from tilegraph.dialects.graph.quantize_common import QUANTIZED_TYPES, requantize
from tilegraph.dialects.graph.quantized_cube import QUANTIZED_CUBE_OPS
from tilegraph.dialects.graph.quantized_linalg import QUANTIZED_LINALG_OPS
from tilegraph.dialects.graph.requantized_cube import REQUANTIZED_CUBE_OPS
from tilegraph.dialects.graph.shape_utils import nd_result, normalize_axis, require
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType, parse_dtype

_FACTS = OpFacts(role=FormatRole.ND_ONLY, fusion=FusionKind.ELEMWISE, format_operands=(0,))


def _is_scalar(p: TensorType) -> bool:
    return p.rank == 0 or (p.rank == 1 and p.origin_shape[0] == 1)


def _check_parameter(x: TensorType, p: TensorType | None, axis: int, block: int, what: str):
    """A scale / zero point fits x: a scalar, a 1-D tensor along ``axis`` or (blocked) a
    tensor of x's rank with ``ceil(dim / block_size)`` entries along ``axis``."""
    if p is None or (_is_scalar(p) and not block):
        return
    dim = x.origin_shape[axis]
    if block:
        want = [*x.origin_shape[:axis], -(-dim // block) if isinstance(dim, int) else -1,
                *x.origin_shape[axis + 1 :]]  # fmt: skip
        if p.rank != x.rank or any(
            isinstance(a, int) and a >= 0 and a != b
            for a, b in zip(want, p.origin_shape, strict=True)
        ):
            raise ShapeError(f"blocked {what} must have shape {want}, got {list(p.origin_shape)}")
        return
    if p.rank != 1 or (isinstance(dim, int) and p.origin_shape[0] not in (dim, -1)):
        raise ShapeError(
            f"{what} must be a scalar or 1-D along axis {axis} (size {dim}), got "
            f"{list(p.origin_shape)}"
        )


def _expand(p: np.ndarray, shape: Sequence[int], axis: int, block: int) -> np.ndarray:
    """A scale / zero point broadcast against a tensor of ``shape``."""
    p = np.asarray(p)
    if p.size == 1 and not block:
        return p.reshape(())
    if block:
        full = np.repeat(p, block, axis=axis)
        return np.take(full, np.arange(shape[axis]), axis=axis)
    view = [1] * len(shape)
    view[axis] = p.size
    return p.reshape(view)


class _LinearQuantOp(GraphOp):
    axis = int_attr()
    block_size = int_attr()
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    FACTS: ClassVar = _FACTS
    DEFAULTS: ClassVar = {"axis": 1, "block_size": 0}

    @classmethod
    def parameters(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> tuple[TensorType, TensorType, TensorType | None, int, int]:
        x = require(tensor_type(operands[0]), "x")
        scale = require(tensor_type(operands[1]), "scale")
        zero = tensor_type(operands[2]) if len(operands) > 2 else None
        block = int(cls.read_attr(props, "block_size"))
        per_tensor = all(p is None or _is_scalar(p) for p in (scale, zero)) and not block
        # the axis only matters for per-axis and blocked parameters
        axis = 0 if per_tensor else normalize_axis(cls.read_attr(props, "axis"), x.rank)
        for p, what in ((scale, "the scale"), (zero, "the zero point")):
            _check_parameter(x, p, axis, block, what)
        return x, scale, zero, axis, block

    def _axis(self, x: np.ndarray) -> int:
        return int(self.attr("axis")) % x.ndim if x.ndim else 0


_ARITHMETIC_TYPES = (DType.float16, DType.bfloat16, DType.float32, DType.float64)
"""The types Q/DQ compute in (``precision``, ``output_dtype``, the scale's type)."""


def _arithmetic_type(code: int, fallback: TensorType, what: str) -> DType:
    """The type an ONNX type attribute names (``fallback``'s when 0), one Q/DQ compute in."""
    dtype = parse_dtype(onnx_dtype_name(code)) if code else fallback.dtype
    if dtype not in _ARITHMETIC_TYPES:
        names = ", ".join(t.value for t in _ARITHMETIC_TYPES)
        raise ShapeError(f"{what} must be one of {names}, got {dtype.value}")
    return dtype


@irdl_op_definition
class QuantizeLinearOp(_LinearQuantOp):
    """ONNX QuantizeLinear: ``saturate(round(x / scale) + zero_point)`` in the zero point's
    type (or ``output_dtype``; uint8 by default: an integer type from int2 to uint16, a
    float8 or float4 type), rounding half to even, dividing in ``precision``'s type
    (default: the scale's; an int32 or float8e8m0 scale is refused)."""

    name = "graph.quantize_linear"
    ONNX_OP: ClassVar = "QuantizeLinear"
    x = operand_def(TensorType)
    y_scale = operand_def(TensorType)
    y_zero_point = opt_operand_def(TensorType)
    y = result_def(TensorType)
    output_dtype = int_attr()
    saturate = int_attr()
    precision = int_attr()
    DEFAULTS: ClassVar = {
        "axis": 1,
        "block_size": 0,
        "output_dtype": 0,
        "saturate": 1,
        "precision": 0,
    }

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x, scale, zero, _, _ = cls.parameters(operands, props)
        code = int(cls.read_attr(props, "output_dtype"))
        if code:
            elt = element_type_of(onnx_dtype_name(code))
            if zero is not None and zero.element_type != elt:
                raise ShapeError("output_dtype and the zero point's type differ")
        else:
            elt = zero.element_type if zero is not None else element_type_of("uint8")
        target = TensorType([1], elt).dtype
        if target not in QUANTIZED_TYPES:
            raise ShapeError(
                f"quantizing to {target.value} is not supported (the targets are "
                f"{', '.join(t.value for t in QUANTIZED_TYPES)})"
            )
        _arithmetic_type(0, scale, "the scale's type")
        _arithmetic_type(int(cls.read_attr(props, "precision")), scale, "precision")
        return [nd_result(x, x.origin_shape, elt)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, scale, zero = (list(inputs) + [None])[:3]
        assert x is not None and scale is not None
        axis, block = self._axis(x), int(self.attr("block_size"))
        scale_type, out = self.y_scale.type, self.y.type
        assert isinstance(scale_type, TensorType) and isinstance(out, TensorType)
        # in the scale's type, as onnx and onnxruntime do: 0.5 / 0.019607844 is 25.5 in
        # float32 (rounds to 26) but 25.4999... in float64
        precision = _arithmetic_type(self.attr("precision"), scale_type, "precision")
        # the containers' division (float32 for bfloat16 and float16) rounded again to
        # ``precision`` is the correctly rounded quotient: 24 bits >= 2p + 2
        divisor = convert(_expand(scale, x.shape, axis, block), precision)
        quotient = convert(convert(x, precision) / divisor, precision)
        offset = None if zero is None else _expand(zero, x.shape, axis, block)
        return (requantize(quotient, offset, out.dtype, bool(self.attr("saturate"))),)

    def quantizes_as_tail(self) -> bool:
        """Whether this QuantizeLinear can be the last steps of its producer's vector
        kernel (OpFacts ``elementwise_tail``): one constant scale and zero point, no
        ``precision``, to int8 / uint8, dividing in its input's own float type (the scale's),
        so the tail computes exactly what a quantise kernel of its own would."""
        if int(self.attr("block_size")) or int(self.attr("precision")):
            return False
        x, out, scale = (v.type for v in (self.x, self.y, self.y_scale))
        if not all(isinstance(t, TensorType) for t in (x, out, scale)):
            return False
        assert isinstance(x, TensorType) and isinstance(out, TensorType)
        assert isinstance(scale, TensorType)
        params = [self.y_scale] if self.y_zero_point is None else [self.y_scale, self.y_zero_point]
        values = [constant_value(p) for p in params]
        return (
            out.dtype in (DType.int8, DType.uint8)
            and x.dtype == scale.dtype
            and all(v is not None and v.size == 1 for v in values)
        )


@irdl_op_definition
class DequantizeLinearOp(_LinearQuantOp):
    """ONNX DequantizeLinear: ``(x - zero_point) * scale``, the product rounded to
    ``output_dtype`` (default: the scale's type). A float8e8m0 (MX) scale needs
    ``output_dtype``."""

    name = "graph.dequantize_linear"
    ONNX_OP: ClassVar = "DequantizeLinear"
    x = operand_def(TensorType)
    x_scale = operand_def(TensorType)
    x_zero_point = opt_operand_def(TensorType)
    y = result_def(TensorType)
    output_dtype = int_attr()
    DEFAULTS: ClassVar = {"axis": 1, "block_size": 0, "output_dtype": 0}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x, scale, zero, _, _ = cls.parameters(operands, props)
        if zero is not None and zero.element_type != x.element_type:
            raise ShapeError("the zero point must have x's element type")
        if scale.dtype not in (*_ARITHMETIC_TYPES, DType.float8_e8m0):
            raise ShapeError(f"the scale must be floating point, got {scale.element_type}")
        code = int(cls.read_attr(props, "output_dtype"))
        out = _arithmetic_type(code, scale, "the output type (output_dtype or the scale's)")
        return [nd_result(x, x.origin_shape, element_type_of(out))]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, scale, zero = (list(inputs) + [None])[:3]
        assert x is not None and scale is not None
        axis, block = self._axis(x), int(self.attr("block_size"))
        values = x.astype(np.float64)  # exact: every quantized type fits
        if zero is not None:
            values = values - _expand(zero, x.shape, axis, block).astype(np.float64)
        out = self.y.type
        assert isinstance(out, TensorType)
        # rounded once, to the output type: the product of (x - zero_point), at most 17
        # bits, and a float32/16 or e8m0 scale is exact in float64
        y = values * _expand(scale, x.shape, axis, block).astype(np.float64)
        return (convert(y, out.dtype),)


def _float32_input(operands: Sequence[SSAValue | None], what: str) -> TensorType:
    """The one operand of a dynamic quantisation, which must be float32."""
    x = require(tensor_type(operands[0]), "x")
    if x.dtype != DType.float32:
        raise ShapeError(f"{what} takes float32, got {x.element_type}")
    return x


@irdl_op_definition
class DynamicQuantizeLinearOp(GraphOp):
    """ONNX DynamicQuantizeLinear: uint8 quantization of a float32 tensor with the scale and
    zero point computed from its range (which always includes 0), step by step in float32
    (:func:`dynamic_quantize`, shared with :class:`DynamicQuantizeParamsOp`, so the graph
    and its lowered form agree; an all-zero input has scale 1, as onnxruntime)."""

    name = "graph.dynamic_quantize_linear"
    ONNX_OP: ClassVar = "DynamicQuantizeLinear"
    x = operand_def(TensorType)
    y = result_def(TensorType)
    y_scale = result_def(TensorType)
    y_zero_point = result_def(TensorType)
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = _float32_input(operands, "DynamicQuantizeLinear")
        u8 = element_type_of("uint8")
        return [
            nd_result(x, x.origin_shape, u8),
            TensorType([], x.element_type),
            TensorType([], u8),
        ]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        return dynamic_quantize(x)


@irdl_op_definition
class DynamicQuantizeParamsOp(GraphOp):
    """``graph.dynamic_quantize_params %x``: DynamicQuantizeLinear's scale and zero point.

    ``lo = min(min(x), 0)``, ``hi = max(max(x), 0)``, ``scale = (hi - lo) / 255`` and
    ``zero_point = uint8(round_half_even(clip(0 - lo / scale, 0, 255)))``, in float32 step
    by step as the ONNX function body computes them; a zero range (an all-zero ``x``) gives
    scale 1 and zero point 0, as onnxruntime does (the body would divide 0 by 0).
    ``y_zero_point_int8`` is ``zero_point - 128`` as int8: the zero point of the same grid
    moved onto int8, which ``fold-integer-ops`` gives the int8 cube (a result the kernel
    writes only when something reads it). ``expand-qoperator`` writes DynamicQuantizeLinear
    as this op and a QuantizeLinear of ``x`` with its results, which
    ``fuse-dynamic-quantize`` groups into one kernel: the reduction of both extremes
    shared over the cores, the scalars, the quantisation
    (:mod:`tilegraph.lowering.conversion.tiling.dynamic_quantize`)."""

    name = "graph.dynamic_quantize_params"
    x = operand_def(TensorType)
    y_scale = result_def(TensorType)
    y_zero_point = result_def(TensorType)
    y_zero_point_int8 = result_def(TensorType)
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = _float32_input(operands, cls.name)
        return [
            TensorType([], x.element_type),
            TensorType([], element_type_of("uint8")),
            TensorType([], element_type_of("int8")),
        ]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        scale, zero = dynamic_quantize_params(x)
        shifted = np.asarray(zero.astype(np.int16) - 128, np.int8)
        return scale, zero, shifted


def dynamic_quantize_params(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DynamicQuantizeLinear's float32 scale and uint8 zero point of ``x`` (see
    :class:`DynamicQuantizeParamsOp`); onnxruntime's ``GetQuantizationParameter`` (uint8)
    computes the same, step by step in float32."""
    f32 = np.float32
    lo = np.minimum(x.min(initial=f32(0)), f32(0)).astype(f32)
    hi = np.maximum(x.max(initial=f32(0)), f32(0)).astype(f32)
    scale = f32(f32(hi - lo) / f32(255))
    safe = f32(1) if scale == 0 else scale
    initial = f32(f32(0) - f32(lo / safe))
    zero = np.rint(np.clip(initial, f32(0), f32(255)))
    return np.asarray(safe, f32), np.asarray(zero, np.uint8)


def dynamic_quantize(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``x`` quantised onto DynamicQuantizeLinear's uint8 grid: ``(q, scale, zero_point)``,
    ``q = clip(round_half_even(x / scale) + zero_point, 0, 255)`` in float32."""
    scale, zero = dynamic_quantize_params(x)
    q = np.clip(np.rint(x.astype(np.float32) / scale) + np.float32(zero), 0, 255)
    return q.astype(np.uint8), scale, zero


# BitCast joins this family's registration list: it belongs with Cast, whose list is shared
QUANTIZE_OPS: list[type[GraphOp]] = [
    QuantizeLinearOp,
    DequantizeLinearOp,
    DynamicQuantizeLinearOp,
    DynamicQuantizeParamsOp,
    *QUANTIZED_LINALG_OPS,
    *QUANTIZED_CUBE_OPS,
    *REQUANTIZED_CUBE_OPS,
    BitCastOp,
]
