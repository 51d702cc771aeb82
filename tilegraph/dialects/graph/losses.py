"""Loss ops: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (inference semantics:
the loss value, computed in float64 and returned in the input's type)."""

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
)
from xdsl.traits import Pure

from tilegraph.dialects.graph.base import GraphOp, ShapeError, int_attr, str_attr, tensor_type
from tilegraph.dialects.graph.facts import ND_OPAQUE
from tilegraph.dialects.graph.operand_values import INT32_OR_64
from tilegraph.dialects.graph.shape_utils import nd_result, require
from tilegraph.dialects.layout_type import TensorType

_REDUCTIONS = ("none", "sum", "mean")


def negative_log_likelihood(
    log_prob: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None,
    reduction: str,
    ignore_index: int | None,
) -> np.ndarray:
    """ONNX NegativeLogLikelihoodLoss on ``log_prob[N, C, d...]`` and ``target[N, d...]``:
    ``-log_prob[n, target, d] * weight[target]``, 0 where ``target == ignore_index``; "mean"
    divides the sum by the sum of the applied weights."""
    target = np.asarray(target).astype(np.int64)
    ignored = target == ignore_index if ignore_index is not None else np.zeros(target.shape, bool)
    safe = np.where(ignored, 0, target)
    picked = np.take_along_axis(log_prob, np.expand_dims(safe, 1), axis=1).squeeze(1)
    w = np.ones(target.shape) if weight is None else np.asarray(weight, np.float64)[safe]
    w = np.where(ignored, 0.0, w)
    loss = -picked * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return np.asarray(loss.sum())
    return np.asarray(loss.sum() / w.sum())


class _LossOp(GraphOp):
    """The shared attributes, checks and result shape of the two losses."""

    reduction = str_attr()
    ignore_index = int_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"reduction": "mean"}

    @classmethod
    def loss_type(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> tuple[TensorType, TensorType]:
        x = require(tensor_type(operands[0]), "input")
        target = require(tensor_type(operands[1]), "target")
        reduction = cls.read_attr(props, "reduction")
        if reduction not in _REDUCTIONS:
            raise ShapeError(f"reduction must be one of {', '.join(_REDUCTIONS)}, not {reduction}")
        if x.rank < 2 or target.rank != x.rank - 1:
            raise ShapeError(
                f"input must be [N, C, d...] and target [N, d...], got ranks {x.rank} and "
                f"{target.rank}"
            )
        if target.dtype not in INT32_OR_64:
            raise ShapeError(f"target must be int32 or int64, got {target.element_type}")
        shape = [x.origin_shape[0], *x.origin_shape[2:]] if reduction == "none" else []
        return x, nd_result(x, shape)

    def common(self) -> tuple[str, int | None]:
        return str(self.attr("reduction")), self.attr("ignore_index")


@irdl_op_definition
class NegativeLogLikelihoodLossOp(_LossOp):
    """ONNX NegativeLogLikelihoodLoss (input: log-probabilities [N, C, d...])."""

    name = "graph.negative_log_likelihood_loss"
    ONNX_OP: ClassVar = "NegativeLogLikelihoodLoss"
    input = operand_def(TensorType)
    target = operand_def(TensorType)
    weight = opt_operand_def(TensorType)
    loss = result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        return [cls.loss_type(operands, props)[1]]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, target, weight = (list(inputs) + [None])[:3]
        assert x is not None and target is not None
        reduction, ignore = self.common()
        loss = negative_log_likelihood(x.astype(np.float64), target, weight, reduction, ignore)
        return (loss.astype(x.dtype),)


@irdl_op_definition
class SoftmaxCrossEntropyLossOp(_LossOp):
    """ONNX SoftmaxCrossEntropyLoss: NLL of ``log_softmax(scores, axis=1)``; the second
    result is that log-probability tensor (ONNX's optional output, always computed)."""

    name = "graph.softmax_cross_entropy_loss"
    ONNX_OP: ClassVar = "SoftmaxCrossEntropyLoss"
    scores = operand_def(TensorType)
    labels = operand_def(TensorType)
    weights = opt_operand_def(TensorType)
    output = result_def(TensorType)
    log_prob = result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x, loss = cls.loss_type(operands, props)
        return [loss, nd_result(x, x.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, labels, weights = (list(inputs) + [None])[:3]
        assert x is not None and labels is not None
        scores = x.astype(np.float64)
        shifted = scores - scores.max(axis=1, keepdims=True)
        log_prob = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        reduction, ignore = self.common()
        loss = negative_log_likelihood(log_prob, labels, weights, reduction, ignore)
        return loss.astype(x.dtype), log_prob.astype(x.dtype)


LOSS_OPS: list[type[GraphOp]] = [NegativeLogLikelihoodLossOp, SoftmaxCrossEntropyLossOp]
