"""Semantics of ``tile.mmad`` (:mod:`tilegraph.dialects.tile.cube`): the product on fractal
layouts, ZZ x ZN -> NZ."""

from __future__ import annotations

import numpy as np
from numpy.typing import DTypeLike

from tilegraph.dialects.tile.cube import MmadOp
from tilegraph.runtime.tile_interpreter.kernels import Kernel, tile_kernel


@tile_kernel(MmadOp)
def mmad(op: MmadOp) -> Kernel:
    """The product on fractal layouts; any leading dims of ``a`` and ``b`` are a batch of
    tiles, and the accumulator has the batch they broadcast to."""
    return fractal_product


def fractal_product(a: np.ndarray, b: np.ndarray, c: np.ndarray, init: bool) -> tuple[()]:
    """``c (= or +=) a x b`` on ZZ x ZN -> NZ fractals; leading dims are a batch of tiles
    (the accumulator then has one too). For one tile, or a few, numpy's stacked product of
    (M, K) x (K, 16) per N fractal writes the NZ accumulator with no reordering."""
    m1, k1, m0, k0 = a.shape[-4:]
    n1 = b.shape[-3]
    la, lb = a.ndim - 4, b.ndim - 4
    # A as (..., 1, M, K) rows; B per N fractal as (N1, K, 16): the product comes out as
    # (..., N1, M, 16), which is the accumulator's NZ order with no transpose.
    a2 = a.transpose(*range(la), la, la + 2, la + 1, la + 3)
    a2 = a2.reshape(*a.shape[:la], 1, m1 * m0, k1 * k0)
    b3 = b.transpose(*range(lb), lb + 1, lb, lb + 3, lb + 2)
    b3 = b3.reshape(*b.shape[:lb], n1, k1 * k0, 16)
    exact = matmul_dtype(a.dtype, b.dtype, c.dtype, k1 * k0)
    if a2.dtype != exact:
        a2, b3 = a2.astype(exact), b3.astype(exact)
    rows = c.reshape(*c.shape[:-3], m1 * m0, 16)  # a view: (..., N1, M, 16)
    whole = rows.shape == np.broadcast_shapes(a2.shape[:-2], b3.shape[:-2]) + (m1 * m0, 16)
    if init and whole and exact == c.dtype:
        np.matmul(a2, b3, out=rows)
        return ()
    product = np.matmul(a2, b3)
    if product.dtype != c.dtype:  # exact integers in floats: the cast loses nothing
        product = product.astype(c.dtype)
    if init:
        c[...] = product.reshape(c.shape)
    else:
        rows += product
    return ()


_EXACT_IN_FLOAT32 = 1 << 24
"""Integers up to this magnitude are exact in float32 (all of them up to 2**53 in float64)."""


def matmul_dtype(a: DTypeLike, b: DTypeLike, accumulator: DTypeLike, k: int) -> np.dtype:
    """The type a product of ``k``-term dot products of ``a`` and ``b`` elements is
    computed in so that it equals the ``accumulator``'s arithmetic bit for bit: the
    accumulator's own for floats; for integer operands into an integer accumulator (int8
    cube: int32), float32 when no partial sum can pass 2**24 and float64 when none can
    leave the accumulator's range — BLAS, where numpy multiplies integers in plain
    loops, with every sum an exact integer — else the accumulator's own (wrapping as it
    does)."""
    a, b, accumulator = np.dtype(a), np.dtype(b), np.dtype(accumulator)
    kinds = "iu"
    if (
        accumulator.kind not in kinds
        or np.dtype(a).kind not in kinds
        or np.dtype(b).kind not in kinds
    ):
        return accumulator

    def largest(dtype: np.dtype) -> int:
        info = np.iinfo(dtype)
        return max(-int(info.min), int(info.max))

    bound = largest(a) * largest(b) * k
    if bound <= _EXACT_IN_FLOAT32:
        return np.dtype(np.float32)
    if bound <= np.iinfo(accumulator).max:
        return np.dtype(np.float64)
    return accumulator
