"""Rule 40 (continued): a 16-bit RMSNorm computed in float32 between Casts -> one RMSNorm.

A ``.half()`` transformer (Hugging Face's LLaMA and T5 norms) computes its RMSNorm in
float32 and casts back: ``gamma * cast16(x32 / sqrt(mean(x32²) + eps))`` with
``x32 = cast32(x)``. After ``recompose-rms-norm`` that is ``gamma * cast16(rms_norm(
cast32(x), 1))``: three vector kernels. ``graph.rms_norm`` with ``stash_type`` 1 (its
default, ONNX RMSNormalization's) on the 16-bit ``x`` computes the same in float32 (its
kernel widens the input, as CANN's RmsNorm does) and rounds once at its end, where the
decomposition rounds the normalised value to 16 bits before the product with ``gamma``:
the one op is the more exact by up to an ulp of the 16-bit type.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.binary import MulOp
from tilegraph.dialects.graph.elementwise import CastOp
from tilegraph.dialects.graph.normalization import RmsNormOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.simplify.match import (
    constant_array,
    made_by,
    replace_decomposition,
    split_operands,
)
from tilegraph.passes.simplify.recompose_rules import RECOMPOSE_PEERS, fits_normalized
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule

NARROW = ("f16", "bf16")
"""The 16-bit float types whose norms a half export computes in float32."""


def _element(value: SSAValue) -> str | None:
    t = value.type
    return str(t.element_type) if isinstance(t, TensorType) else None


@simplify_rule
class RecomposeRmsNormInFloat32(SimplifyRule):
    """``gamma * cast16(rms_norm(cast32(x), 1))`` -> ``rms_norm(x, gamma)`` (module
    docstring)."""

    INFO = RuleInfo(
        40,
        "recompose-rms-norm-f32",
        "gamma * cast16(rms_norm(cast32(x16), 1))",
        "rms_norm(x16, gamma) (computing in float32)",
        "fp16 / bf16 x, constant gamma, single-use intermediates; rounds once, where the "
        "decomposition rounds before gamma (up to an ulp of x's type)",
        RECOMPOSE_PEERS,
    )
    ROOTS = (MulOp,)

    def rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        split = split_operands(op, lambda v: made_by(v, CastOp) is not None)
        if split is None or constant_array(split[1]) is None:
            return
        down_value, gamma = split
        down = made_by(down_value, CastOp)
        assert down is not None
        norm = made_by(down.operands[0], RmsNormOp)
        if norm is None or norm.attr("stash_type") != 1:
            return
        ones = constant_array(norm.operands[1])
        if ones is None or not np.all(ones == 1):
            return
        up = made_by(norm.operands[0], CastOp)
        if up is None:
            return
        x = up.operands[0]
        narrow = _element(x)
        if narrow not in NARROW or _element(up.results[0]) != "f32":
            return
        if _element(down.results[0]) != narrow or _element(gamma) != narrow:
            return
        axis = norm.attr("axis")
        if not fits_normalized(gamma, x, axis):
            return
        fused = RmsNormOp.make(x, gamma, axis=axis, epsilon=norm.attr("epsilon"))
        replace_decomposition(rewriter, op, [fused], [down, norm, up])
