"""Plugins: the tutorial shows the example plugin's real files, the registry's rules for
plugin entry points, and ``tilegraph-opt --help`` naming an installed plugin's origin.

``docs/tutorial-writing-a-pass.md`` marks each code block copied from a file with an
``<!-- file: PATH -->`` line just above it; every such block must equal the file (whole), so
the tutorial cannot drift from ``examples/plugin/``, whose own lit tests and pytest
``make test`` runs. A block marked ``<!-- output of: tilegraph-opt ARGS -->`` must appear in
that command's output (checked when the example plugin is installed).
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from tilegraph.passes import registry
from tilegraph.passes.registry import PluginEntry
from tilegraph.tools.opt.cli import run

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial-writing-a-pass.md"
PLUGIN = "examples/plugin"
MARKER = re.compile(r"^<!-- file: (\S+) -->$", re.M)
FILE_BLOCK = re.compile(
    r"^<!-- file: (?P<path>\S+) -->\n```[\w+-]*\n(?P<body>.*?)^```$", re.M | re.S
)
OUTPUT_BLOCK = re.compile(
    r"^<!-- output of: tilegraph-opt (?P<args>.*?) -->\n```[\w+-]*\n(?P<body>.*?)^```$", re.M | re.S
)
SHOWN_FILES = {
    f"{PLUGIN}/pyproject.toml",
    f"{PLUGIN}/tilegraph_example_plugin/div_to_mul.py",
    f"{PLUGIN}/tilegraph_example_plugin/fake_quant.py",
    f"{PLUGIN}/tilegraph_example_plugin/interpreter.py",
    f"{PLUGIN}/tests/lit.cfg",
    f"{PLUGIN}/tests/div-to-mul.mlir",
    f"{PLUGIN}/tests/fake-quant.mlir",
    f"{PLUGIN}/tests/fake-quant-invalid.mlir",
    f"{PLUGIN}/tests/fake-quant-run.mlir",
}
"""The files the tutorial walks through; each must appear as a marked block."""


def file_blocks(text: str) -> list[tuple[str, str]]:
    """(path, block body) for every code block marked as a copy of a file."""
    return [(m["path"], m["body"]) for m in FILE_BLOCK.finditer(text)]


def test_tutorial_code_blocks_are_the_files():
    text = TUTORIAL.read_text()
    blocks = file_blocks(text)
    assert len(blocks) == len(MARKER.findall(text)), (
        "a '<!-- file: PATH -->' line is not directly followed by a fenced code block"
    )
    missing = SHOWN_FILES - {path for path, _ in blocks}
    assert not missing, f"the tutorial no longer shows {sorted(missing)}"
    for path, body in blocks:
        file = ROOT / path
        assert file.is_file(), f"the tutorial shows {path}, which does not exist"
        assert body == file.read_text(), (
            f"the tutorial's copy of {path} differs from the file: paste the file into the "
            "block (or change the file) so that they agree"
        )


def test_tutorial_pass_is_at_most_30_lines():
    """The issue's bound: the pattern and the pass, without the imports, fit in 30 lines."""
    path = ROOT / PLUGIN / "tilegraph_example_plugin" / "div_to_mul.py"
    tree = ast.parse(path.read_text())
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    assert [c.name for c in classes] == ["DivByPowerOfTwo", "DivToMulPass"]
    first = min(c.lineno for c in classes)
    last = max(c.end_lineno or c.lineno for c in classes)
    assert last - first + 1 <= 30


# ---- the registry's rules, with fake entry points (no plugin needs to be installed) --------


def fake_entry(group: str, name: str, target: str, origin: str = "fake-dist 1.0") -> PluginEntry:
    ep = metadata.EntryPoint(name=name, value=target, group=group)
    return PluginEntry(group, name, target, origin, ep)


@pytest.fixture
def fake_plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, list[PluginEntry]]]:
    """Replace the installed entry points by the ones the test puts in the returned dict."""
    entries: dict[str, list[PluginEntry]] = {}
    monkeypatch.setattr(registry, "plugin_entries", lambda group: tuple(entries.get(group, [])))
    registry._interpreter_function_classes.cache_clear()
    yield entries
    registry._interpreter_function_classes.cache_clear()


def test_help_names_a_broken_or_shadowed_plugin_pass(fake_plugins, capsys):
    fake_plugins[registry.PASSES_GROUP] = [
        fake_entry(registry.PASSES_GROUP, "O2", "tilegraph_no_such_module:Pass"),
        fake_entry(registry.PASSES_GROUP, "zz-broken", "tilegraph_no_such_module:Pass"),
    ]
    assert run(["--help"]) == 0
    lines = capsys.readouterr().out.splitlines()
    shadowed = next(
        line for line in lines if line.lstrip().startswith("O2 ") and "fake-dist" in line
    )
    assert "(ignored: tilegraph has a pass 'O2')" in shadowed
    assert shadowed.endswith("fake-dist 1.0")
    broken = next(line for line in lines if line.lstrip().startswith("zz-broken"))
    assert "(cannot load: No module named 'tilegraph_no_such_module')" in broken
    assert broken.endswith("fake-dist 1.0")
    # tilegraph's O2 stays the O2 of every tool
    from tilegraph.passes.pipelines import O2Pipeline

    assert registry.tilegraph_passes()["O2"]() is O2Pipeline


def test_plugin_interpreter_functions_are_instantiated(fake_plugins):
    from tilegraph.runtime.interpreter import LayoutFunctions

    fake_plugins[registry.INTERPRETERS_GROUP] = [
        fake_entry(
            registry.INTERPRETERS_GROUP, "ok", "tilegraph.runtime.interpreter:LayoutFunctions"
        )
    ]
    (functions,) = registry.plugin_interpreter_functions()
    assert isinstance(functions, LayoutFunctions)


def test_plugin_interpreter_functions_must_be_interpreter_functions(fake_plugins):
    fake_plugins[registry.INTERPRETERS_GROUP] = [
        fake_entry(registry.INTERPRETERS_GROUP, "bad", "collections:OrderedDict")
    ]
    with pytest.raises(TypeError, match="'bad' of fake-dist 1.0 .* collections:OrderedDict"):
        registry.plugin_interpreter_functions()


# ---- the example plugin, when it is installed (make test installs it) ----------------------

EXAMPLE = "tilegraph-example-plugin"


def example_version() -> str | None:
    """The installed example plugin's version, if its pass's entry point is installed."""
    entry = registry.plugin_passes().get("div-to-mul")
    if entry is None or not entry.origin.startswith(f"{EXAMPLE} "):
        return None
    return metadata.version(EXAMPLE)


@pytest.mark.skipif(
    example_version() is None,
    reason=f"{EXAMPLE} is not installed in this virtualenv: `pip install -e {PLUGIN}` "
    "(make test does it)",
)
def test_help_lists_the_installed_example_plugin_with_its_origin(capsys):
    assert run(["--help"]) == 0
    out = capsys.readouterr().out
    origin = f"{EXAMPLE} {example_version()}"
    line = next(line for line in out.splitlines() if line.lstrip().startswith("div-to-mul "))
    assert "Rewrite x / c into x * (1/c) where every element of c is ±2**k" in line
    assert line.endswith(origin)
    assert f"plugin dialect: example  [from {origin}]" in out


@pytest.mark.skipif(
    example_version() is None,
    reason=f"{EXAMPLE} is not installed in this virtualenv: `pip install -e {PLUGIN}` "
    "(make test does it)",
)
def test_tutorial_outputs_are_what_tilegraph_opt_prints(capsys, monkeypatch):
    blocks = list(OUTPUT_BLOCK.finditer(TUTORIAL.read_text()))
    assert len(blocks) >= 2
    monkeypatch.chdir(ROOT)  # the commands name files relative to the repository
    for block in blocks:
        code = run(shlex.split(block["args"]))
        out = capsys.readouterr().out
        assert code == 0, block["args"]
        assert block["body"] in out, (
            f"the tutorial's output of 'tilegraph-opt {block['args']}' is not what it prints "
            f"now; it prints:\n{out}"
        )
