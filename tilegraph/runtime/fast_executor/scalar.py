"""Nest form of ``tile.get_value``: the element each point of a batch reads, as an index
array over the batch's axes (size 1 along those it does not vary on), which the code
generator binds to the op's result — a *varying* index (:mod:`.batching`) that the DMAs
taking it as an offset run with, point by point."""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any

import numpy as np

from tilegraph.dialects.tile.base import memref_shape
from tilegraph.dialects.tile.scalar import GetValueOp
from tilegraph.runtime.fast_executor.forms import nest_kernel
from tilegraph.runtime.tile_interpreter.kernels import Kernel
from tilegraph.runtime.tile_interpreter.scalar import wrapped_index


@nest_kernel(GetValueOp)
def nest_get_value(
    op: GetValueOp, batched: Sequence[bool], rank: int, summed: int | None
) -> Kernel | None:
    shape = memref_shape(op.buffer)
    strides = [prod(shape[d + 1 :]) for d in range(len(shape))]
    bound = op.bound_value

    def run(buffer: np.ndarray, *indices: Any) -> tuple[Any]:
        own = buffer.shape[:rank] if batched[0] else (1,) * rank
        lead = np.broadcast_shapes(own, *(np.shape(i) for i in indices if np.ndim(i)))
        terms = (np.asarray(i, np.int64) * s for i, s in zip(indices, strides, strict=True))
        flat_at = sum(terms, np.int64(0))
        at = np.broadcast_to(np.reshape(flat_at, np.shape(flat_at) or (1,) * rank), lead)
        items = np.broadcast_to(np.reshape(buffer, (*own, -1)), (*lead, prod(shape)))
        values = np.take_along_axis(items, at[..., None], -1)[..., 0]
        return (wrapped_index(values, bound, op.name),)

    return run
