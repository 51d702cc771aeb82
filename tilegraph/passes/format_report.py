"""``format-report``: count TransData ops and the bytes they move, per function.

An analysis: it changes no op. Each function gets an attribute

    layout.transdata = {activations = 2 : i64, activation_bytes = 8192 : i64,
                        constants = 0 : i64, constant_bytes = 0 : i64}

where *activations* are conversions executed at every inference (bytes = read + written,
storage layouts, padding included; see :func:`tilegraph.passes.storage.problem.conversion_bytes`)
and *constants* are conversions of constants still left for run time (after
``fold-trans-data`` there are none). :func:`format_report` returns the same as a dict.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass

from tilegraph.dialects.graph.constant_ops import ConstantOp
from tilegraph.dialects.graph.control_flow import walk_outside_bodies
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.registry import register_pass
from tilegraph.passes.storage.problem import conversion_bytes

REPORT_ATTR = "layout.transdata"


@dataclass
class TransDataCounts:
    activations: int = 0
    activation_bytes: int = 0
    constants: int = 0
    constant_bytes: int = 0


def count_trans_data(fn: func.FuncOp) -> TransDataCounts:
    counts = TransDataCounts()
    for op in walk_outside_bodies(fn.body):
        if not isinstance(op, TransDataOp):
            continue
        src, dst = op.input.type, op.output.type
        assert isinstance(src, TensorType) and isinstance(dst, TensorType)
        moved = conversion_bytes(src, dst)
        if _from_constant(op):
            counts.constants += 1
            counts.constant_bytes += moved
        else:
            counts.activations += 1
            counts.activation_bytes += moved
    return counts


def _from_constant(op: TransDataOp) -> bool:
    """A conversion of a constant (possibly through other conversions)."""
    owner = op.input.owner
    while isinstance(owner, TransDataOp):
        owner = owner.input.owner
    return isinstance(owner, ConstantOp)


def format_report(module: ModuleOp) -> dict[str, dict[str, int]]:
    """TransData counts and bytes per function name."""
    return {
        fn.sym_name.data: asdict(count_trans_data(fn))
        for fn in module.walk()
        if isinstance(fn, func.FuncOp)
    }


@register_pass
@dataclass(frozen=True)
class FormatReportPass(ModulePass):
    """Annotate each function with its TransData count and bytes moved."""

    name = "format-report"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in [o for o in op.walk() if isinstance(o, func.FuncOp)]:
            counts = asdict(count_trans_data(fn))
            fn.attributes[REPORT_ATTR] = DictionaryAttr(
                {k: IntegerAttr(v, i64) for k, v in counts.items()}
            )
