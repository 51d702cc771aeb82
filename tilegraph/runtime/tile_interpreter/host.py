"""Semantics of the host side's ops (:mod:`tilegraph.dialects.tile.host`): allocation,
constants, and the views between GM buffers and the tensor values of macro kernel bodies.
``tile.launch`` is no kernel: the executors run the callee (``TileFunctions.run_launch``);
nor is ``tile.loop_launches``, whose iterations both executors run by
:func:`run_device_loop`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tilegraph.dialects.tile.base import memref_shape
from tilegraph.dialects.tile.host import AllocOp, ConstantOp, ReadOp, WriteOp, numpy_dtype
from tilegraph.dialects.tile.loop import GROUPS, LoopLaunchesOp
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


def run_device_loop(
    op: LoopLaunchesOp, buffers: Sequence[np.ndarray], iteration: Callable[[Sequence[Any]], Any]
) -> None:
    """Execute device loop ``op`` on its operands' arrays (in operand order);
    ``iteration(buffers)`` runs its region's launches once on them. Both executors call
    this, so the copies between iterations are stated once (see
    :mod:`tilegraph.dialects.tile.loop`)."""
    groups, start = [], 0
    for size in (len(getattr(op, g)) for g in GROUPS[:-1]):
        groups.append(list(buffers[start : start + size]))
        start += size
    counter, inits, states, nexts, slices, stacks = groups
    for state, init in zip(states, inits, strict=True):
        state[...] = init
    for i in range(op.trip_count):
        for c in counter:
            c[...] = i
        iteration(buffers)
        moved = [np.array(n, copy=True) for n in nexts]  # a swap reads the old values
        for state, value in zip(states, moved, strict=True):
            state[...] = value
        for stack, piece in zip(stacks, slices, strict=True):
            stack[i] = piece
