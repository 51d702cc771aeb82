"""Tiling parameters: the named choices a kernel's lowering makes, and where a choice is kept.

Every choice a tiling strategy or a lowering transform makes for one kernel (a matmul's base
block, a convolution's row tile, whether a buffer is double-buffered, ...) is a
:class:`TilingParam`: a name, its legal values and the value the heuristic picks. The
strategy declares it where it makes the choice (``KernelBuilder.choose``), so the search
space of a kernel is read off the same code that lowers it, and the heuristic's pick is one
point of that space: a kernel lowered with no parameters and one lowered with every default
written out are the same kernel.

A chosen point is carried on the macro kernel's ``func.func`` as ``tile.params``, a
dictionary of integer / string / boolean attributes (a tuner or a tuning database writes
it before ``tile-kernels``; the transforms after it read the same attribute)::

    func.func @kernel_3(...) attributes {tile.kernel = "cube",
        tile.params = {"matmul.m1" = 4 : i64, "multi_buffer.l1_a" = true}}

A name nobody declared is ignored by the lowering (it may be another strategy's), a value
outside the declared values is an error (:class:`TilingParamError`) naming the kernel.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BoolAttr,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute

PARAMS_ATTR = "tile.params"
"""Function attribute: the tiling parameters chosen for this kernel (see module doc)."""

ParamValue = int | bool | str
"""A parameter's value: a size or a count, an on / off switch, or a named alternative."""


class TilingParamError(ValueError):
    """A ``tile.params`` entry of the wrong type, or a value outside the declared values."""


@dataclass(frozen=True)
class TilingParam:
    """One named choice of a kernel's lowering, with its legal values."""

    name: str
    """Dotted, strategy first: ``matmul.m1``, ``conv.row_tile``, ``multi_buffer.l1_a``."""
    values: tuple[ParamValue, ...]
    """Every value the lowering accepts, in increasing order for sizes. A value may still
    fail for a given combination with the other parameters (a block that does not fit a
    buffer): the strategy then reports why and the point is infeasible."""
    default: ParamValue
    """What the heuristic picks (always one of ``values``)."""
    doc: str = ""
    """One line: what the parameter sizes or switches."""

    def __post_init__(self) -> None:
        if self.default not in self.values:
            raise TilingParamError(
                f"tiling parameter '{self.name}': default {self.default!r} is not one of "
                f"its values {list(self.values)}"
            )


def param_values(*candidates: int, default: int, upper: int) -> tuple[int, ...]:
    """The sorted, distinct candidates in ``1..upper`` plus ``default`` (a size parameter's
    values: typically powers of two up to a bound, and whatever the heuristic picked)."""
    return tuple(sorted({c for c in candidates if 1 <= c <= upper} | {default}))


def powers_of_two(upper: int) -> tuple[int, ...]:
    """1, 2, 4, ... up to ``upper`` (inclusive when it is one)."""
    out, value = [], 1
    while value <= upper:
        out.append(value)
        value *= 2
    return tuple(out)


def _attr_of(value: ParamValue) -> Attribute:
    if isinstance(value, bool):
        return BoolAttr.from_bool(value)
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    return StringAttr(value)


def _value_of(name: str, attr: Attribute, where: str) -> ParamValue:
    if isinstance(attr, IntegerAttr):
        width = attr.type.width.data if isinstance(attr.type, IntegerType) else 64
        return bool(attr.value.data) if width == 1 else int(attr.value.data)
    if isinstance(attr, StringAttr):
        return attr.data
    raise TilingParamError(
        f"{where}: {PARAMS_ATTR} entry '{name}' must be an integer, a boolean or a string"
    )


def params_attr(params: Mapping[str, ParamValue]) -> DictionaryAttr:
    """``tile.params`` for ``params`` (keys sorted, so equal points print the same)."""
    return DictionaryAttr({k: _attr_of(params[k]) for k in sorted(params)})


def kernel_params(fn: func.FuncOp) -> dict[str, ParamValue]:
    """The parameters recorded on a kernel (empty when it has none)."""
    attr = fn.attributes.get(PARAMS_ATTR)
    if attr is None:
        return {}
    where = f"kernel @{fn.sym_name.data}"
    if not isinstance(attr, DictionaryAttr):
        raise TilingParamError(f"{where}: {PARAMS_ATTR} must be a dictionary")
    return {k: _value_of(k, v, where) for k, v in attr.data.items()}


def set_kernel_params(fn: func.FuncOp, params: Mapping[str, ParamValue]) -> None:
    """Record ``params`` on a kernel (removing ``tile.params`` when empty)."""
    if params:
        fn.attributes[PARAMS_ATTR] = params_attr(params)
    else:
        fn.attributes.pop(PARAMS_ATTR, None)


def checked_choice(param: TilingParam, chosen: Mapping[str, ParamValue], where: str) -> ParamValue:
    """The value of ``param`` in ``chosen`` (its default when absent), checked against the
    declared values."""
    if param.name not in chosen:
        return param.default
    value = chosen[param.name]
    if value not in param.values or type(value) is not type(param.default):
        raise TilingParamError(
            f"{where}: tiling parameter '{param.name}' = {value!r} is not one of "
            f"{list(param.values)}"
        )
    return value


def default_point(space: Sequence[TilingParam]) -> dict[str, ParamValue]:
    """The heuristic's point of a space: every parameter at its default."""
    return {p.name: p.default for p in space}
