"""``cancel-trans-data``: remove conversions that a better placement makes unnecessary.

Rules (each a pattern below, applied to a fixpoint; dead conversions are erased):

* ``inverse-pair`` — ``trans_data(trans_data(x: A -> B) -> A)`` is ``x``;
* ``compose-chain`` — ``trans_data(trans_data(x: A -> B) -> C)`` becomes one direct
  ``trans_data(x: A -> C)`` when that conversion exists (NC1HWC0 -> ND never does, so such a
  chain stays as it is, through the origin view);
* ``merge-identical`` — conversions of one value to one type are one conversion (GE's
  breadth fusion);
* ``hoist-through-agnostic`` — an agnostic op whose format operands all arrive through
  conversions from the same storage S' to S and whose results are all converted back from S
  to S' runs in S' instead: both sides of conversions disappear. (This is the sink/hoist move
  of the design; it only fires when it removes conversions.)
* ``sink-below-unary`` — ``f(trans_data(x: ND -> FRACTAL_NZ))`` with ``f`` a unary
  elementwise op (GELU between two matmuls) becomes ``trans_data(f(x))``: the same number
  of conversions, but ``f`` then runs in ND, in the epilogue of the matmul that produced
  ``x``, and the conversion in the prologue of the matmul that consumes it (``nd2nz`` on
  the way in), so no kernel of its own is left to either.

The pass never changes what a value computes; it only removes, shortens or moves
conversions.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.graph import FormatRole, FusionKind, GraphOp
from tilegraph.dialects.graph.provenance import Located
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format, conversion_exists
from tilegraph.passes.layout_plan import KERNEL_ATTR, ORIGIN_VARIANT, SHARED_ATTR, origin_view
from tilegraph.passes.registry import register_pass
from tilegraph.passes.simplify.rule import RuleInfo, declare_rule

declare_rule(
    RuleInfo(
        41,
        "trans-data-pairs-and-siblings",
        "trans_data inverse pairs, chains, identical siblings, conversions around agnostic ops",
        "fewer or shorter conversions",
        "a chain stays when its direct conversion does not exist (NC1HWC0 <-> ND)",
        "GE",
        implemented_by="cancel-trans-data",
    )
)


class InversePair(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransDataOp, rewriter: PatternRewriter) -> None:
        first = op.input.owner
        if isinstance(first, TransDataOp) and first.input.type == op.output.type:
            rewriter.replace(op, [], [first.input])


class ComposeChain(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransDataOp, rewriter: PatternRewriter) -> None:
        first = op.input.owner
        if not isinstance(first, TransDataOp) or first.input.type == op.output.type:
            return
        source, target = first.input.type, op.output.type
        assert isinstance(source, TensorType) and isinstance(target, TensorType)
        if source.storage_format != target.storage_format and not conversion_exists(
            source.storage_format, target.storage_format
        ):
            return
        direct = TransDataOp(first.input, target)
        direct.results[0].name_hint = op.output.name_hint
        rewriter.replace(op, [direct])


class MergeIdentical(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransDataOp, rewriter: PatternRewriter) -> None:
        for use in op.input.uses:
            other = use.operation
            if (
                other is not op
                and isinstance(other, TransDataOp)
                and other.output.type == op.output.type
                and other.parent is op.parent
                and other.is_before_in_block(op)
            ):
                rewriter.replace(op, [], [other.output])
                return


def _converted_from(value: SSAValue) -> TransDataOp | None:
    owner = value.owner
    return owner if isinstance(owner, TransDataOp) else None


class HoistThroughAgnostic(RewritePattern):
    """convert(f(convert(x_i, S'->S)), S->S') with f agnostic => f(x_i) in S'."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, GraphOp) or op.FACTS.role is not FormatRole.AGNOSTIC:
            return
        facts = op.FACTS
        inputs: list[tuple[int, TransDataOp]] = []
        for i, value in enumerate(op.operands):
            if not isinstance(value.type, TensorType):
                continue
            td = _converted_from(value)
            slot = op.operand_slots().index(value)
            if not facts.takes_part_in_format(slot):
                continue
            if td is None or not td.output.has_one_use():
                return
            inputs.append((i, td))
        if not inputs or not op.results:
            return
        sources = {origin_view(td.input.type) == td.input.type for _, td in inputs}  # type: ignore[arg-type]
        if sources != {True}:
            return  # only hoist back to origin views (what the ANY-origin kernel takes)
        outputs: list[TransDataOp] = []
        for res in op.results:
            users = [u.operation for u in res.uses]
            if not users or not all(
                isinstance(u, TransDataOp) and u.output.type == origin_view(res.type)  # type: ignore[arg-type]
                for u in users
            ):
                return
            outputs.extend(u for u in users if isinstance(u, TransDataOp))
        for i, td in inputs:
            op.operands[i] = td.input
        op.attributes[KERNEL_ATTR] = StringAttr(
            op.FACTS.kernels[0].name if op.FACTS.kernels else ORIGIN_VARIANT
        )
        op.attributes.pop(SHARED_ATTR, None)
        for res in list(op.results):
            new = Rewriter.replace_value_with_new_type(res, origin_view(res.type))  # type: ignore[arg-type]
            for user in [u.operation for u in new.uses]:
                if isinstance(user, TransDataOp):
                    rewriter.replace(user, [], [new])
        rewriter.notify_op_modified(op)


def _is_nd_to_nz(op: Operation) -> bool:
    if not isinstance(op, TransDataOp):
        return False
    source, target = op.input.type, op.output.type
    return (
        isinstance(source, TensorType)
        and isinstance(target, TensorType)
        and origin_view(source) == source
        and target.storage_format == Format.FRACTAL_NZ
    )


class SinkBelowUnary(RewritePattern):
    """f(convert(x, ND -> NZ)) with f unary elementwise => convert(f(x), ND -> NZ)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, GraphOp) or op.FACTS.fusion is not FusionKind.ELEMWISE:
            return
        tensors = [v for v in op.operands if isinstance(v.type, TensorType)]
        if len(tensors) != 1 or len(op.results) != 1:
            return
        td = _converted_from(tensors[0])
        if td is None or not td.output.has_one_use() or not _is_nd_to_nz(td):
            return
        result = op.results[0]
        nz_type = result.type
        assert isinstance(nz_type, TensorType)
        op.operands[list(op.operands).index(tensors[0])] = td.input
        op.attributes[KERNEL_ATTR] = StringAttr(
            op.FACTS.kernels[0].name if op.FACTS.kernels else ORIGIN_VARIANT
        )
        op.attributes.pop(SHARED_ATTR, None)
        users = [use.operation for use in result.uses]
        nd = Rewriter.replace_value_with_new_type(result, origin_view(nz_type))
        convert = TransDataOp(nd, nz_type)
        convert.results[0].name_hint = nd.name_hint
        rewriter.insert(convert, InsertPoint.after(op))
        for user in users:
            user.operands = [convert.output if v is nd else v for v in user.operands]
        rewriter.erase(td)
        rewriter.notify_op_modified(op)


@register_pass
@dataclass(frozen=True)
class CancelTransDataPass(ModulePass):
    """Cancel inverse pairs, compose chains, merge duplicates, hoist through agnostic ops."""

    name = "cancel-trans-data"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [
            InversePair(),
            ComposeChain(),
            MergeIdentical(),
            HoistThroughAgnostic(),
            SinkBelowUnary(),
        ]
        PatternRewriteWalker(Located(GreedyRewritePatternApplier(patterns))).rewrite_module(op)
