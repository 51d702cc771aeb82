"""Quantised test models made with onnxruntime's quantiser (``quantize_static``, and
``quantize_dynamic`` for the ``_dynamic`` suffix).

Contract: :func:`qdq_model_path` returns the path of a QDQ model (int8 weights,
int8 or uint8 activations, as its name's suffix says; QuantizeLinear / DequantizeLinear pairs around the
convolutions and matmuls) made from a float model with random calibration data and a fixed
seed, so the same onnxruntime version makes the same file. Files are cached under the
system's temporary directory (``tilegraph-qdq-<ort version>/``): the first call makes
them (a few seconds for ResNet-50), later calls reuse them.

The float models: ``resnet50`` is onnx's light ResNet-50 (:mod:`tilegraph.frontend.
light_models`, random weights) upgraded to opset 13 (per-channel quantisation needs it)
and IR version 8 (its weights no longer graph inputs);
``qdq_cnn`` is a small CNN built here (3x3 and 1x1 convolutions with ReLU, a residual add,
global average pooling and a Gemm) on a 3 x 16 x 16 input, fast enough for both executors
in unit tests. Before quantising, onnxruntime's pre-processing folds each BatchNorm into
its convolution (``quant_pre_process``), as a deployment flow does.

``qdq_gcnn`` is a small MobileNet- / ResNeXt-style CNN of grouped and depthwise
convolutions (:func:`small_grouped_cnn`).

``qdq_mlp`` is a transformer-style feed-forward block (MatMul + Add, ReLU, a residual
MatMul, softmax) with a Gemm head (:func:`small_mlp`); ``qdq_attention`` a two-head
self-attention block (:func:`small_attention`: Q / K / V projections, the head split,
Q·Kᵀ, scale, softmax, P·V, the head merge, the output projection, a residual add), whose
QDQ form quantises both matmuls of two activations.

How a model is quantised is its name's suffix (:data:`QUANTISERS`): none for symmetric
int8 activations (zero point 0) and per-channel weights, ``_default`` for
``quantize_static``'s default options (asymmetric int8 activations: zero points other than
0; per-tensor weights), ``_u8`` for asymmetric uint8 activations. ``fold-qdq`` folds a data
zero point into the int32 bias and re-centres uint8 on int8 (``docs/tile-level.md``).
Two suffixes make operator-style models instead of QDQ pairs: ``_qop`` is
``quantize_static`` in ``QuantFormat.QOperator`` (QLinearConv / QLinearMatMul; only Conv
and MatMul are quantised: onnxruntime makes a Gemm a ``com.microsoft`` QGemm, which no
importer of standard ONNX knows), ``_dynamic`` is ``quantize_dynamic`` (no calibration:
DynamicQuantizeLinear, MatMulInteger / ConvInteger, Cast and Mul; int8 weights per
tensor). ``expand-qoperator`` and ``fold-integer-ops`` bring both onto the int8 cube.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, version_converter

FLOAT_MODELS = ("qdq_cnn", "qdq_mlp", "qdq_attention", "qdq_gcnn", "resnet50")
QUANTISERS = {
    "": "symmetric int8 activations (ActivationSymmetric), per-channel int8 weights",
    "_default": "quantize_static's default options: asymmetric int8 activations, "
    "per-tensor int8 weights",
    "_u8": "asymmetric uint8 activations (QUInt8), per-channel int8 weights",
    "_qop": "QOperator format (QLinearConv / QLinearMatMul) of Conv and MatMul, "
    "per-channel int8 weights, quantize_static's default activations",
    "_dynamic": "quantize_dynamic: DynamicQuantizeLinear (uint8) + MatMulInteger / "
    "ConvInteger, per-tensor int8 weights",
}
"""Name suffix -> how the float model is quantised."""
QDQ_MODELS = tuple(f"{m}{suffix}" for suffix in QUANTISERS for m in FLOAT_MODELS)
CALIBRATION_SEED = 7
CALIBRATION_SAMPLES = 4


def _cache_dir() -> Path:
    import onnxruntime

    path = Path(tempfile.gettempdir()) / f"tilegraph-qdq-{onnxruntime.__version__}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _conv(
    name: str, x: str, w: np.ndarray, stride: int, pad: int, group: int = 1
) -> tuple[list, list]:
    weight = numpy_helper.from_array(w, f"{name}_w")
    bias = numpy_helper.from_array(np.full(w.shape[0], 0.05, np.float32), f"{name}_b")
    node = helper.make_node(
        "Conv",
        [x, weight.name, bias.name],
        [name],
        kernel_shape=list(w.shape[2:]),
        strides=[stride, stride],
        pads=[pad] * 4,
        group=group,
    )
    return [node], [weight, bias]


Layer = tuple[int, int, int, int, int, int]
"""A convolution of :func:`_residual_cnn`: (outputs, inputs per group, kernel size, stride,
padding, groups)."""


def _residual_cnn(name: str, seed: int, layers: list[Layer], residual: int) -> onnx.ModelProto:
    """A chain of convolutions ``c1, c2, ...`` on a ``[N, 3, 16, 16]`` input (He-initialised
    weights of ``seed``, bias 0.05), each followed by a ReLU ``r<i>`` but the last, whose
    output is added to ``r<residual>``; ReLU, global average pooling and a Gemm head of 10
    logits."""
    rng = np.random.default_rng(seed)

    def weight(*shape: int) -> np.ndarray:
        fan_in = int(np.prod(shape[1:]))
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    nodes, inits = [], []
    data, last = "x", f"c{len(layers)}"
    for index, (outputs, inputs, k, stride, pad, group) in enumerate(layers, 1):
        conv = f"c{index}"
        n, i = _conv(conv, data, weight(outputs, inputs, k, k), stride, pad, group)
        nodes += n
        inits += i
        if conv != last:
            data = f"r{index}"
            nodes.append(helper.make_node("Relu", [conv], [data]))
    fc_w = numpy_helper.from_array(weight(10, layers[-1][0]), "fc_w")
    fc_b = numpy_helper.from_array(np.zeros(10, np.float32), "fc_b")
    inits += [fc_w, fc_b]
    top = f"r{len(layers)}"
    nodes += [
        helper.make_node("Add", [last, f"r{residual}"], ["sum"]),
        helper.make_node("Relu", ["sum"], [top]),
        helper.make_node("GlobalAveragePool", [top], ["pool"]),
        helper.make_node("Flatten", ["pool"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def small_cnn() -> onnx.ModelProto:
    """The float model of ``qdq_cnn`` (deterministic): 3x3 convolutions to 16 and (stride
    2) 32 channels, a 1x1 added to the second's output."""
    return _residual_cnn(
        "qdq_cnn", 0, [(16, 3, 3, 1, 1, 1), (32, 16, 3, 2, 1, 1), (32, 32, 1, 1, 0, 1)], 2
    )


def small_grouped_cnn() -> onnx.ModelProto:
    """The float model of ``qdq_gcnn`` (deterministic): on a 3 x 16 x 16 input, a 3x3
    convolution to 32 channels (stride 2), a depthwise 3x3 (32 groups), a 1x1 to 64, a
    ResNeXt-style 3x3 of 2 groups, a depthwise 3x3 of 64 channels (two group blocks of 32
    on int8's C0 = 32) and a 1x1 of 4 groups added to the 1x1's output (residual), each
    with a ReLU; global average pooling and a Gemm head."""
    layers = [
        (32, 3, 3, 2, 1, 1),
        (32, 1, 3, 1, 1, 32),
        (64, 32, 1, 1, 0, 1),
        (64, 32, 3, 1, 1, 2),
        (64, 1, 3, 1, 1, 64),
        (64, 16, 1, 1, 0, 4),
    ]
    return _residual_cnn("qdq_gcnn", 2, layers, 3)


def small_mlp() -> onnx.ModelProto:
    """The float model of ``qdq_mlp`` (deterministic): a transformer-style feed-forward
    block on ``[N, 7, 48]`` tokens (MatMul + Add, ReLU, MatMul + Add, a residual of the
    first projection's input width through a third MatMul, softmax over the features) and a
    Gemm head on the first token; the widths are no multiples of 16 or 32 (ragged fractals)."""
    rng = np.random.default_rng(1)

    def init(name: str, *shape: int, scale: float = 1.0) -> onnx.TensorProto:
        data = rng.standard_normal(shape) * scale / np.sqrt(shape[0])
        return numpy_helper.from_array(data.astype(np.float32), name)

    inits = [
        init("w1", 48, 80),
        init("b1", 80, scale=0.1),
        init("w2", 80, 40),
        init("b2", 40, scale=0.1),
        init("w3", 48, 40),
        init("head_w", 10, 40),
        init("head_b", 10, scale=0.1),
        numpy_helper.from_array(np.array([0], np.int64), "first"),
        numpy_helper.from_array(np.array([1], np.int64), "token_axis"),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h1"]),
        helper.make_node("Add", ["h1", "b1"], ["h1b"]),
        helper.make_node("Relu", ["h1b"], ["r1"]),
        helper.make_node("MatMul", ["r1", "w2"], ["h2"]),
        helper.make_node("Add", ["h2", "b2"], ["h2b"]),
        helper.make_node("MatMul", ["x", "w3"], ["skip"]),
        helper.make_node("Add", ["h2b", "skip"], ["sum"]),
        helper.make_node("Softmax", ["sum"], ["probs"], axis=-1),
        helper.make_node("Gather", ["probs", "first"], ["token"], axis=1),
        helper.make_node("Squeeze", ["token", "token_axis"], ["flat"]),
        helper.make_node("Gemm", ["flat", "head_w", "head_b"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "qdq_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 7, 48])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


ATTENTION_TOKENS, ATTENTION_WIDTH, ATTENTION_HEADS = 7, 40, 2


def small_attention() -> onnx.ModelProto:
    """The float model of ``qdq_attention`` (deterministic): self-attention over ``[N, 7,
    48]`` tokens with two heads of 20 (Q·Kᵀ has K = 20, P·V has K = 7: ragged against the
    int8 cube's K0 = 32 and the 16-wide fractals), as an exporter writes it (MatMul,
    Reshape, Transpose, Mul by 1/√20, Softmax, MatMul, Transpose, Reshape, MatMul, Add)."""
    rng = np.random.default_rng(2)
    s, d, h = ATTENTION_TOKENS, ATTENTION_WIDTH, ATTENTION_HEADS

    def init(name: str, *shape: int) -> onnx.TensorProto:
        data = rng.standard_normal(shape) / np.sqrt(shape[0])
        return numpy_helper.from_array(data.astype(np.float32), name)

    inits = [
        init("wq", 48, d),
        init("wk", 48, d),
        init("wv", 48, d),
        init("wo", d, 48),
        numpy_helper.from_array(np.array([0, s, h, d // h], np.int64), "heads"),
        numpy_helper.from_array(np.array([0, s, d], np.int64), "merged"),
        numpy_helper.from_array(np.array(1 / np.sqrt(d // h), np.float32), "scale"),
    ]
    nodes = []
    for n in "qkv":
        nodes += [
            helper.make_node("MatMul", ["x", f"w{n}"], [f"{n}p"]),
            helper.make_node("Reshape", [f"{n}p", "heads"], [f"{n}h"]),
        ]
    nodes += [
        helper.make_node("Transpose", ["qh"], ["qt"], perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["kh"], ["kt"], perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["vh"], ["vt"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["qt", "kt"], ["scores"]),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
        helper.make_node("Softmax", ["scaled"], ["probs"], axis=-1),
        helper.make_node("MatMul", ["probs", "vt"], ["ctx"]),
        helper.make_node("Transpose", ["ctx"], ["ctxt"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ctxt", "merged"], ["ctxm"]),
        helper.make_node("MatMul", ["ctxm", "wo"], ["o"]),
        helper.make_node("Add", ["o", "x"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "qdq_attention",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", s, 48])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", s, 48])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _float_model(name: str) -> onnx.ModelProto:
    if name == "qdq_cnn":
        return small_cnn()
    if name == "qdq_mlp":
        return small_mlp()
    if name == "qdq_attention":
        return small_attention()
    if name == "qdq_gcnn":
        return small_grouped_cnn()
    from tilegraph.frontend.light_models import light_model

    model = version_converter.convert_version(light_model("resnet50"), 13)
    # IR version 3 lists every initializer as a graph input too (overridable weights):
    # the quantiser keeps such inputs, so the weights would stay float inputs
    model.ir_version = 8
    weights = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in weights]
    del model.graph.input[:]
    model.graph.input.extend(inputs)
    return model


def qdq_model_path(name: str) -> Path:
    """The cached QDQ model ``name`` (one of :data:`QDQ_MODELS`), made when missing."""
    if name not in QDQ_MODELS:
        raise ValueError(f"unknown QDQ model {name!r}; choose from {', '.join(QDQ_MODELS)}")
    out = _cache_dir() / f"{name}_qdq.onnx"
    suffix = next(s for s in sorted(QUANTISERS, key=len, reverse=True) if name.endswith(s))
    name = name.removesuffix(suffix) if suffix else name
    if out.exists():
        return out
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_dynamic,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    model = _float_model(name)
    source = _cache_dir() / f"{name}{suffix}_float.onnx"
    prepared = _cache_dir() / f"{name}{suffix}_prepared.onnx"
    onnx.save(model, str(source))
    quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)
    shape = [int(d.dim_value or 1) for d in model.graph.input[0].type.tensor_type.shape.dim]
    input_name = model.graph.input[0].name

    class _Random(CalibrationDataReader):
        def __init__(self) -> None:
            rng = np.random.default_rng(CALIBRATION_SEED)
            self.batches = iter(
                [
                    {input_name: rng.standard_normal(shape).astype(np.float32)}
                    for _ in range(CALIBRATION_SAMPLES)
                ]
            )

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.batches, None)

    partial = out.with_suffix(".partial.onnx")
    if suffix == "_dynamic":
        quantize_dynamic(str(prepared), str(partial), weight_type=QuantType.QInt8)
        partial.replace(out)
        return out
    options: dict = {
        "": {
            "per_channel": True,
            "activation_type": QuantType.QInt8,
            "weight_type": QuantType.QInt8,
            "extra_options": {"ActivationSymmetric": True},
        },
        "_default": {},
        "_u8": {
            "per_channel": True,
            "activation_type": QuantType.QUInt8,
            "weight_type": QuantType.QInt8,
        },
        "_qop": {
            "per_channel": True,
            "quant_format": QuantFormat.QOperator,
            "op_types_to_quantize": ["Conv", "MatMul"],
        },
    }[suffix]
    options.setdefault("quant_format", QuantFormat.QDQ)
    quantize_static(str(prepared), str(partial), _Random(), **options)
    partial.replace(out)  # whole files only: a concurrent reader never sees half of one
    return out
