"""``verify-target``: reject what the module's preset cannot run where it is placed.

The rules of a decoupled preset (910B's AIC / AIV split: no fixpipe into UB, no vector op
or UB in an AIC function, no L1 / L0 buffer in an AIV function) and of a preset without an
L0C -> GM path (310P: no fixpipe into GM) are checked by
:func:`tilegraph.lowering.analysis.target_rules.verify_target`; this pass runs it (so does
``tile-kernels`` on its result). The module is not changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilegraph.lowering.analysis.target_rules import verify_target
from tilegraph.passes.registry import register_pass


@register_pass
@dataclass(frozen=True)
class VerifyTargetPass(ModulePass):
    """Check the module's kernels against its preset's core layout (a located error)."""

    name = "verify-target"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        verify_target(op)
