"""Indexing ops: GatherElements, GatherND, ScatterElements, ScatterND, TopK, OneHot,
Compress, ReverseSequence, Einsum.

Indices are checked against their axis (negative ones count from the end; anything out of
range is an error, never a wrap). Data-dependent result sizes (Compress with a run-time
condition, TopK with a run-time k) are unknown dims. Host ops on the tiled path; ND only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure

from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.base import (
    GraphOp,
    ShapeError,
    constant_value,
    int_attr,
    shape_text,
    shapes_compatible,
    str_attr,
    tensor_type,
)
from tilegraph.dialects.graph.facts import ND_OPAQUE, FormatRole, FusionKind, OpFacts
from tilegraph.dialects.graph.operand_values import INT32_OR_64, static_dim
from tilegraph.dialects.graph.shape_utils import (
    broadcast_shapes,
    nd_result,
    normalize_axis,
    require,
)
from tilegraph.dialects.graph.windows import known
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import UNKNOWN, Dim


def checked_indices(indices: np.ndarray, size: int, what: str) -> np.ndarray:
    """ONNX indices into an axis of ``size``: negative ones count from the end; anything
    outside ``[-size, size)`` is an error (never a silent wrap)."""
    if indices.size and (indices.min() < -size or indices.max() >= size):
        bad = int(indices.min() if indices.min() < -size else indices.max())
        raise ShapeError(f"{what}: index {bad} is out of range for an axis of size {size}")
    return np.where(indices < 0, indices + size, indices).astype(np.int64)


@irdl_op_definition
class GatherElementsOp(GraphOp):
    """ONNX GatherElements: ``out[i][j][k] = data[index[i][j][k]][j][k]`` along ``axis``;
    the result has the indices' shape. Off the axis the indices may be smaller than the
    data (onnxruntime reads the leading part of each such dim, as ``torch.gather``); never
    larger."""

    name = "graph.gather_elements"
    ONNX_OP: ClassVar = "GatherElements"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    output = result_def(TensorType)
    axis = int_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = OpFacts(role=FormatRole.ND_ONLY, fusion=FusionKind.INJECTIVE)
    DEFAULTS: ClassVar = {"axis": 0}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "data")
        idx = require(tensor_type(operands[1]), "indices")
        if idx.dtype not in INT32_OR_64:
            raise ShapeError(f"indices must be int32 or int64, got {idx.element_type}")
        if idx.rank != x.rank:
            raise ShapeError(f"indices have rank {idx.rank}, data rank {x.rank}")
        axis = normalize_axis(cls.read_attr(props, "axis"), x.rank)
        for k, (d, i) in enumerate(zip(x.origin_shape, idx.origin_shape, strict=True)):
            d, i = static_dim(d), static_dim(i)
            if k != axis and d is not None and i is not None and i > d:
                raise ShapeError(f"indices dim {k} is {i}, larger than the data's {d}")
        n, values = static_dim(x.origin_shape[axis]), constant_value(operands[1])
        if n is not None and values is not None:
            checked_indices(np.asarray(values), n, "GatherElements")
        return [nd_result(x, idx.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, idx = inputs
        assert x is not None and idx is not None
        axis = int(self.attr("axis")) % x.ndim
        where = checked_indices(np.asarray(idx), x.shape[axis], "GatherElements")
        if any(i > d for k, (d, i) in enumerate(zip(x.shape, idx.shape, strict=True)) if k != axis):
            raise ShapeError(
                f"GatherElements: indices {list(idx.shape)} exceed data {list(x.shape)}"
            )
        lead = tuple(slice(None) if k == axis else slice(0, n) for k, n in enumerate(idx.shape))
        return (np.take_along_axis(x[lead], where, axis=axis),)


def _int_indices(t: TensorType, what: str) -> None:
    if t.dtype not in INT32_OR_64:
        raise ShapeError(f"{what} must be int32 or int64, got {t.element_type}")


_REDUCE = {
    "none": None,
    "add": np.add,
    "mul": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
}


class _ScatterOp(GraphOp):
    """Shared by ScatterElements and ScatterND: ``reduction`` none/add/mul/max/min."""

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    output = result_def(TensorType)
    reduction = str_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = OpFacts(
        role=FormatRole.ND_ONLY, fusion=FusionKind.OPAQUE, empty_operands=(1, 2)
    )
    DEFAULTS: ClassVar = {"reduction": "none"}

    @classmethod
    def check(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> tuple[TensorType, TensorType, TensorType]:
        x = require(tensor_type(operands[0]), "data")
        idx = require(tensor_type(operands[1]), "indices")
        upd = require(tensor_type(operands[2]), "updates")
        _int_indices(idx, "indices")
        if upd.element_type != x.element_type:
            raise ShapeError("updates must have the data's element type")
        if cls.read_attr(props, "reduction") not in _REDUCE:
            raise ShapeError(f"reduction must be one of {', '.join(_REDUCE)}")
        return x, idx, upd

    def combine(self, out: np.ndarray, where: tuple, values: np.ndarray) -> None:
        """Write (or reduce) ``values`` at ``where`` in order, duplicates included."""
        reduce = _REDUCE[str(self.attr("reduction"))]
        if reduce is None:
            out[where] = values
        else:
            reduce.at(out, where, values)


@irdl_op_definition
class ScatterElementsOp(_ScatterOp):
    """ONNX ScatterElements: ``out[index[i][j]][j] = updates[i][j]`` along ``axis``."""

    name = "graph.scatter_elements"
    ONNX_OP: ClassVar = "ScatterElements"
    axis = int_attr()
    DEFAULTS: ClassVar = {"reduction": "none", "axis": 0}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x, idx, upd = cls.check(operands, props)
        # torch's scatter_add exports the updates as a Slice to the indices' shape, whose
        # dims the import may not know: equal where both are known
        if idx.rank != x.rank or not shapes_compatible(idx.origin_shape, upd.origin_shape):
            raise ShapeError(
                f"indices {shape_text(idx.origin_shape)} and updates "
                f"{shape_text(upd.origin_shape)} must have one shape, of the data's rank "
                f"({x.rank})"
            )
        normalize_axis(cls.read_attr(props, "axis"), x.rank)
        return [nd_result(x, x.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, idx, upd = inputs
        assert x is not None and idx is not None and upd is not None
        if idx.shape != upd.shape:
            raise ShapeError(
                f"ScatterElements: indices {list(idx.shape)} and updates {list(upd.shape)} "
                "must have one shape"
            )
        axis = int(self.attr("axis")) % x.ndim
        where = [np.asarray(grid) for grid in np.indices(idx.shape)]
        where[axis] = checked_indices(np.asarray(idx), x.shape[axis], "ScatterElements")
        out = x.copy()
        self.combine(out, tuple(where), upd)
        return (out,)


@irdl_op_definition
class ScatterNDOp(_ScatterOp):
    """ONNX ScatterND: ``indices[..., :k]`` address slices of ``data`` that take
    ``updates[...]``."""

    name = "graph.scatter_nd"
    ONNX_OP: ClassVar = "ScatterND"

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x, _, _ = cls.check(operands, props)
        return [nd_result(x, x.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, idx, upd = inputs
        assert x is not None and idx is not None and upd is not None
        k = idx.shape[-1]
        flat = np.asarray(idx).reshape(-1, k)
        columns = [checked_indices(flat[:, i], x.shape[i], "ScatterND") for i in range(k)]
        out = x.copy()
        values = upd.reshape(flat.shape[0], *x.shape[k:])
        reduce = _REDUCE[str(self.attr("reduction"))]
        for row in range(flat.shape[0]):  # in order: later updates win, duplicates reduce
            where = tuple(int(c[row]) for c in columns)
            out[where] = values[row] if reduce is None else reduce(out[where], values[row])
        return (out,)


@irdl_op_definition
class GatherNDOp(GraphOp):
    """ONNX GatherND with ``batch_dims``: the last indices dim addresses the first dims of
    each batch's data."""

    name = "graph.gather_nd"
    ONNX_OP: ClassVar = "GatherND"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    output = result_def(TensorType)
    batch_dims = int_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"batch_dims": 0}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "data")
        idx = require(tensor_type(operands[1]), "indices")
        _int_indices(idx, "indices")
        b = int(cls.read_attr(props, "batch_dims"))
        k = idx.origin_shape[-1] if idx.rank else UNKNOWN
        if not isinstance(k, int) or k < 0:
            raise ShapeError("the last dim of indices must be static")
        if b + k > x.rank:
            raise ShapeError(f"batch_dims {b} + index depth {k} exceed the data's rank {x.rank}")
        shape: list[Dim] = [*idx.origin_shape[:-1], *x.origin_shape[b + k :]]
        return [nd_result(x, shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, idx = inputs
        assert x is not None and idx is not None
        b = int(self.attr("batch_dims"))
        k = idx.shape[-1]
        batches = int(np.prod(x.shape[:b])) if b else 1
        data = x.reshape(batches, *x.shape[b:])
        index = np.asarray(idx).reshape(batches, -1, k)
        out = []
        for n in range(batches):
            cols = [
                checked_indices(index[n, :, i], data.shape[1 + i], "GatherND") for i in range(k)
            ]  # noqa: E501
            out.append(data[n][tuple(cols)])
        result = np.stack(out)
        return (result.reshape(*idx.shape[:-1], *x.shape[b + k :]),)


@irdl_op_definition
class TopKOp(GraphOp):
    """ONNX TopK: the ``k`` largest (``largest = 1``) or smallest values along ``axis`` and
    their indices; ties go to the lower index."""

    name = "graph.top_k"
    ONNX_OP: ClassVar = "TopK"
    X = operand_def(TensorType)
    K = operand_def(TensorType)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    axis = int_attr()
    largest = int_attr()
    sorted = int_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"axis": -1, "largest": 1, "sorted": 1}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "X")
        axis = normalize_axis(cls.read_attr(props, "axis"), x.rank)
        k = constant_value(operands[1])
        shape = list(x.origin_shape)
        shape[axis] = int(np.asarray(k).reshape(-1)[0]) if k is not None else UNKNOWN
        return [nd_result(x, shape), nd_result(x, shape, element_type_of("int64"))]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, k_value = inputs
        assert x is not None and k_value is not None
        axis, k = int(self.attr("axis")) % x.ndim, int(np.asarray(k_value).reshape(-1)[0])
        # a decreasing key that cannot overflow: ~x for integers (unsigned too), -x for floats
        keys = (np.invert(x) if x.dtype.kind in "iub" else -x) if self.attr("largest") else x
        order = np.argsort(keys, axis=axis, kind="stable")  # stable: lower index first on ties
        picked = np.take(order, np.arange(k), axis=axis)
        return np.take_along_axis(x, picked, axis=axis), picked.astype(np.int64)


@irdl_op_definition
class OneHotOp(GraphOp):
    """ONNX OneHot: ``values[1]`` where the index equals the position along the new
    ``axis`` of length ``depth``, ``values[0]`` elsewhere; negative indices count from the
    end, out-of-range ones give an all-off row."""

    name = "graph.one_hot"
    ONNX_OP: ClassVar = "OneHot"
    indices = operand_def(TensorType)
    depth = operand_def(TensorType)
    values = operand_def(TensorType)
    output = result_def(TensorType)
    axis = int_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"axis": -1}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        idx = require(tensor_type(operands[0]), "indices")
        values = require(tensor_type(operands[2]), "values")
        axis = normalize_axis(cls.read_attr(props, "axis"), idx.rank + 1)
        depth = constant_value(operands[1])
        size = int(np.asarray(depth).reshape(-1)[0]) if depth is not None else UNKNOWN
        shape = list(idx.origin_shape)
        shape.insert(axis, size)
        return [TensorType(shape, values.element_type)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        idx, depth_value, values = inputs
        assert idx is not None and depth_value is not None and values is not None
        depth = int(np.asarray(depth_value).reshape(-1)[0])
        axis = int(self.attr("axis")) % (idx.ndim + 1)
        where = np.asarray(idx).astype(np.int64)
        where = np.where(where < 0, where + depth, where)
        hot = np.expand_dims(where, axis) == np.arange(depth).reshape(
            [depth if i == axis else 1 for i in range(idx.ndim + 1)]
        )
        off, on = np.asarray(values).reshape(-1)[:2]
        return (np.where(hot, on, off).astype(values.dtype),)


@irdl_op_definition
class CompressOp(GraphOp):
    """ONNX Compress: the slices along ``axis`` (the flattened input without it) where the
    bool ``condition`` is true; the selected length is known for a constant condition."""

    name = "graph.compress"
    ONNX_OP: ClassVar = "Compress"
    input = operand_def(TensorType)
    condition = operand_def(TensorType)
    output = result_def(TensorType)
    axis = int_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        cond = constant_value(operands[1])
        count = int(np.count_nonzero(cond)) if cond is not None else UNKNOWN
        axis = cls.read_attr(props, "axis")
        if axis is None:
            return [nd_result(x, [count])]
        shape = list(x.origin_shape)
        shape[normalize_axis(axis, x.rank)] = count
        return [nd_result(x, shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, cond = inputs
        assert x is not None and cond is not None
        axis = self.attr("axis")
        return (np.compress(np.asarray(cond).astype(bool), x, axis=axis),)


@irdl_op_definition
class ReverseSequenceOp(GraphOp):
    """ONNX ReverseSequence: each batch entry's first ``sequence_lens[b]`` steps along
    ``time_axis`` reversed."""

    name = "graph.reverse_sequence"
    ONNX_OP: ClassVar = "ReverseSequence"
    input = operand_def(TensorType)
    sequence_lens = operand_def(TensorType)
    Y = result_def(TensorType)
    batch_axis = int_attr()
    time_axis = int_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"batch_axis": 1, "time_axis": 0}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        if x.rank < 2:
            raise ShapeError("ReverseSequence takes a tensor of rank >= 2")
        return [nd_result(x, x.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, lens = inputs
        assert x is not None and lens is not None
        b_axis, t_axis = int(self.attr("batch_axis")), int(self.attr("time_axis"))
        out = x.copy()
        for b, n in enumerate(np.asarray(lens).reshape(-1)):
            src: list[int | slice] = [slice(None)] * x.ndim
            src[b_axis], src[t_axis] = b, slice(0, int(n))
            out[tuple(src)] = np.flip(x[tuple(src)], axis=t_axis - (t_axis > b_axis))
        return (out,)


@irdl_op_definition
class EinsumOp(GraphOp):
    """ONNX Einsum: numpy's einsum on the equation (implicit and explicit output, ellipsis);
    the result shape comes from the equation and the operand shapes."""

    name = "graph.einsum"
    ONNX_OP: ClassVar = "Einsum"
    inputs = var_operand_def(TensorType)
    output = result_def(TensorType)
    equation = str_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        types = [require(tensor_type(v), "input") for v in operands]
        equation = str(cls.read_attr(props, "equation") or "").replace(" ", "")
        if not all(t.is_static for t in types):
            shape = _einsum_shape(equation, [t.origin_shape for t in types])
            return [TensorType(shape, types[0].element_type)]
        shapes = [tuple(int(d) for d in t.origin_shape) for t in types]  # type: ignore[arg-type]
        try:
            probe = np.einsum(equation, *(np.zeros(s) for s in shapes))
        except ValueError as e:
            raise ShapeError(f"Einsum equation '{equation}': {e}") from None
        return [TensorType(list(probe.shape), types[0].element_type)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        arrays = [a for a in inputs if a is not None]
        equation = str(self.attr("equation")).replace(" ", "")
        return (np.asarray(np.einsum(equation, *arrays)).astype(arrays[0].dtype),)


def _einsum_shape(equation: str, shapes: Sequence[Sequence[Dim]]) -> list[Dim]:
    """The result shape of ``equation`` over operand shapes with symbolic dims: each
    subscript letter takes its operands' dim (a 1 broadcasts), the ellipses broadcast
    together; without ``->`` the output is the ellipsis, then the letters used once, in
    alphabetical order (numpy's and ONNX's implicit form)."""
    inputs, arrow, output = equation.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise ShapeError(
            f"Einsum equation '{equation}' has {len(terms)} operands, not {len(shapes)}"
        )
    letters: dict[str, Dim] = {}
    counts: dict[str, int] = {}
    ellipses: list[Sequence[Dim]] = []
    for term, shape in zip(terms, shapes, strict=True):
        head, dots, tail = term.partition("...")
        extra = len(shape) - len(head) - len(tail)
        if extra < 0 or (not dots and extra):
            raise ShapeError(f"Einsum term '{term}' does not match a rank-{len(shape)} operand")
        if dots:
            ellipses.append(shape[len(head) : len(head) + extra])
        dims = [*shape[: len(head)], *shape[len(shape) - len(tail) :]]
        for letter, dim in zip(head + tail, dims, strict=True):
            counts[letter] = counts.get(letter, 0) + 1
            seen = letters.get(letter)
            if seen is None or seen == 1:
                letters[letter] = dim
            elif dim not in (1, seen) and known(seen) and known(dim):
                raise ShapeError(f"Einsum subscript '{letter}' is {seen} and {dim}")
    ellipsis = broadcast_shapes(*ellipses)
    if not arrow:
        output = "..." * bool(ellipses) + "".join(sorted(c for c, n in counts.items() if n == 1))
    head, dots, tail = output.partition("...")
    unknown = [c for c in head + tail if c not in letters]
    if unknown:
        raise ShapeError(f"Einsum output subscript '{unknown[0]}' is no operand's")
    return [*(letters[c] for c in head), *(ellipsis if dots else []), *(letters[c] for c in tail)]


INDEXING_OPS: list[type[GraphOp]] = [
    GatherElementsOp,
    GatherNDOp,
    ScatterElementsOp,
    ScatterNDOp,
    TopKOp,
    OneHotOp,
    CompressOp,
    ReverseSequenceOp,
    EinsumOp,
]
