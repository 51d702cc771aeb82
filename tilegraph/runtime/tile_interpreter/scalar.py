"""Semantics of the scalar unit's reads (:mod:`tilegraph.dialects.tile.scalar`):
``tile.get_value``, with :func:`wrapped_index`, the ONNX index convention the fast
executor's batched form shares."""

from __future__ import annotations

from typing import Any

import numpy as np

from tilegraph.dialects.tile.scalar import GetValueOp
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
