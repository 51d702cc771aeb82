"""``apply-precision{mode=... keep-dtype=FILE keep=NAME,...}``: ATC's precision modes on the graph.

Under a mode that lowers the graph's float32 (``force_fp16``, ``allow_mix_precision``,
``allow_mix_precision_fp16``, ``allow_mix_precision_bf16``; :mod:`tilegraph.target`), each
graph op of the entry functions decides its compute type, in program order:

* an op on the keep-list (``keep-dtype`` file, ``keep`` entries;
  :mod:`~tilegraph.passes.keep_dtype`) keeps the model's types;
* ``force_fp16``: every op that has a float16 form runs in float16: its float32 operands are
  cast to float16 and its float32 results become float16 — when its shape function accepts
  that (an op whose result type is fixed, a comparison, a Cast to float32, a constant, keeps
  its types);
* mixed modes: the op's ``precision`` fact (:class:`~tilegraph.dialects.graph.facts.PrecisionRole`,
  ATC's ``precision_reduce``): white ops run in the reduced type, black ops keep float32,
  gray ops are reduced when every non-constant float operand already is (they follow
  their inputs).

Where a value's type changes between its producer and a consumer a ``graph.cast`` is
inserted (once per value and type); the function's results are cast back, so the model's
inputs and outputs keep their declared types. A float32 value that went to float16 and
back is never folded to the float32 value (the round trip rounds); a float16 value cast
to float32 and back is (``cast-chain`` in O1 folds it; this pass reuses the float16 value
directly). Constants cast here become float16 constants in O1's constant folding.

Other modes change nothing (a keep-list under ``origin`` / ``must_keep_origin_dtype``
does nothing, as in ATC; under the cube-only modes ``fp16``, ``allow_fp32_to_fp16``, ...
it is an error: those modes round the cube's inputs at tiling time, per kernel, where no
keep-list reaches). ``mode`` empty: the module's target; given: recorded as the target.

Statistics: ``reduced-ops``, ``kept-ops`` (float32 ops left in float32), ``casts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.base import GraphOp, ShapeError
from tilegraph.dialects.graph.constant_ops import ConstantOp
from tilegraph.dialects.graph.elementwise import CastOp, onnx_dtype_code
from tilegraph.dialects.graph.facts import PrecisionRole
from tilegraph.dialects.graph.provenance import locate
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType
from tilegraph.passes.keep_dtype import (
    KeepDtypeError,
    KeepList,
    read_keep_dtype,
    resolve_keep_list,
)
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import PassStatistics, start_pass
from tilegraph.target import PrecisionMode, TargetError, pin_target, precision_mode

_SHORT = {DType.float16: "f16", DType.bfloat16: "bf16", DType.float32: "f32"}


def _dtype(value: SSAValue) -> DType | None:
    t = value.type
    return t.dtype if isinstance(t, TensorType) else None


class _Rewrite:
    """One function's rewrite: the original type of each retyped value, the casts made."""

    def __init__(self, low: DType, stats: PassStatistics):
        self.low = low
        self.stats = stats
        self.original: dict[SSAValue, DType] = {}
        """Values this pass retyped -> their type before."""
        self.casts: dict[tuple[SSAValue, DType], SSAValue] = {}
        self.cast_ops: set[Operation] = set()
        self.created: list[tuple[SSAValue, DType]] = []
        """The keys of :attr:`casts` in the order they were made (to undo a failed try)."""

    def origin(self, value: SSAValue) -> DType | None:
        return self.original.get(value) or _dtype(value)

    def converted(self, value: SSAValue, to: DType, before: Operation) -> SSAValue:
        """``value`` as a ``to`` tensor: itself, a cast made before, or a new cast inserted
        before ``before`` (located at it)."""
        if _dtype(value) == to:
            return value
        owner = value.owner
        if isinstance(owner, CastOp) and (owner.output, to) in self.casts:
            return self.casts[(owner.output, to)]
        if isinstance(owner, CastOp) and _dtype(owner.input) == to and to == self.low:
            return owner.input  # a reduced value cast up: its source is the reduced value
        found = self.casts.get((value, to))
        if found is None:
            cast = CastOp.make(value, to=onnx_dtype_code(to))
            if value.name_hint:
                cast.results[0].name_hint = f"{value.name_hint}_{_SHORT[to]}"
            Rewriter.insert_op(cast, InsertPoint.before(before))
            locate([cast], before.location)
            self.cast_ops.add(cast)
            found = self.casts[(value, to)] = cast.results[0]
            self.created.append((value, to))
        return found

    def undo_casts_since(self, mark: int) -> None:
        """Erase the casts made since ``len(created)`` was ``mark`` that nothing uses."""
        for key in self.created[mark:]:
            cast = self.casts[key]
            if not cast.uses:
                del self.casts[key]
                assert isinstance(cast.owner, Operation)
                self.cast_ops.discard(cast.owner)
                Rewriter.erase_op(cast.owner)
        self.created[mark:] = [k for k in self.created[mark:] if k in self.casts]


def _float_operands(op: Operation, rewrite: _Rewrite) -> list[SSAValue]:
    """``op``'s operands that were float32 before the pass."""
    return [v for v in op.operands if rewrite.origin(v) == DType.float32]


def _wants_low(op: GraphOp, mode: PrecisionMode, rewrite: _Rewrite) -> bool:
    """Whether the policy of ``mode`` puts ``op`` in the reduced type (before checking
    that its shape function allows it)."""
    if not mode.mixed:
        return True
    role = op.FACTS.precision
    if role is PrecisionRole.WHITE:
        return True
    if role is PrecisionRole.BLACK:
        return False
    inputs = [v for v in _float_operands(op, rewrite) if not isinstance(v.owner, ConstantOp)]
    return bool(inputs) and all(_dtype(v) == rewrite.low for v in inputs)


def _reduced_types(op: GraphOp, operands: Sequence[SSAValue], low: DType) -> list[Attribute] | None:
    """``op``'s result types with ``operands``, if every float32 result becomes ``low``."""
    replacement = dict(zip(op.operands, operands, strict=True))
    slots = [None if v is None else replacement[v] for v in op.operand_slots()]
    try:
        inferred = op.infer_shapes(slots, op.properties)
    except (ShapeError, ValueError, TypeError, NotImplementedError):
        return None
    if len(inferred) != len(op.results):
        return None
    types: list[Attribute] = []
    reduced = False
    for res, want in zip(op.results, inferred, strict=True):
        old = res.type
        if isinstance(old, TensorType) and old.dtype == DType.float32:
            if want.dtype != low:
                return None
            types.append(old.with_shape(old.origin_shape, element_type_of(low)))
            reduced = True
        else:
            types.append(old)
    return types if reduced else None


def _rewrite_op(op: GraphOp, rewrite: _Rewrite, reduce: bool) -> bool:
    """Give ``op`` operands of its compute type (casts) and, reduced, its results the
    reduced type; whether it was reduced."""
    low = rewrite.low
    if reduce and any(_dtype(r) == DType.float32 for r in op.results):
        mark = len(rewrite.created)
        operands = [
            rewrite.converted(v, low, op) if rewrite.origin(v) == DType.float32 else v
            for v in op.operands
        ]
        types = _reduced_types(op, operands, low)
        if types is not None:
            op.operands = operands
            for res, new in zip(list(op.results), types, strict=True):
                if new != res.type:
                    retyped = Rewriter.replace_value_with_new_type(res, new)
                    rewrite.original[retyped] = DType.float32
            rewrite.stats.add("reduced-ops")
            return True
        rewrite.undo_casts_since(mark)
    restore = [
        rewrite.converted(v, origin, op)
        if (origin := rewrite.origin(v)) is not None and origin != _dtype(v)
        else v
        for v in op.operands
    ]
    if any(a is not b for a, b in zip(restore, op.operands, strict=True)):
        op.operands = restore
    if any(_dtype(r) == DType.float32 for r in op.results):
        rewrite.stats.add("kept-ops")
    return False


def _restore_other_uses(rewrite: _Rewrite, handled: set[Operation]) -> None:
    """Uses of retyped values by ops this pass did not visit (``func.return``, ops nested
    in regions) get the value cast back to its original type, right after its producer."""
    for value, origin in list(rewrite.original.items()):
        uses = [
            u
            for u in value.uses
            if u.operation not in handled and u.operation not in rewrite.cast_ops
        ]
        if not uses:
            continue
        producer = value.owner
        assert isinstance(producer, Operation)
        cast = CastOp.make(value, to=onnx_dtype_code(origin))
        if value.name_hint:
            cast.results[0].name_hint = f"{value.name_hint}_{_SHORT[origin]}"
        Rewriter.insert_op(cast, InsertPoint.after(producer))
        locate([cast], producer.location)
        rewrite.stats.add("casts")
        for use in uses:
            use.operation.operands = [
                cast.results[0] if i == use.index else v
                for i, v in enumerate(use.operation.operands)
            ]


def apply_precision(
    fn: func.FuncOp, mode: PrecisionMode, keep: KeepList, stats: PassStatistics
) -> None:
    """Rewrite ``fn``'s top-level graph ops for ``mode`` (see the module docstring)."""
    low = DType(mode.graph_type)
    rewrite = _Rewrite(low, stats)
    handled: set[Operation] = set()
    for op in list(fn.body.block.ops):
        if isinstance(op, func.ReturnOp):
            continue
        if isinstance(op, GraphOp) and not op.regions:
            reduce = not keep.keeps(op) and _wants_low(op, mode, rewrite)
            _rewrite_op(op, rewrite, reduce)
            handled.add(op)
    _restore_other_uses(rewrite, handled)
    stats.add("casts", len(rewrite.created))


@register_pass
@dataclass(frozen=True)
class ApplyPrecisionPass(ModulePass):
    """ATC's precision modes as graph rewrites (module docstring)."""

    name = "apply-precision"

    mode: str = ""
    """A precision value (:data:`tilegraph.target.PRECISIONS`); empty: the module's."""
    keep_dtype: str = ""
    """A keep-dtype file (ATC's ``--keep_dtype``; :mod:`tilegraph.passes.keep_dtype`)."""
    keep: tuple[str, ...] = ()
    """Keep-dtype entries given inline (same syntax as the file's lines)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        try:
            target = pin_target(op, f"pass '{self.name}'", precision=self.mode)
            mode = precision_mode(target.precision)
            entries = [*(read_keep_dtype(self.keep_dtype) if self.keep_dtype else ()), *self.keep]
            if not mode.graph_type:
                if entries and mode.cube:
                    raise KeepDtypeError(
                        f"keep-dtype: precision '{target.precision}' rounds the cube's inputs "
                        "per kernel; a keep-list needs force_fp16 or an allow_mix_precision mode"
                    )
                return
            functions = [f for f in op.walk() if isinstance(f, func.FuncOp) and f.body.blocks]
            ops = [o for f in functions for o in f.walk()]
            keep = resolve_keep_list(entries, ops)
        except (TargetError, KeepDtypeError) as e:
            raise PassFailedException(f"apply-precision: {e}") from None
        for fn in functions:
            apply_precision(fn, mode, keep, stats)


KeepDtype = str | Path | Sequence[str] | None
"""A keep-list as callers give it: a keep-dtype file, or its entries; None: none."""


def precision_prefix(precision: str, keep_dtype: KeepDtype = None) -> str:
    """The ``apply-precision`` pass that starts the pipeline of ``compile()`` /
    ``tilegraph-run`` for the target's ``precision`` and a keep-list, or "" when the
    precision does not rewrite the graph and there is no keep-list (the default
    precision's pipeline is unchanged)."""
    mode = precision_mode(precision)
    if keep_dtype is None or (isinstance(keep_dtype, Sequence) and not keep_dtype):
        return str(ApplyPrecisionPass().pipeline_pass_spec()) if mode.graph_type else ""
    if isinstance(keep_dtype, str | Path):
        spec = ApplyPrecisionPass(keep_dtype=str(keep_dtype)).pipeline_pass_spec()
    else:
        spec = ApplyPrecisionPass(keep=tuple(keep_dtype)).pipeline_pass_spec()
    return str(spec)
