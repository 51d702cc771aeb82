"""``tilegraph/tools`` holds the command-line programs only.

Every module under it must be reached from a console script of ``pyproject.toml``: its entry
point's module, or what that module imports (at any depth, imports inside functions
included). A library that lands here (an exporter, a doc generator, a test harness) is
reached by no program and fails this test: it belongs to the layer it serves.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests.test_layering import PACKAGE, imports_of, module_name

TOOLS = PACKAGE / "tools"
PYPROJECT = PACKAGE.parent / "pyproject.toml"


def _source(module: str) -> tuple[Path, bool] | None:
    base = PACKAGE.parent.joinpath(*module.split("."))
    if (base / "__init__.py").is_file():
        return base / "__init__.py", True
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py"), False
    return None


def _entry_modules() -> list[str]:
    scripts = tomllib.loads(PYPROJECT.read_text())["project"]["scripts"]
    return [target.partition(":")[0] for target in scripts.values()]


def reached_from(roots: list[str]) -> set[str]:
    """The tilegraph modules ``roots`` import, transitively, with the packages that hold
    them (importing ``a.b.c`` runs ``a.b``'s ``__init__``)."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        parts = module.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        found = _source(module)
        if found is None:
            continue
        path, is_package = found
        todo += [name for _, name in imports_of(path.read_text(), module, is_package, PACKAGE)]
    return seen


def test_every_tools_module_belongs_to_a_program() -> None:
    entries = _entry_modules()
    assert entries and all(e.startswith("tilegraph.tools.") for e in entries), entries
    # a program's package also holds its `python -m` runner
    roots = entries + [e.rpartition(".")[0] + ".__main__" for e in entries]
    reached = reached_from(roots)
    stray = [
        name
        for path in sorted(TOOLS.rglob("*.py"))
        if (name := module_name(path, PACKAGE)) not in reached
    ]
    assert not stray, f"modules under tilegraph/tools that no program uses: {stray}"


def test_each_program_is_a_package_with_a_python_m_runner() -> None:
    for entry in _entry_modules():
        package = entry.rpartition(".")[0]
        assert package.count(".") == 2, f"{entry}: expected tilegraph.tools.<program>.<module>"
        assert _source(package + ".__main__") is not None, f"no {package}/__main__.py"
