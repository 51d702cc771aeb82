"""Matching helpers shared by the rewrite rules: constants, splats, uses, type checks.

Rules compare *values*, never printed text. A constant is only read when its data is in origin
layout (a constant already converted to a storage format by ``fold-trans-data`` holds storage
data and is treated as opaque), so that a rule never misreads a laid-out array.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
from xdsl.dialects import func
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph import ConstantOp, GraphOp
from tilegraph.dialects.graph.base import ShapeError
from tilegraph.dialects.graph.shape_ops import ReshapeOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import is_unknown

_Op = TypeVar("_Op", bound=Operation)


def constant_array(value: SSAValue | None) -> np.ndarray | None:
    """The origin-layout data of a ``graph.constant`` value, else None (also when elided)."""
    if value is None or not isinstance(value.owner, ConstantOp):
        return None
    t = value.type
    if not isinstance(t, TensorType) or t.storage_format != t.origin_format:
        return None
    return value.owner.constant_array()


def one_element_constant(value: SSAValue | None, rank: int) -> bool:
    """A constant of one element whose broadcast changes no shape of rank ``rank``: the
    other operand of a binary op that then commutes with any move of its tensor operand."""
    data = constant_array(value)
    return data is not None and data.size == 1 and data.ndim <= rank


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


class OpSequence:
    """The new ops of a rewrite, in the order they are made (inserted together before the
    op they replace): each builder appends its op and returns its result."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []

    def op(self, cls: type[GraphOp], *operands: SSAValue | None, **attrs: Any) -> SSAValue:
        made = cls.make(*operands, **attrs)
        self.ops.append(made)
        return made.results[0]

    def const(self, array: np.ndarray) -> SSAValue:
        made = new_constant(array)
        self.ops.append(made)
        return made.results[0]


def evaluate(op: Operation, present: Sequence[np.ndarray | None]) -> tuple[np.ndarray, ...]:
    """Run a graph op's reference kernel (the interpreter's code) on arrays given for its
    present operands, in origin layout; one array per result. Raises what the kernel raises.
    """
    assert isinstance(op, GraphOp), op.name
    arrays = iter(present)
    inputs = [None if slot is None else next(arrays) for slot in op.operand_slots()]
    with np.errstate(all="ignore"):  # IEEE values, as the interpreter runs them
        return tuple(np.asarray(out) for out in op.reference(*inputs))


def static_shape(value: SSAValue) -> list[int] | None:
    """The dims of a tensor value of static shape, else None."""
    t = tensor_type_of(value)
    return [int(d) for d in t.origin_shape] if t is not None and t.is_static else None  # type: ignore[arg-type]


def all_static(types: Sequence[TensorType | None]) -> bool:
    return all(t is not None and t.is_static for t in types)


def numpy_dtype(value: SSAValue) -> np.dtype | None:
    """The numpy element type of a tensor value, else None."""
    t = tensor_type_of(value)
    return None if t is None else np.dtype(t.dtype.numpy)


def is_float(value: SSAValue) -> bool:
    """Whether ``value`` is a tensor of a floating-point element type."""
    dtype = numpy_dtype(value)
    return dtype is not None and dtype.kind == "f"


def make_typed(
    cls: type[GraphOp], *operands: SSAValue | Operation | None, like: Attribute, **attrs: Any
) -> GraphOp | None:
    """``cls.make(*operands, **attrs)`` if its shape function accepts the operands and its
    single result type equals ``like``; else None.

    Rules build replacements with this so that no consumer sees another type. A rejected
    op is dropped at once: it would otherwise keep uses of its operands alive and make
    :func:`only_user` answers wrong.
    """
    try:
        op = cls.make(*operands, **attrs)
    except (ShapeError, ValueError, TypeError):
        return None
    if len(op.results) != 1 or op.results[0].type != like:
        op.drop_all_references()
        return None
    return op


def use_count(value: SSAValue) -> int:
    """How many uses ``value`` has."""
    return len(list(value.uses))


def made_by(value: SSAValue, cls: type[_Op], uses: int = 1) -> _Op | None:
    """The op of type ``cls`` (in origin view) producing ``value``, when ``value`` has
    exactly ``uses`` uses: a pattern's intermediate that nothing outside it reads."""
    owner = value.owner
    if isinstance(owner, cls) and use_count(value) == uses and in_origin_view(owner):
        return owner
    return None


def split_operands(
    op: Operation, pick: Callable[[SSAValue], object]
) -> tuple[SSAValue, SSAValue] | None:
    """``(matched, other)``: the operand of a binary op that ``pick`` accepts, and the other
    (the first operand tried first)."""
    a, b = op.operands
    if pick(a):
        return a, b
    if pick(b):
        return b, a
    return None


def replace_decomposition(
    rewriter: PatternRewriter, root: Operation, new_ops: Sequence[Operation], dead: list[Operation]
) -> bool:
    """Replace ``root`` by ``new_ops`` (the last one's result) when the types agree, else
    drop ``new_ops`` and return False; then erase the ops of the decomposition ``dead`` that
    are left without uses."""
    result = new_ops[-1].results[0]
    if result.type != root.results[0].type:
        for op in new_ops:
            op.drop_all_references()
        return False
    result.name_hint = root.results[0].name_hint
    rewriter.replace(root, list(new_ops), [result])
    for op in dead:
        if op.parent is not None and all(not r.uses for r in op.results):
            rewriter.erase(op)
    return True


def replace_with_ops(
    rewriter: PatternRewriter, op: Operation, new_ops: Sequence[Operation]
) -> None:
    """Replace ``op``'s single result by the last of ``new_ops`` (inserted before ``op``),
    which must have the same type; the new result keeps ``op``'s name hint, and unnamed
    intermediate results are named after it with a suffix (``%y_k0``) so that ``%y`` stays
    the final value in printed IR."""
    result = new_ops[-1].results[0]
    assert result.type == op.results[0].type, "replacement changes the result type"
    hint = op.results[0].name_hint
    result.name_hint = hint
    if hint is not None:
        for i, new in enumerate(new_ops[:-1]):
            for r in new.results:
                if r.name_hint is None:
                    r.name_hint = f"{hint}_k{i}"
    rewriter.replace(op, list(new_ops), [result])


def reshaped(value: SSAValue, shape: list[int], ops: list[Operation]) -> SSAValue:
    """``value`` reshaped to ``shape`` (ONNX Reshape's ``0`` and ``-1`` allowed): the shape
    constant and the reshape appended to ``ops``; ``value`` itself when it has that shape
    already."""
    t = value.type
    if isinstance(t, TensorType) and list(t.origin_shape) == shape:
        return value
    target = ints_constant(shape)
    reshape = ReshapeOp.make(value, target)
    ops += [target, reshape]
    return reshape.results[0]


def replace_if_typed(
    rewriter: PatternRewriter, op: Operation, new_ops: Sequence[Operation]
) -> bool:
    """:func:`replace_with_ops` when the last of ``new_ops`` has ``op``'s result type (a
    shape function may disagree with a rewrite's expectation); else ``new_ops`` are
    dropped and the IR is untouched. Whether it replaced."""
    if new_ops[-1].results[0].type != op.results[0].type:
        drop_ops(new_ops)
        return False
    replace_with_ops(rewriter, op, new_ops)
    return True


def drop_ops(ops: Sequence[Operation]) -> None:
    """Forget ops built but not inserted (their uses of each other and of the IR)."""
    for op in reversed(ops):
        op.drop_all_references()


def scalar_constant(value: float | int | np.generic, like: SSAValue) -> ConstantOp:
    """A rank-0 ``graph.constant`` of ``value`` in ``like``'s element type."""
    dtype = numpy_dtype(like)
    assert dtype is not None
    return new_constant(np.array(value, dtype=dtype))


def filled_constant(value: float | int, like: SSAValue, max_elements: int) -> ConstantOp | None:
    """A constant with ``like``'s type (shape, element type, origin format) whose elements
    all equal ``value``; None if the shape is symbolic or has more than ``max_elements``."""
    t = tensor_type_of(like)
    if t is None or not t.is_static or t.storage_format != t.origin_format:
        return None
    n = t.num_elements()
    if n is None or n > max_elements:
        return None
    array = np.full([int(d) for d in t.origin_shape], value, dtype=np.dtype(t.dtype.numpy))
    op = new_constant(array, t)
    return op if op.output.type == t else None


def constant_ints(value: SSAValue | None) -> tuple[int, ...] | None:
    """The values of a constant integer tensor (shape, axes, pads, ...) flattened, else None."""
    data = constant_array(value)
    if data is None or data.dtype.kind not in "iu":
        return None
    return tuple(int(v) for v in data.reshape(-1))


def ints_constant(values: Sequence[int]) -> ConstantOp:
    """A 1-D int64 ``graph.constant`` (a new shape, axes, pads, ... operand)."""
    return new_constant(np.array(list(values), dtype=np.int64))


def dims_known(t: TensorType | None) -> bool:
    """Every dim of ``t`` is static or symbolic (none UNKNOWN).

    Rules that conclude "same type, so same shape, so the op is the identity" need this:
    two UNKNOWN dims compare equal as types but may differ at run time.
    """
    return t is not None and not any(is_unknown(d) for d in t.origin_shape)
