"""Batched forms of the vector ops: an elementwise op's kernel broadcasts from the right,
so it handles a leading batch dim on its buffers as it is (with the batch dim of a
lower-rank operand moved in front of its broadcast dims). Reduce and transpose name their
dims: a batch of tiles (source and destination each batched) runs as one call with those
dims moved past the batch dim. Pool and pick name their leading dims and carry the
trailing ones: they run with the batch dim moved last. Stride (its kernel names every dim)
and the ops along an axis (scan, arg, top-k, one-hot, taps) have no batched form and run
tile by tile."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import MemRefType

from tilegraph.dialects.tile.base import memref_shape
from tilegraph.dialects.tile.vector import VectorOp
from tilegraph.dialects.tile.vector_axis import AXIS_VECTOR_OPS
from tilegraph.dialects.tile.vector_layout import (
    PickOp,
    PoolOp,
    ReduceOp,
    StrideOp,
    TransposeOp,
)
from tilegraph.runtime.fast_executor.forms import batched_kernel
from tilegraph.runtime.tile_interpreter.kernels import Kernel, kernel_of
from tilegraph.runtime.tile_interpreter.vector import store_into
from tilegraph.runtime.tile_interpreter.vector_layout import REDUCTIONS


@batched_kernel(VectorOp)
def batched_elementwise(op: VectorOp, batched: Sequence[bool]) -> Kernel | None:
    if not batched[-1]:
        return None
    kernel = kernel_of(op)
    rank = len(memref_shape(op.destination()))
    # numpy aligns shapes from the right: a batched operand of lower rank than the
    # destination gets its broadcast dims between the batch dim and its own.
    fixes = [
        rank - len(memref_shape(v)) if b and isinstance(v.type, MemRefType) else 0
        for v, b in zip(op.operands, batched, strict=True)
    ]
    if not any(fixes):
        return kernel

    def run(*args: Any) -> tuple[()]:
        aligned = [
            a.reshape(a.shape[0], *([1] * f), *a.shape[1:]) if f else a
            for a, f in zip(args, fixes, strict=True)
        ]
        return kernel(*aligned)

    return run


@batched_kernel(ReduceOp)
def batched_reduce(op: ReduceOp, batched: Sequence[bool]) -> Kernel | None:
    """Each tile of the batch reduced over the op's axes (the tile's dims, one past the
    batch dim): the kernel's reduction, with the same order of additions per tile."""
    if not (batched[0] and batched[1]):
        return None
    fn = REDUCTIONS[op.kind.data]
    axes = tuple(a + 1 for a in op.reduced_axes())

    def run(src: np.ndarray, dst: np.ndarray) -> tuple[()]:
        store_into(dst, fn(src, axis=axes, keepdims=dst.ndim == src.ndim))
        return ()

    return run


@batched_kernel(TransposeOp)
def batched_transpose(op: TransposeOp, batched: Sequence[bool]) -> Kernel | None:
    """Each tile of the batch permuted (the batch dim stays first)."""
    if not (batched[0] and batched[1]):
        return None
    perm = (0, *(int(p) + 1 for p in cast(Any, op.perm).get_values()))

    def run(src: np.ndarray, dst: np.ndarray) -> tuple[()]:
        store_into(dst, src.transpose(perm))
        return ()

    return run


@batched_kernel(PoolOp, PickOp)
def batched_batch_last(op: VectorOp, batched: Sequence[bool]) -> Kernel | None:
    """Each tile of the batch (source and destination batched) with the batch dim moved
    last: both kernels name their leading dims only (a pool its H and W at dims 2 and 3, a
    pick one table per leading dim) and carry the trailing ones (C0) elementwise, so a
    trailing batch dim is carried the same way. An average pool's divisors depend on the
    tile's origin: the same for the whole batch only (a max pool does not read it)."""
    if not (batched[0] and batched[-1]):
        return None
    if any(batched[1:-1]) and not (isinstance(op, PoolOp) and op.kind.data == "max"):
        return None
    kernel = kernel_of(op)

    def run(src: np.ndarray, *rest: Any) -> tuple[()]:
        *origin, dst = rest
        return kernel(np.moveaxis(src, 0, -1), *origin, np.moveaxis(dst, 0, -1))

    return run


@batched_kernel(StrideOp, *AXIS_VECTOR_OPS)
def not_elementwise(op: VectorOp, batched: Sequence[bool]) -> Kernel | None:
    return None
