"""The nine ``light`` topologies with random weights: tilegraph == onnxruntime.

The shipped outputs are degenerate (every weight is 0.02), so
:func:`tilegraph.frontend.light_models.light_model` replaces the ConstantOfShape-made weights
with seeded random values and the oracle is onnxruntime on the same modified model
(converted to opset 17 first, as ORT lacks kernels for some old ops). Batch 1, fp32; as
imported, after O1 and after O2.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from tilegraph.dialects.entry import entry_function, input_names
from tilegraph.frontend import load_onnx
from tilegraph.frontend.light_models import LIGHT_MODELS, light_model
from tilegraph.frontend.onnxruntime_oracle import onnxruntime_outputs
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.runtime import run_reference

# The three large-weight models (VGG-19, ZFNet, AlexNet: 10-40 s each, mostly weight
# handling) run only in `make test-all`.
_SLOW = ("vgg19", "zfnet512", "bvlc_alexnet")
CASES = [
    pytest.param(name, pipeline, marks=pytest.mark.slow)
    if name in _SLOW
    else pytest.param(name, pipeline)
    for name in LIGHT_MODELS
    for pipeline in ("", "O1", "O2")
]


@pytest.mark.parametrize(("name", "pipeline"), CASES)
def test_light_model_matches_onnxruntime(name, pipeline, tmp_path):
    model = light_model(name, seed=0)
    module = load_onnx(model)
    run_pipeline(pipeline, make_context(), module)
    fn = entry_function(module)
    rng = np.random.default_rng(1)
    inputs = {
        n: rng.standard_normal(t.origin_shape).astype(np.float32)
        for n, t in zip(input_names(fn), fn.function_type.inputs.data, strict=True)
    }
    ours = run_reference(module, inputs)
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    theirs = onnxruntime_outputs(str(path), inputs)
    for got, want in zip(ours, theirs, strict=True):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)
        # the outputs are probabilities around 1e-3: also hold them to a tight absolute bound
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-6)


PLATFORMS = ("ascend910b", "ascend310p", "test")
"""910B's decoupled cores (mix kernels, 1 AIC : 2 AIV), 310P's coupled ones, and the ``test``
preset (16 KiB L1, 8 KiB UB): there convolutions and poolings tile in width tiles and C1
chunks, and the reductions whose reduced axes do not fit its UB (a softmax over 1000
classes, SqueezeNet's global average pool over 13 x 13 per channel block) loop over chunks
of them. A light model compiles in tens of seconds to minutes on ``test`` (many small
tiles), so those cases run only in ``make test-all``."""
_NOT_YET = {("bvlc_alexnet", "test"): "a convolution with no tile that fits test's buffers"}
"""Known failures on the tiles: (model, platform) -> why."""
TILE_CASES = [
    pytest.param(
        name,
        executor,
        platform,
        marks=[pytest.mark.slow, pytest.mark.xfail(reason=_NOT_YET[name, platform])],
    )
    if (name, platform) in _NOT_YET
    else pytest.param(name, executor, platform, marks=pytest.mark.slow)
    if name in _SLOW
    or platform == "test"
    or (executor == "interpret" and name not in ("resnet50", "squeezenet"))
    or (platform != "ascend910b" and name != "squeezenet")
    else pytest.param(name, executor, platform)
    for name in LIGHT_MODELS
    for executor in ("fast", "interpret")
    for platform in PLATFORMS
]
ALLOWED_ON_HOST: set[str] = set()
"""Ops of the light models that may stay on the host: none (LRN runs on the vector unit)."""


@pytest.mark.parametrize(("name", "executor", "platform"), TILE_CASES)
def test_light_model_on_tiles_matches_onnxruntime(name, executor, platform, tmp_path):
    """O2, lowered to cube / vector kernels for each preset, run by each tile executor (the
    pipe-queue checker, verify-sync, runs in the compile): onnxruntime's numbers at fp32
    rtol 1e-4, and nothing on the host. The default run covers every model on ascend910b
    with the fast executor and SqueezeNet on ascend910b and ascend310p; ``make test-all``
    the rest (every case on ``test``)."""
    import tilegraph

    model = light_model(name, seed=0)
    compiled = tilegraph.compile(model, platform=platform, executor=executor)
    on_host = {op["op"] for op in compiled.host_ops}
    assert on_host <= ALLOWED_ON_HOST, compiled.host_ops
    assert any(k.unit == "cube" for k in compiled.kernels)
    rng = np.random.default_rng(1)
    fn_inputs = entry_function(load_onnx(model)).function_type.inputs.data
    inputs = {
        n: rng.standard_normal(t.origin_shape).astype(np.float32)
        for n, t in zip(compiled.input_names, fn_inputs, strict=True)
    }
    ours = compiled(**inputs)
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    theirs = onnxruntime_outputs(str(path), inputs)
    for got, want in zip(ours, theirs, strict=True):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-7)


def test_random_weights_are_not_degenerate():
    """The replacement really happened: weights differ and outputs are not constant."""
    model = light_model("squeezenet", seed=0)
    assert not any(n.op_type == "ConstantOfShape" for n in model.graph.node)
    module = load_onnx(model)
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    (y,) = run_reference(module, [x])
    assert np.std(y) > 1e-4
