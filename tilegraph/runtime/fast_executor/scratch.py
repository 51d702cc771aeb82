"""The fast executor's pool of reused temporaries.

A large temporary allocated afresh on every call costs more in page faults than the
arithmetic it holds; the batched forms and the batch slots of the code generator take
theirs from here instead.
"""

from __future__ import annotations

from math import prod

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
