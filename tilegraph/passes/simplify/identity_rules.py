"""Ops that compute their input: ``identity``, inference ``dropout``, casts to the same type,
cast chains (rules 5-8) and data-movement ops that move nothing (rule 14; ``noop-pad`` is in
:mod:`.pad_rules`).

Every rule here replaces a value by one of *equal type* (shape, element type and formats), so
no consumer sees a change; a cast chain is shortened only when the first cast is exact for
every input value (a widening), since a narrowing first cast rounds or wraps values that the
direct cast would keep (onnxruntime#4039; onnx-mlir disabled its unconditional version).
"""

from __future__ import annotations

from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.data_movement import (
    ConcatOp,
    ExpandOp,
    SliceOp,
    SplitOp,
    TileOp,
)
from tilegraph.dialects.graph.elementwise import CastOp, DropoutOp, IdentityOp
from tilegraph.dialects.graph.operand_values import static_dim
from tilegraph.dialects.graph.shape_ops import FlattenOp
from tilegraph.dialects.graph.slicing import END_OF_DIM, slice_bounds
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType
from tilegraph.formats.dims import Dim
from tilegraph.passes.simplify.match import (
    constant_array,
    constant_ints,
    dims_known,
    in_origin_view,
    make_typed,
    replace_with_ops,
    replace_with_value,
    tensor_type_of,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule

# ---- rule 5: identity -------------------------------------------------------------------------


@simplify_rule
class IdentityElim(SimplifyRule):
    """``graph.identity x`` -> ``x``. Always exact; fires when the result type equals
    ``x``'s (it always does for a verified identity in origin view)."""

    INFO = RuleInfo(
        5,
        "identity",
        "graph.identity x",
        "x",
        "only in origin view and when the result type equals x's",
        "OO ORT TVM GE OM PT",
    )
    ROOTS = (IdentityOp,)

    def rewrite(self, op: IdentityOp, rewriter: PatternRewriter) -> None:
        if in_origin_view(op):
            replace_with_value(rewriter, op, op.input)


# ---- rule 6: dropout at inference -------------------------------------------------------------


def _inference_dropout(op: DropoutOp) -> bool:
    """Whether the dropout certainly runs in inference mode: ``training_mode`` is absent or
    a constant false (a non-constant flag could be true at run time)."""
    if op.training_mode is None:
        return True
    flag = constant_array(op.training_mode)
    return flag is not None and flag.size > 0 and not bool(flag.reshape(-1)[0])


@simplify_rule
class DropoutInference(SimplifyRule):
    """``graph.dropout x [, ratio] [, training_mode]`` -> ``x`` when ``training_mode`` is
    absent or a constant false. ``graph.dropout`` has no mask result (tilegraph does not
    model it), so "mask unused" always holds. A non-constant ``training_mode`` blocks the
    rule: it could select training at run time."""

    INFO = RuleInfo(
        6,
        "dropout-inference",
        "graph.dropout x (training_mode absent or constant false)",
        "x",
        "not with a non-constant training_mode; graph.dropout has no mask result",
        "OO ORT TVM GE OM PT",
    )
    ROOTS = (DropoutOp,)

    def rewrite(self, op: DropoutOp, rewriter: PatternRewriter) -> None:
        if in_origin_view(op) and _inference_dropout(op):
            replace_with_value(rewriter, op, op.input)


# ---- rule 7: cast to the same type ------------------------------------------------------------


@simplify_rule
class CastToSameType(SimplifyRule):
    """``graph.cast x {to = T}`` -> ``x`` when ``T`` is ``x``'s element type (the result
    type then equals ``x``'s). Exact: the conversion of a type to itself is the identity."""

    INFO = RuleInfo(
        7,
        "cast-to-same-type",
        "graph.cast x {to = elt(x)}",
        "x",
        "only when the result type equals x's",
        "OO ORT TVM GE OM PT",
    )
    ROOTS = (CastOp,)

    def rewrite(self, op: CastOp, rewriter: PatternRewriter) -> None:
        if in_origin_view(op):
            replace_with_value(rewriter, op, op.input)


# ---- rule 8: cast chains ----------------------------------------------------------------------

_SIGNIFICAND_BITS: dict[DType, int] = {
    DType.float16: 11,
    DType.bfloat16: 8,
    DType.float32: 24,
    DType.float64: 53,
}
"""Precision of each float type (with the implicit bit): integers up to ``2**bits`` are exact."""

_MAX_EXPONENT: dict[DType, int] = {
    DType.float16: 15,
    DType.bfloat16: 127,
    DType.float32: 127,
    DType.float64: 1023,
}

_INT_VALUE_BITS: dict[DType, tuple[int, bool]] = {
    DType.int4: (3, True),
    DType.int8: (7, True),
    DType.int16: (15, True),
    DType.int32: (31, True),
    DType.int64: (63, True),
    DType.uint8: (8, False),
    DType.uint16: (16, False),
    DType.uint32: (32, False),
    DType.uint64: (64, False),
}
"""Magnitude bits (without the sign) and signedness of each integer type."""


def widens_exactly(src: DType, dst: DType) -> bool:
    """Whether every value of ``src`` is exactly representable in ``dst``, so that casting
    ``src -> dst`` loses nothing.

    bool fits everything (0 and 1); a float fits a float with at least its precision and
    exponent range; an integer fits an integer of the same or wider range (an unsigned one
    needs a strictly wider signed type) and a float whose significand holds all its
    magnitude bits (int8 -> float16, int16 -> float32, int32 -> float64). Floats never fit
    integers or bool, integers never fit bool; fp8 is left out (no exact model here).
    """
    if src == dst or src == DType.bool:
        return True
    if src in _SIGNIFICAND_BITS:
        if dst not in _SIGNIFICAND_BITS:
            return False
        return (
            _SIGNIFICAND_BITS[dst] >= _SIGNIFICAND_BITS[src]
            and _MAX_EXPONENT[dst] >= _MAX_EXPONENT[src]
        )
    if src not in _INT_VALUE_BITS:
        return False
    bits, signed = _INT_VALUE_BITS[src]
    if dst in _SIGNIFICAND_BITS:
        return bits <= _SIGNIFICAND_BITS[dst]
    if dst not in _INT_VALUE_BITS:
        return False
    dst_bits, dst_signed = _INT_VALUE_BITS[dst]
    if signed and not dst_signed:
        return False
    return dst_bits >= bits


def _dtype(t: TensorType | None) -> DType | None:
    return None if t is None else t.dtype


@simplify_rule
class CastChain(SimplifyRule):
    """``cast(cast(x, T1), T2)`` -> ``cast(x, T2)``, or ``x`` when ``T2`` is ``x``'s type,
    provided the first cast widens exactly (:func:`widens_exactly`: f16 -> f32, f32 -> f64,
    int8 -> int16/32/64, int32 -> f64, bool -> anything, ...).

    The first cast then carries every value unchanged, so converting the same value from
    ``T1`` or from ``x``'s type to ``T2`` gives the same result (rounding and truncation
    depend only on the value). A narrowing first cast (f32 -> f16, int32 -> int8,
    f32 -> int) must not be skipped: it rounds, saturates or wraps values that the direct
    cast keeps (onnxruntime#4039). Out-of-range float -> int conversions are undefined in
    ONNX either way. The inner cast stays for its other users.
    """

    INFO = RuleInfo(
        8,
        "cast-chain",
        "graph.cast(graph.cast(x, T1), T2)",
        "graph.cast(x, T2), or x when T2 is x's element type",
        "only when x -> T1 is an exact widening (f16->f32, f32->f64, int8->int32, int32->f64, "
        "bool->any); never after a narrowing cast (ORT#4039)",
        "OO ORT TVM OM",
    )
    ROOTS = (CastOp,)

    def rewrite(self, op: CastOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, CastOp) or not in_origin_view(op) or not in_origin_view(inner):
            return
        x = inner.input
        src, mid = _dtype(tensor_type_of(x)), _dtype(tensor_type_of(inner.output))
        if src is None or mid is None or not widens_exactly(src, mid):
            return
        if replace_with_value(rewriter, op, x):
            return
        new = make_typed(CastOp, x, like=op.output.type, **op.conversion_attrs())
        if new is not None:
            replace_with_ops(rewriter, op, [new])


# ---- rule 14: data-movement ops that move nothing ---------------------------------------------


def _slice_is_whole(dim: Dim, start: int, end: int, step: int) -> bool:
    """Whether ONNX Slice of one axis with these parameters takes every element in order."""
    n = static_dim(dim)
    if n is None:  # symbolic or unknown: only the spelled-out "from 0 to the end"
        return step == 1 and (start == 0 or start <= -END_OF_DIM) and end >= END_OF_DIM
    first, _, length = slice_bounds(n, start, end, step)
    return length == n and (n <= 1 or (step == 1 and first == 0))


@simplify_rule
class NoopSlice(SimplifyRule):
    """``slice(x, starts, ends, axes, steps)`` -> ``x`` when every sliced axis is taken
    whole, in order (constant parameters; start 0 and end past the dim after ONNX clamping,
    step 1; a symbolic dim needs an end >= INT32_MAX). Checked on the values, not the
    result type: a slice of an UNKNOWN dim has an UNKNOWN result however much it cuts."""

    INFO = RuleInfo(
        14,
        "noop-slice",
        "slice(x, ...) covering every element",
        "x",
        "constant starts/ends/axes/steps; step 1 from 0 to the end of each sliced axis",
        "OO ORT TVM GE OM PT",
    )
    ROOTS = (SliceOp,)

    def rewrite(self, op: SliceOp, rewriter: PatternRewriter) -> None:
        t = tensor_type_of(op.data)
        starts, ends = constant_ints(op.starts), constant_ints(op.ends)
        if t is None or starts is None or ends is None or not in_origin_view(op):
            return
        axes = tuple(range(len(starts))) if op.axes is None else constant_ints(op.axes)
        steps = (1,) * len(starts) if op.steps is None else constant_ints(op.steps)
        if axes is None or steps is None or not len(axes) == len(ends) == len(steps):
            return
        for a, s, e, st in zip(axes, starts, ends, steps, strict=True):
            if not -t.rank <= a < t.rank or not _slice_is_whole(t.origin_shape[a], s, e, st):
                return
        replace_with_value(rewriter, op, op.data)


@simplify_rule
class NoopTile(SimplifyRule):
    """``tile(x, repeats)`` -> ``x`` when ``repeats`` is a constant of all 1s."""

    INFO = RuleInfo(
        14,
        "noop-tile",
        "tile(x, [1, ..., 1])",
        "x",
        "constant repeats",
        "OO ORT TVM OM",
    )
    ROOTS = (TileOp,)

    def rewrite(self, op: TileOp, rewriter: PatternRewriter) -> None:
        repeats = constant_ints(op.repeats)
        if repeats is not None and all(r == 1 for r in repeats) and in_origin_view(op):
            replace_with_value(rewriter, op, op.input)


@simplify_rule
class NoopExpand(SimplifyRule):
    """``expand(x, shape)`` -> ``x`` when the result type equals ``x``'s and no dim of
    ``x`` is UNKNOWN (broadcasting to the own shape copies; an UNKNOWN dim could be a 1
    that the shape broadcasts)."""

    INFO = RuleInfo(
        14,
        "noop-expand",
        "expand(x, s) with result type == type(x)",
        "x",
        "not with UNKNOWN dims in x",
        "OO ORT TVM OM",
    )
    ROOTS = (ExpandOp,)

    def rewrite(self, op: ExpandOp, rewriter: PatternRewriter) -> None:
        if dims_known(tensor_type_of(op.input)) and in_origin_view(op):
            replace_with_value(rewriter, op, op.input)


@simplify_rule
class NoopSplit(SimplifyRule):
    """``split(x)`` with a single result -> ``x`` (one piece is the whole axis: the sizes
    sum to the dim), when the result type equals ``x``'s."""

    INFO = RuleInfo(
        14,
        "noop-split",
        "split(x) into one piece",
        "x",
        "only when the result type equals x's",
        "OO ORT TVM OM",
    )
    ROOTS = (SplitOp,)

    def rewrite(self, op: SplitOp, rewriter: PatternRewriter) -> None:
        if len(op.outputs) == 1 and in_origin_view(op):
            replace_with_value(rewriter, op, op.input)


@simplify_rule
class NoopConcat(SimplifyRule):
    """``concat(x)`` of a single operand -> ``x``."""

    INFO = RuleInfo(
        14,
        "noop-concat",
        "concat(x) of one operand",
        "x",
        "only when the result type equals x's",
        "OO ORT TVM GE OM PT",
    )
    ROOTS = (ConcatOp,)

    def rewrite(self, op: ConcatOp, rewriter: PatternRewriter) -> None:
        if len(op.inputs) == 1 and in_origin_view(op):
            replace_with_value(rewriter, op, op.inputs[0])


@simplify_rule
class EmptyConcatOperand(SimplifyRule):
    """``concat(a, e, b)`` -> ``concat(a, b)`` when ``e`` has a literal 0 along the axis: a
    decoder's first step concatenates its empty KV cache (past length 0) with the step's
    keys, and an empty operand has nothing for a kernel to move."""

    INFO = RuleInfo(
        None,
        "empty-concat-operand",
        "concat(a, e, b) with e of size 0 along the axis",
        "concat(a, b)",
        "at least one operand is not empty; the result type is unchanged",
        "ORT TVM PT",
    )
    ROOTS = (ConcatOp,)

    def rewrite(self, op: ConcatOp, rewriter: PatternRewriter) -> None:
        if not in_origin_view(op):
            return
        axis = int(op.attr("axis"))

        def empty(v: SSAValue) -> bool:
            t = tensor_type_of(v)
            return t is not None and t.origin_shape[axis] == 0

        kept = [v for v in op.inputs if not empty(v)]
        if not kept or len(kept) == len(op.inputs):
            return
        # a concat of one operand left is noop-concat's
        concat = make_typed(ConcatOp, *kept, like=op.results[0].type, axis=axis)
        if concat is not None:
            replace_with_ops(rewriter, op, [concat])


@simplify_rule
class NoopFlatten(SimplifyRule):
    """``flatten(x, axis)`` -> ``x`` when the result type equals ``x``'s: ``x`` is 2-D and
    axis 1, or the dim the flatten makes 1 is already a literal 1. Sound with UNKNOWN dims:
    a 2-D result equals a 2-D ``x`` only in those cases, and UNKNOWN dims are not merged
    with other dims there."""

    INFO = RuleInfo(
        14,
        "noop-flatten",
        "flatten(x) with result type == type(x)",
        "x",
        "only when the result type equals x's (x is 2-D)",
        "OO ORT OM",
    )
    ROOTS = (FlattenOp,)

    def rewrite(self, op: FlattenOp, rewriter: PatternRewriter) -> None:
        if in_origin_view(op):
            replace_with_value(rewriter, op, op.input)
