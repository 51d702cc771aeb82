"""Resize (opset 18+ form; Upsample models arrive converted to it).

Resizing is separable: every resized axis gets an interpolation matrix ``W[out, in]``
(:func:`axis_weights`) built from the coordinate transformation, the mode (nearest, linear,
cubic), antialiasing and ``exclude_outside``, and the axes are resized one after another.
Neighbours outside the input take the edge value (ONNX's reference pads by replication)
unless ``exclude_outside`` drops them; with ``tf_crop_and_resize`` an output whose source
coordinate lies outside the input gets ``extrapolation_value``.

Facts: ND_ONLY — Resize interprets the spatial axes, so the format engine converts layouts
around it rather than guess a storage-format kernel. On the tiled path a nearest resize is
a vector kernel (:mod:`tilegraph.lowering.conversion.tiling.resize`); linear and cubic stay
on the host.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

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

from tilegraph.dialects.graph.base import (
    GraphOp,
    ShapeError,
    constant_value,
    float_attr,
    int_attr,
    ints_attr,
    str_attr,
    tensor_type,
)
from tilegraph.dialects.graph.facts import ND_OPAQUE
from tilegraph.dialects.graph.operand_values import known_value
from tilegraph.dialects.graph.shape_utils import nd_result, normalize_axis, require
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import UNKNOWN, Dim

MODES = ("nearest", "linear", "cubic")
TRANSFORMS = (
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_crop_and_resize",
)
NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
POLICIES = ("stretch", "not_larger", "not_smaller")


def _round_half_up(x: float) -> int:
    return int(math.floor(x + 0.5))


def output_sizes(
    in_shape: Sequence[int],
    axes: Sequence[int],
    scales: np.ndarray | None,
    sizes: np.ndarray | None,
    roi: np.ndarray | None,
    policy: str,
    transform: str,
) -> tuple[list[int], list[float]]:
    """(output dims, scale per resized axis) of a Resize with constant scales or sizes.
    ``roi`` sizes the output only under ``tf_crop_and_resize`` (``transform``); exporters
    pass a placeholder roi otherwise (Paddle2ONNX: eight ones), which ONNX ignores."""
    out, used = list(in_shape), []
    if sizes is not None and sizes.size:
        ratios = [float(s) / in_shape[a] for s, a in zip(sizes, axes, strict=True)]
        if policy != "stretch":
            pick = min(ratios) if policy == "not_larger" else max(ratios)
            ratios = [pick] * len(axes)
            for a, r in zip(axes, ratios, strict=True):
                out[a] = _round_half_up(r * in_shape[a])
        else:
            for a, s in zip(axes, sizes, strict=True):
                out[a] = int(s)
        return out, ratios
    assert scales is not None
    for i, (a, s) in enumerate(zip(axes, scales, strict=True)):
        span = 1.0
        if roi is not None and roi.size and transform == "tf_crop_and_resize":
            span = float(roi[len(axes) + i] - roi[i])
        out[a] = int(math.floor(in_shape[a] * span * float(s)))
        used.append(float(s))
    return out, used


def _source(
    x: np.ndarray, n_in: int, n_out: int, scale: float, mode: str, roi: tuple[float, float]
) -> np.ndarray:
    """ONNX's coordinate transformation: output positions -> input coordinates. As in onnx's
    reference, ``width`` — the output length before truncation, ``scale * n_in`` — is what
    align_corners, pytorch_half_pixel and tf_crop_and_resize divide by."""
    width = scale * n_in
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        center = n_in / 2
        return center * (1 - n_out / width) + (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if width != 1 else np.full_like(x, -0.5)
    if mode == "align_corners":
        return x * (n_in - 1) / (width - 1) if width != 1 else np.zeros_like(x)
    if mode == "asymmetric":
        return x / scale
    start, end = roi
    if width == 1:
        return np.full_like(x, (end - start) * (n_in - 1) / 2 + start * (n_in - 1))
    return x * (end - start) * (n_in - 1) / (width - 1) + start * (n_in - 1)


def _cubic(t: np.ndarray, a: float) -> np.ndarray:
    t = np.abs(t)
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


def axis_weights(
    n_in: int, n_out: int, scale: float, attrs: Mapping[str, Any], roi: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """``W[out, in]`` resizing one axis, and the outputs whose source lies outside the input
    (only reported for ``tf_crop_and_resize``, which fills them with the extrapolation value)."""
    mode, transform = str(attrs["mode"]), str(attrs["coordinate_transformation_mode"])
    src = _source(np.arange(n_out, dtype=np.float64), n_in, n_out, scale, transform, roi)
    outside = np.zeros(n_out, bool)
    if transform == "tf_crop_and_resize":
        outside = (src < 0) | (src > n_in - 1)
    w = np.zeros((n_out, n_in))
    if mode == "nearest":
        rule = str(attrs["nearest_mode"])
        if rule == "round_prefer_floor":
            idx = np.ceil(src - 0.5)
        elif rule == "round_prefer_ceil":
            idx = np.floor(src + 0.5)
        elif rule == "floor":
            idx = np.floor(src)
        else:
            idx = np.ceil(src)
        w[np.arange(n_out), np.clip(idx, 0, n_in - 1).astype(np.int64)] = 1.0
        return w, outside
    radius = 1 if mode == "linear" else 2  # the kernel's half-width at scale 1
    stretch = min(scale, 1.0) if attrs["antialias"] else 1.0
    start = int(math.floor(-radius / stretch) + 1)
    base = np.floor(src).astype(np.int64)
    offsets = np.arange(start, 2 - start)  # ONNX's footprint around floor(src)
    taps = base[:, None] + offsets[None, :]
    t = (offsets[None, :] - (src - base)[:, None]) * stretch
    if mode == "linear":
        coef = np.clip(1 - np.abs(t), 0, None)
    else:
        coef = _cubic(t, float(attrs["cubic_coeff_a"]))
    inside = (taps >= 0) & (taps < n_in)
    if attrs["exclude_outside"]:
        coef = np.where(inside, coef, 0.0)
    total = coef.sum(axis=1, keepdims=True)
    coef = coef / np.where(total == 0, 1, total)
    for j in range(taps.shape[1]):
        np.add.at(w, (np.arange(n_out), np.clip(taps[:, j], 0, n_in - 1)), coef[:, j])
    return w, outside


@irdl_op_definition
class ResizeOp(GraphOp):
    """ONNX Resize (opset 18-19 form): nearest / linear / cubic over the ``axes`` (default
    all), every coordinate transformation and nearest mode, antialias, exclude_outside,
    keep_aspect_ratio_policy, and roi with ``tf_crop_and_resize``. The output dims are known
    when ``scales`` / ``sizes`` are constants; integer tensors are rounded back."""

    name = "graph.resize"
    ONNX_OP: ClassVar = "Resize"
    X = operand_def(TensorType)
    roi = opt_operand_def(TensorType)
    scales = opt_operand_def(TensorType)
    sizes = opt_operand_def(TensorType)
    Y = result_def(TensorType)
    mode = str_attr()
    coordinate_transformation_mode = str_attr()
    nearest_mode = str_attr()
    cubic_coeff_a = float_attr()
    exclude_outside = int_attr()
    extrapolation_value = float_attr()
    antialias = int_attr()
    axes = ints_attr()
    keep_aspect_ratio_policy = str_attr()
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {
        "mode": "nearest",
        "coordinate_transformation_mode": "half_pixel",
        "nearest_mode": "round_prefer_floor",
        "cubic_coeff_a": -0.75,
        "exclude_outside": 0,
        "extrapolation_value": 0.0,
        "antialias": 0,
        "keep_aspect_ratio_policy": "stretch",
    }

    @classmethod
    def _axes(cls, props: Mapping[str, Attribute], rank: int) -> list[int]:
        given = cls.read_attr(props, "axes")
        return list(range(rank)) if given is None else [normalize_axis(a, rank) for a in given]

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "X")
        for attr, allowed in (
            ("mode", MODES),
            ("coordinate_transformation_mode", TRANSFORMS),
            ("nearest_mode", NEAREST),
            ("keep_aspect_ratio_policy", POLICIES),
        ):
            if cls.read_attr(props, attr) not in allowed:
                raise ShapeError(f"{attr} must be one of {', '.join(allowed)}")
        axes = cls._axes(props, x.rank)
        slots = (list(operands) + [None] * 4)[:4]
        scales, sizes = constant_value(slots[2]), known_value(slots[3])
        scales = None if scales is not None and scales.size == 0 else scales
        sizes = None if sizes is not None and sizes.size == 0 else sizes
        given = [
            t for v in slots[2:4] if (t := tensor_type(v)) is not None and t.origin_shape != (0,)
        ]  # noqa: E501
        if len(given) != 1:
            raise ShapeError("Resize needs exactly one of 'scales' and 'sizes'")
        in_shape = x.origin_shape
        if (scales is None and sizes is None) or not all(
            isinstance(d, int) and d >= 0 for d in in_shape
        ):
            shape: list[Dim] = [UNKNOWN if i in axes else d for i, d in enumerate(in_shape)]
            return [nd_result(x, shape)]
        roi = constant_value(slots[1]) if slots[1] is not None else None
        policy = str(cls.read_attr(props, "keep_aspect_ratio_policy"))
        transform = str(cls.read_attr(props, "coordinate_transformation_mode"))
        out, _ = output_sizes(
            [int(d) for d in in_shape], axes, scales, sizes, roi, policy, transform
        )  # type: ignore[arg-type]
        return [nd_result(x, out)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, roi, scales, sizes = (list(inputs) + [None] * 4)[:4]
        assert x is not None
        axes = [a % x.ndim for a in (self.attr("axes") or range(x.ndim))]
        scales = None if scales is None or scales.size == 0 else np.asarray(scales)
        sizes = None if sizes is None or sizes.size == 0 else np.asarray(sizes)
        policy = str(self.attr("keep_aspect_ratio_policy"))
        transform = str(self.attr("coordinate_transformation_mode"))
        out, ratios = output_sizes(list(x.shape), axes, scales, sizes, roi, policy, transform)
        attrs = {name: self.attr(name) for name in self.DEFAULTS}
        y = x.astype(np.float64)
        outside = np.zeros(out, bool)
        for i, (axis, scale) in enumerate(zip(axes, ratios, strict=True)):
            span = (0.0, 1.0)
            if roi is not None and roi.size:
                span = (float(roi[i]), float(roi[len(axes) + i]))
            w, away = axis_weights(x.shape[axis], out[axis], scale, attrs, span)
            y = np.moveaxis(np.tensordot(w, y, axes=([1], [axis])), 0, axis)
            view = [1] * x.ndim
            view[axis] = out[axis]
            outside = outside | away.reshape(view)
        y = np.where(outside, float(self.attr("extrapolation_value")), y)
        if x.dtype.kind in "iu":
            info = np.iinfo(x.dtype)
            y = np.clip(np.rint(y), info.min, info.max)
        return (y.astype(x.dtype),)


SPATIAL_OPS: list[type[GraphOp]] = [ResizeOp]
