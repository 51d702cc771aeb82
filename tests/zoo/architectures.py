"""More zoo families for :mod:`tests.zoo.make_exports`: architectures whose exports carry
patterns the first families did not (run by hand with torch, like ``make_exports``).

Contract: :data:`FAMILIES` and :data:`INPUT_NAMES` have the shape of ``make_exports``'s
tables and are merged into them; each module has random weights, written as its source
model writes it:

* ``convnext``: ConvNeXt (Liu et al. 2022): 4x4 patchify stem, depthwise 7x7 convs, the
  channels-last LayerNorm between two permutes, a GELU MLP, layer scale, and the
  channels-first LayerNorm written out as ConvNeXt's ``LayerNorm2d`` does (mean over C).
* ``unet``: a two-level U-Net: BatchNorm conv blocks, max-pool, ConvTranspose2d
  upsampling, skip concatenation, a sigmoid mask.
* ``cached_gpt``: a GPT-2 layer with a KV cache (HF's ``past_key_values``): ``past_key`` /
  ``past_value`` ``[batch, heads, past, head_dim]`` in, the concatenated ``present_*`` out,
  positions from ``past``, the causal mask sliced at ``[past, past + sequence]``; at the
  first step ``past`` is 0.
* ``clip_text``: CLIP's text tower on ``nn.TransformerEncoderLayer`` (pre-norm, causal
  ``src_mask``), pooled at each row's ``argmax`` token (``x[arange(b), ids.argmax(-1)]``).
* ``conformer``: a Conformer block on ``nn.MultiheadAttention``: half-step SiLU
  feed-forwards, the convolution module (pointwise conv, GLU, depthwise 1-D conv of 15,
  BatchNorm1d, SiLU, pointwise conv).
* ``cross_decoder``: ``nn.TransformerDecoderLayer``: causal self-attention and
  cross-attention to a memory of another length.
* ``aspp``: a DeepLabV3-style head: a strided backbone, atrous 3x3 branches (dilations 2, 4,
  6), an image-pooling branch upsampled to the feature map's run-time size, the logits
  upsampled bilinearly to the input's.
* ``tcn``: a temporal convolutional network: causal dilated 1-D convolutions (left
  padding by ``F.pad``), residual ReLU blocks.
* ``moe``: a mixture-of-experts layer: a softmax router, top-2 experts by ``torch.topk``,
  the weights renormalised and spread with ``F.one_hot``, every expert's GELU MLP stacked
  and mixed (dense dispatch, as small MoE exports do).

* ``gcn``: a two-layer graph convolution as PyTorch Geometric-free code writes it: node
  features gathered by edge source (``x[src]``), summed into the edge targets by
  ``scatter_add`` (ScatterElements with reduction add), divided by the in-degree (another
  ``scatter_add`` of ones); dynamic node and edge counts.
* ``espcn``: an ESPCN super-resolution net: tanh convolutions to ``r²`` channels and
  ``nn.PixelShuffle(r)`` (DepthToSpace, CRD), a sigmoid.

* ``dlrm``: a DLRM-style recommender: a bottom MLP on dense features, embedding tables
  of sparse ids, pairwise dot interactions (``bmm``) picked at the strict lower triangle
  by constant index lists (``z[:, li, lj]``), a top MLP with a sigmoid.

* ``stn``: a spatial transformer: a localisation net's affine map, ``F.affine_grid`` and
  ``F.grid_sample`` (bilinear, zeros, ``align_corners=False``: GridSample), a conv.

The three on ``nn.MultiheadAttention`` are zoo models as ``<family>_dynamo`` only: the
classic exporter bakes the traced batch and sequence into MHA's reshapes (onnxruntime
itself fails on other shapes).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F  # noqa: N812 - the name every PyTorch model uses
from torch import Tensor, nn

VOCAB = 100


class LayerNorm2d(nn.Module):
    """ConvNeXt's channels-first LayerNorm, as its source writes it."""

    def __init__(self, channels: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))
        self.eps = eps

    def forward(self, x: Tensor) -> Tensor:
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class ConvNeXtBlock(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.dwconv = nn.Conv2d(channels, channels, 7, padding=3, groups=channels)
        self.norm = nn.LayerNorm(channels, eps=1e-6)
        self.pwconv1 = nn.Linear(channels, 4 * channels)
        self.pwconv2 = nn.Linear(4 * channels, channels)
        self.gamma = nn.Parameter(0.5 * torch.ones(channels))

    def forward(self, x: Tensor) -> Tensor:
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.pwconv2(F.gelu(self.pwconv1(self.norm(y))))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


class ConvNeXt(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 4, stride=4), LayerNorm2d(32))
        self.stage1 = nn.Sequential(ConvNeXtBlock(32), ConvNeXtBlock(32))
        self.downsample = nn.Sequential(LayerNorm2d(32), nn.Conv2d(32, 64, 2, stride=2))
        self.stage2 = ConvNeXtBlock(64)
        self.norm = nn.LayerNorm(64)
        self.head = nn.Linear(64, 10)

    def forward(self, x: Tensor) -> Tensor:
        x = self.stage2(self.downsample(self.stage1(self.stem(x))))
        return self.head(self.norm(x.mean([-2, -1])))


def _unet_block(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1),
        nn.BatchNorm2d(cout),
        nn.ReLU(),
        nn.Conv2d(cout, cout, 3, padding=1),
        nn.ReLU(),
    )


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc1, self.enc2, self.bottom = (
            _unet_block(3, 8),
            _unet_block(8, 16),
            _unet_block(16, 32),
        )
        self.up2, self.dec2 = nn.ConvTranspose2d(32, 16, 2, stride=2), _unet_block(32, 16)
        self.up1, self.dec1 = nn.ConvTranspose2d(16, 8, 2, stride=2), _unet_block(16, 8)
        self.out = nn.Conv2d(8, 2, 1)

    def forward(self, x: Tensor) -> Tensor:
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        b = self.bottom(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(b), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        return torch.sigmoid(self.out(d1))


class CachedGpt(nn.Module):
    """One GPT-2 layer and its head, with HF's KV cache."""

    def __init__(self, hidden: int = 48, heads: int = 4, max_positions: int = 64):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.wte, self.wpe = nn.Embedding(VOCAB, hidden), nn.Embedding(max_positions, hidden)
        self.ln_1, self.ln_2, self.ln_f = (
            nn.LayerNorm(hidden),
            nn.LayerNorm(hidden),
            nn.LayerNorm(hidden),
        )
        self.c_attn, self.c_proj = nn.Linear(hidden, 3 * hidden), nn.Linear(hidden, hidden)
        self.c_fc, self.mlp_proj = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)
        self.lm_head = nn.Linear(hidden, VOCAB, bias=False)
        causal = torch.tril(torch.ones(max_positions, max_positions))
        self.register_buffer("bias", causal.view(1, 1, max_positions, max_positions))

    def forward(self, input_ids: Tensor, past_key: Tensor, past_value: Tensor):
        batch, seq = input_ids.shape
        past = past_key.shape[2]
        positions = torch.arange(past, past + seq, dtype=torch.long).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(positions)
        q, k, v = self.c_attn(self.ln_1(x)).split(self.heads * self.head_dim, dim=2)

        def heads(t: Tensor) -> Tensor:
            return t.view(batch, seq, self.heads, self.head_dim).transpose(1, 2)

        q = heads(q)
        k = torch.cat([past_key, heads(k)], dim=2)
        v = torch.cat([past_value, heads(v)], dim=2)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        total = k.shape[2]
        mask = self.bias[:, :, total - seq : total, :total]  # type: ignore[index]
        scores = torch.where(mask.bool(), scores, torch.tensor(torch.finfo(scores.dtype).min))
        attended = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, seq, -1)
        x = x + self.c_proj(attended)
        x = x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))
        return self.lm_head(self.ln_f(x)), k, v


class ClipText(nn.Module):
    def __init__(self, hidden: int = 48, heads: int = 4, max_positions: int = 32):
        super().__init__()
        self.token_embedding = nn.Embedding(VOCAB, hidden)
        self.position_embedding = nn.Parameter(0.02 * torch.randn(max_positions, hidden))
        self.layer = nn.TransformerEncoderLayer(
            hidden,
            heads,
            4 * hidden,
            dropout=0.0,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        self.final_layer_norm = nn.LayerNorm(hidden)
        self.text_projection = nn.Linear(hidden, 32, bias=False)

    def forward(self, input_ids: Tensor) -> Tensor:
        seq = input_ids.shape[1]
        x = self.token_embedding(input_ids) + self.position_embedding[:seq]
        causal = torch.full((seq, seq), float("-inf")).triu(1)
        x = self.final_layer_norm(self.layer(x, src_mask=causal))
        pooled = x[torch.arange(x.shape[0]), input_ids.argmax(dim=-1)]
        return self.text_projection(pooled)


def _feed_forward(hidden: int) -> nn.Sequential:
    return nn.Sequential(
        nn.LayerNorm(hidden),
        nn.Linear(hidden, 4 * hidden),
        nn.SiLU(),
        nn.Linear(4 * hidden, hidden),
    )


class Conformer(nn.Module):
    def __init__(self, features: int = 40, hidden: int = 32, heads: int = 4):
        super().__init__()
        self.input_projection = nn.Linear(features, hidden)
        self.ff1, self.ff2 = _feed_forward(hidden), _feed_forward(hidden)
        self.attn_norm = nn.LayerNorm(hidden)
        self.attn = nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.conv_norm = nn.LayerNorm(hidden)
        self.pointwise1 = nn.Conv1d(hidden, 2 * hidden, 1)
        self.depthwise = nn.Conv1d(hidden, hidden, 15, padding=7, groups=hidden)
        self.batch_norm = nn.BatchNorm1d(hidden)
        self.pointwise2 = nn.Conv1d(hidden, hidden, 1)
        self.final_norm = nn.LayerNorm(hidden)

    def forward(self, features: Tensor) -> Tensor:
        x = self.input_projection(features)
        x = x + 0.5 * self.ff1(x)
        y = self.attn_norm(x)
        x = x + self.attn(y, y, y, need_weights=False)[0]
        y = self.conv_norm(x).transpose(1, 2)
        y = F.glu(self.pointwise1(y), dim=1)
        y = self.pointwise2(F.silu(self.batch_norm(self.depthwise(y))))
        x = x + y.transpose(1, 2)
        x = x + 0.5 * self.ff2(x)
        return self.final_norm(x)


class CrossDecoder(nn.Module):
    def __init__(self, hidden: int = 48, heads: int = 4):
        super().__init__()
        self.layer = nn.TransformerDecoderLayer(
            hidden, heads, 4 * hidden, dropout=0.0, batch_first=True
        )

    def forward(self, tgt: Tensor, memory: Tensor) -> Tensor:
        seq = tgt.shape[1]
        causal = torch.full((seq, seq), float("-inf")).triu(1)
        return self.layer(tgt, memory, tgt_mask=causal)


class Aspp(nn.Module):
    def __init__(self, classes: int = 6):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2, 1), nn.ReLU(), nn.Conv2d(16, 32, 3, 2, 1), nn.ReLU()
        )
        atrous = [nn.Conv2d(32, 16, 3, padding=d, dilation=d) for d in (2, 4, 6)]
        self.branches = nn.ModuleList([nn.Conv2d(32, 16, 1), *atrous])
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(32, 16, 1), nn.ReLU())
        self.project = nn.Conv2d(5 * 16, 16, 1)
        self.classify = nn.Conv2d(16, classes, 1)

    def forward(self, x: Tensor) -> Tensor:
        f = self.backbone(x)
        outs = [F.relu(b(f)) for b in self.branches]
        outs.append(F.interpolate(self.pool(f), size=f.shape[-2:], mode="bilinear"))
        y = self.classify(F.relu(self.project(torch.cat(outs, 1))))
        return F.interpolate(y, size=x.shape[-2:], mode="bilinear", align_corners=False)


class Tcn(nn.Module):
    def __init__(self, channels: int = 24, kernel: int = 3):
        super().__init__()
        self.kernel = kernel
        self.inp = nn.Conv1d(8, channels, 1)
        self.convs = nn.ModuleList(
            nn.Conv1d(channels, channels, kernel, dilation=d) for d in (1, 2, 4, 8)
        )
        self.out = nn.Conv1d(channels, 4, 1)

    def forward(self, x: Tensor) -> Tensor:
        h = self.inp(x)
        for conv in self.convs:
            pad = (self.kernel - 1) * conv.dilation[0]
            h = h + torch.relu(conv(F.pad(h, (pad, 0))))
        return self.out(h)


class Moe(nn.Module):
    def __init__(self, hidden: int = 32, experts: int = 4):
        super().__init__()
        self.router = nn.Linear(hidden, experts)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(hidden, 64), nn.GELU(), nn.Linear(64, hidden))
            for _ in range(experts)
        )

    def forward(self, x: Tensor) -> Tensor:
        logits = self.router(x)
        weights, chosen = torch.topk(logits.softmax(-1), 2, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        spread = (F.one_hot(chosen, logits.shape[-1]).to(x.dtype) * weights.unsqueeze(-1)).sum(-2)
        outs = torch.stack([expert(x) for expert in self.experts], -1)
        return (outs * spread.unsqueeze(-2)).sum(-1)


class Gcn(nn.Module):
    def __init__(self, features: int = 16, hidden: int = 32, classes: int = 4):
        super().__init__()
        self.lin1 = nn.Linear(features, hidden)
        self.lin2 = nn.Linear(hidden, classes)

    def forward(self, x: Tensor, edges: Tensor) -> Tensor:
        src, dst = edges[0], edges[1]
        msg = self.lin1(x)[src]
        index = dst.unsqueeze(1).expand_as(msg)
        agg = torch.zeros(x.shape[0], msg.shape[1]).scatter_add(0, index, msg)
        ones = torch.ones_like(dst, dtype=x.dtype)
        degree = torch.zeros(x.shape[0]).scatter_add(0, dst, ones).clamp(min=1)
        return self.lin2(F.relu(agg / degree.unsqueeze(1))).log_softmax(-1)


class Espcn(nn.Module):
    def __init__(self, scale: int = 3):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(1, 32, 5, padding=2),
            nn.Tanh(),
            nn.Conv2d(32, 16, 3, padding=1),
            nn.Tanh(),
            nn.Conv2d(16, scale * scale, 3, padding=1),
        )
        self.shuffle = nn.PixelShuffle(scale)

    def forward(self, image: Tensor) -> Tensor:
        return torch.sigmoid(self.shuffle(self.body(image)))


class Dlrm(nn.Module):
    def __init__(self, tables: int = 4, rows: int = 50, width: int = 16):
        super().__init__()
        self.embeddings = nn.ModuleList(nn.Embedding(rows, width) for _ in range(tables))
        self.bottom = nn.Sequential(nn.Linear(13, 32), nn.ReLU(), nn.Linear(32, width), nn.ReLU())
        n = tables + 1
        li, lj = torch.tril_indices(n, n, offset=-1)
        self.register_buffer("li", li)
        self.register_buffer("lj", lj)
        pairs = n * (n - 1) // 2
        self.top = nn.Sequential(nn.Linear(width + pairs, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, dense: Tensor, sparse: Tensor) -> Tensor:
        x = self.bottom(dense)
        tables = [e(sparse[:, i]) for i, e in enumerate(self.embeddings)]
        features = torch.stack([x, *tables], 1)
        z = torch.bmm(features, features.transpose(1, 2))
        return torch.sigmoid(self.top(torch.cat([x, z[:, self.li, self.lj]], 1)))


class Stn(nn.Module):
    """A spatial transformer (Jaderberg et al. 2015): a localisation net predicts an affine
    map (near the identity), ``F.affine_grid`` makes its sampling grid and
    ``F.grid_sample`` (bilinear, zeros, ``align_corners=False``) resamples the image, a
    convolution follows."""

    def __init__(self):
        super().__init__()
        self.loc = nn.Sequential(
            nn.Conv2d(1, 8, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
            nn.Linear(8, 6),
        )  # fmt: skip
        self.loc[-1].weight.data.mul_(0.1)
        self.register_buffer("identity", torch.tensor([[1.0, 0, 0], [0, 1.0, 0]]))
        self.head = nn.Conv2d(1, 4, 3, padding=1)

    def forward(self, image: Tensor) -> Tensor:
        theta = self.loc(image).view(-1, 2, 3) + self.identity
        grid = F.affine_grid(theta, list(image.shape), align_corners=False)
        sampled = F.grid_sample(image, grid, mode="bilinear", padding_mode="zeros",
                                align_corners=False)  # fmt: skip
        return self.head(sampled)


FAMILIES = {
    "convnext": (
        ConvNeXt,
        lambda: (torch.randn(1, 3, 64, 64),),
        {"pixel_values": {0: "batch", 2: "height", 3: "width"}},
        ["logits"],
    ),
    "unet": (
        UNet,
        lambda: (torch.randn(1, 3, 64, 64),),
        {"image": {0: "batch", 2: "height", 3: "width"}},
        ["mask"],
    ),
    "cached_gpt": (
        CachedGpt,
        lambda: (
            torch.randint(0, VOCAB, (2, 3)),
            torch.randn(2, 4, 5, 12),
            torch.randn(2, 4, 5, 12),
        ),
        {
            "input_ids": {0: "batch", 1: "sequence"},
            "past_key": {0: "batch", 2: "past"},
            "past_value": {0: "batch", 2: "past"},
        },
        ["logits", "present_key", "present_value"],
    ),
    "clip_text": (
        ClipText,
        lambda: (torch.randint(0, VOCAB, (2, 7)),),
        {"input_ids": {0: "batch", 1: "sequence"}},
        ["text_embeds"],
    ),
    "conformer": (
        Conformer,
        lambda: (torch.randn(2, 50, 40),),
        {"features": {0: "batch", 1: "frames"}},
        ["encoded"],
    ),
    "cross_decoder": (
        CrossDecoder,
        lambda: (torch.randn(2, 7, 48), torch.randn(2, 11, 48)),
        {"tgt": {0: "batch", 1: "target"}, "memory": {0: "batch", 1: "source"}},
        ["out"],
    ),
    "aspp": (
        Aspp,
        lambda: (torch.randn(2, 3, 64, 48),),
        {"image": {0: "batch", 2: "height", 3: "width"}},
        ["logits"],
    ),
    "tcn": (
        Tcn,
        lambda: (torch.randn(2, 8, 50),),
        {"signal": {0: "batch", 2: "time"}},
        ["out"],
    ),
    "moe": (
        Moe,
        lambda: (torch.randn(2, 7, 32),),
        {"hidden": {0: "batch", 1: "sequence"}},
        ["out"],
    ),
}

FAMILIES["gcn"] = (
    Gcn,
    lambda: (torch.randn(10, 16), torch.randint(0, 10, (2, 30))),
    {"x": {0: "nodes"}, "edges": {1: "edges"}},
    ["log_probs"],
)
FAMILIES["espcn"] = (
    Espcn,
    lambda: (torch.randn(1, 1, 24, 30),),
    {"image": {0: "batch", 2: "height", 3: "width"}},
    ["upscaled"],
)

FAMILIES["dlrm"] = (
    Dlrm,
    lambda: (torch.randn(3, 13), torch.randint(0, 50, (3, 4))),
    {"dense": {0: "batch"}, "sparse": {0: "batch"}},
    ["click"],
)

FAMILIES["stn"] = (
    Stn,
    lambda: (torch.randn(2, 1, 28, 28),),
    {"image": {0: "batch"}},
    ["out"],
)

INPUT_NAMES = {
    "convnext": ["pixel_values"],
    "unet": ["image"],
    "cached_gpt": ["input_ids", "past_key", "past_value"],
    "clip_text": ["input_ids"],
    "conformer": ["features"],
    "cross_decoder": ["tgt", "memory"],
    "aspp": ["image"],
    "tcn": ["signal"],
    "moe": ["hidden"],
    "gcn": ["x", "edges"],
    "espcn": ["image"],
    "dlrm": ["dense", "sparse"],
    "stn": ["image"],
}
