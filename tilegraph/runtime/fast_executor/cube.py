"""Batched and nest forms of ``tile.mmad``.

A batch of tiles whose start flag does not vary runs the kernel as it is (its leading dims
are a batch). In a nest of loops, :func:`nest_product` computes the products of the whole
batch as few large GEMMs, in reused scratch buffers; along an accumulation axis (a K loop
run as one) it sums the steps' products — with the additions in BLAS's order rather than
step after step, the one difference from running the loop (float32 rounding).

A ragged ``mmad`` (``m`` / ``n`` operands) whose extents are the same for the whole batch
multiplies only its valid fractals (the interpreter's kernel); where they vary across the
batch (the last block of a parallel M / N loop run together with the others), and in a
nest, the whole fractals are multiplied: the fractals past ``m`` / ``n`` are products of
padding rows / columns, which ``nd2nz`` fills with zeros and the store of the tile cuts,
so the valid part is the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from math import prod
from typing import Any

import numpy as np

from tilegraph.dialects.tile.cube import MmadOp
from tilegraph.runtime.fast_executor.forms import batched_kernel, nest_kernel
from tilegraph.runtime.fast_executor.invariants import derived
from tilegraph.runtime.fast_executor.scratch import scratch
from tilegraph.runtime.tile_interpreter.cube import fractal_product, matmul_dtype
from tilegraph.runtime.tile_interpreter.kernels import Kernel, kernel_of


@batched_kernel(MmadOp)
def batched_mmad(op: MmadOp, batched: Sequence[bool]) -> Kernel | None:
    if batched[3] or not batched[2]:
        return None
    if any(batched[4:]):  # extents that vary with the batch: whole fractals (module doc)
        return _whole(fractal_product)
    return kernel_of(op)


@nest_kernel(MmadOp)
def nest_mmad(op: MmadOp, batched: Sequence[bool], rank: int, summed: int | None) -> Kernel:
    return _whole(nest_product(rank, summed))


def _whole(kernel: Kernel) -> Kernel:
    """``kernel`` on ``(a, b, c, init)``, any ``m`` / ``n`` operands set aside (module doc)."""

    def run(a: np.ndarray, b: np.ndarray, c: np.ndarray, init: Any, *extents: Any) -> Any:
        return kernel(a, b, c, init)

    return run


def _unpacked(
    a: np.ndarray, b: np.ndarray, dtype: np.dtype, steps: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """ZZ ``(..., M1, K1, 16, K0)`` as row-major ``(..., M, K)`` and ZN
    ``(..., K1, N1, 16, K0)`` as ``(..., K, N)``, in reused scratch buffers. ``steps``: both
    have a step dim before those four (``(..., S, M1, ...)``, ``(..., S, K1, ...)``), laid
    along K (K = S * K1 * K0) — the operands of a K loop as one product."""
    tail = 5 if steps else 4
    if steps:  # (.., S, M1, K1, m0, K0) -> (.., M1, m0, S, K1, K0)
        in_rows = _moved(a, -5, -3).swapaxes(-4, -2)
    else:  # (.., M1, K1, m0, K0) -> (.., M1, m0, K1, K0)
        in_rows = a.swapaxes(-3, -2)
    if in_rows.dtype == dtype and in_rows.flags.c_contiguous:
        rows = in_rows  # row-major slots (.row_slots): the bytes are the matrix already
    else:
        rows = _unpacked_copy(a, ("rows", steps), in_rows, dtype)
    in_cols = _moved(b, -1, -3)  # (.., [S,] K1, K0, N1, 16)
    cols = _unpacked_copy(b, ("cols",), in_cols, dtype)
    m, n = a.shape[-4] * 16, b.shape[-3] * 16
    return rows.reshape(*a.shape[:-tail], m, -1), cols.reshape(*b.shape[:-tail], -1, n)


def _unpacked_copy(
    operand: np.ndarray, role: tuple[Any, ...], view: np.ndarray, dtype: np.dtype
) -> np.ndarray:
    """``view`` (of ``operand``) copied row-major in ``dtype``: once per device loop for
    a frozen operand (a loop-invariant weight held by :mod:`.invariants`), else into a
    reused scratch buffer."""
    kept = derived(operand, (*role, np.dtype(dtype).str), lambda: np.array(view, dtype, order="C"))
    if kept is not None:
        return kept
    out = scratch(str(role[0]), view.shape, dtype)
    np.copyto(out, view)
    return out


def _moved(array: np.ndarray, source: int, destination: int) -> np.ndarray:
    """``np.moveaxis(array, source, destination)`` (one axis) as a transpose by a
    permutation worked out once per rank: moveaxis's checks cost more than the move, five
    times per product of a recurrent step."""
    return array.transpose(_move_order(array.ndim, source, destination))


@cache
def _move_order(ndim: int, source: int, destination: int) -> tuple[int, ...]:
    source, destination = source % ndim, destination % ndim
    order = [n for n in range(ndim) if n != source]
    order.insert(destination, source)
    return tuple(order)


def _into_nz(product: np.ndarray, target: np.ndarray, init: bool) -> None:
    """``target (= or +=) product``: ``product`` row-major ``(..., M, N)``, ``target`` the
    NZ accumulator viewed as ``(..., N1, M, 16)``; a product computed in floats
    (:func:`~tilegraph.runtime.tile_interpreter.cube.matmul_dtype`) holds exact integers,
    cast before they are added, so that the accumulator wraps as its own arithmetic does."""
    if product.dtype != target.dtype:
        product = product.astype(target.dtype)
    nz = product.reshape(*product.shape[:-1], -1, 16).swapaxes(-3, -2)
    if init:
        np.copyto(target, nz)
    else:
        target += nz


def _products(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``rows @ cols`` over their broadcast batch dims, as ``(*batch, M, N)`` (in a reused
    buffer). One GEMM per distinct right operand when that stacks enough left tiles into a
    tall matrix; otherwise numpy's batched product, which loops in C."""
    m, k = rows.shape[-2:]
    n = cols.shape[-1]
    lead = np.broadcast_shapes(rows.shape[:-2], cols.shape[:-2])
    rank = len(lead)
    rows = rows.reshape((1,) * (rank - rows.ndim + 2) + rows.shape)
    cols = cols.reshape((1,) * (rank - cols.ndim + 2) + cols.shape)
    outer = [d for d in range(rank) if cols.shape[d] > 1]
    inner = [d for d in range(rank) if cols.shape[d] == 1]
    stacked = tuple(lead[d] for d in inner)
    count = prod(stacked) * m
    if outer and count < _TALL_ROWS:
        out = scratch("product", (*lead, m, n), rows.dtype)
        np.matmul(rows, cols, out=out)
        return out
    order = (*outer, *inner)
    rows = rows.transpose(*order, rank, rank + 1)
    out = scratch("product", (*(lead[d] for d in order), m, n), rows.dtype)
    for point in np.ndindex(*(lead[d] for d in outer)):
        at = tuple(p if rows.shape[i] > 1 else 0 for i, p in enumerate(point))
        left = np.broadcast_to(rows[at], (*stacked, m, k)).reshape(count, k)
        right = cols[tuple(point[outer.index(d)] if d in outer else 0 for d in range(rank))]
        np.matmul(left, right, out=out[point].reshape(count, n))
    back = np.argsort(order)
    return out.transpose(*back, rank, rank + 1)


_TALL_ROWS = 1024
"""Rows of stacked left tiles from which one GEMM per right operand beats numpy's loop."""


def _stacked_product(a: np.ndarray, b: np.ndarray, c: np.ndarray, init: bool) -> None:
    """:func:`~tilegraph.runtime.tile_interpreter.cube.fractal_product` for large
    batches: unpacked to row-major matrices, one
    GEMM per distinct right operand, one reordering into NZ."""
    n1, m1 = c.shape[-4:-2]
    target = c.reshape(*c.shape[:-4], n1, m1 * 16, 16)  # NZ accumulator as (N1, M, 16)
    exact = matmul_dtype(a.dtype, b.dtype, c.dtype, a.shape[-3] * a.shape[-1])
    _into_nz(_products(*_unpacked(a, b, exact)), target, init)


def _summed_product(a: np.ndarray, b: np.ndarray, target: np.ndarray, init: bool) -> None:
    """``target (= or +=) sum over steps s of a[s] x b[s]``: ``a`` ZZ ``(..., S, M1, K1, 16,
    K0)`` and ``b`` ZN ``(..., S, K1, N1, 16, K0)`` with the steps laid along K, one GEMM of
    K = S * K1 * K0; ``target`` is the NZ accumulator as ``(..., N1, M, 16)``."""
    exact = matmul_dtype(a.dtype, b.dtype, target.dtype, a.shape[-5] * a.shape[-3] * a.shape[-1])
    _into_nz(_products(*_unpacked(a, b, exact, steps=True)), target, init)


_CHUNK_BYTES = 4 << 20
"""Products of K steps computed together before they are summed: enough steps to amortise
the per-call cost of small tiles, few enough to stay in the cache."""


def _steps_per_product(a: np.ndarray, b: np.ndarray, c: np.ndarray, steps: int) -> int:
    """K steps laid end to end in one product: all of them, unless that makes an integer
    product leave the type one step is exact in (int8 past K = 1024: float64, twice the
    bytes and half the speed of float32's BLAS) — then as many as stay in it, their sums
    added into the integer accumulator (exact, and wrapping as the accumulator does)."""
    k = a.shape[-3] * a.shape[-1]
    one = matmul_dtype(a.dtype, b.dtype, c.dtype, k)
    per = steps
    while per > 1 and matmul_dtype(a.dtype, b.dtype, c.dtype, per * k) != one:
        per = (per + 1) // 2
    return per


def nest_product(rank: int, summed: int | None) -> Kernel:
    """``tile.mmad`` over a batch of ``rank`` axes (operands with ``rank`` leading batch
    dims, or none when they do not vary) summing along axis ``summed``. When ``init`` is
    true on the first step only (or on none) and both operands vary along the axis, one
    product of the steps laid end to end along K (:func:`_summed_product`) starts ``c`` (or
    adds to it). Otherwise the products of a chunk of steps at once (for the whole rest of
    the batch), added one step after the other in step order, as the loop would — ``init``
    starts the sum on the steps where it is true."""

    if summed is None:

        def product(a: np.ndarray, b: np.ndarray, c: np.ndarray, init: Any) -> tuple[()]:
            _stacked_product(a, b, c, bool(np.all(init)))
            return ()

        return product
    axis: int = summed

    def run(a: np.ndarray, b: np.ndarray, c: np.ndarray, init: Any) -> tuple[()]:
        def steps_of(v: Any) -> int:
            return np.shape(v)[axis] if np.ndim(v) >= rank else 1

        steps = max(steps_of(a[..., 0, 0, 0, 0]), steps_of(b[..., 0, 0, 0, 0]), steps_of(init))
        if steps == 1:
            _stacked_product(a, b, c, bool(np.all(init)))
            return ()
        n1, m1 = c.shape[-4:-2]
        m, n = m1 * 16, n1 * 16
        flags = np.asarray(init)
        if flags.ndim >= rank and flags.shape[axis] > 1:
            starts = _moved(flags, axis, 0).reshape(flags.shape[axis], -1)[:, 0]
        else:  # the same flag on every step
            starts = np.broadcast_to(flags.reshape(-1)[:1], (steps,))
        first = int(np.flatnonzero(starts)[-1]) if starts.any() else None
        target = c.reshape(*c.shape[:-4], n1, m, 16)  # NZ accumulator as (N1, M, 16)
        if c.ndim - 4 == rank:
            at: list[Any] = [slice(None)] * rank
            at[axis] = 0
            target = target[tuple(at)]  # no slot along the summed axis
        if (
            first in (0, None)
            and steps_of(a[..., 0, 0, 0, 0]) == steps_of(b[..., 0, 0, 0, 0]) == steps
        ):
            a_steps, b_steps = _moved(a, axis, -5), _moved(b, axis, -5)
            per = _steps_per_product(a, b, c, steps)
            for lo in range(0, steps, per):
                part = (Ellipsis, slice(lo, lo + per), *(slice(None),) * 4)
                _summed_product(a_steps[part], b_steps[part], target, first == 0 and lo == 0)
            return ()
        others = np.broadcast_shapes(a.shape[:-4], b.shape[:-4], c.shape[:-4])
        rows_per_step = max(1, prod(others) // max(1, others[axis])) * m
        # tall steps: one GEMM each; short ones: a chunk of steps in one batched product
        chunk = 1 if rows_per_step >= _TALL_ROWS else _CHUNK_BYTES // (rows_per_step * n * 4)
        chunk = max(1, min(steps, chunk))

        def steps_from(v: np.ndarray, lo: int, hi: int) -> np.ndarray:
            if v.ndim - 4 < rank or v.shape[axis] == 1:
                return v
            at: list[Any] = [slice(None)] * rank
            at[axis] = slice(lo, hi)
            return v[tuple(at)]

        total: np.ndarray | None = None
        begin = 0 if first is None else first
        # the sum of the steps from begin on, exact in the type it is computed in
        k = (steps - begin) * a.shape[-3] * a.shape[-1]
        exact = matmul_dtype(a.dtype, b.dtype, c.dtype, k)
        for lo in range(begin, steps, chunk):
            hi = min(steps, lo + chunk)
            rows, cols = _unpacked(steps_from(a, lo, hi), steps_from(b, lo, hi), exact)
            products = _products(rows, cols)
            for s in range(hi - lo):
                at = [slice(None)] * products.ndim
                at[axis] = s if products.shape[axis] > 1 else 0
                part = products[tuple(at)]
                if total is None and first is not None:
                    total = scratch("total", part.shape, part.dtype)
                    np.copyto(total, part)
                elif total is None:  # no step starts the sum: each adds to the accumulator
                    _into_nz(part, target, init=False)
                else:
                    total += part
        if total is not None:
            _into_nz(total, target, init=True)
        return ()

    return run
