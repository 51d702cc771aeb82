"""The rotary position embedding as Hugging Face's LLaMA spells it: one op for the chain
``x * cos + rotate_half(x) * sin``, or with ``interleaved = 1`` GPT-J's
``x * cos + rotate_every_two(x) * sin``.

``rotate_half(x) = concat(-x[..., d/2:], x[..., :d/2])`` over the last axis (size ``d``, even),
and ``cos`` / ``sin`` are full-width tables (``[..., d]``, broadcast against ``x``: in LLaMA
``[B, 1, seq, d]`` against ``[B, heads, seq, d]``). ONNX's RotaryEmbedding
(:class:`~.transformer_ops.RotaryEmbeddingOp`) takes half-width caches instead, which is
the same only when the two halves of each table agree; a graph cannot show that of tables
computed at run time, so the recompose rule (``recompose-rotary-half``) targets this op.

The op computes in ``x``'s type and rounds where the chain does: ``x * cos``, then the
rotated half times ``sin``, then their sum (the negation and the concatenation are exact),
so it equals the decomposition bit for bit. It runs as one vector kernel
(:mod:`tilegraph.lowering.conversion.tiling.rotary`), as CANN's ApplyRotaryPosEmb does.

``rotate_every_two`` (GPT-J, CodeGen, Cohere) rotates adjacent pairs instead of halves:
``(x0, x1, x2, x3, ...) -> (-x1, x0, -x3, x2, ...)``. It is ``rotate_half`` of each pair,
read as a ``[..., d / 2, 2]`` view of the last axis, so the interleaved op is the half op on
that view (the tables viewed alike): same products, same sum, same rounding. The attribute
is ONNX RotaryEmbedding's ``interleaved``.

A partial rotary (GPT-J's ``rotary_dim``, Phi's ``partial_rotary_factor``) rotates the first
``rotary_dim`` elements of the last axis and passes the rest through unchanged (ONNX
RotaryEmbedding's ``rotary_embedding_dim``; 0, the default, is the whole axis); the tables
are ``rotary_dim`` wide then.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure

from tilegraph.dialects.graph.base import GraphOp, ShapeError, int_attr, tensor_type
from tilegraph.dialects.graph.facts import ND_OPAQUE
from tilegraph.dialects.graph.shape_utils import broadcast_shapes, require, result_like
from tilegraph.dialects.graph.windows import known
from tilegraph.dialects.layout_type import TensorType


def rotate_half(x: np.ndarray) -> np.ndarray:
    """``concat(-x2, x1)`` of the two halves of the last axis."""
    x1, x2 = np.split(x, 2, axis=-1)
    return np.concatenate([-x2, x1], axis=-1)


def pairs_view(x: np.ndarray) -> np.ndarray:
    """The ``[..., d / 2, 2]`` view of the last axis whose ``rotate_half`` is
    ``rotate_every_two`` of ``x``."""
    return x.reshape(*x.shape[:-1], x.shape[-1] // 2, 2)


@irdl_op_definition
class ApplyRotaryOp(GraphOp):
    """``x * cos + rotate_half(x) * sin`` with full-width ``cos`` / ``sin`` tables, all
    three broadcast together (module docstring); the result has ``x``'s type. With
    ``interleaved = 1`` the rotation is ``rotate_every_two`` (adjacent pairs)."""

    name = "graph.apply_rotary"
    x = operand_def(TensorType)
    cos = operand_def(TensorType)
    sin = operand_def(TensorType)
    output = result_def(TensorType)
    interleaved = int_attr()
    rotary_dim = int_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"interleaved": 0, "rotary_dim": 0}

    @property
    def rotated_width(self) -> int | None:
        """How many leading elements of the last axis rotate: ``rotary_dim``, or the whole
        axis (None when its size is unknown)."""
        x = self.x.type
        assert isinstance(x, TensorType)
        whole = x.origin_shape[-1]
        return int(self.attr("rotary_dim")) or (whole if known(whole) else None)

    @property
    def is_interleaved(self) -> bool:
        """The rotation pairs adjacent elements (GPT-J) rather than the halves (LLaMA)."""
        return bool(self.attr("interleaved"))

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "x")
        tables = [require(tensor_type(operands[i]), n) for i, n in ((1, "cos"), (2, "sin"))]
        if x.dtype.numpy.kind != "f":
            raise ShapeError(f"apply_rotary takes a floating-point x, not {x.element_type}")
        for t in tables:
            if t.element_type != x.element_type:
                raise ShapeError("apply_rotary's cos and sin must have x's element type")
        whole = x.origin_shape[-1] if x.rank else 0
        size = int(cls.read_attr(props, "rotary_dim")) or whole
        if x.rank == 0 or (known(size) and size % 2):
            raise ShapeError(
                f"apply_rotary rotates an even part of the last axis, got {size} of "
                f"{list(x.origin_shape)}"
            )
        if known(whole) and size > whole:
            raise ShapeError(
                f"apply_rotary's rotary_dim {size} is past the last axis of {whole} "
                f"(x {list(x.origin_shape)})"
            )
        rotated = [*x.origin_shape[:-1], size]
        shape = broadcast_shapes(rotated, *(t.origin_shape for t in tables))
        if len(shape) != x.rank:
            raise ShapeError("apply_rotary's cos and sin must broadcast to x")
        rest = [whole] if cls.read_attr(props, "rotary_dim") else [shape[-1]]  # (tables: d)
        return [result_like(x, [*shape[:-1], *rest])]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, cos, sin = inputs
        assert x is not None and cos is not None and sin is not None
        width = int(self.attr("rotary_dim")) or x.shape[-1]
        x, passed = x[..., :width], x[..., width:]
        dtype, shape = x.dtype, np.broadcast_shapes(x.shape, cos.shape, sin.shape)
        if self.is_interleaved:  # the half rotation of each pair (module docstring)
            x, cos, sin = (pairs_view(a) for a in np.broadcast_arrays(x, cos, sin))
        out = x * cos + rotate_half(x) * sin  # each product rounded in x's type, as the chain
        passed = np.broadcast_to(passed, (*shape[:-1], passed.shape[-1]))
        return (np.concatenate([out.reshape(shape), passed], axis=-1).astype(dtype, copy=False),)


ROTARY_OPS: list[type[GraphOp]] = [ApplyRotaryOp]
