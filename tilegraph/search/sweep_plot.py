"""The sweep's pictures: estimated µs per configuration, stacked by unit (matplotlib).

:func:`plot_sweep` writes ``sweep.png`` (one panel per model, side by side) and
``sweep_<model>.png`` (one model each). matplotlib is the ``plot`` extra of tilegraph: it is
imported here only, when a plot is asked for, and its absence is a :class:`SweepError`
saying how to install it. The pictures are drawn with the Agg backend (no display needed)
at a modest resolution, so that a committed figure stays small.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tilegraph.search.sweep import UNITS, SweepCell, SweepError

COLOURS = {
    "cube": "#4e79a7",
    "vector": "#f28e2b",
    "mix": "#59a14f",
    "workspace": "#b6d7a8",
    "host": "#e15759",
    "scheduling": "#bab0ac",
}
"""One colour per unit of :data:`~tilegraph.search.sweep.UNITS`, the same in every panel."""


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise SweepError(
            "the plots need matplotlib: pip install 'tilegraph[plot]' (or run without plots)"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _panel(ax: Any, model: str, cells: Sequence[SweepCell]) -> None:
    """One model's configurations as stacked bars; a failed cell as an ``x`` at 0."""
    labels = [c.config_label for c in cells]
    positions = list(range(len(cells)))
    bottom = [0.0] * len(cells)
    for unit in UNITS:
        heights = [0.0 if c.error else c.unit_us.get(unit, 0.0) for c in cells]
        if any(heights):
            ax.bar(positions, heights, bottom=bottom, color=COLOURS[unit], label=unit, width=0.7)
            bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    for x, cell in zip(positions, cells, strict=True):
        if cell.error:
            ax.text(x, 0, "failed", ha="center", va="bottom", fontsize=7, color="#e15759")
        else:
            ax.text(x, cell.total_us, f"{cell.total_us:.0f}", ha="center", va="bottom", fontsize=7)
    ax.set_title(model, fontsize=9)
    ax.set_xticks(positions, labels, fontsize=6.5, rotation=35, ha="right")
    ax.set_ylabel("estimated µs", fontsize=8)
    ax.tick_params(axis="y", labelsize=7)
    ax.margins(y=0.12)


def _by_model(cells: Sequence[SweepCell]) -> dict[str, list[SweepCell]]:
    found: dict[str, list[SweepCell]] = {}
    for cell in cells:
        found.setdefault(cell.model, []).append(cell)
    return found


def _legend(fig: Any, axes: Sequence[Any]) -> None:
    handles: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    ordered = [u for u in UNITS if u in handles]
    fig.legend(
        [handles[u] for u in ordered], ordered, loc="upper center", ncol=len(ordered), fontsize=7
    )


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.savefig(path, dpi=90)
    return path


def plot_sweep(out: Path, cells: Sequence[SweepCell]) -> list[Path]:
    """``sweep.png`` and one ``sweep_<model>.png`` per model in ``out``; the files written."""
    plt = _pyplot()
    models = _by_model(cells)
    width = max(3.2, 0.55 * max(len(c) for c in models.values()) + 1.2)
    fig, axes = plt.subplots(1, len(models), figsize=(width * len(models), 4.2), squeeze=False)
    for ax, (model, own) in zip(axes[0], models.items(), strict=True):
        _panel(ax, model, own)
    _legend(fig, list(axes[0]))
    written = [_save(fig, out / "sweep.png")]
    plt.close(fig)
    for model, own in models.items():
        fig, ax = plt.subplots(figsize=(width, 4.2))
        _panel(ax, model, own)
        _legend(fig, [ax])
        written.append(_save(fig, out / f"sweep_{re.sub(r'[^A-Za-z0-9_.-]', '_', model)}.png"))
        plt.close(fig)
    return written
