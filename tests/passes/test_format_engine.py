"""The format engine end to end: conversions per strategy, and semantics preserved.

Semantics: the reference interpreter gives the same outputs after ``format{strategy=...}``
as before it (rtol 1e-4, fp32), with the padding lanes of every padded storage tensor filled
with NaN during the check, so a kernel that reads padding would show up as NaN.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.conformance.test_onnx_backend_data import SKIPPED, cases, shipped_data
from tilegraph.dialects.entry import entry_function, input_names
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_storage import padding_mask
from tilegraph.frontend import load_onnx
from tilegraph.frontend.light_models import LIGHT_MODELS, light_model
from tilegraph.passes.context import make_context, parse_mlir
from tilegraph.passes.format_report import format_report
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.registry import tilegraph_passes
from tilegraph.runtime import run_reference

STRATEGIES = ["naive", "ge", "optimal"]
NAN = float("nan")

SEED = Path(__file__).parents[1] / "filecheck" / "passes" / "format_seed.mlir"


def compile_format(module, strategy: str, platform: str = "ascend910b"):
    if strategy == "optimal" and "select-storage-format" in tilegraph_passes():
        pytest.importorskip("scipy")
    run_pipeline(f"format{{strategy={strategy} platform={platform}}}", make_context(), module)
    module.verify()
    return module


@pytest.mark.parametrize(("strategy", "expected"), [("naive", 4), ("ge", 2), ("optimal", 2)])
def test_seed_example_conversion_counts(strategy, expected):
    module = compile_format(parse_mlir(SEED.read_text()), strategy)
    report = format_report(module)["seed"]
    assert report["activations"] == expected
    assert report["constants"] == 0  # weights folded: stored as FRACTAL_Z / NC1HWC0


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_seed_example_semantics_with_nan_padding(strategy):
    original = parse_mlir(SEED.read_text())
    x = np.random.default_rng(0).standard_normal((1, 16, 8, 8)).astype(np.float32)
    (want,) = run_reference(original, [x])
    compiled = compile_format(parse_mlir(SEED.read_text()), strategy)
    (got,) = run_reference(compiled, [x], pad_value=NAN)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


def test_nan_padding_is_really_there():
    """The check would catch a padding read: the NC1HWC0 values carry NaN in padding."""
    compiled = compile_format(
        parse_mlir(
            SEED.read_text()
            .replace("1x16x", "1x12x")
            .replace("16x16x3x3", "12x12x3x3")
            .replace("16xf32", "12xf32")
        ),
        "ge",
    )
    from xdsl.interpreter import Interpreter
    from xdsl.interpreters.func import FuncFunctions

    from tilegraph.runtime.interpreter import GraphFunctions, LayoutFunctions

    interp = Interpreter(compiled)
    for f in (FuncFunctions(), GraphFunctions(NAN), LayoutFunctions(NAN)):
        interp.register_implementations(f)
    fn = entry_function(compiled)
    first = next(op for op in fn.body.block.ops if isinstance(op, TransDataOp))
    (stored,) = interp.run_op(first, (np.ones((1, 12, 8, 8), np.float32),))
    mask = padding_mask(first.output.type)
    assert mask is not None and mask.sum() == 4 * 8 * 8  # C = 12 padded to 16
    assert np.isnan(stored[mask]).all() and not np.isnan(stored[~mask]).any()


def test_platform_ascend950_changes_fp32_storage():
    module = compile_format(parse_mlir(SEED.read_text()), "ge", platform="ascend950")
    storage = [op.output.type for op in module.walk() if isinstance(op, TransDataOp)]
    assert storage and all(t.storage_format.value != "NC1HWC0" or t.c0.data == 8 for t in storage)
    first = next(op for op in module.walk() if isinstance(op, TransDataOp))
    assert first.output.type.storage_shape == (1, 2, 8, 8, 8)  # C0 = 8 on ascend950


def _conformance_cases():
    return [c for c in cases() if c.name not in SKIPPED]


def _flat(values: list) -> list[np.ndarray]:
    """Outputs with sequences spread out into their tensors."""
    return [np.asarray(t) for v in values for t in (v if isinstance(v, list) else [v])]


@pytest.mark.parametrize(
    "strategy",
    # ge by default (the pipelines' strategy); naive and optimal in `make test-all`.
    [s if s == "ge" else pytest.param(s, marks=pytest.mark.slow) for s in STRATEGIES],
)
def test_conformance_cases_keep_their_outputs(strategy):
    failures = []
    for case in _conformance_cases():
        inputs, _ = shipped_data(case)
        module = load_onnx(case / "model.onnx")
        want = run_reference(module, inputs)
        compile_format(module, strategy)
        got = run_reference(module, inputs, pad_value=NAN)
        for g, w in zip(_flat(got), _flat(want), strict=True):
            if g.shape != w.shape or not np.allclose(g, w, rtol=1e-4, atol=1e-6, equal_nan=True):
                failures.append(case.name)
    assert not failures, f"{strategy}: outputs changed for {failures}"


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.slow)
        if n in ("vgg19", "zfnet512", "bvlc_alexnet")  # large weights: `make test-all`
        else n
        for n in LIGHT_MODELS
    ],
)
def test_light_models_keep_their_outputs_and_strategies_are_ordered(name):
    model = light_model(name)
    base = load_onnx(model)
    fn = entry_function(base)
    rng = np.random.default_rng(0)
    inputs = {
        n: rng.standard_normal(t.origin_shape).astype(np.float32)
        for n, t in zip(input_names(fn), fn.function_type.inputs.data, strict=True)
    }
    (want,) = run_reference(base, inputs)
    moved = {}
    for strategy in STRATEGIES:
        module = compile_format(load_onnx(model), strategy)
        (got,) = run_reference(module, inputs, pad_value=NAN)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-7)
        moved[strategy] = format_report(module)["main"]["activation_bytes"]
        if strategy == "optimal":
            attrs = entry_function(module).attributes
            cost = attrs["layout.optimal_cost"].value.data
            bound = attrs["layout.optimal_bound"].value.data
            assert cost <= bound + 1  # certificate: no plan is cheaper than this one
            assert moved["optimal"] == cost
    assert moved["optimal"] <= moved["ge"] <= moved["naive"]
