"""Reading ``.npy`` files of every element type, including those numpy cannot name.

``np.save`` of an ``ml_dtypes`` array writes the type's bytes under a descriptor only
``ml_dtypes`` knows: ``|V2`` (bfloat16), ``|V1`` (int4, float8 e4m3fn, ...), which
``np.load`` reads back as raw bytes, but ``<f1`` for float8 e5m2, which ``np.load`` refuses.
:func:`load_npy` returns such a file as raw bytes (``|V<itemsize>``) too; the model's declared
element type then gives them their meaning (:mod:`tilegraph.runtime.boundary`).
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import numpy as np

_SIZED_DESCR = re.compile(r"[<>|=]?[a-zA-Z](\d+)")


def load_npy(path: str | Path) -> np.ndarray:
    """The array in the ``.npy`` file ``path``: as ``np.load`` reads it (no pickles), or as
    raw bytes of its item size when numpy cannot name its descriptor. Raises ValueError for
    a file that is not a ``.npy`` array."""
    try:
        return np.load(path, allow_pickle=False)
    except ValueError as e:
        if "descr" not in str(e):
            raise
    return _raw_npy(Path(path))


def _raw_npy(path: Path) -> np.ndarray:
    with path.open("rb") as f:
        major, _ = np.lib.format.read_magic(f)
        # the header: its length (2 bytes in version 1, 4 after), then a Python dict literal
        length = int.from_bytes(f.read(2 if major == 1 else 4), "little")
        text = f.read(length).decode("latin1" if major < 3 else "utf8")
        header = ast.literal_eval(text)
        descr = header.get("descr") if isinstance(header, dict) else None
        match = _SIZED_DESCR.fullmatch(descr) if isinstance(descr, str) else None
        if match is None or not isinstance(header.get("shape"), tuple):
            raise ValueError(f"{path}: not a .npy array (header {text.strip()!r})")
        shape: tuple[int, ...] = header["shape"]
        data = np.fromfile(f, dtype=np.dtype(f"V{match.group(1)}"), count=math.prod(shape))
    if data.size != math.prod(shape):
        raise ValueError(f"{path}: {data.size} elements, the header says shape {list(shape)}")
    return data.reshape(shape, order="F" if header.get("fortran_order") else "C")
