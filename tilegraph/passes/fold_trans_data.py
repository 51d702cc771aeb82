"""``fold-trans-data``: convert constants at compile time.

A ``layout.trans_data`` whose operand is a ``graph.constant`` becomes a new constant holding
the converted data (``tilegraph.formats.to_storage``), typed with the trans_data's result
type: weights are stored pre-converted (FRACTAL_Z for conv filters, FRACTAL_NZ for matmul
weights, NC1HWC0 for biases), and no conversion of a constant is left for run time. A
constant whose data was elided in text cannot be folded and is left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from tilegraph.dialects.graph.constant_ops import ConstantOp
from tilegraph.dialects.graph.provenance import Located
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_storage import convert
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.registry import register_pass


class FoldConstantTransData(RewritePattern):
    """trans_data(constant) -> constant with converted data."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransDataOp, rewriter: PatternRewriter) -> None:
        source = op.input.owner
        if not isinstance(source, ConstantOp):
            return
        data = source.constant_array()
        src_t, dst_t = op.input.type, op.output.type
        if data is None or not isinstance(src_t, TensorType) or not isinstance(dst_t, TensorType):
            return
        folded = ConstantOp(convert(data, src_t, dst_t), dst_t)
        folded.results[0].name_hint = op.output.name_hint or source.output.name_hint
        rewriter.replace(op, [folded])
        if not source.output.uses:
            rewriter.erase(source)


@register_pass
@dataclass(frozen=True)
class FoldTransDataPass(ModulePass):
    """Convert constants at compile time (weights stored pre-converted)."""

    name = "fold-trans-data"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(Located(FoldConstantTransData())).rewrite_module(op)
