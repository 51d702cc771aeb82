"""Module analyses the tools report: how many ops execute, what fusion made of them."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tilegraph.dialects.graph import ConstantOp, FusedOp
from tilegraph.dialects.layout import TransDataOp


def top_level_ops(module: ModuleOp) -> Counter[str]:
    """Graph and layout ops at the top level of every function, by name (a ``graph.fused``
    group is one entry; its members are not listed)."""
    names: Counter[str] = Counter()
    for fn in module.ops:
        if isinstance(fn, func.FuncOp) and fn.body.blocks:
            names.update(
                op.name for op in fn.body.blocks[0].ops if op.name.startswith(("graph.", "layout."))
            )
    return names


def compute_op_count(module: ModuleOp) -> int:
    """Ops that execute: :func:`top_level_ops` without constants (they are data)."""
    return sum(n for name, n in top_level_ops(module).items() if name != ConstantOp.name)


@dataclass(frozen=True)
class FusionSummary:
    groups: int
    fused_ops: int
    largest_group: int
    transdata_absorbed: int

    def as_dict(self) -> dict[str, int]:
        return {
            "groups": self.groups,
            "fused_ops": self.fused_ops,
            "largest_group": self.largest_group,
            "transdata_absorbed": self.transdata_absorbed,
        }


def fusion_summary(module: ModuleOp) -> FusionSummary:
    """What the module's ``graph.fused`` ops hold (zeros when nothing is fused)."""
    sizes: list[int] = []
    conversions = 0
    for op in module.walk():
        if isinstance(op, FusedOp):
            members = op.member_ops()
            sizes.append(len(members))
            conversions += sum(isinstance(m, TransDataOp) for m in members)
    return FusionSummary(len(sizes), sum(sizes), max(sizes, default=0), conversions)
