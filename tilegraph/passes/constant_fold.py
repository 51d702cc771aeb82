"""``constant-fold{max-bytes=67108864 growth=4}``: evaluate what is known at compile time.

Three things become ``graph.constant``:

* an op whose operands are all constants, evaluated with its reference kernel — the code the
  interpreter runs, so a fold computes exactly what execution would;
* shape queries of what is static: ``graph.shape`` / ``graph.size`` of a static (part of a)
  shape, and ``graph.gather`` / ``graph.slice`` of a ``graph.shape`` whose selected dims are
  static, even when other dims are symbolic;
* ``graph.constant_of_shape`` with a constant shape (a case of the first).

Size-aware: a result over ``max-bytes`` is never materialised, nor one more than ``growth``
times the bytes of its operands once it exceeds :data:`GROWTH_EXEMPT_BYTES` (Expand, Tile and
ConstantOfShape would otherwise bloat the model) — unless the op only computes parameters:
every use of its results, directly or through other such ops, is a parameter operand (not
operand 0) of a heavy op (a convolution's filter, a matmul's weight, a bias). Those bytes
exist at run time anyway, and a filter left to compute would run as kernels on every call
and need a run-time FRACTAL_Z conversion (torchaudio's resampler builds its sinc filter
from a ``[80, 1] + [509]`` broadcast). A kernel that fails leaves the op alone;
the statistics say which op and why. Finally equal constants (same type and bytes) are shared.

Only ops in origin view are folded (the data of a constant is origin layout); ``Dropout`` is
left to ``algebraic-simplify`` (its mask is random in training mode).

Statistics: ``folded``, ``shape-queries``, ``bytes-folded``, ``deduplicated``,
``skipped-too-large``, ``skipped-growth``, ``parameters-grown`` (folds the growth limit let
through because they only compute parameters), ``kernel-failed(<op>: <reason>)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tilegraph.dialects.element_types import numpy_dtype_of
from tilegraph.dialects.graph import ConstantOp, GraphOp
from tilegraph.dialects.graph.constant_ops import ShapeOp, SizeOp
from tilegraph.dialects.graph.data_movement import ConcatOp, GatherOp, SliceOp
from tilegraph.dialects.graph.elementwise import DropoutOp
from tilegraph.dialects.graph.provenance import replace_located
from tilegraph.dialects.graph.shape_ops import ReshapeOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.registry import register_pass
from tilegraph.passes.simplify.match import constant_array, evaluate, in_origin_view
from tilegraph.passes.simplify.rule import RuleInfo, declare_rule
from tilegraph.passes.statistics import PassStatistics, start_pass

PASS_NAME = "constant-fold"

GROWTH_EXEMPT_BYTES = 64 << 10
"""Results up to this size fold whatever their growth (a small ConstantOfShape is fine)."""

declare_rule(
    RuleInfo(
        1,
        "constant-folding",
        "op(constants...)",
        "constant (the op's reference kernel)",
        "not above max-bytes, nor a result much larger than its inputs unless it only "
        "feeds heavy ops' parameters; a failing kernel leaves the op",
        "OO ORT TVM GE OM PT",
        implemented_by=PASS_NAME,
    )
)
declare_rule(
    RuleInfo(
        16,
        "reshape-concat-shape",
        "Reshape(x, Concat(constants, d, constants)) with one unknown 1-element piece d",
        "Reshape(x, constant shape with -1 for d)",
        "the constant pieces hold no -1 and no 0 that could make the -1 ambiguous",
        "ORT GE",
        implemented_by=PASS_NAME,
    )
)
declare_rule(
    RuleInfo(
        3,
        "constant-dedup",
        "two constants with equal type and bytes",
        "one constant",
        "elided constants (no data) are never merged",
        "ORT GE",
        implemented_by=PASS_NAME,
    )
)
declare_rule(
    RuleInfo(
        15,
        "shape-query-folding",
        "Shape/Size/Gather(Shape)/Slice(Shape) of static dims",
        "constant",
        "only the static part of a symbolic shape",
        "OO ORT GE OM",
        implemented_by=PASS_NAME,
    )
)


def _static_dim(d: object) -> int | None:
    return d if isinstance(d, int) and d >= 0 else None


def _shape_query(op: Operation) -> np.ndarray | None:
    """The value of a shape query over static dims, else None."""
    if isinstance(op, SizeOp):
        t = op.input.type
        n = t.num_elements() if isinstance(t, TensorType) else None
        return None if n is None else np.array(n, dtype=np.int64)
    if isinstance(op, ShapeOp):
        return _dims_at(op, _shape_positions(op))
    if isinstance(op, GatherOp | SliceOp):
        source = op.operands[0].owner
        if not isinstance(source, ShapeOp) or not _rest_constant(op):
            return None
        positions = _shape_positions(source)
        # The kernel applied to dim *positions* says which dims the query selects.
        inputs = [positions, *(constant_array(v) for v in op.operands[1:])]
        try:
            (selected,) = evaluate(op, inputs)
        except Exception:
            return None
        return _dims_at(source, selected)
    return None


def _rank(value: SSAValue) -> int:
    t = value.type
    return t.rank if isinstance(t, TensorType) else 0


def _shape_positions(shape_op: ShapeOp) -> np.ndarray:
    """The dim indices ``shape_op`` reports, in order (its ``start``/``end`` applied)."""
    start, end = ShapeOp._range(_rank(shape_op.input), shape_op.properties)
    return np.arange(start, end, dtype=np.int64)


def _dims_at(shape_op: ShapeOp, positions: np.ndarray) -> np.ndarray | None:
    t = shape_op.input.type
    if not isinstance(t, TensorType):
        return None
    dims = [_static_dim(t.origin_shape[int(p)]) for p in positions.reshape(-1)]
    if any(d is None for d in dims):
        return None
    return np.array(dims, dtype=np.int64).reshape(positions.shape)


def _reshape_with_minus_one(op: ReshapeOp) -> np.ndarray | None:
    """Rule 16: the constant shape, with -1 for the one unknown piece of a Concat shape.

    At run time the unknown piece ``d`` makes a valid reshape, so the element count equals
    ``d`` times the product of the other (resolved) dims; when that product is positive,
    ``-1`` infers exactly ``d``.
    """
    concat = op.shape.owner
    if not isinstance(concat, ConcatOp) or concat.attr("axis") not in (0, -1):
        return None
    data_type = op.data.type
    assert isinstance(data_type, TensorType)
    pieces: list[np.ndarray] = []
    unknown: int | None = None
    for piece in concat.inputs:
        array = constant_array(piece)
        if array is None:
            t = piece.type
            if unknown is not None or not isinstance(t, TensorType) or t.origin_shape != (1,):
                return None
            unknown = sum(p.size for p in pieces)
            array = np.array([-1], dtype=np.int64)
        pieces.append(array.reshape(-1).astype(np.int64))
    if unknown is None:
        return None
    shape = np.concatenate(pieces)
    for i, v in enumerate(shape):
        if i == unknown:
            continue
        copied = op.attr("allowzero") == 0 and v == 0 and i < data_type.rank
        dim = _static_dim(data_type.origin_shape[i]) if copied else int(v)
        if dim is None or dim <= 0:
            return None
    return shape


def _rest_constant(op: Operation) -> bool:
    return all(constant_array(v) is not None for v in op.operands[1:])


def _constant_operands(op: Operation) -> list[Operation]:
    """The constants ``op`` reads: with ``op``, what a value folded from it comes from."""
    return [v.owner for v in op.operands if isinstance(v.owner, ConstantOp)]


def _constant_like(array: np.ndarray, old: TensorType) -> ConstantOp:
    """A constant holding ``array`` typed as ``old`` (refined to static dims if needed)."""
    array = np.asarray(array, dtype=numpy_dtype_of(old.element_type))
    if not old.is_static:
        old = old.with_shape(list(array.shape))
    return ConstantOp(array, old)


def parameter_producers(block: Block) -> set[Operation]:
    """The ops of ``block`` that only compute parameters: every use of every result is a
    heavy op's operand other than its data operand 0, or an op of the set."""
    found: set[Operation] = set()
    for op in reversed(list(block.ops)):
        if not isinstance(op, GraphOp) or isinstance(op, ConstantOp) or not op.results:
            continue
        uses = [use for r in op.results for use in r.uses]
        if uses and all(_parameter_use(use.operation, use.index, found) for use in uses):
            found.add(op)
    return found


def _parameter_use(user: Operation, index: int, found: set[Operation]) -> bool:
    if user in found:
        return True
    return isinstance(user, GraphOp) and user.FACTS.heavy and index > 0


@dataclass
class _Folder:
    max_bytes: int
    growth: float
    stats: PassStatistics
    parameters: set[Operation] = field(default_factory=set[Operation])

    def fold_block(self, block: Block) -> None:
        self.parameters = parameter_producers(block)
        for op in list(block.ops):
            if isinstance(op, GraphOp) and not isinstance(op, ConstantOp):
                self.fold(op)
        self.dedup(block)

    def fold(self, op: GraphOp) -> None:
        if isinstance(op, DropoutOp) or not in_origin_view(op) or not op.results:
            return
        query = _shape_query(op)
        if query is not None:
            self.replace(op, (query,))
            self.stats.add("shape-queries")
            return
        if isinstance(op, ReshapeOp) and (shape := _reshape_with_minus_one(op)) is not None:
            new_shape = ConstantOp(shape)
            new_shape.output.name_hint = op.shape.name_hint
            reshape = ReshapeOp.make(
                op.data, new_shape, allowzero=op.allowzero, result_types=[op.reshaped.type]
            )
            reshape.results[0].name_hint = op.reshaped.name_hint
            replace_located(op, [new_shape, reshape])
            self.stats.add("rule.reshape-concat-shape")
            return
        inputs = [constant_array(v) for v in op.operands]
        if any(a is None for a in inputs):
            return
        in_bytes = sum(a.nbytes for a in inputs if a is not None)
        out_bytes = self.predicted_bytes(op)
        grows = op in self.parameters
        if out_bytes is not None and not self.fits(out_bytes, in_bytes, grows):
            return
        try:
            outputs = evaluate(op, inputs)
        except Exception as e:
            self.stats.add(f"kernel-failed({op.name}: {type(e).__name__}: {e})")
            return
        out_bytes = sum(o.nbytes for o in outputs)
        if not self.fits(out_bytes, in_bytes, grows):
            return
        if grows and self.grown(out_bytes, in_bytes):
            self.stats.add("parameters-grown")
        self.replace(op, outputs)
        self.stats.add("folded")
        self.stats.add("bytes-folded", sum(o.nbytes for o in outputs))

    def predicted_bytes(self, op: GraphOp) -> int | None:
        total = 0
        for r in op.results:
            t = r.type
            n = t.num_elements() if isinstance(t, TensorType) else None
            if n is None or not isinstance(t, TensorType):
                return None
            total += n * max(t.dtype.bits, 8) // 8
        return total

    def grown(self, out_bytes: int, in_bytes: int) -> bool:
        """Whether a result of ``out_bytes`` is past the growth limit over ``in_bytes`` of
        operands."""
        return out_bytes > GROWTH_EXEMPT_BYTES and out_bytes > self.growth * max(in_bytes, 1)

    def fits(self, out_bytes: int, in_bytes: int, may_grow: bool = False) -> bool:
        """Whether a result of ``out_bytes`` from ``in_bytes`` of operands is materialised
        (``may_grow``: a parameter, exempt from the growth limit); records why not."""
        if out_bytes > self.max_bytes:
            self.stats.add("skipped-too-large")
            return False
        if self.grown(out_bytes, in_bytes) and not may_grow:
            self.stats.add("skipped-growth")
            return False
        return True

    def replace(self, op: GraphOp, outputs: Sequence[np.ndarray]) -> None:
        constants: list[ConstantOp] = []
        for out, res in zip(outputs, op.results, strict=True):
            assert isinstance(res.type, TensorType)
            c = _constant_like(out, res.type)
            c.output.name_hint = res.name_hint
            constants.append(c)
        replace_located(op, constants, [c.output for c in constants], _constant_operands(op))

    def dedup(self, block: Block) -> None:
        first: dict[tuple[object, object], ConstantOp] = {}
        for op in list(block.ops):
            if not isinstance(op, ConstantOp) or op.value.array is None:
                continue
            key = (op.output.type, op.value.data)
            kept = first.setdefault(key, op)
            if kept is not op:
                Rewriter.replace_op(op, [], [kept.output])
                self.stats.add("deduplicated")


@register_pass
@dataclass(frozen=True)
class ConstantFoldPass(ModulePass):
    """Fold ops on constants and static shape queries into constants; share equal constants."""

    name = PASS_NAME

    max_bytes: int = 64 << 20
    growth: float = 4.0

    def __post_init__(self) -> None:
        if self.max_bytes < 0:
            raise ValueError(f"constant-fold: max-bytes must be >= 0, got {self.max_bytes}")
        if self.growth < 1:
            raise ValueError(f"constant-fold: growth must be >= 1, got {self.growth}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        folder = _Folder(self.max_bytes, self.growth, start_pass(self.name))
        for fn in op.walk():
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                folder.fold_block(fn.body.blocks[0])
