"""``infer-shapes``: recompute every graph op's result types from its shape function.

Walks each function in program order; a result's origin shape is refined where the shape
function knows more (an unknown dim becomes static, e.g. after a Reshape's shape became a
constant), its formats are kept. A shape function that finds an inconsistency fails the pass
with the op's message. Function result types follow the refined return values.

Symbolic shapes with guards extend this pass later (DESIGN.md §7); today it is static.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import DiagnosticException

from tilegraph.dialects.graph.base import GraphOp, ShapeError
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import is_unknown
from tilegraph.passes.registry import register_pass


def refine(current: TensorType, inferred: TensorType) -> TensorType:
    """``current`` with unknown dims replaced by what ``inferred`` knows."""
    if current.rank != inferred.rank:
        return current
    dims = [
        new if is_unknown(old) and not is_unknown(new) else old
        for old, new in zip(current.origin_shape, inferred.origin_shape, strict=True)
    ]
    if dims == list(current.origin_shape):
        return current
    return current.with_shape(dims)


@register_pass
@dataclass(frozen=True)
class InferShapesPass(ModulePass):
    """Refine result shapes from the ops' shape functions (static dims)."""

    name = "infer-shapes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in op.walk():
            if isinstance(fn, func.FuncOp):
                self._run_function(fn)

    def _run_function(self, fn: func.FuncOp) -> None:
        for op in fn.walk():
            if not isinstance(op, GraphOp):
                continue
            try:
                inferred = op.inferred_result_types()
            except ShapeError as e:
                raise DiagnosticException(f"infer-shapes: {op.name}: {e}") from e
            for res, want in zip(list(op.results), inferred, strict=True):
                if isinstance(res.type, TensorType):
                    new = refine(res.type, want)
                    if new != res.type:
                        Rewriter.replace_value_with_new_type(res, new)
            ret = fn.body.block.last_op
            if isinstance(ret, func.ReturnOp):
                outputs = [v.type for v in ret.arguments]
                if tuple(outputs) != fn.function_type.outputs.data:
                    fn.function_type = FunctionType.from_lists(
                        fn.function_type.inputs.data, outputs
                    )
