"""``verify-sync``: prove every tiled kernel's synchronisation sufficient, or fail.

Runs the pipe-queue checker (:func:`~tilegraph.lowering.analysis.sync_check.check_kernel`:
each pipe its own queue, running as far ahead as the flags allow, every block of the
kernel's launches) on every cube and vector kernel, and turns its finding into a compile
error naming the pass, the kernel, the ONNX nodes the kernel computes and what is missing::

    verify-sync: @fused_conv2d_relu_0 (node 'Conv_0'): %fmap_l1 slot 0: tile.img2col on
    MTE1 reads what tile.copy on MTE2 wrote, with no flag between them ...

It changes nothing in the module. ``tilegraph.compile`` and ``tilegraph-run`` run it after
``inject-sync`` and ``plan-memory`` (the last pass of the lowering pipeline,
:data:`tilegraph.passes.pipelines.NPU_PASSES`); ``compile(..., verify_sync=False)`` and
``tilegraph-run --no-verify-sync`` leave it out.

``verify-sync{max-trips=4}`` walks only the first iterations of every loop (every block
still): the full walk costs about as much as the rest of the lowering on large kernels.

It then runs the cross-block checker
(:mod:`~tilegraph.lowering.analysis.barrier_check`) on every launch of more than one block:
blocks that hand data to one another through GM must meet at an all-core barrier
(``tile.sync_all``) between the write and the read.

Statistics: ``kernels`` (checked), ``shared-launches`` (launches of several blocks checked
across blocks).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from tilegraph.dialects.graph.provenance import onnx_nodes
from tilegraph.lowering.analysis.barrier_check import shared_launches
from tilegraph.lowering.analysis.kernel_attrs import TILES_ATTR
from tilegraph.lowering.analysis.sync_check import (
    SyncError,
    check_kernel,
    launch_blocks,
    launch_sub_blocks,
)
from tilegraph.lowering.transforms.kernel_memo import kernel_key
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import start_pass


class SyncVerificationError(PassFailedException, ValueError):
    """A kernel's flags do not order what its pipes do (the message says which kernel,
    which nodes, and what is unordered). A diagnostic: ``tilegraph-opt`` prints it as one
    ``error:`` line."""


def _where(fn: func.FuncOp) -> str:
    nodes = onnx_nodes(fn.location)
    if not nodes:
        return ""
    quoted = ", ".join(f"'{n}'" for n in nodes)
    return f" (node{'s' if len(nodes) > 1 else ''} {quoted})"


@register_pass
@dataclass(frozen=True)
class VerifySyncPass(ModulePass):
    """Check the synchronisation of every tiled kernel; raise on the first insufficient."""

    name = "verify-sync"

    max_trips: int = 0
    """Walk at most this many iterations of every loop (0: all of them, the proof; a few
    already show every pattern of a loop body, for a quicker check of large kernels)."""

    def __post_init__(self) -> None:
        if self.max_trips < 0:
            raise ValueError(
                f"verify-sync: max-trips must be 0 (every iteration) or more, got {self.max_trips}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        blocks = launch_blocks(op)
        sub_blocks = launch_sub_blocks(op)
        checked: set[tuple[Hashable, ...]] = set()  # a model's repeated layers: once
        printed: dict[func.FuncOp, tuple[Hashable, ...]] = {}

        def key_of(fn: func.FuncOp) -> tuple[Hashable, ...]:
            if fn not in printed:
                printed[fn] = kernel_key(fn)
            return printed[fn]

        for fn in op.ops:
            if not isinstance(fn, func.FuncOp) or TILES_ATTR not in fn.attributes:
                continue
            name = fn.sym_name.data
            key = ("kernel", *key_of(fn), blocks.get(name, 1), sub_blocks.get(name, 1))
            if key in checked:
                stats.add("kernels")
                continue
            checked.add(key)
            try:
                check_kernel(
                    fn, blocks.get(name, 1), self.max_trips or None, sub_blocks.get(name, 1)
                )
            except SyncError as error:
                message = str(error).removeprefix(f"@{name}: ")
                raise SyncVerificationError(
                    f"{self.name}: @{name}{_where(fn)}: {message}"
                ) from error
            stats.add("kernels")
        for launch in shared_launches(op):  # the blocks' GM exchange: barriers between
            parts = (launch.fn, launch.aiv) if launch.aiv is not None else (launch.fn,)
            key = ("launch", *(key_of(f) for f in parts), launch.blocks, launch.sub_blocks)
            if key in checked:
                stats.add("shared-launches")
                continue
            checked.add(key)
            try:
                launch.check(self.max_trips or None)
            except SyncError as error:
                name = launch.fn.sym_name.data
                message = str(error).removeprefix(f"@{name}: ")
                raise SyncVerificationError(
                    f"{self.name}: @{name}{_where(launch.fn)}: {message}"
                ) from error
            stats.add("shared-launches")
