"""Named pipelines, usable as ``-p O1`` from the tools and from Python.

A pipeline is a pass whose ``apply`` runs a pipeline string, so pipelines nest, take part
in ``--print-between-passes``-style tooling as one step, and can grow without changing how
they are called. The pipelines track the passes that exist: each docstring says what runs.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline

from tilegraph.passes.fingerprint import module_fingerprint
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import start_pass
from tilegraph.target import target_of

PassObserver = Callable[[ModulePass, ModuleOp], None]
"""Called after every leaf pass (not after the pipelines that contain it) with the module."""

_OBSERVERS: ContextVar[tuple[PassObserver, ...]] = ContextVar(
    "tilegraph_pass_observers", default=()
)


@contextmanager
def observing_passes(observer: PassObserver) -> Iterator[None]:
    """Call ``observer(pass, module)`` after every leaf pass that :func:`run_pipeline` runs
    inside the ``with`` block, nested pipelines included (``--check-each-pass`` uses this)."""
    token = _OBSERVERS.set((*_OBSERVERS.get(), observer))
    try:
        yield
    finally:
        _OBSERVERS.reset(token)


def _notify(previous: ModulePass | None, module: ModuleOp, _next: ModulePass | None) -> None:
    if previous is None or isinstance(previous, PipelinePass):
        return
    for observer in _OBSERVERS.get():
        observer(previous, module)


def run_pipeline(spec: str, ctx: Context, module: ModuleOp) -> None:
    """Run a pipeline string (``"infer-shapes,cse"``) with every registered pass available.

    The cyclic garbage collector is paused while the outermost pipeline runs: IR objects
    point at their parents, so every full collection rescans the whole module, which made
    the passes' time per op grow with the model (1.3-2.2x from 1k to 10k ops); with the
    pause they are linear. What the passes drop is collected when the pipeline ends.
    """
    if not spec:
        return
    from tilegraph.passes.registry import all_passes

    pipeline = PassPipeline.parse_spec(all_passes(), spec, _notify)
    target_of(module)  # a malformed tilegraph.target is reported before any pass runs
    with _collector_paused():
        pipeline.apply(ctx, module)


@contextmanager
def _collector_paused() -> Iterator[None]:
    if not gc.isenabled():  # nested pipeline, or the caller manages the collector
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()


class PipelinePass(ModulePass):
    """A pass that only runs other passes (observers see its leaves, not it)."""


@dataclass(frozen=True)
class NamedPipeline(PipelinePass):
    """Base of named pipelines: ``SPEC`` is the pipeline string it runs."""

    SPEC: ClassVar[str] = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        run_pipeline(self.SPEC, ctx, op)


@register_pass
@dataclass(frozen=True)
class O0Pipeline(NamedPipeline):
    """O0: import only, no transformation."""

    name = "O0"
    SPEC = ""


SIMPLIFY_ROUND = "infer-shapes,constant-fold,algebraic-simplify,fold-batchnorm,cse,dce"
"""One round of O1's simplification; O1 repeats it until nothing changes."""


@register_pass
@dataclass(frozen=True)
class O1Pipeline(PipelinePass):
    """O1: simplify — infer-shapes, constant-fold, algebraic-simplify, fold-batchnorm, cse,
    dce, repeated to a fixpoint.

    A round that leaves the module unchanged (same :func:`module_fingerprint`) ends the
    loop; ``max-rounds`` bounds it. Statistics: ``rounds``.
    """

    name = "O1"

    max_rounds: int = 4

    def __post_init__(self) -> None:
        if self.max_rounds < 1:
            raise ValueError(f"O1: max-rounds must be at least 1, got {self.max_rounds}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        for _ in range(self.max_rounds):
            before = module_fingerprint(op)
            run_pipeline(SIMPLIFY_ROUND, ctx, op)
            stats.add("rounds")
            if module_fingerprint(op) == before:
                return


@register_pass
@dataclass(frozen=True)
class O2Pipeline(NamedPipeline):
    """O2: everything — O1, then the format engine with GE's strategy, then fuse-ops."""

    name = "O2"
    SPEC = "O1,format{strategy=ge},fuse-ops"


@register_pass
@dataclass(frozen=True)
class FormatPipeline(PipelinePass):
    """format: the whole format engine (origin inference ... fold), then format-report."""

    name = "format"

    strategy: str = "ge"
    platform: str = ""
    """Preset name; empty: the module's target (:mod:`tilegraph.target`)."""
    time_limit: float = 60.0

    def spec(self) -> str:
        platform = f" platform={self.platform}" if self.platform else ""
        select = (
            f"select-storage-format{{strategy={self.strategy}{platform} "
            f"time-limit={self.time_limit}}}"
        )
        return (
            f"infer-origin-format,{select},insert-trans-data,cancel-trans-data,"
            "fold-trans-data,dce,format-report"
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        run_pipeline(self.spec(), ctx, op)
