"""The ONNX backend node test suite through ``load_onnx`` + ``run_reference``.

Each case of ``onnx.backend.test.case.node.collect_testcases`` (generated from the installed
onnx) passes, or is *refused* — ``load_onnx`` raised ``OnnxImportError`` — and then skipped
with the refusal as the reason. A wrong output (onnx's own comparison: the case's rtol/atol,
1e-3/1e-7 by default) or any other exception fails the test (rules in
:mod:`tilegraph.tools.node_suite`).

Default run: every case whose model is at opset 22 or newer and uses only supported ops (the
cases the opset-22+ version mapping exists for) plus every 8th other case; such an opset-22+
case may only be refused for one of the reviewed reasons in ``ALLOWED_REFUSALS``. The other
cases run under ``-m slow`` (``make test-all``). ``python benchmarks/onnx_node_suite.py``
prints the counts per op and the refusal reasons.
"""

from __future__ import annotations

import re

import pytest
from onnx.backend.test.case.test_case import TestCase

from tilegraph.frontend import supported_onnx_ops
from tilegraph.tools.node_suite import case_model, case_opset, node_cases, run_case

NEWER_OPSETS = 22
SAMPLE_EVERY = 8

ALLOWED_REFUSALS: dict[str, str] = {
    r"unsupported ONNX data type": "element type the graph dialect has no type for "
    "(float8, float4, float6, int2, uint4, string)",
    r"unsupported attribute '(saturate|round_mode)'": "float8 conversion attributes of a Cast "
    "to float8 (no float8 element type)",
    r"output #\d+ \('[^']*'\) is used, but graph\.\w+ produces": "optional output the graph "
    "op does not model (Dropout mask, MaxPool indices)",
    r"input 'training_mode' is computed at run time": "training-mode Dropout (inference only)",
    r"is not a tensor": "sequence-typed graph input",
}
"""Reviewed reasons an opset-22+ case of supported ops may be refused for (regex -> why)."""


def _uses_supported_ops(case: TestCase) -> bool:
    return {n.op_type for n in case_model(case).graph.node} <= supported_onnx_ops()


def _in_default_run(index: int, case: TestCase) -> bool:
    newer = case_opset(case) >= NEWER_OPSETS and _uses_supported_ops(case)
    return newer or index % SAMPLE_EVERY == 0


_DEFAULT = [c for i, c in enumerate(node_cases()) if _in_default_run(i, c)]
_REST = [c for i, c in enumerate(node_cases()) if not _in_default_run(i, c)]


def check_case(case: TestCase) -> None:
    result = run_case(case)
    if result.outcome == "failed":
        pytest.fail(f"{case.name} (opset {result.opset}): {result.message}", pytrace=False)
    if result.outcome == "refused":
        if case_opset(case) >= NEWER_OPSETS and _uses_supported_ops(case):
            if not any(re.search(p, result.message) for p in ALLOWED_REFUSALS):
                pytest.fail(f"refused for an unreviewed reason: {result.message}", pytrace=False)
        pytest.skip(f"refused: {result.message.splitlines()[0]}")


@pytest.mark.parametrize("case", _DEFAULT, ids=lambda c: c.name)
def test_node_case(case: TestCase):
    check_case(case)


@pytest.mark.slow
@pytest.mark.parametrize("case", _REST, ids=lambda c: c.name)
def test_node_case_slow(case: TestCase):
    check_case(case)


def test_default_run_covers_the_newer_opsets():
    """The version mapping is exercised: most opset-22+ cases of supported ops pass."""
    newer = [c for c in _DEFAULT if case_opset(c) >= NEWER_OPSETS and _uses_supported_ops(c)]
    passed = [c for c in newer if run_case(c).outcome == "passed"]
    assert len(newer) > 200
    assert len(passed) > 0.6 * len(newer)
