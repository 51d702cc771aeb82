"""Pooling graph ops: max_pool (and max_pool_with_indices), avg_pool, lp_pool,
global_avg_pool, global_max_pool.

ONNX opset-17 semantics and attribute names; absent attributes take ONNX defaults
(``DEFAULTS``; the per-axis defaults ``strides``/``dilations`` = 1, ``pads`` = 0 depend on the
rank and are filled in by the shape function). Window geometry is shared with the conv ops
(:mod:`tilegraph.dialects.graph.windows`).

Format roles follow the rank-generic rule of :mod:`tilegraph.dialects.graph.nn`: one op class
covers every rank ONNX allows, and the SENSITIVE ``data_format`` applies only when the input
has that format's rank; at any other rank (1-D pooling) the tensors are ND. The result of a
4-D pool is NCHW, of a 5-D pool NCDHW, otherwise ND.

Fusion kinds follow TVM: pools are OUT_ELEMWISE_FUSABLE (an elementwise epilogue fuses into
them).

Reference kernels: numpy, origin semantics; pooling accumulates over kernel offsets (one
strided view of the padded input per offset). float16 is computed in float32 and cast back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import reduce
from math import prod
from typing import ClassVar

import numpy as np
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
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
from tilegraph.dialects.graph.facts import FormatRole, FusionKind, KernelVariant, OpFacts
from tilegraph.dialects.graph.shape_utils import require
from tilegraph.dialects.graph.windows import (
    Axis,
    accumulator,
    nc_result,
    per_axis_ints,
    rank_at_least,
    window,
    window_kernel,
)
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format

F = Format

_POOL_FACTS = OpFacts(
    FormatRole.SENSITIVE,
    FusionKind.OUT_ELEMWISE_FUSABLE,
    data_format=F.NCHW,
    kernels=(
        KernelVariant((F.NC1HWC0,), (F.NC1HWC0,), "5hd"),
        # 3-D pooling (an NCDHW input: a 4-D one has no NDC1HWC0 storage)
        KernelVariant((F.NDC1HWC0,), (F.NDC1HWC0,), "ndc1hwc0"),
        KernelVariant((F.NCHW,), (F.NCHW,), "plain"),
        KernelVariant((F.ND,), (F.ND,), "plain_nd"),
    ),
)


class _PoolBase(GraphOp):
    """Sliding-window pooling of ``[N, C, *spatial]`` (any number of spatial axes)."""

    input = operand_def(TensorType)
    output = result_def(TensorType)
    auto_pad = str_attr()
    ceil_mode = int_attr()
    dilations = ints_attr()
    kernel_shape = ints_attr()
    pads = ints_attr()
    strides = ints_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar[OpFacts] = _POOL_FACTS

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        rank_at_least(x, 3, "[N, C, spatial...]")
        nb, c, *spatial = x.origin_shape
        kernel = window_kernel(cls, props, len(spatial), None)
        pads = per_axis_ints(cls, props, "pads", 2 * len(spatial), 0, 0)
        if any(p >= k for p, k in zip(pads, kernel + kernel, strict=True)):
            raise ShapeError(f"pads {pads} must be smaller than kernel_shape {kernel}")
        return [nc_result(x, [nb, c, *(a.out for a in window(cls, props, spatial, kernel))])]

    def _views(self, x: np.ndarray, fill: float | int):
        """The window geometry and one strided view of padded ``x`` per kernel offset that
        can touch the padded input (:meth:`Axis.reach`; the others would read ``fill``
        only, which changes no max and adds nothing to a sum)."""
        kernel = list(self.attr("kernel_shape"))
        axes = window(type(self), self.properties, x.shape[2:], kernel)
        reach = [a.reach() for a in axes]
        # ceil_mode's last window may reach past the end padding: pad that too
        ends = [
            max(a.end, a.taps(r - 1).stop - a.size - a.begin)
            for a, r in zip(axes, reach, strict=True)
        ]
        widths = [(0, 0), (0, 0), *((a.begin, e) for a, e in zip(axes, ends, strict=True))]
        xp = np.pad(x, widths, constant_values=fill)
        return axes, (xp[(..., *map(Axis.taps, axes, k))] for k in np.ndindex(*reach))


@irdl_op_definition
class MaxPoolOp(_PoolBase):
    """ONNX MaxPool, first output only (``storage_order`` only affects Indices and is kept
    for round trips); a model that uses Indices imports as ``graph.max_pool_with_indices``."""

    name = "graph.max_pool"
    ONNX_OP: ClassVar = "MaxPool"
    storage_order = int_attr()
    DEFAULTS: ClassVar = {"auto_pad": "NOTSET", "ceil_mode": 0, "storage_order": 0}

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        return (reduce(np.maximum, self._views(x, low)[1]).astype(x.dtype),)


@irdl_op_definition
class MaxPoolWithIndicesOp(_PoolBase):
    """ONNX MaxPool whose model uses the ``Indices`` output: int64 flat positions of the
    maxima in the input, ``(n * C + c) * prod(spatial)`` plus the position in the plane,
    row-major or, with ``storage_order = 1``, column-major; padding never counts and a tie
    goes to the first element in window order (onnx's reference and onnxruntime). The
    importer picks it when Indices is used; the compiler's rewrites and tile lowering know
    the one-result ``graph.max_pool``, so it runs as a host op (ND facts)."""

    name = "graph.max_pool_with_indices"
    ONNX_OP: ClassVar = "MaxPool"
    indices = result_def(TensorType)
    storage_order = int_attr()
    DEFAULTS: ClassVar = {"auto_pad": "NOTSET", "ceil_mode": 0, "storage_order": 0}
    FACTS: ClassVar[OpFacts] = OpFacts(FormatRole.ND_ONLY, FusionKind.OPAQUE)

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        (y,) = super().infer_shapes(operands, props)
        if cls.read_attr(props, "storage_order") not in (0, 1):
            raise ShapeError("storage_order must be 0 (row-major) or 1 (column-major)")
        return [y, TensorType(y.origin_shape, element_type_of("int64"), y.origin_format)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        spatial = x.shape[2:]
        axes = window(type(self), self.properties, spatial, list(self.attr("kernel_shape")))
        column_major = bool(self.attr("storage_order"))
        steps = [
            prod(spatial[:a]) if column_major else prod(spatial[a + 1 :])
            for a in range(len(spatial))
        ]
        low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        best = np.full((*x.shape[:2], *(int(a.out) for a in axes)), low, x.dtype)
        where = np.full(best.shape, -1, np.int64)  # -1: no element of the window seen yet
        for k in np.ndindex(*(a.reach() for a in axes)):  # the other offsets see padding
            pos = np.ix_(
                *(
                    np.arange(int(a.out)) * a.stride - a.begin + kk * a.dilation
                    for a, kk in zip(axes, k, strict=True)
                )
            )
            inside = reduce(
                np.logical_and, ((p >= 0) & (p < n) for p, n in zip(pos, spatial, strict=True))
            )
            pos = [np.clip(p, 0, n - 1) for p, n in zip(pos, spatial, strict=True)]
            value = x[(..., *pos)]
            take = inside & ((where < 0) | (value > best))
            best = np.where(take, value, best)
            where = np.where(take, sum(p * s for p, s in zip(pos, steps, strict=True)), where)
        planes = np.arange(x.shape[0] * x.shape[1]).reshape(best.shape[:2] + (1,) * len(axes))
        return best, np.where(where < 0, -1, planes * prod(spatial) + where)


@irdl_op_definition
class AvgPoolOp(_PoolBase):
    """ONNX AveragePool. ``count_include_pad`` counts the explicit pads but never the extra
    end positions of ceil_mode (onnxruntime's rule). ``dilations`` is the opset-19 attribute."""

    name = "graph.avg_pool"
    ONNX_OP: ClassVar = "AveragePool"
    count_include_pad = int_attr()
    DEFAULTS: ClassVar = {"auto_pad": "NOTSET", "ceil_mode": 0, "count_include_pad": 0}

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        axes, views = self._views(x.astype(accumulator(x.dtype)), 0)
        total = reduce(np.add, views)
        include = bool(self.attr("count_include_pad"))
        count = np.ones((), np.int64)  # the window is a product of per-axis ranges
        for a in axes:
            start = np.arange(a.out)[:, None] * a.stride - a.begin
            pos = start + np.arange(a.kernel) * a.dilation
            lo, hi = (-a.begin, a.size + a.end) if include else (0, a.size)
            count = np.multiply.outer(count, ((pos >= lo) & (pos < hi)).sum(axis=1))
        return ((total / np.maximum(count, 1)).astype(x.dtype),)


@irdl_op_definition
class LpPoolOp(_PoolBase):
    """ONNX LpPool: ``(sum |x|^p)^(1/p)`` over each window (padding counts as 0). No tile
    lowering: ND facts, so the format engine leaves it in its origin layout."""

    name = "graph.lp_pool"
    ONNX_OP: ClassVar = "LpPool"
    p = int_attr()
    DEFAULTS: ClassVar = {"auto_pad": "NOTSET", "ceil_mode": 0, "p": 2}
    FACTS: ClassVar[OpFacts] = OpFacts(FormatRole.ND_ONLY, FusionKind.OPAQUE)

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        p = int(self.attr("p"))
        _, views = self._views(np.abs(x.astype(np.float64)) ** p, 0)
        return ((reduce(np.add, views) ** (1 / p)).astype(x.dtype),)


class _GlobalPoolBase(GraphOp):
    """Pooling over all spatial axes: ``[N, C, *spatial] -> [N, C, 1, ...]``."""

    input = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    FACTS: ClassVar[OpFacts] = _POOL_FACTS

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        rank_at_least(x, 3, "[N, C, spatial...]")
        return [nc_result(x, [*x.origin_shape[:2], *[1] * (x.rank - 2)])]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        pool = np.max if self.ONNX_OP == "GlobalMaxPool" else np.mean
        y = pool(x.astype(accumulator(x.dtype)), axis=tuple(range(2, x.ndim)), keepdims=True)
        return (y.astype(x.dtype),)


@irdl_op_definition
class GlobalAvgPoolOp(_GlobalPoolBase):
    name = "graph.global_avg_pool"
    ONNX_OP: ClassVar = "GlobalAveragePool"


@irdl_op_definition
class GlobalMaxPoolOp(_GlobalPoolBase):
    name = "graph.global_max_pool"
    ONNX_OP: ClassVar = "GlobalMaxPool"


POOLING_OPS: list[type[GraphOp]] = [
    MaxPoolOp,
    MaxPoolWithIndicesOp,
    AvgPoolOp,
    GlobalAvgPoolOp,
    GlobalMaxPoolOp,
    LpPoolOp,
]
