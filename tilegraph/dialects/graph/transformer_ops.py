"""The transformer ops of the newest opsets: RotaryEmbedding (23), TensorScatter (24),
FlexAttention (``ai.onnx.preview``), LinearAttention (27), CausalConvWithState (27) and
SwiGLU (28).

The attention-shaped ones share :mod:`.attention`'s mechanism: the ``[B, seq, heads * size]``
packing, grouped KV heads, the ``sqrt(scale)``-on-both-sides product and the softmax.
Each kernel computes where the ONNX definition rounds: RotaryEmbedding and TensorScatter in
the input type; LinearAttention's recurrence in float32 (its state and output rounded at the
end); CausalConvWithState's convolution rounded to the input type before the fused SiLU,
which runs in float32; FlexAttention's softmax in ``softmax_precision`` (float32 by default,
float64 for float64 inputs); SwiGLU in float64, rounded once. FlexAttention's ``score_mod``
/ ``prob_mod`` subgraphs are bodies, as control flow's are (:mod:`.control_flow`); an absent
one is the identity. All are host ops on the tiled path except SwiGLU, an elementwise op.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, cast

import numpy as np
from xdsl.ir import Attribute, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure

from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.attention import (
    group_heads,
    merge_heads,
    scaled_scores,
    softmax,
    split_heads,
)
from tilegraph.dialects.graph.base import (
    GraphOp,
    ShapeError,
    float_attr,
    int_attr,
    str_attr,
    tensor_type,
    to_attribute,
)
from tilegraph.dialects.graph.control_flow import RegionOp, identity_body, run_body, yielded_types
from tilegraph.dialects.graph.elementwise import agnostic_facts
from tilegraph.dialects.graph.facts import ANY_FORMAT, ND_OPAQUE, FusionKind, KernelVariant
from tilegraph.dialects.graph.shape_utils import nd_result, normalize_axis, require, result_like
from tilegraph.dialects.graph.value_types import type_admits
from tilegraph.dialects.graph.windows import accumulator, known
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType
from tilegraph.formats.dims import UNKNOWN, Dim, dims_compatible

_Slots = Sequence[SSAValue | None]
_Props = Mapping[str, Attribute]


def _per(d: Dim, n: int) -> Dim:
    """``d / n`` (a packed dim per head); unknown unless ``d`` is known."""
    return d // n if known(d) else UNKNOWN


def _times(d: Dim, n: int) -> Dim:
    return d * n if known(d) else UNKNOWN


def _floats(what: str, *types: TensorType) -> None:
    for t in types:
        if t.dtype.numpy.kind != "f":
            raise ShapeError(f"{what} takes floating-point tensors, not {t.element_type}")


def _heads(cls: type[GraphOp], props: _Props, *names: str) -> list[int]:
    """Required positive head-count attributes."""
    values = [cls.read_attr(props, n) for n in names]
    for n, v in zip(names, values, strict=True):
        if v is None or v < 1:
            raise ShapeError(f"{cls.ONNX_OP} needs the attribute {n} >= 1, got {v}")
    return [int(v) for v in values]


# ---- RotaryEmbedding ----------------------------------------------------------------------


@irdl_op_definition
class RotaryEmbeddingOp(GraphOp):
    """ONNX RotaryEmbedding: the first ``rotary_embedding_dim`` (default: all) of each head's
    dims rotated by the angles whose cosines / sines the caches hold — pairs are the two
    halves, or neighbours when ``interleaved`` — for ``[B, heads, seq, size]`` input or
    ``[B, seq, num_heads * size]``; the caches are ``[B, seq, dim / 2]``, or
    ``[positions, dim / 2]`` indexed by ``position_ids``."""

    name = "graph.rotary_embedding"
    ONNX_OP: ClassVar = "RotaryEmbedding"
    X = operand_def(TensorType)
    cos_cache = operand_def(TensorType)
    sin_cache = operand_def(TensorType)
    position_ids = opt_operand_def(TensorType)
    Y = result_def(TensorType)
    interleaved = int_attr()
    num_heads = int_attr()
    rotary_embedding_dim = int_attr()
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"interleaved": 0, "rotary_embedding_dim": 0}

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "X")
        caches = [require(tensor_type(operands[i]), n) for i, n in ((1, "cos"), (2, "sin"))]
        positions = tensor_type(operands[3]) if len(operands) > 3 else None
        _floats("RotaryEmbedding", x, *caches)
        if x.rank == 4:
            size = x.origin_shape[3]
        elif x.rank == 3:
            (heads,) = _heads(cls, props, "num_heads")
            size = _per(x.origin_shape[2], heads)
        else:
            raise ShapeError(f"RotaryEmbedding takes 3-D or 4-D input, got rank {x.rank}")
        dim = cls.read_attr(props, "rotary_embedding_dim") or size
        if known(size) and (dim % 2 or dim > size):
            raise ShapeError(f"rotary_embedding_dim {dim} must be even and <= the head size")
        want = 2 if positions is not None else 3
        for c in caches:
            if c.rank != want or not dims_compatible(c.origin_shape[-1], _per(dim, 2)):
                raise ShapeError(
                    f"the caches must be {want}-D ending in rotary_embedding_dim / 2, "
                    f"got {list(c.origin_shape)}"
                )
        if positions is not None and positions.rank != 2:
            raise ShapeError("position_ids must be [batch, seq]")
        return [result_like(x, x.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, cos, sin, positions = (list(inputs) + [None])[:4]
        assert x is not None and cos is not None and sin is not None
        if x.ndim == 4:
            heads = x.transpose(0, 2, 1, 3)
        else:
            heads = x.reshape(*x.shape[:2], int(self.attr("num_heads")), -1)
        dim = int(self.attr("rotary_embedding_dim")) or heads.shape[3]
        if positions is not None:
            cos, sin = cos[positions], sin[positions]
        cos, sin = cos[:, :, None, :], sin[:, :, None, :]  # [B, seq, 1, dim / 2]
        rotated = heads[..., :dim]
        if self.attr("interleaved"):
            x1, x2 = rotated[..., 0::2], rotated[..., 1::2]
        else:
            x1, x2 = np.split(rotated, 2, axis=-1)
        real, imag = cos * x1 - sin * x2, sin * x1 + cos * x2
        if self.attr("interleaved"):
            rotated = np.stack([real, imag], axis=-1).reshape(rotated.shape)
        else:
            rotated = np.concatenate([real, imag], axis=-1)
        out = np.concatenate([rotated, heads[..., dim:]], axis=-1).astype(x.dtype)
        return (out.transpose(0, 2, 1, 3) if x.ndim == 4 else out.reshape(x.shape),)


# ---- SwiGLU -------------------------------------------------------------------------------


@irdl_op_definition
class SwiGLUOp(GraphOp):
    """ONNX SwiGLU: ``A * sigmoid(alpha * A) * B`` elementwise on two tensors of one shape
    (no broadcasting)."""

    name = "graph.swiglu"
    ONNX_OP: ClassVar = "SwiGLU"
    A = operand_def(TensorType)
    B = operand_def(TensorType)
    Y = result_def(TensorType)
    alpha = float_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = agnostic_facts(
        FusionKind.ELEMWISE, KernelVariant((ANY_FORMAT, ANY_FORMAT), (ANY_FORMAT,), "any")
    )
    DEFAULTS: ClassVar = {"alpha": 1.0}

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        a, b = require(tensor_type(operands[0]), "A"), require(tensor_type(operands[1]), "B")
        _floats("SwiGLU", a)
        if a.element_type != b.element_type or a.rank != b.rank:
            raise ShapeError("SwiGLU's A and B must have one element type and rank")
        if not all(map(dims_compatible, a.origin_shape, b.origin_shape)):
            raise ShapeError("SwiGLU's A and B must have one shape (it does not broadcast)")
        return [result_like(a, a.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        a, b = inputs
        assert a is not None and b is not None
        wide = a.astype(np.float64)
        gate = wide / (1 + np.exp(-float(self.attr("alpha")) * wide))
        return ((gate * b).astype(a.dtype),)


# ---- TensorScatter ------------------------------------------------------------------------


@irdl_op_definition
class TensorScatterOp(GraphOp):
    """ONNX TensorScatter: ``past_cache`` with, for each batch ``b``, the ``update`` written
    along ``axis`` (default -2, not the batch axis) from ``write_indices[b]`` on (default
    0); ``mode = "circular"`` wraps the positions around the cache length, ``"linear"``
    (the default) requires them to fit."""

    name = "graph.tensor_scatter"
    ONNX_OP: ClassVar = "TensorScatter"
    past_cache = operand_def(TensorType)
    update = operand_def(TensorType)
    write_indices = opt_operand_def(TensorType)
    present_cache = result_def(TensorType)
    axis = int_attr()
    mode = str_attr()
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"axis": -2, "mode": "linear"}

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        past = require(tensor_type(operands[0]), "past_cache")
        update = require(tensor_type(operands[1]), "update")
        if update.element_type != past.element_type or update.rank != past.rank:
            raise ShapeError("update must have the element type and rank of past_cache")
        axis = normalize_axis(cls.read_attr(props, "axis"), past.rank)
        if axis == 0:
            raise ShapeError("TensorScatter's axis cannot be the batch axis 0")
        if cls.read_attr(props, "mode") not in ("linear", "circular"):
            raise ShapeError(
                f"mode must be 'linear' or 'circular', got {cls.read_attr(props, 'mode')!r}"
            )
        for i, (p, u) in enumerate(zip(past.origin_shape, update.origin_shape, strict=True)):
            if i != axis and not dims_compatible(p, u):
                raise ShapeError(f"update's dim {i} ({u}) differs from past_cache's ({p})")
            if i == axis and known(p) and known(u) and u > p:
                raise ShapeError(f"the update ({u}) is longer than the cache ({p})")
        indices = tensor_type(operands[2]) if len(operands) > 2 else None
        if indices is not None and (indices.rank != 1 or indices.dtype != DType.int64):
            raise ShapeError("write_indices must be a 1-D int64 tensor")
        return [nd_result(past, past.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        past, update, indices = (list(inputs) + [None])[:3]
        assert past is not None and update is not None
        axis = int(self.attr("axis")) % past.ndim
        present = past.copy()
        cache, updates = np.moveaxis(present, axis, 1), np.moveaxis(update, axis, 1)
        length, count = cache.shape[1], updates.shape[1]
        starts = np.zeros(past.shape[0], np.int64) if indices is None else indices
        for b, start in enumerate(np.asarray(starts).reshape(-1)):
            where = int(start) + np.arange(count)
            if self.attr("mode") == "circular":
                where %= length
            elif count and (where[0] < 0 or where[-1] >= length):
                raise ValueError(f"write index {int(start)} + {count} exceeds the cache ({length})")
            cache[b, where] = updates[b]  # a view of present
        return (present,)


# ---- LinearAttention ----------------------------------------------------------------------

_RULES = ("linear", "gated", "delta", "gated_delta")


@irdl_op_definition
class LinearAttentionOp(GraphOp):
    """ONNX LinearAttention: the recurrence ``S_t = g_t * S_{t-1} + k_t ⊗ v'_t``,
    ``o_t = scale * q_t S_t`` over the sequence, per KV head (query heads grouped onto KV
    heads), with ``g_t = exp(decay_t)`` for the gated rules (else 1) and ``v'_t = beta_t *
    (v_t - (g_t S_{t-1})ᵀ k_t)`` for the delta rules (else ``v_t``). Inputs are packed
    ``[B, T, heads * size]``; the state ``[B, kv_heads, d_k, d_v]`` starts at ``past_state``
    (default zeros) and ends as ``present_state`` (in past_state's type, else the query's).
    ``chunk_size`` is a tuning hint without effect."""

    name = "graph.linear_attention"
    ONNX_OP: ClassVar = "LinearAttention"
    ONNX_IGNORED_ATTRS: ClassVar = frozenset({"chunk_size"})
    query = operand_def(TensorType)
    key = operand_def(TensorType)
    value = operand_def(TensorType)
    past_state = opt_operand_def(TensorType)
    decay = opt_operand_def(TensorType)
    beta = opt_operand_def(TensorType)
    output = result_def(TensorType)
    present_state = result_def(TensorType)
    q_num_heads = int_attr()
    kv_num_heads = int_attr()
    scale = float_attr()
    update_rule = str_attr()
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"scale": 0.0, "update_rule": "gated_delta"}

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        q, k, v = (
            require(tensor_type(operands[i]), n) for i, n in enumerate(("query", "key", "value"))
        )
        past, decay, beta = (tensor_type(o) for o in (list(operands) + [None] * 3)[3:6])
        _floats("LinearAttention", q, k, v)
        if not q.rank == k.rank == v.rank == 3:
            raise ShapeError("query, key and value must be 3-D [B, T, heads * size]")
        hq, hkv = _heads(cls, props, "q_num_heads", "kv_num_heads")
        if hq % hkv:
            raise ShapeError(f"q_num_heads {hq} is not a multiple of kv_num_heads {hkv}")
        rule = cls.read_attr(props, "update_rule")
        if rule not in _RULES:
            raise ShapeError(f"update_rule must be one of {', '.join(_RULES)}, got {rule!r}")
        for given, needed, name in (
            (decay, "gated" in rule, "decay"),
            (beta, "delta" in rule, "beta"),
        ):
            if (given is not None) != needed:
                raise ShapeError(f"update_rule {rule!r} {'needs' if needed else 'takes no'} {name}")
        b, t = q.origin_shape[:2]
        dk, dv = _per(q.origin_shape[2], hq), _per(v.origin_shape[2], hkv)
        if not dims_compatible(k.origin_shape[2], _times(dk, hkv)):
            raise ShapeError("key's last dim must be kv_num_heads * the query's head size")
        for t_, lasts, name in ((decay, (hkv, _times(dk, hkv)), "decay"), (beta, (hkv, 1), "beta")):
            if t_ is not None and (
                t_.rank != 3 or not any(dims_compatible(t_.origin_shape[2], d) for d in lasts)
            ):
                raise ShapeError(f"{name} must be [B, T, {' or '.join(map(str, lasts))}]")
        state = [b, hkv, dk, dv]
        if past is not None and not all(map(dims_compatible, past.origin_shape, state)):
            raise ShapeError(f"past_state must be [B, kv_num_heads, d_k, d_v] = {state}")
        elt = (q if past is None else past).element_type
        return [nd_result(q, [b, t, _times(dv, hq)]), TensorType(state, elt)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        q, k, v, past, decay, beta = (list(inputs) + [None] * 3)[:6]
        assert q is not None and k is not None and v is not None
        hq, hkv = int(self.attr("q_num_heads")), int(self.attr("kv_num_heads"))
        q4, k4, v4 = (
            split_heads(a.astype(np.float32), h) for a, h in ((q, hq), (k, hkv), (v, hkv))
        )
        b, _, steps, dk = q4.shape
        state = np.zeros((b, hkv, dk, v4.shape[3]), np.float32) if past is None else past
        state = state.astype(np.float32)
        gates = None if decay is None else np.exp(split_heads(decay.astype(np.float32), hkv))
        rates = None if beta is None else split_heads(beta.astype(np.float32), beta.shape[2])
        scale = float(self.attr("scale")) or 1 / np.sqrt(dk)
        out = np.zeros((b, hq, steps, v4.shape[3]), np.float32)
        for i in range(steps):
            k_t, v_t = k4[:, :, i], v4[:, :, i]
            if gates is not None:
                state = state * gates[:, :, i, :, None]
            if rates is not None:
                v_t = rates[:, :, i] * (v_t - np.einsum("bhdm,bhd->bhm", state, k_t))
            state = state + k_t[..., :, None] * v_t[..., None, :]
            read = group_heads(state, hq)
            out[:, :, i] = scale * np.einsum("bhd,bhdm->bhm", q4[:, :, i], read)
        state_type = (past if past is not None else q).dtype
        return merge_heads(out).astype(q.dtype), state.astype(state_type)


# ---- CausalConvWithState ------------------------------------------------------------------


@irdl_op_definition
class CausalConvWithStateOp(GraphOp):
    """ONNX CausalConvWithState: a depthwise causal 1-D convolution of ``[B, C, L]`` input
    with ``[C, 1, k]`` weights (plus ``bias[C]``) over ``past_state`` (default zeros, ``[B,
    C, k - 1]``) followed by the input, then SiLU when ``activation`` is "silu" or "swish";
    ``present_state`` is the last ``k - 1`` positions of that concatenation."""

    name = "graph.causal_conv_with_state"
    ONNX_OP: ClassVar = "CausalConvWithState"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    past_state = opt_operand_def(TensorType)
    output = result_def(TensorType)
    present_state = result_def(TensorType)
    activation = str_attr()
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"activation": "none"}

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x, w = (
            require(tensor_type(operands[0]), "input"),
            require(tensor_type(operands[1]), "weight"),
        )
        bias, past = (tensor_type(o) for o in (list(operands) + [None, None])[2:4])
        _floats("CausalConvWithState", x)
        if x.rank != 3 or w.rank != 3 or not dims_compatible(w.origin_shape[1], 1):
            raise ShapeError("CausalConvWithState takes [B, C, L] input and [C, 1, k] weights")
        activation = cls.read_attr(props, "activation")
        if activation not in ("none", "silu", "swish"):
            raise ShapeError(f"activation must be 'none', 'silu' or 'swish', got {activation!r}")
        b, c, _ = x.origin_shape
        k = w.origin_shape[2]
        state = [b, c, k - 1 if known(k) else UNKNOWN]
        if not dims_compatible(w.origin_shape[0], c):
            raise ShapeError("the weights must have one kernel per channel")
        if bias is not None and (bias.rank != 1 or not dims_compatible(bias.origin_shape[0], c)):
            raise ShapeError("bias must be [C]")
        if past is not None and not all(map(dims_compatible, past.origin_shape, state)):
            raise ShapeError(f"past_state must be [B, C, k - 1] = {state}")
        return [nd_result(x, x.origin_shape), nd_result(x, state)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, w, bias, past = (list(inputs) + [None, None])[:4]
        assert x is not None and w is not None
        b, c, _ = x.shape
        k = w.shape[2]
        if past is None:
            past = np.zeros((b, c, k - 1), x.dtype)
        padded = np.concatenate([past, x], axis=2)
        acc = accumulator(x.dtype)
        windows = np.lib.stride_tricks.sliding_window_view(padded.astype(acc), k, axis=2)
        y = np.einsum("bclk,ck->bcl", windows, w[:, 0].astype(acc))
        if bias is not None:
            y = y + bias.astype(acc)[:, None]
        y = y.astype(x.dtype)
        if self.attr("activation") != "none":
            wide = y.astype(np.float32)
            y = (wide / (1 + np.exp(-wide))).astype(x.dtype)
        return y, padded[:, :, padded.shape[2] - (k - 1) :]


# ---- FlexAttention ------------------------------------------------------------------------

_SOFTMAX_TYPES = {1: DType.float32, 10: DType.float16, 11: DType.float64}


@irdl_op_definition
class FlexAttentionOp(RegionOp):
    """ONNX FlexAttention (domain ``ai.onnx.preview``): ``softmax(score_mod(Q Kᵀ * scale))``
    then ``prob_mod``, times V, over 4-D ``[B, heads, seq, size]`` inputs with grouped KV
    heads; ``scale`` defaults to ``1 / sqrt(head_size)``. The scores and probabilities are
    in ``softmax_precision`` (float32 by default, float64 for float64 inputs) and each
    modifier is a body from ``[B, q_heads, q_seq, kv_seq]`` to the same (the identity when
    the model gives none)."""

    name = "graph.flex_attention"
    ONNX_OP: ClassVar = "FlexAttention"
    ONNX_DOMAIN: ClassVar = "ai.onnx.preview"
    ONNX_SUBGRAPHS: ClassVar = ("score_mod", "prob_mod")
    ONNX_OPTIONAL_SUBGRAPHS: ClassVar = frozenset(ONNX_SUBGRAPHS)
    Q = operand_def(TensorType)
    K = operand_def(TensorType)
    V = operand_def(TensorType)
    captured = var_operand_def()
    Y = result_def(TensorType)
    score_mod = region_def("single_block")
    prob_mod = region_def("single_block")
    scale = float_attr()
    softmax_precision = int_attr()

    @classmethod
    def _types(cls, q: SSAValue, k: SSAValue, v: SSAValue, props: _Props):
        """(scores type, result type) of the inputs."""
        tq, tk, tv = (require(tensor_type(x), n) for x, n in ((q, "Q"), (k, "K"), (v, "V")))
        _floats("FlexAttention", tq)
        if not tq.rank == tk.rank == tv.rank == 4:
            raise ShapeError("FlexAttention takes 4-D Q, K and V [B, heads, seq, size]")
        if not tq.element_type == tk.element_type == tv.element_type:
            raise ShapeError("Q, K and V must have one element type")
        b, hq, lq, e = tq.origin_shape
        hkv, s = tk.origin_shape[1], tk.origin_shape[2]
        if not (dims_compatible(tk.origin_shape[3], e) and dims_compatible(tv.origin_shape[2], s)):
            raise ShapeError("K must have Q's head size and V K's sequence length")
        if known(hq) and known(hkv) and (hkv != tv.origin_shape[1] or hq % hkv):
            raise ShapeError("V must have K's heads, a divisor of Q's")
        code = cls.read_attr(props, "softmax_precision")
        if code is not None and code not in _SOFTMAX_TYPES:
            raise ShapeError(f"softmax_precision {code} is not supported (1, 10 or 11)")
        wide = DType.float64 if tq.dtype == DType.float64 else DType.float32
        precision = wide if code is None else _SOFTMAX_TYPES[code]
        scores = TensorType([b, hq, lq, s], element_type_of(precision))
        return scores, TensorType([b, hq, lq, tv.origin_shape[3]], tq.element_type)

    @classmethod
    def from_onnx(cls, operands, attrs, captures, build_body):
        q, k, v = cast(list[SSAValue], list(operands))
        props = {name: to_attribute(value) for name, value in attrs.items()}
        scores, result = cls._types(q, k, v, props)
        bodies = [Region(build_body(name, [scores])) for name in cls.ONNX_SUBGRAPHS]
        return cls.build([[q], [k], [v], captures], [result], bodies, props)

    @classmethod
    def without_modifiers(cls, q: SSAValue, k: SSAValue, v: SSAValue, **attrs: Any) -> RegionOp:
        """The op with identity modifiers (no captures); ``attrs`` as ONNX names them."""
        props = {name: to_attribute(value) for name, value in attrs.items()}
        scores, result = cls._types(q, k, v, props)
        bodies = [Region(identity_body([scores], [])) for _ in cls.ONNX_SUBGRAPHS]
        return cls.build([[q], [k], [v], []], [result], bodies, props)

    def inferred_result_types(self) -> list[TensorType]:
        scores, result = self._types(self.Q, self.K, self.V, self.properties)
        for region in self.regions:
            yielded = yielded_types(region.block)
            if len(yielded) != 1 or not type_admits(
                nd_result(scores, scores.origin_shape), yielded[0]
            ):
                raise ShapeError(f"a modifier must yield one tensor like the scores ({scores})")
        return [result]

    def run(self, groups: list[list[Any]], captured: list[Any]) -> list[Any]:
        (q,), (k,), (v,) = groups
        scores_type = cast(TensorType, self.score_mod.block.args[0].type)
        precision = scores_type.dtype.numpy
        scores = scaled_scores(q, k, self.attr("scale")).astype(precision)
        (scores,) = run_body(self.score_mod, [scores, *captured])
        (probs,) = run_body(self.prob_mod, [softmax(np.asarray(scores, precision)), *captured])
        values = group_heads(v, q.shape[1]).astype(precision)
        return [np.matmul(np.asarray(probs, precision), values).astype(v.dtype)]


TRANSFORMER_OPS: list[type[GraphOp]] = [
    RotaryEmbeddingOp,
    SwiGLUOp,
    TensorScatterOp,
    LinearAttentionOp,
    CausalConvWithStateOp,
    FlexAttentionOp,
]
