"""Semantics of ``tile.view`` (:mod:`tilegraph.dialects.tile.workspace`): a numpy view into
the workspace array at the op's byte offset, so a planned module runs on the planned
memory and a wrong plan gives wrong numbers; and of ``tile.strided_view``: a numpy view of
a GM buffer at the view type's strides (reads and writes go to the buffer's bytes); and of
``tile.reshape_view``: the source array reshaped (a view of its bytes, GM buffers being
contiguous containers); and of ``tile.slice_view``: a run of the source's elements
reshaped (a view too: a producer's write through it lands in the source)."""

from __future__ import annotations

import numpy as np

from tilegraph.dialects.tile.base import memref_shape, memref_strides
from tilegraph.dialects.tile.host import numpy_dtype
from tilegraph.dialects.tile.workspace import (
    ReshapeViewOp,
    SliceViewOp,
    StridedViewOp,
    ViewOp,
    view_offset,
)
from tilegraph.runtime.tile_interpreter.kernels import Kernel, tile_kernel


@tile_kernel(ViewOp)
def view(op: ViewOp) -> Kernel:
    shape = memref_shape(op.result.type)
    dtype = numpy_dtype(op.result.type)
    offset = op.byte_offset

    def run(workspace: np.ndarray) -> tuple[np.ndarray]:
        return (np.ndarray(shape, dtype, buffer=workspace, offset=offset),)

    return run


@tile_kernel(StridedViewOp)
def strided_view(op: StridedViewOp) -> Kernel:
    """The source's elements at the view's strides from its offset: writes through it land
    in the source."""
    shape = memref_shape(op.result.type)
    strides = memref_strides(op.result.type)
    offset = view_offset(op.result)

    def run(src: np.ndarray) -> tuple[np.ndarray]:
        if 0 in shape:
            return (np.empty(shape, src.dtype),)
        flat = src.reshape(-1)[offset:]  # a view: GM buffers are contiguous containers
        assert np.shares_memory(flat, src), (
            f"a strided view {shape} of a GM array {src.shape} that is not contiguous"
        )
        steps = tuple(s * flat.itemsize for s in strides)
        return (np.lib.stride_tricks.as_strided(flat, shape, steps),)

    return run


@tile_kernel(ReshapeViewOp)
def reshape_view(op: ReshapeViewOp) -> Kernel:
    """The source under the view's shape: numpy reshapes a contiguous array without a copy,
    so a later write of the source shows through the alias (as on the device)."""
    shape = memref_shape(op.result.type)

    def run(src: np.ndarray) -> tuple[np.ndarray]:
        return (src.reshape(shape),)

    return run


@tile_kernel(SliceViewOp)
def slice_view(op: SliceViewOp) -> Kernel:
    """Elements ``[offset, offset + size)`` of the source under the view's shape, without a
    copy: a write through the view is a write of the source (as on the device)."""
    shape = memref_shape(op.result.type)
    start = op.element_offset
    stop = start + int(np.prod(shape))

    def run(src: np.ndarray) -> tuple[np.ndarray]:
        run_ = src.reshape(-1)[start:stop]
        assert np.shares_memory(run_, src)
        return (run_.reshape(shape),)

    return run
