"""tilegraph: a layout-aware neural-network graph compiler on xDSL.

Packages: :mod:`tilegraph.formats` (layout rules, plain Python), :mod:`tilegraph.symbolic`
(dimension expressions), :mod:`tilegraph.dialects` (``layout`` and ``graph``),
:mod:`tilegraph.passes` (graph-level passes and pipelines), :mod:`tilegraph.frontend` (ONNX
import and export, onnxruntime as the oracle), :mod:`tilegraph.lowering` (graph -> kernels
-> tiled loops), :mod:`tilegraph.runtime` (reference interpreter, tile executors,
``compile``), :mod:`tilegraph.tools` (the command-line programs).

The top-level names are imported lazily so that ``import tilegraph.formats`` stays light.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tilegraph.frontend import OnnxImportError, load_onnx
    from tilegraph.runtime import run_reference
    from tilegraph.runtime.compiled import CompiledModel, compile
    from tilegraph.runtime.session import GuardViolation, Session

from tilegraph.version import __version__  # a module of its own: any layer may read it

_LAZY = {
    "load_onnx": ("tilegraph.frontend", "load_onnx"),
    "OnnxImportError": ("tilegraph.frontend", "OnnxImportError"),
    "run_reference": ("tilegraph.runtime", "run_reference"),
    "compile": ("tilegraph.runtime.compiled", "compile"),
    "CompiledModel": ("tilegraph.runtime.compiled", "CompiledModel"),
    "Session": ("tilegraph.runtime.session", "Session"),
    "GuardViolation": ("tilegraph.runtime.session", "GuardViolation"),
}

__all__ = [
    "CompiledModel",
    "GuardViolation",
    "OnnxImportError",
    "Session",
    "__version__",
    "compile",
    "load_onnx",
    "run_reference",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'tilegraph' has no attribute {name!r}")
