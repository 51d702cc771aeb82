"""The module's entry function and the names of its inputs and outputs.

Facts of the IR, read by every stage that runs or exports a module (the reference
interpreter, the tile executors, ``tilegraph.compile``, the ONNX exporter), so they sit
below all of them: :func:`entry_function` picks the function to run, :func:`set_entry`
records a choice, :func:`input_names` / :func:`output_names` give the interface names the
ONNX import recorded (``onnx.input_names``, ``onnx.output_names``).
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute


class InputError(ValueError):
    """Inputs do not match the function's signature (count, name, dtype or shape)."""


ENTRY_ATTR = "tilegraph.entry"
"""The module attribute naming the function to run (:func:`set_entry`)."""


def set_entry(module: ModuleOp, name: str) -> None:
    """Record ``name`` as the function to run (``tilegraph-run --entry``,
    ``tilegraph.compile(entry=...)``); every later :func:`entry_function` call without a
    name returns it. InputError naming the functions if the module has none of that name."""
    entry_function(module, name)
    module.attributes[ENTRY_ATTR] = StringAttr(name)


def _referenced_symbols(attr: Attribute) -> Iterator[str]:
    if isinstance(attr, SymbolRefAttr):
        yield attr.root_reference.data
    elif isinstance(attr, ArrayAttr):
        for a in attr.data:
            yield from _referenced_symbols(a)
    elif isinstance(attr, DictionaryAttr):
        for a in attr.data.values():
            yield from _referenced_symbols(a)


def entry_function(module: ModuleOp, name: str | None = None) -> func.FuncOp:
    """The function to run: ``name``; else the one :func:`set_entry` recorded; else
    ``main``; else the only function; else the one function that no op of the module refers
    to (by a call, a kernel launch, any symbol reference). InputError naming the functions
    when there is no such function, or the candidates when several are referred to by none.
    """
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    names = [f.sym_name.data for f in funcs]
    recorded = module.attributes.get(ENTRY_ATTR)
    if name is None and isinstance(recorded, StringAttr):
        name = recorded.data
    if name is None and "main" in names:
        name = "main"
    if name is not None:
        for f in funcs:
            if f.sym_name.data == name:
                return f
        listed = ", ".join(f"@{n}" for n in names) or "none"
        raise InputError(f"no function @{name} in the module (its functions: {listed})")
    if len(funcs) == 1:
        return funcs[0]
    referenced: set[str] = set()
    for op in module.walk():
        for attr in (*op.attributes.values(), *op.properties.values()):
            referenced.update(_referenced_symbols(attr))
    roots = [f for f in funcs if f.sym_name.data not in referenced]
    if len(roots) == 1:
        return roots[0]
    candidates = roots or funcs
    raise InputError(
        f"the module has {len(funcs)} functions and "
        + (f"{len(roots)} are called by no other" if roots else "each is called by another")
        + f" ({', '.join(f'@{f.sym_name.data}' for f in candidates)}): name the one to run "
        "(tilegraph-run --entry NAME, tilegraph.compile(..., entry=NAME))"
    )


def input_names(fn: func.FuncOp) -> list[str]:
    """Argument names: ONNX names when imported, else SSA names, else ``arg<i>``."""
    attr = fn.attributes.get("onnx.input_names")
    if isinstance(attr, ArrayAttr):
        return [a.data for a in attr.data if isinstance(a, StringAttr)]
    return [a.name_hint or f"arg{i}" for i, a in enumerate(fn.body.block.args)]


def output_names(fn: func.FuncOp) -> list[str]:
    attr = fn.attributes.get("onnx.output_names")
    if isinstance(attr, ArrayAttr):
        return [a.data for a in attr.data if isinstance(a, StringAttr)]
    return [f"output{i}" for i in range(len(fn.function_type.outputs))]
