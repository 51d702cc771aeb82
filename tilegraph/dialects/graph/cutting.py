"""Cutting ops: slice and split (ONNX Slice-13, Split-18) of one data tensor.

Shape-like operands (starts/ends/axes/steps, split) are tensors, read with the helpers of
:mod:`.operand_values` (their values when they come from ``graph.constant``). Both are
AGNOSTIC + INJECTIVE data-movement ops (:mod:`.data_movement`'s docstring) with one ANY
kernel variant, which ``storage_applies`` narrows per instance: NC1HWC0 where the cut falls
on C0 block boundaries (:mod:`.movement_storage`), so a CNN's channel split between
convolutions (YOLOv8's C2f) keeps their 5HD.
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
    var_result_def,
)
from xdsl.traits import Pure

from tilegraph.dialects.graph.base import (
    GraphOp,
    ShapeError,
    constant_value,
    int_attr,
    tensor_type,
)
from tilegraph.dialects.graph.facts import FormatRole, FusionKind
from tilegraph.dialects.graph.movement_storage import (
    ANY_KERNEL,
    movement_facts,
    slice_storage_applies,
    split_storage_applies,
)
from tilegraph.dialects.graph.operand_values import (
    INT32_OR_64,
    ints_operand,
    normalize_axes,
    padded_inputs,
    required_ints,
    runtime_ints,
    static_dim,
)
from tilegraph.dialects.graph.shape_utils import (
    normalize_axis,
    require,
    require_equal_dims,
    result_like,
)
from tilegraph.dialects.graph.slicing import slice_bounds, slice_dim
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import UNKNOWN, Dim

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
    FACTS: ClassVar = movement_facts(FormatRole.AGNOSTIC, FusionKind.INJECTIVE, ANY_KERNEL)

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
        data, starts, ends, axes, steps = padded_inputs(inputs, 5)
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
    FACTS: ClassVar = movement_facts(FormatRole.AGNOSTIC, FusionKind.INJECTIVE, ANY_KERNEL)

    def storage_applies(
        self, operands: Sequence[TensorType | None], results: Sequence[TensorType]
    ) -> bool:
        """NC1HWC0 where no output but the last ends inside a C0 block:
        :func:`~.movement_storage.split_storage_applies`."""
        return split_storage_applies(self.attr("axis"), operands, results)

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
        x, split = padded_inputs(inputs, 2)
        assert x is not None
        axis = self.attr("axis") % x.ndim
        sizes = runtime_ints(split)
        if sizes is None:
            sizes = split_sizes(x.shape[axis], self.attr("num_outputs"))
        bounds = np.cumsum(sizes)[:-1]
        return tuple(p.copy() for p in np.split(x, bounds, axis=axis))
