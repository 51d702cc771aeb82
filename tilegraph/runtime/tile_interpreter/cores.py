"""The block queries (:mod:`tilegraph.dialects.tile.cores`) have no kernel of their own:
the executor running the launch answers them (:class:`~tilegraph.runtime.tile_interpreter.
TileFunctions` from the block it runs, the fast executor from its kernel function's block
parameters, which its launch loop passes for every block). Their factory
says so when asked."""

from __future__ import annotations

from tilegraph.dialects.tile.cores import BlockQueryOp
from tilegraph.runtime.tile_interpreter.kernels import Kernel, NoKernelError, tile_kernel


@tile_kernel(BlockQueryOp)
def block_query(op: BlockQueryOp) -> Kernel:
    raise NoKernelError(f"{op.name} is answered by the executor running the launch")
