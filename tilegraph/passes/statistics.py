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

A pass may also leave *remarks* (MLIR's optimisation remarks): one located sentence per
thing it did or could not do, with JSON-ready details::

    stats.remark("split-group", "nodes 'Add_1', 'ReduceMean_2'", "group split into 2 kernels",
                 kernels=2)

Remarks are kept beside the counters (``StatisticsCollector.remarks``), not in
``as_dict``: ``tilegraph-opt --lowering-remarks`` prints them, ``tilegraph-run --json``
carries the lowering's in its ``lowering`` section.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

Number = int | float


@dataclass(frozen=True)
class Remark:
    """What a pass did (or could not do) at a place: ``where`` names it (ONNX nodes, as
    :func:`tilegraph.dialects.graph.provenance.nodes_text` says them), ``message`` says it
    in one sentence, ``details`` holds the same facts JSON-ready, ``kind`` sorts it."""

    pass_name: str
    kind: str
    where: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    def format(self) -> str:
        """One line as MLIR prints a remark: ``WHERE: remark: [PASS] MESSAGE``."""
        return f"{self.where or 'unknown'}: remark: [{self.pass_name}] {self.message}"


class PassStatistics:
    """The counters of one pass (by pass name)."""

    def __init__(self, pass_name: str):
        self.pass_name = pass_name
        self.counters: dict[str, Number] = {}
        self.remarks: list[Remark] = []
        self.runs = 0

    def remark(self, kind: str, where: str, message: str, **details: Any) -> None:
        """Leave a :class:`Remark` of this pass."""
        self.remarks.append(Remark(self.pass_name, kind, where, message, details))

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

    def remarks(self, *pass_names: str) -> list[Remark]:
        """The remarks of ``pass_names`` (of every pass when none is named), pass by pass
        in the order they first recorded something, each pass's in the order it left them."""
        return [
            r
            for name, stats in self.passes.items()
            if not pass_names or name in pass_names
            for r in stats.remarks
        ]

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
