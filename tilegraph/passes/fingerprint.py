"""A cheap structural fingerprint of a module, to detect that a pass round changed nothing.

Two modules with the same fingerprint have the same ops in the same order, with the same
operand wiring (values numbered in definition order), result types and properties; constant
payloads are compared by dtype and shape only (a fold that changes data always changes the
op that produced it, so the wiring changes too). Cost: one walk, no printing.
"""

from __future__ import annotations

from collections.abc import Hashable

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.graph.dense import DenseAttr


def _attribute_key(attr: Attribute) -> Hashable:
    if isinstance(attr, DenseAttr):
        blob = attr.data
        return ("dense", blob.dtype_name, tuple(blob.shape))
    return attr


def module_fingerprint(module: ModuleOp) -> int:
    numbering: dict[SSAValue, int] = {}
    parts: list[Hashable] = []
    for op in module.walk():
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    numbering[arg] = len(numbering)
        parts.append(
            (
                op.name,
                tuple(numbering.get(v, -1) for v in op.operands),
                tuple(r.type for r in op.results),
                tuple((k, _attribute_key(v)) for k, v in op.properties.items()),
                tuple((k, _attribute_key(v)) for k, v in op.attributes.items()),
            )
        )
        for r in op.results:
            numbering[r] = len(numbering)
    return hash(tuple(parts))
