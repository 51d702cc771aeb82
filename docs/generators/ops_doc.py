"""``docs/ops.md``: every graph, layout and tile op, generated from the code.

Written by ``python -m docs.generators.generated_docs`` (``make docs``); a test fails when
the page is stale. Everything on the page is read from the op classes and the lowering
tables, so a new op, attribute, kernel variant or vector lowering shows up by itself:

* graph ops (``GRAPH_OPS``, grouped by the module that defines them, its docstring's first
  sentence as the family's summary): the ONNX op (``ONNX_OP``), operands and results (their
  IRDL definitions: ``x?`` optional, ``xs…`` variadic), attributes with their ONNX defaults
  (``DEFAULTS``), the format role, fusion kind and kernel variants (``FACTS``), and the
  lowering: the tiling strategy that runs the op (:func:`graph_lowering`), for elementwise
  ops the vector instructions its
  :data:`~tilegraph.lowering.conversion.tiling.vector_ops.VECTOR_LOWERINGS` entry emits
  (traced with the op's default attributes), else ``host`` (its reference kernel runs on
  the host);
* ``graph.fused`` / ``graph.yield`` and ``layout.trans_data``;
* tile ops (``TILE_OPS``, by module): syntax and purpose (the docstring), operands,
  attributes, the pipe (``PIPE``, or how :meth:`TileOp.pipe` chooses it) and the memory
  scopes their verifier requires (:mod:`.op_introspection`).
"""

from __future__ import annotations

import inspect
import re
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

from xdsl.irdl import (
    IRDLOperation,
    OptionalDef,
    VariadicDef,
)

from docs.generators.op_introspection import attribute_docs, pipe_text, verified_scopes
from tilegraph.dialects.graph import GRAPH_OPS, GraphOp, KernelVariant
from tilegraph.dialects.graph.facts import FormatRole, FusionKind

# ---- text helpers -------------------------------------------------------------------------


def cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell (pipes escaped, one line)."""
    return " ".join(text.replace("|", "\\|").split())


def first_sentence(doc: str | None) -> str:
    """The first sentence of a docstring (its first paragraph, up to ". "), one line."""
    paragraph = inspect.cleandoc(doc or "").split("\n\n")[0]
    text = " ".join(paragraph.split())
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


def anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.lower().replace("`", ""))
    return text.replace(" ", "-")


def _value(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return repr(value)


# ---- IRDL signatures ----------------------------------------------------------------------


def _slot(name: str, definition: Any) -> str:
    if isinstance(definition, OptionalDef):
        return f"{name}?"
    if isinstance(definition, VariadicDef):
        return f"{name}…"
    return name


def signature(cls: type[IRDLOperation]) -> str:
    """``a, b? → r``: operand and result slots (``?`` optional, ``…`` variadic), then the
    regions."""
    op_def = cls.get_irdl_definition()
    operands = ", ".join(_slot(n, d) for n, d in op_def.operands)
    results = ", ".join(_slot(n, d) for n, d in op_def.results)
    text = f"{operands or '()'} → {results}" if results else operands or "—"
    if op_def.regions:
        text += "; regions " + ", ".join(name for name, _ in op_def.regions)
    return text


_KINDS = {
    "IntegerAttr": "int",
    "DenseArrayBase": "ints",
    "FloatAttr": "float",
    "StringAttr": "string",
    "ArrayAttr": "list",
    "SymbolRefAttr": "symbol",
    "DenseAttr": "data",
    "TypeAttribute": "type",
    "AnyAttr": "attribute",
}


def attribute_kind(constraint: Any) -> str:
    """The kind of value a property constraint accepts (``int``, ``ints``, ``string``, …)."""
    base = getattr(constraint, "base_attr", None) or getattr(constraint, "attr", None)
    name = getattr(base, "__name__", type(constraint).__name__)
    return _KINDS.get(name, name)


def attributes(cls: type[IRDLOperation], defaults: dict[str, Any] | None = None) -> str:
    """``name: kind = default`` for every property (``!`` marks a required one)."""
    defaults = defaults or {}
    items = []
    for name, prop in cls.get_irdl_definition().properties.items():
        if name == "operandSegmentSizes":
            continue
        text = f"`{name}`: {attribute_kind(prop.constr)}"
        if name in defaults:
            text += f" = `{_value(defaults[name])}`"
        elif not isinstance(prop, OptionalDef):
            text += " (required)"
        items.append(text)
    return ", ".join(items) or "—"


# ---- graph ops: lowering ------------------------------------------------------------------


def _module_file(fn: Callable[..., Any]) -> str:
    return fn.__module__.rsplit(".", 1)[-1] + ".py"


class _Recorder:
    """Stands for a KernelBuilder: records the names of the tile ops a lowering adds."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def add(self, op: IRDLOperation) -> None:
        self.names.append(op.name)


class _Defaults:
    """Stands for an op in a traced lowering: its attributes are the ONNX defaults."""

    def __init__(self, cls: type[GraphOp]):
        self.cls = cls

    def attr(self, name: str) -> Any:
        return self.cls.DEFAULTS.get(name)


def vector_instructions(cls: type[GraphOp]) -> list[str] | None:
    """The tile ops the op's vector lowering emits (default attributes, every optional
    operand present), in first-use order; None when it has no vector lowering, ``[]``
    when the lowering cannot be traced outside a kernel."""
    from xdsl.dialects.builtin import MemRefType, f32
    from xdsl.utils.test_value import create_ssa_value

    from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
    from tilegraph.lowering.conversion.tiling.vector_emitter import VectorEmitter
    from tilegraph.lowering.conversion.tiling.vector_ops import VECTOR_LOWERINGS

    lowering = VECTOR_LOWERINGS.get(cls.name)
    if lowering is None:
        return None
    recorder = _Recorder()
    tile = create_ssa_value(MemRefType(f32, [16]))
    emitter = VectorEmitter(
        cast(KernelBuilder, recorder), tile, [tile] * lowering.scratch, [tile] * lowering.masks
    )
    slots = len(cls.get_irdl_definition().operands) or 1
    try:
        lowering.emit(emitter, cast(GraphOp, _Defaults(cls)), [tile] * max(slots, 2), tile)
    except Exception:  # it needs more of the op than its defaults: name the table only
        return []
    return list(dict.fromkeys(name.removeprefix("tile.") for name in recorder.names))


def graph_lowering(cls: type[GraphOp]) -> str:
    """How ``tile-kernels`` runs a kernel made of this op (alone, or as the anchor of a
    fused group): ``cube: conv.py``, ``vector: reduction.py``, the vector instructions of
    an elementwise op, ``tile.constant`` for constants, a device loop for a Loop, else
    ``host``."""
    from tilegraph.dialects.graph import ConstantOp
    from tilegraph.dialects.graph.elementwise import CastOp

    if cls is ConstantOp:
        return "`tile.constant` in the host sequence"
    from tilegraph.dialects.graph.control_flow import LoopOp

    if cls is LoopOp:
        return "`tile.loop_launches` (a compile-time trip count; else host)"
    from tilegraph.lowering.conversion.tiling.strategies import STRATEGIES

    found = [(s.unit, s.emit) for s in STRATEGIES if s.ops and issubclass(cls, s.ops)]
    if found:  # a resize: nearest in resize.py, linear and cubic in resize_taps.py
        return f"{found[0][0]}: " + ", ".join(f"`{_module_file(emit)}`" for _, emit in found)
    instructions = vector_instructions(cls)
    if instructions is not None:
        names = ", ".join(f"`{name}`" for name in instructions)
        text = f"vector: {names or '`vector_ops.py`'}"
        return text + (" (plain conversions; others host)" if cls is CastOp else "")
    if cls.FACTS.heavy:
        return "host (no cube lowering)"
    return "host"


# ---- graph ops: facts ---------------------------------------------------------------------


def _formats(formats: Iterable[Any]) -> str:
    return ", ".join("any" if f is None else str(f) for f in formats)


def variant_text(variant: KernelVariant) -> str:
    """``name: (operand formats) → (result formats)``; ``any`` is the shared ANY format."""
    return f"`{variant.name}`: {_formats(variant.operands)} → {_formats(variant.results)}"


def format_text(cls: type[GraphOp]) -> str:
    facts = cls.FACTS
    text = facts.role.value
    if facts.data_format is not None:
        text += f" ({facts.data_format})"
    if facts.heavy:
        text += ", heavy"
    return text


def _variants(cls: type[GraphOp]) -> str:
    names = [v.name for v in cls.FACTS.kernels]
    return ", ".join(f"`{n}`" for n in names) if names else "origin only"


def _onnx(cls: type[GraphOp]) -> str:
    if cls.ONNX_OP is None:
        return "—"
    text = cls.ONNX_OP
    if cls.ONNX_IGNORED_ATTRS:
        text += " (drops " + ", ".join(sorted(cls.ONNX_IGNORED_ATTRS)) + ")"
    return text


def graph_families() -> dict[str, list[type[GraphOp]]]:
    """Graph ops by defining module (in ``GRAPH_OPS`` order)."""
    families: dict[str, list[type[GraphOp]]] = defaultdict(list)
    for cls in GRAPH_OPS:
        families[cls.__module__].append(cls)
    return dict(families)


def family_title(module_name: str) -> tuple[str, str]:
    """(heading, summary) of an op family from its module's docstring: the text before the
    first sentence's colon (when short and plain) and the file name."""
    module = sys.modules[module_name]
    summary = first_sentence(module.__doc__)
    short = module_name.rsplit(".", 1)[-1]
    head = summary.split(":")[0].rstrip(".")
    if not head or len(head) > 60 or "`" in head:
        head = short.replace("_", " ").capitalize()
    return f"{head} ({short}.py)", summary


def graph_family_section(module_name: str, ops: Sequence[type[GraphOp]]) -> list[str]:
    heading, summary = family_title(module_name)
    lines = [
        f"### {heading}",
        "",
        summary,
        "",
        "| op | ONNX | operands → results | attributes | format | fusion | kernels | lowering |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for cls in ops:
        row = [
            f"`{cls.name}`",
            _onnx(cls),
            signature(cls),
            attributes(cls, dict(cls.DEFAULTS)),
            format_text(cls),
            cls.FACTS.fusion.name,
            _variants(cls),
            graph_lowering(cls),
        ]
        lines.append("| " + " | ".join(cell(c) for c in row) + " |")
    detailed = [cls for cls in ops if any(v.name != "any" for v in cls.FACTS.kernels)]
    if detailed:
        lines += ["", "Kernel variants (storage formats of operands → results):", ""]
        for cls in detailed:
            variants = "; ".join(variant_text(v) for v in cls.FACTS.kernels)
            extra = []
            if cls.FACTS.reshape_types:
                extra.append(
                    "reshapeType "
                    + ", ".join(f"operand {i}: {t}" for i, t in cls.FACTS.reshape_types.items())
                )
            if cls.FACTS.format_operands is not None:
                extra.append(f"format operands {list(cls.FACTS.format_operands)}")
            tail = f" ({'; '.join(extra)})" if extra else ""
            lines.append(f"- `{cls.name}`: {variants}{tail}")
    return [*lines, ""]


# ---- tile ops -----------------------------------------------------------------------------


def tile_families() -> dict[str, list[type]]:
    from tilegraph.dialects.tile import TILE_OPS

    families: dict[str, list[type]] = defaultdict(list)
    for cls in TILE_OPS:
        families[cls.__module__].append(cls)
    return dict(families)


def _module_table(module_name: str) -> dict[str, str]:
    """``{op name: description}`` from the reStructuredText simple table of a module
    docstring whose first column holds ````tile.op ...```` (e.g. :mod:`.sync`)."""
    lines = inspect.cleandoc(sys.modules[module_name].__doc__ or "").splitlines()
    rules = [i for i, line in enumerate(lines) if re.fullmatch(r"=+( +=+)+", line)]
    if len(rules) < 2:
        return {}
    columns = [m.start() for m in re.finditer(r"=+", lines[rules[0]])]
    found: dict[str, str] = {}
    current = None
    for line in lines[rules[-2] + 1 : rules[-1]]:
        match = re.match(r"``(tile\.\w+)", line)
        if match is not None:
            current = match.group(1)
            found[current] = ""
        if current is not None:
            found[current] += " " + line[columns[-1] :].strip()
    return {name: " ".join(text.split()) for name, text in found.items()}


def _syntax_and_purpose(cls: type) -> tuple[str, str]:
    """A tile op docstring's leading ````syntax````: purpose, split (the purpose from the
    module's table when the docstring refers to it)."""
    sentence = first_sentence(cls.__doc__)
    match = re.match(r"^``(.+?)``(?::\s*(.*)|\.)?$", sentence)
    if match is None:
        return f"`{cls.name}`", sentence
    purpose = match.group(2) or ""
    if "module docstring" in purpose:
        purpose = _module_table(cls.__module__).get(cls.name, purpose)
    return f"`{match.group(1)}`", purpose


def _tile_row_key(cls: type) -> tuple[Any, ...]:
    """What must agree for tile ops to share a row (a family declared from one table)."""
    mnemonic = cls.name.removeprefix("tile.")
    doc = (cls.__doc__ or "").replace(mnemonic, "·")
    return (
        signature(cls),
        attributes(cls),
        pipe_text(cls),
        tuple(verified_scopes(cls)),
        doc,
        getattr(cls, "TRANSCENDENTAL", None),
    )


def tile_family_section(module_name: str, ops: Sequence[type]) -> list[str]:
    short = module_name.rsplit(".", 1)[-1]
    lines = [
        f"### {short}.py",
        "",
        first_sentence(sys.modules[module_name].__doc__),
        "",
        "| op | syntax | does | operands → results | attributes | pipe | memory scopes |",
        "|---|---|---|---|---|---|---|",
    ]
    rows: dict[tuple[Any, ...], list[type]] = {}
    for cls in ops:
        rows.setdefault(_tile_row_key(cls), []).append(cls)
    for group in rows.values():
        cls = group[0]
        syntax, purpose = _syntax_and_purpose(cls)
        if getattr(cls, "TRANSCENDENTAL", False):
            purpose += " Transcendental (costed per element)."
        names = ", ".join(f"`{c.name}`" for c in group)
        if len(group) > 1:
            syntax = syntax.replace(cls.name.removeprefix("tile."), "…")
        scopes = "; ".join(f"{where}: {', '.join(s)}" for where, s in verified_scopes(cls))
        row = [
            names,
            syntax,
            purpose or "—",
            signature(cls),
            attributes(cls),
            pipe_text(cls),
            scopes or ("a DMA path" if pipe_text(cls).startswith("by path") else "—"),
        ]
        lines.append("| " + " | ".join(cell(c) for c in row) + " |")
    return [*lines, ""]


def dma_paths() -> list[str]:
    from tilegraph.dialects.tile.dma import COPY_PATHS

    lines = ["| from | to | pipe |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {pipe} |" for (a, b), pipe in COPY_PATHS.items()]
    return lines


# ---- the page -----------------------------------------------------------------------------


def _legend() -> list[str]:
    roles = attribute_docs(FormatRole)
    lines = ["## Legend", "", "**Format roles** (`FormatRole`):", ""]
    for role in FormatRole:
        lines.append(f"- `{role.value}`: {cell(roles.get(role.name, ''))}")
    kinds = ", ".join(f"`{k.name}` ({k.value})" for k in FusionKind)
    lines += [
        "",
        f"**Fusion kinds** (`FusionKind`, TVM's pattern kinds; lower fuses more easily): {kinds}.",
        "",
        "**Kernels**: the storage-format signatures the op's kernels implement "
        "(`OpFacts.kernels`; `any`: every ANY slot takes one shared format); "
        "`origin only`: no variant, the op runs on its origin formats.",
        "",
        "**Lowering** (`tile-kernels`): the strategy module under "
        "`tilegraph/lowering/conversion/tiling/` "
        "that tiles a kernel made of the op (cube or vector unit); for elementwise ops the "
        "vector instructions of their entry in `VECTOR_LOWERINGS` (`vector_ops.py`, "
        "`vector_math.py`; traced with default attributes, the table's module when the "
        "program needs more of the op), which also run as the epilogue of a fused cube "
        "kernel; `host`: the "
        "kernel stays on the host and runs the op's reference kernel (GE's AI CPU).",
        "",
    ]
    return lines


def _graph_section(contents: list[str]) -> list[str]:
    families = graph_families()
    lines = [
        "## graph dialect",
        "",
        f"{len(GRAPH_OPS)} ONNX-aligned ops on `!layout.tensor` values, in "
        f"{len(families)} families (`tilegraph/dialects/graph/`). Operands: `x?` optional "
        "(written `none` when absent), `xs…` variadic. Attributes keep ONNX's names; the "
        "default is ONNX's (`DEFAULTS`), per-axis defaults are filled by the shape function.",
        "",
        *contents,
        "",
    ]
    for module_name, ops in families.items():
        lines += graph_family_section(module_name, ops)
    from tilegraph.dialects.graph import FusedOp, YieldOp

    lines += [
        "### Fused groups (fused.py)",
        "",
        "| op | does | operands → results | attributes |",
        "|---|---|---|---|",
    ]
    for cls in (FusedOp, YieldOp):
        row = [f"`{cls.name}`", first_sentence(cls.__doc__), signature(cls), attributes(cls)]
        lines.append("| " + " | ".join(cell(c) for c in row) + " |")
    lines += [
        "",
        "`lower-graph-to-kernels` makes each `graph.fused` one kernel, tiled by the strategy "
        "of its anchor (the heavy op, else its first op) or split into one kernel per op "
        "when no strategy takes the whole group.",
        "",
    ]
    return lines


def _layout_section() -> list[str]:
    from tilegraph.dialects.layout import TransDataOp
    from tilegraph.lowering.conversion.tiling.transdata import emit_transdata_kernel

    row = [
        f"`{TransDataOp.name}`",
        first_sentence(TransDataOp.__doc__),
        signature(TransDataOp),
        attributes(TransDataOp),
    ]
    return [
        "## layout dialect",
        "",
        "The two-view tensor type `!layout.tensor` (docs/ir.md) and its one op "
        "(`tilegraph/dialects/layout.py`).",
        "",
        "| op | does | operands → results | attributes |",
        "|---|---|---|---|",
        "| " + " | ".join(cell(c) for c in row) + " |",
        "",
        "Format role: none (it is what the format engine inserts). Lowering: on a constant, "
        "folded into the constant's data (`fold-trans-data`); next to a cube op, done by the "
        "cube's loads (`nd2nz`, `load_5hd`) or `fixpipe`; in an elementwise kernel, by the "
        "`load_5hd` / `store_5hd` DMA; alone, a FRACTAL_NZ conversion is a vector kernel "
        f"(`{_module_file(emit_transdata_kernel)}`), any other one stays on the host.",
        "",
    ]


def _tile_section(contents: list[str]) -> list[str]:
    from tilegraph.dialects.tile import PIPES, SCOPES, TILE_OPS

    families = tile_families()
    lines = [
        "## tile dialect",
        "",
        f'{len(TILE_OPS)} Ascend-style ops on scoped buffers (`memref<..., "UB">`; scopes '
        f"{', '.join(SCOPES)}), each issued on one pipe of a core ({', '.join(PIPES)}); "
        "`tilegraph/dialects/tile/`, docs/tile-level.md. Ops declared from one table share "
        "a row (`…` stands for the mnemonic). Memory scopes are the ones the op's verifier "
        "requires.",
        "",
        *contents,
        "",
        "DMA paths (`tile.copy`, `tile.copy_flat`: the pipe follows the source and "
        "destination scopes):",
        "",
        *dma_paths(),
        "",
    ]
    for module_name, ops in families.items():
        lines += tile_family_section(module_name, ops)
    return lines


def generate() -> str:
    """The text of ``docs/ops.md``."""
    families = graph_families()
    contents = [f"- [{family_title(m)[0]}](#{anchor(family_title(m)[0])})" for m in families]
    tile_contents = [
        f"- [{m.rsplit('.', 1)[-1]}.py](#{anchor(m.rsplit('.', 1)[-1] + '.py')})"
        for m in tile_families()
    ]
    lines = [
        "# Op reference",
        "",
        "Generated by `make docs` from the op classes (`FACTS`, `ONNX_OP`, `DEFAULTS`, IRDL",
        "definitions, docstrings) and the lowering tables of",
        "`tilegraph/lowering/conversion/tiling/`; a test fails when this page is stale.",
        "docs/onnx-ops.md lists the ONNX operators by name, docs/ir.md the syntax,",
        "docs/tile-level.md how kernels are tiled.",
        "",
        "Contents: [legend](#legend) · [graph dialect](#graph-dialect) ·",
        "[layout dialect](#layout-dialect) · [tile dialect](#tile-dialect)",
        "",
        *_legend(),
        *_graph_section([*contents, "- [Fused groups (fused.py)](#fused-groups-fusedpy)"]),
        *_layout_section(),
        *_tile_section(tile_contents),
    ]
    return "\n".join(lines).rstrip() + "\n"
