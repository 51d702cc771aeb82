"""Ops that rearrange or summarise whole tensors: DepthToSpace, SpaceToDepth,
LpNormalization, Det, Unique, and the window generators (Hann, Hamming, Blackman).

Host ops on the tiled path; ND only (DepthToSpace/SpaceToDepth reinterpret NCHW channels,
so the format engine converts around them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure

from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.base import (
    GraphOp,
    ShapeError,
    constant_value,
    int_attr,
    ints_attr,
    str_attr,
    tensor_type,
)
from tilegraph.dialects.graph.elementwise import onnx_dtype_name
from tilegraph.dialects.graph.facts import ND_OPAQUE, FormatRole, FusionKind, OpFacts
from tilegraph.dialects.graph.shape_utils import nd_result, normalize_axis, require
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import UNKNOWN, Dim, is_unknown


def _apply(d: Dim, fn: Callable[[int], int]) -> Dim:
    """``fn`` of a static dim; an unknown or symbolic dim stays unknown (floor division of
    a symbol would need a divisibility guard)."""
    return fn(d) if isinstance(d, int) and d >= 0 else UNKNOWN


class _BlockOp(GraphOp):
    """DepthToSpace / SpaceToDepth on [N, C, H, W] with ``blocksize``."""

    input = operand_def(TensorType)
    output = result_def(TensorType)
    blocksize = int_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = OpFacts(role=FormatRole.ND_ONLY, fusion=FusionKind.INJECTIVE)

    @classmethod
    def block(cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]):
        x = require(tensor_type(operands[0]), "input")
        b = cls.read_attr(props, "blocksize")
        if x.rank != 4 or b is None or b < 1:
            raise ShapeError(f"{cls.ONNX_OP} takes a 4-D input and a positive blocksize")
        return x, int(b)


@irdl_op_definition
class DepthToSpaceOp(_BlockOp):
    """ONNX DepthToSpace, ``mode`` DCR (default) or CRD."""

    name = "graph.depth_to_space"
    ONNX_OP: ClassVar = "DepthToSpace"
    mode = str_attr()
    DEFAULTS: ClassVar = {"mode": "DCR"}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x, b = cls.block(operands, props)
        n, c, h, w = x.origin_shape
        if isinstance(c, int) and c % (b * b):
            raise ShapeError(f"channels {c} are not a multiple of blocksize² {b * b}")
        if cls.read_attr(props, "mode") not in ("DCR", "CRD"):
            raise ShapeError("mode must be DCR or CRD")
        grow = lambda d: UNKNOWN if is_unknown(d) else d * b  # noqa: E731
        return [nd_result(x, [n, _apply(c, lambda d: d // (b * b)), grow(h), grow(w)])]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        b = int(self.attr("blocksize"))
        n, c, h, w = x.shape
        if self.attr("mode") == "DCR":
            y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
        else:
            y = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
        return (y.reshape(n, c // (b * b), h * b, w * b),)


@irdl_op_definition
class SpaceToDepthOp(_BlockOp):
    """ONNX SpaceToDepth, ``mode`` DCR (default; the only order before SpaceToDepth-28) or
    CRD: the inverse of DepthToSpace in that mode."""

    name = "graph.space_to_depth"
    ONNX_OP: ClassVar = "SpaceToDepth"
    mode = str_attr()
    DEFAULTS: ClassVar = {"mode": "DCR"}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x, b = cls.block(operands, props)
        n, c, h, w = x.origin_shape
        if cls.read_attr(props, "mode") not in ("DCR", "CRD"):
            raise ShapeError("mode must be DCR or CRD")
        for d in (h, w):
            if isinstance(d, int) and d % b:
                raise ShapeError(f"spatial size {d} is not a multiple of blocksize {b}")
        shrink = lambda d: d // b  # noqa: E731
        depth = UNKNOWN if is_unknown(c) else c * b * b
        return [nd_result(x, [n, depth, _apply(h, shrink), _apply(w, shrink)])]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        b = int(self.attr("blocksize"))
        n, c, h, w = x.shape
        blocks = x.reshape(n, c, h // b, b, w // b, b)
        order = (0, 3, 5, 1, 2, 4) if self.attr("mode") == "DCR" else (0, 1, 3, 5, 2, 4)
        return (blocks.transpose(order).reshape(n, c * b * b, h // b, w // b),)


@irdl_op_definition
class LpNormalizationOp(GraphOp):
    """ONNX LpNormalization: ``x / ||x||_p`` along ``axis`` (p = 1 or 2); a zero norm
    gives 0."""

    name = "graph.lp_normalization"
    ONNX_OP: ClassVar = "LpNormalization"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axis = int_attr()
    p = int_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"axis": -1, "p": 2}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        normalize_axis(cls.read_attr(props, "axis"), x.rank)
        if cls.read_attr(props, "p") not in (1, 2):
            raise ShapeError("LpNormalization supports p = 1 and p = 2")
        return [nd_result(x, x.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        axis = int(self.attr("axis")) % x.ndim
        xf = x.astype(np.float64)
        norm = np.sum(np.abs(xf) ** int(self.attr("p")), axis=axis, keepdims=True) ** (
            1 / int(self.attr("p"))
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            y = np.where(norm == 0, 0.0, xf / np.where(norm == 0, 1, norm))
        return (y.astype(x.dtype),)


@irdl_op_definition
class DetOp(GraphOp):
    """ONNX Det: determinants of the trailing square matrices."""

    name = "graph.det"
    ONNX_OP: ClassVar = "Det"
    X = operand_def(TensorType)
    Y = result_def(TensorType)
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "X")
        if x.rank < 2:
            raise ShapeError("Det takes [..., M, M] matrices")
        return [nd_result(x, x.origin_shape[:-2])]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        return (np.asarray(np.linalg.det(x.astype(np.float64))).astype(x.dtype),)


@irdl_op_definition
class UniqueOp(GraphOp):
    """ONNX Unique: the distinct values (sorted, or in order of first occurrence with
    ``sorted = 0``) over the flattened input or along ``axis``, with their first indices,
    the inverse indices and the counts. The count is data-dependent: unknown dims unless
    the input is a constant."""

    name = "graph.unique"
    ONNX_OP: ClassVar = "Unique"
    X = operand_def(TensorType)
    Y = result_def(TensorType)
    indices = result_def(TensorType)
    inverse_indices = result_def(TensorType)
    counts = result_def(TensorType)
    axis = int_attr()
    sorted = int_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"sorted": 1}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "X")
        axis = cls.read_attr(props, "axis")
        i64 = element_type_of("int64")
        if axis is None:
            shape: list[Dim] = [UNKNOWN]
            along: Dim = x.num_elements() if x.is_static else UNKNOWN  # type: ignore[assignment]
        else:
            a = normalize_axis(axis, x.rank)
            shape = list(x.origin_shape)
            shape[a] = UNKNOWN
            along = x.origin_shape[a]
        return [
            nd_result(x, shape),
            TensorType([UNKNOWN], i64),
            TensorType([along], i64),
            TensorType([UNKNOWN], i64),
        ]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        axis = self.attr("axis")
        values, first, inverse, counts = np.unique(
            x, return_index=True, return_inverse=True, return_counts=True, axis=axis
        )
        inverse = np.asarray(inverse).reshape(-1)
        if not self.attr("sorted"):
            order = np.argsort(first, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            values = np.take(values, order, axis=0 if axis is None else axis)
            first, counts, inverse = first[order], counts[order], rank[inverse]
        return values, first.astype(np.int64), inverse.astype(np.int64), counts.astype(np.int64)


class _WindowOp(GraphOp):
    """A window of ``size`` points (a scalar input), ``periodic`` (default) or symmetric,
    in ``output_datatype`` (float32 by default)."""

    size = operand_def(TensorType)
    output = result_def(TensorType)
    periodic = int_attr()
    output_datatype = int_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"periodic": 1, "output_datatype": 1}
    COEFFICIENTS: ClassVar[tuple[float, ...]] = ()
    """``w[n] = sum_k (-1)^k a_k cos(2 pi k n / N)`` (the generalised cosine window)."""

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        size = constant_value(operands[0])
        length = int(np.asarray(size).reshape(-1)[0]) if size is not None else UNKNOWN
        elt = element_type_of(onnx_dtype_name(int(cls.read_attr(props, "output_datatype"))))
        return [TensorType([length], elt)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (size,) = inputs
        assert size is not None
        n = int(np.asarray(size).reshape(-1)[0])
        denominator = n if self.attr("periodic") else n - 1
        k = np.arange(n, dtype=np.float64)
        w = sum(
            (-1) ** i * a * np.cos(2 * np.pi * i * k / denominator)
            for i, a in enumerate(self.COEFFICIENTS)
        )
        out = self.output.type
        assert isinstance(out, TensorType)
        return (np.asarray(w).astype(out.dtype.numpy),)


@irdl_op_definition
class HannWindowOp(_WindowOp):
    """ONNX HannWindow."""

    name = "graph.hann_window"
    ONNX_OP: ClassVar = "HannWindow"
    COEFFICIENTS: ClassVar = (0.5, 0.5)


@irdl_op_definition
class HammingWindowOp(_WindowOp):
    """ONNX HammingWindow (a0 = 25/46)."""

    name = "graph.hamming_window"
    ONNX_OP: ClassVar = "HammingWindow"
    COEFFICIENTS: ClassVar = (25 / 46, 1 - 25 / 46)


@irdl_op_definition
class BlackmanWindowOp(_WindowOp):
    """ONNX BlackmanWindow."""

    name = "graph.blackman_window"
    ONNX_OP: ClassVar = "BlackmanWindow"
    COEFFICIENTS: ClassVar = (0.42, 0.5, 0.08)


@irdl_op_definition
class CenterCropPadOp(GraphOp):
    """ONNX CenterCropPad: each of ``axes`` (default all) cropped to ``shape`` around the
    centre (the window starts rounded down) or zero-padded to it (an odd extra pixel on the
    right)."""

    name = "graph.center_crop_pad"
    ONNX_OP: ClassVar = "CenterCropPad"
    input_data = operand_def(TensorType)
    shape = operand_def(TensorType)
    output_data = result_def(TensorType)
    axes = ints_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input_data")
        given = cls.read_attr(props, "axes")
        axes = list(range(x.rank)) if given is None else [normalize_axis(a, x.rank) for a in given]
        target = constant_value(operands[1])
        out: list[Dim] = list(x.origin_shape)
        for i, a in enumerate(axes):
            out[a] = int(np.asarray(target).reshape(-1)[i]) if target is not None else UNKNOWN
        return [nd_result(x, out)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, target = inputs
        assert x is not None and target is not None
        axes = [a % x.ndim for a in (self.attr("axes") or range(x.ndim))]
        y = x
        for a, size in zip(axes, np.asarray(target).reshape(-1), strict=True):
            n, size = y.shape[a], int(size)
            if size <= n:
                y = np.take(y, np.arange((n - size) // 2, (n - size) // 2 + size), axis=a)
            else:
                pad = [(0, 0)] * y.ndim
                pad[a] = ((size - n) // 2, size - n - (size - n) // 2)
                y = np.pad(y, pad)
        return (np.asarray(y, order="C"),)


REARRANGE_OPS: list[type[GraphOp]] = [
    CenterCropPadOp,
    DepthToSpaceOp,
    SpaceToDepthOp,
    LpNormalizationOp,
    DetOp,
    UniqueOp,
    HannWindowOp,
    HammingWindowOp,
    BlackmanWindowOp,
]
