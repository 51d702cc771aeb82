"""Rule 40 (continued): Hugging Face's rotary embedding -> one ``graph.apply_rotary``.

LLaMA (and the models copying its attention) apply the rotary position embedding as
``x * cos + rotate_half(x) * sin`` with ``rotate_half(x) = concat(-x[..., h:], x[..., :h])``
and ``h`` half the last axis: two Slices, a Neg, a Concat, two Muls and an Add, five vector
kernels per tensor once fused. The half ``h`` is a constant in a static export and
``shape(x)[-1] / 2`` (Shape, Gather, Div, Unsqueeze) in a dynamic one; both spellings match.
The tables' last axis must be known and even (it fixes ``x``'s, which a dynamic reshape may
leave unknown); the op rounds where the chain does (:mod:`tilegraph.dialects.graph.rotary`).
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.binary import AddOp, DivOp, MulOp
from tilegraph.dialects.graph.constant_ops import ShapeOp
from tilegraph.dialects.graph.data_movement import ConcatOp, GatherOp, SliceOp
from tilegraph.dialects.graph.elementwise import NegOp
from tilegraph.dialects.graph.rotary import ApplyRotaryOp
from tilegraph.dialects.graph.shape_ops import UnsqueezeOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.simplify.match import (
    constant_ints,
    is_float,
    made_by,
    replace_decomposition,
    split_operands,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule

_TO_END = 2**31 - 1
"""An ``ends`` at least this large runs to the end of the axis (torch exports INT64_MAX)."""


def _rank(value: SSAValue) -> int | None:
    t = value.type
    return t.rank if isinstance(t, TensorType) else None


def _table_width(*tables: SSAValue) -> int | None:
    """The tables' common last dim, when known, even and at least 2."""
    widths = set()
    for t in tables:
        ty = t.type
        if not isinstance(ty, TensorType) or ty.rank == 0:
            return None
        widths.add(ty.origin_shape[-1])
    (width,) = widths if len(widths) == 1 else (None,)
    return width if isinstance(width, int) and width >= 2 and width % 2 == 0 else None


def _last_axis_slice(value: SSAValue, rank: int) -> tuple[SSAValue, SSAValue, SSAValue] | None:
    """``(data, starts, ends)`` of a single-use Slice of one axis, the last, by step 1."""
    s = made_by(value, SliceOp)
    if s is None or s.axes is None:
        return None
    axes = constant_ints(s.axes)
    if axes is None or len(axes) != 1 or axes[0] % rank != rank - 1:
        return None
    if s.steps is not None and constant_ints(s.steps) != (1,):
        return None
    return s.data, s.starts, s.ends


def _is_half(bound: SSAValue, x: SSAValue, width: int) -> bool:
    """``bound`` is ``[width / 2]``, or ``unsqueeze(shape(x)[-1] / 2)`` of x itself."""
    if (ints := constant_ints(bound)) is not None:
        return ints == (width // 2,)
    unsqueeze = bound.owner
    if not isinstance(unsqueeze, UnsqueezeOp):
        return False
    div = unsqueeze.operands[0].owner
    if not isinstance(div, DivOp) or constant_ints(div.operands[1]) != (2,):
        return False
    gather = div.operands[0].owner
    if not isinstance(gather, GatherOp) or int(gather.attr("axis")) != 0:
        return False
    shape = gather.operands[0].owner
    rank = _rank(x)
    if not isinstance(shape, ShapeOp) or shape.operands[0] != x or rank is None:
        return False
    if shape.attr("start") not in (None, 0) or shape.attr("end") is not None:
        return False
    index = constant_ints(gather.operands[1])
    return index is not None and len(index) == 1 and index[0] % rank == rank - 1


def _rotate_half_of(value: SSAValue, width: int) -> tuple[SSAValue, list[Operation]] | None:
    """``(x, ops)`` when ``value`` is ``concat(-x[..., h:], x[..., :h])`` over the last
    axis with ``h = width / 2``; ``ops`` the decomposition (single-use intermediates)."""
    concat = made_by(value, ConcatOp)
    rank = _rank(value)
    if concat is None or rank is None or len(concat.operands) != 2:
        return None
    if int(concat.attr("axis")) % rank != rank - 1:
        return None
    neg = made_by(concat.operands[0], NegOp)
    if neg is None:
        return None
    high = _last_axis_slice(neg.operands[0], rank)
    low = _last_axis_slice(concat.operands[1], rank)
    if high is None or low is None or high[0] != low[0]:
        return None
    x = high[0]
    if constant_ints(low[1]) != (0,) or not _is_half(low[2], x, width):
        return None
    high_end = constant_ints(high[2])
    if high_end is None or not (high_end[0] >= _TO_END or high_end == (width,)):
        return None
    if not _is_half(high[1], x, width):
        return None
    slices = [neg.operands[0].owner, concat.operands[1].owner]
    return x, [concat, neg, *(s for s in slices if isinstance(s, Operation))]


@simplify_rule
class RecomposeRotaryHalf(SimplifyRule):
    """``x * cos + rotate_half(x) * sin`` -> ``apply_rotary(x, cos, sin)`` (module
    docstring)."""

    INFO = RuleInfo(
        40,
        "recompose-rotary-half",
        "x * cos + concat(-x[..., h:], x[..., :h]) * sin",
        "apply_rotary(x, cos, sin)",
        "h half of the last axis (a constant or shape(x)[-1] / 2); cos and sin's last dim "
        "known and even; single-use intermediates; bit-exact",
        "GE(ApplyRotaryPosEmb) ORT(RotaryEmbeddingFusion)",
    )
    ROOTS = (AddOp,)

    def rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        for plain_value, rotated_value in (op.operands, op.operands[::-1]):
            plain, rotated = made_by(plain_value, MulOp), made_by(rotated_value, MulOp)
            if plain is None or rotated is None:
                continue
            for half_value, sin in (rotated.operands, rotated.operands[::-1]):
                width = _table_width(sin)
                found = _rotate_half_of(half_value, width) if width else None
                if found is None or width is None:
                    continue
                x, dead = found
                pair = split_operands(plain, lambda v, x=x: v == x)
                if pair is None or _table_width(pair[1], sin) != width or not is_float(x):
                    continue  # (an integer rotation stays: the op is a float op)
                fused = ApplyRotaryOp.make(x, pair[1], sin)
                if replace_decomposition(rewriter, op, [fused], [plain, rotated, *dead]):
                    return
