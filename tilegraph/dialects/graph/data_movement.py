"""Data-movement graph ops: concat, slice, pad, split, tile, expand, gather.

Slice and split are defined in :mod:`.cutting` (with their NC1HWC0 rule) and listed here in
``DATA_MOVEMENT_OPS``. The reshape family lives in :mod:`.shape_ops`, which re-exports
these ops in ``SHAPE_OPS``.

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
from tilegraph.dialects.graph.cutting import SliceOp, SplitOp
from tilegraph.dialects.graph.facts import (
    FormatRole,
    FusionKind,
    OpCost,
    OpFacts,
)
from tilegraph.dialects.graph.movement_storage import (
    ANY_KERNEL,
    concat_storage_applies,
    movement_facts,
)
from tilegraph.dialects.graph.operand_values import (
    INT32_OR_64,
    dim_add,
    dim_product,
    dim_sum,
    ints_operand,
    normalize_axes,
    padded_inputs,
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
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import UNKNOWN, Dim, dims_compatible, is_symbolic, is_unknown
from tilegraph.symbolic.inference import require as require_condition

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
        kernels=ANY_KERNEL,
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
    FACTS: ClassVar = movement_facts(FormatRole.AGNOSTIC, FusionKind.INJECTIVE)

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
        data, pads, value, axes = padded_inputs(inputs, 4)
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
    FACTS: ClassVar = movement_facts(FormatRole.AGNOSTIC, FusionKind.INJECTIVE)

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
    FACTS: ClassVar = movement_facts(FormatRole.AGNOSTIC, FusionKind.BROADCAST)

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
    FACTS: ClassVar = movement_facts(FormatRole.RESHAPE, FusionKind.INJECTIVE)

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
