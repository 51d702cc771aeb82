"""Vision ops driven by indices: MaxUnpool and Col2Im (the inverses of MaxPool with Indices
and of im2col), NonMaxSuppression, NonZero and the deprecated Scatter; part of
``VISION_OPS`` (:mod:`tilegraph.dialects.graph.vision`).

MaxUnpool's and Col2Im's window geometry is the conv ops'
(:mod:`tilegraph.dialects.graph.windows`); NonMaxSuppression's kernel is in
:mod:`tilegraph.dialects.graph.vision_kernels`. Results whose size depends on data
(NonMaxSuppression, NonZero of a run-time tensor) have an unknown dim. Facts: ND_OPAQUE,
host ops.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import prod
from typing import ClassVar, cast

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
from tilegraph.dialects.graph.base import GraphOp, ShapeError, int_attr, ints_attr, tensor_type
from tilegraph.dialects.graph.facts import ND_OPAQUE
from tilegraph.dialects.graph.indexing import ScatterElementsOp, _ScatterOp
from tilegraph.dialects.graph.operand_values import (
    INT64_ONLY,
    dim_product,
    ints_operand,
    known_value,
    required_ints,
    static_dim,
)
from tilegraph.dialects.graph.shape_utils import nd_result, require, require_equal_dims
from tilegraph.dialects.graph.vision_kernels import (
    check_shape,
    non_max_suppression,
    one_of,
    require_float,
)
from tilegraph.dialects.graph.windows import Axis, known, per_axis_ints, rank_at_least
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import UNKNOWN, Dim

_Slots = Sequence[SSAValue | None]
_Props = Mapping[str, Attribute]
_I64 = element_type_of("int64")


@irdl_op_definition
class MaxUnpoolOp(GraphOp):
    """ONNX MaxUnpool: a zero tensor with ``X``'s values at the flat positions ``I`` (the
    Indices output of MaxPool), of shape ``output_shape`` when given, else
    ``(in - 1) * stride - pads + kernel`` per spatial axis. As the spec says and onnxruntime
    does, the indices are positions in that output; onnx's reference reads them in the
    inferred shape and pads the result instead, which differs when ``output_shape`` does."""

    name = "graph.max_unpool"
    ONNX_OP: ClassVar = "MaxUnpool"
    X = operand_def(TensorType)
    I = operand_def(TensorType)  # noqa: E741
    output_shape = opt_operand_def(TensorType)
    output = result_def(TensorType)
    kernel_shape = ints_attr()
    pads = ints_attr()
    strides = ints_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE

    @classmethod
    def _inferred(cls, props: _Props, shape: Sequence[Dim]) -> list[Dim]:
        r = len(shape) - 2
        if not cls.read_attr(props, "kernel_shape"):
            raise ShapeError("kernel_shape is required")
        kernel = per_axis_ints(cls, props, "kernel_shape", r, 1, 1)
        pads = per_axis_ints(cls, props, "pads", 2 * r, 0, 0)
        strides = per_axis_ints(cls, props, "strides", r, 1, 1)
        spatial = [
            (d - 1) * s - (pads[i] + pads[r + i]) + k if known(d) else UNKNOWN
            for i, (d, s, k) in enumerate(zip(shape[2:], strides, kernel, strict=True))
        ]
        if any(known(d) and d < 1 for d in spatial):
            raise ShapeError(f"pads {pads} leave no output of {list(shape)} (spatial {spatial})")
        return [*shape[:2], *spatial]

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "X")
        idx = require(tensor_type(operands[1]), "I")
        rank_at_least(x, 3, "[N, C, spatial...]")
        check_shape(idx, x.origin_shape, "I")
        if idx.dtype not in INT64_ONLY:
            raise ShapeError(f"I must be int64, got {idx.element_type}")
        shape = cls._inferred(props, x.origin_shape)
        given = ints_operand(operands[2] if len(operands) > 2 else None, "output_shape")
        if given is not None:
            if given.length not in (None, x.rank):
                raise ShapeError(f"output_shape must have {x.rank} values")
            shape = [*shape[:2], *[UNKNOWN] * (x.rank - 2)]
            if given.values is not None:
                require_equal_dims(x.origin_shape[0], given.values[0], "output_shape batch")
                require_equal_dims(x.origin_shape[1], given.values[1], "output_shape channels")
                shape = list(given.values)
        return [nd_result(x, shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, idx, given = (list(inputs) + [None])[:3]
        assert x is not None and idx is not None
        shape = [int(d) for d in self._inferred(self.properties, list(x.shape))]
        if given is not None:
            shape = [int(d) for d in np.asarray(given).reshape(-1)]
        size = prod(shape)
        flat = np.asarray(idx, np.int64).reshape(-1)
        if flat.size and (flat.min() < 0 or flat.max() >= size):
            raise ValueError(f"MaxUnpool: an index is outside the output of shape {shape}")
        out = np.zeros(size, x.dtype)
        out[flat] = x.reshape(-1)
        return (out.reshape(shape),)


@irdl_op_definition
class Col2ImOp(GraphOp):
    """ONNX Col2Im: the blocks ``input`` ``[N, C * prod(block_shape), L]`` (one column per
    sliding-window position) summed back into an image ``[N, C, *image_shape]``, with
    ``dilations``, ``pads`` and ``strides`` as in Conv; known dims need constant
    ``image_shape`` / ``block_shape``."""

    name = "graph.col2im"
    ONNX_OP: ClassVar = "Col2Im"
    input = operand_def(TensorType)
    image_shape = operand_def(TensorType)
    block_shape = operand_def(TensorType)
    output = result_def(TensorType)
    dilations = ints_attr()
    pads = ints_attr()
    strides = ints_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE

    @classmethod
    def geometry(cls, props: _Props, image: Sequence[int], block: Sequence[int]) -> list[Axis]:
        """One window axis per image axis; ``out`` is the number of block positions."""
        r = len(image)
        dilations = per_axis_ints(cls, props, "dilations", r, 1, 1)
        pads = per_axis_ints(cls, props, "pads", 2 * r, 0, 0)
        strides = per_axis_ints(cls, props, "strides", r, 1, 1)
        axes = []
        for i, (n, k, s, d) in enumerate(zip(image, block, strides, dilations, strict=True)):
            span = n + pads[i] + pads[r + i] - (k - 1) * d - 1
            if k < 1 or span < 0:
                raise ShapeError(f"block {list(block)} does not fit the image {list(image)}")
            axes.append(Axis(n, k, s, d, pads[i], pads[r + i], span // s + 1))
        return axes

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        image = required_ints(operands[1], "image_shape")
        block = required_ints(operands[2], "block_shape")
        if x.rank != 3:
            raise ShapeError(f"input must be [N, C * prod(block_shape), L], got rank {x.rank}")
        if image.length is None or block.length != image.length:
            raise ShapeError("image_shape and block_shape must have one static length")
        n, cols, length = x.origin_shape
        channels: Dim = UNKNOWN
        if block.values is not None and known(cols):
            if cols % prod(block.values):
                raise ShapeError(f"{cols} columns are not a multiple of {list(block.values)}")
            channels = cols // prod(block.values)
        spatial: list[Dim] = [UNKNOWN] * image.length
        if image.values is not None:
            spatial = list(image.values)
            if block.values is not None:
                axes = cls.geometry(props, image.values, block.values)
                blocks = prod(int(a.out) for a in axes)
                if known(length) and length != blocks:
                    raise ShapeError(f"input has {length} blocks, the image holds {blocks}")
        return [nd_result(x, [n, channels, *spatial])]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, image_shape, block_shape = inputs
        assert x is not None and image_shape is not None and block_shape is not None
        image = [int(v) for v in image_shape.reshape(-1)]
        block = [int(v) for v in block_shape.reshape(-1)]
        axes = self.geometry(self.properties, image, block)
        n, c = x.shape[0], x.shape[1] // prod(block)
        blocks = [int(a.out) for a in axes]
        cols = x.reshape(n, c, *block, *blocks)
        sizes = (a.begin + size + a.end for a, size in zip(axes, image, strict=True))
        padded = np.zeros((n, c, *sizes), np.float64 if x.dtype.kind == "f" else x.dtype)
        for k in np.ndindex(*block):
            where = (a.taps(kk) for a, kk in zip(axes, k, strict=True))
            padded[(..., *where)] += cols[(slice(None), slice(None), *k)]
        crop = tuple(slice(a.begin, a.begin + n_) for a, n_ in zip(axes, image, strict=True))
        return (padded[(..., *crop)].astype(x.dtype),)


@irdl_op_definition
class NonMaxSuppressionOp(GraphOp):
    """ONNX NonMaxSuppression: per batch and class, the boxes by decreasing score (ties: the
    lower index first) above ``score_threshold`` (when given) that overlap no box kept
    before by an IoU above ``iou_threshold`` (default 0), at most
    ``max_output_boxes_per_class`` (default 0: none) — ``[selected, 3]`` int64 rows (batch,
    class, box); the count is data-dependent (an unknown dim)."""

    name = "graph.non_max_suppression"
    ONNX_OP: ClassVar = "NonMaxSuppression"
    boxes = operand_def(TensorType)
    scores = operand_def(TensorType)
    max_output_boxes_per_class = opt_operand_def(TensorType)
    iou_threshold = opt_operand_def(TensorType)
    score_threshold = opt_operand_def(TensorType)
    selected_indices = result_def(TensorType)
    center_point_box = int_attr()
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"center_point_box": 0}

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        boxes = require(tensor_type(operands[0]), "boxes")
        scores = require(tensor_type(operands[1]), "scores")
        one_of(cls, props, "center_point_box", (0, 1))
        if boxes.rank != 3 or scores.rank != 3:
            raise ShapeError("boxes must be [batch, boxes, 4] and scores [batch, classes, boxes]")
        b, n, _ = boxes.origin_shape
        check_shape(boxes, [b, n, 4], "boxes")
        check_shape(scores, [b, scores.origin_shape[1], n], "scores")
        require_float(boxes, "boxes")
        names = ("max_output_boxes_per_class", "iou_threshold", "score_threshold")
        for slot, what in enumerate(names, 2):
            t = tensor_type(operands[slot]) if slot < len(operands) else None
            if t is None:
                continue
            if t.rank > 1 or static_dim(dim_product(t.origin_shape)) not in (None, 1):
                raise ShapeError(f"{what} must hold one value, got shape {list(t.origin_shape)}")
            if slot == 2 and t.dtype not in INT64_ONLY:
                raise ShapeError(f"{what} must be int64, got {t.element_type}")
            if slot > 2:
                require_float(t, what)
        return [TensorType([UNKNOWN, 3], _I64)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        boxes, scores, limit, iou, threshold = (list(inputs) + [None] * 3)[:5]
        assert boxes is not None and scores is not None
        first = lambda a: np.asarray(a).reshape(-1)[0]  # noqa: E731
        most = max(int(first(limit)), 0) if limit is not None else 0
        iou_max = first(iou) if iou is not None else np.float32(0)
        score_min = first(threshold) if threshold is not None else None
        center = bool(self.attr("center_point_box"))
        return (non_max_suppression(boxes, scores, most, iou_max, score_min, center),)


@irdl_op_definition
class NonZeroOp(GraphOp):
    """ONNX NonZero: the indices of the non-zero elements, ``[rank, count]`` int64 in
    row-major order; the count is known for a constant input. A 0-D input is refused
    (onnx's reference gives ``[0, count]``, onnxruntime ``[1, count]``)."""

    name = "graph.non_zero"
    ONNX_OP: ClassVar = "NonZero"
    X = operand_def(TensorType)
    Y = result_def(TensorType)
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "X")
        if x.rank == 0:
            raise ShapeError("NonZero of a 0-D tensor is not supported")
        values = known_value(operands[0])
        count: Dim = UNKNOWN if values is None else int(np.count_nonzero(values))
        return [TensorType([x.rank, count], _I64)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        return (np.stack(np.nonzero(x)).astype(np.int64).reshape(x.ndim, -1),)


@irdl_op_definition
class ScatterOp(_ScatterOp):
    """ONNX Scatter (opset 9-10, deprecated in 11): ScatterElements without ``reduction``.
    The version converter turns the Scatter of a model below opset 18 into ScatterElements
    (this op's ``ONNX_OP`` lets the importer accept the model first); a Scatter node of a
    newer model becomes this op."""

    name = "graph.scatter"
    ONNX_OP: ClassVar = "Scatter"
    axis = int_attr()
    DEFAULTS: ClassVar = {"reduction": "none", "axis": 0}

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        return ScatterElementsOp.infer_shapes(operands, props)

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        # ScatterElements' kernel reads only what the two ops share (axis, combine)
        return ScatterElementsOp.reference(cast(ScatterElementsOp, self), *inputs)


INDEX_OPS: list[type[GraphOp]] = [
    MaxUnpoolOp,
    Col2ImOp,
    NonMaxSuppressionOp,
    NonZeroOp,
    ScatterOp,
]
