"""Scalar scales on a matmul's operands moved onto its product.

torch's SDPA decomposition (the dynamo export of nn.MultiheadAttention) scales q and k by
``a = scale ** 0.5`` each before ``q · kᵀ`` (it keeps the fp16 product in range);
``(q·a)(k·a)ᵀ = (q·kᵀ)·a²``. With the scale on the scores, the attention pattern
(``lowering/analysis/attention_pattern.py``) sees its ``MatMul -> Mul -> [mask] ->
Softmax -> MatMul`` shape and ``fuse-ops`` claims it as the flash kernel, as for BERT.

Exact when both scales are powers of two (a product of powers of two only moves
exponents); otherwise the element roundings of ``q·a`` and ``k·a`` are replaced by one of
the scores, so that variant runs only under ``fast-math``, as rule 37's does.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.binary import MulOp
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.passes.simplify.gemm_rules import power_of_two
from tilegraph.passes.simplify.match import (
    in_origin_view,
    is_float,
    make_typed,
    only_user,
    replace_with_ops,
    scalar_constant,
    splat_value,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule


def _scaled(value: SSAValue) -> tuple[SSAValue, float] | None:
    """``(x, s)`` when ``value`` is ``x * s`` (either order) for a finite float scalar
    constant ``s`` that does not broadcast ``x``, and the product has no other user."""
    mul = value.owner
    if not isinstance(mul, MulOp) or only_user(value) is None or not in_origin_view(mul):
        return None
    for x, scale in ((mul.lhs, mul.rhs), (mul.rhs, mul.lhs)):
        s = splat_value(scale)
        if isinstance(s, float) and np.isfinite(s) and x.type == mul.output.type:
            return x, s
    return None


class _OperandScales(SimplifyRule):
    """``matmul(x * a, y * b)`` (either scale may be absent) -> ``matmul(x, y) * (a·b)``."""

    ROOTS = (MatMulOp,)
    EXACT_ONLY = True

    def rewrite(self, op: MatMulOp, rewriter: PatternRewriter) -> None:
        if not in_origin_view(op) or not is_float(op.output):
            return
        lhs, rhs = _scaled(op.lhs), _scaled(op.rhs)
        if lhs is None and rhs is None:
            return
        scales = [p[1] for p in (lhs, rhs) if p is not None]
        if self.EXACT_ONLY != all(power_of_two(s) for s in scales):
            return
        factor = float(np.prod(scales))
        x = op.lhs if lhs is None else lhs[0]
        y = op.rhs if rhs is None else rhs[0]
        product = make_typed(MatMulOp, x, y, like=op.output.type)
        if product is None:
            return
        scale = scalar_constant(factor, op.output)
        mul = make_typed(MulOp, product, scale, like=op.output.type)
        if mul is None or not np.isfinite(float(splat_value(scale.output) or 0.0)):
            # the product of the scales overflows the element type: keep them apart
            product.drop_all_references()
            return
        replace_with_ops(rewriter, op, [product, scale, mul])


@simplify_rule
class MatMulOperandScales(_OperandScales):
    INFO = RuleInfo(
        None,
        "matmul-operand-scales",
        "matmul(x * a, y * b), a and b float scalar constants (±2**k; either may be absent)",
        "matmul(x, y) * (a * b)",
        "exact unless the product over/underflows; each scaled operand has no other user",
        "ORT(MatMulScaleFusion) PT",
    )


@simplify_rule
class MatMulOperandScalesAny(_OperandScales):
    INFO = RuleInfo(
        None,
        "matmul-operand-scales-any",
        "matmul(x * a, y * b), a or b not a power of two (torch's SDPA q and k scales)",
        "matmul(x, y) * (a * b)",
        "one rounding of the scores instead of one of each scaled operand element",
        "ORT(MatMulScaleFusion) PT",
        fast_math=True,
    )
    EXACT_ONLY = False
