"""Where tools find passes, pipelines, dialects and interpreter functions.

tilegraph's own passes register themselves here with :func:`register_pass`. Passes, dialects
and interpreter functions from other packages plug in through Python entry points, so
researchers never edit tilegraph to add one (``docs/tutorial-writing-a-pass.md`` walks through
a complete plugin, ``examples/plugin/``):

.. code-block:: toml

    [project.entry-points."tilegraph.passes"]
    my-pass = "my_package.my_module:MyPass"          # a ModulePass subclass

    [project.entry-points."tilegraph.dialects"]
    mydialect = "my_package.dialect:MyDialect"       # an xdsl Dialect

    [project.entry-points."tilegraph.interpreters"]
    mydialect = "my_package.interpreter:MyFunctions" # an InterpreterFunctions subclass

A plugin pass whose name is also one of tilegraph's is ignored (tilegraph's wins, and
``tilegraph-opt --help`` says so). Interpreter functions are instantiated without arguments
and registered by tilegraph's interpreters next to tilegraph's own.

xDSL's own ``xdsl.universe`` entry points keep working too: ``tilegraph-opt`` loads every
upstream pass and dialect the way ``xdsl-opt`` does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from xdsl.interpreter import InterpreterFunctions
from xdsl.ir import Dialect
from xdsl.passes import ModulePass

PassFactory = Callable[[], type[ModulePass]]

PASSES_GROUP = "tilegraph.passes"
DIALECTS_GROUP = "tilegraph.dialects"
INTERPRETERS_GROUP = "tilegraph.interpreters"

_PASSES: dict[str, PassFactory] = {}


def register_pass(cls: type[ModulePass]) -> type[ModulePass]:
    """Class decorator: make a pass available under its ``name``."""
    if cls.name in _PASSES:
        raise ValueError(f"pass '{cls.name}' is registered twice")
    _PASSES[cls.name] = lambda: cls
    return cls


@dataclass(frozen=True)
class PluginEntry:
    """One entry point of a tilegraph plugin group, and the distribution it comes from."""

    group: str
    name: str
    target: str
    """What the entry point names, ``"package.module:attribute"``."""
    origin: str
    """The installed distribution that declares it, ``"name version"`` (``"?"`` if unknown)."""
    entry_point: metadata.EntryPoint

    def load(self) -> Any:
        """Import and return the named object (exceptions of the import propagate)."""
        return self.entry_point.load()


@functools.cache
def plugin_entries(group: str) -> tuple[PluginEntry, ...]:
    """The entry points of ``group`` declared by installed distributions, by name.

    Scanned once per process (``plugin_entries.cache_clear()`` rescans); nothing is imported.
    """
    found: dict[str, PluginEntry] = {}
    for ep in metadata.entry_points(group=group):
        dist = ep.dist
        origin = f"{dist.name} {dist.version}" if dist is not None else "?"
        found.setdefault(ep.name, PluginEntry(group, ep.name, ep.value, origin, ep))
    return tuple(found[name] for name in sorted(found))


def _load_builtin_passes() -> None:
    """Import every module of :mod:`tilegraph.passes` and :mod:`tilegraph.lowering`; pass
    modules register on import."""
    import importlib
    import pkgutil

    import tilegraph.lowering as lowering
    import tilegraph.passes as package

    for pkg in (package, lowering):
        for info in pkgutil.iter_modules(pkg.__path__):
            importlib.import_module(f"{pkg.__name__}.{info.name}")


def builtin_passes() -> dict[str, PassFactory]:
    """tilegraph's own passes and pipelines (no plugins): what ``docs/passes.md`` lists."""
    _load_builtin_passes()
    return dict(_PASSES)


def plugin_passes() -> dict[str, PluginEntry]:
    """Passes from ``tilegraph.passes`` entry points, by name (including any that a
    tilegraph pass of the same name shadows)."""
    return {entry.name: entry for entry in plugin_entries(PASSES_GROUP)}


def tilegraph_passes() -> dict[str, PassFactory]:
    """tilegraph's passes and pipelines, plus those from ``tilegraph.passes`` entry points
    (a plugin never replaces a tilegraph pass of the same name)."""
    found: dict[str, PassFactory] = {name: e.load for name, e in plugin_passes().items()}
    found.update(builtin_passes())
    return found


def all_passes() -> dict[str, PassFactory]:
    """Every pass a tool offers: xDSL's upstream passes and tilegraph's (ours win)."""
    from xdsl.transforms import get_all_passes

    return {**get_all_passes(), **tilegraph_passes()}


def builtin_dialects() -> dict[str, Callable[[], Dialect]]:
    """tilegraph's own dialects: ``layout``, ``graph`` and ``tile`` (imported on demand)."""

    def layout() -> Dialect:
        from tilegraph.dialects.layout import Layout

        return Layout

    def graph() -> Dialect:
        from tilegraph.dialects.graph import Graph

        return Graph

    def tile() -> Dialect:
        from tilegraph.dialects.tile import Tile

        return Tile

    return {"layout": layout, "graph": graph, "tile": tile}


def plugin_dialects() -> dict[str, PluginEntry]:
    """Dialects from ``tilegraph.dialects`` entry points, by name."""
    return {entry.name: entry for entry in plugin_entries(DIALECTS_GROUP)}


def tilegraph_dialects() -> dict[str, Callable[[], Dialect]]:
    """The ``layout``, ``graph`` and ``tile`` dialects, plus ``tilegraph.dialects`` entry
    points (tilegraph's win over a plugin of the same name)."""
    found: dict[str, Callable[[], Dialect]] = {
        name: e.load for name, e in plugin_dialects().items()
    }
    found.update(builtin_dialects())
    return found


@functools.cache
def _interpreter_function_classes() -> tuple[type[InterpreterFunctions], ...]:
    classes = []
    for entry in plugin_entries(INTERPRETERS_GROUP):
        cls = entry.load()
        if not (isinstance(cls, type) and issubclass(cls, InterpreterFunctions)):
            raise TypeError(
                f"entry point '{entry.name}' of {entry.origin} ({INTERPRETERS_GROUP}) names "
                f"{entry.target}, which is not an xdsl InterpreterFunctions subclass"
            )
        classes.append(cls)
    return tuple(classes)


def plugin_interpreter_functions() -> list[InterpreterFunctions]:
    """A fresh instance of every ``tilegraph.interpreters`` entry point's class, for
    tilegraph's interpreters to register next to their own implementations.

    Each entry point must name an ``InterpreterFunctions`` subclass constructible without
    arguments (TypeError otherwise, naming the entry point and its distribution).
    """
    return [cls() for cls in _interpreter_function_classes()]


def pass_summary(name: str) -> str:
    """First docstring line of a pass (for ``--help``).

    A plugin pass that cannot be loaded gets ``(cannot load: <error>)`` instead, so that a
    broken plugin never breaks ``--help``.
    """
    try:
        cls = tilegraph_passes()[name]()
    except Exception as e:
        if name in builtin_passes():
            raise
        return f"(cannot load: {str(e).strip() or type(e).__name__})"
    doc = (cls.__doc__ or "").strip().splitlines()
    return doc[0] if doc else ""
