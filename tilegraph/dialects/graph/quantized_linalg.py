"""Integer and quantized linear algebra: MatMulInteger, QLinearMatMul, ConvInteger,
QLinearConv (ONNX's operator-style quantization, as opposed to QDQ pairs).

Reference kernels work on exact values: quantized operands minus their zero points in
float64 (every int8/uint8/float8 product and sum of up to 2**37 of them is exact), so the
integer results are exact and wrap to int32 as the spec allows ("accumulation may overflow
if and only if in 32 bits"). The QLinear ops requantize ``real / y_scale`` with
:func:`~tilegraph.dialects.graph.quantize_common.requantize` (round half to even, saturate). Host
ops on the tiled path, except under the ``int8`` precision: ``expand-qoperator`` rewrites
QLinearConv / QLinearMatMul into their QDQ pattern and ``fold-integer-ops`` puts
``Cast(MatMulInteger)`` / ``Cast(ConvInteger)`` on the int8 cube.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from math import prod
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

from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.base import (
    GraphOp,
    ShapeError,
    int_attr,
    ints_attr,
    str_attr,
    tensor_type,
)
from tilegraph.dialects.graph.facts import ND_OPAQUE, OpCost
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.quantize_common import QUANTIZED_TYPES, requantize
from tilegraph.dialects.graph.shape_utils import require
from tilegraph.dialects.graph.windows import Axis, known, window, window_kernel
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType
from tilegraph.formats.dims import Dim, dims_compatible

_Slots = Sequence[SSAValue | None]
_Props = Mapping[str, Attribute]
_INTEGER_INPUTS = (DType.int8, DType.uint8)


def _operand(operands: _Slots, index: int) -> TensorType | None:
    return tensor_type(operands[index]) if index < len(operands) else None


def _check_pair(
    value: TensorType, zero: TensorType | None, allowed: Sequence[DType], what: str
) -> None:
    """A quantized operand has an allowed type, and its zero point the same type."""
    if value.dtype not in allowed:
        names = ", ".join(t.value for t in allowed)
        raise ShapeError(f"{what} must be one of {names}, got {value.dtype.value}")
    if zero is not None and zero.element_type != value.element_type:
        raise ShapeError(f"the zero point of {what} must have its type ({value.element_type})")


def _check_scale(scale: TensorType, what: str) -> None:
    if not scale.dtype.is_float:
        raise ShapeError(f"the scale of {what} must be floating point, got {scale.element_type}")


def _is_single(p: TensorType) -> bool:
    return p.rank == 0 or (p.rank == 1 and p.origin_shape[0] == 1)


def _check_vector(p: TensorType | None, size: Dim, what: str, layout: str) -> None:
    """A per-tensor (scalar) or per-``layout`` (1-D of ``size``) quantization parameter."""
    if p is None or _is_single(p):
        return
    if p.rank != 1 or not dims_compatible(p.origin_shape[0], size):
        raise ShapeError(
            f"{what} must be a scalar or 1-D per {layout} (size {size}), got {list(p.origin_shape)}"
        )


def _centered(
    q: np.ndarray, zero: np.ndarray | None, place: Callable[[np.ndarray], np.ndarray]
) -> np.ndarray:
    """Quantized values minus their zero point (placed by ``place``), in float64."""
    values = q.astype(np.float64)
    return values if zero is None else values - place(zero.astype(np.float64))


def _wrap_int32(values: np.ndarray) -> np.ndarray:
    return values.astype(np.int64).astype(np.int32)


# ---- matmul --------------------------------------------------------------------------------


def _check_matmul_parameter(
    p: TensorType | None, operand: TensorType, row: bool, what: str
) -> None:
    """Per tensor (a scalar), per row of ``a`` / column of ``b`` (a vector, or a tensor of the
    operand's rank with 1 as its last / second-to-last dim)."""
    if p is None or _is_single(p):
        return
    if p.rank == 1:
        size = operand.origin_shape[-2 if row else -1] if operand.rank > 1 else 1
        _check_vector(p, size, what, "row" if row else "column")
        return
    want = list(operand.origin_shape)
    want[-1 if row else -2] = 1
    if p.rank != operand.rank or not all(map(dims_compatible, p.origin_shape, want)):
        raise ShapeError(f"{what} must have shape {want} (or be a scalar or vector)")


def _rows(p: np.ndarray) -> np.ndarray:
    """A per-row parameter against a ``[..., M, N]`` product."""
    if p.size == 1:
        return p.reshape(())
    return p.reshape(-1, 1) if p.ndim == 1 else p


def _columns(p: np.ndarray) -> np.ndarray:
    """A per-column parameter against a ``[..., M, N]`` product."""
    return p.reshape(()) if p.size == 1 else p


class _QuantizedMatMulBase(GraphOp):
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    A_SLOTS: ClassVar[tuple[int, ...]]
    """Operand positions of a, its zero point and (QLinear) its scale; B_SLOTS for b."""
    B_SLOTS: ClassVar[tuple[int, ...]]

    @classmethod
    def operands_checked(
        cls, operands: _Slots, allowed: Sequence[DType]
    ) -> tuple[TensorType, TensorType, list[Dim]]:
        a = require(_operand(operands, cls.A_SLOTS[0]), "a")
        b = require(_operand(operands, cls.B_SLOTS[0]), "b")
        for value, slots, row, what in ((a, cls.A_SLOTS, True, "a"), (b, cls.B_SLOTS, False, "b")):
            params = [_operand(operands, i) for i in slots[1:]]
            _check_pair(value, params[0], allowed, what)
            for p, kind in zip(params, ("zero point", "scale"), strict=False):
                _check_matmul_parameter(p, value, row, f"the {kind} of {what}")
        return a, b, MatMulOp._dims(a, b)[-1]

    def centered_product(self, inputs: Sequence[np.ndarray | None]) -> np.ndarray:
        """``(a - a_zero_point) @ (b - b_zero_point)``, exact, in float64."""
        a, a_zero = (inputs[i] for i in self.A_SLOTS[:2])
        b, b_zero = (inputs[i] for i in self.B_SLOTS[:2])
        assert a is not None and b is not None
        if a.ndim == 1:  # a vector: its single "row" takes a per-tensor parameter
            a_zero = None if a_zero is None else a_zero.reshape(())
        return np.matmul(_centered(a, a_zero, _rows), _centered(b, b_zero, _columns))

    def cost(self) -> OpCost:
        """flops = 2 * M * N * K * prod(batch), as MatMul."""
        a, b = (self.operands[s[0]].type for s in (self.A_SLOTS, self.B_SLOTS))
        assert isinstance(a, TensorType) and isinstance(b, TensorType)
        batch, m, k, n, _ = MatMulOp._dims(a, b)
        dims = [*batch, m, k, n]
        flops = 2 * prod(dims) if all(known(d) for d in dims) else 0
        return OpCost(flops=int(flops), bytes=super().cost().bytes)


@irdl_op_definition
class MatMulIntegerOp(_QuantizedMatMulBase):
    """ONNX MatMulInteger: ``(A - a_zero_point) @ (B - b_zero_point)`` in int32 (numpy
    matmul broadcasting) for int8/uint8 A and B; zero points per tensor, per row of A or
    per column of B."""

    name = "graph.matmul_integer"
    ONNX_OP: ClassVar = "MatMulInteger"
    A = operand_def(TensorType)
    B = operand_def(TensorType)
    a_zero_point = opt_operand_def(TensorType)
    b_zero_point = opt_operand_def(TensorType)
    output = result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    A_SLOTS: ClassVar = (0, 2)
    B_SLOTS: ClassVar = (1, 3)

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        _, _, shape = cls.operands_checked(operands, _INTEGER_INPUTS)
        return [TensorType(shape, element_type_of(DType.int32))]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        return (_wrap_int32(self.centered_product(list(inputs) + [None] * 2)),)


@irdl_op_definition
class QLinearMatMulOp(_QuantizedMatMulBase):
    """ONNX QLinearMatMul: ``(a - a_zp) @ (b - b_zp) * a_scale * b_scale`` requantized
    with ``y_scale`` / ``y_zero_point`` (round half to even, saturate) into
    ``y_zero_point``'s type, for int8/uint8 and float8 operands with scales and zero points
    per tensor, per row of a or per column of b."""

    name = "graph.qlinear_matmul"
    ONNX_OP: ClassVar = "QLinearMatMul"
    a = operand_def(TensorType)
    a_scale = operand_def(TensorType)
    a_zero_point = operand_def(TensorType)
    b = operand_def(TensorType)
    b_scale = operand_def(TensorType)
    b_zero_point = operand_def(TensorType)
    y_scale = operand_def(TensorType)
    y_zero_point = operand_def(TensorType)
    y = result_def(TensorType)
    A_SLOTS: ClassVar = (0, 2, 1)
    B_SLOTS: ClassVar = (3, 5, 4)

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        _, _, shape = cls.operands_checked(operands, QUANTIZED_TYPES)
        y_scale = require(_operand(operands, 6), "y_scale")
        y_zero = require(_operand(operands, 7), "y_zero_point")
        for scale, what in ((_operand(operands, 1), "a"), (_operand(operands, 4), "b")):
            _check_scale(require(scale, f"the scale of {what}"), what)
        _check_scale(y_scale, "y")
        if not (_is_single(y_scale) and _is_single(y_zero)):
            raise ShapeError("y_scale and y_zero_point must be scalars (per tensor)")
        if y_zero.dtype not in QUANTIZED_TYPES:
            raise ShapeError(f"y_zero_point's type {y_zero.dtype.value} is not quantized")
        return [TensorType(shape, y_zero.element_type)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        a, a_scale, _, _, b_scale, _, y_scale, y_zero = inputs
        assert a is not None and a_scale is not None and b_scale is not None
        assert y_scale is not None and y_zero is not None
        row_scale = a_scale.reshape(()) if a.ndim == 1 else _rows(a_scale)
        real = self.centered_product(inputs) * row_scale.astype(np.float64)
        real = real * _columns(b_scale).astype(np.float64)
        out = self.y.type
        assert isinstance(out, TensorType)
        return (requantize(real / float(y_scale.reshape(())), y_zero, out.dtype),)


# ---- convolution ---------------------------------------------------------------------------


def correlate(x: np.ndarray, w: np.ndarray, axes: Sequence[Axis], group: int) -> np.ndarray:
    """ONNX Conv's cross-correlation of float64 ``x [N, C, *spatial]`` and
    ``w [M, C/group, *kernel]`` with zero padding, one kernel offset at a time."""
    n, c = x.shape[:2]
    m, kernel = w.shape[0], w.shape[2:]
    out = [int(a.out) for a in axes]
    padded = np.pad(x, [(0, 0), (0, 0), *((a.begin, a.end) for a in axes)])
    grouped_w = w.reshape(group, m // group, c // group, *kernel)
    y = np.zeros((n, group, m // group, prod(out)))
    for offsets in np.ndindex(*kernel):
        taps = padded[(..., *(a.taps(k) for a, k in zip(axes, offsets, strict=True)))]
        taps = taps.reshape(n, group, c // group, -1)
        y += np.einsum("gmc,ngcp->ngmp", grouped_w[(..., *offsets)], taps)
    return y.reshape(n, m, *out)


class QuantizedConvBase(GraphOp):
    """The window attributes, defaults and cost of the integer convolutions (ConvInteger,
    QLinearConv, and :class:`~.quantized_cube.QuantConv2dOp`)."""

    auto_pad = str_attr()
    dilations = ints_attr()
    group = int_attr()
    kernel_shape = ints_attr()
    pads = ints_attr()
    strides = ints_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"auto_pad": "NOTSET", "group": 1}
    X_SLOTS: ClassVar[tuple[int, ...]]
    """Operand positions of x and its zero point; W_SLOTS of w and its zero point."""
    W_SLOTS: ClassVar[tuple[int, ...]]

    @classmethod
    def operands_checked(cls, operands: _Slots, props: _Props) -> tuple[list[Dim], Dim]:
        """The result shape and the output channels (M)."""
        x = require(_operand(operands, cls.X_SLOTS[0]), "x")
        w = require(_operand(operands, cls.W_SLOTS[0]), "w")
        x_zero, w_zero = _operand(operands, cls.X_SLOTS[1]), _operand(operands, cls.W_SLOTS[1])
        _check_pair(x, x_zero, _INTEGER_INPUTS, "x")
        _check_pair(w, w_zero, _INTEGER_INPUTS, "w")
        if x.rank < 3 or w.rank != x.rank:
            raise ShapeError(
                f"x must have rank >= 3 ([N, C, ...]) and w its rank, got {x.rank} and {w.rank}"
            )
        group = int(cls.read_attr(props, "group"))
        nb, c, *spatial = x.origin_shape
        m, cg, *kw = w.origin_shape
        if group < 1 or (known(m) and m % group):
            raise ShapeError(f"group {group} must be >= 1 and divide the output channels {m}")
        if known(c) and known(cg) and cg * group != c:
            raise ShapeError(f"w expects {cg} x group {group} input channels, x has {c}")
        _check_vector(x_zero, 1, "the zero point of x", "tensor")
        _check_vector(w_zero, m, "the zero point of w", "output channel")
        axes = window(cls, props, spatial, window_kernel(cls, props, len(spatial), kw))
        return [nb, m, *(a.out for a in axes)], m

    def centered_correlation(self, inputs: Sequence[np.ndarray | None]) -> np.ndarray:
        """``conv(x - x_zero_point, w - w_zero_point)``, exact, in float64."""
        x, x_zero = (inputs[i] for i in self.X_SLOTS)
        w, w_zero = (inputs[i] for i in self.W_SLOTS)
        assert x is not None and w is not None
        per_channel = (-1,) + (1,) * (w.ndim - 1)
        xc = _centered(x, x_zero, lambda z: z.reshape(()))
        wc = _centered(w, w_zero, lambda z: z.reshape(per_channel) if z.size > 1 else z)
        axes = window(type(self), self.properties, x.shape[2:], w.shape[2:])
        return correlate(xc, wc, axes, int(self.attr("group")))

    def cost(self) -> OpCost:
        """flops = 2 * N * M * prod(out) * (C / group) * prod(kernel), as Conv."""
        out, w = self.results[0].type, self.operands[self.W_SLOTS[0]].type
        assert isinstance(out, TensorType) and isinstance(w, TensorType)
        n = out.num_elements()
        flops = 2 * n * prod(w.origin_shape[1:]) if n is not None and w.is_static else 0
        return OpCost(flops=int(flops), bytes=super().cost().bytes)


@irdl_op_definition
class ConvIntegerOp(QuantizedConvBase):
    """ONNX ConvInteger: ``conv(x - x_zero_point, w - w_zero_point)`` in int32 for int8/uint8
    x and w (the padding holds x's zero point: it contributes 0); x's zero point per
    tensor, w's per tensor or per output channel."""

    name = "graph.conv_integer"
    ONNX_OP: ClassVar = "ConvInteger"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    x_zero_point = opt_operand_def(TensorType)
    w_zero_point = opt_operand_def(TensorType)
    y = result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    X_SLOTS: ClassVar = (0, 2)
    W_SLOTS: ClassVar = (1, 3)

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        shape, _ = cls.operands_checked(operands, props)
        return [TensorType(shape, element_type_of(DType.int32))]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        return (_wrap_int32(self.centered_correlation(list(inputs) + [None] * 2)),)


@irdl_op_definition
class QLinearConvOp(QuantizedConvBase):
    """ONNX QLinearConv: ``(conv(x - x_zp, w - w_zp) + B) * x_scale * w_scale`` requantized
    with ``y_scale`` / ``y_zero_point`` (round half to even, saturate) into
    ``y_zero_point``'s type; int8/uint8 tensors, an int32 bias quantized with scale
    ``x_scale * w_scale``, w's scale and zero point per tensor or per output channel."""

    name = "graph.qlinear_conv"
    ONNX_OP: ClassVar = "QLinearConv"
    x = operand_def(TensorType)
    x_scale = operand_def(TensorType)
    x_zero_point = operand_def(TensorType)
    w = operand_def(TensorType)
    w_scale = operand_def(TensorType)
    w_zero_point = operand_def(TensorType)
    y_scale = operand_def(TensorType)
    y_zero_point = operand_def(TensorType)
    B = opt_operand_def(TensorType)
    y = result_def(TensorType)
    X_SLOTS: ClassVar = (0, 2)
    W_SLOTS: ClassVar = (3, 5)

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        shape, m = cls.operands_checked(operands, props)
        scales = [require(_operand(operands, i), n) for i, n in ((1, "x"), (4, "w"), (6, "y"))]
        for scale, what in zip(scales, ("x", "w", "y"), strict=True):
            _check_scale(scale, what)
        _check_vector(scales[0], 1, "the scale of x", "tensor")
        _check_vector(scales[1], m, "the scale of w", "output channel")
        y_zero = require(_operand(operands, 7), "y_zero_point")
        if not (_is_single(scales[2]) and _is_single(y_zero)):
            raise ShapeError("y_scale and y_zero_point must be scalars (per tensor)")
        _check_pair(y_zero, None, _INTEGER_INPUTS, "y_zero_point")
        bias = _operand(operands, 8)
        if bias is not None:
            if bias.dtype != DType.int32:
                raise ShapeError(f"the bias must be int32, got {bias.element_type}")
            _check_vector(bias, m, "the bias", "output channel")
        return [TensorType(shape, y_zero.element_type)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x_scale, w_scale, y_scale, y_zero = inputs[1], inputs[4], inputs[6], inputs[7]
        bias = inputs[8] if len(inputs) > 8 else None
        assert x_scale is not None and w_scale is not None
        assert y_scale is not None and y_zero is not None
        acc = self.centered_correlation(inputs)
        channels = (1, -1) + (1,) * (acc.ndim - 2)
        if bias is not None:
            acc = acc + bias.astype(np.float64).reshape(channels)
        scale = x_scale.astype(np.float64).reshape(()) * w_scale.astype(np.float64)
        real = acc * (scale.reshape(channels) if scale.size > 1 else scale.reshape(()))
        out = self.y.type
        assert isinstance(out, TensorType)
        return (requantize(real / float(y_scale.reshape(())), y_zero, out.dtype),)


QUANTIZED_LINALG_OPS: list[type[GraphOp]] = [
    MatMulIntegerOp,
    QLinearMatMulOp,
    ConvIntegerOp,
    QLinearConvOp,
]
