"""A model file as a module, for the programs (``tilegraph-run``, ``tilegraph-viz``).

:func:`load_module` reads an ``.onnx`` or ``.mlir`` file through
:func:`tilegraph.runtime.compiled.load_model` (what :func:`tilegraph.compile` reads with)
and turns every problem with the file into one :class:`ModelFileError` message.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp


class ModelFileError(Exception):
    """The model file cannot be read (message complete; the programs print it, exit 1)."""


def load_module(path: str, bindable: bool = True) -> ModuleOp:
    """An ``.onnx`` or ``.mlir`` file as a module; ModelFileError on any problem (with
    ``bindable=False``, a ValueDependentError — an If concrete inputs would decide — is
    raised as it is)."""
    from xdsl.utils.exceptions import ParseError

    from tilegraph.frontend import OnnxImportError
    from tilegraph.frontend.onnx_errors import ValueDependentError
    from tilegraph.runtime.compiled import load_model

    if path.endswith(".onnx"):
        try:
            return load_model(path)
        except OnnxImportError as e:
            if isinstance(e, ValueDependentError) and not bindable:
                raise
            raise ModelFileError(str(e)) from None
    if path.endswith(".mlir"):
        try:
            return load_model(path)
        except FileNotFoundError:
            raise ModelFileError(f"{path}: no such file") from None
        except ParseError as e:
            raise ModelFileError(str(e)) from None
    raise ModelFileError(f"{path}: expected a .onnx or .mlir file")
