"""Data-movement graph ops: concat, slice, pad, split, tile, expand, gather.

The reshape family lives in :mod:`.shape_ops`, which re-exports these ops in ``SHAPE_OPS``.

Shape-like operands (starts/ends/axes/steps, pads, split, repeats, shape) follow ONNX >= 13:
they are tensors. The static shape function reads them with the helpers of
:mod:`.operand_values` (their values when they come from ``graph.constant``); otherwise
every op here still knows the result rank and gives the affected dims as UNKNOWN (each
docstring says what exactly).

Format roles and fusion kinds (TVM's OpPatternKind; ``format_operands`` leaves the
shape-like operands out of format propagation):

* concat, slice, pad, split, tile: AGNOSTIC + INJECTIVE. The result keeps the input's rank
  and every axis keeps its meaning, so the result has the data's origin format. Their axis
  arguments refer to origin dims, so whether NC1HWC0 can run one depends on the axis and on
  where its channel boundaries fall: concat, split and slice declare an ANY variant and
  refuse, per instance (``storage_applies``, rules in :mod:`.movement_storage`), what
  would cut a C0 block; pad and tile have origin-format kernels only (``kernels=()``),
  TransData around them. AGNOSTIC rather than PAIRED because all data tensors (the concat
  inputs, the split outputs) must share one origin format for one axis number to mean the
  same thing.
* expand: AGNOSTIC + BROADCAST. ONNX Expand is ``x * ones(shape)``: a broadcasting binary
  whose second operand is a shape, and TVM fuses ``broadcast_to`` as kBroadcast; like the
  broadcasting elementwise ops its result keeps the format when the rank allows.
* gather: RESHAPE + INJECTIVE (TVM ``take``). The result rank is ``r + q - 1``: with 1-D
  indices every axis keeps its meaning, otherwise axes after ``axis`` move, which is the
  reshape rule (a tensor whose rank does not fit the format becomes ND).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import ClassVar

import numpy as np
import sympy
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import Pure

from tilegraph.dialects.graph.base import (
    GraphOp,
    ShapeError,
    constant_value,
    int_attr,
    shape_text,
    str_attr,
    tensor_type,
)
from tilegraph.dialects.graph.facts import (
    ANY_FORMAT,
    FormatRole,
    FusionKind,
    KernelVariant,
    OpCost,
    OpFacts,
)
from tilegraph.dialects.graph.movement_storage import (
    concat_storage_applies,
    slice_storage_applies,
    split_storage_applies,
)
from tilegraph.dialects.graph.operand_values import (
    INT32_OR_64,
    dim_add,
    dim_product,
    dim_sum,
    ints_operand,
    normalize_axes,
    required_ints,
    runtime_ints,
    static_dim,
)
from tilegraph.dialects.graph.shape_utils import (
    broadcast_shapes,
    nd_result,
    normalize_axis,
    require,
    require_equal_dims,
    result_like,
    same_element_type,
)
from tilegraph.dialects.graph.slicing import slice_bounds, slice_dim
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import UNKNOWN, Dim, dims_compatible, is_symbolic, is_unknown
from tilegraph.symbolic.inference import require as require_condition

# ---- helpers private to the data-movement ops ---------------------------------------------


def _pad_inputs(inputs: Sequence[np.ndarray | None], n: int) -> list[np.ndarray | None]:
    return (list(inputs) + [None] * n)[:n]


def _origin_only(role: FormatRole, fusion: FusionKind) -> OpFacts:
    """Facts of a data-movement op: operand 0 carries the format, origin-format kernels."""
    return OpFacts(role=role, fusion=fusion, format_operands=(0,))


_ANY_KERNEL = (KernelVariant((), (ANY_FORMAT,), "any"),)
"""One kernel whose tensors share their origin views or a storage format, which
``storage_applies`` narrows per instance (every slot beyond the lists is ANY)."""


def _blocked_axis_sizes(results: Sequence[TensorType], axis: int) -> list[int] | None:
    """The results' sizes along origin ``axis`` when all are known."""
    sizes = [r.origin_shape[axis] for r in results]
    return (
        [s for s in sizes if isinstance(s, int)] if all(isinstance(s, int) for s in sizes) else None
    )


# ---- concat -------------------------------------------------------------------------------


@irdl_op_definition
class ConcatOp(GraphOp):
    """Concatenate the inputs along ``axis`` (required, as in ONNX).

    All inputs have one rank and element type; the other dims must agree (an unknown dim
    agrees with anything). Role AGNOSTIC; one ANY variant, so its tensors share their
    origin views or a storage format, of which :meth:`storage_applies` takes NC1HWC0 only.
    """

    name = "graph.concat"
    ONNX_OP: ClassVar = "Concat"
    inputs = var_operand_def(TensorType)
    axis = int_attr()
    concat_result = result_def(TensorType)
    traits = traits_def(Pure())
    FACTS: ClassVar = OpFacts(
        role=FormatRole.AGNOSTIC,
        fusion=FusionKind.INJECTIVE,
        kernels=_ANY_KERNEL,
    )

    def storage_applies(
        self, operands: Sequence[TensorType | None], results: Sequence[TensorType]
    ) -> bool:
        """GE's ConcatD formats: :func:`~.movement_storage.concat_storage_applies`."""
        return concat_storage_applies(self.attr("axis"), operands, results)

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        types = [require(tensor_type(v), "input") for v in operands]
        if not types:
            raise ShapeError("concat needs at least one input")
        axis = cls.read_attr(props, "axis")
        if axis is None:
            raise ShapeError("concat needs the 'axis' attribute")
        elt = same_element_type(types, "concat inputs")
        rank = types[0].rank
        for i, t in enumerate(types):
            if t.rank != rank:
                raise ShapeError(f"input #{i} has rank {t.rank}, input #0 has rank {rank}")
        axis = normalize_axis(axis, rank)
        out: list[Dim] = []
        for d in range(rank):
            dims = [t.origin_shape[d] for t in types]
            if d == axis:
                out.append(dim_sum(dims))
                continue
            known = next((x for x in dims if not is_unknown(x)), UNKNOWN)
            for i, x in enumerate(dims):
                if not dims_compatible(x, known):
                    raise ShapeError(
                        f"input #{i} has shape {shape_text(types[i].origin_shape)}, which "
                        f"differs from {shape_text(types[0].origin_shape)} in dim {d} "
                        f"(only the axis {axis} may differ)"
                    )
                require_equal_dims(x, known, f"Concat: input #{i} matches input #0 in dim {d}")
            out.append(known)
        return [result_like(types[0], out, elt)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        arrays = [a for a in inputs if a is not None]
        return (np.concatenate(arrays, axis=self.attr("axis")),)


# ---- slice --------------------------------------------------------------------------------


@irdl_op_definition
class SliceOp(GraphOp):
    """ONNX Slice-13: ``data[starts:ends:steps]`` on ``axes`` (default: the first axes).

    starts/ends are clamped per ONNX (negative values count from the end; with a negative
    step ``start`` is clamped to ``dim - 1`` and ``end`` to ``-1``). Non-constant
    starts/ends/steps make the sliced dims UNKNOWN; a non-constant ``axes`` makes every dim
    UNKNOWN (the rank is always the data's).
    """

    name = "graph.slice"
    ONNX_OP: ClassVar = "Slice"
    data = operand_def(TensorType)
    starts = operand_def(TensorType)
    ends = operand_def(TensorType)
    axes = opt_operand_def(TensorType)
    steps = opt_operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    FACTS: ClassVar = replace(
        _origin_only(FormatRole.AGNOSTIC, FusionKind.INJECTIVE), kernels=_ANY_KERNEL
    )

    def storage_applies(
        self, operands: Sequence[TensorType | None], results: Sequence[TensorType]
    ) -> bool:
        """NC1HWC0 where the slice cuts no C0 block: its constant bounds, defaults filled
        in, to :func:`~.movement_storage.slice_storage_applies`."""
        starts, ends = (runtime_ints(constant_value(v)) for v in (self.starts, self.ends))
        n = None if starts is None else len(starts)
        axes = runtime_ints(constant_value(self.axes)) if self.axes else None
        steps = runtime_ints(constant_value(self.steps)) if self.steps else None
        if n is not None:
            axes = list(range(n)) if self.axes is None else axes
            steps = [1] * n if self.steps is None else steps
        return slice_storage_applies((starts, ends, axes, steps), operands, results)

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        data, starts_v, ends_v, axes_v, steps_v = (list(operands) + [None] * 5)[:5]
        x = require(tensor_type(data), "data")
        starts = required_ints(starts_v, "starts", INT32_OR_64)
        ends = required_ints(ends_v, "ends", INT32_OR_64)
        axes = ints_operand(axes_v, "axes", INT32_OR_64)
        steps = ints_operand(steps_v, "steps", INT32_OR_64)
        n = starts.length
        for other, what in ((ends, "ends"), (axes, "axes"), (steps, "steps")):
            if other is None or other.length is None:
                continue
            if n is not None and other.length != n:
                raise ShapeError(f"starts has {n} entries but {what} has {other.length}")
            n = other.length
        rank = x.rank
        if axes is None:
            if n is not None and n > rank:
                raise ShapeError(f"{n} starts for a tensor of rank {rank}")
            axis_list = list(range(n)) if n is not None else None
        elif axes.values is not None:
            axis_list = normalize_axes(axes.values, rank)
        else:
            axis_list = None
        if steps is not None and steps.values is not None and 0 in steps.values:
            raise ShapeError("slice steps must not be 0")
        shape = list(x.origin_shape)
        if axis_list is None:
            return [result_like(x, [UNKNOWN] * rank)]
        if starts.values is None or ends.values is None or (steps and steps.values is None):
            for a in axis_list:
                shape[a] = UNKNOWN
            return [result_like(x, shape)]
        step_values = steps.values if steps is not None and steps.values else (1,) * len(axis_list)
        for a, s, e, st in zip(axis_list, starts.values, ends.values, step_values, strict=True):
            shape[a] = slice_dim(shape[a], s, e, st)
        return [result_like(x, shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        data, starts, ends, axes, steps = _pad_inputs(inputs, 5)
        assert data is not None
        s, e = runtime_ints(starts) or [], runtime_ints(ends) or []
        ax = runtime_ints(axes)
        ax = list(range(len(s))) if ax is None else [a % data.ndim for a in ax]
        st = runtime_ints(steps) or [1] * len(s)
        index = [slice(None)] * data.ndim
        for a, start, end, step in zip(ax, s, e, st, strict=True):
            b0, b1, _ = slice_bounds(data.shape[a], start, end, step)
            index[a] = slice(b0, b1 if b1 >= 0 else None, step)
        return (data[tuple(index)].copy(),)


# ---- pad ----------------------------------------------------------------------------------

PAD_MODES = ("constant", "reflect", "edge", "wrap")


@irdl_op_definition
class PadOp(GraphOp):
    """ONNX Pad-18/19: ``pads`` = [x1_begin, x2_begin, ..., x1_end, x2_end, ...] on ``axes``.

    Modes constant (fill ``constant_value``, default 0), reflect, edge and wrap (ONNX 19).
    Negative pads remove elements. Non-constant ``pads`` make the padded dims UNKNOWN (all
    dims when ``axes`` is not constant either); the rank is the data's.
    """

    name = "graph.pad"
    ONNX_OP: ClassVar = "Pad"
    data = operand_def(TensorType)
    pads = operand_def(TensorType)
    constant_value = opt_operand_def(TensorType)
    axes = opt_operand_def(TensorType)
    mode = str_attr()
    output = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    DEFAULTS: ClassVar = {"mode": "constant"}
    FACTS: ClassVar = _origin_only(FormatRole.AGNOSTIC, FusionKind.INJECTIVE)

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        data, pads_v, value_v, axes_v = (list(operands) + [None] * 4)[:4]
        x = require(tensor_type(data), "data")
        mode = cls.read_attr(props, "mode")
        if mode not in PAD_MODES:
            raise ShapeError(f"unknown pad mode '{mode}' (expected one of {', '.join(PAD_MODES)})")
        pads = required_ints(pads_v, "pads")
        axes = ints_operand(axes_v, "axes", INT32_OR_64)
        value_t = tensor_type(value_v)
        if value_t is not None:
            if value_t.element_type != x.element_type:
                raise ShapeError(
                    f"constant_value has element type {value_t.element_type}, "
                    f"the data {x.element_type}"
                )
            if value_t.rank > 1 or (value_t.rank == 1 and value_t.origin_shape[0] != 1):
                raise ShapeError("constant_value must be a scalar")
        rank = x.rank
        if axes is None:
            axis_list: list[int] | None = list(range(rank))
        elif axes.values is not None:
            axis_list = normalize_axes(axes.values, rank)
        else:
            axis_list = None
        n_axes = len(axis_list) if axis_list is not None else axes.length if axes else None
        if pads.length is not None and n_axes is not None and pads.length != 2 * n_axes:
            raise ShapeError(f"pads has {pads.length} entries, expected 2 * {n_axes}")
        shape = list(x.origin_shape)
        if axis_list is None:
            return [result_like(x, [UNKNOWN] * rank)]
        if pads.values is None:
            for a in axis_list:
                shape[a] = UNKNOWN
            return [result_like(x, shape)]
        k = len(axis_list)
        for i, a in enumerate(axis_list):
            begin, end = pads.values[i], pads.values[i + k]
            new = dim_add(shape[a], begin + end)
            if isinstance(new, int) and new < 0 and not is_unknown(shape[a]):
                raise ShapeError(
                    f"pads {begin}, {end} on axis {a} of size {shape[a]} give a negative size"
                )
            shape[a] = new
        return [result_like(x, shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        data, pads, value, axes = _pad_inputs(inputs, 4)
        assert data is not None
        p = runtime_ints(pads) or []
        ax = runtime_ints(axes)
        ax = list(range(data.ndim)) if ax is None else [a % data.ndim for a in ax]
        k = len(ax)
        crop = [slice(None)] * data.ndim
        widths = [(0, 0)] * data.ndim
        for i, a in enumerate(ax):
            begin, end = p[i], p[i + k]
            crop[a] = slice(max(-begin, 0), data.shape[a] - max(-end, 0))
            widths[a] = (max(begin, 0), max(end, 0))
        cropped = data[tuple(crop)]
        mode = self.attr("mode")
        if mode == "constant":
            fill = 0 if value is None else np.asarray(value).reshape(-1)[0]
            out = np.pad(cropped, widths, mode="constant", constant_values=fill)
        else:
            out = np.pad(cropped, widths, mode=mode)
        return (out.astype(data.dtype, copy=False),)


# ---- split --------------------------------------------------------------------------------


def split_sizes(dim: int, num_outputs: int) -> list[int]:
    """ONNX Split-18 ``num_outputs``: chunks of ``ceil(dim / n)``, the last one smaller."""
    chunk = -(-dim // num_outputs)
    sizes = [chunk] * (num_outputs - 1) + [dim - chunk * (num_outputs - 1)]
    if sizes[-1] < 0:
        raise ShapeError(f"cannot split a dim of size {dim} into {num_outputs} outputs")
    return sizes


@irdl_op_definition
class SplitOp(GraphOp):
    """ONNX Split-18: split ``input`` along ``axis`` by ``split`` sizes or ``num_outputs``.

    Exactly one of the ``split`` operand and the ``num_outputs`` attribute is required (the
    number of results must be known; an opset-13 Split without either is imported with
    ``num_outputs`` set to its number of outputs). A non-constant ``split`` makes the
    results' ``axis`` dim UNKNOWN; so does an unknown input dim with ``num_outputs``.
    """

    name = "graph.split"
    ONNX_OP: ClassVar = "Split"
    input = operand_def(TensorType)
    split = opt_operand_def(TensorType)
    axis = int_attr()
    num_outputs = int_attr()
    outputs = var_result_def(TensorType)
    traits = traits_def(Pure())
    DEFAULTS: ClassVar = {"axis": 0}
    FACTS: ClassVar = replace(
        _origin_only(FormatRole.AGNOSTIC, FusionKind.INJECTIVE), kernels=_ANY_KERNEL
    )

    def storage_applies(
        self, operands: Sequence[TensorType | None], results: Sequence[TensorType]
    ) -> bool:
        """NC1HWC0 where no output but the last ends inside a C0 block:
        :func:`~.movement_storage.split_storage_applies`."""
        axis = self.attr("axis")
        sizes = _blocked_axis_sizes(results, axis % 4)
        return split_storage_applies(axis, sizes, operands, results)

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        split = ints_operand(operands[1] if len(operands) > 1 else None, "split")
        axis = normalize_axis(cls.read_attr(props, "axis"), x.rank)
        num_outputs = cls.read_attr(props, "num_outputs")
        dim = x.origin_shape[axis]
        if split is not None and num_outputs is not None:
            raise ShapeError("give either the 'split' operand or 'num_outputs', not both")
        if split is None and num_outputs is None:
            raise ShapeError("split needs the 'split' operand or the 'num_outputs' attribute")
        sizes: list[Dim]
        if split is not None:
            if split.length is None:
                raise ShapeError("the number of outputs is not known: 'split' has unknown size")
            if split.values is None:
                sizes = [UNKNOWN] * split.length
            else:
                if any(s < 0 for s in split.values):
                    raise ShapeError(f"split sizes {list(split.values)} must be >= 0")
                n = static_dim(dim)
                if n is not None and sum(split.values) != n:
                    raise ShapeError(
                        f"split sizes {list(split.values)} sum to {sum(split.values)}, "
                        f"but axis {axis} has size {n}"
                    )
                require_equal_dims(dim, sum(split.values), f"Split: the sizes fill axis {axis}")
                sizes = list(split.values)
        else:
            assert num_outputs is not None
            if num_outputs < 1:
                raise ShapeError(f"num_outputs must be >= 1, got {num_outputs}")
            n = static_dim(dim)
            if n is not None:
                sizes = list(split_sizes(n, num_outputs))
            elif num_outputs == 1:
                sizes = [dim]
            else:
                sizes = [UNKNOWN] * num_outputs
        results = []
        for s in sizes:
            shape = list(x.origin_shape)
            shape[axis] = s
            results.append(result_like(x, shape))
        return results

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, split = _pad_inputs(inputs, 2)
        assert x is not None
        axis = self.attr("axis") % x.ndim
        sizes = runtime_ints(split)
        if sizes is None:
            sizes = split_sizes(x.shape[axis], self.attr("num_outputs"))
        bounds = np.cumsum(sizes)[:-1]
        return tuple(p.copy() for p in np.split(x, bounds, axis=axis))


# ---- tile ---------------------------------------------------------------------------------


@irdl_op_definition
class TileOp(GraphOp):
    """ONNX Tile: repeat ``input`` ``repeats[i]`` times along axis i.

    ``repeats`` is 1-D int64 with one entry per input dim; non-constant repeats make every
    dim UNKNOWN (the rank is the input's).
    """

    name = "graph.tile"
    ONNX_OP: ClassVar = "Tile"
    input = operand_def(TensorType)
    repeats = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    FACTS: ClassVar = _origin_only(FormatRole.AGNOSTIC, FusionKind.INJECTIVE)

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        repeats = required_ints(operands[1], "repeats")
        if repeats.length is not None and repeats.length != x.rank:
            raise ShapeError(f"repeats has {repeats.length} entries, the input rank is {x.rank}")
        if repeats.values is None:
            return [result_like(x, [UNKNOWN] * x.rank)]
        if any(r < 0 for r in repeats.values):
            raise ShapeError(f"repeats {list(repeats.values)} must be >= 0")
        shape = [
            dim_product([d, r]) if r != 0 else 0
            for d, r in zip(x.origin_shape, repeats.values, strict=True)
        ]
        return [result_like(x, shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, repeats = inputs
        assert x is not None
        return (np.tile(x, runtime_ints(repeats) or []),)


# ---- expand -------------------------------------------------------------------------------


@irdl_op_definition
class ExpandOp(GraphOp):
    """ONNX Expand: broadcast ``input`` with ``shape`` (bidirectionally, numpy rules).

    ``shape`` is 1-D int64. When it is not constant the result rank is
    ``max(rank, len(shape))`` and every dim is UNKNOWN except an input dim != 1, which is the
    only size it can broadcast to. An unknown ``len(shape)`` is a ShapeError.
    """

    name = "graph.expand"
    ONNX_OP: ClassVar = "Expand"
    input = operand_def(TensorType)
    shape = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    FACTS: ClassVar = _origin_only(FormatRole.AGNOSTIC, FusionKind.BROADCAST)

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        shape = required_ints(operands[1], "shape")
        if shape.values is not None:
            if any(d < 0 for d in shape.values):
                raise ShapeError(f"expand shape {list(shape.values)} has a negative dim")
            target: list[Dim] = list(shape.values)
        elif shape.length is not None:
            target = [UNKNOWN] * shape.length
        else:
            raise ShapeError("the result rank is not known: 'shape' has unknown size")
        out = broadcast_shapes(x.origin_shape, target)
        return [result_like(x, out)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, shape = inputs
        assert x is not None
        dims = runtime_ints(shape) or []
        return (np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(dims))).copy(),)


# ---- gather -------------------------------------------------------------------------------


@irdl_op_definition
class GatherOp(GraphOp):
    """ONNX Gather: ``take(data, indices, axis)``; result shape
    ``data[:axis] + indices + data[axis+1:]``. Negative indices count from the end;
    constant indices are range-checked against a static dim.
    """

    name = "graph.gather"
    ONNX_OP: ClassVar = "Gather"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    axis = int_attr()
    output = result_def(TensorType)
    traits = traits_def(Pure())
    DEFAULTS: ClassVar = {"axis": 0}
    FACTS: ClassVar = _origin_only(FormatRole.RESHAPE, FusionKind.INJECTIVE)

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "data")
        idx = require(tensor_type(operands[1]), "indices")
        if x.rank == 0:
            raise ShapeError("gather needs data of rank >= 1")
        if idx.dtype not in INT32_OR_64:
            raise ShapeError(f"indices must be int32 or int64, got {idx.element_type}")
        axis = normalize_axis(cls.read_attr(props, "axis"), x.rank)
        n = static_dim(x.origin_shape[axis])
        values = constant_value(operands[1])
        if n is not None and values is not None and values.size:
            lo, hi = int(values.min()), int(values.max())
            if lo < -n or hi >= n:
                bad = lo if lo < -n else hi
                raise ShapeError(f"index {bad} is out of range for axis {axis} of size {n}")
        elif values is not None and values.size and is_symbolic(x.origin_shape[axis]):
            size = x.origin_shape[axis]
            assert isinstance(size, sympy.Expr)
            lo, hi = int(values.min()), int(values.max())
            reason = f"Gather: the indices lie in axis {axis}"
            require_condition(sympy.Lt(hi, size) if hi >= 0 else sympy.true, reason)
            require_condition(sympy.Le(-lo, size) if lo < 0 else sympy.true, reason)
        shape = [*x.origin_shape[:axis], *idx.origin_shape, *x.origin_shape[axis + 1 :]]
        return [nd_result(x, shape)]

    def cost(self) -> OpCost:
        """A lookup reads only the rows it selects: the indices, and the result's bytes
        read from ``data`` and written (not the whole table, which the default counts)."""
        base = super().cost()
        data = self.data.type
        assert isinstance(data, TensorType)
        n = data.num_elements()
        table = 0 if n is None else n * data.dtype.bits // 8
        output = self.output.type
        assert isinstance(output, TensorType)
        m = output.num_elements()
        moved = 0 if m is None else m * output.dtype.bits // 8
        return OpCost(flops=0, bytes=base.bytes - table + moved)

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, idx = inputs
        assert x is not None and idx is not None
        return (np.take(x, idx.astype(np.int64), axis=self.attr("axis")),)


DATA_MOVEMENT_OPS: list[type[GraphOp]] = [
    ConcatOp,
    SliceOp,
    PadOp,
    SplitOp,
    TileOp,
    ExpandOp,
    GatherOp,
]
