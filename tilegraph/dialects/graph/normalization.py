"""Normalisations over the trailing axes: ``graph.layer_norm`` (ONNX LayerNormalization-17)
and ``graph.rms_norm`` (ONNX RMSNormalization-23).

Both normalise ``x`` over the dims ``axis .. rank-1`` and scale by ``scale`` (broadcast
against those dims); LayerNorm also centres and adds ``B``. ``stash_type`` = 1 (the default)
computes in float32 for float16/bfloat16 inputs. ``graph.layer_norm`` has the first output
(``Y``) only; a model that uses ``Mean`` / ``InvStdDev`` imports as ``graph.layer_norm_stats``.

The reference kernels spell the computation as transformer exports decompose it (mean,
centre, mean of squares, add epsilon, sqrt, divide, scale, shift), so that
``algebraic-simplify``'s recomposition rule turns such a decomposition into the op without
changing the numbers. Facts: ND_ONLY (the axes name origin dims), OPAQUE (a reduction
whose result revisits its input, like softmax).

Also here, with the same facts: ``graph.group_norm`` (ONNX GroupNormalization-18 and -21:
groups of channels) and ``graph.mean_variance_norm`` (MeanVarianceNormalization).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import f32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, result_def, traits_def
from xdsl.traits import Pure

from tilegraph.dialects.graph.base import (
    GraphOp,
    ShapeError,
    float_attr,
    int_attr,
    ints_attr,
    tensor_type,
)
from tilegraph.dialects.graph.facts import FormatRole, FusionKind, OpFacts, PrecisionRole
from tilegraph.dialects.graph.nn import BatchNormOp
from tilegraph.dialects.graph.shape_utils import normalize_axis, require, result_like
from tilegraph.dialects.graph.windows import accumulator
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import dims_compatible

_Slots = Sequence[SSAValue | None]
_Props = Mapping[str, Attribute]


class _TrailingNorm(GraphOp):
    """Shared shape function and axis handling of the trailing-axes normalisations."""

    axis = int_attr()
    epsilon = float_attr()
    stash_type = int_attr()
    traits = traits_def(Pure())
    DEFAULTS: ClassVar = {"axis": -1, "epsilon": 1e-5, "stash_type": 1}
    FACTS: ClassVar = OpFacts(
        FormatRole.ND_ONLY, FusionKind.OPAQUE, format_operands=(0,), precision=PrecisionRole.BLACK
    )

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "X")
        axis = normalize_axis(cls.read_attr(props, "axis"), x.rank)
        normalized = x.origin_shape[axis:]
        for i, what in ((1, "Scale"), (2, "B")):
            t = tensor_type(operands[i]) if i < len(operands) else None
            if t is None:
                continue
            if t.element_type != x.element_type:
                raise ShapeError(f"{what} must have the element type of X")
            if t.rank > len(normalized) or not all(
                d == 1 or dims_compatible(d, n)
                for d, n in zip(t.origin_shape[::-1], normalized[::-1], strict=False)
            ):
                raise ShapeError(
                    f"{what} of shape {list(t.origin_shape)} does not broadcast to the "
                    f"normalised dims {list(normalized)}"
                )
        return [result_like(x, x.origin_shape)]

    def _axes(self, x: np.ndarray) -> tuple[int, ...]:
        return tuple(range(normalize_axis(self.attr("axis"), x.ndim), x.ndim))

    def _compute_type(self, x: np.ndarray) -> type[np.floating]:
        return accumulator(x.dtype) if self.attr("stash_type") == 1 else x.dtype.type


def _layer_norm(op: _TrailingNorm, inputs: Sequence[np.ndarray | None]) -> tuple[np.ndarray, ...]:
    """(Y, Mean, InvStdDev) of ONNX LayerNormalization; the statistics in the stash type."""
    x, scale, bias = (*inputs, None)[:3]
    assert x is not None and scale is not None
    acc = op._compute_type(x)
    axes = op._axes(x)
    xs = x.astype(acc)
    mean = xs.mean(axis=axes, keepdims=True)
    centred = xs - mean
    var = (centred * centred).mean(axis=axes, keepdims=True)
    std = np.sqrt(var + acc(op.attr("epsilon")))
    y = centred / std * scale.astype(acc)
    if bias is not None:
        y = y + bias.astype(acc)
    return y.astype(x.dtype), mean.astype(acc), (1 / std).astype(acc)


@irdl_op_definition
class LayerNormOp(_TrailingNorm):
    """``(x - mean) / sqrt(var + epsilon) * Scale + B`` over the trailing axes."""

    name = "graph.layer_norm"
    ONNX_OP: ClassVar = "LayerNormalization"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    FACTS: ClassVar = replace(_TrailingNorm.FACTS, elementwise_tail=True)

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        return _layer_norm(self, inputs)[:1]


@irdl_op_definition
class LayerNormStatsOp(_TrailingNorm):
    """LayerNormalization whose model uses the ``Mean`` / ``InvStdDev`` outputs too: they
    come out shaped like X with the normalised dims 1, in the stash type (float32 by
    default). The importer picks it when those outputs are used; the compiler's rewrites
    and tile lowering know the one-result ``graph.layer_norm``, so it runs as a host op."""

    name = "graph.layer_norm_stats"
    ONNX_OP: ClassVar = "LayerNormalization"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    mean = result_def(TensorType)
    inv_std_dev = result_def(TensorType)

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        (y,) = super().infer_shapes(operands, props)
        axis = normalize_axis(cls.read_attr(props, "axis"), y.rank)
        shape = [*y.origin_shape[:axis], *[1] * (y.rank - axis)]
        stash = f32 if cls.read_attr(props, "stash_type") == 1 else y.element_type
        if str(y.element_type) == "f64":
            stash = y.element_type
        stats = TensorType(shape, stash)
        return [y, stats, stats]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        return _layer_norm(self, inputs)


@irdl_op_definition
class RmsNormOp(_TrailingNorm):
    """``x / sqrt(mean(x²) + epsilon) * scale`` over the trailing axes."""

    name = "graph.rms_norm"
    ONNX_OP: ClassVar = "RMSNormalization"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    output = result_def(TensorType)
    FACTS: ClassVar = replace(_TrailingNorm.FACTS, elementwise_tail=True)

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, scale = inputs[:2]
        assert x is not None and scale is not None
        acc = self._compute_type(x)
        xs = x.astype(acc)
        ms = (xs * xs).mean(axis=self._axes(x), keepdims=True)
        y = xs / np.sqrt(ms + acc(self.attr("epsilon"))) * scale.astype(acc)
        return (y.astype(x.dtype),)


_STASH_TYPES = {1: np.float32, 11: np.float64}
"""``stash_type`` values (ONNX float, double) -> the numpy type a first stage runs in."""


@irdl_op_definition
class GroupNormOp(GraphOp):
    """ONNX GroupNormalization: ``x`` (``[N, C, ...]``) normalised over each group of
    ``C / num_groups`` channels with the dims after them, in ``stash_type`` (float32 by
    default, or float64), cast back to x's type, then ``* scale + bias`` in x's type.
    ``scale`` and ``bias`` are per channel (``[C]``, GroupNormalization-21) or per group
    (``[num_groups]``, GroupNormalization-18): both forms agree when ``num_groups == C``,
    so their length says which applies."""

    name = "graph.group_norm"
    ONNX_OP: ClassVar = "GroupNormalization"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    output = result_def(TensorType)
    num_groups = int_attr()
    epsilon = float_attr()
    stash_type = int_attr()
    traits = traits_def(Pure())
    DEFAULTS: ClassVar = {"epsilon": 1e-5, "stash_type": 1}
    FACTS: ClassVar = _TrailingNorm.FACTS

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "X")
        if x.rank < 2:
            raise ShapeError(f"GroupNormalization takes [N, C, ...], got rank {x.rank}")
        groups = cls.read_attr(props, "num_groups")
        if groups is None or groups < 1:
            raise ShapeError(f"GroupNormalization needs num_groups >= 1, got {groups}")
        channels = x.origin_shape[1]
        if isinstance(channels, int) and channels >= 0 and channels % groups:
            raise ShapeError(f"num_groups {groups} does not divide the {channels} channels")
        stash = cls.read_attr(props, "stash_type")
        if stash not in _STASH_TYPES:
            raise ShapeError(f"stash_type {stash} is not supported (1: float, 11: double)")
        for i, what in ((1, "scale"), (2, "bias")):
            t = require(tensor_type(operands[i]), what)
            if t.element_type != x.element_type:
                raise ShapeError(f"{what} must have the element type of X")
            if t.rank != 1 or not (
                t.origin_shape[0] == groups or dims_compatible(t.origin_shape[0], channels)
            ):
                raise ShapeError(
                    f"{what} must be [C] (per channel) or [num_groups] (per group), "
                    f"got {list(t.origin_shape)}"
                )
        return [result_like(x, x.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, scale, bias = inputs
        assert x is not None and scale is not None and bias is not None
        groups = int(self.attr("num_groups"))
        stash = _STASH_TYPES[int(self.attr("stash_type"))]
        xs = x.astype(stash).reshape(x.shape[0], groups, -1)
        centred = xs - xs.mean(axis=2, keepdims=True)
        var = (centred * centred).mean(axis=2, keepdims=True)
        normalized = (centred / np.sqrt(var + stash(self.attr("epsilon")))).astype(x.dtype)
        per = groups if scale.shape[0] == groups else x.shape[1]
        normalized = normalized.reshape(x.shape[0], per, -1)
        y = normalized * scale.reshape(1, per, 1) + bias.reshape(1, per, 1)
        return (y.reshape(x.shape).astype(x.dtype),)


@irdl_op_definition
class MeanVarianceNormOp(GraphOp):
    """ONNX MeanVarianceNormalization: ``(x - mean) / (std + 1e-9)`` with the mean and the
    standard deviation over ``axes`` (default ``[0, 2, 3]``); float16 / bfloat16 inputs are
    computed in float32."""

    name = "graph.mean_variance_norm"
    ONNX_OP: ClassVar = "MeanVarianceNormalization"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axes = ints_attr()
    traits = traits_def(Pure())
    DEFAULTS: ClassVar = {"axes": (0, 2, 3)}
    FACTS: ClassVar = _TrailingNorm.FACTS

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "X")
        for axis in cls.read_attr(props, "axes"):
            normalize_axis(int(axis), x.rank)
        return [result_like(x, x.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        acc = accumulator(x.dtype)
        axes = tuple(sorted({normalize_axis(int(a), x.ndim) for a in self.attr("axes")}))
        xs = x.astype(acc)
        centred = xs - xs.mean(axis=axes, keepdims=True)
        std = np.sqrt((centred * centred).mean(axis=axes, keepdims=True))
        return ((centred / (std + acc(1e-9))).astype(x.dtype),)


@irdl_op_definition
class BatchNormTrainingOp(GraphOp):
    """ONNX BatchNormalization with ``training_mode = 1`` whose model uses the running
    statistics: ``x`` normalised with its own mean and (population) variance over every
    axis but 1, then ``* scale + B``; the second and third results are
    ``input_mean * momentum + batch_mean * (1 - momentum)`` and the same for the variance.
    The importer picks it when those outputs are used; inference is ``graph.batch_norm``."""

    name = "graph.batch_norm_training"
    ONNX_OP: ClassVar = "BatchNormalization"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    var = operand_def(TensorType)
    output = result_def(TensorType)
    running_mean = result_def(TensorType)
    running_var = result_def(TensorType)
    epsilon = float_attr()
    momentum = float_attr()
    training_mode = int_attr()
    traits = traits_def(Pure())
    DEFAULTS: ClassVar = {"epsilon": 1e-5, "momentum": 0.9, "training_mode": 0}
    FACTS: ClassVar = OpFacts(
        FormatRole.ND_ONLY, FusionKind.OPAQUE, format_operands=(0,), precision=PrecisionRole.BLACK
    )

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        if cls.read_attr(props, "training_mode") != 1:
            raise ShapeError("running_mean / running_var are only produced with training_mode = 1")
        inference = {k: v for k, v in props.items() if k != "training_mode"}
        (y,) = BatchNormOp.infer_shapes(operands, inference)  # the operand checks
        stats = [require(tensor_type(operands[i]), what) for i, what in ((3, "mean"), (4, "var"))]
        return [y, *stats]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, scale, b, mean, var = inputs
        assert x is not None and scale is not None and b is not None
        assert mean is not None and var is not None
        acc, axes = accumulator(x.dtype), (0, *range(2, x.ndim))
        channels = (1, -1) + (1,) * (x.ndim - 2)
        xs = x.astype(acc)
        batch_mean, batch_var = xs.mean(axis=axes), xs.var(axis=axes)
        std = np.sqrt(batch_var + acc(self.attr("epsilon")))
        y = (xs - batch_mean.reshape(channels)) / std.reshape(channels)
        y = y * scale.astype(acc).reshape(channels) + b.astype(acc).reshape(channels)
        keep = acc(self.attr("momentum"))
        running = [
            s.astype(acc) * keep + new * (1 - keep)
            for s, new in ((mean, batch_mean), (var, batch_var))
        ]
        return y.astype(x.dtype), running[0].astype(mean.dtype), running[1].astype(var.dtype)


NORMALIZATION_OPS: list[type[GraphOp]] = [
    LayerNormOp,
    LayerNormStatsOp,
    RmsNormOp,
    GroupNormOp,
    MeanVarianceNormOp,
    BatchNormTrainingOp,
]
