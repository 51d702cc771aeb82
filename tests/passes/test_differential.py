"""Differential testing: every pass, every rule alone, O1 and O2 leave what the reference
interpreter computes unchanged on random graphs (:mod:`tests.passes.random_graphs`).

fp32 tolerance rtol 1e-5 (atol 1e-5 for the BN folds' rounding); fast-math rules are held
to rtol 1e-3 where the unoptimised output is finite (they may turn inf * 0 into 0). NaN
fills padding lanes during every run. ``make test-all`` runs more examples (profile
``thorough``).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from xdsl.dialects.builtin import ModuleOp

from tests.passes.random_graphs import graphs
from tests.passes.semantics import seeded_inputs
from tilegraph.passes.algebraic_simplify import load_rule_modules
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.simplify.rule import SIMPLIFY_RULES
from tilegraph.runtime import run_reference

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
"""``make test-all``: more random graphs per test."""
NAN = float("nan")

load_rule_modules()
RULE_SPECS = [
    f"algebraic-simplify{{only={name} fast-math={'true' if cls.INFO.fast_math else 'false'}}}"
    for name, cls in SIMPLIFY_RULES.items()
]
PASS_SPECS = [
    "constant-fold",
    "algebraic-simplify",
    "algebraic-simplify{fast-math=true}",
    "fold-batchnorm",
    "cse",
    "dce",
    "fuse-ops",
    "fuse-ops{platform=test}",
    "format{strategy=ge}",
]


def check(module: ModuleOp, spec: str) -> None:
    fast = "fast-math=true" in spec
    inputs = seeded_inputs(module)
    before = run_reference(module, inputs, pad_value=NAN)
    run_pipeline(spec, make_context(), module)
    module.verify()
    after = run_reference(module, inputs, pad_value=NAN)
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        assert a.shape == b.shape and a.dtype == b.dtype, f"output {i} after {spec}"
        if fast:
            finite = np.isfinite(b)
            np.testing.assert_allclose(a[finite], b[finite], rtol=1e-3, atol=1e-4)
        else:
            np.testing.assert_allclose(
                a, b, rtol=1e-5, atol=1e-5, equal_nan=True, err_msg=f"output {i} after {spec}"
            )


@settings(max_examples=400 if THOROUGH else 60)
@given(graphs())
def test_o1_and_o2_preserve_outputs(module: ModuleOp):
    check(module.clone(), "O1")
    check(module, "O2")


@pytest.mark.parametrize("spec", PASS_SPECS + RULE_SPECS)
@settings(max_examples=24 if THOROUGH else 6)
@given(module=graphs())
def test_each_pass_and_rule_preserves_outputs(spec: str, module: ModuleOp):
    check(module, spec)
