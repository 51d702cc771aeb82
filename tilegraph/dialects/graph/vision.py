"""Vision ops that sample a tensor at computed positions: GridSample, AffineGrid,
DeformConv, RoiAlign and the deprecated Upsample. ``VISION_OPS`` also lists the index-driven
ops of :mod:`tilegraph.dialects.graph.vision_index` (MaxUnpool, Col2Im, NonMaxSuppression,
NonZero, Scatter).

The numpy kernels (taps, padding modes, RoiAlign's bins) and the shape checks the vision ops
share are in :mod:`tilegraph.dialects.graph.vision_kernels`; DeformConv's window geometry is
the conv ops' (:mod:`tilegraph.dialects.graph.windows`), Upsample's interpolation Resize's
(:func:`tilegraph.dialects.graph.spatial.axis_weights`).

Facts: ND_OPAQUE — these ops interpret their axes themselves and have no tile lowering, so
the format engine converts layouts around them and they run as host ops.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import prod
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import ArrayAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
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
from tilegraph.dialects.graph.facts import ND_OPAQUE, OpCost
from tilegraph.dialects.graph.operand_values import (
    INT64_ONLY,
    dim_product,
    required_ints,
)
from tilegraph.dialects.graph.shape_utils import nd_result, require, require_equal_dims
from tilegraph.dialects.graph.spatial import axis_weights
from tilegraph.dialects.graph.vision_index import INDEX_OPS
from tilegraph.dialects.graph.vision_kernels import (
    PADDING_MODES,
    SAMPLING_MODES,
    affine_grid,
    bilinear_zeros,
    check_shape,
    grid_sample,
    one_of,
    require_float,
    roi_align,
)
from tilegraph.dialects.graph.windows import (
    known,
    rank_at_least,
    window,
    window_kernel,
)
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import UNKNOWN, Dim, dims_compatible

_Slots = Sequence[SSAValue | None]
_Props = Mapping[str, Attribute]


@irdl_op_definition
class GridSampleOp(GraphOp):
    """ONNX GridSample (GridSample-16's names bilinear/bicubic and GridSample-20's
    linear/cubic, any number of spatial axes): ``X`` ``[N, C, *S]`` read at ``grid``
    ``[N, *O, r]`` (normalised coordinates, x first) gives ``[N, C, *O]``; ``padding_mode``
    zeros / border / reflection; nearest rounds half to even and copies elements of any type,
    linear and cubic take floating-point ``X``."""

    name = "graph.grid_sample"
    ONNX_OP: ClassVar = "GridSample"
    X = operand_def(TensorType)
    grid = operand_def(TensorType)
    Y = result_def(TensorType)
    align_corners = int_attr()
    mode = str_attr()
    padding_mode = str_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"align_corners": 0, "mode": "linear", "padding_mode": "zeros"}

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "X")
        g = require(tensor_type(operands[1]), "grid")
        rank_at_least(x, 3, "[N, C, spatial...]")
        mode = SAMPLING_MODES[one_of(cls, props, "mode", tuple(SAMPLING_MODES))]
        one_of(cls, props, "padding_mode", PADDING_MODES)
        one_of(cls, props, "align_corners", (0, 1))
        require_float(g, "grid")
        if mode != "nearest":
            require_float(x, f"X of a {mode} GridSample")
        r = x.rank - 2
        if g.rank != x.rank or not dims_compatible(g.origin_shape[-1], r):
            raise ShapeError(f"grid must have shape [N, *out, {r}] for a {x.rank}-D X")
        require_equal_dims(x.origin_shape[0], g.origin_shape[0], "GridSample batch")
        return [nd_result(x, [g.origin_shape[0], x.origin_shape[1], *g.origin_shape[1:-1]])]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, g = inputs
        assert x is not None and g is not None
        mode = SAMPLING_MODES[str(self.attr("mode"))]
        padding, align = str(self.attr("padding_mode")), bool(self.attr("align_corners"))
        return (grid_sample(x, g, mode, padding, align),)

    def cost(self) -> OpCost:
        """Two flops per tap of every output element (2, 4 taps per axis; 1 for nearest)."""
        base = super().cost()
        taps = {"nearest": 1, "linear": 2, "cubic": 4}[SAMPLING_MODES[str(self.attr("mode"))]]
        x = self.X.type
        assert isinstance(x, TensorType)
        return OpCost(flops=2 * base.flops * taps ** (x.rank - 2), bytes=base.bytes)


@irdl_op_definition
class AffineGridOp(GraphOp):
    """ONNX AffineGrid: the normalised sampling grid ``[N, H, W, 2]`` (``[N, D, H, W, 3]``)
    of the affine maps ``theta`` ``[N, 2, 3]`` (``[N, 3, 4]``) for an output of ``size``
    ``[N, C, H, W]`` (``[N, C, D, H, W]``); the spatial dims are known when ``size`` is."""

    name = "graph.affine_grid"
    ONNX_OP: ClassVar = "AffineGrid"
    theta = operand_def(TensorType)
    size = operand_def(TensorType)
    grid = result_def(TensorType)
    align_corners = int_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"align_corners": 0}

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        theta = require(tensor_type(operands[0]), "theta")
        one_of(cls, props, "align_corners", (0, 1))
        require_float(theta, "theta")
        r = theta.origin_shape[1] if theta.rank == 3 else None
        if not isinstance(r, int) or r not in (2, 3):
            raise ShapeError(f"theta must be [N, 2, 3] or [N, 3, 4], got {theta.origin_shape}")
        if not dims_compatible(theta.origin_shape[2], r + 1):
            raise ShapeError(f"theta must be [N, 2, 3] or [N, 3, 4], got {theta.origin_shape}")
        size = required_ints(operands[1], "size")
        if size.length not in (None, r + 2):
            raise ShapeError(f"size must have {r + 2} values for a theta of {theta.origin_shape}")
        n = theta.origin_shape[0]
        spatial: list[Dim] = [UNKNOWN] * r
        if size.values is not None:
            require_equal_dims(n, size.values[0], "AffineGrid batch (theta and size)")
            if any(d < 1 for d in size.values[2:]):
                raise ShapeError(f"size {list(size.values)} has an empty spatial dim")
            spatial = list(size.values[2:])
        return [nd_result(theta, [n, *spatial, r])]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        theta, size = inputs
        assert theta is not None and size is not None
        dims = [int(d) for d in np.asarray(size).reshape(-1)]
        if dims[0] != theta.shape[0]:
            raise ValueError(f"AffineGrid: size {dims} does not match theta {theta.shape}")
        return (affine_grid(theta, dims[2:], bool(self.attr("align_corners"))),)


@irdl_op_definition
class DeformConvOp(GraphOp):
    """ONNX DeformConv: a grouped convolution whose kernel taps are moved by ``offset``
    ``[N, offset_group * prod(kernel) * r, *out]`` (per offset group, kernel tap and axis:
    dy, dx, ...), sampled bilinearly (zero outside ``X``) and scaled by ``mask`` (default 1);
    any number of spatial axes."""

    name = "graph.deform_conv"
    ONNX_OP: ClassVar = "DeformConv"
    X = operand_def(TensorType)
    W = operand_def(TensorType)
    offset = operand_def(TensorType)
    B = opt_operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    Y = result_def(TensorType)
    dilations = ints_attr()
    group = int_attr()
    kernel_shape = ints_attr()
    offset_group = int_attr()
    pads = ints_attr()
    strides = ints_attr()
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"group": 1, "offset_group": 1, "auto_pad": "NOTSET", "ceil_mode": 0}
    """``auto_pad`` / ``ceil_mode`` are not DeformConv attributes: the conv window geometry
    (:func:`~tilegraph.dialects.graph.windows.window`) reads them as NOTSET / 0."""

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "X")
        w = require(tensor_type(operands[1]), "W")
        rank_at_least(x, 3, "[N, C, spatial...]")
        require_float(x, "X")
        if w.rank != x.rank:
            raise ShapeError(f"W must have rank {x.rank}, got {w.rank}")
        n, c, *spatial = x.origin_shape
        m, cg, *wk = w.origin_shape
        r = len(spatial)
        kernel = window_kernel(cls, props, r, wk)
        group, og = int(cls.read_attr(props, "group")), int(cls.read_attr(props, "offset_group"))
        if group < 1 or og < 1:
            raise ShapeError("group and offset_group must be positive")
        if known(c) and ((known(cg) and c != cg * group) or c % og):
            raise ShapeError(
                f"{c} input channels do not fit W's {cg} per group x group {group} "
                f"or offset_group {og}"
            )
        if known(m) and m % group:
            raise ShapeError(f"{m} output channels are not a multiple of group {group}")
        out = [a.out for a in window(cls, props, spatial, kernel)]
        taps = dim_product([og, *kernel])
        check_shape(require(tensor_type(operands[2]), "offset"),
                     [n, dim_product([taps, r]), *out], "offset")  # fmt: skip
        b, mask = (tensor_type(v) for v in (list(operands) + [None, None])[3:5])
        if b is not None:
            check_shape(b, [m], "B")
        if mask is not None:
            check_shape(mask, [n, taps, *out], "mask")
        return [nd_result(x, [n, m, *out])]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, w, offset, b, mask = (list(inputs) + [None, None])[:5]
        assert x is not None and w is not None and offset is not None
        (n, c, *spatial), (m, cg, *kernel) = x.shape, w.shape
        r, k = len(spatial), prod(kernel)
        group, og = int(self.attr("group")), int(self.attr("offset_group"))
        axes = window(type(self), self.properties, spatial, kernel)
        out = [int(a.out) for a in axes]
        shifts = offset.reshape(n, og, k, r, *out).astype(np.float64)
        taps = np.indices(kernel).reshape(r, k)
        of_channel = np.arange(c) // (c // og)  # the offset group of each input channel
        coords = []
        for d, a in enumerate(axes):
            view = [1] * r
            view[d] = -1
            start = (np.arange(out[d]) * a.stride - a.begin).reshape(view)
            kpos = (taps[d] * a.dilation).reshape(-1, *[1] * r)
            coords.append((start + kpos + shifts[:, :, :, d])[:, of_channel])  # [N, C, K, *O]
        samples = bilinear_zeros(x, coords)
        if mask is not None:
            samples = samples * mask.reshape(n, og, k, *out)[:, of_channel]
        grouped = samples.reshape(n, group, cg, k, *out)
        weights = w.astype(np.float64).reshape(group, m // group, cg, k)
        y = np.einsum("ngck...,gmck->ngm...", grouped, weights).reshape(n, m, *out)
        if b is not None:
            y = y + b.astype(np.float64).reshape(1, m, *[1] * r)
        return (y.astype(x.dtype),)

    def cost(self) -> OpCost:
        """A convolution's multiply-adds plus a bilinear sample (8 flops) per kernel tap of
        every input channel and output position."""
        y, w = self.Y.type, self.W.type
        assert isinstance(y, TensorType) and isinstance(w, TensorType)
        outs, weights = y.num_elements(), w.num_elements()
        base = super().cost()
        if outs is None or weights is None:
            return base
        per_out = weights // max(int(y.origin_shape[1]), 1)  # (C / group) * prod(kernel)
        return OpCost(flops=outs * per_out * (2 + 8), bytes=base.bytes)


@irdl_op_definition
class RoiAlignOp(GraphOp):
    """ONNX RoiAlign (RoiAlign-16; opset-10 models arrive with ``output_half_pixel``): each
    box of ``rois`` ``[R, 4]`` (x1, y1, x2, y2, scaled by ``spatial_scale``) on the map
    ``batch_indices[r]`` of ``X`` ``[N, C, H, W]`` pooled to ``[output_height,
    output_width]`` bins of ``sampling_ratio`` (0: adaptive) bilinear samples, averaged
    (``mode`` avg) or maximised (max: onnxruntime's largest weighted corner)."""

    name = "graph.roi_align"
    ONNX_OP: ClassVar = "RoiAlign"
    X = operand_def(TensorType)
    rois = operand_def(TensorType)
    batch_indices = operand_def(TensorType)
    Y = result_def(TensorType)
    coordinate_transformation_mode = str_attr()
    mode = str_attr()
    output_height = int_attr()
    output_width = int_attr()
    sampling_ratio = int_attr()
    spatial_scale = float_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {
        "coordinate_transformation_mode": "half_pixel",
        "mode": "avg",
        "output_height": 1,
        "output_width": 1,
        "sampling_ratio": 0,
        "spatial_scale": 1.0,
    }

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "X")
        rois = require(tensor_type(operands[1]), "rois")
        idx = require(tensor_type(operands[2]), "batch_indices")
        one_of(cls, props, "coordinate_transformation_mode", ("half_pixel", "output_half_pixel"))
        one_of(cls, props, "mode", ("avg", "max"))
        if x.rank != 4:
            raise ShapeError(f"X must be [N, C, H, W], got rank {x.rank}")
        require_float(x, "X")
        if rois.element_type != x.element_type:
            raise ShapeError("rois must have the element type of X")
        n_rois = rois.origin_shape[0] if rois.rank == 2 else UNKNOWN
        check_shape(rois, [n_rois, 4], "rois")
        check_shape(idx, [n_rois], "batch_indices")
        if idx.dtype not in INT64_ONLY:
            raise ShapeError(f"batch_indices must be int64, got {idx.element_type}")
        oh, ow = (int(cls.read_attr(props, a)) for a in ("output_height", "output_width"))
        if oh < 1 or ow < 1 or int(cls.read_attr(props, "sampling_ratio")) < 0:
            raise ShapeError("output_height/output_width must be >= 1, sampling_ratio >= 0")
        return [nd_result(x, [n_rois, x.origin_shape[1], oh, ow])]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, rois, idx = inputs
        assert x is not None and rois is not None and idx is not None
        if idx.size and (idx.min() < 0 or idx.max() >= x.shape[0]):
            raise ValueError(f"RoiAlign: batch_indices {idx} out of range for {x.shape[0]} maps")
        return (
            roi_align(
                x,
                rois,
                idx,
                (int(self.attr("output_height")), int(self.attr("output_width"))),
                int(self.attr("sampling_ratio")),
                float(self.attr("spatial_scale")),
                self.attr("coordinate_transformation_mode") == "half_pixel",
                str(self.attr("mode")),
            ),
        )


@irdl_op_definition
class UpsampleOp(GraphOp):
    """ONNX Upsample (7/9/10, deprecated): Resize with the ``asymmetric`` coordinate mapping
    (``x_in = x_out / scale``), ``nearest`` taking the floor or ``linear`` clamped at the
    edges, each output dim ``floor(dim * scale)``; ``scales`` (>= 1, one per axis) is the
    attribute of Upsample-7 or the input of Upsample-9. Linear needs floating-point ``X``."""

    name = "graph.upsample"
    ONNX_OP: ClassVar = "Upsample"
    X = operand_def(TensorType)
    scale_factors = opt_operand_def(TensorType)
    Y = result_def(TensorType)
    mode = str_attr()
    scales = opt_prop_def(ArrayAttr)
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"mode": "nearest"}

    @classmethod
    def _scales(cls, operands: _Slots, props: _Props, rank: int) -> list[float] | None:
        given = cls.read_attr(props, "scales")
        operand = operands[1] if len(operands) > 1 else None
        if (given is None) == (operand is None):
            raise ShapeError("Upsample needs its scales as the attribute (7) or the input (9)")
        if given is None:
            require_float(require(tensor_type(operand), "scales"), "scales")
            values = constant_value(operand)
            if values is None:
                return None
            given = np.asarray(values).reshape(-1).tolist()
        scales = [float(s) for s in given]
        if len(scales) != rank or any(s < 1 for s in scales):
            raise ShapeError(f"Upsample scales {scales} must be {rank} values >= 1")
        return scales

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "X")
        if one_of(cls, props, "mode", ("nearest", "linear")) == "linear":
            require_float(x, "X of a linear Upsample")
        scales = cls._scales(operands, props, x.rank)
        if scales is None:
            return [nd_result(x, [UNKNOWN] * x.rank)]
        shape = [
            int(d * s) if known(d) else UNKNOWN for d, s in zip(x.origin_shape, scales, strict=True)
        ]
        return [nd_result(x, shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, factors = (list(inputs) + [None])[:2]
        assert x is not None
        given = self.attr("scales")
        scales = np.asarray(factors if given is None else given, np.float64).reshape(-1)
        attrs = {
            "mode": self.attr("mode"),
            "coordinate_transformation_mode": "asymmetric",
            "nearest_mode": "floor",
            "antialias": 0,
            "exclude_outside": 0,
        }
        y = x
        for axis, scale in enumerate(scales):
            if scale != 1:
                size = int(x.shape[axis] * scale)
                w, _ = axis_weights(x.shape[axis], size, float(scale), attrs, (0.0, 1.0))
                y = np.moveaxis(np.tensordot(w, y, axes=([1], [axis])), 0, axis)
        return (y.astype(x.dtype),)


VISION_OPS: list[type[GraphOp]] = [
    GridSampleOp,
    AffineGridOp,
    DeformConvOp,
    RoiAlignOp,
    UpsampleOp,
    *INDEX_OPS,
]
