"""The package's layers: no import runs back up (DESIGN.md section 2).

(formats, hardware) <- symbolic <- target <- dialects <- (frontend, builder) <- (passes,
lowering, cost_model) <- runtime <- search <- tools. Every ``import`` in every module under
``tilegraph/`` counts, at any depth (an import inside a function is an arrow too); only
imports under ``if TYPE_CHECKING:`` are exempt, since they never run. Within one layer any
import is allowed, except between the packages :data:`APART` keeps apart (the three parts
of ``tilegraph.lowering``).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tilegraph"

# The first matching prefix (longest first) gives a module's layer; lower rank = lower layer.
LAYERS: dict[str, int] = {
    "tilegraph.formats": 0,
    "tilegraph.progress": 0,  # a plain-Python progress hook, imports nothing of ours
    "tilegraph.version": 0,  # the version string, imports nothing (the ONNX exporter reads it)
    "tilegraph.symbolic": 1,
    "tilegraph.hardware": 0,  # the presets' facts, plain Python (formats read its default)
    "tilegraph.target": 2,  # the target a module carries: reads hardware, used by every pass
    "tilegraph.dialects": 3,
    "tilegraph.frontend": 4,
    "tilegraph.builder": 4,
    "tilegraph.passes": 5,
    "tilegraph.lowering": 5,
    # tile-op costs and the cycle model: multi-buffer (lowering) ranks loads by their costs,
    # and the cycle model reads lowering's buffer analyses; runtime and tools read the results
    "tilegraph.cost_model": 5,
    "tilegraph.runtime": 6,
    # tuning and sweeps: compile, estimate and run candidates (runtime), for the tools
    "tilegraph.search": 7,
    "tilegraph.tools": 8,
    "tilegraph": 6,  # the package's own __init__: the API (compile, Session, load_onnx)
}
LAYER_NAMES = {
    0: "formats/hardware",
    1: "symbolic",
    2: "target",
    3: "dialects",
    4: "frontend/builder",
    5: "passes/lowering/cost_model",
    6: "runtime",
    7: "search",
    8: "tools",
}


def layer_of(module: str) -> int | None:
    for prefix in sorted(LAYERS, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return LAYERS[prefix]
    return None


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _is_module(name: str, root: Path) -> bool:
    rel = Path(*name.split(".")[1:]) if "." in name else Path()
    base = root / rel
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imports_of(source: str, module: str, is_package: bool, root: Path) -> list[tuple[int, str]]:
    """(line, imported tilegraph module) for every import outside ``if TYPE_CHECKING:``."""
    tree = ast.parse(source)
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join(package + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append((node.lineno, sub if _is_module(sub, root) else base))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return [(line, name) for line, name in found if name.split(".")[0] == "tilegraph"]


def upward_imports(root: Path = PACKAGE) -> list[str]:
    problems: list[str] = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root)
        own = layer_of(module)
        assert own is not None, f"{module} has no layer: add it to LAYERS"
        is_package = path.name == "__init__.py"
        for line, target in imports_of(path.read_text(), module, is_package, root):
            theirs = layer_of(target)
            assert theirs is not None, f"{target} (imported by {module}) has no layer"
            if theirs > own:
                problems.append(
                    f"{path.relative_to(root.parent)}:{line}: {module} ({LAYER_NAMES[own]}) "
                    f"imports {target} ({LAYER_NAMES[theirs]})"
                )
    return problems


APART: dict[str, tuple[str, ...]] = {
    # Analyses read lowered IR for the passes, the executors and the cycle model: they use
    # no pass. Conversion (graph -> tile) and the tile-level transforms share code only
    # through analysis, so either can change without the other.
    "tilegraph.lowering.analysis": (
        "tilegraph.lowering.conversion",
        "tilegraph.lowering.transforms",
    ),
    "tilegraph.lowering.conversion": ("tilegraph.lowering.transforms",),
    "tilegraph.lowering.transforms": ("tilegraph.lowering.conversion",),
}
"""Package -> the packages of its own layer that none of its modules may import."""


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def imports_across(root: Path = PACKAGE) -> list[str]:
    """Every import that :data:`APART` forbids, as ``path:line: module imports target``."""
    problems: list[str] = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root)
        forbidden = next((f for p, f in APART.items() if _within(module, p)), ())
        if not forbidden:
            continue
        is_package = path.name == "__init__.py"
        for line, target in imports_of(path.read_text(), module, is_package, root):
            if any(_within(target, f) for f in forbidden):
                problems.append(
                    f"{path.relative_to(root.parent)}:{line}: {module} imports {target}"
                )
    return problems


def test_no_import_runs_back_up() -> None:
    problems = upward_imports()
    assert not problems, f"{len(problems)} imports run back up the layers:\n" + "\n".join(problems)


def test_lowering_parts_stay_apart() -> None:
    problems = imports_across()
    assert not problems, f"{len(problems)} imports cross lowering's parts:\n" + "\n".join(problems)


def test_checker_catches_an_upward_import(tmp_path: Path) -> None:
    root = tmp_path / "tilegraph"
    (root / "formats").mkdir(parents=True)
    (root / "tools").mkdir()
    (root / "__init__.py").write_text("")
    (root / "formats" / "__init__.py").write_text("")
    (root / "tools" / "__init__.py").write_text("")
    (root / "tools" / "cli.py").write_text("from tilegraph.formats import shape\n")
    (root / "formats" / "shape.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from tilegraph.tools import cli  # exempt: never runs\n"
        "def f():\n"
        "    from ..tools.cli import main  # lazy and relative: still an arrow\n"
    )
    problems = upward_imports(root)
    assert len(problems) == 1, problems
    assert (
        "shape.py:5: tilegraph.formats.shape (formats/hardware) imports tilegraph.tools.cli (tools)"
        in (problems[0])
    )


def test_checker_catches_an_import_across_lowering_parts(tmp_path: Path) -> None:
    root = tmp_path / "tilegraph"
    for package in ("", "lowering", "lowering/analysis", "lowering/transforms"):
        (root / package).mkdir(parents=True, exist_ok=True)
        (root / package / "__init__.py").write_text("")
    (root / "lowering" / "transforms" / "plan.py").write_text(
        "from tilegraph.lowering.analysis import walk\n"  # allowed: transforms use analysis
    )
    (root / "lowering" / "analysis" / "walk.py").write_text(
        "def f():\n    from ..transforms.plan import g\n"
    )
    problems = imports_across(root)
    assert problems == [
        "tilegraph/lowering/analysis/walk.py:2: tilegraph.lowering.analysis.walk imports "
        "tilegraph.lowering.transforms.plan"
    ], problems
