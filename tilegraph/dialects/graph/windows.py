"""Sliding windows over ``[N, C, *spatial]`` tensors, shared by the conv and pooling ops.

Window geometry (ONNX ``kernel_shape``, ``strides``, ``dilations``, ``pads``, ``auto_pad``,
``ceil_mode``): one :class:`Axis` per spatial axis, built by :func:`window` for Conv and the
pools and by ConvTranspose from the same parts. Also the rank-generic result type and the
checks and accumulator type the ``[N, C, ...]`` ops of :mod:`~tilegraph.dialects.graph.nn`
and :mod:`~tilegraph.dialects.graph.pooling` have in common.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeGuard

import numpy as np
import sympy
from xdsl.ir import Attribute

from tilegraph.dialects.graph.base import GraphOp, ShapeError
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.formats.dims import (
    UNKNOWN,
    Dim,
    dims_compatible,
    is_static,
    is_symbolic,
    normalize_dim,
)
from tilegraph.symbolic.inference import decide
from tilegraph.symbolic.inference import require as require_condition

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
"""The ONNX ``auto_pad`` values."""


def known(d: object) -> TypeGuard[int]:
    """Whether ``d`` is a static (known) dim."""
    return isinstance(d, int) and is_static(d)


def nc_result(x: TensorType, shape: Sequence[Dim]) -> TensorType:
    """The result type of a rank-generic NCHW op: NCHW at rank 4, NCDHW at 5, else ND."""
    return TensorType(
        shape, x.element_type, {4: Format.NCHW, 5: Format.NCDHW}.get(x.rank, Format.ND)
    )


def accumulator(dtype: np.dtype) -> type[np.floating]:
    """The dtype a reference kernel computes ``dtype`` in: float64 stays, the rest float32."""
    return np.float64 if dtype == np.float64 else np.float32


def rank_at_least(x: TensorType, rank: int, what: str = "[N, C, ...]") -> None:
    """The input must have rank ``rank`` or more (``what`` names the expected layout)."""
    if x.rank < rank:
        raise ShapeError(f"input must have rank >= {rank} ({what}), got rank {x.rank}")


@dataclass(frozen=True)
class Axis:
    """One spatial axis of a sliding window: input size, attributes, resolved pads, output."""

    size: Dim
    kernel: Dim
    stride: int
    dilation: int
    begin: int
    end: int
    out: Dim

    def reach(self) -> int:
        """How many kernel offsets can touch the padded input: offset ``k`` whose first
        position ``k * dilation - begin`` is past the end padding sees padding only (a
        window may be larger than the input with ceil_mode). Static axes only."""
        assert isinstance(self.kernel, int) and isinstance(self.size, int)
        padded = self.size + self.begin + self.end
        return min(self.kernel, -(-padded // self.dilation))

    def taps(self, k: int, steps: int | None = None) -> slice:
        """Padded positions kernel offset ``k`` touches over ``steps`` (default: out) steps."""
        n = self.out if steps is None else steps
        assert isinstance(n, int)
        return slice(k * self.dilation, k * self.dilation + (n - 1) * self.stride + 1, self.stride)


def per_axis_ints(
    cls: type[GraphOp], props: Mapping[str, Attribute], name: str, n: int, default: int, low: int
):
    """A per-axis ints attribute: ``n`` values >= ``low`` (absent: ``default`` each)."""
    value = cls.read_attr(props, name)
    if value is None:
        return [default] * n
    value = [int(v) for v in value]
    if len(value) != n:
        raise ShapeError(f"{name} has {len(value)} values, expected {n}")
    if any(v < low for v in value):
        raise ShapeError(f"{name} must be >= {low}, got {value}")
    return value


def window_attrs(cls: type[GraphOp], props: Mapping[str, Attribute], n: int):
    """(strides, dilations, pads, auto_pad) for ``n`` spatial axes, validated."""
    pads = per_axis_ints(cls, props, "pads", 2 * n, 0, 0)
    mode = cls.read_attr(props, "auto_pad")
    if mode not in AUTO_PADS:
        raise ShapeError(f"auto_pad must be one of {', '.join(AUTO_PADS)}, got '{mode}'")
    if mode != "NOTSET" and any(pads):
        raise ShapeError(f"explicit pads cannot be used with auto_pad = {mode}")
    strides = per_axis_ints(cls, props, "strides", n, 1, 1)
    return strides, per_axis_ints(cls, props, "dilations", n, 1, 1), pads, mode


def split_padding(total: int, upper: bool) -> tuple[int, int]:
    """Split a SAME padding: SAME_UPPER puts the odd element at the end."""
    small = total // 2
    return (small, total - small) if upper else (total - small, small)


def _window_axis(
    n: Dim, k: Dim, s: int, d: int, pads: tuple[int, int], mode: str, ceil: bool | None
):
    """(out, begin, end) of one sliding-window axis (Conv, pools; ``ceil`` None for an op
    without ceil_mode).

    ``floor((n + pads - ek) / s) + 1`` positions; the window must fit in the padded input.
    ``ceil`` (pools' ceil_mode) rounds up instead and drops a last window that would start
    in the end padding, as onnxruntime and the ONNX spec text do; a window larger than the
    padded input then still has one position, starting at the left padding, when the
    overhang is smaller than the stride (onnxruntime and PyTorch's ceil_mode: HF
    EfficientNet's ``AveragePool(kernel_shape=[1280, 1280], strides=[1280, 1280],
    ceil_mode=1)`` over a 5x5 map is 1x1).
    """
    pb, pe = (0, 0) if mode == "VALID" else pads
    if not known(k):
        return UNKNOWN, pb, pe
    ek = (k - 1) * d + 1
    if not known(n):
        return _symbolic_window_axis(n, ek, s, (pb, pe), mode, ceil), pb, pe
    if mode.startswith("SAME"):
        out = -(-n // s)
        return (out, *split_padding(max(0, (out - 1) * s + ek - n), mode == "SAME_UPPER"))
    span = n + pb + pe - ek
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= n + pb:
        out -= 1
    if out < 1 or (span < 0 and not ceil):
        message = f"window of size {ek} does not fit in the padded input size {n + pb + pe}"
        if ceil:
            message += f" even with ceil_mode (it overhangs by {-span}, the stride is {s})"
        elif ceil is not None:
            message += (
                " with ceil_mode = 0 (ceil_mode = 1 allows a window that overhangs the input "
                "by less than the stride)"
            )
        raise ShapeError(message)
    return out, pb, pe


def _symbolic_window_axis(
    n: Dim, ek: int, s: int, pads: tuple[int, int], mode: str, ceil: bool | None
) -> Dim:
    """The output size of a window axis over a symbolic (or unknown) input size ``n``:
    ``floor((n + pads - ek) / s) + 1`` (``ceiling`` with ceil_mode, ``ceiling(n / s)`` for
    SAME); the window must fit (an assert guard) and ceil_mode's dropped last window is a
    branch on the hints (an expect guard)."""
    if not is_symbolic(n):
        return UNKNOWN
    assert isinstance(n, sympy.Expr)
    if mode.startswith("SAME"):
        return normalize_dim(sympy.ceiling(n / s))
    pb, pe = pads
    span = n + pb + pe - ek
    if not ceil:
        require_condition(span >= 0, f"a window of size {ek} fits the padded input")
        return normalize_dim(sympy.floor(span / s) + 1)
    require_condition(
        span + s > 0,
        f"a window of size {ek} overhangs the padded input by less than the stride {s}",
    )
    out = sympy.ceiling(span / s) + 1
    drop = decide((out - 1) * s >= n + pb, "ceil_mode: the last window starts in the padding")
    if drop is None:
        return UNKNOWN
    return normalize_dim(out - 1 if drop else out)


def window(
    cls: type[GraphOp],
    props: Mapping[str, Attribute],
    spatial: Sequence[Dim],
    kernel: Sequence[Dim],
):
    """The validated window geometry over ``spatial``, one :class:`Axis` per axis."""
    n = len(spatial)
    strides, dilations, pads, mode = window_attrs(cls, props, n)
    ceil_mode = cls.read_attr(props, "ceil_mode")  # None: the op has no ceil_mode
    ceil = None if ceil_mode is None else bool(ceil_mode)
    axes = []
    for i, (size, k, s, d) in enumerate(zip(spatial, kernel, strides, dilations, strict=True)):
        out, pb, pe = _window_axis(size, k, s, d, (pads[i], pads[n + i]), mode, ceil)
        axes.append(Axis(size, k, s, d, pb, pe, out))
    return axes


def window_kernel(
    cls: type[GraphOp], props: Mapping[str, Attribute], n: int, weight: Sequence[Dim] | None
):
    """kernel_shape, checked against the weight's spatial dims when both are known."""
    if cls.read_attr(props, "kernel_shape") is None:
        if weight is None:
            raise ShapeError("kernel_shape is required")
        return list(weight)
    kernel: Sequence[Dim] = per_axis_ints(cls, props, "kernel_shape", n, 1, 1)
    if weight is not None and not all(map(dims_compatible, kernel, weight)):
        raise ShapeError(f"kernel_shape {kernel} does not match the weight's spatial dims")
    return list(kernel)
