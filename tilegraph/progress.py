"""Progress of long computations, for whoever listens: library code reports, tools display.

Library code (a solver, a pass) announces its work with :func:`task` and never prints::

    with progress.task("optimal storage: ILP model", total=len(values)) as t:
        for value in values:
            ...
            t.advance()

A tool that wants to show progress installs a :class:`ProgressSink` around the run with
:func:`reporting_to` (``tilegraph.tools.run.progress`` draws it on a terminal). With no sink
installed every call is a no-op costing one context-variable lookup, so reporting is free
for library users, tests and piped runs. This module imports nothing from tilegraph: any
layer may use it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol


class ProgressSink(Protocol):
    """Receives the tasks of a run (e.g. a progress display)."""

    def start(self, label: str, total: int | None) -> int:
        """A task begins: its label and number of steps (None: unknown); returns its id."""
        ...

    def update(self, task: int, advance: int = 0, label: str | None = None) -> None:
        """``task`` made ``advance`` more steps and/or is now described by ``label``."""
        ...

    def stop(self, task: int) -> None:
        """``task`` is over (done or abandoned)."""
        ...


_SINK: ContextVar[ProgressSink | None] = ContextVar("tilegraph_progress_sink", default=None)


class Task:
    """A running task: advance it, relabel it. Inert when no sink listens."""

    def __init__(self, sink: ProgressSink | None, task_id: int = -1):
        self._sink = sink
        self._id = task_id

    def advance(self, steps: int = 1, label: str | None = None) -> None:
        if self._sink is not None:
            self._sink.update(self._id, steps, label)

    def relabel(self, label: str) -> None:
        if self._sink is not None:
            self._sink.update(self._id, 0, label)


@contextmanager
def task(label: str, total: int | None = None) -> Iterator[Task]:
    """Report a task to the installed sink for the duration of the ``with`` block."""
    sink = _SINK.get()
    if sink is None:
        yield Task(None)
        return
    task_id = sink.start(label, total)
    try:
        yield Task(sink, task_id)
    finally:
        sink.stop(task_id)


def reporting() -> bool:
    """Whether a sink listens (so that costly labels can be skipped when none does)."""
    return _SINK.get() is not None


@contextmanager
def reporting_to(sink: ProgressSink | None) -> Iterator[None]:
    """Send the tasks started inside the ``with`` block to ``sink`` (None: to nobody)."""
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)
