"""Reading shape-like operands and computing with dims: the helpers of every graph op whose
shape function depends on an operand's *value* (data movement, reshape family, reductions).

The contract:

* Shape-like operands (shape, axes, pads, starts/ends/steps, split, repeats) are 1-D integer
  tensors, as in ONNX >= 13: int64 (:data:`INT64_ONLY`, the default) or, where ONNX allows
  it, int32 too (:data:`INT32_OR_64`). :func:`ints_operand` checks rank and element type
  (raising :class:`~tilegraph.dialects.graph.base.ShapeError`) and returns an
  :class:`IntsOperand`: the values when the operand is a ``graph.constant``, else only its
  length when that is static. A shape function must handle ``values is None`` (usually
  with UNKNOWN dims) and may raise only when even the result rank cannot be known.
* :func:`runtime_ints` is the counterpart for reference kernels: the operand's runtime
  array as a list of ints.
* :func:`dim_product`, :func:`dim_sum` and :func:`dim_add` take any
  :data:`~tilegraph.formats.dims.Dim` (int, symbolic, UNKNOWN): UNKNOWN in gives UNKNOWN
  out, symbolic dims are combined with sympy, and results are normalised with
  :func:`~tilegraph.formats.dims.normalize_dim`. :func:`static_dim` gives a dim's size
  only when it is a known integer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sympy
from xdsl.ir import SSAValue

from tilegraph.dialects.graph.base import GraphOp, ShapeError, constant_value, tensor_type
from tilegraph.dialects.graph.shape_utils import normalize_axis
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType
from tilegraph.formats.dims import UNKNOWN, Dim, is_unknown, normalize_dim

INT64_ONLY = (DType.int64,)
INT32_OR_64 = (DType.int32, DType.int64)


@dataclass(frozen=True)
class IntsOperand:
    """A 1-D integer operand (shape, axes, pads, ...) as the shape function sees it."""

    values: tuple[int, ...] | None
    """Its data when it is known at compile time (:func:`known_value`)."""
    length: int | None
    """Its number of elements when static (always when ``values`` is known)."""


def ints_operand(
    value: SSAValue | None, what: str, dtypes: Sequence[DType] = INT64_ONLY
) -> IntsOperand | None:
    """Read a 1-D integer operand; None when the optional operand is absent. A scalar counts
    as one value (exporters write scalar axes; onnxruntime accepts them)."""
    t = tensor_type(value)
    if t is None:
        return None
    if t.rank > 1:
        raise ShapeError(f"{what} must be a 1-D tensor, got rank {t.rank}")
    if t.dtype not in dtypes:
        allowed = " or ".join(str(d) for d in dtypes)
        raise ShapeError(f"{what} must be {allowed}, got {t.element_type}")
    n = normalize_dim(t.origin_shape[0]) if t.rank else 1
    length = n if isinstance(n, int) and n >= 0 else None
    data = known_value(value)
    if data is None:
        return IntsOperand(None, length)
    values = tuple(int(v) for v in np.asarray(data).reshape(-1))
    return IntsOperand(values, len(values))


_KNOWN_ELEMENTS = 64
_KNOWN_DEPTH = 32
"""How many producers back a value is followed: exporters' shape computations run 10-15
ops deep (Silero VAD's reflect-pad amounts: Shape, Gather, Sub, ConstantOfShape, Concat,
Reshape, Slice, Transpose, Reshape, Cast)."""


def known_value(value: SSAValue | None, depth: int = _KNOWN_DEPTH) -> np.ndarray | None:
    """The value of a small integer or bool tensor when it follows from constants and static
    shapes: a ``graph.constant``, or an op (``Shape`` / ``Size`` of a statically shaped
    tensor, arithmetic, Concat, Slice, Gather, ... on such values) whose reference kernel
    runs on them — ONNX's data propagation for the shape computations exporters emit
    (``Concat(Slice(Shape(X)), ConstantOfShape(Size(Shape(X)) - axis))``). None otherwise;
    never changes the IR. Each producer is evaluated once per call."""
    return _known(value, depth, {})


def _known(
    value: SSAValue | None, depth: int, memo: dict[int, np.ndarray | None]
) -> np.ndarray | None:
    data = constant_value(value)
    if data is not None or value is None or depth == 0:
        return data
    if id(value) in memo:
        return memo[id(value)]
    memo[id(value)] = found = _evaluated(value, depth, memo)
    return found


def _evaluated(
    value: SSAValue, depth: int, memo: dict[int, np.ndarray | None]
) -> np.ndarray | None:
    op, t = value.owner, value.type
    if not isinstance(op, GraphOp) or not isinstance(t, TensorType):
        return None
    count = t.num_elements()
    if count is None or count > _KNOWN_ELEMENTS or t.dtype.numpy.kind not in "iub":
        return None
    shape_only = op.name in ("graph.shape", "graph.size")
    inputs: list[np.ndarray | None] = []
    for slot in op.operand_slots():
        if slot is None:
            inputs.append(None)
        elif shape_only:
            st = slot.type
            if not isinstance(st, TensorType) or not st.is_static:
                return None
            dims = [int(d) for d in st.origin_shape]  # type: ignore[arg-type]
            inputs.append(np.lib.stride_tricks.as_strided(np.zeros(1), dims, [0] * len(dims)))
        else:
            known = _known(slot, depth - 1, memo)
            if known is None:
                return None
            inputs.append(known)
    try:
        with np.errstate(all="ignore"):  # IEEE values, as the interpreter runs them
            results = op.reference(*inputs)
    except Exception:  # a kernel that cannot run on these values: not known
        return None
    index = next(i for i, r in enumerate(op.results) if r is value)
    return np.asarray(results[index])


def required_ints(
    value: SSAValue | None, what: str, dtypes: Sequence[DType] = INT64_ONLY
) -> IntsOperand:
    """:func:`ints_operand` for a required operand."""
    operand = ints_operand(value, what, dtypes)
    if operand is None:
        raise ShapeError(f"missing {what}")
    return operand


def padded_inputs(inputs: Sequence[np.ndarray | None], n: int) -> list[np.ndarray | None]:
    """A reference kernel's inputs, absent trailing optional ones as None (``n`` slots)."""
    return (list(inputs) + [None] * n)[:n]


def runtime_ints(array: np.ndarray | None) -> list[int] | None:
    """A shape-like operand's runtime value as a list of ints (None when absent)."""
    return None if array is None else [int(v) for v in np.asarray(array).reshape(-1)]


def normalize_axes(axes: Sequence[int], rank: int, what: str = "axes") -> list[int]:
    """Normalise ONNX axes into ``[0, rank)``; duplicates are an error."""
    out = [normalize_axis(a, rank, f"{what} entry") for a in axes]
    if len(set(out)) != len(out):
        raise ShapeError(f"{what} {list(axes)} contain a duplicate axis")
    return out


def dim_product(dims: Sequence[Dim]) -> Dim:
    """Product of dims (UNKNOWN if any is unknown; sympy for symbolic dims)."""
    dims = [normalize_dim(d) for d in dims]
    if any(is_unknown(d) for d in dims):
        return UNKNOWN
    if all(isinstance(d, int) for d in dims):
        return math.prod(dims)  # type: ignore[arg-type]
    return normalize_dim(sympy.Mul(*dims))


def dim_sum(dims: Sequence[Dim]) -> Dim:
    """Sum of dims (UNKNOWN if any is unknown; sympy for symbolic dims)."""
    dims = [normalize_dim(d) for d in dims]
    if any(is_unknown(d) for d in dims):
        return UNKNOWN
    if all(isinstance(d, int) for d in dims):
        return sum(dims)  # type: ignore[arg-type]
    return normalize_dim(sympy.Add(*dims))


def dim_add(d: Dim, k: int) -> Dim:
    """``d + k`` for a dim (UNKNOWN stays UNKNOWN)."""
    d = normalize_dim(d)
    if is_unknown(d):
        return UNKNOWN
    return d + k if isinstance(d, int) else normalize_dim(d + k)


def static_dim(d: Dim) -> int | None:
    """A dim's size when it is a known integer, else None (symbolic or UNKNOWN)."""
    d = normalize_dim(d)
    return d if isinstance(d, int) and d >= 0 else None
