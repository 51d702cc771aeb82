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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import f32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, result_def, traits_def
from xdsl.traits import Pure

from tilegraph.dialects.graph.base import GraphOp, ShapeError, float_attr, int_attr, tensor_type
from tilegraph.dialects.graph.facts import FormatRole, FusionKind, OpFacts
from tilegraph.dialects.graph.shape_utils import normalize_axis, require, result_like
from tilegraph.dialects.graph.windows import accumulator
from tilegraph.dialects.layout_type import TensorType
from tilegraph.symbolic.dims import dims_compatible

_Slots = Sequence[SSAValue | None]
_Props = Mapping[str, Attribute]


class _TrailingNorm(GraphOp):
    """Shared shape function and axis handling of the trailing-axes normalisations."""

    axis = int_attr()
    epsilon = float_attr()
    stash_type = int_attr()
    traits = traits_def(Pure())
    DEFAULTS: ClassVar = {"axis": -1, "epsilon": 1e-5, "stash_type": 1}
    FACTS: ClassVar = OpFacts(FormatRole.ND_ONLY, FusionKind.OPAQUE, format_operands=(0,))

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

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, scale = inputs[:2]
        assert x is not None and scale is not None
        acc = self._compute_type(x)
        xs = x.astype(acc)
        ms = (xs * xs).mean(axis=self._axes(x), keepdims=True)
        y = xs / np.sqrt(ms + acc(self.attr("epsilon"))) * scale.astype(acc)
        return (y.astype(x.dtype),)


NORMALIZATION_OPS: list[type[GraphOp]] = [LayerNormOp, LayerNormStatsOp, RmsNormOp]
