"""Zoo families for :mod:`tests.zoo.make_exports` built around one exporter pattern each:
PyTorch idioms whose ONNX form the earlier families did not have (run by hand with torch).

Contract: :data:`FAMILIES` and :data:`INPUT_NAMES` have the shape of
``make_exports``'s tables and are merged into them; random weights.

* ``einsum``: multi-head attention written with ``torch.einsum`` (``bthd,bshd->bhts`` and
  back), a key-padding mask by ``masked_fill(-inf)``, ``logsumexp`` pooling over time and
  a ``std`` over features: Einsum, ReduceLogSumExp-style Log/Exp chains.
* ``fold``: ``F.unfold`` patches through a pointwise Conv1d and back with ``F.fold``
  (Col2Im, opset 18): overlapping 3x3 windows at stride 2 summed into the image (default
  exporter only, :data:`DYNAMO_ONLY`).
* ``masked``: a masked assignment of one value (``y[y < 0] = 0.5``: ``index_put`` with a
  boolean mask; the default exporter writes ScatterND at NonZero's positions) and
  ``repeat_interleave`` by a constant count.
* ``knn``: point-cloud edge features (DGCNN-style): pairwise ``torch.cdist``, the k nearest
  by ``topk(largest=False)``, neighbours gathered by ``torch.gather`` on an expanded
  table, a max over neighbours (classic exporter only: the default one has no ``cdist``).
* ``sdpa``: a grouped-query causal attention layer on
  ``F.scaled_dot_product_attention(enable_gqa=True)``, exported at opset 23 (default
  exporter only, :data:`DYNAMO_OPSETS`): one ONNX Attention op with 4 query and 1 KV heads.
* ``cosine``: ``F.normalize``d embeddings (ReduceL2), a cosine-similarity matrix against
  the flipped sequence (``torch.flip``), a ``tril`` mask, ``torch.roll``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F  # noqa: N812 - the name every PyTorch model uses
from torch import Tensor, nn


class EinsumAttention(nn.Module):
    def __init__(self, dim: int = 32, heads: int = 4):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.heads = heads

    def forward(self, x: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        b, t, d = x.shape
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads) for z in self.qkv(x).chunk(3, -1))
        scores = torch.einsum("bthd,bshd->bhts", q, k) / (d // self.heads) ** 0.5
        scores = scores.masked_fill(mask[:, None, None, :] == 0, float("-inf"))
        y = torch.einsum("bhts,bshd->bthd", scores.softmax(-1), v).reshape(b, t, d)
        y = self.out(y)
        return torch.logsumexp(y, dim=1), y.std(dim=-1, keepdim=True)


class FoldPatches(nn.Module):
    def __init__(self):
        super().__init__()
        self.mix = nn.Conv1d(27, 27, 1)

    def forward(self, x: Tensor) -> Tensor:
        patches = F.unfold(x, 3, padding=1, stride=2)
        return F.fold(self.mix(patches), x.shape[-2:], 3, padding=1, stride=2)


class MaskedFill(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x: Tensor) -> Tensor:
        y = self.linear(x)
        y[y < 0] = 0.5
        return torch.repeat_interleave(y, 2, dim=1)


class KnnEdges(nn.Module):
    def __init__(self, k: int = 4):
        super().__init__()
        self.embed = nn.Linear(3, 16)
        self.edge = nn.Linear(32, 16)
        self.k = k

    def forward(self, points: Tensor) -> Tensor:
        nearest = torch.cdist(points, points).topk(self.k, dim=-1, largest=False).indices
        f = self.embed(points)
        b, n, k = nearest.shape
        table = f.unsqueeze(1).expand(b, n, n, 16)
        neighbours = torch.gather(table, 2, nearest.unsqueeze(-1).expand(b, n, k, 16))
        centre = f.unsqueeze(2).expand(b, n, k, 16)
        return self.edge(torch.cat([centre, neighbours - centre], -1)).amax(2)


class SdpaLayer(nn.Module):
    def __init__(self, dim: int = 32, heads: int = 4, head_size: int = 8):
        super().__init__()
        self.query = nn.Linear(dim, heads * head_size)
        self.key_value = nn.Linear(dim, 2 * head_size)
        self.out = nn.Linear(heads * head_size, dim)
        self.heads, self.head_size = heads, head_size

    def forward(self, x: Tensor) -> Tensor:
        b, t, _ = x.shape
        q = self.query(x).view(b, t, self.heads, self.head_size).transpose(1, 2)
        k, v = self.key_value(x).view(b, t, 2, 1, self.head_size).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return self.out(y.transpose(1, 2).reshape(b, t, -1))


class CosineMatch(nn.Module):
    def __init__(self, vocab: int = 50):
        super().__init__()
        self.embed = nn.Embedding(vocab, 24)
        self.project = nn.Linear(24, 24)

    def forward(self, ids: Tensor) -> tuple[Tensor, Tensor]:
        e = F.normalize(self.project(self.embed(ids)), dim=-1)
        similarity = e @ torch.flip(e, dims=[1]).transpose(1, 2)
        t = similarity.shape[1]
        lower = torch.tril(torch.ones(t, t, dtype=torch.bool))
        return similarity.masked_fill(~lower, 0.0).sum(-1), torch.roll(e, 1, dims=1)


FAMILIES = {
    "einsum": (
        EinsumAttention,
        lambda: (torch.randn(2, 9, 32), torch.ones(2, 9, dtype=torch.long)),
        {"x": {0: "batch", 1: "sequence"}, "mask": {0: "batch", 1: "sequence"}},
        ["pooled", "spread"],
    ),
    "fold": (
        FoldPatches,
        lambda: (torch.randn(2, 3, 10, 14),),
        {"image": {0: "batch", 2: "height", 3: "width"}},
        ["folded"],
    ),
    "masked": (
        MaskedFill,
        lambda: (torch.randn(2, 5, 8),),
        {"x": {0: "batch", 1: "sequence"}},
        ["out"],
    ),
    "knn": (
        KnnEdges,
        lambda: (torch.randn(2, 12, 3),),
        {"points": {0: "batch", 1: "points"}},
        ["features"],
    ),
    "sdpa": (
        SdpaLayer,
        lambda: (torch.randn(2, 7, 32),),
        {"x": {0: "batch", 1: "sequence"}},
        ["out"],
    ),
    "cosine": (
        CosineMatch,
        lambda: (torch.randint(0, 50, (2, 7)),),
        {"ids": {0: "batch", 1: "sequence"}},
        ["scores", "rolled"],
    ),
}

INPUT_NAMES = {
    "einsum": ["x", "mask"],
    "fold": ["image"],
    "masked": ["x"],
    "knn": ["points"],
    "sdpa": ["x"],
    "cosine": ["ids"],
}

DYNAMO_ONLY = ("fold", "sdpa")
"""Families only the default exporter writes (``F.fold`` to an image size traced from the
input: the classic exporter's Col2Im wants it constant; SDPA as ONNX Attention)."""

DYNAMO_OPSETS = {"sdpa": 23}
"""Default-exporter opsets other than its own (ONNX Attention is opset 23)."""
