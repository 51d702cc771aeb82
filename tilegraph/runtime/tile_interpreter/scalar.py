"""Semantics of the scalar unit's ops (:mod:`tilegraph.dialects.tile.scalar`):
``tile.get_value``, with :func:`wrapped_index`, the ONNX index convention the fast
executor's batched form shares, ``tile.scatter_rows`` and ``tile.gather_rows`` (the fast
executor runs these kernels as they are: one call per block and tile of tuples or indices,
vectorised over them)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tilegraph.dialects.tile.scalar import GatherRowsOp, GetValueOp, ScatterRowsOp
from tilegraph.runtime.tile_interpreter.kernels import Kernel, tile_kernel


def wrapped_index(values: Any, bound: int | None, what: str) -> Any:
    """``values`` (an int or an integer array) as indices into an axis of ``bound``
    elements: negative ones count from the end; any outside ``[-bound, bound)`` raises
    ``IndexError`` naming ``what`` (the graph level's ``numpy.take`` raises too). Without
    a bound, ``values`` unchanged."""
    if bound is None:
        return values
    array = np.asarray(values, dtype=np.int64)
    if array.size and (array.min() < -bound or array.max() >= bound):
        bad = int(array.min()) if array.min() < -bound else int(array.max())
        raise IndexError(f"{what}: index {bad} is out of range for an axis of size {bound}")
    wrapped = np.where(array < 0, array + bound, array)
    return int(wrapped) if wrapped.ndim == 0 else wrapped


@tile_kernel(GetValueOp)
def get_value(op: GetValueOp) -> Kernel:
    bound = op.bound_value

    def run(buffer: np.ndarray, *indices: int) -> tuple[int]:
        return (wrapped_index(int(buffer[indices]), bound, op.name),)

    return run


COMBINE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}
"""The reductions of ``tile.scatter_rows`` and ``tile.vput``, applied unbuffered
(``ufunc.at``): equal positions one after the other, in order — the graph level's (and a
scalar loop's) order, so float sums round alike."""


@tile_kernel(ScatterRowsOp)
def scatter_rows(op: ScatterRowsOp) -> Kernel:
    depth = op.depth_sizes
    combine = None if op.reduce is None else COMBINE[op.reduce]

    def run(src: np.ndarray, indices: np.ndarray, dst: np.ndarray, base: int) -> tuple[()]:
        values = src.reshape(src.shape[0], -1)
        if op.per_element:  # every element its own row, in its own column
            rows = wrapped_index(indices.reshape(values.shape), depth[0], op.name)
        else:
            columns = indices.reshape(-1, len(depth)).astype(np.int64)
            rows = np.zeros(len(columns), np.int64)
            for k, size in enumerate(depth):  # every tuple is read: a bad one is an error
                rows = rows * size + wrapped_index(columns[:, k], size, op.name)
            rows = np.broadcast_to(rows[:, None], values.shape)
        block = dst.reshape(-1)
        inner = values.shape[1]
        at = (rows - base) * inner + np.arange(inner)  # flat positions in the block
        kept = (rows >= base) & (rows < base + dst.shape[0])
        at, picked = at[kept], values[kept]  # row-major: the elements' order
        if combine is not None:
            combine.at(block, at, picked)
        else:  # the last element naming a position wins: keep its last occurrence
            last = len(at) - 1 - np.unique(at[::-1], return_index=True)[1]
            block[at[last]] = picked[last]
        return ()

    return run


@tile_kernel(GatherRowsOp)
def gather_rows(op: GatherRowsOp) -> Kernel:
    bound = op.bound_value

    def run(src: np.ndarray, base: int, indices: np.ndarray, dst: np.ndarray) -> tuple[()]:
        rows = wrapped_index(indices, bound, op.name) - base  # every index is read
        kept = (rows >= 0) & (rows < src.shape[0])
        columns = np.broadcast_to(np.arange(dst.shape[1]), dst.shape)
        dst[kept] = src[rows[kept], columns[kept]]
        return ()

    return run
