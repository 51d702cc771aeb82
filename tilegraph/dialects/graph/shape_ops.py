"""Shape-changing graph ops: reshape, flatten, transpose, squeeze, unsqueeze.

``SHAPE_OPS`` also lists the data-movement ops of :mod:`.data_movement` (concat, slice, pad,
split, tile, expand, gather), which share this module's conventions.

Shape-like operands (``shape``, ``axes``) are tensors as in ONNX >= 13. The static shape
function reads them when they are ``graph.constant``\\ s; otherwise it gives the result rank
with UNKNOWN dims, and raises :class:`ShapeError` only when even the rank is unknowable (each
docstring says when).

Facts: all five are RESHAPE + INJECTIVE with ``format_operands=(0,)`` (only the data
carries a format; ``shape``/``axes`` do not). They change which axis is which, so formats.md
applies: a tensor whose rank does not fit its format becomes ND, and
Squeeze/Unsqueeze/Transpose below rank 4 stop propagation. Transpose is RESHAPE, not
AGNOSTIC, because a permutation changes what each axis means.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
import sympy
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
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
    int_attr,
    ints_attr,
    shape_text,
    tensor_type,
)
from tilegraph.dialects.graph.data_movement import (
    DATA_MOVEMENT_OPS,
    ConcatOp,
    ExpandOp,
    GatherOp,
    PadOp,
    SliceOp,
    SplitOp,
    TileOp,
)
from tilegraph.dialects.graph.facts import FormatRole, FusionKind, OpCost, OpFacts
from tilegraph.dialects.graph.operand_values import (
    IntsOperand,
    dim_product,
    ints_operand,
    normalize_axes,
    required_ints,
    runtime_ints,
    static_dim,
)
from tilegraph.dialects.graph.shape_utils import nd_result, require
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import (
    UNKNOWN,
    Dim,
    dim_to_text,
    dims_compatible,
    is_unknown,
    normalize_dim,
)
from tilegraph.symbolic.inference import DimSizesNeeded, active_env
from tilegraph.symbolic.inference import require as require_condition

_RESHAPE_FACTS = OpFacts(role=FormatRole.RESHAPE, fusion=FusionKind.INJECTIVE, format_operands=(0,))


class ReshapeLikeOp(GraphOp):
    """Ops that only relabel the dims of the data (no arithmetic): a view at run time."""

    FACTS: ClassVar[OpFacts] = _RESHAPE_FACTS

    def cost(self) -> OpCost:
        base = super().cost()
        return OpCost(flops=0, bytes=base.bytes)


def _known_rank(operand: IntsOperand, what: str) -> int:
    if operand.length is None:
        raise ShapeError(f"the result rank is not known: '{what}' has an unknown size")
    return operand.length


# ---- reshape ------------------------------------------------------------------------------


def _infer_minus_one(total: Dim, known: Dim, data: Sequence[Dim], shape: Sequence[int]) -> Dim:
    """The dim a ``-1`` stands for: ``total / known`` (UNKNOWN when not decidable)."""
    total, known = normalize_dim(total), normalize_dim(known)
    if is_unknown(total) or is_unknown(known):
        return UNKNOWN
    if isinstance(total, int) and isinstance(known, int):
        if known == 0:
            raise ShapeError(f"cannot infer the -1 in {list(shape)}: the other dims are 0")
        if total % known:
            raise ShapeError(
                f"cannot reshape {shape_text(data)} ({total} elements) into {list(shape)}: "
                f"{total} is not a multiple of {known}"
            )
        return total // known
    q = sympy.simplify(sympy.Integer(total) / known if isinstance(total, int) else total / known)
    if q.is_integer:
        return normalize_dim(q)
    if active_env() is None:
        return UNKNOWN
    # an assert guard: the element count must split (Mod(s0*s1, k) == 0)
    require_condition(
        sympy.Eq(sympy.Mod(total, known), 0),
        f"Reshape: the element count of {shape_text(data)} is a multiple of {dim_to_text(known)}",
    )
    return normalize_dim(sympy.floor(q))


def reshape_target(data: Sequence[Dim], shape: Sequence[int], allowzero: bool) -> list[Dim]:
    """ONNX Reshape's output shape for a constant ``shape`` (0 copies, one -1 inferred)."""
    shape = list(shape)
    if any(v < -1 for v in shape):
        raise ShapeError(f"shape {shape} has an invalid dim (dims must be >= -1)")
    if shape.count(-1) > 1:
        raise ShapeError(f"shape {shape} has more than one -1")
    if allowzero and -1 in shape and 0 in shape:
        raise ShapeError(f"with allowzero = 1, shape {shape} cannot have both 0 and -1")
    out: list[Dim] = []
    for i, v in enumerate(shape):
        if v == 0 and not allowzero:
            if i >= len(data):
                raise ShapeError(
                    f"shape {shape} copies dim {i} (a 0) but the data has rank {len(data)}"
                )
            out.append(data[i])
        else:
            out.append(v)
    total = dim_product(data)
    if -1 in shape:
        i = shape.index(-1)
        known = dim_product([d for j, d in enumerate(out) if j != i])
        out[i] = _infer_minus_one(total, known, data, shape)
        return out
    count = dim_product(out)
    if not dims_compatible(total, count):
        raise ShapeError(
            f"cannot reshape {shape_text(data)} ({total} elements) into {shape} ({count} elements)"
        )
    return out


@irdl_op_definition
class ReshapeOp(ReshapeLikeOp):
    """ONNX Reshape-14: ``shape`` is a 1-D int64 operand; 0 copies the input dim unless
    ``allowzero`` = 1; at most one -1, inferred from the element count.

    A non-constant ``shape`` of static length n gives n UNKNOWN dims; an unknown length is
    a ShapeError (rank unknowable).
    """

    name = "graph.reshape"
    ONNX_OP: ClassVar = "Reshape"
    data = operand_def(TensorType)
    shape = operand_def(TensorType)
    allowzero = int_attr()
    reshaped = result_def(TensorType)
    traits = traits_def(Pure())
    DEFAULTS: ClassVar = {"allowzero": 0}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "data")
        shape = required_ints(operands[1], "shape")
        if shape.values is None:
            return [nd_result(x, [UNKNOWN] * _known_rank(shape, "shape"))]
        allowzero = bool(cls.read_attr(props, "allowzero"))
        return [nd_result(x, reshape_target(x.origin_shape, shape.values, allowzero))]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, shape = inputs
        assert x is not None
        target = runtime_ints(shape) or []
        if not self.attr("allowzero"):
            target = [x.shape[i] if v == 0 else v for i, v in enumerate(target)]
        return (np.reshape(x, target).copy(),)


# ---- flatten ------------------------------------------------------------------------------


@irdl_op_definition
class FlattenOp(ReshapeLikeOp):
    """ONNX Flatten: 2-D ``[prod(d[:axis]), prod(d[axis:])]``, ``axis`` in ``[-r, r]``."""

    name = "graph.flatten"
    ONNX_OP: ClassVar = "Flatten"
    input = operand_def(TensorType)
    axis = int_attr()
    output = result_def(TensorType)
    traits = traits_def(Pure())
    DEFAULTS: ClassVar = {"axis": 1}

    @classmethod
    def _axis(cls, rank: int, props: Mapping[str, Attribute]) -> int:
        axis = cls.read_attr(props, "axis")
        if not -rank <= axis <= rank:
            raise ShapeError(f"axis {axis} is out of range [{-rank}, {rank}]")
        return axis + rank if axis < 0 else axis

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        axis = cls._axis(x.rank, props)
        dims = x.origin_shape
        return [nd_result(x, [dim_product(dims[:axis]), dim_product(dims[axis:])])]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        axis = self._axis(x.ndim, self.properties)
        rows = int(np.prod(x.shape[:axis], dtype=np.int64))
        cols = int(np.prod(x.shape[axis:], dtype=np.int64))
        return (x.reshape(rows, cols).copy(),)


# ---- transpose ----------------------------------------------------------------------------


@irdl_op_definition
class TransposeOp(ReshapeLikeOp):
    """ONNX Transpose: ``perm`` (default: reversed dims) must be a permutation of 0..r-1."""

    name = "graph.transpose"
    ONNX_OP: ClassVar = "Transpose"
    data = operand_def(TensorType)
    perm = ints_attr()
    transposed = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def _perm(cls, rank: int, props: Mapping[str, Attribute]) -> list[int]:
        perm = cls.read_attr(props, "perm")
        if perm is None:
            return list(range(rank))[::-1]
        perm = list(perm)
        if sorted(perm) != list(range(rank)):
            raise ShapeError(f"perm {perm} is not a permutation of the {rank} dims 0..{rank - 1}")
        return perm

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "data")
        perm = cls._perm(x.rank, props)
        return [nd_result(x, [x.origin_shape[p] for p in perm])]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        return (np.transpose(x, self._perm(x.ndim, self.properties)).copy(),)

    def cost(self) -> OpCost:
        return GraphOp.cost(self)  # a transpose moves data, unlike the views


# ---- squeeze / unsqueeze ------------------------------------------------------------------


@irdl_op_definition
class SqueezeOp(ReshapeLikeOp):
    """ONNX Squeeze-13: remove the size-1 dims listed in the optional ``axes`` operand.

    Without ``axes`` every dim of size 1 goes, which needs all dims static (else
    :class:`DimSizesNeeded`: the rank depends on the sizes; the importer binds them).
    Non-constant ``axes`` of static length k give ``rank - k`` UNKNOWN dims (unknown
    length: ShapeError). Squeezing a dim that is not 1 is a ShapeError; unknown or symbolic
    dims are accepted.
    """

    name = "graph.squeeze"
    ONNX_OP: ClassVar = "Squeeze"
    data = operand_def(TensorType)
    axes = opt_operand_def(TensorType)
    squeezed = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "data")
        axes = ints_operand(operands[1] if len(operands) > 1 else None, "axes")
        dims = x.origin_shape
        if axes is None:
            if not all(static_dim(d) is not None for d in dims):
                raise DimSizesNeeded(
                    f"squeeze without axes needs static dims to know the result rank, "
                    f"got {shape_text(dims)}"
                )
            return [nd_result(x, [d for d in dims if d != 1])]
        if axes.values is None:
            k = _known_rank(axes, "axes")
            if k > x.rank:
                raise ShapeError(f"cannot squeeze {k} axes of a tensor of rank {x.rank}")
            return [nd_result(x, [UNKNOWN] * (x.rank - k))]
        squeezed = normalize_axes(axes.values, x.rank)
        for a in squeezed:
            if not dims_compatible(dims[a], 1):
                raise ShapeError(f"cannot squeeze axis {a} of size {dims[a]} (it must be 1)")
        return [nd_result(x, [d for i, d in enumerate(dims) if i not in squeezed])]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, axes = (list(inputs) + [None])[:2]
        assert x is not None
        ax = runtime_ints(axes)
        if ax is None:
            return (np.squeeze(x).copy(),)
        return (np.squeeze(x, axis=tuple(a % x.ndim for a in ax)).copy(),)


@irdl_op_definition
class UnsqueezeOp(ReshapeLikeOp):
    """ONNX Unsqueeze-13: insert size-1 dims at ``axes`` (positions in the *result*).

    Non-constant ``axes`` of static length k give ``rank + k`` UNKNOWN dims (unknown
    length: ShapeError, the rank is unknowable).
    """

    name = "graph.unsqueeze"
    ONNX_OP: ClassVar = "Unsqueeze"
    data = operand_def(TensorType)
    axes = operand_def(TensorType)
    expanded = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "data")
        axes = required_ints(operands[1], "axes")
        if axes.values is None:
            return [nd_result(x, [UNKNOWN] * (x.rank + _known_rank(axes, "axes")))]
        rank = x.rank + len(axes.values)
        inserted = set(normalize_axes(axes.values, rank))
        rest = iter(x.origin_shape)
        return [nd_result(x, [1 if i in inserted else next(rest) for i in range(rank)])]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, axes = inputs
        assert x is not None
        ax = runtime_ints(axes) or []
        rank = x.ndim + len(ax)
        return (np.expand_dims(x, tuple(a % rank for a in ax)).copy(),)


RESHAPE_OPS: list[type[GraphOp]] = [ReshapeOp, FlattenOp, TransposeOp, SqueezeOp, UnsqueezeOp]

SHAPE_OPS: list[type[GraphOp]] = [*RESHAPE_OPS, *DATA_MOVEMENT_OPS]

__all__ = [
    "DATA_MOVEMENT_OPS",
    "RESHAPE_OPS",
    "SHAPE_OPS",
    "ConcatOp",
    "ExpandOp",
    "FlattenOp",
    "GatherOp",
    "PadOp",
    "ReshapeOp",
    "SliceOp",
    "SplitOp",
    "SqueezeOp",
    "TileOp",
    "TransposeOp",
    "UnsqueezeOp",
]
