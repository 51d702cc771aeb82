"""Batched form of the synchronisation ops: nothing, as their kernel (the code generator
skips them anyway; registered so that a batch never runs them one by one)."""

from __future__ import annotations

from collections.abc import Sequence

from tilegraph.dialects.tile.sync import SyncOp
from tilegraph.runtime.fast_executor.forms import batched_kernel
from tilegraph.runtime.tile_interpreter.kernels import Kernel
from tilegraph.runtime.tile_interpreter.sync import no_effect


@batched_kernel(SyncOp)
def batched_sync(op: SyncOp, batched: Sequence[bool]) -> Kernel | None:
    return no_effect
