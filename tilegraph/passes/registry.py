"""Where tools find passes, pipelines, dialects and interpreter functions.

tilegraph's own passes are listed by name where they live — a ``PASSES`` dict in the
``__init__.py`` of each package of :data:`PASS_PACKAGES` (graph passes, the conversion to
tiles, the tile-level transforms) — gathered in :data:`BUILTIN_PASSES` and imported when
used (each class is marked with :func:`register_pass`, which checks the list). Passes, dialects
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
from typing import Any, TypeVar

from xdsl.interpreter import InterpreterFunctions
from xdsl.ir import Dialect
from xdsl.passes import ModulePass

PassFactory = Callable[[], type[ModulePass]]

PASSES_GROUP = "tilegraph.passes"
DIALECTS_GROUP = "tilegraph.dialects"
INTERPRETERS_GROUP = "tilegraph.interpreters"

PASS_PACKAGES = (
    "tilegraph.passes",
    "tilegraph.lowering.conversion",
    "tilegraph.lowering.transforms",
)
"""The packages that hold tilegraph's passes. Each lists its own in a ``PASSES`` dict in its
``__init__.py`` (``-p`` name -> ``".module:Class"``, relative to the package); those
``__init__`` modules import no pass, so gathering the lists imports none."""


def _builtin_table() -> dict[str, str]:
    import importlib

    table: dict[str, str] = {}
    for package in PASS_PACKAGES:
        listed: dict[str, str] = importlib.import_module(package).PASSES
        for name, relative in listed.items():
            target = package + relative
            if name in table:
                raise ValueError(f"pass '{name}' is listed twice: {table[name]} and {target}")
            table[name] = target
    return dict(sorted(table.items()))


BUILTIN_PASSES: dict[str, str] = _builtin_table()
"""tilegraph's passes and pipelines by ``-p`` name: ``"module:Class"``, the ``PASSES`` of
every package of :data:`PASS_PACKAGES`. Each pass is imported only when used, so that a
tool starts without importing every pass (``tilegraph-opt --help`` imports none). Each class
is also marked with :func:`register_pass`, which checks that it is listed under its
``name``."""


_PassClass = TypeVar("_PassClass", bound=type[ModulePass])


def register_pass(cls: _PassClass) -> _PassClass:
    """Class decorator of tilegraph's own passes: check that :data:`BUILTIN_PASSES` lists
    ``cls`` under its ``name`` (ValueError at import otherwise, naming the list to add it
    to, so a pass cannot be added without its entry). Plugins use the ``tilegraph.passes``
    entry point instead."""
    target = f"{cls.__module__}:{cls.__qualname__}"
    if BUILTIN_PASSES.get(cls.name) != target:
        package = next(
            (p for p in PASS_PACKAGES if cls.__module__.startswith(p + ".")), PASS_PACKAGES[0]
        )
        raise ValueError(
            f"pass '{cls.name}' ({target}) is not listed in BUILTIN_PASSES: add "
            f'"{cls.name}": "{target}" to PASSES in {package.replace(".", "/")}/__init__.py'
        )
    return cls


def load_target(target: str) -> Any:
    """Import ``"package.module:attribute"`` and return the attribute."""
    import importlib

    module, _, attribute = target.partition(":")
    found: Any = importlib.import_module(module)
    for part in attribute.split("."):
        found = getattr(found, part)
    return found


def _lazy(target: str) -> PassFactory:
    return lambda: load_target(target)


def target_docstring(target: str) -> str | None:
    """The docstring of the class ``"package.module:Class"`` read from its source without
    importing the module (None if the source or the class cannot be found that way: the
    caller then imports it). Parents of the module are imported, as finding it needs."""
    import ast
    import importlib.util
    import re

    module, _, qualname = target.partition(":")
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    try:
        with open(spec.origin, encoding="utf-8") as f:
            source = f.read()
    except (OSError, UnicodeDecodeError):
        return None
    # Parse only the class's own lines (from its ``class`` line to the next top-level
    # statement): a whole module takes ~4 ms to parse, --help reads 20 of them.
    body: list[ast.stmt] = []
    node: ast.ClassDef | None = None
    outer, _, inner = qualname.partition(".")
    found = re.search(rf"^class {re.escape(outer)}\b.*?(?=^[^\s#)]|\Z)", source, re.M | re.S)
    if found is None:
        return None
    try:
        body = ast.parse(found[0]).body
    except SyntaxError:
        return None
    for part in [outer, *([inner] if inner else [])]:
        node = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == part), None)
        if node is None:
            return None
        body = node.body
    return ast.get_docstring(node) if node is not None else None


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


def import_all_builtin_passes() -> None:
    """Import every module of :mod:`tilegraph.passes` and, at any depth, of
    :mod:`tilegraph.lowering` (for what modules declare on import, such as the rule
    catalogue, and for :func:`register_pass`'s check of every pass class)."""
    import importlib
    import pkgutil

    import tilegraph.lowering as lowering
    import tilegraph.passes as package

    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")
    for info in pkgutil.walk_packages(lowering.__path__, f"{lowering.__name__}."):
        importlib.import_module(info.name)


def builtin_passes() -> dict[str, PassFactory]:
    """tilegraph's own passes and pipelines (no plugins): what ``docs/passes.md`` lists.
    Each factory imports its pass's module when called, not before."""
    return {name: _lazy(target) for name, target in BUILTIN_PASSES.items()}


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


def pass_docstring(name: str) -> str:
    """The cleaned docstring of tilegraph's or a plugin's pass ``name`` (KeyError if neither
    has it; tilegraph's wins). Read from the source without importing where possible;
    otherwise the class is loaded, and the exceptions of that import propagate."""
    import inspect

    target = BUILTIN_PASSES[name] if name in BUILTIN_PASSES else plugin_passes()[name].target
    doc = target_docstring(target)
    if doc is None:
        doc = inspect.cleandoc(tilegraph_passes()[name]().__doc__ or "")
    return doc


def pass_summary(name: str) -> str:
    """First docstring line of a pass (for ``--help``), read without importing the pass.

    A plugin pass that cannot be loaded gets ``(cannot load: <error>)`` instead, so that a
    broken plugin never breaks ``--help``.
    """
    try:
        doc = pass_docstring(name)
    except Exception as e:
        if name in BUILTIN_PASSES:
            raise
        return f"(cannot load: {str(e).strip() or type(e).__name__})"
    lines = doc.strip().splitlines()
    return lines[0] if lines else ""


# ---- pipeline strings: parsed with messages that name the pass, the option and the spelling


class PipelineSpecError(ValueError):
    """A pipeline string that cannot be run: malformed, an unknown pass, or an option of the
    wrong name or type. The message is one line naming the pass (and the option) and what
    was expected; tools print it after ``error: ``."""


SPELLING = "NAME or NAME{key=value key=value ...}, separated by commas"
"""How a pipeline is written, for messages."""


@dataclass(frozen=True)
class PassOption:
    """One option of a pass, as written in a pipeline."""

    name: str
    """With dashes, as in ``tile-kernels{base-block=...}``."""
    type: str
    """The annotation as written in the class (``int``, ``str | tuple[str, ...]``)."""
    default: str | None
    """The default as written in a pipeline (``'ge'`` shown as ``ge``), None if required."""


def pass_options(cls: type[ModulePass]) -> list[PassOption]:
    """The options of a pass class: its dataclass fields, in declaration order."""
    import dataclasses

    if not dataclasses.is_dataclass(cls):
        return []
    options = []
    for f in dataclasses.fields(cls):
        if f.name == "name" or not f.init:
            continue
        if f.default is not dataclasses.MISSING:
            default: str | None = _spelled(f.default)
        elif f.default_factory is not dataclasses.MISSING:
            default = _spelled(f.default_factory())
        else:
            default = None
        kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        options.append(PassOption(f.name.replace("_", "-"), kind, default))
    return options


def _spelled(value: object) -> str:
    """A value as written in a pipeline: ``true``, ``4``, ``ge``, ``1,2``, ``""``."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return ",".join(_spelled(v) for v in value) or '""'
    return str(value) if value != "" else '""'


def did_you_mean(name: str, candidates: list[str]) -> str:
    """`` (did you mean 'x'?)`` naming the candidates closest to ``name``, or ``''``."""
    import difflib

    close = difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


def _syntax_error(spec: str, error: BaseException) -> PipelineSpecError:
    """xDSL's ArgSpecParseError (message ``pass-pipeline:1:COL`` and a caret picture) as one
    line: the pipeline, what was expected, the column and the pass whose options it is in."""
    import re

    text = str(error)
    found = re.search(r"pass-pipeline:\d+:(\d+)", text)
    column = int(found[1]) if found else None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    what = lines[-1].replace("`", "'") if lines else "malformed pipeline"
    what = what[:1].lower() + what[1:]
    where = ""
    if column is not None:
        in_options = re.search(r"([A-Za-z0-9_-]+)\{[^}]*$", spec[: column - 1])
        where = f" at column {column}"
        if in_options:
            where += f", in the options of '{in_options[1]}'"
    return PipelineSpecError(f"-p '{spec}': {what}{where} (write {SPELLING})")


def _words(hint: Any, plural: bool = False) -> str:
    """What an option of type ``hint`` takes, in words."""
    from types import NoneType, UnionType
    from typing import Union, get_args, get_origin

    origin = get_origin(hint)
    if origin in (Union, UnionType):
        words = [_words(a) for a in get_args(hint) if a is not NoneType]
        text = " or ".join(dict.fromkeys(words))
        return text + (" (or nothing)" if NoneType in get_args(hint) else "")
    if origin is tuple:
        return f"a comma-separated list of {_words(get_args(hint)[0], plural=True)}"
    names = {int: "integer", float: "number", bool: "true or false", str: "string"}
    if hint not in names:
        return getattr(hint, "__name__", str(hint))
    if hint is bool:
        return "true or false values" if plural else "true or false"
    return (
        f"{names[hint]}s" if plural else f"an {names[hint]}" if hint is int else f"a {names[hint]}"
    )


class _Mismatch(Exception):
    pass


def _convert(value: tuple[Any, ...], hint: Any) -> Any:
    """The parsed values of one option (``(1, 2)``, ``("ge",)``, ``()``) as ``hint``:
    ints are numbers too, and any scalar is accepted as a string (``platform=910``)."""
    from types import NoneType, UnionType
    from typing import Union, get_args, get_origin

    origin = get_origin(hint)
    if origin in (Union, UnionType):
        if not value and NoneType in get_args(hint):
            return None
        for arg in get_args(hint):
            if arg is not NoneType:
                try:
                    return _convert(value, arg)
                except _Mismatch:
                    pass
        raise _Mismatch
    if origin is tuple:
        return tuple(_convert((v,), get_args(hint)[0]) for v in value)
    if len(value) != 1:
        raise _Mismatch
    (v,) = value
    if hint is bool and isinstance(v, bool):
        return v
    if hint is int and isinstance(v, int) and not isinstance(v, bool):
        return v
    if hint is float and isinstance(v, int | float) and not isinstance(v, bool):
        return float(v)
    if hint is str:
        return _spelled(v) if isinstance(v, bool) else str(v)
    raise _Mismatch


def pass_from_spec(cls: type[ModulePass], spec: Any) -> ModulePass:
    """An instance of ``cls`` from an xDSL ``ArgSpec`` (name and parsed option values).

    PipelineSpecError, naming the pass and the option, for an unknown option (with the
    closest names), a missing required option, a value of the wrong type, or a ValueError
    of the pass's own checks (``__post_init__``)."""
    import dataclasses
    from typing import get_type_hints

    fields = (
        {f.name: f for f in dataclasses.fields(cls) if f.init and f.name != "name"}
        if dataclasses.is_dataclass(cls)
        else {}
    )
    hints = get_type_hints(cls) if fields else {}
    given: dict[str, tuple[Any, ...]] = dict(spec.parameters)
    kwargs: dict[str, Any] = {}
    for key, value in given.items():
        field = key.replace("-", "_")
        if field not in fields:
            names = [o.replace("_", "-") for o in fields]
            known = f"; its options: {', '.join(names)}" if names else "; it takes no options"
            raise PipelineSpecError(
                f"pass '{cls.name}': unknown option '{key}'"
                f"{did_you_mean(key.replace('_', '-'), names)}{known}"
            )
        try:
            kwargs[field] = _convert(value, hints[field])
        except _Mismatch:
            got = f"'{','.join(_spelled(v) for v in value)}'" if value else "nothing"
            raise PipelineSpecError(
                f"pass '{cls.name}' option '{key}': expected {_words(hints[field])}, got {got}"
            ) from None
    missing = [
        name.replace("_", "-")
        for name, f in fields.items()
        if name not in kwargs
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise PipelineSpecError(
            f"pass '{cls.name}': option '{missing[0]}' is required ({cls.name}{{{missing[0]}=...}})"
        )
    try:
        return cls(**kwargs)
    except ValueError as e:
        message = str(e).removeprefix(f"{cls.name}: ")
        raise PipelineSpecError(f"pass '{cls.name}': {message}") from None


def parse_pipeline_spec(spec: str, available: dict[str, PassFactory]) -> tuple[ModulePass, ...]:
    """The passes of a pipeline string (``"O1,fuse-ops{max-ops=8}"``) from ``available``.

    PipelineSpecError (one line, no traceback) for a malformed string (the column and the
    pass whose options it is in), an unknown pass (with the closest names), or a bad option
    (:func:`pass_from_spec`). xDSL's parser reports syntax with an ArgSpecParseError, a
    BaseException: it is caught here and never escapes."""
    from xdsl.utils.arg_spec import parse_pipeline
    from xdsl.utils.exceptions import ArgSpecParseError

    try:
        specs = list(parse_pipeline(spec))
    except ArgSpecParseError as e:
        raise _syntax_error(spec, e) from None
    for s in specs:
        if s.name not in available:
            raise PipelineSpecError(
                f"-p '{spec}': unknown pass '{s.name}'"
                f"{did_you_mean(s.name, sorted(available))} (--help lists the passes)"
            )
    return tuple(pass_from_spec(available[s.name](), s) for s in specs)
