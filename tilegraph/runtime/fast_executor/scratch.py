"""The fast executor's pool of reused temporaries.

A large temporary allocated afresh on every call costs more in page faults than the
arithmetic it holds; the batched forms and the batch slots of the code generator take
theirs from here instead.
"""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np

_SCRATCH: dict[str, np.ndarray] = {}


def scratch(role: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A reused temporary (contents undefined), one per ``role``: a view into bytes kept
    from call to call and grown to the largest request. The array of a role is valid until
    the next request for that role; the bytes are the process's, so two executors must not
    run kernels at the same time in two threads."""
    dtype = np.dtype(dtype)
    size = prod(shape) * dtype.itemsize
    pool = _SCRATCH.get(role)
    if pool is None or pool.nbytes < size:
        pool = _SCRATCH[role] = np.empty(max(size, 64), np.uint8)
    return pool[:size].view(dtype).reshape(shape)


_SLOTS: dict[tuple[Any, ...], np.ndarray] = {}


def slots(ordinal: int, buffer: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
    """``buffer`` with one slot per point of a batch (contents undefined: each iteration
    writes what it reads), the ``ordinal``-th of its nest: a :func:`scratch` array, nests
    run one after the other, so the ``ordinal``-th arrays of all nests may share their
    bytes. Kept per (ordinal, batch, shape, type): a recurrent step asks for the same
    few thousand times a call (a view kept on bytes the pool has since outgrown is
    still the nest's own: fewer shared bytes, never more)."""
    key = (ordinal, batch, buffer.shape, buffer.dtype)
    found = _SLOTS.get(key)
    if found is None:
        if len(_SLOTS) >= _MOST_SLOTS:
            _SLOTS.clear()
        found = _SLOTS[key] = scratch(f"slots{ordinal}", (*batch, *buffer.shape), buffer.dtype)
    return found


_MOST_SLOTS = 4096
"""Slot arrays kept at most (memory bounded whatever the shapes of a run)."""
