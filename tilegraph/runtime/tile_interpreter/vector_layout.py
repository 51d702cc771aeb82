"""Semantics of the vector ops that reduce or move data within a tile
(:mod:`tilegraph.dialects.tile.vector_layout`): reduce, pool, transpose, stride, pick."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from tilegraph.dialects.tile.dma import int_values
from tilegraph.dialects.tile.vector_layout import (
    PickOp,
    PoolOp,
    ReduceOp,
    StrideOp,
    TransposeOp,
)
from tilegraph.runtime.tile_interpreter.kernels import Kernel, tile_kernel
from tilegraph.runtime.tile_interpreter.vector import store_into

REDUCTIONS: dict[str, Callable[..., np.ndarray]] = {
    "sum": np.sum,
    "max": np.max,
    "min": np.min,
    "prod": np.prod,
}


@tile_kernel(ReduceOp)
def reduce(op: ReduceOp) -> Kernel:
    fn = REDUCTIONS[op.kind.data]
    axes = op.reduced_axes()

    def run(src: np.ndarray, dst: np.ndarray) -> tuple[()]:
        store_into(dst, fn(src, axis=axes, keepdims=dst.ndim == src.ndim))
        return ()

    return run


@tile_kernel(PoolOp)
def pool(op: PoolOp) -> Kernel:
    kind = op.kind.data
    kh, kw = int_values(op.kernel_shape)
    sh, sw = int_values(op.strides)
    dh, dw = int_values(op.dilations)
    top, left, bottom, right = int_values(op.pads)
    height, width = op.height.value.data, op.width.value.data

    def run(src: np.ndarray, row0: int, *rest: Any) -> tuple[()]:
        col0, dst = rest if len(rest) == 2 else (0, rest[0])
        rows, cols = dst.shape[2], dst.shape[3]
        if kind == "max":
            store_into(dst, _separable_max(src, rows, cols, (kh, kw), (sh, sw), (dh, dw)))
            return ()
        acc = None
        for i in range(kh):
            for j in range(kw):
                tap = src[
                    :, :,
                    i * dh : i * dh + (rows - 1) * sh + 1 : sh,
                    j * dw : j * dw + (cols - 1) * sw + 1 : sw,
                ]  # fmt: skip
                if acc is None:
                    acc = tap.astype(np.float32, copy=True)
                else:
                    acc += tap
        assert acc is not None
        pad = kind == "avg_include_pad"
        bounds = (
            (-top, height + bottom) if pad else (0, height),
            (-left, width + right) if pad else (0, width),
        )
        counts = _tap_counts(
            (row0, col0), rows, cols, (kh, kw), (sh, sw), (dh, dw), (top, left), bounds
        )
        store_into(dst, acc / counts.reshape((1, 1, rows, cols) + (1,) * (acc.ndim - 4)))
        return ()

    return run


def _separable_max(
    src: np.ndarray,
    rows: int,
    cols: int,
    kernel: tuple[int, int],
    strides: tuple[int, int],
    dilations: tuple[int, int],
) -> np.ndarray:
    """Max pooling of ``src`` (N, C1, H, W, ...) to ``rows`` x ``cols`` outputs as a max
    over the kernel's rows, then over its columns: kh + kw taps instead of kh * kw (169 ->
    26 for a 13x13 SPP pool). A maximum is exact whatever the order it is taken in, so
    this is the 2-D max bit for bit (a NaN in a window gives NaN either way)."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, strides, dilations
    width = (kw - 1) * dw + (cols - 1) * sw + 1  # the columns the kernel's taps read
    acc = src[:, :, 0 : (rows - 1) * sh + 1 : sh, :width].copy()
    for i in range(1, kh):
        np.maximum(acc, src[:, :, i * dh : i * dh + (rows - 1) * sh + 1 : sh, :width], out=acc)
    out = acc[:, :, :, 0 : (cols - 1) * sw + 1 : sw].copy()
    for j in range(1, kw):
        np.maximum(out, acc[:, :, :, j * dw : j * dw + (cols - 1) * sw + 1 : sw], out=out)
    return out


def _tap_counts(origin, rows, cols, kernel, strides, dilations, begin, bounds) -> np.ndarray:
    """Kernel taps within ``bounds`` (per axis, image coordinates) for each output position
    of the tile whose first output pixel is ``origin`` (row, column): average pooling's
    divisor."""
    counts = []
    for start, n, k, s, d, b, (lo, hi) in zip(
        origin, (rows, cols), kernel, strides, dilations, begin, bounds, strict=True
    ):
        pos = (np.arange(start, start + n) * s - b)[:, None] + np.arange(k)[None, :] * d
        counts.append(((pos >= lo) & (pos < hi)).sum(axis=1))
    return np.maximum(np.outer(counts[0], counts[1]), 1).astype(np.float32)


@tile_kernel(TransposeOp)
def transpose(op: TransposeOp) -> Kernel:
    perm = tuple(int(p) for p in cast(Any, op.perm).get_values())

    def run(src: np.ndarray, dst: np.ndarray) -> tuple[()]:
        store_into(dst, src.transpose(perm))
        return ()

    return run


@tile_kernel(StrideOp)
def stride(op: StrideOp) -> Kernel:
    steps = op.step_values()

    def run(src: np.ndarray, dst: np.ndarray) -> tuple[()]:
        index = []
        for s, n, m in zip(steps, src.shape, dst.shape, strict=True):
            if s == 0:
                index.append(slice(0, 1))  # broadcast along this dim
            elif s > 0:
                index.append(slice(0, (m - 1) * s + 1, s))
            else:
                last = n - 1 + (m - 1) * s
                index.append(slice(n - 1, last - 1 if last > 0 else None, s))
        store_into(dst, np.broadcast_to(src[tuple(index)], dst.shape))
        return ()

    return run


@tile_kernel(PickOp)
def pick(op: PickOp) -> Kernel:
    tables = [np.asarray(t, dtype=np.int64) for t in op.tables()]

    def run(src: np.ndarray, dst: np.ndarray) -> tuple[()]:
        store_into(dst, src[np.ix_(*tables)])
        return ()

    return run
