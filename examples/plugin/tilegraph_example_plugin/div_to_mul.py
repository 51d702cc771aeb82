"""``div-to-mul``: ``x / c`` -> ``x * (1 / c)`` when every element of ``c`` is ``±2**k``."""

from dataclasses import dataclass

import numpy as np
from tilegraph.dialects.graph.binary import DivOp, MulOp
from tilegraph.passes.simplify import match
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)


class DivByPowerOfTwo(RewritePattern):
    """Bit-exact: ``x / 2**k`` and ``x * 2**-k`` round the same real number once. Needs a
    float16/32/64 constant ``c`` (any shape) of powers of two whose reciprocals are finite."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DivOp, rewriter: PatternRewriter) -> None:
        c = match.constant_array(op.rhs)
        if c is None or c.dtype.kind != "f" or not match.in_origin_view(op):
            return
        with np.errstate(divide="ignore", over="ignore"):
            inverse = np.reciprocal(c)
        if np.all(np.abs(np.frexp(c)[0]) == 0.5) and np.all(np.isfinite(inverse)):
            one_over_c = match.new_constant(inverse, match.tensor_type_of(op.rhs))
            mul = match.make_typed(MulOp, op.lhs, one_over_c.output, like=op.output.type)
            if mul is not None:
                match.replace_with_ops(rewriter, op, [one_over_c, mul])


@dataclass(frozen=True)
class DivToMulPass(ModulePass):
    """Rewrite x / c into x * (1/c) where every element of c is ±2**k (bit-exact).

    Dead ops left behind (the old constant) are erased by xDSL's greedy applier."""

    name = "div-to-mul"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([DivByPowerOfTwo()])).rewrite_module(op)
