"""Semantics of ``tile.view`` (:mod:`tilegraph.dialects.tile.workspace`): a numpy view into
the workspace array at the op's byte offset, so a planned module runs on the planned
memory and a wrong plan gives wrong numbers."""

from __future__ import annotations

import numpy as np

from tilegraph.dialects.tile.base import memref_shape
from tilegraph.dialects.tile.host import numpy_dtype
from tilegraph.dialects.tile.workspace import ViewOp
from tilegraph.runtime.tile_interpreter.kernels import Kernel, tile_kernel


@tile_kernel(ViewOp)
def view(op: ViewOp) -> Kernel:
    shape = memref_shape(op.result.type)
    dtype = numpy_dtype(op.result.type)
    offset = op.byte_offset

    def run(workspace: np.ndarray) -> tuple[np.ndarray]:
        return (np.ndarray(shape, dtype, buffer=workspace, offset=offset),)

    return run
