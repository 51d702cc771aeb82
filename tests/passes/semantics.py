"""Semantic checks for pass tests: a pass must not change what the reference interpreter
computes. Inputs are seeded random arrays; padding lanes hold NaN during the runs so that a
rewrite that starts reading padding shows up."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.runtime import run_reference
from tilegraph.tools.random_inputs import random_inputs

NAN = float("nan")


def seeded_inputs(module: ModuleOp, seed: int = 0) -> dict[str, np.ndarray]:
    return random_inputs(module, seed, {}, {})


def run_pipeline_checked(
    module: ModuleOp,
    pipeline: str,
    *,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    seed: int = 0,
    inputs: dict[str, np.ndarray] | None = None,
) -> ModuleOp:
    """Run ``pipeline`` on ``module`` in place, verify it, and assert that the reference
    outputs before and after agree (NaN where both are NaN)."""
    feed = inputs if inputs is not None else seeded_inputs(module, seed)
    before = run_reference(module, feed, pad_value=NAN)
    run_pipeline(pipeline, make_context(), module)
    module.verify()
    after = run_reference(module, feed, pad_value=NAN)
    assert len(before) == len(after)
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        assert a.shape == b.shape, f"output {i}: shape {a.shape} != {b.shape}"
        assert a.dtype == b.dtype, f"output {i}: dtype {a.dtype} != {b.dtype}"
        np.testing.assert_allclose(
            a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"output {i} after {pipeline}"
        )
    return module
