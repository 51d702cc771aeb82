"""Progress of a tool's long run on the terminal: a rich display on stderr, or nothing.

Progress is shown only when stderr is a terminal (not piped, not redirected, ``TERM`` not
``dumb``) and the user did not pass ``--quiet``; otherwise nothing at all is written, so
piped output and logs carry no progress lines and no ANSI codes. The display is transient:
it disappears when the run ends, leaving only the tool's real output.

* :func:`terminal_progress` — ``with terminal_progress(args.quiet): ...`` installs the
  display as the :mod:`tilegraph.progress` sink for the block, so that tasks reported by
  library code (the ``optimal`` storage solver) and by the tool (:func:`tilegraph.progress.task`)
  both show;
* :func:`pass_observer` — an observer for :func:`tilegraph.passes.pipelines.observing_passes`
  that advances a task once per pass ("O2: pass 12, cse");
* :class:`KernelProgress` — tile-executor counters that advance a task once per kernel
  launch.

``rich`` is imported only when a display is actually shown.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from tilegraph.progress import Task, reporting_to
from tilegraph.runtime.tile_interpreter import TileCounters


def progress_wanted(quiet: bool, stream: IO[str] | None = None) -> bool:
    """Whether to draw progress on ``stream`` (stderr by default): a terminal, not quiet."""
    stream = sys.stderr if stream is None else stream
    if quiet or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class RichSink:
    """A :class:`tilegraph.progress.ProgressSink` drawn by ``rich.progress`` on ``stream``.

    Each task is one line: a spinner, its label, then a bar and ``done/total`` when its
    total is known (``done`` alone when it counts steps of unknown number), and the time
    elapsed; a task's line goes away when it stops.
    """

    def __init__(self, stream: IO[str]):
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        stdout_isatty = getattr(sys.stdout, "isatty", None)
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            *_count_columns(),
            TimeElapsedColumn(),
            console=Console(file=stream),
            transient=True,
            # stdout goes through the display only when it shares the terminal with it
            redirect_stdout=bool(stdout_isatty and stdout_isatty()),
            redirect_stderr=True,
        )

    def start(self, label: str, total: int | None) -> int:
        return int(self.progress.add_task(label, total=total))

    def update(self, task: int, advance: int = 0, label: str | None = None) -> None:
        from rich.progress import TaskID

        if label is None:
            self.progress.update(TaskID(task), advance=advance)
        else:
            self.progress.update(TaskID(task), advance=advance, description=label)

    def stop(self, task: int) -> None:
        from rich.progress import TaskID

        self.progress.remove_task(TaskID(task))


def _count_columns() -> tuple[Any, Any]:
    """A bar and a ``done/total`` count for tasks of known total; a plain count of the
    steps done for the others (empty before the first)."""
    from rich.progress import BarColumn, ProgressColumn
    from rich.text import Text

    class Bar(BarColumn):
        def render(self, task: Any) -> Any:
            return super().render(task) if task.total is not None else Text("")

    class Count(ProgressColumn):
        def render(self, task: Any) -> Text:
            done = int(task.completed)
            if task.total is not None:
                return Text(f"{done}/{int(task.total)}")
            return Text(str(done) if done else "")

    return Bar(), Count()


@contextmanager
def terminal_progress(quiet: bool, stream: IO[str] | None = None) -> Iterator[RichSink | None]:
    """Show the tasks reported inside the block on ``stream`` (stderr) when
    :func:`progress_wanted`; yields the sink, or None when nothing is shown."""
    out: IO[str] = sys.stderr if stream is None else stream
    if not progress_wanted(quiet, out):
        with reporting_to(None):
            yield None
        return
    sink = RichSink(out)
    with sink.progress, reporting_to(sink):
        yield sink


def pass_observer(task: Task, pipeline: str) -> Callable[[Any, Any], None]:
    """An observer of leaf passes (``observing_passes``) advancing ``task`` per pass."""
    count = 0

    def observe(done: Any, module: Any) -> None:
        nonlocal count
        count += 1
        task.advance(1, f"{pipeline}: pass {count}, {getattr(done, 'name', type(done).__name__)}")

    return observe


class KernelProgress(TileCounters):
    """Tile-executor counters that advance ``task`` at every kernel launch: the count is of
    the kernels finished, the label (``label: kernel``) names the one running."""

    def __init__(self, task: Task, label: str):
        super().__init__()
        self.task = task
        self.label = label
        self.started = 0
        """Launches so far (the last one is running)."""

    def launch(self, name: str) -> None:
        super().launch(name)
        # the label names the kernel now running; the count is of kernels finished
        if self.started:
            self.task.advance(1)
        self.started += 1
        self.task.relabel(f"{self.label}: {name}")
