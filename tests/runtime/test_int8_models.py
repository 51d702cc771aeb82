"""QDQ models made with onnxruntime's quantiser (:mod:`tests.zoo.quantized`) under
``--precision int8`` on ascend910b: no host op, every convolution and matmul an int8 cube
op, both executors against onnxruntime.

Tolerance: the outputs are DequantizeLinear(QuantizeLinear(y)), so a difference is a
whole number of output quantisation steps. onnxruntime runs the QDQ convolutions as
integer QLinearConv (int32 sums, one rounding), as the int8 cube does, so they agree
unless a float value lands on a rounding boundary of a QuantizeLinear. Measured (ORT
1.32): ``qdq_cnn`` matches exactly (max |diff| 0 on data sets of batch 1 and 2, four
seeds, both executors); the QDQ ResNet-50 differs by at most one step (0.00787) in 10 of
its 1000 outputs (fast executor). The tests allow one step.

Asymmetric activations (``_default``: quantize_static's default options; ``_u8``: QUInt8)
match onnxruntime run as the ONNX graph says (graph optimisations off: every QDQ op on its
own) exactly; onnxruntime's optimised session fuses the QDQ softmax of ``qdq_mlp_default``
/ ``_u8`` into its own kernel (a lookup table) that differs by up to two output steps from
the graph's semantics (the float graph at the graph level differs from it just as much),
so against the optimised session those tests allow two steps.

``fold-requant`` (fixpipe requantises the convolutions whose quantised result only
convolutions read: 32 of ResNet-50's 53, 1 of ``qdq_cnn``'s 3 (its second feeds the third
and the residual add), 4 of ``qdq_gcnn``'s 6 (two depthwise, one grouped)) rounds once as onnxruntime's QLinearConv does;
measured (ORT 1.32, seed 0, 910B) it moved no output: ResNet-50 0 steps off (of 1000),
``resnet50_default`` one value one step (0.0039) off, before and after.
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
REQCONV = "graph.requant_conv2d"
QMATMUL = "graph.quant_matmul"
REQMATMUL = "graph.requant_matmul"


def _output_step(path: str) -> float:
    """The scale of the QuantizeLinear in front of the model's (single) output."""
    model = onnx.load(path)
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    (out,) = [n for n in model.graph.node if n.output[0] == model.graph.output[0].name]
    return float(inits[out.input[1]])


def _onnxruntime(path: str, x: np.ndarray, optimised: bool = True) -> np.ndarray:
    options = ort.SessionOptions()
    if not optimised:  # every QDQ op on its own, as the graph says
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, {session.get_inputs()[0].name: x})[0])


def _quant_ops(compiled, name: str = QCONV) -> int:
    return sum(k.ops.count(name) for k in kernel_report(compiled.module) if k.unit != "host")


def _quant_convs(compiled) -> int:
    """int8 convolutions on the cube: dequantising, or requantising in fixpipe."""
    return _quant_ops(compiled, QCONV) + _quant_ops(compiled, REQCONV)


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
        # fold-requant: the first; the second's result feeds the residual add too
        assert _quant_ops(compiled, REQCONV) == 1


@pytest.mark.parametrize("executor", ["fast", "interpret"])
def test_qdq_grouped_cnn_requantises_grouped_convolutions(executor: str):
    """The MobileNet- / ResNeXt-style CNN: its depthwise and grouped convolutions run on
    the int8 cube, and the four whose int8 result only the next convolution reads
    requantise in fixpipe (a depthwise one of 32 channels, the grouped one of two groups of
    32, a depthwise one of 64 channels in two group blocks, and the first dense one); no
    host op, within one output step of onnxruntime."""
    path = str(qdq_model_path("qdq_gcnn"))
    compiled = compile(path, platform="ascend910b", precision="int8", executor=executor)
    step = _output_step(path)
    x = np.random.default_rng(5).standard_normal((2, 3, 16, 16)).astype(np.float32)
    ours = np.asarray(compiled(x)[0])
    np.testing.assert_allclose(ours, _onnxruntime(path, x), rtol=0, atol=step * 1.001)
    assert compiled.host_ops == []
    assert _quant_convs(compiled) == 6
    assert _quant_ops(compiled, REQCONV) == 4


@pytest.mark.parametrize("executor", ["fast", "interpret"])
@pytest.mark.parametrize(
    ("name", "steps"), [("qdq_mlp", 1), ("qdq_mlp_default", 2), ("qdq_mlp_u8", 2)]
)
def test_qdq_mlp_runs_on_the_int8_cube(name: str, steps: int, executor: str):
    """The transformer-style block: its three MatMuls and the Gemm head are int8 cube ops,
    no host op; exact against the graph's semantics, within ``steps`` output steps of the
    optimised onnxruntime (see the module docstring)."""
    path = str(qdq_model_path(name))
    compiled = compile(path, platform="ascend910b", precision="int8", executor=executor)
    step = _output_step(path)
    x = np.random.default_rng(3).standard_normal((2, 7, 48)).astype(np.float32)
    ours = np.asarray(compiled(x)[0])
    assert compiled.host_ops == []
    assert _quant_ops(compiled, QMATMUL) == 4
    np.testing.assert_allclose(ours, _onnxruntime(path, x, optimised=False), rtol=0, atol=step)
    np.testing.assert_allclose(ours, _onnxruntime(path, x), rtol=0, atol=step * (steps + 0.001))


@pytest.mark.parametrize("executor", ["fast", "interpret"])
def test_qdq_attention_runs_on_the_int8_cube(executor: str):
    """The QDQ attention block (symmetric activations): its four projections and both
    matmuls of two activations (Q·Kᵀ, P·V) are int8 cube ops, four of them requantised in
    fixpipe (the Q / K / V projections and P·V, whose int8 results the next matmul reads
    through int8 reshapes / transposes), no host op; within one output step of onnxruntime
    (measured: 0 on this data set)."""
    path = str(qdq_model_path("qdq_attention"))
    compiled = compile(path, platform="ascend910b", precision="int8", executor=executor)
    step = _output_step(path)
    x = np.random.default_rng(5).standard_normal((2, 7, 48)).astype(np.float32)
    ours = np.asarray(compiled(x)[0])
    assert compiled.host_ops == []
    assert _quant_ops(compiled, QMATMUL) == 2 and _quant_ops(compiled, REQMATMUL) == 4
    np.testing.assert_allclose(ours, _onnxruntime(path, x), rtol=0, atol=step * 1.001)


@pytest.mark.parametrize(
    ("name", "executor"), [("qdq_cnn_default", "fast"), ("qdq_cnn_u8", "interpret")]
)
def test_asymmetric_qdq_cnn_runs_on_the_int8_cube(name: str, executor: str):
    """Activations with zero points other than 0 (int8, or uint8 re-centred on int8): every
    convolution (the padded 3x3 ones too: the padding holds the zero point) and the Gemm
    on the int8 cube."""
    path = str(qdq_model_path(name))
    compiled = compile(path, platform="ascend910b", precision="int8", executor=executor)
    step = _output_step(path)
    x = np.random.default_rng(4).standard_normal((2, 3, 16, 16)).astype(np.float32)
    ours = np.asarray(compiled(x)[0])
    assert compiled.host_ops == []
    assert _quant_convs(compiled) == 3 and _quant_ops(compiled, QMATMUL) == 1
    np.testing.assert_allclose(ours, _onnxruntime(path, x), rtol=0, atol=step * 1.001)


def test_other_precisions_keep_the_float_convolutions():
    """Under origin the QDQ model runs as today: float convolutions, Q/DQ on the vector unit."""
    compiled = compile(str(qdq_model_path("qdq_cnn")), platform="ascend910b")
    compiled(np.zeros((1, 3, 16, 16), np.float32))
    assert compiled.kernels and _quant_convs(compiled) == 0
    assert compiled.host_ops == []


@pytest.mark.slow
@pytest.mark.parametrize("name", ["resnet50", "resnet50_default"])
def test_qdq_resnet50_runs_on_the_int8_cube(name: str):
    """53 int8 convolutions and the int8 Gemm head, no host op; about 40 s each (the fast
    executor on a shared CPU). ``resnet50_default``: quantize_static's default options
    (asymmetric activations, per-tensor weights)."""
    path = str(qdq_model_path(name))
    compiled = compile(path, platform="ascend910b", precision="int8")
    assert compiled.host_ops == []
    assert _quant_convs(compiled) == 53 and _quant_ops(compiled, QMATMUL) == 1
    assert _quant_ops(compiled, REQCONV) == 32  # those whose result feeds the next conv
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    ours = np.asarray(compiled(x)[0])
    step = _output_step(path)
    np.testing.assert_allclose(ours, _onnxruntime(path, x), rtol=0, atol=step * 1.001)


@pytest.mark.parametrize("executor", ["fast", "interpret"])
@pytest.mark.parametrize("platform", ["ascend910b", "ascend310p"])
@pytest.mark.parametrize("name", ["qdq_attention_default", "qdq_attention_u8"])
def test_asymmetric_qdq_attention_runs_on_the_int8_cube(name: str, platform: str, executor: str):
    """Asymmetric activations (int8 zero points other than 0, or uint8 re-centred on int8):
    Q·Kᵀ and P·V run on the int8 cube too (their raw int32 sums, the zero points' row and
    column sums as four one-row / one-column int8 products, an int32 epilogue in a mix
    kernel on 910B), so all six matmuls are int8 cube ops, three requantised in fixpipe
    (the Q / K / V projections; P·V's quantisation follows its int32 epilogue), no host
    op. Exact against onnxruntime run as the graph says (measured 0 steps, as the float
    path before); within two output steps of the optimised session (its fused QDQ
    softmax, see the module docstring)."""
    path = str(qdq_model_path(name))
    compiled = compile(path, platform=platform, precision="int8", executor=executor)
    step = _output_step(path)
    x = np.random.default_rng(5).standard_normal((2, 7, 48)).astype(np.float32)
    ours = np.asarray(compiled(x)[0])
    assert compiled.host_ops == []
    assert _quant_ops(compiled, QMATMUL) == 2 + 4 + 1 and _quant_ops(compiled, REQMATMUL) == 3
    kernels = kernel_report(compiled.module)
    assert not [k for k in kernels if "graph.matmul" in k.ops or "graph.concat" in k.ops]
    assert len([k for k in kernels if "graph.sub" in k.ops and QMATMUL in k.ops]) == 2
    np.testing.assert_allclose(ours, _onnxruntime(path, x, optimised=False), rtol=0, atol=0)
    np.testing.assert_allclose(ours, _onnxruntime(path, x), rtol=0, atol=step * 2.001)


def _with_outputs(path: str, names: list[str]) -> onnx.ModelProto:
    """The model at ``path`` with the intermediate tensors ``names`` as outputs too."""
    model = onnx.shape_inference.infer_shapes(onnx.load(path))
    infos = {v.name: v for v in model.graph.value_info}
    model.graph.output.extend(infos[n] for n in names)
    return model


@pytest.mark.parametrize("executor", ["fast", "interpret"])
@pytest.mark.parametrize("platform", ["ascend910b", "ascend310p"])
def test_dynamic_cnn_runs_on_the_int8_cube(platform: str, executor: str):
    """quantize_dynamic's small CNN: DynamicQuantizeLinear's run-time uint8 zero point pads
    the two padded 3x3 ConvIntegers (re-centred on int8: their pad operand), so all three
    convolutions and the MatMulInteger head are int8 cube ops and no op is left on the
    host. The convolutions' results (each ReLU, the residual sum) are onnxruntime's bit for
    bit; the output differs by float32 rounding only: the average pool's sum, added in
    another order (measured 2.4e-7 on the pool, 4.8e-7 on the logits, ORT 1.32)."""
    path = str(qdq_model_path("qdq_cnn_dynamic"))
    inner = ["r1", "r2", "sum", "r3"]
    model = _with_outputs(path, inner)
    compiled = compile(model, platform=platform, precision="int8", executor=executor)
    x = np.random.default_rng(4).standard_normal((2, 3, 16, 16)).astype(np.float32)
    ours = [np.asarray(a) for a in compiled(x)]
    assert compiled.host_ops == []
    assert _quant_convs(compiled) == 3 and _quant_ops(compiled, QMATMUL) == 1
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options)
    theirs = [np.asarray(a) for a in session.run(None, {session.get_inputs()[0].name: x})]
    for name, a, b in zip(inner, ours[1:], theirs[1:], strict=True):
        np.testing.assert_array_equal(a, b, err_msg=name)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=0, atol=1e-5)
    np.testing.assert_allclose(ours[0], _onnxruntime(path, x), rtol=0, atol=1e-5)
