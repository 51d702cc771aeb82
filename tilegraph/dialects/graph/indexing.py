"""Indexing ops: GatherElements (more to come: Scatter*, GatherND, TopK, OneHot, ...)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure

from tilegraph.dialects.graph.base import (
    GraphOp,
    ShapeError,
    constant_value,
    int_attr,
    tensor_type,
)
from tilegraph.dialects.graph.facts import FormatRole, FusionKind, OpFacts
from tilegraph.dialects.graph.operand_values import INT32_OR_64, static_dim
from tilegraph.dialects.graph.shape_utils import nd_result, normalize_axis, require
from tilegraph.dialects.layout_type import TensorType


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
    the result has the indices' shape."""

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
        n, values = static_dim(x.origin_shape[axis]), constant_value(operands[1])
        if n is not None and values is not None:
            checked_indices(np.asarray(values), n, "GatherElements")
        return [nd_result(x, idx.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, idx = inputs
        assert x is not None and idx is not None
        axis = int(self.attr("axis")) % x.ndim
        where = checked_indices(np.asarray(idx), x.shape[axis], "GatherElements")
        return (np.take_along_axis(x, where, axis=axis),)


INDEXING_OPS: list[type[GraphOp]] = [GatherElementsOp]
