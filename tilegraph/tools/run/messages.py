"""The one message ``tilegraph-run`` (and ``tilegraph-tune``) prints for an error: what the
user can fix, in plain words, or an internal error to report (:func:`error_message`).
"""

from __future__ import annotations

from tilegraph.dialects.entry import InputError
from tilegraph.dialects.layout_storage import UnboundShapeError
from tilegraph.frontend.onnxruntime_oracle import OnnxruntimeFailed, OnnxruntimeMissing
from tilegraph.runtime.compiled import CompileError
from tilegraph.runtime.errors import plain_words
from tilegraph.runtime.interpreter import KernelError
from tilegraph.runtime.session import GuardViolation
from tilegraph.tools.model_files import ModelFileError
from tilegraph.tools.run.report import ReportError
from tilegraph.tools.run.shapes import ShapeArgumentError
from tilegraph.tools.run.watch import RunError

_USER_ERRORS = (
    RunError,
    CompileError,
    ModelFileError,
    ReportError,
    InputError,
    ShapeArgumentError,
    GuardViolation,
    OnnxruntimeMissing,
    OnnxruntimeFailed,
)


def error_message(e: Exception, reference: bool = False) -> str:
    """The one message tilegraph-run prints for ``e``: the error in plain words, naming the
    input, node or op and what to do; a failure that can only be a bug of tilegraph as an
    internal error to report (``TILEGRAPH_DEBUG=1`` shows the traceback). ``reference``:
    the run was on the reference interpreter (the advice for unknown sizes differs)."""
    if isinstance(e, InputError):
        return f"error: {e}; give an array of the model's shape and dtype (--input NAME=FILE)"
    if isinstance(e, _USER_ERRORS):
        return f"error: {e}"
    if isinstance(e, UnboundShapeError):
        if not e.data_dependent:
            advice = "give every input (--input NAME=FILE) or its shape (--shape NAME=...)"
        elif reference:
            advice = "run without a pipeline (no -p): the layout passes need these sizes"
        else:
            advice = (
                "run it with --reference and no -p (origin layouts need no sizes), or make "
                "the inputs that decide these sizes constants of the model"
            )
        return f"error: {e}; {advice}"
    if isinstance(e, KernelError) and not e.internal:
        return f"error: {e}"
    return (
        f"internal error: {plain_words(e)}\n(this is a bug of tilegraph: please report it; "
        "set TILEGRAPH_DEBUG=1 to see the traceback)"
    )
