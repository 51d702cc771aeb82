"""Rule 40 (continued): Hugging Face's rotary embedding -> one ``graph.apply_rotary``.

LLaMA (and the models copying its attention) apply the rotary position embedding as
``x * cos + rotate_half(x) * sin`` with ``rotate_half(x) = concat(-x[..., h:], x[..., :h])``
and ``h`` half the last axis: two Slices, a Neg, a Concat, two Muls and an Add, five vector
kernels per tensor once fused. The half ``h`` is a constant in a static export and
``shape(x)[-1] / 2`` (Shape, Gather, Div, Unsqueeze) in a dynamic one; both spellings match.
The tables' last axis must be known and even (it fixes ``x``'s, which a dynamic reshape may
leave unknown); the op rounds where the chain does (:mod:`tilegraph.dialects.graph.rotary`).

GPT-J's ``rotate_every_two`` (also CodeGen's, Cohere's) is the interleaved form:
``reshape(concat(unsqueeze(-x[..., 1::2], -1), unsqueeze(x[..., ::2], -1), -1), x's
shape)`` (torch's ``stack(..., -1).flatten(-2)``), which becomes ``apply_rotary`` with
``interleaved = 1``. The two spellings share the rule: only the rotation's matcher differs.

A partial rotary (GPT-J's ``rotary_dim``, Phi's ``partial_rotary_factor``) then concatenates
the rotated part with the rest of the head: ``concat(apply_rotary(h[..., :r]), h[..., r:])``
is ``apply_rotary(h {rotary_dim = r})`` (``recompose-rotary-partial``), one kernel that
copies the pass-through columns of the rows it rotates.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.binary import AddOp, DivOp, MulOp
from tilegraph.dialects.graph.constant_ops import ShapeOp
from tilegraph.dialects.graph.data_movement import ConcatOp, GatherOp, SliceOp
from tilegraph.dialects.graph.elementwise import NegOp
from tilegraph.dialects.graph.rotary import ApplyRotaryOp
from tilegraph.dialects.graph.shape_ops import ReshapeOp, UnsqueezeOp
from tilegraph.dialects.graph.windows import known
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.simplify.match import (
    constant_array,
    constant_ints,
    ints_constant,
    is_float,
    made_by,
    new_constant,
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


def _last_axis_slice(
    value: SSAValue, rank: int, step: int = 1, single_use: bool = True
) -> tuple[SSAValue, SSAValue, SSAValue] | None:
    """``(data, starts, ends)`` of a Slice (single-use unless told) of one axis, the last,
    by ``step``."""
    s = made_by(value, SliceOp) if single_use else value.owner
    if not isinstance(s, SliceOp):
        return None
    if s.axes is None:
        return None
    axes = constant_ints(s.axes)
    if axes is None or len(axes) != 1 or axes[0] % rank != rank - 1:
        return None
    if constant_ints(s.steps) != (step,) if s.steps is not None else step != 1:
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


Rotation = tuple[SSAValue, list[Operation], bool]
"""A rotation's source, its decomposition (single-use intermediates) and whether its slices
stop at the rotary width (else they run to the end of the source's last axis)."""


def _rotate_half_of(value: SSAValue, width: int) -> Rotation | None:
    """``(x, ops, bounded)`` when ``value`` is ``concat(-x[..., h:w], x[..., :h])`` over
    the last axis with ``h = width / 2`` and ``w`` the width or the axis' end."""
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
    bounded = _stops_at_width(high[2], width, width)
    if bounded is None or not _is_half(high[1], x, width):
        return None
    slices = [neg.operands[0].owner, concat.operands[1].owner]
    return x, [concat, neg, *(s for s in slices if isinstance(s, Operation))], bounded


def _stops_at_width(end: SSAValue, width: int, lowest: int) -> bool | None:
    """A slice's ``ends``: True when in ``[lowest, width]`` (a step-2 slice from 0 keeps
    the same elements up to ``width - 1``: slice-of-slice folding clamps it so), False
    when it runs to the end of the axis, None otherwise."""
    ends = constant_ints(end)
    if ends is None or len(ends) != 1:
        return None
    return False if ends[0] >= _TO_END else (True if lowest <= ends[0] <= width else None)


def _unsqueezed_last(value: SSAValue, rank: int) -> SSAValue | None:
    """The input of a single-use Unsqueeze adding one last axis to a rank-``rank`` tensor."""
    unsqueeze = made_by(value, UnsqueezeOp)
    if unsqueeze is None or (axes := constant_ints(unsqueeze.axes)) is None or len(axes) != 1:
        return None
    return unsqueeze.data if axes[0] % (rank + 1) == rank else None


def _rotate_every_two_of(value: SSAValue, width: int) -> Rotation | None:
    """``(x, ops, bounded)`` when ``value`` is GPT-J's ``rotate_every_two`` of the first
    ``width`` elements of x's last axis (module docstring)."""
    reshape = made_by(value, ReshapeOp)
    rank = _rank(value)
    if reshape is None or rank is None:
        return None
    concat = made_by(reshape.operands[0], ConcatOp)
    if concat is None or len(concat.operands) != 2 or int(concat.attr("axis")) % (rank + 1) != rank:
        return None
    odd, even = (_unsqueezed_last(v, rank) for v in concat.operands)
    neg = made_by(odd, NegOp) if odd is not None else None
    if neg is None or even is None:
        return None
    high = _last_axis_slice(neg.operands[0], rank, 2)
    low = _last_axis_slice(even, rank, 2)
    if high is None or low is None or high[0] != low[0]:
        return None
    x = high[0]
    if (constant_ints(high[1]), constant_ints(low[1])) != ((1,), (0,)):
        return None
    ends = (_stops_at_width(high[2], width, width), _stops_at_width(low[2], width, width - 1))
    if None in ends:
        return None
    made = (*concat.operands, neg.operands[0], even)
    dead = [reshape, concat, neg, *(v.owner for v in made)]
    return x, [op for op in dead if isinstance(op, Operation)], all(ends)


def _rotated_part(value: SSAValue, rotation: Rotation, width: int) -> bool:
    """``value`` is ``source``, or ``source[..., :width]``: a partial rotary's rotated part
    (GPT-J's ``rotary_dim``, Phi's ``partial_rotary_factor``), which the rotation's slices
    read from ``source`` itself once slice-of-slice folding merged them (ends ``width``)."""
    source, _, bounded = rotation
    if value == source:
        return True
    rank = _rank(value) if bounded else None  # (open slices would read past the width)
    part = _last_axis_slice(value, rank, single_use=False) if rank else None
    if part is None or part[0] != source:
        return False
    return (constant_ints(part[1]), constant_ints(part[2])) == ((0,), (width,))


_ROTATIONS = ((_rotate_half_of, 0), (_rotate_every_two_of, 1))
"""Each rotation's matcher, with the ``interleaved`` attribute of the op it makes."""


def _fits(x: SSAValue, rotated: SSAValue, width: int, interleaved: int) -> bool:
    """x's last dim is the tables' (when known), and GPT-J's flatten gives x's shape back
    (not another split of the pairs)."""
    t = x.type
    if not isinstance(t, TensorType) or (known(t.origin_shape[-1]) and t.origin_shape[-1] != width):
        return False
    return not interleaved or rotated.type == t


@simplify_rule
class RecomposeRotaryHalf(SimplifyRule):
    """``x * cos + rotate_half(x) * sin`` -> ``apply_rotary(x, cos, sin)`` (module
    docstring)."""

    INFO = RuleInfo(
        40,
        "recompose-rotary-half",
        "x * cos + concat(-x[..., h:], x[..., :h]) * sin; x * cos + "
        "flatten(stack(-x[..., 1::2], x[..., ::2])) * sin",
        "apply_rotary(x, cos, sin {interleaved})",
        "h half of the last axis (a constant or shape(x)[-1] / 2); the interleaved pairs "
        "flattened back to x's shape; cos and sin's last dim known and even; single-use "
        "intermediates; bit-exact",
        "GE(ApplyRotaryPosEmb) ORT(RotaryEmbeddingFusion)",
    )
    ROOTS = (AddOp,)

    def rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        for plain_value, rotated_value in (op.operands, op.operands[::-1]):
            plain, rotated = made_by(plain_value, MulOp), made_by(rotated_value, MulOp)
            if plain is None or rotated is None:
                continue
            for new_ops, dead in _rotaries(plain, rotated):
                if replace_decomposition(rewriter, op, new_ops, [plain, rotated, *dead]):
                    return


def _rotaries(plain: MulOp, rotated: MulOp) -> Iterator[tuple[list[Operation], list[Operation]]]:
    """Each ``apply_rotary`` that ``plain + rotated`` may be (``plain = x * cos``,
    ``rotated = rotation(x) * sin``; the op last, after any reshape of its tables), with
    the rotation's decomposition."""
    for half_value, sin in (rotated.operands, rotated.operands[::-1]):
        width = _table_width(sin)
        for rotation, interleaved in _ROTATIONS if width else ():
            assert width is not None
            found = rotation(half_value, width)
            if found is None:
                continue
            pair = split_operands(plain, lambda v, r=found, w=width: _rotated_part(v, r, w))
            if pair is None or _table_width(pair[1], sin) != width:
                continue
            x = pair[0]
            if not is_float(x) or not _fits(x, half_value, width, interleaved):
                continue  # (an integer rotation stays: the op is a float op)
            tables: list[Operation] = []
            cos, sin_ = (_to_rank(t, _rank(x), tables) for t in (pair[1], sin))
            fused = ApplyRotaryOp.make(x, cos, sin_, interleaved=interleaved or None)
            assert isinstance(fused, ApplyRotaryOp)
            yield [*tables, fused], found[1]


def _to_rank(table: SSAValue, rank: int | None, ops: list[Operation]) -> SSAValue:
    """``table`` with 1s prepended up to ``rank`` (the broadcast the decomposition's Mul
    made implicitly; Pixtral's 2-D tables against ``[B, H, S, D]``): a constant reshaped,
    another value unsqueezed (new ops appended to ``ops``), so the op's tables have x's
    rank, as the rotary kernel reads them."""
    t = table.type
    if rank is None or not isinstance(t, TensorType) or t.rank >= rank:
        return table
    lead = rank - t.rank
    array = constant_array(table)
    if array is not None:
        op: Operation = new_constant(array.reshape((1,) * lead + array.shape), t)
    else:
        axes = ints_constant(list(range(lead)))
        ops.append(axes)
        op = UnsqueezeOp.make(table, axes)
    ops.append(op)
    return op.results[0]


@simplify_rule
class RecomposeRotaryPartial(SimplifyRule):
    """``concat(apply_rotary(h[..., :r], cos, sin), h[..., r:])`` -> ``apply_rotary(h, cos,
    sin {rotary_dim = r})`` (module docstring)."""

    INFO = RuleInfo(
        40,
        "recompose-rotary-partial",
        "concat(apply_rotary(h[..., :r], cos, sin), h[..., r:])",
        "apply_rotary(h, cos, sin {rotary_dim = r})",
        "r the tables' width (constant slice bounds); the second slice runs to h's end; "
        "single-use rotary and slices; bit-exact",
        "GE(ApplyRotaryPosEmb) ORT(RotaryEmbeddingFusion)",
    )
    ROOTS = (ConcatOp,)

    def rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        assert isinstance(op, ConcatOp)
        rank = _rank(op.results[0])
        if rank is None or len(op.operands) != 2 or int(op.attr("axis")) % rank != rank - 1:
            return
        rotary = made_by(op.operands[0], ApplyRotaryOp)
        if rotary is None or rotary.attr("rotary_dim"):
            return
        width = _table_width(rotary.cos, rotary.sin)
        part = _last_axis_slice(rotary.x, rank)
        rest = _last_axis_slice(op.operands[1], rank)
        if width is None or part is None or rest is None or part[0] != rest[0]:
            return
        bounds = (constant_ints(part[1]), constant_ints(part[2]), constant_ints(rest[1]))
        head = part[0].type
        if bounds != ((0,), (width,), (width,)) or not isinstance(head, TensorType):
            return
        ends = constant_ints(rest[2])
        if ends is None or not (ends[0] >= _TO_END or ends == (head.origin_shape[-1],)):
            return  # (the rest must run to h's end)
        fused = ApplyRotaryOp.make(
            part[0],
            rotary.cos,
            rotary.sin,
            interleaved=rotary.attr("interleaved") or None,
            rotary_dim=width,
        )
        dead = [rotary, *(v.owner for v in (rotary.x, op.operands[1]))]
        replace_decomposition(rewriter, op, [fused], [d for d in dead if isinstance(d, Operation)])
