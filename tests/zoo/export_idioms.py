"""Zoo families for :mod:`tests.zoo.make_exports`, nineteenth session: the shapes of models
people export today that the earlier families did not have (run by hand with torch).

Contract: as :mod:`tests.zoo.export_patterns` — :data:`FAMILIES`, :data:`INPUT_NAMES`,
:data:`DYNAMO` (also exported with ``dynamo=True``) and :data:`DYNAMO_ONLY`; random weights.

* ``fnet``: FNet's token mixing, ``torch.fft.fft2(x).real`` (the default exporter: the real
  input made complex by a Concat with zeros, two DFTs), LayerNorms, a GELU MLP.
* ``bucketize``: ``argsort(descending)``, the sorted values gathered, ``torch.bucketize``
  into 9 boundaries (the classic exporter: a sum of comparisons; the default one: a binary
  search of GatherNDs), a per-bucket embedding summed.
* ``vocoder``: HiFi-GAN's generator in small: weight-normed (``parametrizations``)
  Conv1d, ConvTranspose1d upsampling by 4 and 2, dilated residual Conv1d with leaky ReLU,
  tanh.
* ``swin_pad``: a Swin block at any size: H and W padded to window multiples (shape
  arithmetic with Mod), the shifted windows by ``roll``, window partition and reverse by
  reshapes / permutes of computed sizes, the pad cropped.
* ``dino_pos``: a ViT at any resolution (DINOv2's ``interpolate_pos_encoding``): the
  position embeddings resized bicubically to the run-time patch grid, a class token.
* ``detr_pos``: DETR's sine position embedding from a padding mask (nearest-resized bool
  mask, ``cumsum`` over both axes, normalised, sin / cos interleaved by ``stack`` and
  ``flatten``) added to conv features.
* ``stft``: ``torch.stft`` (Hann window, ``return_complex``) magnitude, log, a Conv2d.
* ``ssd_scan``: a Mamba-2 style selective scan in its parallel form: ``cumsum`` of log
  decays, segment sums masked by ``tril`` before ``exp``, matmuls, a SiLU gate.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F  # noqa: N812 - the name every PyTorch model uses
from torch import Tensor, nn
from torch.nn.utils.parametrizations import weight_norm


class FNetLayer(nn.Module):
    def __init__(self, dim: int = 32):
        super().__init__()
        self.mix_norm, self.out_norm = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 64), nn.GELU(), nn.Linear(64, dim))

    def forward(self, x: Tensor) -> Tensor:
        x = self.mix_norm(x + torch.fft.fft2(x).real)
        return self.out_norm(x + self.mlp(x))


class Bucketize(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("bounds", torch.linspace(-2, 2, 9))
        self.embed = nn.Embedding(10, 8)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        order = x.argsort(-1, descending=True)
        ranked = torch.gather(x, -1, order)
        return self.embed(torch.bucketize(ranked, self.bounds)).sum(1), order


class Vocoder(nn.Module):
    def __init__(self, mels: int = 16, width: int = 32):
        super().__init__()
        self.pre = weight_norm(nn.Conv1d(mels, width, 7, padding=3))
        self.ups = nn.ModuleList(
            [
                weight_norm(nn.ConvTranspose1d(width, width // 2, 8, 4, padding=2)),
                weight_norm(nn.ConvTranspose1d(width // 2, width // 4, 4, 2, padding=1)),
            ]
        )
        self.blocks = nn.ModuleList(
            nn.ModuleList(weight_norm(nn.Conv1d(c, c, 3, dilation=d, padding=d)) for d in (1, 3, 5))
            for c in (width // 2, width // 4)
        )
        self.post = weight_norm(nn.Conv1d(width // 4, 1, 7, padding=3))

    def forward(self, mel: Tensor) -> Tensor:
        x = self.pre(mel)
        for up, block in zip(self.ups, self.blocks, strict=True):
            x = up(F.leaky_relu(x, 0.1))
            for conv in block:
                x = x + conv(F.leaky_relu(x, 0.1))
        return torch.tanh(self.post(F.leaky_relu(x)))


class SwinPadded(nn.Module):
    def __init__(self, dim: int = 16, window: int = 4, shift: int = 2):
        super().__init__()
        self.window, self.shift = window, shift
        self.embed = nn.Conv2d(3, dim, 2, 2)
        self.norm = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, 2, batch_first=True)

    def forward(self, image: Tensor) -> Tensor:
        x = self.embed(image).permute(0, 2, 3, 1)
        b, h, w, c = x.shape
        ws = self.window
        y = F.pad(self.norm(x), (0, 0, 0, (ws - w % ws) % ws, 0, (ws - h % ws) % ws))
        y = torch.roll(y, (-self.shift, -self.shift), (1, 2))
        hp, wp = y.shape[1], y.shape[2]
        windows = y.reshape(b, hp // ws, ws, wp // ws, ws, c).permute(0, 1, 3, 2, 4, 5)
        windows = windows.reshape(-1, ws * ws, c)
        windows = self.attn(windows, windows, windows, need_weights=False)[0]
        y = windows.reshape(b, hp // ws, wp // ws, ws, ws, c).permute(0, 1, 3, 2, 4, 5)
        y = torch.roll(y.reshape(b, hp, wp, c), (self.shift, self.shift), (1, 2))
        return x + y[:, :h, :w]


class DinoPositions(nn.Module):
    def __init__(self, dim: int = 32, patch: int = 4, grid: int = 6):
        super().__init__()
        self.patch, self.grid = patch, grid
        self.embed = nn.Conv2d(3, dim, patch, patch)
        self.cls = nn.Parameter(torch.randn(1, 1, dim))
        self.positions = nn.Parameter(torch.randn(1, 1 + grid * grid, dim))
        self.block = nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True, dropout=0.0)

    def forward(self, image: Tensor) -> Tensor:
        b, _, h, w = image.shape
        x = self.embed(image).flatten(2).transpose(1, 2)
        grid = self.positions[:, 1:].reshape(1, self.grid, self.grid, -1).permute(0, 3, 1, 2)
        size = (h // self.patch, w // self.patch)
        grid = F.interpolate(grid, size=size, mode="bicubic", align_corners=False)
        positions = torch.cat([self.positions[:, :1], grid.permute(0, 2, 3, 1).flatten(1, 2)], 1)
        x = torch.cat([self.cls.expand(b, -1, -1), x], 1) + positions
        return self.block(x)[:, 0]


class DetrPositions(nn.Module):
    def __init__(self, half: int = 16):
        super().__init__()
        self.half = half
        self.conv = nn.Conv2d(3, 2 * half, 3, 2, 1)

    def forward(self, image: Tensor, mask: Tensor) -> Tensor:
        features = self.conv(image)
        padded = F.interpolate(mask[:, None].float(), size=features.shape[-2:])[:, 0] > 0.5
        valid = (~padded).float()
        y, x = valid.cumsum(1), valid.cumsum(2)
        y = y / (y[:, -1:, :] + 1e-6) * 2 * math.pi
        x = x / (x[:, :, -1:] + 1e-6) * 2 * math.pi
        t = 10000 ** (2 * (torch.arange(self.half, dtype=torch.float32) // 2) / self.half)
        px, py = x[..., None] / t, y[..., None] / t
        px = torch.stack((px[..., 0::2].sin(), px[..., 1::2].cos()), 4).flatten(3)
        py = torch.stack((py[..., 0::2].sin(), py[..., 1::2].cos()), 4).flatten(3)
        return features + torch.cat((py, px), 3).permute(0, 3, 1, 2)


class Spectrogram(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("window", torch.hann_window(64))
        self.conv = nn.Conv2d(1, 4, 3, padding=1)

    def forward(self, wav: Tensor) -> Tensor:
        spectrum = torch.stft(wav, 64, 16, window=self.window, return_complex=True, center=False)
        return self.conv(torch.log(spectrum.abs() + 1e-6).unsqueeze(1))


class SelectiveScan(nn.Module):
    def __init__(self, dim: int = 16, state: int = 8):
        super().__init__()
        self.dim, self.state = dim, state
        self.project = nn.Linear(dim, 2 * dim + 2 * state + 1)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: Tensor) -> Tensor:
        t = x.shape[1]
        z, u, b, c, dt = self.project(x).split([self.dim] * 2 + [self.state] * 2 + [1], -1)
        decay = torch.cumsum(-F.softplus(dt), 1)
        segments = decay - decay.transpose(1, 2)
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
        weights = torch.exp(segments.masked_fill(~causal, float("-inf")))
        return self.out(((c @ b.transpose(1, 2)) * weights) @ u * F.silu(z))


def _images(*shape: int) -> tuple[Tensor]:
    return (torch.randn(*shape),)


_IMAGE = {0: "batch", 2: "height", 3: "width"}

FAMILIES = {
    "fnet": (
        FNetLayer,
        lambda: (torch.randn(2, 10, 32),),
        {"x": {0: "batch", 1: "sequence"}},
        ["out"],
    ),
    "bucketize": (
        Bucketize,
        lambda: (torch.randn(2, 7),),
        {"x": {0: "batch", 1: "items"}},
        ["pooled", "order"],
    ),
    "vocoder": (
        Vocoder,
        lambda: (torch.randn(2, 16, 20),),
        {"mel": {0: "batch", 2: "frames"}},
        ["audio"],
    ),
    "swin_pad": (SwinPadded, lambda: _images(2, 3, 20, 26), {"image": _IMAGE}, ["out"]),
    "dino_pos": (DinoPositions, lambda: _images(2, 3, 24, 32), {"image": _IMAGE}, ["pooled"]),
    "detr_pos": (
        DetrPositions,
        lambda: (torch.randn(2, 3, 20, 24), torch.rand(2, 20, 24) > 0.7),
        {"image": _IMAGE, "mask": {0: "batch", 1: "height", 2: "width"}},
        ["features"],
    ),
    "stft": (
        Spectrogram,
        lambda: (torch.randn(2, 400),),
        {"wav": {0: "batch", 1: "samples"}},
        ["out"],
    ),
    "ssd_scan": (
        SelectiveScan,
        lambda: (torch.randn(2, 12, 16),),
        {"x": {0: "batch", 1: "sequence"}},
        ["out"],
    ),
}

INPUT_NAMES = {
    "fnet": ["x"],
    "bucketize": ["x"],
    "vocoder": ["mel"],
    "swin_pad": ["image"],
    "dino_pos": ["image"],
    "detr_pos": ["image", "mask"],
    "stft": ["wav"],
    "ssd_scan": ["x"],
}

DYNAMO = ("fnet", "bucketize", "vocoder", "swin_pad", "dino_pos", "stft")
"""Families also (or only, :data:`DYNAMO_ONLY`) exported with ``dynamo=True``."""

DYNAMO_ONLY = ("fnet", "vocoder", "swin_pad", "dino_pos", "stft")
"""Families only the default exporter writes here: ``fft2`` and complex ``stft`` have no
classic form, the classic exporter bakes the traced sizes into ``nn.MultiheadAttention``'s
reshapes (dino_pos, swin_pad), and one vocoder export is enough."""
