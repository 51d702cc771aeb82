"""What each kernel of a lowered module computes, and on which unit: :func:`kernel_report`.

``tilegraph.compile`` keeps it in ``CompiledModel.kernels``; the cycle model names its
kernels' units, ops and ONNX nodes from it; ``tilegraph-run`` prints it (``--json``: one
entry per launch; a mix kernel's ``"unit": "mix"`` with its ``"parts"``, its workspace
bytes and its cross-core flags).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr

from tilegraph.dialects.graph.provenance import onnx_nodes
from tilegraph.dialects.tile import LaunchOp
from tilegraph.dialects.tile.cross_core import CrossCoreOp
from tilegraph.dialects.tile.workspace import container_bytes
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
    """"cube", "vector", "host", or "mix" (a decoupled preset's AIC + AIV kernel, named
    after its AIC part)."""
    ops: tuple[str, ...]
    """The graph ops it computes (op names), in order."""
    tiles: int
    reason: str | None = None
    """Why a host kernel has no tile lowering."""
    nodes: tuple[str, ...] = ()
    """The ONNX nodes it implements (from the kernel's location), in order."""
    parts: tuple[MixPart, ...] = ()
    """A mix kernel's AIC and AIV functions."""
    workspace_bytes: int = 0
    """A mix kernel's GM workspace (every core group's slots)."""

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
        if self.parts:
            entry["parts"] = [part.as_dict() for part in self.parts]
            entry["workspace_bytes"] = self.workspace_bytes
            entry["cross_core_flags"] = sum(p.cross_core_flags for p in self.parts)
        return entry


@dataclass(frozen=True)
class MixPart:
    """One function of a mix kernel."""

    name: str
    core: str
    """"aic" (unit cube) or "aiv" (unit vector)."""
    cross_core_flags: int
    """Its ``tile.sync_block_set`` / ``wait`` ops (in the IR, not per tile)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "core": self.core,
            "unit": "cube" if self.core == "aic" else "vector",
            "cross_core_flags": self.cross_core_flags,
        }


def _mix_parts(launch: LaunchOp, kernels: dict[str, func.FuncOp]) -> tuple[MixPart, ...]:
    return tuple(
        MixPart(
            name,
            core,
            sum(isinstance(op, CrossCoreOp) for op in kernels[name].walk())
            if name in kernels
            else 0,
        )
        for name, core in zip(launch.callees(), ("aic", "aiv"), strict=True)
    )


def kernel_report(module: ModuleOp) -> list[KernelInfo]:
    """Every kernel of a lowered module, in launch order."""
    kernels = {
        f.sym_name.data: f
        for f in module.ops
        if isinstance(f, func.FuncOp) and KERNEL_ATTR in f.attributes
    }
    launches = [op for op in module.walk() if isinstance(op, LaunchOp)]
    mixes = {op.callee.string_value(): op for op in launches if op.is_mix}
    order = [op.callee.string_value() for op in launches] or list(kernels)
    found = []
    for name in dict.fromkeys(order):
        fn = kernels.get(name)
        if fn is None:
            continue
        unit = fn.attributes[KERNEL_ATTR]
        assert isinstance(unit, StringAttr)
        mix = mixes.get(name)
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
                "mix" if mix is not None else unit.data,
                ops,
                tiles.value.data if isinstance(tiles, IntegerAttr) else 0,
                reason.data if isinstance(reason, StringAttr) else None,
                tuple(onnx_nodes(fn.location)),
                () if mix is None else _mix_parts(mix, kernels),
                0 if mix is None else container_bytes(mix.args[-1].type),
            )
        )
    return found
