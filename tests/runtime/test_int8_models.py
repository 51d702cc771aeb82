"""QDQ models made with onnxruntime's quantiser (:mod:`tests.zoo.quantized`) under
``--precision int8`` on ascend910b: no host op, every convolution an int8 cube op, both
executors against onnxruntime.

Tolerance: the outputs are DequantizeLinear(QuantizeLinear(y)), so a difference is a
whole number of output quantisation steps. onnxruntime runs the QDQ convolutions as
integer QLinearConv (int32 sums, one rounding), as the int8 cube does, so they agree
unless a float value lands on a rounding boundary of a QuantizeLinear. Measured (ORT
1.32): ``qdq_cnn`` matches exactly (max |diff| 0 on data sets of batch 1 and 2, four
seeds, both executors); the QDQ ResNet-50 differs by at most one step (0.00787) in 10 of
its 1000 outputs (fast executor). The tests allow one step.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper

from tests.zoo.quantized import qdq_model_path
from tilegraph.cost_model.kernel_report import kernel_report
from tilegraph.runtime.compiled import compile

QCONV = "graph.quant_conv2d"


def _output_step(path: str) -> float:
    """The scale of the QuantizeLinear in front of the model's (single) output."""
    model = onnx.load(path)
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    (out,) = [n for n in model.graph.node if n.output[0] == model.graph.output[0].name]
    return float(inits[out.input[1]])


def _onnxruntime(path: str, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, {session.get_inputs()[0].name: x})[0])


def _quant_convs(compiled) -> int:
    return sum(k.ops.count(QCONV) for k in kernel_report(compiled.module) if k.unit != "host")


@pytest.mark.parametrize("executor", ["fast", "interpret"])
def test_qdq_cnn_runs_on_the_int8_cube(executor: str):
    path = str(qdq_model_path("qdq_cnn"))
    compiled = compile(path, platform="ascend910b", precision="int8", executor=executor)
    step = _output_step(path)
    for batch in (1, 2):  # a dynamic batch: compiled per shape, on the first call
        x = np.random.default_rng(batch).standard_normal((batch, 3, 16, 16)).astype(np.float32)
        ours = np.asarray(compiled(x)[0])
        np.testing.assert_allclose(ours, _onnxruntime(path, x), rtol=0, atol=step * 1.001)
        assert compiled.host_ops == []
        assert _quant_convs(compiled) == 3


def test_other_precisions_keep_the_float_convolutions():
    """Under origin the QDQ model runs as today: float convolutions, Q/DQ on the vector unit."""
    compiled = compile(str(qdq_model_path("qdq_cnn")), platform="ascend910b")
    compiled(np.zeros((1, 3, 16, 16), np.float32))
    assert compiled.kernels and _quant_convs(compiled) == 0
    assert compiled.host_ops == []


@pytest.mark.slow
def test_qdq_resnet50_runs_on_the_int8_cube():
    """53 int8 convolutions, no host op; about 40 s (the fast executor on a shared CPU)."""
    path = str(qdq_model_path("resnet50"))
    compiled = compile(path, platform="ascend910b", precision="int8")
    assert compiled.host_ops == []
    assert _quant_convs(compiled) == 53
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    ours = np.asarray(compiled(x)[0])
    step = _output_step(path)
    np.testing.assert_allclose(ours, _onnxruntime(path, x), rtol=0, atol=step * 1.001)
