"""One-line, located error messages for the command-line tools.

xDSL reports a verifier failure with the whole module printed around the failing op. The
tools instead name the op and its place: ``file:line`` of the op in the input (found by its
SSA name), the function it is in, and the verifier's message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException


@dataclass
class SourceText:
    """An input chunk: its file name, text, and line offset within the file."""

    filename: str
    text: str
    line_offset: int = 0

    def line_of(self, op: Operation) -> int | None:
        """1-based line of ``op`` in the file, found by its first result's SSA name (the
        first of a result list, ``%a, %b = ...``, or a pack, ``%a:2 = ...``)."""
        if not op.results or op.results[0].name_hint is None:
            return None
        name = re.escape(op.results[0].name_hint)
        pattern = re.compile(rf"%{name}(:\d+)?\s*(,\s*%[\w.$-]+(:\d+)?\s*)*=")
        for i, line in enumerate(self.text.splitlines()):
            if pattern.search(line):
                return self.line_offset + i + 1
        return None


def first_failing_op(module: ModuleOp) -> tuple[Operation, str] | None:
    """The first op (innermost first) whose own verification fails, with the message."""
    for op in module.walk(region_first=True):
        try:
            op.verify(verify_nested_ops=False)
        except DiagnosticException as e:
            return op, " ".join(line.strip() for line in str(e).splitlines() if line.strip())
        except ValueError as e:
            return op, str(e)
    return None


def describe_op(op: Operation) -> str:
    names = ", ".join(f"%{r.name_hint}" for r in op.results if r.name_hint)
    where = ""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    if isinstance(parent, func.FuncOp):
        where = f" in @{parent.sym_name.data}"
    return f"'{op.name}'" + (f" ({names})" if names else "") + where


def located_message(module: ModuleOp, source: SourceText | None, context: str = "") -> str | None:
    """A located message for the first failing op of ``module``, or None if all verify."""
    found = first_failing_op(module)
    if found is None:
        return None
    op, message = found
    message = message.removeprefix("Operation does not verify: ")
    line = source.line_of(op) if source is not None else None
    place = (
        f"{source.filename}:{line}: "
        if source is not None and line is not None
        else (f"{source.filename}: " if source is not None else "")
    )
    prefix = f"{context}: " if context else ""
    return f"{place}error: {prefix}{describe_op(op)}: {message}"
