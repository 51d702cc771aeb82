"""``fold-qdq`` (:mod:`tilegraph.passes.fold_qdq`): which QDQ convolutions become
``graph.quant_conv2d`` under the ``int8`` precision, that nothing changes under the
others, that a model without Q/DQ is refused, and that the folded graph computes what the
QDQ graph does (onnxruntime, which runs it as an integer QLinearConv)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from tilegraph.frontend import load_onnx
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.statistics import collecting_statistics
from tilegraph.runtime.reference import run_reference

X_SCALE = np.float32(0.05)


def qdq_conv(
    x_zero: int = 0, bias_scale_factor: float = 1.0, per_tensor: bool = False, pads: int = 1
) -> onnx.ModelProto:
    """Q -> DQ -> Conv(DQ(int8 w), DQ(int32 b)) on a [1, 20, 7, 7] input: onnxruntime's QDQ
    pattern, with the data's zero point and the bias scale (``bias_scale_factor`` x the
    product of the scales) as given."""
    rng = np.random.default_rng(0)
    m = 24
    w = rng.integers(-127, 128, (m, 20, 3, 3)).astype(np.int8)
    w_scale = (rng.uniform(0.5, 1.5, 1 if per_tensor else m) * 0.01).astype(np.float32)
    bias_scale = (X_SCALE * np.broadcast_to(w_scale, (m,)) * bias_scale_factor).astype(np.float32)
    arrays = {
        "w": w,
        "w_scale": w_scale if not per_tensor else w_scale.reshape(()),
        "w_zero": np.zeros(w_scale.shape, np.int8).reshape(w_scale.shape if not per_tensor else ()),
        "x_scale": np.array(X_SCALE),
        "x_zero": np.array(x_zero, np.int8),
        "b": rng.integers(-3000, 3000, m).astype(np.int32),
        "b_scale": bias_scale,
        "b_zero": np.zeros(m, np.int32),
    }
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zero"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zero"], ["wd"], axis=0),
        helper.make_node("DequantizeLinear", ["b", "b_scale", "b_zero"], ["bd"], axis=0),
        helper.make_node("Conv", ["xd", "wd", "bd"], ["y"], kernel_shape=[3, 3], pads=[pads] * 4),
    ]
    graph = helper.make_graph(
        nodes,
        "qdq_conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 20, 7, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(a, n) for n, a in arrays.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _optimised(model: onnx.ModelProto, precision: str):
    module = load_onnx(model)
    with collecting_statistics() as stats:
        run_pipeline(
            f"set-target{{platform=ascend910b precision={precision}}},O2", make_context(), module
        )
    names = [op.name for op in module.walk()]
    return module, names, stats


def test_int8_folds_the_qdq_convolution_and_matches_onnxruntime():
    model = qdq_conv()
    module, names, stats = _optimised(model, "int8")
    assert names.count("graph.quant_conv2d") == 1 and "graph.conv2d" not in names
    assert stats.for_pass("fold-qdq").counters.get("folded-convs") == 1
    x = np.random.default_rng(1).standard_normal((1, 20, 7, 7)).astype(np.float32)
    (ours,) = run_reference(module, [x])
    theirs = np.asarray(ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0])
    # onnxruntime's float conv of the dequantised values rounds every partial sum; the int8
    # cube's sum is exact and rounded once: a few ulp apart
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_a_per_tensor_weight_scale_folds_too():
    _, names, _ = _optimised(qdq_conv(per_tensor=True), "int8")
    assert "graph.quant_conv2d" in names


@pytest.mark.parametrize("precision", ["origin", "fp16", "bf16"])
def test_other_precisions_change_nothing(precision: str):
    _, names, _ = _optimised(qdq_conv(), precision)
    assert "graph.quant_conv2d" not in names and "graph.conv2d" in names


@pytest.mark.parametrize(
    "model",
    [qdq_conv(x_zero=3), qdq_conv(bias_scale_factor=1.5)],
    ids=["data_zero_point_3", "bias_scale_not_the_product"],
)
def test_what_does_not_fit_keeps_the_float_path(model: onnx.ModelProto):
    """An asymmetric data zero point (its padding is not 0) and a bias whose scale is not
    x_scale·w_scale stay float convolutions (their Q/DQ run on the vector unit)."""
    _, names, stats = _optimised(model, "int8")
    assert "graph.quant_conv2d" not in names and "graph.conv2d" in names
    assert stats.for_pass("fold-qdq").counters.get("kept-convs") == 1


def test_int8_without_quantisation_is_an_error():
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "plain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(Exception, match="precision 'int8' needs a quantised model"):
        _optimised(model, "int8")
