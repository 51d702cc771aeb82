"""Regenerate the PyTorch-style exports of the model zoo (``tests/zoo/models/*.onnx``).

Run by hand in a separate environment that has torch (the project itself never needs it)::

    python3 -m venv /tmp/torchenv
    /tmp/torchenv/bin/pip install torch==2.13.0+cpu onnx onnxscript
    /tmp/torchenv/bin/python tests/zoo/make_exports.py            # every family
    /tmp/torchenv/bin/python tests/zoo/make_exports.py bert gpt2  # some of them
    /tmp/torchenv/bin/python tests/zoo/make_exports.py small_cnn_fp16  # a half variant

Contract: each family is a small module with random weights (``torch.manual_seed`` fixed,
hidden 32-64, one or two layers, vocabulary 100) written in the style of the HuggingFace /
Ultralytics source it imitates, exported with the classic TorchScript exporter
(``dynamo=False``, opset 17, ``dynamic_axes`` on batch and, where the family has one, on the
sequence / samples / frames / H / W axis), so the graphs carry the
Shape/Gather/Unsqueeze/Concat/Reshape arithmetic of real exports. The inputs and the
dynamic axes of each file are those of :data:`tests.zoo.zoo.MODELS`; a file is written
only when it is under 300 KB (otherwise the script fails). Files are deterministic for one
torch version, not across versions. ``<family>_fp16`` (the families of :data:`HALF`) is the
same module after ``.half()``, exported with float16 inputs: every float tensor is fp16,
except where the module casts (yolov8 decodes its boxes from float32 anchors and outputs
float32; LLaMA's and T5's RMSNorm and LLaMA's softmax compute in float32 and cast back, and
the attention masks use the model type's most negative value, as HF's half models do). ``<family>_dynamo`` (:data:`DYNAMO`) is the family through torch 2's default
exporter (``dynamo=True``: opset 18+, its own decompositions and symbolic dim names).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F  # noqa: N812 - the name every PyTorch model uses
from torch import Tensor, nn

if __package__:
    from tests.zoo import architectures, export_idioms, export_patterns
else:  # run as a script: tests/zoo/make_exports.py
    import architectures  # type: ignore[no-redef]
    import export_idioms  # type: ignore[no-redef]
    import export_patterns  # type: ignore[no-redef]

OUT = Path(__file__).resolve().parent / "models"
OPSET = 17
MAX_BYTES = 300_000
VOCAB = 100
MIN = torch.finfo(torch.float32).min


# ---- shared transformer pieces (HF style) -------------------------------------------------
class SelfAttention(nn.Module):
    """BERT-style multi-head attention: view/permute by computed sizes, additive mask."""

    def __init__(self, hidden: int, heads: int) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, hidden)

    def split(self, x: Tensor) -> Tensor:
        new_shape = x.size()[:-1] + (self.heads, self.head_dim)
        return x.view(new_shape).permute(0, 2, 1, 3)

    def forward(self, x: Tensor, mask: Tensor | None = None, bias: Tensor | None = None) -> Tensor:
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        if bias is not None:
            scores = scores + bias
        if mask is not None:
            scores = scores + mask
        probs = nn.functional.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.size()[:-2] + (self.heads * self.head_dim,))
        return self.out(ctx)


class EncoderLayer(nn.Module):
    """Post-LN (BERT) or pre-LN (Whisper / wav2vec2 stable) transformer layer, GELU (erf)."""

    def __init__(self, hidden: int, heads: int, ffn: int, pre_ln: bool = False) -> None:
        super().__init__()
        self.attn = SelfAttention(hidden, heads)
        self.ln1, self.ln2 = nn.LayerNorm(hidden, eps=1e-12), nn.LayerNorm(hidden, eps=1e-12)
        self.fc1, self.fc2 = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)
        self.pre_ln = pre_ln

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        if self.pre_ln:
            x = x + self.attn(self.ln1(x), mask)
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))
        x = self.ln1(x + self.attn(x, mask))
        return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))


def extended_mask(attention_mask: Tensor, dtype: torch.dtype) -> Tensor:
    """HF ``get_extended_attention_mask``: [b, s] -> [b, 1, 1, s], (1 - mask) * the most
    negative value of the model's float type (fp16's -65504 in a half model)."""
    ext = attention_mask[:, None, None, :].to(dtype)
    return (1.0 - ext) * torch.finfo(dtype).min


# ---- BERT ---------------------------------------------------------------------------------
class Bert(nn.Module):
    def __init__(self, hidden: int = 32, layers: int = 2, max_pos: int = 64) -> None:
        super().__init__()
        self.word = nn.Embedding(VOCAB, hidden, padding_idx=0)
        self.position = nn.Embedding(max_pos, hidden)
        self.token_type = nn.Embedding(2, hidden)
        self.register_buffer("position_ids", torch.arange(max_pos).expand((1, -1)))
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(EncoderLayer(hidden, 4, 4 * hidden) for _ in range(layers))
        self.pooler = nn.Linear(hidden, hidden)

    def forward(
        self, input_ids: Tensor, attention_mask: Tensor, token_type_ids: Tensor
    ) -> tuple[Tensor, Tensor]:
        seq = input_ids.size(1)
        position_ids = self.position_ids[:, 0:seq]
        x = self.word(input_ids) + self.token_type(token_type_ids) + self.position(position_ids)
        x = self.ln(x)
        mask = extended_mask(attention_mask, x.dtype)
        for layer in self.layers:
            x = layer(x, mask)
        return x, torch.tanh(self.pooler(x[:, 0]))


# ---- RoBERTa (position ids from input_ids != pad via CumSum) ------------------------------
class Roberta(nn.Module):
    PAD = 1

    def __init__(self, hidden: int = 32, max_pos: int = 66) -> None:
        super().__init__()
        self.word = nn.Embedding(VOCAB, hidden, padding_idx=self.PAD)
        self.position = nn.Embedding(max_pos, hidden, padding_idx=self.PAD)
        self.token_type = nn.Embedding(1, hidden)
        self.ln = nn.LayerNorm(hidden, eps=1e-5)
        self.layer = EncoderLayer(hidden, 4, 2 * hidden)
        self.head = nn.Linear(hidden, 3)

    def forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
        not_pad = input_ids.ne(self.PAD).int()
        position_ids = (torch.cumsum(not_pad, dim=1).type_as(not_pad) * not_pad).long() + self.PAD
        token_type_ids = torch.zeros_like(input_ids)
        x = self.word(input_ids) + self.position(position_ids) + self.token_type(token_type_ids)
        x = self.ln(x)
        x = self.layer(x, extended_mask(attention_mask, x.dtype))
        return self.head(torch.tanh(x[:, 0, :]))


# ---- GPT-2 (causal mask from a buffer, Conv1D as addmm) -----------------------------------
class Conv1D(nn.Module):
    def __init__(self, nf: int, nx: int) -> None:
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.1)
        self.bias = nn.Parameter(torch.randn(nf) * 0.1)

    def forward(self, x: Tensor) -> Tensor:
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class Gpt2Block(nn.Module):
    def __init__(self, hidden: int, heads: int, max_pos: int) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.ln_1, self.ln_2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.c_attn, self.c_proj = Conv1D(3 * hidden, hidden), Conv1D(hidden, hidden)
        self.c_fc, self.mlp_proj = Conv1D(4 * hidden, hidden), Conv1D(hidden, 4 * hidden)
        causal = torch.tril(torch.ones((max_pos, max_pos), dtype=torch.bool))
        self.register_buffer("bias", causal.view(1, 1, max_pos, max_pos), persistent=False)

    def heads_split(self, x: Tensor) -> Tensor:
        return x.view(x.size()[:-1] + (self.heads, self.head_dim)).permute(0, 2, 1, 3)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        h = self.ln_1(x)
        q, k, v = self.c_attn(h).split(self.heads * self.head_dim, dim=2)
        q, k, v = self.heads_split(q), self.heads_split(k), self.heads_split(v)
        w = torch.matmul(q, k.transpose(-1, -2)) / torch.full([], v.size(-1) ** 0.5, dtype=q.dtype)
        query_length, key_length = q.size(-2), k.size(-2)
        causal = self.bias[:, :, key_length - query_length : key_length, :key_length]
        w = torch.where(causal, w, torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype)) + mask
        a = torch.matmul(nn.functional.softmax(w, dim=-1), v).permute(0, 2, 1, 3).contiguous()
        a = a.view(a.size()[:-2] + (self.heads * self.head_dim,))
        x = x + self.c_proj(a)
        m = self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))
        return x + m


class Gpt2(nn.Module):
    def __init__(self, hidden: int = 32, layers: int = 2, max_pos: int = 64) -> None:
        super().__init__()
        self.wte, self.wpe = nn.Embedding(VOCAB, hidden), nn.Embedding(max_pos, hidden)
        self.blocks = nn.ModuleList(Gpt2Block(hidden, 4, max_pos) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)

    def forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
        input_shape = input_ids.size()
        position_ids = torch.arange(0, input_shape[-1], dtype=torch.long).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(position_ids)
        mask = extended_mask(attention_mask, x.dtype)
        for block in self.blocks:
            x = block(x, mask)
        return F.linear(self.ln_f(x), self.wte.weight)  # tied lm head


# ---- LLaMA (RMSNorm, rotary, SiLU-gated MLP, triu causal mask, GQA) -----------------------
def cast_to(t: Tensor, dtype: torch.dtype) -> Tensor:
    """``t.to(dtype)`` as HF's half models cast back, traced only when it casts (the float32
    exports keep the graphs they were committed with)."""
    return t if t.dtype == dtype else t.to(dtype)


class RmsNorm(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight, self.eps = nn.Parameter(1 + 0.1 * torch.randn(hidden)), eps

    def forward(self, x: Tensor) -> Tensor:
        variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        return self.weight * cast_to(x * torch.rsqrt(variance + self.eps), x.dtype)


def rotate_half(x: Tensor) -> Tensor:
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


class LlamaLayer(nn.Module):
    def __init__(self, hidden: int, heads: int, kv_heads: int) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.q = nn.Linear(hidden, hidden, bias=False)
        self.k = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o = nn.Linear(hidden, hidden, bias=False)
        self.gate = nn.Linear(hidden, 2 * hidden, bias=False)
        self.up = nn.Linear(hidden, 2 * hidden, bias=False)
        self.down = nn.Linear(2 * hidden, hidden, bias=False)
        self.norm1, self.norm2 = RmsNorm(hidden), RmsNorm(hidden)

    def repeat_kv(self, x: Tensor) -> Tensor:
        b, kvh, s, d = x.shape
        n_rep = self.heads // kvh
        x = x[:, :, None, :, :].expand(b, kvh, n_rep, s, d)
        return x.reshape(b, kvh * n_rep, s, d)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor, mask: Tensor) -> Tensor:
        b, s, _ = x.shape
        h = self.norm1(x)
        q = self.q(h).view(b, s, -1, self.head_dim).transpose(1, 2)
        k = self.k(h).view(b, s, -1, self.head_dim).transpose(1, 2)
        v = self.v(h).view(b, s, -1, self.head_dim).transpose(1, 2)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k, v = self.repeat_kv(k), self.repeat_kv(v)
        w = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim) + mask
        a = torch.matmul(cast_to(F.softmax(w, dim=-1, dtype=torch.float32), q.dtype), v)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, -1))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Llama(nn.Module):
    def __init__(self, hidden: int = 32, layers: int = 2) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, hidden)
        self.layers = nn.ModuleList(LlamaLayer(hidden, 4, 2) for _ in range(layers))
        self.norm = RmsNorm(hidden)
        self.lm_head = nn.Linear(hidden, VOCAB, bias=False)
        head_dim = hidden // 4
        inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
        b, s = input_ids.shape
        x = self.embed(input_ids)
        position_ids = torch.arange(0, s, dtype=torch.long).unsqueeze(0).expand(b, -1)
        inv = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        freqs = (inv @ position_ids[:, None, :].float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = cast_to(emb.cos(), x.dtype), cast_to(emb.sin(), x.dtype)
        least = torch.finfo(x.dtype).min
        causal = torch.full((s, s), least, dtype=x.dtype).triu(diagonal=1)
        causal = causal[None, None, :, :].expand(b, 1, -1, -1)
        padding = attention_mask[:, None, None, :].eq(0)
        mask = torch.where(padding, torch.full([], least, dtype=x.dtype), causal)
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        return self.lm_head(self.norm(x))


# ---- T5 encoder (bucketed relative position bias) -----------------------------------------
def relative_position_bucket(rel: Tensor, num_buckets: int = 32, max_distance: int = 128) -> Tensor:
    """T5's bidirectional bucket: abs, lt, log, min with a full_like, where."""
    buckets = torch.zeros_like(rel)
    num_buckets //= 2
    buckets = buckets + (rel > 0).to(torch.long) * num_buckets
    rel = torch.abs(rel)
    max_exact = num_buckets // 2
    is_small = rel < max_exact
    large = max_exact + (
        torch.log(rel.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return buckets + torch.where(is_small, rel, large)


class T5Attention(nn.Module):
    def __init__(self, hidden: int, heads: int) -> None:
        super().__init__()
        self.heads, self.d = heads, hidden // heads
        self.q = nn.Linear(hidden, hidden, bias=False)
        self.k = nn.Linear(hidden, hidden, bias=False)
        self.v = nn.Linear(hidden, hidden, bias=False)
        self.o = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x: Tensor, bias: Tensor) -> Tensor:
        b = x.shape[0]

        def shape(t: Tensor) -> Tensor:
            return t.view(b, -1, self.heads, self.d).transpose(1, 2)

        q, k, v = shape(self.q(x)), shape(self.k(x)), shape(self.v(x))
        w = F.softmax(torch.matmul(q, k.transpose(3, 2)) + bias, dim=-1)
        return self.o(
            torch.matmul(w, v).transpose(1, 2).contiguous().view(b, -1, self.heads * self.d)
        )


class T5Encoder(nn.Module):
    def __init__(self, hidden: int = 32, layers: int = 2) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, hidden)
        self.rel_bias = nn.Embedding(32, 4)
        self.attn = nn.ModuleList(T5Attention(hidden, 4) for _ in range(layers))
        self.ff_in = nn.ModuleList(nn.Linear(hidden, 2 * hidden, bias=False) for _ in range(layers))
        self.ff_out = nn.ModuleList(
            nn.Linear(2 * hidden, hidden, bias=False) for _ in range(layers)
        )
        self.norms = nn.ModuleList(RmsNorm(hidden) for _ in range(2 * layers + 1))

    def position_bias(self, q_len: int, k_len: int) -> Tensor:
        context = torch.arange(q_len, dtype=torch.long)[:, None]
        memory = torch.arange(k_len, dtype=torch.long)[None, :]
        buckets = relative_position_bucket(memory - context)
        return self.rel_bias(buckets).permute([2, 0, 1]).unsqueeze(0)

    def forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
        x = self.embed(input_ids)
        s = input_ids.shape[1]
        bias = self.position_bias(s, s) + extended_mask(attention_mask, x.dtype)
        for i, attn in enumerate(self.attn):
            x = x + attn(self.norms[2 * i](x), bias)
            x = x + self.ff_out[i](F.relu(self.ff_in[i](self.norms[2 * i + 1](x))))
        return self.norms[-1](x)


# ---- wav2vec2 (conv feature extractor with GroupNorm, positional conv, transformer) -------
class Wav2Vec2(nn.Module):
    def __init__(self, conv_dim: int = 32, hidden: int = 32) -> None:
        super().__init__()
        self.conv0 = nn.Conv1d(1, conv_dim, 10, stride=5, bias=False)
        self.norm0 = nn.GroupNorm(conv_dim, conv_dim, affine=True)
        self.conv1 = nn.Conv1d(conv_dim, conv_dim, 3, stride=2, bias=False)
        self.conv2 = nn.Conv1d(conv_dim, conv_dim, 2, stride=2, bias=False)
        self.fp_norm = nn.LayerNorm(conv_dim)
        self.projection = nn.Linear(conv_dim, hidden)
        self.pos_conv = nn.Conv1d(hidden, hidden, 8, padding=4, groups=4)
        self.enc_norm = nn.LayerNorm(hidden)
        self.layer = EncoderLayer(hidden, 4, 2 * hidden)

    def forward(self, input_values: Tensor) -> Tensor:
        x = input_values[:, None]
        x = F.gelu(self.norm0(self.conv0(x)))
        x = F.gelu(self.conv2(F.gelu(self.conv1(x))))
        x = self.projection(self.fp_norm(x.transpose(1, 2)))
        pos = self.pos_conv(x.transpose(1, 2))[:, :, :-1]  # even kernel: drop one pad
        x = x + F.gelu(pos).transpose(1, 2)
        return self.layer(self.enc_norm(x))


# ---- ViT ----------------------------------------------------------------------------------
class Vit(nn.Module):
    def __init__(self, hidden: int = 32, image: int = 32, patch: int = 8) -> None:
        super().__init__()
        self.patch = nn.Conv2d(3, hidden, patch, stride=patch)
        self.cls_token = nn.Parameter(torch.randn(1, 1, hidden))
        self.pos = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, hidden) * 0.1)
        self.layers = nn.ModuleList(EncoderLayer(hidden, 4, 2 * hidden, True) for _ in range(2))
        self.norm = nn.LayerNorm(hidden)
        self.classifier = nn.Linear(hidden, 10)

    def forward(self, pixel_values: Tensor) -> Tensor:
        batch = pixel_values.shape[0]
        x = self.patch(pixel_values).flatten(2).transpose(1, 2)
        cls = self.cls_token.expand(batch, -1, -1)
        x = torch.cat((cls, x), dim=1) + self.pos
        for layer in self.layers:
            x = layer(x)
        return self.classifier(self.norm(x)[:, 0, :])


# ---- Whisper encoder ----------------------------------------------------------------------
class WhisperEncoder(nn.Module):
    def __init__(self, mels: int = 80, hidden: int = 32, max_pos: int = 64) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(mels, hidden, 3, padding=1)
        self.conv2 = nn.Conv1d(hidden, hidden, 3, stride=2, padding=1)
        self.embed_positions = nn.Embedding(max_pos, hidden)
        self.layers = nn.ModuleList(EncoderLayer(hidden, 4, 2 * hidden, True) for _ in range(2))
        self.norm = nn.LayerNorm(hidden)

    def forward(self, input_features: Tensor) -> Tensor:
        x = F.gelu(self.conv2(F.gelu(self.conv1(input_features)))).permute(0, 2, 1)
        x = x + self.embed_positions.weight[: x.shape[1]]
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


# ---- Swin window attention ----------------------------------------------------------------
class SwinBlock(nn.Module):
    def __init__(self, dim: int = 32, heads: int = 4, window: int = 4, shift: int = 0) -> None:
        super().__init__()
        self.dim, self.heads, self.window, self.shift = dim, heads, window, shift
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.table = nn.Parameter(torch.randn((2 * window - 1) ** 2, heads) * 0.1)
        coords = torch.stack(
            torch.meshgrid(torch.arange(window), torch.arange(window), indexing="ij")
        )
        flat = torch.flatten(coords, 1)
        rel = (flat[:, :, None] - flat[:, None, :]).permute(1, 2, 0).contiguous()
        rel[:, :, 0] += window - 1
        rel[:, :, 1] += window - 1
        rel[:, :, 0] *= 2 * window - 1
        self.register_buffer("index", rel.sum(-1), persistent=False)
        self.fc1, self.fc2 = nn.Linear(dim, 2 * dim), nn.Linear(2 * dim, dim)

    def forward(self, x: Tensor, height: int, width: int) -> Tensor:
        batch, _, channels = x.shape
        ws = self.window
        shortcut = x
        h = self.norm1(x).view(batch, height, width, channels)
        if self.shift:
            h = torch.roll(h, shifts=(-self.shift, -self.shift), dims=(1, 2))
        win = h.view(batch, height // ws, ws, width // ws, ws, channels)
        win = win.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, ws * ws, channels)
        b_, n, c = win.shape
        qkv = self.qkv(win).reshape(b_, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q * (c // self.heads) ** -0.5) @ k.transpose(-2, -1)
        bias = self.table[self.index.view(-1)].view(n, n, -1).permute(2, 0, 1).contiguous()
        attn = F.softmax(attn + bias.unsqueeze(0), dim=-1)
        out = self.proj((attn @ v).transpose(1, 2).reshape(b_, n, c))
        out = out.view(-1, height // ws, width // ws, ws, ws, channels)
        out = out.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, height, width, channels)
        if self.shift:
            out = torch.roll(out, shifts=(self.shift, self.shift), dims=(1, 2))
        x = shortcut + out.view(batch, height * width, channels)
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class Swin(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Conv2d(3, 32, 4, stride=4)
        self.blocks = nn.ModuleList([SwinBlock(shift=0), SwinBlock(shift=2)])
        self.norm = nn.LayerNorm(32)
        self.head = nn.Linear(32, 10)

    def forward(self, pixel_values: Tensor) -> Tensor:
        x = self.embed(pixel_values)
        height, width = x.shape[2], x.shape[3]
        x = x.flatten(2).transpose(1, 2)
        for block in self.blocks:
            x = block(x, height, width)
        return self.head(self.norm(x).mean(1))


# ---- small CNN ----------------------------------------------------------------------------
class SmallCnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.BatchNorm2d(32),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.fc = nn.Linear(32, 10)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc(torch.flatten(self.features(x), 1))


# ---- small 3-D CNN ------------------------------------------------------------------------
class Conv3dNet(nn.Module):
    """A video-style 3-D CNN: Conv3d + BatchNorm3d + ReLU, a strided Conv3d, a padded
    dilated one (taps in the depth padding), global average pooling, a linear head. Channel
    counts are not multiples of 16 (ragged C0 lanes)."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv3d(3, 12, 3, padding=1),
            nn.BatchNorm3d(12),
            nn.ReLU(),
            nn.Conv3d(12, 20, 3, stride=(1, 2, 2), padding=1),
            nn.ReLU(),
            nn.Conv3d(20, 24, 3, padding=2, dilation=2),
            nn.BatchNorm3d(24),
            nn.ReLU(),
            nn.AdaptiveAvgPool3d(1),
        )
        self.fc = nn.Linear(24, 10)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc(torch.flatten(self.features(x), 1))


class Video3dNet(nn.Module):
    """A small video classifier in the style of X3D / channel-separated 3-D nets: a
    (1, 2, 2)-strided Conv3d stem, MaxPool3d over H and W, a depthwise Conv3d (groups =
    channels: two groups rule blocks of 16 and a ragged one), a grouped Conv3d whose groups
    are not aligned to C0 (3 groups of 8 -> 12 channels), a ceil-mode AvgPool3d that
    excludes the padding, a padded one that counts it, a strided MaxPool3d with depth
    padding, global average pooling, a linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv3d(3, 24, 3, stride=(1, 2, 2), padding=1),
            nn.BatchNorm3d(24),
            nn.ReLU(),
            nn.MaxPool3d((1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1)),
            nn.Conv3d(24, 24, 3, padding=1, groups=24),
            nn.BatchNorm3d(24),
            nn.ReLU(),
            nn.Conv3d(24, 36, (1, 3, 3), padding=(0, 1, 1), groups=3),
            nn.ReLU(),
            nn.AvgPool3d(2, stride=2, ceil_mode=True, count_include_pad=False),
            nn.AvgPool3d(3, stride=1, padding=1, count_include_pad=True),
            nn.MaxPool3d(3, stride=(2, 1, 1), padding=1),
            nn.AdaptiveAvgPool3d(1),
        )
        self.fc = nn.Linear(36, 7)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc(torch.flatten(self.features(x), 1))


# ---- YOLOv8-style detector ----------------------------------------------------------------
class ConvBnSilu(nn.Module):
    def __init__(self, c1: int, c2: int, k: int = 1, s: int = 1) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c2)

    def forward(self, x: Tensor) -> Tensor:
        return F.silu(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    def __init__(self, c: int, shortcut: bool) -> None:
        super().__init__()
        self.cv1, self.cv2, self.add = ConvBnSilu(c, c, 3), ConvBnSilu(c, c, 3), shortcut

    def forward(self, x: Tensor) -> Tensor:
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C2f(nn.Module):
    def __init__(self, c1: int, c2: int, n: int = 1, shortcut: bool = False) -> None:
        super().__init__()
        self.c = c2 // 2
        self.cv1 = ConvBnSilu(c1, 2 * self.c)
        self.cv2 = ConvBnSilu((2 + n) * self.c, c2)
        self.m = nn.ModuleList(Bottleneck(self.c, shortcut) for _ in range(n))

    def forward(self, x: Tensor) -> Tensor:
        y = list(self.cv1(x).chunk(2, 1))
        y.extend(m(y[-1]) for m in self.m)
        return self.cv2(torch.cat(y, 1))


class Sppf(nn.Module):
    def __init__(self, c1: int, c2: int) -> None:
        super().__init__()
        self.cv1, self.cv2 = ConvBnSilu(c1, c1 // 2), ConvBnSilu(c1 * 2, c2)
        self.m = nn.MaxPool2d(5, 1, 2)

    def forward(self, x: Tensor) -> Tensor:
        y = [self.cv1(x)]
        y.extend(self.m(y[-1]) for _ in range(3))
        return self.cv2(torch.cat(y, 1))


class Detect(nn.Module):
    def __init__(self, nc: int, ch: tuple[int, ...], strides: tuple[int, ...]) -> None:
        super().__init__()
        self.nc, self.reg_max, self.strides = nc, 4, strides
        self.no = nc + 4 * self.reg_max
        self.cv2 = nn.ModuleList(
            nn.Sequential(ConvBnSilu(c, 8, 3), nn.Conv2d(8, 4 * self.reg_max, 1)) for c in ch
        )
        self.cv3 = nn.ModuleList(
            nn.Sequential(ConvBnSilu(c, 8, 3), nn.Conv2d(8, nc, 1)) for c in ch
        )
        self.dfl = nn.Conv2d(self.reg_max, 1, 1, bias=False).requires_grad_(False)
        self.dfl.weight.data[:] = torch.arange(self.reg_max, dtype=torch.float).view(
            1, self.reg_max, 1, 1
        )

    def anchors(self, feats: list[Tensor]) -> tuple[Tensor, Tensor]:
        points, strides = [], []
        for f, stride in zip(feats, self.strides, strict=True):
            _, _, h, w = f.shape
            sx = torch.arange(end=w, dtype=torch.float32) + 0.5
            sy = torch.arange(end=h, dtype=torch.float32) + 0.5
            sy, sx = torch.meshgrid(sy, sx, indexing="ij")
            points.append(torch.stack((sx, sy), -1).view(-1, 2))
            strides.append(torch.full((h * w, 1), stride, dtype=torch.float32))
        return torch.cat(points).transpose(0, 1), torch.cat(strides).transpose(0, 1)

    def forward(self, xs: list[Tensor]) -> Tensor:
        feats = [torch.cat((self.cv2[i](x), self.cv3[i](x)), 1) for i, x in enumerate(xs)]
        shape = feats[0].shape
        x_cat = torch.cat([f.view(shape[0], self.no, -1) for f in feats], 2)
        box, cls = x_cat.split((self.reg_max * 4, self.nc), 1)
        b, _, a = box.shape
        dist = self.dfl(box.view(b, 4, self.reg_max, a).transpose(2, 1).softmax(1)).view(b, 4, a)
        anchor_points, stride_tensor = self.anchors(feats)
        lt, rb = dist.chunk(2, 1)
        x1y1, x2y2 = anchor_points.unsqueeze(0) - lt, anchor_points.unsqueeze(0) + rb
        dbox = torch.cat(((x1y1 + x2y2) / 2, x2y2 - x1y1), 1) * stride_tensor
        return torch.cat((dbox, cls.sigmoid()), 1)


class Yolo(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = ConvBnSilu(3, 8, 3, 2)  # /2
        self.d1 = nn.Sequential(ConvBnSilu(8, 16, 3, 2), C2f(16, 16, 1, True))  # /4
        self.d2 = nn.Sequential(ConvBnSilu(16, 16, 3, 2), C2f(16, 16, 1, True))  # /8
        self.d3 = nn.Sequential(ConvBnSilu(16, 24, 3, 2), C2f(24, 24, 1, True))  # /16
        self.d4 = nn.Sequential(ConvBnSilu(24, 24, 3, 2), C2f(24, 24, 1, True), Sppf(24, 24))
        self.up = nn.Upsample(None, 2, "nearest")
        self.h1 = C2f(48, 24)  # /16
        self.h2 = C2f(40, 16)  # /8
        self.detect = Detect(4, (16, 24, 24), (8, 16, 32))

    def forward(self, images: Tensor) -> Tensor:
        p3 = self.d2(self.d1(self.stem(images)))
        p4 = self.d3(p3)
        p5 = self.d4(p4)
        n4 = self.h1(torch.cat((self.up(p5), p4), 1))
        n3 = self.h2(torch.cat((self.up(n4), p3), 1))
        return self.detect([n3, n4, p5])


# ---- tiny FPN: a top-down path of bilinear upsamplings (dynamic H, W) ---------------------
class Fpn(nn.Module):
    """Three strides of a backbone, lateral 1x1 convs, a top-down path that upsamples each
    level to the next one's size with F.interpolate(mode="bilinear", align_corners=False)
    (a Resize of computed sizes: dynamic H and W), 3x3 output convs."""

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.c2 = ConvBnSilu(3, 8, 3, 2)  # /2
        self.c3 = ConvBnSilu(8, 16, 3, 2)  # /4
        self.c4 = ConvBnSilu(16, 24, 3, 2)  # /8
        self.lateral = nn.ModuleList(nn.Conv2d(c, width, 1) for c in (8, 16, 24))
        self.output = nn.ModuleList(nn.Conv2d(width, width, 3, padding=1) for _ in range(3))

    def forward(self, images: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        c2 = self.c2(images)
        c3 = self.c3(c2)
        c4 = self.c4(c3)
        p4 = self.lateral[2](c4)
        p3 = self.lateral[1](c3) + F.interpolate(
            p4, size=c3.shape[-2:], mode="bilinear", align_corners=False
        )
        p2 = self.lateral[0](c2) + F.interpolate(
            p3, size=c2.shape[-2:], mode="bilinear", align_corners=False
        )
        return self.output[0](p2), self.output[1](p3), self.output[2](p4)


# ---- EfficientNet tail: AvgPool2d(1280, ceil_mode=True) over a 5x5 map --------------------
class EfficientNetTail(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.top = nn.Conv2d(16, 32, 1, bias=False)
        self.bn = nn.BatchNorm2d(32)
        self.pool = nn.AvgPool2d(1280, ceil_mode=True)
        self.classifier = nn.Linear(32, 10)

    def forward(self, features: Tensor) -> Tensor:
        x = self.pool(F.silu(self.bn(self.top(features))))
        return self.classifier(x.reshape(x.shape[:2]))


# ---- small attention over x[N, L, 64] and mask[N, L] --------------------------------------
class MaskedAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = SelfAttention(64, 4)
        self.norm = nn.LayerNorm(64)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        n, length = x.shape[0], x.shape[1]
        additive = (1.0 - mask.unsqueeze(1).unsqueeze(2)) * -10000.0
        y = self.norm(x + self.attn(x, additive))
        pooled = (y * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True)
        return y.reshape(n * length, 64), pooled


# ---- the families and their export arguments ----------------------------------------------
Example = tuple[Tensor, ...]


def _ids(b: int, s: int) -> Tensor:
    return torch.randint(2, VOCAB, (b, s))


def _mask(b: int, s: int) -> Tensor:
    mask = torch.ones(b, s, dtype=torch.long)
    mask[-1, s // 2 :] = 0
    return mask


FAMILIES: dict[
    str, tuple[Callable[[], nn.Module], Callable[[], Example], dict[str, dict[int, str]], list[str]]
] = {
    "bert": (
        Bert,
        lambda: (_ids(2, 5), _mask(2, 5), torch.randint(0, 2, (2, 5))),
        {n: {0: "batch", 1: "sequence"} for n in ("input_ids", "attention_mask", "token_type_ids")},
        ["last_hidden_state", "pooler_output"],
    ),
    "roberta": (
        Roberta,
        lambda: (_ids(2, 5), _mask(2, 5)),
        {n: {0: "batch", 1: "sequence"} for n in ("input_ids", "attention_mask")},
        ["logits"],
    ),
    "gpt2": (
        Gpt2,
        lambda: (_ids(2, 5), _mask(2, 5)),
        {n: {0: "batch", 1: "sequence"} for n in ("input_ids", "attention_mask")},
        ["logits"],
    ),
    "llama": (
        Llama,
        lambda: (_ids(2, 5), _mask(2, 5)),
        {n: {0: "batch", 1: "sequence"} for n in ("input_ids", "attention_mask")},
        ["logits"],
    ),
    "t5_encoder": (
        T5Encoder,
        lambda: (_ids(2, 5), _mask(2, 5)),
        {n: {0: "batch", 1: "sequence"} for n in ("input_ids", "attention_mask")},
        ["last_hidden_state"],
    ),
    "wav2vec2": (
        Wav2Vec2,
        lambda: (torch.randn(2, 400),),
        {"input_values": {0: "batch", 1: "samples"}},
        ["last_hidden_state"],
    ),
    "vit": (Vit, lambda: (torch.randn(2, 3, 32, 32),), {"pixel_values": {0: "batch"}}, ["logits"]),
    "whisper_encoder": (
        WhisperEncoder,
        lambda: (torch.randn(2, 80, 40),),
        {"input_features": {0: "batch", 2: "frames"}},
        ["last_hidden_state"],
    ),
    "swin": (
        Swin,
        lambda: (torch.randn(2, 3, 32, 32),),
        {"pixel_values": {0: "batch"}},
        ["logits"],
    ),
    "small_cnn": (SmallCnn, lambda: (torch.randn(2, 3, 32, 32),), {"x": {0: "batch"}}, ["logits"]),
    "conv3d": (
        Conv3dNet,
        lambda: (torch.randn(2, 3, 6, 16, 16),),
        {"x": {0: "batch", 2: "depth", 3: "height", 4: "width"}},
        ["logits"],
    ),
    "video3d": (
        Video3dNet,
        lambda: (torch.randn(2, 3, 8, 32, 32),),
        {"x": {0: "batch", 2: "depth", 3: "height", 4: "width"}},
        ["logits"],
    ),
    "fpn": (
        Fpn,
        lambda: (torch.randn(1, 3, 40, 56),),
        {"images": {0: "batch", 2: "height", 3: "width"}},
        ["p2", "p3", "p4"],
    ),
    "yolov8": (
        Yolo,
        lambda: (torch.randn(1, 3, 64, 96),),
        {"images": {0: "batch", 2: "height", 3: "width"}},
        ["output0"],
    ),
    "efficientnet_tail": (
        EfficientNetTail,
        lambda: (torch.randn(2, 16, 5, 5),),
        {"features": {0: "batch"}},
        ["logits"],
    ),
    "masked_attention": (
        MaskedAttention,
        lambda: (torch.randn(2, 5, 64), _mask(2, 5).float()),
        {"x": {0: "N", 1: "L"}, "mask": {0: "N", 1: "L"}},
        ["tokens", "pooled"],
    ),
}

INPUT_NAMES: dict[str, list[str]] = {
    "bert": ["input_ids", "attention_mask", "token_type_ids"],
    "wav2vec2": ["input_values"],
    "vit": ["pixel_values"],
    "whisper_encoder": ["input_features"],
    "swin": ["pixel_values"],
    "small_cnn": ["x"],
    "conv3d": ["x"],
    "video3d": ["x"],
    "yolov8": ["images"],
    "fpn": ["images"],
    "efficientnet_tail": ["features"],
    "masked_attention": ["x", "mask"],
}


FAMILIES.update(architectures.FAMILIES)
INPUT_NAMES.update(architectures.INPUT_NAMES)
FAMILIES.update(export_patterns.FAMILIES)
INPUT_NAMES.update(export_patterns.INPUT_NAMES)
FAMILIES.update(export_idioms.FAMILIES)
INPUT_NAMES.update(export_idioms.INPUT_NAMES)
DYNAMO_ONLY = (*export_patterns.DYNAMO_ONLY, *export_idioms.DYNAMO_ONLY)

HALF = ("small_cnn", "vit", "yolov8", "bert", "gpt2", "roberta", "t5_encoder", "llama")
"""Families also exported in half precision (``<family>_fp16.onnx``)."""
DYNAMO = (
    "bert",
    "llama",
    "t5_encoder",
    "fpn",
    "cached_gpt",
    "clip_text",
    "conformer",
    "cross_decoder",
    "moe",
    "gcn",
    "dlrm",
    "einsum",
    "fold",
    "masked",
    "cosine",
    "sdpa",
    "stn",
    *export_idioms.DYNAMO,
)
"""Families also exported with torch 2's default exporter (``<family>_dynamo.onnx``:
``dynamo=True``, its own opset, ``torch.export.Dim.AUTO`` on the same axes)."""


def _randomise(model: nn.Module) -> None:
    """BatchNorm statistics and LayerNorm affine parameters away from their identity values."""
    for m in model.modules():
        if isinstance(
            m, nn.BatchNorm1d | nn.BatchNorm2d | nn.BatchNorm3d | nn.GroupNorm | nn.LayerNorm
        ):
            if m.weight is not None:
                m.weight.data = 1 + 0.2 * torch.randn_like(m.weight)
                m.bias.data = 0.1 * torch.randn_like(m.bias)
        if isinstance(m, nn.BatchNorm1d | nn.BatchNorm2d | nn.BatchNorm3d):
            m.running_mean = 0.1 * torch.randn_like(m.running_mean)
            m.running_var = 1 + 0.2 * torch.rand_like(m.running_var)


def export(name: str) -> Path:
    """Export one family (or its half variant, ``<family>_fp16``) to ``models/<name>.onnx``;
    its path."""
    family = name.removesuffix("_fp16").removesuffix("_dynamo")
    half = name == f"{family}_fp16" and family in HALF
    dynamo = name == f"{family}_dynamo" and family in DYNAMO
    make, example, axes, outputs = FAMILIES[family]
    torch.manual_seed(0)
    # nn.MultiheadAttention's inference fast path is one fused aten op no exporter knows
    torch.backends.mha.set_fastpath_enabled(False)
    model = make().eval()
    _randomise(model)
    args = example()
    if half:
        model = model.half()
        args = tuple(a.half() if a.is_floating_point() else a for a in args)
    names = INPUT_NAMES.get(family, ["input_ids", "attention_mask"])
    path = OUT / f"{name}.onnx"
    with torch.no_grad():
        if dynamo:
            auto = {n: dict.fromkeys(a, torch.export.Dim.AUTO) for n, a in axes.items()}
            torch.onnx.export(
                model,
                args,
                str(path),
                dynamo=True,
                input_names=names,
                output_names=outputs,
                dynamic_shapes=tuple(auto.get(n, {}) for n in names),
                external_data=False,
                opset_version=export_patterns.DYNAMO_OPSETS.get(family),
            )
        else:
            torch.onnx.export(
                model,
                args,
                str(path),
                dynamo=False,
                opset_version=OPSET,
                input_names=names,
                output_names=outputs,
                dynamic_axes=axes,
            )
    size = path.stat().st_size
    if size > MAX_BYTES:
        path.unlink()
        raise SystemExit(f"{path.name}: {size} bytes, over the {MAX_BYTES} limit")
    return path


def main(argv: list[str]) -> None:
    OUT.mkdir(exist_ok=True)
    variants = [*(f"{f}_fp16" for f in HALF), *(f"{f}_dynamo" for f in DYNAMO)]
    classic = [f for f in FAMILIES if f not in DYNAMO_ONLY]
    for name in argv or [*classic, *variants]:
        path = export(name)
        print(f"{path.name}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
