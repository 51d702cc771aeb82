"""``qdq_gcnn_dynamic`` (``quantize_dynamic`` of a small CNN of grouped and depthwise
convolutions, :mod:`tests.zoo.quantized`) under ``--precision int8``: every ConvInteger,
the three grouped + padded ones with DynamicQuantizeLinear's run-time uint8 zero point
included, folds onto the int8 cube (``fold-integer-ops``), no op is left on the host, and
the output agrees with onnxruntime within float32 rounding (the average pool's sum and the
scale products, added in another order)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from tests.zoo.quantized import qdq_model_path
from tilegraph.cost_model.kernel_report import kernel_report
from tilegraph.runtime.compiled import compile


@pytest.mark.parametrize("executor", ["fast", "interpret"])
@pytest.mark.parametrize("platform", ["test", "ascend910b", "ascend310p"])
def test_dynamic_grouped_cnn_runs_on_the_int8_cube(platform: str, executor: str):
    path = str(qdq_model_path("qdq_gcnn_dynamic"))
    compiled = compile(path, platform=platform, precision="int8", executor=executor)
    x = np.random.default_rng(5).standard_normal((2, 3, 16, 16)).astype(np.float32)
    (ours,) = [np.asarray(a) for a in compiled(x)]
    assert compiled.host_ops == []
    convs = sum(
        k.ops.count("graph.quant_conv2d")
        for k in kernel_report(compiled.module)
        if k.unit != "host"
    )
    assert convs == 6
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    theirs = np.asarray(session.run(None, {session.get_inputs()[0].name: x})[0])
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-5)
