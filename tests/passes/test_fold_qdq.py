"""``fold-qdq`` (:mod:`tilegraph.passes.fold_qdq`): which QDQ convolutions and matmuls
become ``graph.quant_conv2d`` / ``graph.quant_matmul`` under the ``int8`` precision
(symmetric and asymmetric data, int8 and uint8), that nothing changes under the others,
that a model without Q/DQ is refused, and that the folded graph computes what the QDQ
graph does (onnxruntime, which runs it as integer QLinearConv / QLinearMatMul)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from tilegraph.dialects.graph.quantized_cube import QuantConv2dOp
from tilegraph.frontend import load_onnx
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.statistics import collecting_statistics
from tilegraph.runtime.reference import run_reference

X_SCALE = np.float32(0.05)


def qdq_conv(
    x_zero: int = 0,
    bias_scale_factor: float = 1.0,
    per_tensor: bool = False,
    pads: int = 1,
    group: int = 1,
    x_type: type = np.int8,
) -> onnx.ModelProto:
    """Q -> DQ -> Conv(DQ(int8 w), DQ(int32 b)) on a [1, 20, 7, 7] input: onnxruntime's QDQ
    pattern, with the data's zero point (and type) and the bias scale
    (``bias_scale_factor`` x the product of the scales) as given."""
    rng = np.random.default_rng(0)
    m = 24
    w = rng.integers(-127, 128, (m, 20 // group, 3, 3)).astype(np.int8)
    w_scale = (rng.uniform(0.5, 1.5, 1 if per_tensor else m) * 0.01).astype(np.float32)
    bias_scale = (X_SCALE * np.broadcast_to(w_scale, (m,)) * bias_scale_factor).astype(np.float32)
    arrays = {
        "w": w,
        "w_scale": w_scale if not per_tensor else w_scale.reshape(()),
        "w_zero": np.zeros(w_scale.shape, np.int8).reshape(w_scale.shape if not per_tensor else ()),
        "x_scale": np.array(X_SCALE),
        "x_zero": np.array(x_zero, x_type),
        "b": rng.integers(-3000, 3000, m).astype(np.int32),
        "b_scale": bias_scale,
        "b_zero": np.zeros(m, np.int32),
    }
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zero"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zero"], ["wd"], axis=0),
        helper.make_node("DequantizeLinear", ["b", "b_scale", "b_zero"], ["bd"], axis=0),
        helper.make_node(
            "Conv", ["xd", "wd", "bd"], ["y"], kernel_shape=[3, 3], pads=[pads] * 4, group=group
        ),
    ]
    graph = helper.make_graph(
        nodes,
        "qdq_conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 20, 7, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(a, n) for n, a in arrays.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def qdq_matmul(
    gemm: bool = False, x_zero: int = 0, x_type: type = np.int8, per_tensor: bool = False
) -> onnx.ModelProto:
    """Q -> DQ -> MatMul(DQ(int8 w [40, 24])) on a [2, 5, 40] input, or Gemm(DQ(int8 w
    [24, 40]), DQ(int32 b), transB = 1) on [5, 40]: onnxruntime's QDQ patterns."""
    rng = np.random.default_rng(2)
    n, k = 24, 40
    w_scale = (rng.uniform(0.5, 1.5, 1 if per_tensor else n) * 0.01).astype(np.float32)
    w = rng.integers(-127, 128, (n, k) if gemm else (k, n)).astype(np.int8)
    arrays = {
        "w": w,
        "w_scale": w_scale.reshape(()) if per_tensor else w_scale,
        "w_zero": np.zeros(() if per_tensor else n, np.int8),
        "x_scale": np.array(X_SCALE),
        "x_zero": np.array(x_zero, x_type),
        "b": rng.integers(-3000, 3000, n).astype(np.int32),
        "b_scale": (X_SCALE * np.broadcast_to(w_scale, (n,))).astype(np.float32),
    }
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zero"], ["xd"]),
        helper.make_node(
            "DequantizeLinear", ["w", "w_scale", "w_zero"], ["wd"], axis=0 if gemm else 1
        ),
    ]
    if gemm:
        nodes += [
            helper.make_node("DequantizeLinear", ["b", "b_scale"], ["bd"], axis=0),
            helper.make_node("Gemm", ["xd", "wd", "bd"], ["y"], transB=1),
        ]
    else:
        nodes.append(helper.make_node("MatMul", ["xd", "wd"], ["y"]))
    shape = [5, k] if gemm else [2, 5, k]
    graph = helper.make_graph(
        nodes,
        "qdq_matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
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
    module.verify()
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


def _matches_onnxruntime(model: onnx.ModelProto, module, shape: list[int]) -> None:
    """The folded graph against onnxruntime on data of ``shape`` that reaches both ends of
    the quantised range (saturation included)."""
    x = (np.random.default_rng(1).standard_normal(shape) * 3).astype(np.float32)
    (ours,) = run_reference(module, [x])
    theirs = np.asarray(ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0])
    # where onnxruntime runs the float op on dequantised values it rounds every partial sum
    # (values up to ~50 here): a few float32 ulp from the exact sum rounded once
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    ("x_zero", "x_type", "pads"),
    [(3, np.int8, 1), (-20, np.int8, 0), (140, np.uint8, 1), (0, np.uint8, 1)],
    ids=["int8_zp3_padded", "int8_zp-20_unpadded", "uint8_zp140_padded", "uint8_zp0"],
)
def test_an_asymmetric_data_zero_point_folds(x_zero: int, x_type: type, pads: int):
    """``Σ (x - zx)·w = Σ x·w - zx·Σ w``: the bias takes ``-zx·Σ w``, the padding holds zx
    (``pad_value``), so the border pixels are right too; uint8 data is re-centred on int8
    (zero point ``zx - 128``)."""
    model = qdq_conv(x_zero=x_zero, x_type=x_type, pads=pads)
    module, names, stats = _optimised(model, "int8")
    assert names.count("graph.quant_conv2d") == 1 and "graph.conv2d" not in names
    counters = stats.for_pass("fold-qdq").counters
    assert counters.get("recentred-uint8") == (1 if x_type == np.uint8 else None)
    (conv,) = [op for op in module.walk() if isinstance(op, QuantConv2dOp)]
    zero = x_zero - 128 if x_type == np.uint8 else x_zero
    assert int(conv.attr("pad_value")) == zero
    _matches_onnxruntime(model, module, [1, 20, 7, 7])


@pytest.mark.parametrize("gemm", [False, True], ids=["matmul", "gemm"])
@pytest.mark.parametrize(
    ("x_zero", "x_type", "per_tensor"),
    [(0, np.int8, False), (-7, np.int8, True), (131, np.uint8, False)],
    ids=["symmetric", "int8_zp-7_per_tensor", "uint8_zp131"],
)
def test_qdq_matmul_and_gemm_fold(gemm: bool, x_zero: int, x_type: type, per_tensor: bool):
    """A QDQ MatMul (weights [K, N], transposed to rows of K) or Gemm (transB = 1, an int32
    bias) becomes one ``graph.quant_matmul``; the data zero point goes into the bias."""
    model = qdq_matmul(gemm, x_zero, x_type, per_tensor)
    module, names, stats = _optimised(model, "int8")
    assert names.count("graph.quant_matmul") == 1
    assert "graph.matmul" not in names and "graph.gemm" not in names
    assert stats.for_pass("fold-qdq").counters.get("folded-matmuls") == 1
    _matches_onnxruntime(model, module, [5, 40] if gemm else [2, 5, 40])


@pytest.mark.parametrize(
    "model",
    [qdq_conv(x_zero=3, group=4), qdq_conv(bias_scale_factor=1.5)],
    ids=["grouped_padded_zero_point_3", "bias_scale_not_the_product"],
)
def test_what_does_not_fit_keeps_the_float_path(model: onnx.ModelProto):
    """A grouped convolution with padding and a data zero point (a group block's last K
    step may read weights of the next block against the padding) and a bias whose scale is
    not x_scale·w_scale stay float convolutions (their Q/DQ run on the vector unit)."""
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
