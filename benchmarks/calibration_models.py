"""The architectures whose NPU latency is published, built as ONNX graphs for the cycle model.

    python benchmarks/calibration_models.py se_resnet50 build/se_resnet50_b1.onnx --batch 1

Contract: :func:`build` returns an ONNX model (opset 17) of one of :data:`ARCHITECTURES`,
exported the way PyTorch's exporter writes it (Conv + BatchNormalization + Relu, Gemm heads,
transformers with LayerNormalization, the erf form of GELU and additive score biases), at a
fixed batch (and sequence length for BERT). Weights are seeded random values (``weights=
"random"``) or one constant per tensor (``"splat"``: a small file, the same shapes; latency
does not depend on the values). ``dtype="float16"`` builds the model as ATC's default
``force_fp16`` precision mode runs it: every floating-point tensor (weights, activations,
inputs and outputs) in half precision. The parameter counts match the published ones (tested):
ResNet-18 11,689,512; ResNet-34 21,797,672; ResNet-50 25,557,032; ResNet-101 44,549,160;
ResNet-152 60,192,808; SE-ResNet-50 28,088,024; BERT-base with a question-answering head
108,893,186; BERT-large 334,094,338; ViT-B/16 86,567,656; ViT-B/32 88,224,232; Swin-T
28,288,354.

The architectures follow their reference implementations: torchvision's ResNet (v1.5: the
stride on the 3x3 convolution; ResNet-18/34 of basic blocks), Cadene's
``pretrainedmodels.se_resnet50`` (stride on the first 1x1 convolution, a squeeze-excitation
block with reduction 16, max pooling with ``ceil_mode``), Hugging Face's
``BertForQuestionAnswering`` (bert-base-uncased: 12 layers, hidden 768, 12 heads,
intermediate 3072; bert-large-uncased: 24, 1024, 16, 4096; vocabulary 30522) and timm's
``vit_base_patch16_224`` / ``vit_base_patch32_224`` and ``swin_tiny_patch4_window7_224``.
Two liberties, neither changing the work: attention projects Q, K and V with three linear
maps (timm's one ``qkv`` map of three times the width has the same parameters and FLOPs),
and Swin's relative position bias, a learned table gathered by a constant index, is built
folded into a constant per block (as ATC folds it; :func:`parameter_count` still counts the
table).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ARCHITECTURES = (
    "resnet50",
    "resnet101",
    "se_resnet50",
    "bert_base",
    "resnet18",
    "resnet34",
    "resnet152",
    "bert_large",
    "vit_b16",
    "vit_b32",
    "swin_t",
)
OPSET = 17
BUFFER = "buffer."
"""The name prefix of float constants that are no parameters."""
FOLDED_PARAMETERS = "folded_parameters"
"""The model property holding the elements of parameters folded into buffers."""
DTYPES = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16}


class GraphWriter:
    """Appends nodes and initializers with fresh names; :meth:`model` closes the graph."""

    def __init__(self, weights: str, seed: int, dtype: str = "float32") -> None:
        if weights not in ("random", "splat"):
            raise ValueError(f"weights must be 'random' or 'splat', not {weights!r}")
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
        self.weights = weights
        self.dtype = np.dtype(dtype)
        self.onnx_type = DTYPES[dtype]
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.counter = 0
        self.folded_parameters = 0
        """Elements of parameters folded into constants (:meth:`buffer`), still counted."""

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}_{self.counter}"

    def tensor(self, stem: str, array: np.ndarray) -> str:
        name = self.fresh(stem)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def weight(self, stem: str, shape: Sequence[int], fan_in: int, low: float = 0.0) -> str:
        """A trainable tensor: He-scaled normal values (random) or a constant (splat).
        ``low`` > 0 makes values positive (BatchNorm variances and scales). Splat values
        differ from tensor to tensor: identical weights would let the compiler merge what
        the real model computes apart (a layer's Q, K and V projections into one matmul)."""
        if self.weights == "splat":
            step = self.counter % 512  # distinct in float16 near both bases
            base = 0.02 + step * 2e-4 if low == 0.0 else 1.0 + step * 2e-3
            array = np.full(shape, base, np.float32)
        elif low > 0.0:
            array = self.rng.uniform(low, 2 * low, shape).astype(np.float32)
        else:
            scale = math.sqrt(2.0 / max(fan_in, 1))
            array = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        return self.tensor(stem, array.astype(self.dtype))

    def buffer(self, stem: str, array: np.ndarray, folded_parameters: int = 0) -> str:
        """A constant that is no parameter (a mask, or a table gathered by a constant index
        and folded, whose ``folded_parameters`` elements :func:`parameter_count` still counts)."""
        self.folded_parameters += folded_parameters
        return self.tensor(f"{BUFFER}{stem}", array.astype(self.dtype))

    def node(self, op: str, inputs: Sequence[str], n_out: int = 1, **attrs: Any) -> list[str]:
        outputs = [self.fresh(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, list(inputs), outputs, **attrs))
        return outputs

    def one(self, op: str, inputs: Sequence[str], **attrs: Any) -> str:
        return self.node(op, inputs, **attrs)[0]

    def ints(self, values: Sequence[int]) -> str:
        return self.tensor("shape", np.asarray(values, np.int64))

    def scalar(self, value: float) -> str:
        return self.tensor("c", np.asarray(value, self.dtype))

    def value(self, name: str, shape: Sequence[int]) -> onnx.ValueInfoProto:
        """A graph input or output of the model's floating-point type."""
        return helper.make_tensor_value_info(name, self.onnx_type, list(shape))

    def model(
        self,
        name: str,
        inputs: Sequence[onnx.ValueInfoProto],
        outputs: Sequence[onnx.ValueInfoProto],
    ) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.producer_name = "tilegraph benchmarks/calibration_models.py"
        helper.set_model_props(model, {FOLDED_PARAMETERS: str(self.folded_parameters)})
        return model


# ---------------------------------------------------------------------------------------- CNNs


def conv_bn(g: GraphWriter, x: str, c_in: int, c_out: int, k: int, stride: int, relu: bool) -> str:
    """Conv (no bias) + BatchNormalization (+ Relu), as a PyTorch export in eval mode."""
    w = g.weight("conv.weight", (c_out, c_in, k, k), c_in * k * k)
    y = g.one("Conv", [x, w], kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4)
    bn = [
        g.weight("bn.weight", (c_out,), 0, low=0.25),
        g.weight("bn.bias", (c_out,), c_out),
        g.weight("bn.running_mean", (c_out,), c_out),
        g.weight("bn.running_var", (c_out,), 0, low=0.5),
    ]
    y = g.one("BatchNormalization", [y, *bn], epsilon=1e-5)
    return g.one("Relu", [y]) if relu else y


def squeeze_excitation(g: GraphWriter, x: str, channels: int, reduction: int = 16) -> str:
    """Cadene's SEModule: global average pool, 1x1 conv down, ReLU, 1x1 conv up, sigmoid,
    scale (the 1x1 convolutions carry biases)."""
    hidden = channels // reduction
    s = g.one("GlobalAveragePool", [x])
    w1 = g.weight("fc1.weight", (hidden, channels, 1, 1), channels)
    b1 = g.weight("fc1.bias", (hidden,), channels)
    s = g.one("Relu", [g.one("Conv", [s, w1, b1], kernel_shape=[1, 1])])
    w2 = g.weight("fc2.weight", (channels, hidden, 1, 1), hidden)
    b2 = g.weight("fc2.bias", (channels,), hidden)
    s = g.one("Sigmoid", [g.one("Conv", [s, w2, b2], kernel_shape=[1, 1])])
    return g.one("Mul", [x, s])


def bottleneck(
    g: GraphWriter, x: str, c_in: int, width: int, stride: int, se: bool
) -> tuple[str, int]:
    """One bottleneck block (expansion 4). torchvision strides the 3x3 convolution; the
    SE-ResNet of Cadene strides the first 1x1 one."""
    c_out = 4 * width
    s1, s3 = (stride, 1) if se else (1, stride)
    y = conv_bn(g, x, c_in, width, 1, s1, relu=True)
    y = conv_bn(g, y, width, width, 3, s3, relu=True)
    y = conv_bn(g, y, width, c_out, 1, 1, relu=False)
    if se:
        y = squeeze_excitation(g, y, c_out)
    shortcut = x
    if stride != 1 or c_in != c_out:
        shortcut = conv_bn(g, x, c_in, c_out, 1, stride, relu=False)
    return g.one("Relu", [g.one("Add", [y, shortcut])]), c_out


def basic_block(g: GraphWriter, x: str, c_in: int, width: int, stride: int) -> tuple[str, int]:
    """One basic block (two 3x3 convolutions, expansion 1) of ResNet-18/34."""
    y = conv_bn(g, x, c_in, width, 3, stride, relu=True)
    y = conv_bn(g, y, width, width, 3, 1, relu=False)
    shortcut = x
    if stride != 1 or c_in != width:
        shortcut = conv_bn(g, x, c_in, width, 1, stride, relu=False)
    return g.one("Relu", [g.one("Add", [y, shortcut])]), width


RESNET_STAGES = {
    "resnet18": (2, 2, 2, 2),
    "resnet34": (3, 4, 6, 3),
    "resnet50": (3, 4, 6, 3),
    "resnet101": (3, 4, 23, 3),
    "resnet152": (3, 8, 36, 3),
    "se_resnet50": (3, 4, 6, 3),
}
BASIC_BLOCKS = ("resnet18", "resnet34")


def resnet(name: str, batch: int, weights: str, seed: int, dtype: str) -> onnx.ModelProto:
    """torchvision's ResNet-18/34/50/101/152, or Cadene's SE-ResNet-50, on 224x224 RGB
    images."""
    se = name == "se_resnet50"
    g = GraphWriter(weights, seed, dtype)
    y = conv_bn(g, "image", 3, 64, 7, 2, relu=True)
    y = g.one(
        "MaxPool",
        [y],
        kernel_shape=[3, 3],
        strides=[2, 2],
        pads=[0] * 4 if se else [1] * 4,
        ceil_mode=1 if se else 0,
    )
    channels = 64
    for stage, blocks in enumerate(RESNET_STAGES[name]):
        width = 64 * 2**stage
        for index in range(blocks):
            stride = 2 if stage > 0 and index == 0 else 1
            if name in BASIC_BLOCKS:
                y, channels = basic_block(g, y, channels, width, stride)
            else:
                y, channels = bottleneck(g, y, channels, width, stride, se)
    y = g.one("GlobalAveragePool", [y])
    y = g.one("Flatten", [y], axis=1)
    w = g.weight("fc.weight", (1000, channels), channels)
    b = g.weight("fc.bias", (1000,), channels)
    y = g.one("Gemm", [y, w, b], transB=1)
    return g.model(
        name,
        [g.value("image", [batch, 3, 224, 224])],
        [g.value(y, [batch, 1000])],
    )


# ---------------------------------------------------------------------------------------- BERT

BERT_VOCAB, BERT_POSITIONS = 30522, 512


@dataclass(frozen=True)
class BertSize:
    layers: int
    hidden: int
    heads: int
    ffn: int


BERT_SIZES = {"bert_base": BertSize(12, 768, 12, 3072), "bert_large": BertSize(24, 1024, 16, 4096)}


def layer_norm(g: GraphWriter, x: str, width: int, epsilon: float = 1e-12) -> str:
    """LayerNormalization over the last axis (BERT's epsilon by default)."""
    scale = g.weight("LayerNorm.weight", (width,), 0, low=0.5)
    bias = g.weight("LayerNorm.bias", (width,), width)
    return g.one("LayerNormalization", [x, scale, bias], axis=-1, epsilon=epsilon)


def linear(g: GraphWriter, x: str, c_in: int, c_out: int, bias: bool = True) -> str:
    """``x @ W (+ b)`` as PyTorch exports ``nn.Linear`` on a 3-d or wider input: MatMul
    (then Add)."""
    y = g.one("MatMul", [x, g.weight("dense.weight", (c_in, c_out), c_in)])
    return g.one("Add", [y, g.weight("dense.bias", (c_out,), c_in)]) if bias else y


def gelu_erf(g: GraphWriter, x: str) -> str:
    """``0.5 * x * (1 + erf(x / sqrt(2)))``, the exact GELU as exported."""
    e = g.one("Erf", [g.one("Div", [x, g.scalar(math.sqrt(2.0))])])
    return g.one("Mul", [g.one("Mul", [x, g.one("Add", [e, g.scalar(1.0)])]), g.scalar(0.5)])


def attention(
    g: GraphWriter,
    x: str,
    batch: int,
    seq: int,
    hidden: int,
    heads: int,
    bias: Callable[[str], str] | None = None,
) -> str:
    """Multi-head self-attention over ``x`` ([batch, seq, hidden]): Q, K and V projections,
    ``softmax(bias(q k^T / sqrt(head))) v`` and the output projection; ``bias`` writes the
    additive terms on the scores (an attention mask, a position bias), if any."""
    head = hidden // heads
    split = g.ints([batch, seq, heads, head])

    def project(transpose: list[int]) -> str:
        y = g.one("Reshape", [linear(g, x, hidden, hidden), split])
        return g.one("Transpose", [y], perm=transpose)

    q, k, v = project([0, 2, 1, 3]), project([0, 2, 3, 1]), project([0, 2, 1, 3])
    scores = g.one("Div", [g.one("MatMul", [q, k]), g.scalar(math.sqrt(head))])
    if bias is not None:
        scores = bias(scores)
    probs = g.one("Softmax", [scores], axis=-1)
    context = g.one("Transpose", [g.one("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    context = g.one("Reshape", [context, g.ints([batch, seq, hidden])])
    return linear(g, context, hidden, hidden)


def bert(name: str, batch: int, seq: int, weights: str, seed: int, dtype: str) -> onnx.ModelProto:
    """bert-base-uncased or bert-large-uncased with a question-answering head: token ids,
    an attention mask and token type ids in, start and end logits out."""
    if not 1 <= seq <= BERT_POSITIONS:
        raise ValueError(f"sequence length must be 1..{BERT_POSITIONS}, not {seq}")
    size = BERT_SIZES[name]
    g = GraphWriter(weights, seed, dtype)
    words = g.weight("word_embeddings", (BERT_VOCAB, size.hidden), size.hidden)
    positions = g.weight("position_embeddings", (BERT_POSITIONS, size.hidden), size.hidden)
    types = g.weight("token_type_embeddings", (2, size.hidden), size.hidden)
    position_ids = g.tensor("position_ids", np.arange(seq, dtype=np.int64)[None, :])
    x = g.one("Gather", [words, "input_ids"])
    x = g.one("Add", [x, g.one("Gather", [types, "token_type_ids"])])
    x = g.one("Add", [x, g.one("Gather", [positions, position_ids])])
    x = layer_norm(g, x, size.hidden)
    # (1 - mask) * -10000, broadcast over heads and query positions, as the exporter writes it
    mask = g.one("Unsqueeze", ["attention_mask", g.ints([1, 2])])
    mask = g.one("Cast", [mask], to=g.onnx_type)
    mask_bias = g.one("Mul", [g.one("Sub", [g.scalar(1.0), mask]), g.scalar(-10000.0)])

    def masked(scores: str) -> str:
        return g.one("Add", [scores, mask_bias])

    for _ in range(size.layers):
        x = g.one("Add", [attention(g, x, batch, seq, size.hidden, size.heads, masked), x])
        x = layer_norm(g, x, size.hidden)
        hidden = gelu_erf(g, linear(g, x, size.hidden, size.ffn))
        x = layer_norm(g, g.one("Add", [linear(g, hidden, size.ffn, size.hidden), x]), size.hidden)
    logits = linear(g, x, size.hidden, 2)
    start, end = g.node("Split", [logits, g.ints([1, 1])], n_out=2, axis=-1)
    start = g.one("Squeeze", [start, g.ints([-1])])
    end = g.one("Squeeze", [end, g.ints([-1])])
    ids = [
        helper.make_tensor_value_info(n, TensorProto.INT64, [batch, seq])
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    return g.model(
        name,
        ids,
        [g.value(start, [batch, seq]), g.value(end, [batch, seq])],
    )


# ------------------------------------------------------------------------------ ViT and Swin


def patch_embed(g: GraphWriter, batch: int, patch: int, width: int) -> tuple[str, int]:
    """The patch stem: a ``patch`` x ``patch`` convolution of stride ``patch`` (with bias)
    on 224x224 RGB images, then channels last: [batch, side, side, width] and the side."""
    w = g.weight("patch_embed.proj.weight", (width, 3, patch, patch), 3 * patch * patch)
    b = g.weight("patch_embed.proj.bias", (width,), 3 * patch * patch)
    y = g.one("Conv", ["image", w, b], kernel_shape=[patch, patch], strides=[patch, patch])
    return g.one("Transpose", [y], perm=[0, 2, 3, 1]), 224 // patch


def mlp(g: GraphWriter, x: str, width: int, hidden: int) -> str:
    return linear(g, gelu_erf(g, linear(g, x, width, hidden)), hidden, width)


def classifier(g: GraphWriter, x: str, width: int, batch: int, name: str) -> onnx.ModelProto:
    """The 1000-class head (Gemm) on ``x`` ([batch, width]) closes the model."""
    w = g.weight("head.weight", (1000, width), width)
    y = g.one("Gemm", [x, w, g.weight("head.bias", (1000,), width)], transB=1)
    return g.model(name, [g.value("image", [batch, 3, 224, 224])], [g.value(y, [batch, 1000])])


VIT_PATCHES = {"vit_b16": 16, "vit_b32": 32}


def vit(name: str, batch: int, weights: str, seed: int, dtype: str) -> onnx.ModelProto:
    """timm's ``vit_base_patch16_224`` / ``vit_base_patch32_224``: the patch stem, a class
    token and learned position embedding, 12 pre-LayerNorm blocks (hidden 768, 12 heads, MLP
    3072, exact GELU, LayerNorm epsilon 1e-6), a final LayerNorm, the head on the class
    token."""
    width, eps = 768, 1e-6
    g = GraphWriter(weights, seed, dtype)
    y, side = patch_embed(g, batch, VIT_PATCHES[name], width)
    seq = side * side + 1
    y = g.one("Reshape", [y, g.ints([batch, side * side, width])])
    cls = g.weight("cls_token", (1, 1, width), width)
    cls = g.one("Expand", [cls, g.ints([batch, 1, width])])
    y = g.one("Concat", [cls, y], axis=1)
    x = g.one("Add", [y, g.weight("pos_embed", (1, seq, width), width)])
    for _ in range(12):
        y = attention(g, layer_norm(g, x, width, eps), batch, seq, width, 12)
        x = g.one("Add", [x, y])
        x = g.one("Add", [x, mlp(g, layer_norm(g, x, width, eps), width, 4 * width)])
    x = layer_norm(g, x, width, eps)
    cls = g.one("Gather", [x, g.tensor("index", np.asarray(0, np.int64))], axis=1)
    return classifier(g, cls, width, batch, name)


SWIN_WINDOW, SWIN_DEPTHS, SWIN_HEADS = 7, (2, 2, 6, 2), (3, 6, 12, 24)


def roll(g: GraphWriter, x: str, shift: int, sizes: Sequence[int]) -> str:
    """``torch.roll(x, (shift, shift), dims=(1, 2))`` as the exporter writes it: per axis, a
    Slice of the tail and of the head, and their Concat."""
    for axis, size in zip((1, 2), sizes, strict=True):
        cut = (-shift) % size
        axes = g.ints([axis])
        tail = g.one("Slice", [x, g.ints([cut]), g.ints([size]), axes])
        head = g.one("Slice", [x, g.ints([0]), g.ints([cut]), axes])
        x = g.one("Concat", [tail, head], axis=axis)
    return x


def windows(g: GraphWriter, x: str, batch: int, side: int, width: int, merge: bool) -> str:
    """timm's ``window_partition`` ([batch, side, side, width] -> [windows, 49, width]) or,
    with ``merge``, ``window_reverse``: a 6-d Reshape, Transpose and Reshape."""
    n, w = side // SWIN_WINDOW, SWIN_WINDOW
    inner = [batch, n, n, w, w, width] if merge else [batch, n, w, n, w, width]
    out = [batch, side, side, width] if merge else [batch * n * n, w * w, width]
    y = g.one("Reshape", [x, g.ints(inner)])
    y = g.one("Transpose", [y], perm=[0, 1, 3, 2, 4, 5])
    return g.one("Reshape", [y, g.ints(out)])


def relative_position_bias(g: GraphWriter, heads: int) -> str:
    """The block's relative position bias, [1, heads, 49, 49]: its learned table of (2w-1)^2
    rows gathered by the constant index, folded (its elements still count as parameters)."""
    w = SWIN_WINDOW
    coords = np.stack(np.meshgrid(np.arange(w), np.arange(w), indexing="ij")).reshape(2, -1)
    relative = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0) + (w - 1)
    index = relative[..., 0] * (2 * w - 1) + relative[..., 1]
    table = np.full(((2 * w - 1) ** 2, heads), 0.02, np.float32)
    if g.weights == "random":
        table = (g.rng.standard_normal(table.shape) * 0.02).astype(np.float32)
    bias = table[index.reshape(-1)].reshape(w * w, w * w, heads).transpose(2, 0, 1)
    return g.buffer("relative_position_bias", bias[None], folded_parameters=table.size)


def shift_mask(g: GraphWriter, side: int, shift: int) -> str:
    """timm's attention mask of the shifted windows, [1, windows, 1, 49, 49]: -100 between
    positions of different regions of the rolled image, 0 within one."""
    w = SWIN_WINDOW
    regions = np.zeros((side, side), np.float32)
    bounds = (slice(0, -w), slice(-w, -shift), slice(-shift, None))
    for label, (rows, cols) in enumerate((r, c) for r in bounds for c in bounds):
        regions[rows, cols] = label
    n = side // w
    labels = regions.reshape(n, w, n, w).transpose(0, 2, 1, 3).reshape(n * n, w * w)
    mask = np.where(labels[:, None, :] != labels[:, :, None], -100.0, 0.0)
    return g.buffer("attn_mask", mask[None, :, None])


def swin_block(
    g: GraphWriter, x: str, batch: int, side: int, width: int, heads: int, shift: int
) -> str:
    """One Swin block on [batch, side, side, width]: (shifted) window attention with the
    relative position bias, then the MLP, each pre-LayerNorm and residual."""
    y = layer_norm(g, x, width, 1e-5)
    if shift:
        y = roll(g, y, -shift, (side, side))
    count, area = (side // SWIN_WINDOW) ** 2, SWIN_WINDOW * SWIN_WINDOW
    position_bias = relative_position_bias(g, heads)
    mask = shift_mask(g, side, shift) if shift else None

    def bias(scores: str) -> str:
        scores = g.one("Add", [scores, position_bias])
        if mask is None:
            return scores
        # the mask broadcasts over the batch: through a 5-d view of the scores
        scores = g.one("Reshape", [scores, g.ints([batch, count, heads, area, area])])
        scores = g.one("Add", [scores, mask])
        return g.one("Reshape", [scores, g.ints([batch * count, heads, area, area])])

    y = windows(g, y, batch, side, width, merge=False)
    y = attention(g, y, batch * count, area, width, heads, bias)
    y = windows(g, y, batch, side, width, merge=True)
    if shift:
        y = roll(g, y, shift, (side, side))
    x = g.one("Add", [x, y])
    return g.one("Add", [x, mlp(g, layer_norm(g, x, width, 1e-5), width, 4 * width)])


def patch_merging(g: GraphWriter, x: str, side: int, width: int) -> str:
    """timm's (v1) ``PatchMerging``: the four strided 2x2 phases concatenated on channels
    ([batch, side / 2, side / 2, 4 width]), LayerNorm, a linear map to 2 width without bias."""
    axes, steps, end = g.ints([1, 2]), g.ints([2, 2]), g.ints([side, side])
    phases = [
        g.one("Slice", [x, g.ints([row, col]), end, axes, steps])
        for col, row in ((0, 0), (0, 1), (1, 0), (1, 1))
    ]
    y = layer_norm(g, g.one("Concat", phases, axis=-1), 4 * width, 1e-5)
    return linear(g, y, 4 * width, 2 * width, bias=False)


def swin(name: str, batch: int, weights: str, seed: int, dtype: str) -> onnx.ModelProto:
    """timm's ``swin_tiny_patch4_window7_224``: the 4x4 patch stem and LayerNorm (embed 96),
    four stages of 2 / 2 / 6 / 2 blocks (3 / 6 / 12 / 24 heads, window 7, every second block
    shifted by 3 but in the last stage, whose 7x7 map is one window), patch merging between
    them, a final LayerNorm, the average over positions and the head."""
    g = GraphWriter(weights, seed, dtype)
    width = 96
    x, side = patch_embed(g, batch, 4, width)
    x = layer_norm(g, x, width, 1e-5)
    for stage, (depth, heads) in enumerate(zip(SWIN_DEPTHS, SWIN_HEADS, strict=True)):
        if stage > 0:
            x = patch_merging(g, x, side, width)
            side, width = side // 2, 2 * width
        shift = SWIN_WINDOW // 2 if side > SWIN_WINDOW else 0
        for index in range(depth):
            x = swin_block(g, x, batch, side, width, heads, shift if index % 2 else 0)
    x = layer_norm(g, x, width, 1e-5)
    x = g.one("ReduceMean", [x], axes=[1, 2], keepdims=0)
    return classifier(g, x, width, batch, name)


def build(
    name: str,
    batch: int = 1,
    seq: int = 512,
    weights: str = "random",
    seed: int = 0,
    dtype: str = "float32",
) -> onnx.ModelProto:
    """The ONNX model of architecture ``name`` at ``batch`` (and ``seq`` for BERT), its
    floating-point tensors in ``dtype`` ("float32" or "float16")."""
    if name not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {name!r}; choose from {', '.join(ARCHITECTURES)}")
    if batch < 1:
        raise ValueError(f"batch must be at least 1, not {batch}")
    if name in BERT_SIZES:
        return bert(name, batch, seq, weights, seed, dtype)
    if name in VIT_PATCHES:
        return vit(name, batch, weights, seed, dtype)
    if name == "swin_t":
        return swin(name, batch, weights, seed, dtype)
    return resnet(name, batch, weights, seed, dtype)


def parameter_count(model: onnx.ModelProto) -> int:
    """Elements of the trainable tensors, as PyTorch counts parameters: float initializers
    but BatchNorm's running statistics and other buffers, position ids, shapes and 0-d
    constants; plus the parameters folded into buffers (Swin's position bias tables)."""
    folded = {p.key: p.value for p in model.metadata_props}.get(FOLDED_PARAMETERS, "0")
    return int(folded) + sum(
        math.prod(t.dims)
        for t in model.graph.initializer
        if t.data_type in DTYPES.values()
        and len(t.dims) > 0
        and "running_" not in t.name
        and not t.name.startswith(BUFFER)
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("name", choices=ARCHITECTURES)
    ap.add_argument("output")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seq", type=int, default=512, help="sequence length (bert_base)")
    ap.add_argument("--weights", choices=("random", "splat"), default="random")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dtype", choices=tuple(DTYPES), default="float32")
    args = ap.parse_args()
    model = build(args.name, args.batch, args.seq, args.weights, args.seed, args.dtype)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(out))
    print(f"wrote {out}: {args.name}, batch {args.batch}, {parameter_count(model):,} parameters")


if __name__ == "__main__":
    main()
