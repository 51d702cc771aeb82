"""ONNX Attention (opset 23, with Attention-24's ``nonpad_kv_seqlen`` and Attention-25's
sliding windows): scaled dot-product attention over 4-D ``[B, heads, seq, head_size]`` or
3-D ``[B, seq, heads * head_size]`` inputs, with grouped / multi-query KV heads, a boolean
or additive mask, causal masking aligned to the KV cache, ``past_key`` / ``past_value``
concatenated into the present ones, softcap, and the optional ``qk_matmul_output`` at the
stage ``qk_matmul_output_mode`` names (0/1: the scaled product, softcapped; 2: with the
bias; 3: after softmax).

The kernel computes in the inputs' type, as ONNX's reference does (a float16 attention is
not widened), and a row whose every key is masked gives zeros. A host op on the tiled path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
import onnx
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from tilegraph.dialects.graph.base import GraphOp, ShapeError, float_attr, int_attr, tensor_type
from tilegraph.dialects.graph.facts import ND_OPAQUE
from tilegraph.dialects.graph.shape_utils import require
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import UNKNOWN, Dim


def _heads(d: Dim, n: int) -> Dim:
    return d // n if isinstance(d, int) and d >= 0 else UNKNOWN


def _plus(a: Dim, b: Dim) -> Dim:
    return a + b if isinstance(a, int) and isinstance(b, int) and a >= 0 and b >= 0 else UNKNOWN


def split_heads(t: np.ndarray, heads: int) -> np.ndarray:
    """``[B, seq, heads * size]`` -> ``[B, heads, seq, size]`` (the 3-D packed layout)."""
    return t.reshape(t.shape[0], t.shape[1], heads, -1).transpose(0, 2, 1, 3)


def merge_heads(t: np.ndarray) -> np.ndarray:
    """``[B, heads, seq, size]`` -> ``[B, seq, heads * size]``."""
    return t.transpose(0, 2, 1, 3).reshape(t.shape[0], t.shape[2], -1)


def group_heads(t: np.ndarray, heads: int) -> np.ndarray:
    """KV heads (axis 1) repeated for ``heads`` query heads: grouped / multi-query attention,
    query head ``h`` reading KV head ``h // (heads / kv_heads)``."""
    return t if t.shape[1] == heads else np.repeat(t, heads // t.shape[1], axis=1)


def scaled_scores(q: np.ndarray, k: np.ndarray, scale: float | None) -> np.ndarray:
    """``Q Kᵀ * scale`` (default ``1 / sqrt(head_size)``) as ONNX's references compute it:
    both sides multiplied by ``sqrt(scale)`` in Q's type first; 4-D inputs, K's heads
    grouped to Q's."""
    factor = 1 / np.sqrt(q.shape[3]) if scale is None else float(scale)
    root = q.dtype.type(np.sqrt(factor))
    return np.matmul(q * root, np.swapaxes(group_heads(k, q.shape[1]), -1, -2) * root)


def softmax(x: np.ndarray) -> np.ndarray:
    """Softmax over the last axis; a row that is all ``-inf`` gives zeros, not NaN."""
    top = np.max(x, axis=-1, keepdims=True)
    safe = np.where(np.isneginf(top), 0, top).astype(x.dtype)
    e = np.exp(x - safe)
    total = np.sum(e, axis=-1, keepdims=True)
    return e / np.where(total == 0, 1, total)


def _window(q: int, k: int, offset: np.ndarray | int, left: int, right: int, causal: bool):
    """Which keys each query may see: causal (``j <= i + offset``) and the sliding window
    (``-1``: unbounded side); ``offset`` per batch as ``(B,)`` or one for all."""
    i = np.arange(q).reshape(q, 1)
    j = np.arange(k).reshape(1, k)
    shift = np.reshape(offset, (-1, 1, 1)) if np.ndim(offset) else offset
    diff = (i + shift) - j
    allowed = np.ones(np.shape(diff), bool)
    if causal:
        allowed &= diff >= 0
    if left >= 0:
        allowed &= diff <= left
    if right >= 0:
        allowed &= -diff <= right
    return allowed[:, None] if np.ndim(offset) else allowed


@irdl_op_definition
class AttentionOp(GraphOp):
    """ONNX Attention (see the module docstring)."""

    name = "graph.attention"
    ONNX_OP: ClassVar = "Attention"
    Q = operand_def(TensorType)
    K = operand_def(TensorType)
    V = operand_def(TensorType)
    attn_mask = opt_operand_def(TensorType)
    past_key = opt_operand_def(TensorType)
    past_value = opt_operand_def(TensorType)
    nonpad_kv_seqlen = opt_operand_def(TensorType)
    Y = result_def(TensorType)
    present_key = result_def(TensorType)
    present_value = result_def(TensorType)
    qk_matmul_output = result_def(TensorType)
    is_causal = int_attr()
    kv_num_heads = int_attr()
    q_num_heads = int_attr()
    qk_matmul_output_mode = int_attr()
    scale = float_attr()
    softcap = float_attr()
    softmax_precision = int_attr()
    left_window_size = int_attr()
    right_window_size = int_attr()
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {
        "is_causal": 0,
        "qk_matmul_output_mode": 0,
        "softcap": 0.0,
        "left_window_size": -1,
        "right_window_size": -1,
    }

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        q, k, v = (require(tensor_type(operands[i]), n) for i, n in enumerate("QKV"))
        past = tensor_type(operands[4]) if len(operands) > 4 else None
        if not q.rank == k.rank == v.rank or q.rank not in (3, 4):
            raise ShapeError("Q, K and V must all be 3-D or all 4-D")
        if q.rank == 3:
            hq, hkv = cls.read_attr(props, "q_num_heads"), cls.read_attr(props, "kv_num_heads")
            if hq is None or hkv is None:
                raise ShapeError("3-D inputs need q_num_heads and kv_num_heads")
            b, lq, s = q.origin_shape[0], q.origin_shape[1], k.origin_shape[1]
            dk, dv = _heads(k.origin_shape[2], hkv), _heads(v.origin_shape[2], hkv)
            y: list[Dim] = [b, lq, dv * hq if isinstance(dv, int) and dv >= 0 else UNKNOWN]
        else:
            b, hq, lq, _ = q.origin_shape
            _, hkv, s, dk = k.origin_shape
            dv = v.origin_shape[3]
            y = [b, hq, lq, dv]
        total = _plus(s, past.origin_shape[2]) if past is not None else s
        elt = q.element_type
        return [
            TensorType(y, elt),
            TensorType([b, hkv, total, dk], elt),
            TensorType([b, hkv, total, dv], elt),
            TensorType([b, hq, lq, total], elt),
        ]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        q, k, v, mask, past_k, past_v, nonpad = (list(inputs) + [None] * 7)[:7]
        assert q is not None and k is not None and v is not None
        dtype = q.dtype
        rank = q.ndim
        if rank == 3:
            hq, hkv = int(self.attr("q_num_heads")), int(self.attr("kv_num_heads"))
            q, k, v = (split_heads(t, h) for t, h in ((q, hq), (k, hkv), (v, hkv)))
        k = k if past_k is None else np.concatenate([past_k, k], axis=2)
        v = v if past_v is None else np.concatenate([past_v, v], axis=2)
        present_k, present_v = k, v
        lq, lk = q.shape[2], k.shape[2]
        bias = np.zeros((lq, lk), dtype)
        if mask is not None and mask.shape[-1] < lk:
            fill = False if mask.dtype == np.bool_ else -np.inf
            pad = [(0, 0)] * (mask.ndim - 1) + [(0, lk - mask.shape[-1])]
            mask = np.pad(mask, pad, constant_values=fill)
        if mask is not None:
            additive = np.where(mask, 0, -np.inf).astype(dtype) if mask.dtype == np.bool_ else mask
            bias = bias + additive
        causal = bool(self.attr("is_causal"))
        left, right = int(self.attr("left_window_size")), int(self.attr("right_window_size"))
        if causal or left >= 0 or right >= 0:
            if past_k is None and nonpad is not None:
                offset: np.ndarray | int = np.asarray(nonpad).reshape(-1) - lq
            else:
                offset = past_k.shape[2] if past_k is not None else 0
            seen = _window(lq, lk, offset, left, right, causal)
            bias = bias + np.where(seen, 0, -np.inf).astype(dtype)
        if nonpad is not None:
            keep = np.arange(lk) < np.asarray(nonpad).reshape(-1, 1)
            bias = bias + np.where(keep, 0, -np.inf).astype(dtype).reshape(-1, 1, 1, lk)
        qk = scaled_scores(q, k, self.attr("scale"))
        cap = float(self.attr("softcap"))
        if cap > 0:
            qk = (np.tanh(qk / cap) * cap).astype(dtype)
        with_bias = qk + bias
        mode = int(self.attr("qk_matmul_output_mode"))
        shown = with_bias if mode == 2 else qk
        precision = self.attr("softmax_precision")
        logits = with_bias
        if precision is not None:
            logits = logits.astype(onnx.helper.tensor_dtype_to_np_dtype(int(precision)))
        weights = softmax(logits)
        full_bias = np.broadcast_to(bias, with_bias.shape)
        fully_masked = np.isneginf(np.max(full_bias, axis=-1, keepdims=True))
        weights = np.where(fully_masked, 0, weights)
        if mode == 3:
            shown = weights
        y = np.matmul(weights.astype(dtype), group_heads(v, q.shape[1]))
        if rank == 3:
            y = merge_heads(y)
        return y.astype(dtype), present_k, present_v, np.asarray(shown).astype(dtype)


ATTENTION_OPS: list[type[GraphOp]] = [AttentionOp]
