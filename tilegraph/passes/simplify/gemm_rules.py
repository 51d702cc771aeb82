"""Gemm formation and absorption: MatMul + bias -> Gemm, transposes into transA/transB,
scalar scaling into alpha/beta (rules 35-37).

Folding a BatchNorm or a per-channel constant into MatMul/Gemm weights is
``fold-batchnorm``'s (``gemm-batchnorm``); these rules change no weight.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.binary import AddOp, DivOp, MulOp
from tilegraph.dialects.graph.linalg import GemmOp, MatMulOp
from tilegraph.dialects.graph.shape_ops import TransposeOp
from tilegraph.passes.simplify.match import (
    in_origin_view,
    is_float,
    make_typed,
    numpy_dtype,
    only_user,
    replace_with_ops,
    splat_value,
    tensor_type_of,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule

_GEMM_ATTRS = ("alpha", "beta", "transA", "transB")


def _gemm_attrs(op: GemmOp) -> dict[str, Any]:
    """The attributes ``op`` sets; None for absent ones (the ONNX default applies)."""
    return {k: (op.attr(k) if k in op.properties else None) for k in _GEMM_ATTRS}


def _rank(value: SSAValue) -> int | None:
    t = tensor_type_of(value)
    return None if t is None else t.rank


@simplify_rule
class MatMulAddToGemm(SimplifyRule):
    """``matmul(A, B) + bias`` (either operand order) -> ``gemm(A, B, bias)``.

    Legal when A and B are 2-D, the bias broadcasts unidirectionally to ``[M, N]`` (shape
    ``[]``, ``[N]``, ``[1, N]``, ``[M, 1]``, ``[M, N]``, ...) so the sum has the matmul's
    type, and the matmul has no other user. Exact for float32/float64 and integers (Gemm
    adds the bias in the same precision, alpha = beta = 1); not for float16/bfloat16, which
    MatMul rounds before the add and Gemm after it.
    """

    INFO = RuleInfo(
        35,
        "matmul-add-to-gemm",
        "matmul(A, B) + bias, bias + matmul(A, B)",
        "gemm(A, B, bias)",
        "2-D A and B; bias broadcasts to [M, N] without changing the result type; matmul "
        "has one user; not for 16-bit floats (rounding order)",
        "ORT TVM OM",
    )
    ROOTS = (AddOp,)

    def rewrite(self, op: AddOp, rewriter: PatternRewriter) -> None:
        dtype = numpy_dtype(op.output)
        if dtype is None or (dtype.kind == "f" and dtype.itemsize < 4) or dtype.kind == "b":
            return
        if not in_origin_view(op):
            return
        for product, bias in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            mm = product.owner
            if not isinstance(mm, MatMulOp) or only_user(product) is not op:
                continue
            if _rank(mm.lhs) != 2 or _rank(mm.rhs) != 2 or not in_origin_view(mm):
                continue
            gemm = make_typed(GemmOp, mm.lhs, mm.rhs, bias, like=op.output.type)
            if gemm is not None:
                replace_with_ops(rewriter, op, [gemm])
                return


def _is_2d_swap(op: TransposeOp) -> bool:
    perm = op.attr("perm")
    return _rank(op.data) == 2 and (perm is None or tuple(perm) == (1, 0))


@simplify_rule
class TransposeIntoGemm(SimplifyRule):
    """``gemm(transpose(A), B, C)`` -> ``gemm(A, B, C, transA = !transA)``, and likewise for
    B and transB, for a 2-D transpose (perm ``[1, 0]`` or absent).

    Exact: Gemm reads the same elements. The transpose stays if it has other users.
    """

    INFO = RuleInfo(
        36,
        "transpose-into-gemm",
        "gemm(transpose(A, [1, 0]), B), gemm(A, transpose(B, [1, 0]))",
        "gemm(A, B, transA / transB toggled)",
        "2-D transposes only; the transpose stays if it has other users",
        "ORT TVM GE OM PT",
    )
    ROOTS = (GemmOp,)

    def rewrite(self, op: GemmOp, rewriter: PatternRewriter) -> None:
        if not in_origin_view(op):
            return
        attrs = _gemm_attrs(op)
        operands: list[SSAValue | None] = [op.a, op.b, op.c]
        changed = False
        for i, flag in ((0, "transA"), (1, "transB")):
            value = operands[i]
            t = None if value is None else value.owner
            if isinstance(t, TransposeOp) and _is_2d_swap(t) and in_origin_view(t):
                operands[i] = t.data
                attrs[flag] = None if op.attr(flag) else 1
                changed = True
        if changed:
            gemm = make_typed(GemmOp, *operands, like=op.output.type, **attrs)
            if gemm is not None:
                replace_with_ops(rewriter, op, [gemm])


def power_of_two(s: float) -> bool:
    mantissa, _ = np.frexp(s)
    return bool(np.isfinite(s)) and abs(float(mantissa)) == 0.5


class _GemmScale(SimplifyRule):
    """``gemm(...) * s``, ``s * gemm(...)`` or ``gemm(...) / s`` with a constant scalar
    (splat) float ``s`` -> the gemm with ``alpha * s`` and ``beta * s`` (``/ s``).

    Legal when the gemm has no other user, the scale does not broadcast the result, and
    the new alpha and beta are finite float32 attributes.
    """

    ROOTS = (MulOp, DivOp)
    EXACT_ONLY = True

    def rewrite(self, op: MulOp | DivOp, rewriter: PatternRewriter) -> None:
        if not in_origin_view(op) or not is_float(op.output):
            return
        pairs = [(op.lhs, op.rhs)]
        if isinstance(op, MulOp):
            pairs.append((op.rhs, op.lhs))
        for product, scale in pairs:
            gemm = product.owner
            s = splat_value(scale)
            if not isinstance(gemm, GemmOp) or only_user(product) is not op:
                continue
            if not isinstance(s, float) or s == 0 or not np.isfinite(s):
                continue
            if self.EXACT_ONLY != power_of_two(s) or not in_origin_view(gemm):
                continue
            factor = s if isinstance(op, MulOp) else 1.0 / s
            attrs = _gemm_attrs(gemm)
            for k in ("alpha", "beta") if gemm.c is not None else ("alpha",):
                scaled = float(gemm.attr(k)) * factor
                if not np.isfinite(np.float32(scaled)):
                    return
                if self.EXACT_ONLY and float(np.float32(scaled)) != scaled:
                    return
                attrs[k] = scaled
            new = make_typed(GemmOp, gemm.a, gemm.b, gemm.c, like=op.output.type, **attrs)
            if new is not None:
                replace_with_ops(rewriter, op, [new])
                return


@simplify_rule
class GemmScalarMul(_GemmScale):
    """Rule 37 for ``s`` a power of two (``±2**k``): exact, since scaling by a power of two
    only changes exponents — except where the unscaled or the scaled result overflows or
    is subnormal in the result type. See :class:`_GemmScale` for the legality."""

    INFO = RuleInfo(
        37,
        "gemm-scalar-mul",
        "gemm(A, B, C) * s, s * gemm(...), gemm(...) / s  (s = ±2**k)",
        "gemm(A, B, C, alpha * s, beta * s)",
        "s a constant power-of-two float scalar; exact unless the result over/underflows; "
        "gemm has one user",
        "ORT TVM PT",
    )


@simplify_rule
class GemmScalarMulAny(_GemmScale):
    """Rule 37 for any other finite non-zero ``s`` (fast-math): ``alpha * s`` is rounded
    to float32, and ``(alpha * s) * AB`` rounds differently from ``(alpha * AB) * s``."""

    INFO = RuleInfo(
        37,
        "gemm-scalar-mul-any",
        "gemm(A, B, C) * s, s * gemm(...), gemm(...) / s  (s not a power of two)",
        "gemm(A, B, C, alpha * s, beta * s)",
        "rounding of alpha * s and of the product changes; gemm has one user",
        "ORT TVM PT",
        fast_math=True,
    )
    EXACT_ONLY = False
