"""Pass statistics: what each pass did, counted by name (MLIR's ``-mlir-pass-statistics``).

A pass records counters under its own name::

    stats = pass_statistics(self.name)
    stats.add("ops-removed", 3)
    stats.add("rule.x-plus-zero")
    stats.maximum("largest-group", 7)

Counting costs nothing when nobody collects: outside :func:`collecting_statistics` the
returned object is a throwaway. Tools open a collector around a pipeline and print or export
it (``tilegraph-opt --pass-statistics``, ``tilegraph-run --json``). Counters of a pass that
runs several times (inside a fixpoint pipeline) accumulate; passes are listed in the order
they first recorded something.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

Number = int | float


class PassStatistics:
    """The counters of one pass (by pass name)."""

    def __init__(self, pass_name: str):
        self.pass_name = pass_name
        self.counters: dict[str, Number] = {}
        self.runs = 0

    def add(self, key: str, amount: Number = 1) -> None:
        self.counters[key] = self.counters.get(key, 0) + amount

    def maximum(self, key: str, value: Number) -> None:
        """Keep the largest value seen under ``key``."""
        self.counters[key] = max(self.counters.get(key, value), value)

    def note(self, key: str, value: Number) -> None:
        """Set ``key`` to ``value`` (the last run wins)."""
        self.counters[key] = value

    def __getitem__(self, key: str) -> Number:
        return self.counters.get(key, 0)

    def __contains__(self, key: object) -> bool:
        # without it ``in`` falls back to __getitem__(0), (1), ... which never raise
        return key in self.counters


class StatisticsCollector:
    """Statistics of every pass that ran while this collector was active."""

    def __init__(self) -> None:
        self.passes: dict[str, PassStatistics] = {}

    def for_pass(self, pass_name: str) -> PassStatistics:
        stats = self.passes.get(pass_name)
        if stats is None:
            stats = self.passes[pass_name] = PassStatistics(pass_name)
        return stats

    def as_dict(self) -> dict[str, dict[str, Number]]:
        return {name: dict(stats.counters) for name, stats in self.passes.items()}

    def format(self) -> str:
        """A readable listing, one block per pass, as MLIR prints pass statistics."""
        lines = ["===- Pass statistics -===", ""]
        for name, stats in self.passes.items():
            lines.append(f"{name} (ran {stats.runs}x)")
            if not stats.counters:
                lines.append("  (nothing to report)")
            width = max((len(k) for k in stats.counters), default=0)
            for key, value in stats.counters.items():
                shown = f"{value:.6g}" if isinstance(value, float) else str(value)
                lines.append(f"  {key:<{width}}  {shown}")
        return "\n".join(lines)


_ACTIVE: ContextVar[StatisticsCollector | None] = ContextVar("tilegraph_statistics", default=None)


@contextmanager
def collecting_statistics() -> Iterator[StatisticsCollector]:
    """Collect the statistics of every pass run inside the ``with`` block."""
    collector = StatisticsCollector()
    token = _ACTIVE.set(collector)
    try:
        yield collector
    finally:
        _ACTIVE.reset(token)


def pass_statistics(pass_name: str) -> PassStatistics:
    """The counters of ``pass_name`` in the active collector (a throwaway if none is)."""
    collector = _ACTIVE.get()
    if collector is None:
        return PassStatistics(pass_name)
    stats = collector.for_pass(pass_name)
    return stats


def start_pass(pass_name: str) -> PassStatistics:
    """Like :func:`pass_statistics`, and counts one more run of the pass."""
    stats = pass_statistics(pass_name)
    stats.runs += 1
    return stats
