"""Semantics of ``tile.mmad`` (:mod:`tilegraph.dialects.tile.cube`): the product on fractal
layouts, ZZ x ZN -> NZ."""

from __future__ import annotations

import numpy as np

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
    if a2.dtype != c.dtype:
        a2, b3 = a2.astype(c.dtype), b3.astype(c.dtype)
    rows = c.reshape(*c.shape[:-3], m1 * m0, 16)  # a view: (..., N1, M, 16)
    if init and rows.shape == np.broadcast_shapes(a2.shape[:-2], b3.shape[:-2]) + (
        m1 * m0,
        16,
    ):
        np.matmul(a2, b3, out=rows)
    elif init:
        c[...] = np.matmul(a2, b3).reshape(c.shape)
    else:
        rows += np.matmul(a2, b3)
    return ()
