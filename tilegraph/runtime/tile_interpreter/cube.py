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
    tiles, and the accumulator has the batch they broadcast to. With ``m`` / ``n``
    operands, only the valid leading fractals (:meth:`MmadOp.valid_fractals`)."""
    has = (op.m is not None, op.n is not None, op.k is not None)
    if not any(has):
        return fractal_product

    def ragged(a: np.ndarray, b: np.ndarray, c: np.ndarray, init: bool, *extents: int):
        given = iter(extents)
        m, n, k = (int(next(given)) if h else None for h in has)
        return ragged_product(op, a, b, c, init, m, n, k)

    return ragged


def ragged_product(
    op: MmadOp,
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    init: bool,
    m: int | None,
    n: int | None,
    k: int | None = None,
) -> tuple[()]:
    """:func:`fractal_product` on the leading ``m`` rows / ``n`` columns' fractals only,
    over the leading ``k`` K fractals (views of the operands: the accumulator's other
    fractals keep their values, the operands' K fractals past ``k`` are not read)."""
    mf, nf = op.valid_fractals(m, n)
    kf = op.k_fractals(k)
    valid = c[..., :nf, :mf, :, :]
    # fractal_product writes through reshapes of its accumulator: a contiguous one
    part = np.ascontiguousarray(valid)
    fractal_product(a[..., :mf, :kf, :, :], b[..., :kf, :nf, :, :], part, init)
    valid[...] = part
    return ()


def fractal_product(a: np.ndarray, b: np.ndarray, c: np.ndarray, init: bool) -> tuple[()]:
    """``c (= or +=) a x b`` on ZZ x ZN -> NZ fractals; leading dims are a batch of tiles
    (the accumulator then has one too). For one tile, or a few, numpy's stacked product of
    (M, K) x (K, 16) per N fractal writes the NZ accumulator with no reordering."""
    key = (a.shape, b.shape, c.shape, a.dtype, b.dtype, c.dtype)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _product_plan(a, b, c)
        if len(_PLANS) < 4096:
            _PLANS[key] = plan
    a_axes, a_rows, b_axes, b_rows, exact, c_rows, direct = plan
    a2 = a.transpose(a_axes).reshape(a_rows)
    b3 = b.transpose(b_axes).reshape(b_rows)
    if exact is not None:
        a2, b3 = a2.astype(exact), b3.astype(exact)
    rows = c.reshape(c_rows)  # a view: (..., N1, M, 16)
    if init and direct:
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


_ProductPlan = tuple[
    tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], np.dtype | None,
    tuple[int, ...], bool,
]  # fmt: skip
_PLANS: dict[tuple[object, ...], _ProductPlan] = {}
"""The plan of :func:`fractal_product` per operand shapes and types: a recurrent step
multiplies a few small tiles thousands of times, and working out the reshapes, the exact
type and the broadcast shape cost more than its product."""


def _product_plan(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> _ProductPlan:
    """(A's axes and rows shape, B's, the type to multiply in when A's is not it, the
    accumulator's rows shape, whether the product can be written into it directly)."""
    m1, k1, m0, k0 = a.shape[-4:]
    n1 = b.shape[-3]
    la, lb = a.ndim - 4, b.ndim - 4
    # A as (..., 1, M, K) rows; B per N fractal as (N1, K, 16): the product comes out as
    # (..., N1, M, 16), which is the accumulator's NZ order with no transpose.
    a_axes = (*range(la), la, la + 2, la + 1, la + 3)
    a_rows = (*a.shape[:la], 1, m1 * m0, k1 * k0)
    b_axes = (*range(lb), lb + 1, lb, lb + 3, lb + 2)
    b_rows = (*b.shape[:lb], n1, k1 * k0, 16)
    exact = matmul_dtype(a.dtype, b.dtype, c.dtype, k1 * k0)
    c_rows = (*c.shape[:-3], m1 * m0, 16)
    whole = c_rows == np.broadcast_shapes(a_rows[:-2], b_rows[:-2]) + (m1 * m0, 16)
    return (
        a_axes, a_rows, b_axes, b_rows, None if a.dtype == exact else exact, c_rows,
        whole and exact == c.dtype,
    )  # fmt: skip


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
