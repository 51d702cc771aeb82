"""Where tools find passes, pipelines and dialects.

tilegraph's own passes register themselves here with :func:`register_pass`. Passes and
dialects from other packages plug in through Python entry points, so researchers never edit
tilegraph to add one:

.. code-block:: toml

    [project.entry-points."tilegraph.passes"]
    my-pass = "my_package.my_module:MyPass"          # a ModulePass subclass

    [project.entry-points."tilegraph.dialects"]
    mydialect = "my_package.dialect:MyDialect"       # an xdsl Dialect

xDSL's own ``xdsl.universe`` entry points keep working too: ``tilegraph-opt`` loads every
upstream pass and dialect the way ``xdsl-opt`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata

from xdsl.ir import Dialect
from xdsl.passes import ModulePass

PassFactory = Callable[[], type[ModulePass]]

_PASSES: dict[str, PassFactory] = {}


def register_pass(cls: type[ModulePass]) -> type[ModulePass]:
    """Class decorator: make a pass available under its ``name``."""
    if cls.name in _PASSES:
        raise ValueError(f"pass '{cls.name}' is registered twice")
    _PASSES[cls.name] = lambda: cls
    return cls


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


def _entry_point_passes() -> dict[str, PassFactory]:
    found: dict[str, PassFactory] = {}
    for ep in metadata.entry_points(group="tilegraph.passes"):
        found[ep.name] = lambda ep=ep: ep.load()
    return found


def tilegraph_passes() -> dict[str, PassFactory]:
    """tilegraph's passes and pipelines, plus those from ``tilegraph.passes`` entry points."""
    _load_builtin_passes()
    return {**_PASSES, **_entry_point_passes()}


def all_passes() -> dict[str, PassFactory]:
    """Every pass a tool offers: xDSL's upstream passes and tilegraph's (ours win)."""
    from xdsl.transforms import get_all_passes

    return {**get_all_passes(), **tilegraph_passes()}


def tilegraph_dialects() -> dict[str, Callable[[], Dialect]]:
    """The ``layout``, ``graph`` and ``tile`` dialects, plus ``tilegraph.dialects`` entry
    points."""

    def layout() -> Dialect:
        from tilegraph.dialects.layout import Layout

        return Layout

    def graph() -> Dialect:
        from tilegraph.dialects.graph import Graph

        return Graph

    def tile() -> Dialect:
        from tilegraph.dialects.tile import Tile

        return Tile

    found: dict[str, Callable[[], Dialect]] = {"layout": layout, "graph": graph, "tile": tile}
    for ep in metadata.entry_points(group="tilegraph.dialects"):
        found[ep.name] = lambda ep=ep: ep.load()
    return found


def pass_summary(name: str) -> str:
    """First docstring line of a registered pass (for ``--help``)."""
    cls = tilegraph_passes()[name]()
    doc = (cls.__doc__ or "").strip().splitlines()
    return doc[0] if doc else ""
