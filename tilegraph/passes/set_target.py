"""``set-target{platform=... precision=...}``: record the module's target.

The hardware preset and cube precision every later pass reads (:mod:`tilegraph.target`,
``docs/hardware.md``): ``-p 'set-target{platform=ascend310p},O2,...'`` runs the whole
pipeline for 310P. A value the module records already must agree (the error names who set
it); an empty option keeps the module's (or pins the default preset).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilegraph.hardware import hardware_preset
from tilegraph.passes.registry import register_pass
from tilegraph.target import PRECISIONS, pin_target


@register_pass
@dataclass(frozen=True)
class SetTargetPass(ModulePass):
    """Record ``tilegraph.target`` on the module (the preset and precision of the passes)."""

    name = "set-target"

    platform: str = ""
    """Preset name; empty: the module's, else the default preset."""
    precision: str = ""
    """A precision value (:data:`tilegraph.target.PRECISIONS`, ``docs/precision.md``);
    empty: the module's, else "origin"."""

    def __post_init__(self) -> None:
        if self.platform:
            hardware_preset(self.platform)
        if self.precision and self.precision not in PRECISIONS:
            raise ValueError(
                f"set-target: precision must be one of {', '.join(PRECISIONS)}, "
                f"got {self.precision!r}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        by = f"pass '{self.name}'"
        target = pin_target(op, by, self.platform, self.precision)
        pin_target(op, by, precision=target.precision)
