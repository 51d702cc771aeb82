"""Semantics of the host side's ops (:mod:`tilegraph.dialects.tile.host`): allocation,
constants, and the views between GM buffers and the tensor values of macro kernel bodies.
``tile.launch`` is no kernel: the executors run the callee (``TileFunctions.run_launch``)."""

from __future__ import annotations

import numpy as np

from tilegraph.dialects.tile.base import memref_shape
from tilegraph.dialects.tile.host import AllocOp, ConstantOp, ReadOp, WriteOp, numpy_dtype
from tilegraph.runtime.tile_interpreter.kernels import Kernel, tile_kernel


@tile_kernel(AllocOp)
def alloc(op: AllocOp) -> Kernel:
    shape = memref_shape(op.result.type)
    dtype = numpy_dtype(op.result.type)

    def run() -> tuple[np.ndarray]:
        return (np.zeros(shape, dtype),)

    return run


@tile_kernel(ConstantOp)
def constant(op: ConstantOp) -> Kernel:
    def run() -> tuple[np.ndarray]:
        data = op.value.array
        if data is None:
            raise ValueError(
                "tile.constant: the data was elided when the IR was printed; "
                "print with --print-constants to keep it"
            )
        return (np.asarray(data),)

    return run


@tile_kernel(ReadOp)
def read(op: ReadOp) -> Kernel:
    def run(buffer: np.ndarray) -> tuple[np.ndarray]:
        return (buffer,)

    return run


@tile_kernel(WriteOp)
def write(op: WriteOp) -> Kernel:
    def run(value: np.ndarray, buffer: np.ndarray) -> tuple[()]:
        buffer[...] = value
        return ()

    return run
