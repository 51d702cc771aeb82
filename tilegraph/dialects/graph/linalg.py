"""Linear-algebra graph ops: ``graph.matmul`` (ONNX MatMul) and ``graph.gemm`` (ONNX Gemm).

Both are heavy cube ops: ND_ONLY (a matrix has no NCHW axes; they stop origin-format
propagation), OUT_ELEMWISE_FUSABLE (a bias/activation epilogue fuses into them), with a cube
variant on FRACTAL_NZ (GE stores MatMul/Gemm weights as FRACTAL_NZ too) and a plain ND one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import prod
from typing import ClassVar

import numpy as np
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, result_def, traits_def
from xdsl.traits import Pure

from tilegraph.dialects.graph.base import (
    GraphOp,
    ShapeError,
    float_attr,
    int_attr,
    shape_text,
    tensor_type,
)
from tilegraph.dialects.graph.facts import (
    FormatRole,
    FusionKind,
    KernelVariant,
    OpCost,
    OpFacts,
    PrecisionRole,
)
from tilegraph.dialects.graph.shape_utils import (
    broadcast_shapes,
    require,
    require_equal_dims,
    same_element_type,
)
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.formats.dims import Dim, dims_compatible, is_static


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    """float16 (and other narrow floats) are computed in float32, as the cube accumulates."""
    if dtype.kind == "f" and dtype.itemsize < 4:
        return np.dtype(np.float32)
    return dtype


def _static(dims: Sequence[Dim]) -> list[int] | None:
    return [int(d) for d in dims] if all(is_static(d) for d in dims) else None


@irdl_op_definition
class MatMulOp(GraphOp):
    """numpy ``matmul``: batch dims broadcast, a 1-D operand is a vector (its dim dropped).

    ``%y = graph.matmul %a, %b : (!layout.tensor<2x3x4xf32>, !layout.tensor<4x5xf32>) -> ...``
    """

    name = "graph.matmul"
    ONNX_OP: ClassVar = "MatMul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    FACTS: ClassVar = OpFacts(
        role=FormatRole.ND_ONLY,
        fusion=FusionKind.OUT_ELEMWISE_FUSABLE,
        heavy=True,
        precision=PrecisionRole.WHITE,
        kernels=(
            KernelVariant((Format.FRACTAL_NZ, Format.FRACTAL_NZ), (Format.FRACTAL_NZ,), "cube"),
            KernelVariant((Format.ND, Format.ND), (Format.ND,), "plain"),
        ),
    )

    @staticmethod
    def _dims(a: TensorType, b: TensorType) -> tuple[list[Dim], Dim, Dim, Dim, list[Dim]]:
        """(batch, M, K, N, result shape); M/N are 1 for a 1-D lhs/rhs."""
        if a.rank == 0 or b.rank == 0:
            raise ShapeError("matmul operands must have rank >= 1, got a scalar")
        sa, sb = list(a.origin_shape), list(b.origin_shape)
        m, k = (1, sa[0]) if a.rank == 1 else sa[-2:]
        k2, n = (sb[0], 1) if b.rank == 1 else sb[-2:]
        if is_static(k) and is_static(k2) and k != k2:
            raise ShapeError(
                f"contraction dims differ: lhs {shape_text(sa)} has K = {k}, "
                f"rhs {shape_text(sb)} has K = {k2}"
            )
        require_equal_dims(k, k2, "MatMul: K of the lhs equals K of the rhs")
        batch = broadcast_shapes(sa[:-2], sb[:-2])
        shape = batch + ([m] if a.rank > 1 else []) + ([n] if b.rank > 1 else [])
        return batch, m, k if is_static(k) else k2, n, shape

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        a = require(tensor_type(operands[0]), "lhs")
        b = require(tensor_type(operands[1]), "rhs")
        elt = same_element_type([a, b])
        return [TensorType(cls._dims(a, b)[-1], elt)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        a, b = inputs
        assert a is not None and b is not None
        acc = _compute_dtype(a.dtype)
        return (np.matmul(a.astype(acc), b.astype(acc)).astype(a.dtype),)

    def cost(self) -> OpCost:
        """flops = 2 * M * N * K * prod(batch)."""
        a, b = self.lhs.type, self.rhs.type
        assert isinstance(a, TensorType) and isinstance(b, TensorType)
        batch, m, k, n, _ = self._dims(a, b)
        dims = _static([*batch, m, k, n])
        return OpCost(flops=2 * prod(dims) if dims else 0, bytes=super().cost().bytes)


@irdl_op_definition
class GemmOp(GraphOp):
    """ONNX Gemm: ``Y = alpha * A' @ B' + beta * C`` with ``A' = transA ? A^T : A`` (2-D).

    C is optional and broadcasts unidirectionally to ``[M, N]``.
    """

    name = "graph.gemm"
    ONNX_OP: ClassVar = "Gemm"
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    c = opt_operand_def(TensorType)
    output = result_def(TensorType)
    alpha = float_attr()
    beta = float_attr()
    transA = int_attr()
    transB = int_attr()
    traits = traits_def(Pure())
    DEFAULTS: ClassVar = {"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0}
    FACTS: ClassVar = OpFacts(
        role=FormatRole.ND_ONLY,
        fusion=FusionKind.OUT_ELEMWISE_FUSABLE,
        heavy=True,
        precision=PrecisionRole.WHITE,
        kernels=(
            KernelVariant(
                (Format.FRACTAL_NZ, Format.FRACTAL_NZ, Format.ND), (Format.FRACTAL_NZ,), "cube"
            ),
            KernelVariant((Format.ND, Format.ND, Format.ND), (Format.ND,), "plain"),
        ),
    )

    @classmethod
    def _mkn(cls, a: TensorType, b: TensorType, props: Mapping[str, Attribute]) -> list[Dim]:
        for t, what in ((a, "A"), (b, "B")):
            if t.rank != 2:
                shape = shape_text(t.origin_shape)
                raise ShapeError(f"gemm operand {what} must be 2-D, got {shape}")
        m, k = a.origin_shape[::-1] if cls.read_attr(props, "transA") else a.origin_shape
        k2, n = b.origin_shape[::-1] if cls.read_attr(props, "transB") else b.origin_shape
        if is_static(k) and is_static(k2) and k != k2:
            raise ShapeError(f"contraction dims differ: A' has K = {k}, B' has K = {k2}")
        require_equal_dims(k, k2, "Gemm: K of A' equals K of B'")
        return [m, k if is_static(k) else k2, n]

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        a = require(tensor_type(operands[0]), "A")
        b = require(tensor_type(operands[1]), "B")
        c = tensor_type(operands[2]) if len(operands) > 2 else None
        elt = same_element_type([a, b] if c is None else [a, b, c])
        m, _, n = cls._mkn(a, b, props)
        if c is not None:
            cs = list(c.origin_shape)
            target = [m, n][2 - len(cs) :] if len(cs) <= 2 else None
            if target is None or not all(
                d == 1 or dims_compatible(d, t) for d, t in zip(cs, target, strict=True)
            ):
                raise ShapeError(
                    f"C {shape_text(cs)} does not broadcast to the result {shape_text([m, n])}"
                )
        return [TensorType([m, n], elt)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        a, b, c = (list(inputs) + [None])[:3]
        assert a is not None and b is not None
        acc = _compute_dtype(a.dtype)
        a2 = a.astype(acc).T if self.attr("transA") else a.astype(acc)
        b2 = b.astype(acc).T if self.attr("transB") else b.astype(acc)
        y = acc.type(self.attr("alpha")) * (a2 @ b2)
        if c is not None:
            y = y + acc.type(self.attr("beta")) * c.astype(acc)
        return (y.astype(a.dtype),)

    def cost(self) -> OpCost:
        """flops = 2 * M * N * K."""
        a, b = self.a.type, self.b.type
        assert isinstance(a, TensorType) and isinstance(b, TensorType)
        dims = _static(self._mkn(a, b, self.properties))
        return OpCost(flops=2 * prod(dims) if dims else 0, bytes=super().cost().bytes)


LINALG_OPS: list[type[GraphOp]] = [MatMulOp, GemmOp]
