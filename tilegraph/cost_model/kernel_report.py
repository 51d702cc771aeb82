"""What each kernel of a lowered module computes, and on which unit: :func:`kernel_report`.

``tilegraph.compile`` keeps it in ``CompiledModel.kernels``; the cycle model names its
kernels' units, ops and ONNX nodes from it; ``tilegraph-run`` prints it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr

from tilegraph.dialects.graph.provenance import onnx_nodes
from tilegraph.dialects.tile import LaunchOp
from tilegraph.lowering.analysis.kernel_attrs import (
    HOST_REASON_ATTR,
    KERNEL_ATTR,
    OPS_ATTR,
    TILES_ATTR,
)


@dataclass(frozen=True)
class KernelInfo:
    """One kernel of a lowered module, for reports."""

    name: str
    unit: str
    """"cube", "vector" or "host"."""
    ops: tuple[str, ...]
    """The graph ops it computes (op names), in order."""
    tiles: int
    reason: str | None = None
    """Why a host kernel has no tile lowering."""
    nodes: tuple[str, ...] = ()
    """The ONNX nodes it implements (from the kernel's location), in order."""

    def as_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "name": self.name,
            "unit": self.unit,
            "ops": list(self.ops),
            "nodes": list(self.nodes),
            "tiles": self.tiles,
        }
        if self.reason:
            entry["reason"] = self.reason
        return entry


def kernel_report(module: ModuleOp) -> list[KernelInfo]:
    """Every kernel of a lowered module, in launch order."""
    kernels = {
        f.sym_name.data: f
        for f in module.ops
        if isinstance(f, func.FuncOp) and KERNEL_ATTR in f.attributes
    }
    order = [op.callee.string_value() for op in module.walk() if isinstance(op, LaunchOp)] or list(
        kernels
    )
    found = []
    for name in dict.fromkeys(order):
        fn = kernels.get(name)
        if fn is None:
            continue
        unit = fn.attributes[KERNEL_ATTR]
        assert isinstance(unit, StringAttr)
        tiles = fn.attributes.get(TILES_ATTR)
        reason = fn.attributes.get(HOST_REASON_ATTR)
        ops = tuple(
            op.name
            for op in fn.walk()
            if op.name.startswith(("graph.", "layout.")) and op.name != "graph.constant"
        )
        if not ops:
            recorded = fn.attributes.get(OPS_ATTR)
            ops = tuple(recorded.data.split(",")) if isinstance(recorded, StringAttr) else ()
        found.append(
            KernelInfo(
                name,
                unit.data,
                ops,
                tiles.value.data if isinstance(tiles, IntegerAttr) else 0,
                reason.data if isinstance(reason, StringAttr) else None,
                tuple(onnx_nodes(fn.location)),
            )
        )
    return found
