"""Contexts and parsing shared by the tools and the Python API."""

from __future__ import annotations

from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from tilegraph.passes.registry import tilegraph_dialects


def load_all_dialects(ctx: Context) -> Context:
    """Register every upstream xDSL dialect (lazily) and tilegraph's dialects."""
    for name, factory in {**get_all_dialects(), **tilegraph_dialects()}.items():
        if name not in ctx.registered_dialect_names:
            ctx.register_dialect(name, factory)
    return ctx


def make_context() -> Context:
    return load_all_dialects(Context())


def parse_mlir(text: str, name: str = "<string>") -> ModuleOp:
    """Parse MLIR text with every dialect available (ParseError on bad input)."""
    module = Parser(make_context(), text, name).parse_module()
    module.verify()
    return module


def parse_mlir_file(path: str | Path) -> ModuleOp:
    return parse_mlir(Path(path).read_text(), str(path))
