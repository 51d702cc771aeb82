"""Regenerate the Paddle exports of the model zoo (``tests/zoo/models/pd_*.onnx``).

Run by hand in a separate environment that has Paddle (the project itself never needs it)::

    python3 -m venv /tmp/paddleenv
    /tmp/paddleenv/bin/pip install paddlepaddle paddle2onnx onnx
    /tmp/paddleenv/bin/python tests/zoo/make_paddle_exports.py           # every model
    /tmp/paddleenv/bin/python tests/zoo/make_paddle_exports.py pd_ernie  # one of them

Contract: each model is a small Paddle ``nn.Layer`` with random weights (``paddle.seed``
fixed, hidden 16-32) written the way PaddleNLP / PaddleDetection / PaddleOCR write theirs,
exported with ``paddle.onnx.export`` (Paddle 3's PIR program through Paddle2ONNX 2, opset
13) with every batch / sequence / spatial dim dynamic (``None`` in the ``InputSpec``), so
the graphs carry Paddle2ONNX's idioms: ``paddle.scale`` as ``Mul`` then ``Add`` (of +0.0
after the query split), sizes through ``Shape -> Slice -> Squeeze``, ``Range`` position ids,
``Identity`` chains, a ``Resize`` to a size read from another tensor's shape. A file is
written only when it is under 300 KB. Measured with Paddle 3.3.1 and Paddle2ONNX 2.1.0.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import paddle
import paddle.nn.functional as F  # noqa: N812 - the name every Paddle model uses
from paddle import nn
from paddle.static import InputSpec

MODELS_DIR = Path(__file__).resolve().parent / "models"
MAX_BYTES = 300_000


class ErnieTiny(nn.Layer):
    """ERNIE / BERT in PaddleNLP's style: word + position (``arange`` of the sequence
    length) + token-type embeddings, Paddle's ``TransformerEncoder`` (post-LN, GELU) with
    an additive ``(1 - mask) * -1e4`` mask, a tanh pooler and a classifier."""

    def __init__(self, vocab: int = 100, d: int = 32, heads: int = 4, layers: int = 2) -> None:
        super().__init__()
        self.word = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(64, d)
        self.tok = nn.Embedding(2, d)
        self.norm = nn.LayerNorm(d)
        layer = nn.TransformerEncoderLayer(d, heads, 2 * d, dropout=0.0, activation="gelu")
        self.enc = nn.TransformerEncoder(layer, layers)
        self.pool = nn.Linear(d, d)
        self.cls = nn.Linear(d, 3)

    def forward(self, input_ids, token_type_ids, attention_mask):  # noqa: ANN001, ANN201
        pos = paddle.arange(paddle.shape(input_ids)[1], dtype="int64").unsqueeze(0)
        x = self.norm(self.word(input_ids) + self.pos(pos) + self.tok(token_type_ids))
        mask = (1.0 - attention_mask.astype("float32").unsqueeze([1, 2])) * -1e4
        x = self.enc(x, mask)
        return self.cls(paddle.tanh(self.pool(x[:, 0]))), x


def conv_bn(cin: int, cout: int, k: int, stride: int = 1) -> nn.Sequential:
    """Conv (no bias) + BatchNorm + Hardswish: PP-LCNet's ConvBNLayer."""
    return nn.Sequential(
        nn.Conv2D(cin, cout, k, stride, k // 2, bias_attr=False),
        nn.BatchNorm2D(cout),
        nn.Hardswish(),
    )


class DetHead(nn.Layer):
    """A PicoDet-style detector: a strided backbone, a lateral 1x1 conv upsampled (nearest)
    to the finer map's size read from its shape, a shared head split into class scores and
    box offsets, boxes decoded as centre +- exp(wh) / 2."""

    def __init__(self, classes: int = 4) -> None:
        super().__init__()
        self.b1, self.b2, self.b3 = (
            conv_bn(3, 16, 3, 2),
            conv_bn(16, 32, 3, 2),
            conv_bn(32, 64, 3, 2),
        )
        self.lat = nn.Conv2D(64, 32, 1)
        self.head = nn.Conv2D(32, classes + 4, 3, padding=1)
        self.classes = classes

    def forward(self, x):  # noqa: ANN001, ANN201
        c2 = self.b2(self.b1(x))
        p = c2 + F.interpolate(self.lat(self.b3(c2)), size=paddle.shape(c2)[2:], mode="nearest")
        cls, box = paddle.split(self.head(p), [self.classes, 4], axis=1)
        scores = F.sigmoid(cls).flatten(2)
        box = box.flatten(2).transpose([0, 2, 1])
        xy, wh = box[:, :, :2], paddle.exp(box[:, :, 2:])
        return paddle.concat([xy - wh / 2, xy + wh / 2], axis=-1), scores


class CrnnTiny(nn.Layer):
    """PaddleOCR's CRNN recogniser: convs and max pools to height 4, the feature map read
    as a sequence over its (dynamic) width, a bidirectional LSTM, a softmax over classes."""

    def __init__(self, classes: int = 20) -> None:
        super().__init__()
        self.convs = nn.Sequential(
            conv_bn(3, 16, 3), nn.MaxPool2D(2, 2), conv_bn(16, 32, 3), nn.MaxPool2D((2, 1), (2, 1))
        )
        self.rnn = nn.LSTM(32 * 4, 32, direction="bidirect")
        self.fc = nn.Linear(64, classes)

    def forward(self, x):  # noqa: ANN001, ANN201
        f = self.convs(x)
        b, w = paddle.shape(f)[0], paddle.shape(f)[3]
        f = f.transpose([0, 3, 1, 2]).reshape([b, w, f.shape[1] * f.shape[2]])
        y, _ = self.rnn(f)
        return F.softmax(self.fc(y), axis=2)


def _ids(name: str) -> InputSpec:
    return InputSpec([None, None], "int64", name)


MODELS: dict[str, tuple[Callable[[], nn.Layer], list[InputSpec]]] = {
    "pd_ernie": (
        ErnieTiny,
        [_ids("input_ids"), _ids("token_type_ids"), _ids("attention_mask")],
    ),
    "pd_dethead": (DetHead, [InputSpec([None, 3, None, None], "float32", "x")]),
    "pd_crnn": (CrnnTiny, [InputSpec([None, 3, 16, None], "float32", "x")]),
}


def export(name: str) -> Path:
    """Write ``tests/zoo/models/<name>.onnx``; fails when the file would exceed 300 KB."""
    make, specs = MODELS[name]
    paddle.seed(0)
    layer = make()
    layer.eval()
    with tempfile.TemporaryDirectory() as tmp:
        stem = Path(tmp) / name
        paddle.onnx.export(layer, str(stem), input_spec=specs, opset_version=13)
        data = stem.with_suffix(".onnx").read_bytes()
    if len(data) > MAX_BYTES:
        raise SystemExit(f"{name}: {len(data)} bytes, over the zoo's {MAX_BYTES}")
    path = MODELS_DIR / f"{name}.onnx"
    path.write_bytes(data)
    return path


if __name__ == "__main__":
    for model_name in sys.argv[1:] or list(MODELS):
        print(export(model_name))
