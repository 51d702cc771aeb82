"""The tuner: each kernel's tiling parameters, and the model's graph-level choices, searched
against the cycle model.

**Kernels** (:func:`tune_kernels`): the macro kernels of a module after
``lower-graph-to-kernels`` are grouped by :func:`~tilegraph.lowering.tuning_db.kernel_key`
(identical kernels are tuned once). Each kernel's space is
:func:`~tilegraph.lowering.search_space.kernel_space`; its size is the product of the value
counts. A space of at most ``budget`` points is searched exhaustively; a larger one by a
seeded evolutionary search of ``budget`` candidates (:class:`_Evolution`: generations of
``population`` points, the best quarter kept as parents, children by uniform crossover and a
mutation of one or more parameters to a neighbouring or a random value, never a point seen
before). The default point is always the first candidate, so the tuned point is never worse
than the default by the cycle model (a tie keeps the default). Candidates are scored by
:func:`~tilegraph.search.evaluate.evaluate` on :func:`~tilegraph.search.workers.run_tasks`:
all kernels' candidates of a generation in one batch, so workers are busy across kernels.

**Determinism**: every decision is made from the results in task order (``run_tasks``
returns them so) and from a random generator seeded by ``seed`` and the kernel's key; the
result does not depend on the worker count, on Ray, or on the order results arrive in.

**The database**: a candidate the database already holds is not evaluated again (its
stored score is used: ``reused``); every new result is committed as it arrives, so a run
killed half-way loses nothing it reported, and a second run of the same model evaluates
nothing new.

**Graph level** (:func:`tune_graph`): the whole model compiled and estimated at each
point of a small grid of O2's options (:data:`GRAPH_GRID`: the format engine's storage
strategy (GE's or naive; the optimal one's search is too slow for a grid), ``fuse-ops``'
``max-ops`` and UB budget, the ``combine-parallel`` rule on or off) with every kernel at
its default point; the cheapest wins (ties: the default) and the kernels are tuned under
it.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tilegraph.lowering.analysis.kernel_attrs import TILES_ATTR, kernel_unit
from tilegraph.lowering.analysis.tuning_params import ParamValue, TilingParam, default_point
from tilegraph.lowering.search_space import kernel_space
from tilegraph.lowering.tuning_db import (
    Candidate,
    TuningDatabase,
    graph_key,
    kernel_key,
    point_text,
)
from tilegraph.search.evaluate import KernelTask, Score, evaluate, kernel_module, launches_of
from tilegraph.search.workers import run_tasks
from tilegraph.target import target_of

Point = dict[str, ParamValue]


@dataclass(frozen=True)
class TuneOptions:
    """How to search: candidates per kernel, the seed, where candidates run."""

    budget: int = 64
    seed: int = 0
    workers: int = 1
    ray: str | None = None
    """None: no Ray; "": a local Ray; else a cluster's address."""

    def __post_init__(self) -> None:
        if self.budget < 1:
            raise ValueError(f"--budget must be at least 1, got {self.budget}")


class Progress:
    """What the tuner tells a progress display; the defaults do nothing."""

    def planned(self, candidates: int) -> None:
        """``candidates`` more are about to be scored (evaluated or reused)."""

    def scored(self, reused: bool, best_us: float) -> None:
        """One candidate scored; ``best_us``: the best total found so far (µs)."""


@dataclass
class KernelResult:
    """One kernel of the model: its default and tuned µs (all its launches)."""

    name: str
    key: str
    unit: str
    launches: int
    default_us: float
    tuned_us: float
    params: Point
    default_params: Point
    space_size: int
    seen: int
    """Candidates of its space scored (evaluated now or found in the database)."""
    search: str
    """"exhaustive", "evolutionary" or "none" (an empty space: the default only)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "default_us": round(self.default_us, 6),
            "tuned_us": round(self.tuned_us, 6),
            "params": self.params,
            "unit": self.unit,
            "launches": self.launches,
            "space_size": self.space_size,
            "seen": self.seen,
            "search": self.search,
        }


@dataclass
class TuneResult:
    """What :func:`tune_kernels` found."""

    kernels: list[KernelResult]
    evaluated: int
    reused: int
    infeasible: int
    points: dict[str, Point] = field(default_factory=dict)
    """Kernel name -> its tuned point (what apply-tuning writes)."""

    @property
    def default_us(self) -> float:
        return sum(k.default_us for k in self.kernels)

    @property
    def tuned_us(self) -> float:
        return sum(k.tuned_us for k in self.kernels)


def space_size(space: Sequence[TilingParam]) -> int:
    return math.prod(len(p.values) for p in space)


class _Exhaustive:
    """Every point of a small space, the default first, in one generation."""

    kind = "exhaustive"

    def __init__(self, space: Sequence[TilingParam]):
        self.space = space

    def first(self) -> list[Point]:
        default = default_point(self.space)
        names = [p.name for p in self.space]
        others = (dict(zip(names, v, strict=True)) for v in itertools.product(
            *(p.values for p in self.space)
        ))  # fmt: skip
        return [default, *(p for p in others if p != default)]

    def next(self, scored: Mapping[str, float | None]) -> list[Point]:
        return []


class _Evolution:
    """A seeded evolutionary search of ``budget`` distinct points (module docstring)."""

    kind = "evolutionary"

    def __init__(self, space: Sequence[TilingParam], budget: int, seed: str):
        self.space = list(space)
        self.budget = budget
        self.rng = random.Random(seed)
        self.population = max(4, min(16, budget // 4))
        self.seen: set[str] = set()

    def _new(self, point: Point) -> bool:
        text = point_text(point)
        if text in self.seen or len(self.seen) >= self.budget:
            return False
        self.seen.add(text)
        return True

    def _random(self) -> Point:
        return {p.name: self.rng.choice(p.values) for p in self.space}

    def first(self) -> list[Point]:
        batch = [default_point(self.space)]
        self._new(batch[0])
        for _ in range(self.population * 20):
            if len(batch) >= self.population:
                break
            candidate = self._random()
            if self._new(candidate):
                batch.append(candidate)
        return batch

    def _mutated(self, parent: Point) -> Point:
        child = dict(parent)
        for p in self.space:
            if len(p.values) > 1 and self.rng.random() < 1.5 / len(self.space):
                at = p.values.index(child[p.name])
                if self.rng.random() < 0.7:  # a neighbour: sizes are ordered
                    at = min(len(p.values) - 1, max(0, at + self.rng.choice((-1, 1))))
                    child[p.name] = p.values[at]
                else:
                    child[p.name] = self.rng.choice(p.values)
        return child

    def next(self, scored: Mapping[str, float | None]) -> list[Point]:
        feasible = sorted((us, text) for text, us in scored.items() if us is not None)
        parents = [json.loads(text) for _, text in feasible[: max(2, self.population // 4)]]
        if not parents:
            parents = [default_point(self.space)]
        batch: list[Point] = []
        for _ in range(self.population * 30):
            if len(batch) >= self.population or len(self.seen) >= self.budget:
                break
            child = dict(self.rng.choice(parents))
            if len(parents) > 1 and self.rng.random() < 0.5:
                other = self.rng.choice(parents)
                child = {k: (v if self.rng.random() < 0.5 else other[k]) for k, v in child.items()}
            child = self._mutated(child)
            if self._new(child):
                batch.append(child)
        return batch


@dataclass
class _Kernel:
    """One distinct kernel being tuned."""

    key: str
    name: str
    unit: str
    text: str
    space: list[TilingParam]
    search: _Exhaustive | _Evolution | None
    scored: dict[str, float | None] = field(default_factory=dict)
    pending: list[Point] = field(default_factory=list)

    @property
    def default(self) -> Point:
        return default_point(self.space)

    def best(self) -> tuple[Point, float]:
        default = point_text(self.default)
        feasible = [
            (us, text != default, text) for text, us in self.scored.items() if us is not None
        ]
        if not feasible:
            raise RuntimeError(f"kernel @{self.name}: its default point is infeasible")
        us, _, text = min(feasible)
        return json.loads(text), us


def macro_kernels(module: ModuleOp) -> list[func.FuncOp]:
    """The kernels of a module after ``lower-graph-to-kernels`` (not tiled yet)."""
    return [
        f
        for f in module.ops
        if isinstance(f, func.FuncOp)
        and kernel_unit(f) is not None
        and TILES_ATTR not in f.attributes
    ]


def tune_kernels(
    module: ModuleOp,
    db: TuningDatabase,
    options: TuneOptions = TuneOptions(),
    progress: Progress | None = None,
) -> TuneResult:
    """Tune every macro kernel of ``module`` (after ``lower-graph-to-kernels``; see the
    module docstring), recording each candidate in ``db``."""
    progress = progress or Progress()
    target = target_of(module)
    hw = target.hw
    distinct: dict[str, _Kernel] = {}
    instances: list[tuple[func.FuncOp, str]] = []
    for fn in macro_kernels(module):
        key = kernel_key(fn, hw, target.precision)
        instances.append((fn, key))
        if key in distinct:
            continue
        space = kernel_space(fn, hw, target.precision) if kernel_unit(fn) != "host" else []
        size = space_size(space)
        search: _Exhaustive | _Evolution | None
        if not space:
            search = None
        elif size <= options.budget:
            search = _Exhaustive(space)
        else:
            search = _Evolution(space, options.budget, f"{options.seed}:{key}")
        name = fn.sym_name.data
        text = str(kernel_module(module, fn))
        distinct[key] = _Kernel(key, name, kernel_unit(fn) or "", text, space, search)
        db.add_kernel(key, f"@{name} ({kernel_unit(fn)})", default_point(space))
    for kernel in distinct.values():
        kernel.pending = kernel.search.first() if kernel.search is not None else [{}]
    counts = {"evaluated": 0, "reused": 0, "infeasible": 0}
    best_total = [math.inf]
    while any(k.pending for k in distinct.values()):
        _generation(list(distinct.values()), db, options, progress, counts, best_total)
        for kernel in distinct.values():
            kernel.pending = kernel.search.next(kernel.scored) if kernel.search is not None else []
    results = []
    points: dict[str, Point] = {}
    for fn, key in instances:
        kernel = distinct[key]
        name = fn.sym_name.data
        launches = max(1, len(launches_of(module, name)))
        best, best_us = kernel.best()
        default_us = kernel.scored[point_text(kernel.default)]
        assert default_us is not None
        points[name] = best
        results.append(
            KernelResult(
                name,
                key,
                kernel.unit,
                launches,
                launches * default_us,
                launches * best_us,
                best,
                kernel.default,
                space_size(kernel.space),
                len(kernel.scored),
                kernel.search.kind if kernel.search is not None else "none",
            )
        )
    return TuneResult(results, counts["evaluated"], counts["reused"], counts["infeasible"], points)


def _generation(
    kernels: list[_Kernel],
    db: TuningDatabase,
    options: TuneOptions,
    progress: Progress,
    counts: dict[str, int],
    best_total: list[float],
) -> None:
    """Score every kernel's pending points: from the database where it has them, else on
    the workers (each result committed as it arrives)."""
    tasks: list[KernelTask] = []
    owners: list[tuple[_Kernel, str]] = []
    progress.planned(sum(len(k.pending) for k in kernels))
    for kernel in kernels:
        known = db.candidates(kernel.key)
        for point in kernel.pending:
            text = point_text(point)
            if text in known:
                kernel.scored[text] = known[text].us
                counts["reused"] += 1
                progress.scored(True, _best_total(kernels, best_total))
                continue
            tasks.append(KernelTask(kernel.text, kernel.name, tuple(sorted(point.items()))))
            owners.append((kernel, text))

    def arrived(index: int, score: Score) -> None:
        kernel, text = owners[index]
        db.record(kernel.key, Candidate(json.loads(text), score.us, score.infeasible))
        kernel.scored[text] = score.us
        counts["evaluated"] += 1
        counts["infeasible"] += score.us is None
        progress.scored(False, _best_total(kernels, best_total))

    run_tasks(evaluate, tasks, workers=options.workers, ray=options.ray, on_result=arrived)


def _best_total(kernels: list[_Kernel], best_total: list[float]) -> float:
    """The sum of each distinct kernel's best score so far (a progress figure)."""
    total = 0.0
    for kernel in kernels:
        feasible = [us for us in kernel.scored.values() if us is not None]
        total += min(feasible) if feasible else 0.0
    best_total[0] = total
    return total


GRAPH_GRID: dict[str, tuple[Any, ...]] = {
    "strategy": ("ge", "naive"),
    "max_ops": (64, 16),
    "ub_percent": (100, 50),
    "disable": ("", "combine-parallel"),
}
"""O2's options the graph-level search tries (the first value of each: the default)."""


def graph_points(grid: Mapping[str, Sequence[Any]] = GRAPH_GRID) -> list[dict[str, Any]]:
    """Every point of the grid, the default (every first value) first."""
    names = list(grid)
    return [dict(zip(names, v, strict=True)) for v in itertools.product(*grid.values())]


def o2_spec(choice: Mapping[str, Any]) -> str:
    """The pipeline of a graph-level choice: ``O2`` with the options that differ from the
    defaults."""
    defaults = graph_points()[0]
    options = " ".join(
        f"{name.replace('_', '-')}={value}"
        for name, value in sorted(choice.items())
        if value != defaults.get(name)
    )
    return f"O2{{{options}}}" if options else "O2"


@dataclass(frozen=True)
class GraphTask:
    """One graph-level point: the model (a file, imported for ``inputs`` when its dims are
    dynamic), its target, and the pipeline to compile it with."""

    model: str
    inputs: tuple[tuple[str, np.ndarray], ...]
    platform: str
    precision: str
    pipeline: str


def load_static(model: str, inputs: Mapping[str, np.ndarray], platform: str, precision: str):
    """The model as a module with static shapes (imported for ``inputs`` when it needs
    them) on its pinned target, before any pass."""
    from tilegraph.runtime.binding import import_bound, needs_binding
    from tilegraph.runtime.compiled import load_model
    from tilegraph.target import pin_target

    module = load_model(model)
    if model.endswith(".onnx") and needs_binding(module):
        module = import_bound(model, inputs, static=True).module
    pin_target(module, "tilegraph-tune", platform, precision)
    return module


def compile_module(module: ModuleOp, pipeline: str, tune_db: str = "") -> ModuleOp:
    """``module`` (changed in place) after ``pipeline`` and the lowering (without the final
    synchronisation check)."""
    from tilegraph.passes.context import make_context
    from tilegraph.passes.pipelines import lowering_pipeline, run_pipeline

    ctx = make_context()
    run_pipeline(pipeline, ctx, module)
    run_pipeline(lowering_pipeline(verify_sync=False, tune_db=tune_db), ctx, module)
    return module


def graph_score(task: GraphTask) -> float:
    """The whole model's estimate (µs) at a graph-level point (a worker task)."""
    from tilegraph.cost_model.cycles import simulate_module

    module = load_static(task.model, dict(task.inputs), task.platform, task.precision)
    return simulate_module(compile_module(module, task.pipeline)).total_us


def tune_graph(
    model: str,
    inputs: Mapping[str, np.ndarray],
    platform: str,
    precision: str,
    db: TuningDatabase,
    options: TuneOptions,
    grid: Mapping[str, Sequence[Any]] = GRAPH_GRID,
    on_score: Callable[[], None] | None = None,
) -> tuple[str, dict[str, float], int]:
    """The best graph-level pipeline of the grid, the score of each, and how many were
    evaluated now (the rest came from ``db``, keyed by :func:`graph_key`)."""
    module = load_static(model, inputs, platform, precision)
    target = target_of(module)
    key = graph_key(str(module), target.hw, target.precision)
    known = db.graph_results(key)
    specs = [o2_spec(choice) for choice in graph_points(grid)]
    scores: dict[str, float] = {}
    todo = []
    for spec in specs:
        text = json.dumps({"pipeline": spec}, sort_keys=True)
        if text in known:
            scores[spec] = known[text]
            if on_score is not None:
                on_score()
        else:
            todo.append(spec)
    frozen = tuple(sorted(inputs.items()))
    tasks = [GraphTask(model, frozen, target.platform, target.precision, s) for s in todo]

    def arrived(index: int, us: float) -> None:
        db.record_graph(key, {"pipeline": todo[index]}, us)
        if on_score is not None:
            on_score()

    for spec, us in zip(
        todo,
        run_tasks(graph_score, tasks, workers=options.workers, ray=options.ray, on_result=arrived),
        strict=True,
    ):
        scores[spec] = us
    best = min(specs, key=lambda s: (scores[s], s != "O2"))
    return best, {s: scores[s] for s in specs}, len(todo)
