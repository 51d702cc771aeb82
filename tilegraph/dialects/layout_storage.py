"""Moving arrays between a tensor type's origin layout and its storage layout.

A storage layout pads (NC1HWC0 rounds C up to C0): leaving it needs the origin shape. For
a tensor typed with symbolic dims (``[b, 8, 24, floor(w/2)]``) that shape is evaluated with
the sizes the current call bound to the symbols (:func:`bound_symbols`, set by the
executors from the input shapes).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType

import numpy as np
import sympy

from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import from_storage, to_storage
from tilegraph.formats.dims import Dim, dim_to_text

_BINDINGS: ContextVar[Mapping[sympy.Symbol, int]] = ContextVar(
    "tilegraph_bindings", default=MappingProxyType({})
)


class UnboundShapeError(ValueError):
    """A tensor's origin shape is needed at run time but is not known from the inputs.

    ``data_dependent`` tells the two causes apart: a dim the model leaves unknown (``?``,
    a size that depends on input *values*, e.g. a Reshape's shape input) or a symbol that no
    input's shape binds (the inputs given do not size it)."""

    def __init__(self, message: str, data_dependent: bool):
        super().__init__(message)
        self.data_dependent = data_dependent

    def located(self, where: str) -> UnboundShapeError:
        """The same error with ``where`` (the op and operand that needed the shape) first."""
        return UnboundShapeError(f"{where}: {self}", self.data_dependent)


@contextmanager
def bound_symbols(bindings: Mapping[sympy.Symbol, int]) -> Iterator[None]:
    """Shape symbols have these sizes inside the ``with`` block (one call of a model)."""
    token = _BINDINGS.set(dict(bindings))
    try:
        yield
    finally:
        _BINDINGS.reset(token)


def concrete_shape(shape: Sequence[Dim], what: str = "a tensor") -> list[int]:
    """``shape`` with every symbolic dim evaluated on the bound sizes; an unknown dim, or a
    symbol no input bound, is an :class:`UnboundShapeError`."""
    bindings = _BINDINGS.get()
    out: list[int] = []
    text = "[" + ", ".join(dim_to_text(d) for d in shape) + "]"
    for axis, d in enumerate(shape):
        if isinstance(d, int):
            if d < 0:
                unknown = [str(a) for a, e in enumerate(shape) if isinstance(e, int) and e < 0]
                raise UnboundShapeError(
                    f"{what}: the size of {'axes' if len(unknown) > 1 else 'axis'} "
                    f"{', '.join(unknown)} of shape {text} is unknown "
                    "until the model runs (it depends on input values)",
                    data_dependent=True,
                )
            out.append(d)
            continue
        value = d.xreplace({s: sympy.Integer(v) for s, v in bindings.items()})
        if not isinstance(value, sympy.Integer):
            free = ", ".join(sorted(str(s) for s in value.free_symbols)) or str(value)
            raise UnboundShapeError(
                f"{what}: axis {axis} of shape {text} is {dim_to_text(d)}, and no input's "
                f"shape gives {free} a size",
                data_dependent=False,
            )
        out.append(int(value))
    return out


def _params(t: TensorType) -> dict[str, object]:
    return {
        "dtype": t.dtype,
        "groups": t.groups.data,
        "c0": t.c0.data or None,
        "reshape_type": t.reshape_type.data or None,
    }


def origin_array(array: np.ndarray, t: TensorType) -> np.ndarray:
    """The origin-layout view of ``array``, which is laid out as ``t``'s storage says."""
    if t.storage_format == t.origin_format:
        return array
    origin_shape = concrete_shape(
        t.origin_shape, f"leaving storage layout {t.storage_format} needs the origin shape"
    )
    return from_storage(array, t.origin_format, t.storage_format, origin_shape, **_params(t))  # type: ignore[arg-type]


def padding_mask(t: TensorType) -> np.ndarray | None:
    """True at the padding lanes of ``t``'s storage layout (None when nothing is padded)."""
    if t.storage_format == t.origin_format or not t.storage_format.pads:
        return None
    shape = concrete_shape(t.origin_shape, f"the padding of {t.storage_format}")
    marks = to_storage(np.ones(shape, np.int8), t.origin_format, t.storage_format, **_params(t))  # type: ignore[arg-type]
    return marks == 0


def poison_padding(array: np.ndarray, t: TensorType, pad_value: float | None) -> np.ndarray:
    """Fill the padding lanes of a storage-layout float array with ``pad_value`` (e.g. NaN),
    so that a kernel reading padding produces visibly wrong numbers."""
    if pad_value is None or array.dtype.kind != "f":
        return array
    mask = padding_mask(t)
    if mask is None or not mask.any():
        return array
    out = np.array(array, copy=True)
    out[mask] = pad_value
    return out


def storage_array(array: np.ndarray, t: TensorType, pad_value: float | None = None) -> np.ndarray:
    """``array`` (origin layout) laid out as ``t``'s storage format; padding is zero, or
    ``pad_value`` when given."""
    if t.storage_format == t.origin_format:
        return array
    out = to_storage(array, t.origin_format, t.storage_format, **_params(t))  # type: ignore[arg-type]
    return poison_padding(out, t, pad_value)


def convert(
    array: np.ndarray, source: TensorType, target: TensorType, pad_value: float | None = None
) -> np.ndarray:
    """What ``layout.trans_data`` computes: ``source`` storage -> ``target`` storage."""
    return storage_array(origin_array(array, source), target, pad_value)
