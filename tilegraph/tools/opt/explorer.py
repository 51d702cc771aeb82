"""The pass explorer: ``tilegraph-opt MODEL -p PIPELINE --explore report.html``.

One self-contained HTML page (no network, no CDN, no script needed to read it): the
pipeline as a table of its passes — time, ops, TransData, fused groups, kernels and the
statistics each pass reported — then, per pass, the IR after it with a unified diff to the
IR before (both collapsed by default), and the graph before / after as SVG pictures drawn
by :mod:`tilegraph.tools.viz.picture` (skipped for functions too large to draw legibly).
"""

from __future__ import annotations

import difflib
import time
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilegraph.dialects.graph import FusedOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.passes.statistics import StatisticsCollector

MAX_PICTURE_NODES = 150
"""Larger functions are not drawn (the layout would take long and read badly)."""


@dataclass
class Snapshot:
    """The module after one pass (or as it came in)."""

    title: str
    seconds: float
    ir: str
    ops: int
    transdata: int
    groups: int
    kernels: int
    statistics: dict[str, float | int] = field(default_factory=dict)
    picture: str | None = None


def _counts(module: ModuleOp) -> tuple[int, int, int, int]:
    from tilegraph.dialects.tile import LaunchOp

    ops = transdata = groups = kernels = 0
    for op in module.walk():
        ops += 1
        transdata += isinstance(op, TransDataOp)
        groups += isinstance(op, FusedOp)
        kernels += isinstance(op, LaunchOp)
    return ops, transdata, groups, kernels


def _picture(module: ModuleOp) -> str | None:
    from tilegraph.tools.viz.picture import picture
    from tilegraph.tools.viz.svg import to_svg

    try:
        p = picture(module)
    except ValueError:
        return None
    if sum(1 for _ in p.all_nodes()) > MAX_PICTURE_NODES:
        return None
    return to_svg(p)


class Explorer:
    """Records a snapshot before the pipeline and after every leaf pass."""

    def __init__(self, module: ModuleOp, collector: StatisticsCollector, pictures: bool = True):
        self.collector = collector
        self.pictures = pictures
        self.snapshots: list[Snapshot] = []
        self._seen: dict[str, dict[str, float | int]] = {}
        self._clock = time.perf_counter()
        self._take("input", module, 0.0, {})

    def _take(
        self, title: str, module: ModuleOp, seconds: float, stats: dict[str, float | int]
    ) -> None:
        ops, transdata, groups, kernels = _counts(module)
        self.snapshots.append(
            Snapshot(
                title,
                seconds,
                str(module),
                ops,
                transdata,
                groups,
                kernels,
                stats,
                _picture(module) if self.pictures else None,
            )
        )

    def after_pass(self, p: ModulePass, module: ModuleOp) -> None:
        seconds = time.perf_counter() - self._clock
        now = self.collector.as_dict().get(p.name, {})
        before = self._seen.get(p.name, {})
        delta = {k: v - before.get(k, 0) for k, v in now.items() if v != before.get(k, 0)}
        self._seen[p.name] = dict(now)
        self._take(str(p.spec()), module, seconds, delta)
        self._clock = time.perf_counter()

    def html(self, model: str, pipeline: str) -> str:
        return render_page(model, pipeline, self.snapshots)


_CSS = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin-bottom: 1.5em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th:first-child, td:first-child, td.stats { text-align: left; }
td.stats { font-family: monospace; font-size: 85%; }
section { border-top: 2px solid #888; margin-top: 1.2em; padding-top: 0.4em; }
pre { font-size: 80%; background: #f7f7f7; padding: 0.6em; overflow-x: auto; }
.add { color: #0a6b0a; background: #eaffea; display: block; }
.del { color: #9b0000; background: #ffecec; display: block; }
.pictures { display: flex; gap: 2em; align-items: flex-start; overflow-x: auto; }
.pictures figure { margin: 0; }
.changed { font-weight: bold; }
"""


def _diff(before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(), after.splitlines(), "before", "after", lineterm="", n=2
    )
    out = []
    for line in lines:
        cls = "add" if line.startswith("+") else "del" if line.startswith("-") else ""
        text = escape(line)
        out.append(f'<span class="{cls}">{text}</span>' if cls else text)
    return "\n".join(out) or "(no change)"


def _stats_text(stats: dict[str, float | int]) -> str:
    return ", ".join(f"{k} {v:g}" for k, v in stats.items())


def render_page(model: str, pipeline: str, snapshots: list[Snapshot]) -> str:
    rows = []
    for i, s in enumerate(snapshots):
        changed = i > 0 and s.ir != snapshots[i - 1].ir
        name = f'<a href="#p{i}">{escape(s.title)}</a>'
        rows.append(
            f'<tr class="{"changed" if changed else ""}"><td>{name}</td>'
            f"<td>{s.seconds * 1e3:.1f}</td><td>{s.ops}</td><td>{s.transdata}</td>"
            f"<td>{s.groups}</td><td>{s.kernels}</td>"
            f'<td class="stats">{escape(_stats_text(s.statistics))}</td></tr>'
        )
    sections = []
    for i, s in enumerate(snapshots):
        parts = [f'<section id="p{i}"><h2>{i}. {escape(s.title)}</h2>']
        if i > 0:
            prev = snapshots[i - 1]
            parts.append(
                f"<p>{s.seconds * 1e3:.1f} ms; ops {prev.ops} → {s.ops}, TransData "
                f"{prev.transdata} → {s.transdata}, fused groups {prev.groups} → {s.groups}, "
                f"kernels {prev.kernels} → {s.kernels}</p>"
            )
            parts.append(
                f"<details><summary>diff to the IR before</summary>"
                f"<pre>{_diff(prev.ir, s.ir)}</pre></details>"
            )
            if s.picture and prev.picture and s.ir != prev.ir:
                parts.append(
                    '<details><summary>the graph before / after</summary><div class="pictures">'
                    f"<figure><figcaption>before</figcaption>{prev.picture}</figure>"
                    f"<figure><figcaption>after</figcaption>{s.picture}</figure></div></details>"
                )
        elif s.picture:
            parts.append(f"<details><summary>the graph</summary>{s.picture}</details>")
        parts.append(f"<details><summary>the IR</summary><pre>{escape(s.ir)}</pre></details>")
        parts.append("</section>")
        sections.append("\n".join(parts))
    total = sum(s.seconds for s in snapshots)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>tilegraph pass explorer: {escape(Path(model).name)}</title>
<style>{_CSS}</style></head>
<body>
<h1>Pass explorer: {escape(model)}</h1>
<p>pipeline <code>{escape(pipeline)}</code>: {len(snapshots) - 1} passes, {total * 1e3:.0f} ms.
Rows in bold changed the IR.</p>
<table id="passes"><thead><tr><th>pass</th><th>ms</th><th>ops</th><th>TransData</th>
<th>fused groups</th><th>kernels</th><th>statistics</th></tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table>
{chr(10).join(sections)}
</body></html>
"""
