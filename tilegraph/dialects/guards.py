"""Shape guards and symbol origins in the IR: attributes of the module.

A module compiled from concrete input sizes (``load_onnx(..., shape_env=)``, a
:class:`~tilegraph.runtime.session.Session`) relies on guards (``tilegraph.symbolic``).
They are kept on the module, not on the ops that needed them, so that every pass keeps them
whatever it does to those ops (a folded or fused op's guard still holds the compiled module
to its shapes), and they print and parse with the module::

    builtin.module attributes {
      tilegraph.guards = [
        {kind = "expect", condition = "s0 == 1", op = "<input>", reason = "input 'x' axis 0
         specialised to 1"},
        {kind = "assert", condition = "s1 == s2", op = "matmul_3", reason = "MatMul: ..."}],
      tilegraph.symbols = {s0 = ["x", 0], s1 = ["y", 1]}} { ... }

``tilegraph.symbols`` maps every source symbol (one per non-static input axis, including
those specialised to a constant or shared by duck sizing) to its (input name, axis): what a
call binds the guards with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Attribute

from tilegraph.symbolic.env import ShapeEnv
from tilegraph.symbolic.guards import Guard, GuardKind, condition_from_text, condition_text

GUARDS_ATTR = "tilegraph.guards"
SYMBOLS_ATTR = "tilegraph.symbols"

SymbolOrigins = Mapping[str, tuple[str, int]]
"""Symbol name -> (graph input name, axis)."""


class GuardAttributeError(ValueError):
    """The module's guard attributes are malformed (the message says where)."""


def record_shape_env(module: ModuleOp, env: ShapeEnv, origins: SymbolOrigins) -> None:
    """Store ``env``'s guards and the symbols' origins on ``module`` (replacing earlier ones)."""
    set_guards(module, env.guards)
    module.attributes[SYMBOLS_ATTR] = DictionaryAttr(
        {
            name: ArrayAttr([StringAttr(inp), IntegerAttr(axis, i64)])
            for name, (inp, axis) in origins.items()
        }
    )


def set_guards(module: ModuleOp, guards: Sequence[Guard]) -> None:
    module.attributes[GUARDS_ATTR] = ArrayAttr(
        [
            DictionaryAttr(
                {
                    "kind": StringAttr(g.kind.value),
                    "condition": StringAttr(condition_text(g.cond)),
                    "op": StringAttr(g.op),
                    "reason": StringAttr(g.reason),
                }
            )
            for g in guards
        ]
    )


def module_guards(module: ModuleOp) -> list[Guard]:
    """The guards a module carries (none: an empty list)."""
    attr = module.attributes.get(GUARDS_ATTR)
    if attr is None:
        return []
    if not isinstance(attr, ArrayAttr):
        raise GuardAttributeError(f"{GUARDS_ATTR} must be an array of dictionaries")
    guards = []
    for i, entry in enumerate(attr.data):
        where = f"{GUARDS_ATTR}[{i}]"
        if not isinstance(entry, DictionaryAttr):
            raise GuardAttributeError(f"{where} must be a dictionary")
        fields = {k: _string(v, f"{where}.{k}") for k, v in entry.data.items()}
        missing = {"kind", "condition", "op", "reason"} - set(fields)
        if missing:
            raise GuardAttributeError(f"{where} lacks {', '.join(sorted(missing))}")
        try:
            kind = GuardKind(fields["kind"])
        except ValueError:
            raise GuardAttributeError(
                f"{where}.kind must be 'expect' or 'assert', got '{fields['kind']}'"
            ) from None
        try:
            cond = condition_from_text(fields["condition"])
        except ValueError as e:
            raise GuardAttributeError(f"{where}.condition: {e}") from None
        guards.append(Guard(kind, cond, fields["op"], fields["reason"]))
    return guards


def symbol_origins(module: ModuleOp) -> dict[str, tuple[str, int]]:
    """Symbol name -> (input name, axis) as the module records them (empty if none)."""
    attr = module.attributes.get(SYMBOLS_ATTR)
    if attr is None:
        return {}
    if not isinstance(attr, DictionaryAttr):
        raise GuardAttributeError(f"{SYMBOLS_ATTR} must be a dictionary")
    out: dict[str, tuple[str, int]] = {}
    for name, value in attr.data.items():
        if (
            not isinstance(value, ArrayAttr)
            or len(value.data) != 2
            or not isinstance(value.data[0], StringAttr)
            or not isinstance(value.data[1], IntegerAttr)
        ):
            raise GuardAttributeError(f'{SYMBOLS_ATTR}.{name} must be ["input", axis]')
        out[name] = (value.data[0].data, value.data[1].value.data)
    return out


def bind_symbols(
    origins: SymbolOrigins, inputs: Mapping[str, np.ndarray | Sequence[int]]
) -> dict[str, int]:
    """Each origin symbol's size in ``inputs`` (arrays or shapes, by input name)."""
    values: dict[str, int] = {}
    for name, (inp, axis) in origins.items():
        if inp not in inputs:
            continue
        value = inputs[inp]
        shape = value.shape if isinstance(value, np.ndarray) else tuple(value)
        if axis < len(shape):
            values[name] = int(shape[axis])
    return values


def _string(value: Attribute, where: str) -> str:
    if not isinstance(value, StringAttr):
        raise GuardAttributeError(f"{where} must be a string")
    return value.data
