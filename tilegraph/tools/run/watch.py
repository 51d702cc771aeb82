"""How ``tilegraph-run`` watches :func:`tilegraph.compile`: :class:`CompileWatch` times
each stage, shows it on the progress display, collects the pipeline's statistics (and
checks every pass with ``--check-each-pass``) and the lowering's (its remarks: groups split,
host kernels) and counts the optimised graph; and
:class:`RunError`, the program's user-facing failure."""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from tilegraph.dialects.guards import module_guards
from tilegraph.passes.analysis import compute_op_count, fusion_summary, top_level_ops
from tilegraph.progress import task
from tilegraph.runtime.compiled import CompileHooks
from tilegraph.symbolic.inference import shape_env
from tilegraph.tools.run.progress import pass_observer


class RunError(Exception):
    """A user-facing failure of tilegraph-run (message complete, exit code 1)."""


class CompileWatch(CompileHooks):
    """tilegraph-run's view of :func:`tilegraph.compile`: each stage timed and shown on the
    progress display, the pipeline's statistics collected (and every pass checked with
    ``--check-each-pass``) under the bound model's shape env, the optimised graph counted."""

    def __init__(
        self, args: argparse.Namespace, inputs: Mapping[str, np.ndarray], env: Any
    ) -> None:
        self.args, self.inputs, self.env = args, inputs, env
        self.times: dict[str, float] = {}
        self.statistics: dict[str, dict[str, float | int]] = {}
        self.check_summary: str | None = None
        self.optimised_graph: dict[str, Any] = {}
        self.lowering_started: float | None = None
        self.lowering: dict[str, Any] | None = None

    @contextmanager
    def stage(self, name: str, module: ModuleOp) -> Iterator[None]:
        if name == "passes":
            with self._passes(module):
                yield
            return
        self.lowering_started = time.perf_counter()
        with self._lowering():
            yield

    @contextmanager
    def _passes(self, module: ModuleOp) -> Iterator[None]:
        from xdsl.utils.exceptions import DiagnosticException

        from tilegraph.passes.pipelines import observing_passes
        from tilegraph.passes.statistics import collecting_statistics
        from tilegraph.runtime.pass_check import PassChecker, PassCheckError

        pipeline = self.args.pipeline
        t0 = time.perf_counter()
        try:
            with ExitStack() as stack:
                stack.enter_context(shape_env(self.env))
                collector = stack.enter_context(collecting_statistics())
                progress = stack.enter_context(task(pipeline))
                stack.enter_context(observing_passes(pass_observer(progress, pipeline)))
                checker = None
                if self.args.check_each_pass:
                    args = self.args
                    checker = PassChecker(module, self.inputs, args.check_rtol, args.check_atol)
                    stack.enter_context(observing_passes(checker.after_pass))
                yield
                self.statistics = collector.as_dict()
                self.check_summary = checker.summary() if checker is not None else None
        except PassCheckError as e:
            raise RunError(f"check-each-pass: {e}") from None
        except (ValueError, DiagnosticException) as e:
            raise RunError(f"pipeline '{pipeline}': {e}") from None
        self.times["passes"] = time.perf_counter() - t0

    @contextmanager
    def _lowering(self) -> Iterator[None]:
        from tilegraph.lowering.conversion.graph_to_kernels import LoweringError
        from tilegraph.lowering.conversion.graph_to_kernels_remarks import lowering_section
        from tilegraph.passes.pipelines import observing_passes
        from tilegraph.passes.statistics import collecting_statistics

        label = "lowering to tiles"
        try:
            with (
                collecting_statistics() as collector,
                task(label) as progress,
                observing_passes(pass_observer(progress, label)),
            ):
                yield
            self.lowering = lowering_section(collector)
        except LoweringError:
            raise  # compile() runs the module on the reference interpreter instead
        except ValueError as e:
            raise RunError(f"tile lowering: {e}") from None

    def optimised(self, module: ModuleOp) -> None:
        self.optimised_graph = {
            "after_pipeline": compute_op_count(module),
            "by_type": dict(sorted(top_level_ops(module).items())),
            "fusion": fusion_summary(module).as_dict(),
            "guards": [str(g) for g in module_guards(module)],
        }

    def graph_report(self, imported_ops: int) -> dict[str, Any]:
        """The report's graph part: op counts (imported, after the pipeline, by type), the
        fusion summary, the pipeline's statistics and, once lowered, the ``lowering``
        section (:mod:`tilegraph.lowering.conversion.graph_to_kernels_remarks`)."""
        graph = self.optimised_graph
        return {
            "ops": {
                "imported": imported_ops,
                "after_pipeline": graph["after_pipeline"],
                "by_type": graph["by_type"],
            },
            "fusion": graph["fusion"],
            "statistics": self.statistics,
            **({"lowering": self.lowering} if self.lowering is not None else {}),
        }
