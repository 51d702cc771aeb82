"""Semantics of the vector ops along an axis (:mod:`tilegraph.dialects.tile.vector_axis`):
scan, arg, top-k, take, put, one-hot, taps, arange."""

from __future__ import annotations

import numpy as np

from tilegraph.dialects.tile.vector_axis import (
    ArangeOp,
    ArgOp,
    OneHotOp,
    PutOp,
    ScanOp,
    TakeOp,
    TapsOp,
    TopKOp,
)
from tilegraph.runtime.tile_interpreter.kernels import Kernel, tile_kernel
from tilegraph.runtime.tile_interpreter.scalar import COMBINE, wrapped_index
from tilegraph.runtime.tile_interpreter.vector import store_into


@tile_kernel(ScanOp)
def scan(op: ScanOp) -> Kernel:
    axis = int(op.axis.value.data)
    exclusive, reverse = bool(op.exclusive.value.data), bool(op.reverse.value.data)
    combine = np.cumsum if op.kind.data == "sum" else np.cumprod
    identity = 0 if op.kind.data == "sum" else 1

    def run(src: np.ndarray, dst: np.ndarray) -> tuple[()]:
        data = np.flip(src, axis) if reverse else src
        out = combine(data, axis=axis, dtype=src.dtype)
        if exclusive:
            first = np.full_like(np.take(out, [0], axis=axis), identity)
            out = np.concatenate([first, np.delete(out, -1, axis=axis)], axis=axis)
        store_into(dst, np.flip(out, axis) if reverse else out)
        return ()

    return run


@tile_kernel(ArgOp)
def arg(op: ArgOp) -> Kernel:
    axis = int(op.axis.value.data)
    pick = np.argmax if op.kind.data == "max" else np.argmin
    last = bool(op.select_last.value.data)

    def run(src: np.ndarray, dst: np.ndarray) -> tuple[()]:
        if last:
            found = src.shape[axis] - 1 - pick(np.flip(src, axis), axis=axis)
        else:
            found = pick(src, axis=axis)
        store_into(dst, found.reshape(dst.shape))
        return ()

    return run


@tile_kernel(TopKOp)
def top_k(op: TopKOp) -> Kernel:
    axis, k, largest = int(op.axis.value.data), op.k(), bool(op.largest.value.data)

    def run(src: np.ndarray, dst: np.ndarray) -> tuple[()]:
        # a decreasing key that cannot overflow, as the graph level's reference
        keys = (np.invert(src) if src.dtype.kind in "iub" else -src) if largest else src
        order = np.argsort(keys, axis=axis, kind="stable")
        store_into(dst, np.take(order, np.arange(k), axis=axis))
        return ()

    return run


@tile_kernel(TakeOp)
def take(op: TakeOp) -> Kernel:
    axis = int(op.axis.value.data)

    def run(src: np.ndarray, indices: np.ndarray, dst: np.ndarray) -> tuple[()]:
        # the gather's positions: negative ones count from the end, others are an error
        # (an IndexError naming no view axis: a gather's vtake works on its [O, n, inner] view)
        where = wrapped_index(indices.astype(np.int64), src.shape[axis], op.name)
        store_into(dst, np.take_along_axis(src, where, axis=axis))
        return ()

    return run


@tile_kernel(PutOp)
def put(op: PutOp) -> Kernel:
    axis = int(op.axis.value.data)
    combine = None if op.reduce is None else COMBINE[op.reduce]  # equal positions in turn

    def run(src: np.ndarray, indices: np.ndarray, dst: np.ndarray) -> tuple[()]:
        # positions as vtake's: negative ones count from the end, others are an error
        where = wrapped_index(indices.astype(np.int64), dst.shape[axis], op.name)
        if combine is None:
            np.put_along_axis(dst, where, src, axis=axis)
            return ()
        grid = list(np.indices(where.shape, sparse=True))
        grid[axis] = where
        combine.at(dst, tuple(grid), src)
        return ()

    return run


@tile_kernel(OneHotOp)
def one_hot(op: OneHotOp) -> Kernel:
    axis, depth = int(op.axis.value.data), int(op.depth.value.data)
    on, off = op.on.value.data, op.off.value.data

    def run(indices: np.ndarray, offset: int, dst: np.ndarray) -> tuple[()]:
        where = indices.astype(np.int64)
        where = np.expand_dims(np.where(where < 0, where + depth, where), axis)
        span = dst.shape[axis]
        position = np.arange(offset, offset + span).reshape(
            [span if i == axis else 1 for i in range(dst.ndim)]
        )
        store_into(dst, np.where(where == position, on, off))
        return ()

    return run


@tile_kernel(TapsOp)
def taps(op: TapsOp) -> Kernel:
    axis = int(op.axis.value.data)
    indices, weights = (np.asarray(t) for t in op.tables())

    def run(src: np.ndarray, dst: np.ndarray) -> tuple[()]:
        shape = [-1 if i == axis else 1 for i in range(src.ndim)]
        acc = np.zeros(dst.shape, dst.dtype)
        for t in range(indices.shape[1]):
            tap = np.take(src, indices[:, t], axis=axis)
            acc += tap * weights[:, t].astype(dst.dtype).reshape(shape)
        store_into(dst, acc)
        return ()

    return run


@tile_kernel(ArangeOp)
def arange(op: ArangeOp) -> Kernel:
    start, delta = op.start.value.data, op.delta.value.data

    def run(offset: int, dst: np.ndarray) -> tuple[()]:
        # 16-bit floats (float16; bfloat16, a numpy extension type) are computed in
        # float32 and rounded once, as Range's default stash_type
        low_float = dst.dtype.itemsize == 2 and dst.dtype.kind in "fV"
        compute = np.dtype(np.float32) if low_float else dst.dtype
        positions = np.arange(offset, offset + dst.shape[0], dtype=compute)
        store_into(dst, compute.type(start) + positions * compute.type(delta))
        return ()

    return run
