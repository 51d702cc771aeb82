"""The tools' tables, all drawn by one library (``rich``) the same way.

    print_table(["op", Col("count", right=True)], rows, indent=2)

A table is plain columns: a header row, then one row per item, columns two spaces apart,
no borders; a column whose cells are all empty is left out. On a terminal the header is
bold and cells wrap to the terminal's width; piped or redirected (``tilegraph-run ... |
grep``), the table has no ANSI codes, no trailing spaces and never wraps: one line per
row, whatever its length. Cells are text, never markup (``x[1, 3]`` prints as is).
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from tilegraph.passes.simplify.rule import RuleInfo


@dataclass(frozen=True)
class Col:
    """A column: its header, and whether its cells are right-aligned (numbers)."""

    header: str
    right: bool = False


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _table(columns: Sequence[str | Col], rows: list[Sequence[Any]], bold: bool) -> Table:
    if rows:  # a column with nothing in it (no errors, no bounds) is left out
        keep = [i for i in range(len(columns)) if any(_text(row[i]) for row in rows)]
        columns = [columns[i] for i in keep]
        rows = [[row[i] for i in keep] for row in rows]
    table = Table(
        box=None,
        pad_edge=False,
        show_edge=False,
        padding=(0, 1),
        header_style="bold" if bold else "",
    )
    for column in columns:
        col = column if isinstance(column, Col) else Col(column)
        table.add_column(
            Text(col.header), justify="right" if col.right else "left", overflow="fold"
        )
    for row in rows:
        table.add_row(*(Text(_text(value)) for value in row))
    return table


def render_table(
    columns: Sequence[str | Col],
    rows: Iterable[Sequence[Any]],
    *,
    indent: int = 0,
    terminal: bool = False,
    width: int | None = None,
) -> str:
    """The table as text, each line prefixed by ``indent`` spaces.

    ``terminal``: styled (ANSI) and wrapped to ``width`` columns; otherwise plain, at the
    table's natural width (nothing wraps) with trailing spaces stripped."""
    table = _table(columns, list(rows), bold=terminal)
    measure_console = Console(file=io.StringIO(), width=1 << 20, color_system=None)
    natural = Measurement.get(measure_console, measure_console.options, table).maximum
    if terminal:
        available = max(20, (width or 80) - indent)
        console = Console(file=io.StringIO(), width=min(natural, available), force_terminal=True)
    else:
        console = Console(
            file=io.StringIO(), width=max(natural, 1), color_system=None, force_terminal=False
        )
    with console.capture() as captured:
        console.print(table)
    prefix = " " * indent
    return "\n".join(prefix + line.rstrip() for line in captured.get().splitlines())


def print_table(
    columns: Sequence[str | Col],
    rows: Iterable[Sequence[Any]],
    *,
    indent: int = 0,
    file: IO[str] | None = None,
) -> None:
    """Print :func:`render_table` to ``file`` (stdout), styled when it is a terminal."""
    stream = sys.stdout if file is None else file
    isatty = getattr(stream, "isatty", None)
    terminal = bool(isatty and isatty())
    width = Console(file=stream).width if terminal else None
    print(render_table(columns, rows, indent=indent, terminal=terminal, width=width), file=stream)


def print_rule_catalog(rules: Sequence[RuleInfo], file: IO[str] | None = None) -> None:
    """``tilegraph-opt --list-rules``: one row per named rewrite rule (number, name, the
    pass implementing it, pattern, result, caveat, peers), then ``N rules``."""
    rows = [
        (
            "+" if r.number is None else r.number,
            r.name + (" [fast-math]" if r.fast_math else ""),
            r.implemented_by,
            r.pattern,
            r.result,
            r.caveat,
            r.peers,
        )
        for r in rules
    ]
    columns = [Col("#", right=True), "rule", "pass", "pattern", "result", "caveat", "peers"]
    print_table(columns, rows, file=file)
    print(f"{len(rules)} rules", file=file)
