"""Matching helpers shared by the rewrite rules: constants, splats, uses, type checks.

Rules compare *values*, never printed text. A constant is only read when its data is in origin
layout (a constant already converted to a storage format by ``fold-trans-data`` holds storage
data and is treated as opaque), so that a rule never misreads a laid-out array.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph import ConstantOp, GraphOp
from tilegraph.dialects.layout_type import TensorType


def constant_array(value: SSAValue | None) -> np.ndarray | None:
    """The origin-layout data of a ``graph.constant`` value, else None (also when elided)."""
    if value is None or not isinstance(value.owner, ConstantOp):
        return None
    t = value.type
    if not isinstance(t, TensorType) or t.storage_format != t.origin_format:
        return None
    return value.owner.constant_array()


def splat_value(value: SSAValue | None) -> float | int | bool | None:
    """The one element value of a constant whose elements are all equal, else None.

    Signed zeros count as different (``-0.0`` is not a splat of ``0.0``) and NaN never
    equals itself, so a NaN constant is no splat.
    """
    data = constant_array(value)
    if data is None or data.size == 0:
        return None
    flat = data.reshape(-1)
    first = flat[0]
    if flat.dtype.kind == "f":
        if not np.all(flat == first) or np.isnan(first):
            return None
        if np.any(np.signbit(flat) != np.signbit(first)):
            return None
    elif not np.all(flat == first):
        return None
    return first.item()


def is_splat_of(value: SSAValue | None, scalar: float, *, signed_zero: bool = True) -> bool:
    """Whether ``value`` is a constant with every element equal to ``scalar``.

    With ``signed_zero`` (the default), ``0.0`` and ``-0.0`` are told apart.
    """
    v = splat_value(value)
    if v is None or isinstance(v, bool):
        return False
    if v != scalar:
        return False
    if signed_zero and scalar == 0 and isinstance(v, float):
        return bool(np.signbit(v)) == bool(np.signbit(scalar))
    return True


def tensor_type_of(value: SSAValue) -> TensorType | None:
    t = value.type
    return t if isinstance(t, TensorType) else None


def in_origin_view(op: Operation) -> bool:
    """Every tensor operand and result of ``op`` is held in its origin layout.

    Rules that build new ops require this: the new ops' types come from shape functions,
    which produce origin views.
    """
    for v in (*op.operands, *op.results):
        t = tensor_type_of(v)
        if t is not None and t.storage_format != t.origin_format:
            return False
    return True


def only_user(value: SSAValue) -> Operation | None:
    """The single op using ``value`` (one use), else None."""
    uses = list(value.uses)
    return uses[0].operation if len(uses) == 1 else None


def feeds_return(value: SSAValue) -> bool:
    """Whether ``value`` is returned by its function (a graph output)."""
    return any(isinstance(use.operation, func.ReturnOp) for use in value.uses)


def replace_with_value(rewriter: PatternRewriter, op: Operation, value: SSAValue) -> bool:
    """Replace ``op``'s single result by ``value`` if their types are equal; True if done.

    Type equality keeps every consumer's view of shape, element type and formats, which is
    the precondition of every identity-style rule.
    """
    if len(op.results) != 1 or op.results[0].type != value.type:
        return False
    if value.name_hint is None:
        value.name_hint = op.results[0].name_hint
    rewriter.replace(op, [], [value])
    return True


def new_constant(array: np.ndarray, like: TensorType | None = None) -> ConstantOp:
    """A ``graph.constant`` of ``array`` (origin layout) whose type has ``like``'s formats
    when given and rank-compatible, else ND."""
    op = ConstantOp(array)
    t = op.output.type
    assert isinstance(t, TensorType)
    if like is not None and like.rank == t.rank and like.origin_format != t.origin_format:
        op = ConstantOp(array, t.with_origin_format(like.origin_format))
    return op


def evaluate(op: Operation, present: Sequence[np.ndarray | None]) -> tuple[np.ndarray, ...]:
    """Run a graph op's reference kernel (the interpreter's code) on arrays given for its
    present operands, in origin layout; one array per result. Raises what the kernel raises.
    """
    assert isinstance(op, GraphOp), op.name
    arrays = iter(present)
    inputs = [None if slot is None else next(arrays) for slot in op.operand_slots()]
    return tuple(np.asarray(out) for out in op.reference(*inputs))


def all_static(types: Sequence[TensorType | None]) -> bool:
    return all(t is not None and t.is_static for t in types)
