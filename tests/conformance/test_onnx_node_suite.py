"""The ONNX backend node test suite through ``load_onnx`` + ``run_reference``.

Every case of ``onnx.backend.test.case.node.collect_testcases`` (generated from the installed
onnx) either passes or is refused for the reason the reviewed list
``tests/conformance/node_refusals.json`` gives it (case name -> the refusal's first line,
written by ``python benchmarks/onnx_node_suite.py --write-refusals``). A wrong output (onnx's
own comparison: the case's rtol/atol, 1e-3/1e-7 by default) or any other exception fails; so
does a refusal the list does not have (a regression, or an unreviewed reason), and a listed
case that now passes (the list is stale: rewrite it). Rules of a case: :mod:`tests.conformance.node_suite`.

Default run: every case whose model is at opset 22 or newer and uses only supported ops (the
cases the opset-22+ version mapping exists for) plus every 8th other case. The other cases
run under ``-m slow`` (``make test-all``). ``python benchmarks/onnx_node_suite.py`` prints the
counts per op and the refusal reasons.
"""

from __future__ import annotations

import pytest
from onnx.backend.test.case.test_case import TestCase

from tests.conformance.node_suite import (
    case_model,
    case_opset,
    load_refusals,
    node_cases,
    refusal_reason,
    run_case,
)
from tilegraph.frontend import supported_onnx_ops

NEWER_OPSETS = 22
SAMPLE_EVERY = 8

REFUSALS = load_refusals()

KNOWN_DEVIATIONS: dict[str, str] = {
    "test_attention_4d_causal_fp16_expanded": "fp16 MatMul accumulates in fp32 here (as the "
    "cube does, and onnxruntime); onnx's expected outputs come from numpy's fp16 matmul, "
    "which rounds as it accumulates: 2 of 192 outputs differ by one fp16 ulp (4.9e-4 at "
    "0.49), just past the case's rtol of 1e-3",
    "test_maxunpool_export_with_output_shape": "the expected output reads the indices in the "
    "4 x 4 shape kernel_shape/strides infer and zero-pads it to output_shape 5 x 5 (onnx's "
    "reference); the spec has the indices address the output (values in [0, N*C*D1*...*Dn) "
    "of output_shape), which is what MaxPool's Indices are and what onnxruntime computes "
    "(it fails this case too): 8 of 25 outputs sit elsewhere",
}
"""Cases whose outputs differ from onnx's expected ones for a reviewed reason (xfail)."""


def _uses_supported_ops(case: TestCase) -> bool:
    return {n.op_type for n in case_model(case).graph.node} <= supported_onnx_ops()


def _in_default_run(index: int, case: TestCase) -> bool:
    newer = case_opset(case) >= NEWER_OPSETS and _uses_supported_ops(case)
    return newer or index % SAMPLE_EVERY == 0


_DEFAULT = [c for i, c in enumerate(node_cases()) if _in_default_run(i, c)]
_REST = [c for i, c in enumerate(node_cases()) if not _in_default_run(i, c)]


def check_case(case: TestCase) -> None:
    result = run_case(case)
    listed = REFUSALS.get(case.name)
    if case.name in KNOWN_DEVIATIONS:
        if result.outcome != "failed":
            pytest.fail(f"{case.name} is listed as a known deviation but {result.outcome}")
        pytest.xfail(KNOWN_DEVIATIONS[case.name])
    if result.outcome == "failed":
        pytest.fail(f"{case.name} (opset {result.opset}): {result.message}", pytrace=False)
    if result.outcome == "passed":
        if listed is not None:
            pytest.fail(
                f"{case.name} passes now but node_refusals.json lists it ({listed}): "
                "rewrite the list (benchmarks/onnx_node_suite.py --write-refusals)",
                pytrace=False,
            )
        return
    reason = refusal_reason(result)
    if listed is None:
        pytest.fail(f"refused, and not in node_refusals.json: {reason}", pytrace=False)
    if reason != listed:
        pytest.fail(f"refused for another reason than listed: {reason} (listed: {listed})")
    pytest.skip(f"refused (listed): {reason}")


def test_the_refusal_list_names_existing_cases_only():
    names = {c.name for c in node_cases()}
    assert set(REFUSALS) <= names, sorted(set(REFUSALS) - names)[:5]


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
