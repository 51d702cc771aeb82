"""Semantics of the synchronisation ops (:mod:`tilegraph.dialects.tile.sync`): none. The
executors run a kernel's ops one after the other, so every flag is set before it is
waited for; only the cycle model gives these ops a meaning."""

from __future__ import annotations

from tilegraph.dialects.tile.sync import SyncOp
from tilegraph.runtime.tile_interpreter.kernels import Kernel, tile_kernel


def no_effect(*slot: int) -> tuple[()]:
    """A sync op's kernel: takes its optional slot index, does nothing."""
    return ()


@tile_kernel(SyncOp)
def sync(op: SyncOp) -> Kernel:
    return no_effect
