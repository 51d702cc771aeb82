"""Hardware what-if sweeps: models × presets × preset overrides × storage strategies,
each cell compiled and estimated by the cycle model (``tilegraph-sweep``, docs/sweeps.md).

Contract:

* :func:`sweep_configs` — for each preset, the preset itself and then one configuration per
  override (``"ub=256KiB,l1=1MiB"``: each override is one more configuration of *every*
  preset), each crossed with the storage strategies, in that order;
* :func:`sweep_tasks` — the cells, model-major: every configuration of the first model, then
  of the next. A task is a small frozen dataclass of strings (picklable: it crosses to
  worker processes and Ray as it is);
* :func:`run_cell` — one cell: the model loaded with static input shapes
  (:func:`static_model`), ``tilegraph.compile`` on the configuration's platform with O2 and
  the strategy, :func:`~tilegraph.cost_model.cycles.simulate_module`, the figures of a
  :class:`SweepCell`. A cell that fails returns its error's first line instead: the sweep
  goes on;
* :func:`run_sweep` — the cells on :func:`~tilegraph.search.workers.run_tasks` (local
  processes or Ray); the result lists cells in task order whatever finished first, so a
  sweep gives the same figures on one worker, on many and on Ray (only ``compile_s``, a
  wall time, differs);
* :func:`write_outputs` — ``sweep.csv`` and ``sweep.json`` in a directory, then the plots
  (:mod:`.sweep_plot`, matplotlib).

A model is an ONNX file or the name of one of the onnx wheel's light models
(:data:`tilegraph.frontend.light_models.LIGHT_MODELS`, with seeded random weights; the
estimate does not depend on the values).
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import onnx

from tilegraph.hardware import OVERRIDE_SEPARATOR, hardware_preset, parse_overrides
from tilegraph.search.workers import run_tasks

STRATEGIES = ("naive", "ge", "optimal")
"""The storage strategies of ``select-storage-format`` a sweep may cross."""
DEFAULT_STRATEGY = "ge"
UNITS = ("cube", "vector", "mix", "workspace", "host", "scheduling")
"""The parts of a cell's total, in stacking order: device time per unit as the cycle model
reports it (``ModelCycles.per_unit_us``; a mix launch's workspace round trip apart from the
rest of its time), host ops, and the scheduling of every launch. They add up to the total."""
CSV_COLUMNS = (
    "model",
    "preset",
    "override",
    "strategy",
    "platform",
    "total_us",
    *(f"{unit}_us" for unit in UNITS),
    "kernels",
    "launches",
    "host_ops",
    "compile_s",
    "error",
)


class SweepError(ValueError):
    """A sweep that cannot start: an unknown preset, strategy or model, a bad override."""


@dataclass(frozen=True)
class SweepConfig:
    """One hardware configuration: a preset, an override of it ("" for none), a strategy."""

    preset: str
    override: str = ""
    strategy: str = DEFAULT_STRATEGY

    @property
    def platform(self) -> str:
        """The platform name the compile gets (``ascend910b:ub=256KiB``)."""
        return f"{self.preset}{OVERRIDE_SEPARATOR}{self.override}" if self.override else self.preset

    @property
    def label(self) -> str:
        """A short name for tables and plots: ``ascend910b ub=256KiB``, plus the strategy
        when it is not the default."""
        parts = [self.preset, self.override or "", "" if self.strategy == "ge" else self.strategy]
        return " ".join(p for p in parts if p)


@dataclass(frozen=True)
class ModelSpec:
    """A model of the sweep: an ONNX file or a light model's name, and the sizes of its
    dynamic input axes (``dims``: ONNX dim_param -> size; ``shapes``: input -> shape)."""

    source: str
    dims: tuple[tuple[str, int], ...] = ()
    shapes: tuple[tuple[str, tuple[int, ...]], ...] = ()

    @property
    def label(self) -> str:
        """The file's stem (``bert`` for ``models/bert.onnx``) or the light model's name."""
        return Path(self.source).stem if self.source.endswith(".onnx") else self.source


@dataclass(frozen=True)
class SweepTask:
    """One cell to compute (picklable)."""

    model: ModelSpec
    model_label: str
    config: SweepConfig


@dataclass(frozen=True)
class SweepCell:
    """The figures of one cell (µs from the cycle model), or its error."""

    model: str
    preset: str
    override: str
    strategy: str
    platform: str
    """The canonical platform name the module carried ("" when the cell failed before)."""
    total_us: float = 0.0
    unit_us: dict[str, float] = field(default_factory=dict)
    """µs per part of the total (:data:`UNITS`; the parts add up to ``total_us``)."""
    kernels: int = 0
    """Distinct kernels (a mix kernel's AIC and AIV parts are one)."""
    launches: int = 0
    host_ops: int = 0
    compile_s: float = 0.0
    """Wall time of the compile and the estimate (the one field that depends on the run)."""
    error: str = ""

    @property
    def config_label(self) -> str:
        return SweepConfig(self.preset, self.override, self.strategy).label

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def csv_row(self) -> dict[str, Any]:
        row: dict[str, Any] = {k: getattr(self, k) for k in CSV_COLUMNS if hasattr(self, k)}
        for unit in UNITS:
            row[f"{unit}_us"] = self.unit_us.get(unit, 0.0) if not self.error else ""
        if self.error:
            row.update(total_us="", kernels="", launches="", host_ops="")
        return row


def sweep_configs(
    presets: Sequence[str], overrides: Sequence[str] = (), strategies: Sequence[str] = ("ge",)
) -> list[SweepConfig]:
    """Every configuration: per preset, the preset itself then each override, each with
    every strategy. SweepError for an unknown preset or strategy or a bad override (each
    override is checked against every preset: a value may suit one and not another)."""
    for strategy in strategies:
        if strategy not in STRATEGIES:
            raise SweepError(f"unknown strategy '{strategy}'; choose from {', '.join(STRATEGIES)}")
    configs: list[SweepConfig] = []
    for preset in presets:
        if OVERRIDE_SEPARATOR in preset:
            raise SweepError(
                f"--presets takes preset names, got '{preset}'; give overrides with --override"
            )
        for override in ("", *overrides):
            config = SweepConfig(preset.strip().lower(), _spelled_override(override))
            try:
                hardware_preset(config.platform)
            except ValueError as e:
                raise SweepError(str(e)) from None
            configs += [SweepConfig(config.preset, config.override, s) for s in strategies]
    return configs


def _spelled_override(text: str) -> str:
    """An override as the user wrote it, tidied: ``ub = 256KiB, L1=1MiB`` ->
    ``ub=256KiB,l1=1MiB`` (keys in the given order, values as written)."""
    if not text.strip():
        return ""
    try:
        return ",".join(f"{k}={v}" for k, v in parse_overrides(text).items())
    except ValueError as e:
        raise SweepError(f"--override '{text}': {e}") from None


def model_spec(
    source: str,
    dims: Mapping[str, int] | None = None,
    shapes: Mapping[str, Sequence[int]] | None = None,
) -> ModelSpec:
    """A :class:`ModelSpec`, checked: SweepError for a file that does not exist and is not a
    light model's name."""
    from tilegraph.frontend.light_models import LIGHT_MODELS

    if not Path(source).is_file() and source not in LIGHT_MODELS:
        raise SweepError(
            f"{source}: no such model file, nor a light model ({', '.join(LIGHT_MODELS)})"
        )
    return ModelSpec(
        source,
        tuple(sorted((dims or {}).items())),
        tuple(sorted((k, tuple(v)) for k, v in (shapes or {}).items())),
    )


def sweep_tasks(models: Sequence[ModelSpec], configs: Sequence[SweepConfig]) -> list[SweepTask]:
    """The cells, model-major; models of the same label are told apart by a ``#2`` suffix."""
    tasks: list[SweepTask] = []
    seen: dict[str, int] = {}
    for model in models:
        seen[model.label] = seen.get(model.label, 0) + 1
        label = model.label + (f"#{seen[model.label]}" if seen[model.label] > 1 else "")
        tasks += [SweepTask(model, label, config) for config in configs]
    return tasks


def static_model(spec: ModelSpec) -> onnx.ModelProto:
    """The model with every graph input's shape static: ``shapes`` give whole shapes,
    ``dims`` size named axes, a dynamic axis 0 left over is a batch of 1. SweepError names
    an input axis still dynamic after that."""
    from tilegraph.frontend.light_models import LIGHT_MODELS, light_model
    from tilegraph.frontend.onnx_checks import read_onnx_model

    if spec.source in LIGHT_MODELS and not Path(spec.source).is_file():
        model = light_model(spec.source)
    else:
        model = read_onnx_model(spec.source, spec.source)
    dims, shapes = dict(spec.dims), dict(spec.shapes)
    initializers = {t.name for t in model.graph.initializer}
    for value in model.graph.input:
        if value.name in initializers or not value.type.HasField("tensor_type"):
            continue
        axes = value.type.tensor_type.shape.dim
        if value.name in shapes:
            shape = shapes[value.name]
            if len(shape) != len(axes):
                raise SweepError(
                    f"--shape {value.name}: {len(shape)} sizes for an input of rank {len(axes)}"
                )
            for axis, size in zip(axes, shape, strict=True):
                axis.dim_value = size
            continue
        for index, axis in enumerate(axes):
            if axis.HasField("dim_value"):
                continue
            if axis.dim_param in dims:
                axis.dim_value = dims[axis.dim_param]
            elif index == 0:
                axis.dim_value = 1
            else:
                name = axis.dim_param or "?"
                raise SweepError(
                    f"input '{value.name}' axis {index} is dynamic ({name}): give "
                    f"--dim {name}=N or --shape {value.name}=D0,D1,..."
                )
    return model


def _first_line(e: BaseException) -> str:
    """A failed cell's error: the first line in plain words. A ``ValueError`` is what
    tilegraph raises for a model or configuration it cannot take (bad input, a shape,
    a preset); anything else can only be a bug and says so."""
    from tilegraph.runtime.errors import plain_words

    lines = [line.strip() for line in plain_words(e).splitlines() if line.strip()]
    first = lines[0] if lines else ""
    return first if isinstance(e, ValueError) else f"internal error: {first}"


def run_cell(task: SweepTask) -> SweepCell:
    """One cell (see the module docstring); never raises for the model's or the
    configuration's failures, it records them."""
    import tilegraph
    from tilegraph.cost_model.cycles import simulate_module
    from tilegraph.passes.pipelines import o2_with_strategy
    from tilegraph.target import target_of

    config = task.config
    cell = SweepCell(task.model_label, config.preset, config.override, config.strategy, "")
    start = time.perf_counter()
    try:
        model = static_model(task.model)
        compiled = tilegraph.compile(
            model, o2_with_strategy(config.strategy), platform=config.platform
        )
        if compiled.session is not None:
            raise SweepError("the model's shapes depend on its input values: nothing to estimate")
        cycles = simulate_module(compiled.module)
    except Exception as e:  # noqa: BLE001 - a failing cell is a result, the sweep goes on
        return _replace(cell, error=_first_line(e), compile_s=_elapsed(start))
    per_unit = cycles.per_unit_us()
    unit_us = {
        "cube": per_unit.get("cube", 0.0),
        "vector": per_unit.get("vector", 0.0),
        "mix": per_unit.get("mix", 0.0) - cycles.workspace_us,
        "workspace": cycles.workspace_us,
        "host": per_unit.get("host", 0.0),
        "scheduling": cycles.launch_overhead_us,
    }
    return _replace(
        cell,
        platform=target_of(compiled.module).platform,
        total_us=round(cycles.total_us, 3),
        unit_us={unit: round(us, 3) for unit, us in unit_us.items()},
        kernels=len(cycles.kernels),
        launches=cycles.launches,
        host_ops=len(compiled.host_ops),
        compile_s=_elapsed(start),
    )


def _elapsed(start: float) -> float:
    return round(time.perf_counter() - start, 2)


def _replace(cell: SweepCell, **changes: Any) -> SweepCell:
    from dataclasses import replace

    return replace(cell, **changes)


def run_sweep(
    tasks: Sequence[SweepTask],
    *,
    workers: int = 1,
    ray: str | None = None,
    on_cell: Callable[[int, SweepCell], None] | None = None,
) -> list[SweepCell]:
    """Every task's cell, in task order, on ``workers`` local processes or on Ray (``ray``:
    "" a local Ray, else a cluster's address; see :func:`~tilegraph.search.workers.
    run_tasks`). ``on_cell(index, cell)`` sees each cell as it finishes."""
    return run_tasks(run_cell, list(tasks), workers=workers, ray=ray, on_result=on_cell)


def baseline_of(cells: Sequence[SweepCell], cell: SweepCell) -> SweepCell | None:
    """The cell ``cell`` compares with: the same model, preset and strategy without an
    override (None when that one failed or is ``cell`` itself)."""
    for other in cells:
        if (other.model, other.preset, other.strategy, other.override) == (
            cell.model,
            cell.preset,
            cell.strategy,
            "",
        ):
            return None if other is cell or other.error else other
    return None


def sweep_json(cells: Sequence[SweepCell], configs: Sequence[SweepConfig]) -> dict[str, Any]:
    """What ``sweep.json`` holds: the units, the configurations and every cell."""
    return {
        "units": list(UNITS),
        "configs": [
            {
                "preset": c.preset,
                "override": c.override,
                "strategy": c.strategy,
                "platform": hardware_preset(c.platform).name,
                "label": c.label,
            }
            for c in configs
        ],
        "cells": [cell.to_json() for cell in cells],
    }


def write_outputs(
    out: Path, cells: Sequence[SweepCell], configs: Sequence[SweepConfig], plots: bool = True
) -> list[Path]:
    """``sweep.csv``, ``sweep.json`` and (``plots``) the PNGs of :mod:`.sweep_plot` in
    ``out`` (created). Returns the files written. The CSV and JSON are written before the
    plots, so a missing matplotlib (SweepError) still leaves them."""
    out.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = out / "sweep.csv", out / "sweep.json"
    with csv_path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for cell in cells:
            writer.writerow(cell.csv_row())
    json_path.write_text(json.dumps(sweep_json(cells, configs), indent=1) + "\n")
    written = [csv_path, json_path]
    if plots:
        from tilegraph.search.sweep_plot import plot_sweep

        written += plot_sweep(out, cells)
    return written
