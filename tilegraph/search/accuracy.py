"""The accuracy search: a small keep-list that brings a reduced-precision model within tolerance.

Given a model, inputs and a precision mode that lowers the graph (default ``force_fp16``),
the reference is the model's own float32 run (``origin``). When the mode's outputs differ
from it by more than the tolerance, the search finds the nodes to keep in float32
(ATC's ``--keep_dtype`` by node name):

1. **bisection** over the candidate nodes in topological order (the ONNX nodes of the graph
   ops with a float32 result): the shortest prefix kept in float32 whose outputs meet the
   tolerance (the error is taken as monotone in the prefix: keeping more never hurts much);
2. **minimisation**, delta-debugging style: each kept node, last first, is dropped when the
   outputs still meet the tolerance without it (the result is 1-minimal: no single node can
   go).

Both run at graph level on the reference interpreter (``apply-precision`` then the graph
as imported: cheap); the result is then confirmed on the tiled fast executor (O2, the tile
lowering, the cycle model's preset), where the estimated µs of all-float32, all-reduced and
the keep-list are taken.

The error (:func:`relative_error`) is the largest absolute difference over all outputs,
divided by the largest magnitude of the float32 output it belongs to (so ``1e-2`` means
"within 1 % of the output's range"); a NaN or inf where the reference is finite is an
infinite error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from xdsl.dialects.builtin import ModuleOp

from tilegraph.target import precision_mode

Outputs = Sequence[np.ndarray]
ModelSource = str | Path | onnx.ModelProto


class AccuracySearchError(ValueError):
    """The search cannot run as asked (the message says why)."""


def relative_error(outputs: Outputs, reference: Outputs) -> float:
    """Max over outputs of ``max|out - ref| / max|ref|`` (``max|out - ref|`` where the
    reference is all zeros); ``inf`` for a non-finite value where the reference is finite."""
    worst = 0.0
    for out, ref in zip(outputs, reference, strict=True):
        o = np.asarray(out, np.float64)
        r = np.asarray(ref, np.float64)
        finite = np.isfinite(r)
        if np.any(~np.isfinite(o) & finite):
            return float("inf")
        if not finite.any():
            continue
        diff = np.abs(o[finite] - r[finite])
        scale = float(np.abs(r[finite]).max())
        worst = max(worst, float(diff.max(initial=0.0)) / (scale if scale > 0 else 1.0))
    return worst


def candidate_nodes(module: ModuleOp) -> list[str]:
    """The ONNX node names of the entry function's graph ops (constants aside) that have
    a float32 result, in program (topological) order, once each: what a keep-list can
    name."""
    from tilegraph.dialects.entry import entry_function
    from tilegraph.dialects.graph.base import GraphOp
    from tilegraph.dialects.graph.constant_ops import ConstantOp
    from tilegraph.dialects.graph.provenance import onnx_nodes
    from tilegraph.dialects.layout_type import TensorType
    from tilegraph.formats import DType

    names: list[str] = []
    for op in entry_function(module).body.block.ops:
        if not isinstance(op, GraphOp) or isinstance(op, ConstantOp):
            continue
        if not any(
            isinstance(r.type, TensorType) and r.type.dtype == DType.float32 for r in op.results
        ):
            continue
        for name in onnx_nodes(op.location):
            if name not in names:
                names.append(name)
    return names


@dataclass
class AccuracyReport:
    """What the search found, and the figures around it."""

    precision: str
    tolerance: float
    keep: list[str]
    candidates: int
    """How many nodes the keep-list could name."""
    evaluations: int
    """Graph-level runs the search made."""
    error: dict[str, float] = field(default_factory=dict)
    """Graph level: "fp32" (0), "reduced" (the mode alone), "keep" (the mode + keep-list)."""
    tiles_error: dict[str, float] = field(default_factory=dict)
    """The same on the tiled fast executor, against its own float32 run."""
    estimate_us: dict[str, float] = field(default_factory=dict)
    """The cycle model's µs of "fp32", "reduced" and "keep" (the model's total)."""
    kernel_us: dict[str, float] = field(default_factory=dict)
    """The same without launch overheads (the kernels' own time)."""

    def to_json(self) -> dict[str, object]:
        def clean(d: Mapping[str, float]) -> dict[str, float | None]:
            return {k: (v if np.isfinite(v) else None) for k, v in d.items()}

        return {
            "precision": self.precision,
            "tolerance": self.tolerance,
            "keep": self.keep,
            "keep_size": len(self.keep),
            "candidates": self.candidates,
            "evaluations": self.evaluations,
            "error": clean(self.error),
            "tiles_error": clean(self.tiles_error),
            "estimate_us": clean(self.estimate_us),
            "kernel_us": clean(self.kernel_us),
        }


class _GraphRuns:
    """Runs of one model at graph level under the precision and a keep-list, counted."""

    def __init__(self, module: ModuleOp, precision: str, inputs: Mapping[str, np.ndarray]):
        from tilegraph.runtime.compiled import compile as compile_model

        self.module, self.precision, self.inputs = module, precision, dict(inputs)
        self.evaluations = 0
        self._compile = compile_model
        self.reference = self.run("origin", ())

    def run(self, precision: str, keep: Sequence[str]) -> Outputs:
        model = self._compile(
            self.module.clone(),
            pipeline="",
            target="reference",
            precision=precision,
            keep_dtype=list(keep) or None,
        )
        return model(**self.inputs)

    def error(self, keep: Sequence[str]) -> float:
        self.evaluations += 1
        return relative_error(self.run(self.precision, keep), self.reference)


def bisect_prefix(nodes: Sequence[str], meets: Callable[[Sequence[str]], bool]) -> int:
    """The smallest ``k`` with ``meets(nodes[:k])`` (``meets(nodes)`` is assumed true),
    by bisection."""
    lo, hi = 0, len(nodes)  # meets(nodes[:hi]) holds; meets(nodes[:lo]) does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if meets(nodes[:mid]):
            hi = mid
        else:
            lo = mid
    return hi


def minimise(kept: Sequence[str], meets: Callable[[Sequence[str]], bool]) -> list[str]:
    """``kept`` without every node (tried last first) whose removal still ``meets``."""
    result = list(kept)
    for node in reversed(list(kept)):
        trial = [n for n in result if n != node]
        if meets(trial):
            result = trial
    return result


def search_keep_list(
    module: ModuleOp,
    inputs: Mapping[str, np.ndarray],
    precision: str = "force_fp16",
    tolerance: float = 1e-2,
) -> AccuracyReport:
    """The graph-level search (module docstring) on ``module`` (not modified)."""
    mode = precision_mode(precision)
    if not mode.graph_type:
        raise AccuracySearchError(
            f"precision '{precision}' does not lower the graph's types; choose force_fp16 or "
            "an allow_mix_precision mode"
        )
    if not tolerance > 0:
        raise AccuracySearchError(f"tolerance must be positive, got {tolerance}")
    runs = _GraphRuns(module, precision, inputs)
    nodes = candidate_nodes(module)
    report = AccuracyReport(precision, tolerance, [], len(nodes), 0)
    report.error["fp32"] = 0.0
    report.error["reduced"] = runs.error(())

    def meets(keep: Sequence[str]) -> bool:
        return runs.error(keep) <= tolerance

    if report.error["reduced"] > tolerance:
        if not meets(nodes):
            raise AccuracySearchError(
                "even with every node kept in float32 the outputs miss the tolerance "
                f"({runs.error(nodes):.3g} > {tolerance:g})"
            )
        prefix = bisect_prefix(nodes, meets)
        report.keep = minimise(nodes[:prefix], meets)
    report.error["keep"] = runs.error(report.keep)
    report.evaluations = runs.evaluations
    return report


def confirm_on_tiles(
    module: ModuleOp,
    inputs: Mapping[str, np.ndarray],
    report: AccuracyReport,
    platform: str = "",
) -> None:
    """Fill ``report``'s tiles errors and estimates: the model compiled with O2 to tiles
    for ``platform``, run on the fast executor, as float32, reduced, reduced + keep-list."""
    from tilegraph.cost_model.cycles import simulate_module
    from tilegraph.runtime.compiled import compile as compile_model

    configurations = {
        "fp32": ("origin", None),
        "reduced": (report.precision, None),
        "keep": (report.precision, report.keep or None),
    }
    outputs: dict[str, Outputs] = {}
    for name, (precision, keep) in configurations.items():
        model = compile_model(
            module.clone(), platform=platform, precision=precision, keep_dtype=keep
        )
        outputs[name] = model(**inputs)
        cycles = simulate_module(model.module)
        report.estimate_us[name] = cycles.total_us
        report.kernel_us[name] = cycles.kernel_us
    for name in configurations:
        report.tiles_error[name] = relative_error(outputs[name], outputs["fp32"])
