"""The one evaluator of ``arith`` on index values: MLIR's semantics, for every consumer.

The tile level computes loop bounds, tile offsets, block shares and buffer slots with
``arith`` ops on ``index`` values. Everything that evaluates them — the tile interpreter
(:class:`~tilegraph.runtime.tile_interpreter.IndexArithFunctions`), the fast executor and
its batching (:mod:`tilegraph.runtime.fast_executor`: codegen and batching),
the cycle model (:mod:`tilegraph.cost_model.cycles.program`) and the kernel walk
(:mod:`tilegraph.lowering.analysis.kernel_walk`) — asks this module what an op computes, so they
cannot disagree.

Values are Python ints (``index`` is 64 bits; signed values do not wrap, as on the host);
``i1`` values are bools. The semantics are MLIR's:

* ``addi`` / ``subi`` / ``muli``; ``minsi`` / ``maxsi``;
* ``divsi`` truncates toward zero, ``remsi`` takes the dividend's sign (C's ``/`` and
  ``%``: ``-7 divsi 2 = -3``, ``-7 remsi 2 = -1``), ``floordivsi`` rounds down
  (``-4``), ``ceildivsi`` up (``-3``);
* ``divui`` / ``remui`` / ``ceildivui`` / ``minui`` / ``maxui`` and the unsigned ``cmpi``
  predicates read their operands as unsigned numbers of the operand type's width;
* ``cmpi`` (all ten predicates), ``select``, ``index_cast`` (wraps to the result's width),
  ``constant``.

Three forms of each op, one definition: :func:`evaluator` (a function of the operand
values, on Python ints), :func:`vector_evaluator` (the same on numpy int64 arrays that
broadcast, for the fast executor's batches: ``np.fmod``'s truncation, not ``%``), and
:func:`expression` (Python source of either, for the code generators, over the names in
:data:`NAMESPACE`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, i1
from xdsl.ir import Attribute, Operation

INDEX_BITS = 64
"""The width of ``index`` (the host's)."""


def _bits(type_: Attribute) -> int:
    """The width of an integer or index type."""
    if isinstance(type_, IntegerType):
        return type_.width.data
    if isinstance(type_, IndexType):
        return INDEX_BITS
    raise TypeError(f"{type_} is not an integer type")


# ---- scalar semantics (Python ints) ---------------------------------------------------------


def divsi(a: int, b: int) -> int:
    """``arith.divsi``: the quotient rounded toward zero."""
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def remsi(a: int, b: int) -> int:
    """``arith.remsi``: the remainder of :func:`divsi`, with the dividend's sign."""
    return a - b * divsi(a, b)


def ceildivsi(a: int, b: int) -> int:
    """``arith.ceildivsi``: the quotient rounded up."""
    return -(-a // b)


def to_unsigned(a: int, bits: int) -> int:
    """``a`` read as an unsigned ``bits``-bit number."""
    return a & ((1 << bits) - 1)


def wrap(a: int, bits: int) -> int:
    """``a`` wrapped to a signed ``bits``-bit number (``index_cast`` to that width)."""
    u = to_unsigned(a, bits)
    return u - (1 << bits) if u >> (bits - 1) else u


def divui(a: int, b: int, bits: int) -> int:
    """``arith.divui``."""
    return wrap(to_unsigned(a, bits) // to_unsigned(b, bits), bits)


def remui(a: int, b: int, bits: int) -> int:
    """``arith.remui``."""
    return wrap(to_unsigned(a, bits) % to_unsigned(b, bits), bits)


def ceildivui(a: int, b: int, bits: int) -> int:
    """``arith.ceildivui``."""
    return wrap(-(-to_unsigned(a, bits) // to_unsigned(b, bits)), bits)


def minui(a: int, b: int, bits: int) -> int:
    """``arith.minui``: the operand that is smaller as an unsigned number."""
    return a if to_unsigned(a, bits) <= to_unsigned(b, bits) else b


def maxui(a: int, b: int, bits: int) -> int:
    """``arith.maxui``."""
    return a if to_unsigned(a, bits) >= to_unsigned(b, bits) else b


def select(c: Any, a: Any, b: Any) -> Any:
    """``arith.select`` (an unknown when the condition is one: :class:`DataDependent`)."""
    if isinstance(c, DataDependent):
        return DataDependent()
    return a if c else b


def minsi(a: Any, b: Any) -> Any:
    """``arith.minsi`` (an unknown when either operand is one)."""
    return DataDependent() if _unknown(a, b) else min(a, b)


def maxsi(a: Any, b: Any) -> Any:
    """``arith.maxsi`` (an unknown when either operand is one)."""
    return DataDependent() if _unknown(a, b) else max(a, b)


def _unknown(a: Any, b: Any) -> bool:
    return isinstance(a, DataDependent) or isinstance(b, DataDependent)


def _unsigned_compare(compare: Callable[[Any, Any], Any]) -> Callable[[int, int, int], bool]:
    def run(a: int, b: int, bits: int) -> bool:
        return compare(to_unsigned(a, bits), to_unsigned(b, bits))

    return run


class DataDependent:
    """An index known only when the kernel runs, from data it reads (``tile.get_value``),
    as the analyses that walk a kernel without data hold it (the cycle model, the kernel
    walk). ``+``, ``-`` and ``*`` (the address arithmetic of a DMA offset) give another
    unknown, and so do ``<``, ``<=``, ``>``, ``>=``, ``minsi`` / ``maxsi`` and a ``select``
    on an unknown condition (a source row picked by a length read from data:
    ReverseSequence's); it equals nothing but itself, so two accesses at such offsets never
    count as the same bytes (the L2 model takes each for a miss). Loop bounds and divisions
    cannot use it (a ``TypeError``)."""

    __slots__ = ()

    def _unknown(self, other: Any) -> DataDependent:
        return DataDependent()

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _unknown
    __lt__ = __le__ = __gt__ = __ge__ = _unknown

    def __repr__(self) -> str:
        return "<data-dependent index>"


# ---- vectorised semantics (numpy int64 arrays, broadcasting) -------------------------------


def _v_divsi(a: Any, b: Any) -> Any:
    """:func:`divsi` elementwise (``a - fmod(a, b)`` is a multiple of ``b``)."""
    return (a - np.fmod(a, b)) // b


def _v_to_unsigned(a: Any, bits: int) -> Any:
    array = np.asarray(a, dtype=np.int64)
    if bits >= 64:
        return array.view(np.uint64)
    return array & ((1 << bits) - 1)


def _v_wrap(a: Any, bits: int) -> Any:
    if bits >= 64:
        return np.asarray(a).astype(np.uint64).view(np.int64)
    u = np.asarray(a, dtype=np.int64) & ((1 << bits) - 1)
    return np.where(u >> (bits - 1), u - (1 << bits), u)


def _v_unsigned_op(
    op: Callable[[Any, Any], Any],
) -> Callable[[Any, Any, int], Any]:
    def run(a: Any, b: Any, bits: int) -> Any:
        return _v_wrap(op(_v_to_unsigned(a, bits), _v_to_unsigned(b, bits)), bits)

    return run


def _v_unsigned_pick(keep_a: Callable[[Any, Any], Any]) -> Callable[[Any, Any, int], Any]:
    def run(a: Any, b: Any, bits: int) -> Any:
        return np.where(keep_a(_v_to_unsigned(a, bits), _v_to_unsigned(b, bits)), a, b)

    return run


def _v_unsigned_compare(compare: Callable[[Any, Any], Any]) -> Callable[[Any, Any, int], Any]:
    def run(a: Any, b: Any, bits: int) -> Any:
        return compare(_v_to_unsigned(a, bits), _v_to_unsigned(b, bits))

    return run


def _v_ceildivu(a: Any, b: Any) -> Any:
    return a // b + (a % b != 0)


# ---- the table ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Semantics:
    """What one op computes (one ``cmpi`` predicate each)."""

    name: str
    """Its helpers' names in :data:`NAMESPACE`: ``_ia_<name>`` and ``_ia_<name>_v``."""
    scalar: Callable[..., Any]
    """On Python ints; the unsigned ops and ``index_cast`` take the width last."""
    vector: Callable[..., Any]
    """The same on numpy int64 arrays (and ints), broadcasting."""
    infix: str | None = None
    """A Python operator that computes ``scalar`` on ints and ``vector`` on arrays (for
    generated code: no call)."""
    width: bool = False
    """Takes the operand type's width (unsigned ops) or the result's (``index_cast``)."""


def _unsigned(name: str, scalar: Callable[..., Any], vector: Callable[..., Any]) -> Semantics:
    return Semantics(name, scalar, vector, width=True)


BINARY: dict[type[Operation], Semantics] = {
    arith.AddiOp: Semantics("addi", operator.add, operator.add, "+"),
    arith.SubiOp: Semantics("subi", operator.sub, operator.sub, "-"),
    arith.MuliOp: Semantics("muli", operator.mul, operator.mul, "*"),
    arith.DivSIOp: Semantics("divsi", divsi, _v_divsi),
    arith.RemSIOp: Semantics("remsi", remsi, np.fmod),
    arith.FloorDivSIOp: Semantics("floordivsi", operator.floordiv, operator.floordiv, "//"),
    arith.CeilDivSIOp: Semantics("ceildivsi", ceildivsi, ceildivsi),
    arith.MinSIOp: Semantics("minsi", minsi, np.minimum),
    arith.MaxSIOp: Semantics("maxsi", maxsi, np.maximum),
    arith.DivUIOp: _unsigned("divui", divui, _v_unsigned_op(operator.floordiv)),
    arith.RemUIOp: _unsigned("remui", remui, _v_unsigned_op(np.remainder)),
    arith.CeilDivUIOp: _unsigned("ceildivui", ceildivui, _v_unsigned_op(_v_ceildivu)),
    arith.MinUIOp: _unsigned("minui", minui, _v_unsigned_pick(operator.le)),
    arith.MaxUIOp: _unsigned("maxui", maxui, _v_unsigned_pick(operator.ge)),
}
"""Binary integer ops by class."""

_SIGNED_COMPARES = (
    ("eq", operator.eq, "=="),
    ("ne", operator.ne, "!="),
    ("slt", operator.lt, "<"),
    ("sle", operator.le, "<="),
    ("sgt", operator.gt, ">"),
    ("sge", operator.ge, ">="),
)
CMPI: tuple[Semantics, ...] = (
    *(Semantics(f"cmpi_{n}", f, f, infix) for n, f, infix in _SIGNED_COMPARES),
    *(
        _unsigned(f"cmpi_{n}", _unsigned_compare(f), _v_unsigned_compare(f))
        for n, f in (
            ("ult", operator.lt),
            ("ule", operator.le),
            ("ugt", operator.gt),
            ("uge", operator.ge),
        )
    ),
)
"""``arith.cmpi`` by predicate (MLIR's numbering: eq, ne, slt, sle, sgt, sge, ult, ule, ugt,
uge)."""

SELECT = Semantics("select", select, np.where)
INDEX_CAST = Semantics("index_cast", wrap, _v_wrap, width=True)


NAMESPACE: dict[str, Any] = {
    **{
        f"_ia_{s.name}{suffix}": fn
        for s in (*BINARY.values(), *CMPI, SELECT, INDEX_CAST)
        for suffix, fn in (("", s.scalar), ("_v", s.vector))
    },
    "_ia_data_dependent": DataDependent,
}
"""The helpers :func:`expression` refers to, for ``exec`` of generated code (and
``_ia_data_dependent()``, a :class:`DataDependent`, for code that walks a kernel without
data)."""


def _always(found: Semantics) -> Callable[[Any], Semantics]:
    return lambda op: found


_RULES: dict[type[Operation], Callable[[Any], Semantics]] = {
    **{cls: _always(found) for cls, found in BINARY.items()},
    arith.CmpiOp: lambda op: CMPI[op.predicate.value.data],
    arith.SelectOp: _always(SELECT),
    arith.IndexCastOp: _always(INDEX_CAST),
}
"""The semantics of an op by its class (one dictionary look-up for any op)."""

INDEX_OPS: tuple[type[Operation], ...] = tuple(_RULES)
"""Every op class this module evaluates (besides ``arith.constant``)."""


def semantics(op: Operation) -> Semantics | None:
    """What ``op`` computes, or None when it is not index arithmetic of this module."""
    rule = _RULES.get(type(op))
    return None if rule is None else rule(op)


def _width(op: Operation) -> int:
    if isinstance(op, arith.IndexCastOp):
        return _bits(op.result.type)
    return _bits(op.operands[0].type)


def evaluator(op: Operation, vector: bool = False) -> Callable[..., Any] | None:
    """The function of ``op``'s operand values that computes its result — on Python ints,
    or with ``vector`` on numpy arrays — or None when ``op`` is not index arithmetic."""
    found = semantics(op)
    if found is None:
        return None
    fn = found.vector if vector else found.scalar
    return partial(_with_width, fn, _width(op)) if found.width else fn


def _with_width(fn: Callable[..., Any], bits: int, *args: Any) -> Any:
    return fn(*args, bits)


def vector_evaluator(op: Operation) -> Callable[..., Any] | None:
    """:func:`evaluator` on numpy int64 arrays that broadcast (and ints)."""
    return evaluator(op, vector=True)


def expression(op: Operation, operands: Sequence[str], vector: bool = False) -> str | None:
    """A Python expression computing ``op`` from the expressions ``operands`` (on ints, or
    with ``vector`` on arrays), over the names of :data:`NAMESPACE`; None when ``op`` is not
    index arithmetic."""
    found = semantics(op)
    if found is None:
        return None
    if found.infix is not None:
        a, b = operands
        return f"({a} {found.infix} {b})"
    args = [*operands, str(_width(op))] if found.width else list(operands)
    return f"_ia_{found.name}{'_v' if vector else ''}({', '.join(args)})"


def constant(op: arith.ConstantOp) -> int | bool | None:
    """An integer ``arith.constant``'s value (a bool for ``i1``), else None."""
    attr = op.value
    if not isinstance(attr, IntegerAttr):
        return None
    if attr.type == i1:
        return bool(attr.value.data)
    return attr.value.data
