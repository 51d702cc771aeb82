"""Per-pass semantic checking: which pass changed what the model computes?

A :class:`PassChecker` runs the reference interpreter on fixed inputs before a pipeline and
again after every pass it is shown (``tilegraph-opt`` / ``tilegraph-run
--check-each-pass``). Padding lanes hold NaN during every run, so a pass that makes a kernel
read padding shows up as well. The first pass whose outputs move beyond the tolerance
raises :class:`PassCheckError` naming it, the output and the largest difference; a pass
after which the model no longer runs is reported the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilegraph.dialects.entry import entry_function, output_names
from tilegraph.formats import is_ml_dtypes, is_ml_dtypes_float
from tilegraph.runtime.reference import run_reference

NAN = float("nan")


class PassCheckError(Exception):
    """A pass changed the model's outputs (the message names the pass and the output)."""


def pass_label(p: ModulePass) -> str:
    """The pass as it would be written in a pipeline (options included)."""
    try:
        return str(p.pipeline_pass_spec())
    except Exception:  # a pass whose options cannot be printed still has a name
        return p.name


@dataclass
class PassChecker:
    """Compares the module's reference outputs after each pass with those before."""

    module: ModuleOp
    inputs: Mapping[str, np.ndarray]
    rtol: float = 1e-5
    atol: float = 1e-6
    baseline: list[np.ndarray] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    checked: int = 0
    largest: tuple[float, str] = (0.0, "")
    """The largest difference seen within tolerance, and the pass after which it was."""

    def __post_init__(self) -> None:
        self.names = output_names(entry_function(self.module))
        self.baseline = [np.asarray(o) for o in self._run("before the pipeline")]

    def _run(self, when: str) -> list[np.ndarray]:
        try:
            return run_reference(self.module, self.inputs, pad_value=NAN)
        except Exception as e:
            raise PassCheckError(f"the model does not run {when}: {e}") from None

    def after_pass(self, p: ModulePass, module: ModuleOp) -> None:
        """Observer for :func:`tilegraph.passes.pipelines.observing_passes`."""
        label = pass_label(p)
        outputs = self._run(f"after pass '{label}'")
        for name, before, after in zip(self.names, self.baseline, outputs, strict=True):
            after = np.asarray(after)
            if after.shape != before.shape or after.dtype != before.dtype:
                raise PassCheckError(
                    f"pass '{label}' changed output '{name}' from {before.dtype}"
                    f"{list(before.shape)} to {after.dtype}{list(after.shape)}"
                )
            diff = _largest_difference(before, after)
            if not _within(before, after, self.rtol, self.atol):
                raise PassCheckError(
                    f"pass '{label}' changed output '{name}': largest difference {diff:.3g} "
                    f"(rtol {self.rtol:g}, atol {self.atol:g}; {self.checked} passes before "
                    "it kept the outputs)"
                )
            if diff > self.largest[0]:
                self.largest = (diff, label)
        self.checked += 1

    def summary(self) -> str:
        diff, label = self.largest
        where = f", largest difference {diff:.3g} after '{label}'" if label else ""
        return f"check-each-pass: {self.checked} passes checked, outputs unchanged{where}"


def _within(before: np.ndarray, after: np.ndarray, rtol: float, atol: float) -> bool:
    """Floats (bfloat16 and float8 too) within the tolerance, anything else equal."""
    if is_ml_dtypes_float(before.dtype):
        before, after = before.astype(np.float64), after.astype(np.float64)
    if before.dtype.kind not in "fc":
        return bool(np.array_equal(before, after))
    return bool(np.allclose(after, before, rtol=rtol, atol=atol, equal_nan=True))


def _largest_difference(before: np.ndarray, after: np.ndarray) -> float:
    """max |after - before| where both are numbers; inf where exactly one is NaN."""
    numeric = before.dtype.kind in "fiub" or is_ml_dtypes(before.dtype)
    if not numeric or before.size == 0:
        return 0.0 if np.array_equal(before, after) else float("inf")
    a = before.astype(np.float64)
    b = after.astype(np.float64)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if np.any(nan_a != nan_b):
        return float("inf")
    both = ~nan_a
    if not np.any(both):
        return 0.0
    with np.errstate(invalid="ignore"):
        d = np.abs(a[both] - b[both])
    d = np.where(np.isnan(d), 0.0, d)  # inf - inf of equal infinities
    return float(d.max())
