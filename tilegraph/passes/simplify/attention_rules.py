"""ONNX Attention -> its definition in ops that have kernels: MatMul, Softmax, Where.

``torch.nn.functional.scaled_dot_product_attention`` exports as ONNX Attention from opset 23
(the default exporter); as one op it is a host op. Its definition, for 4-D ``[B, H, S, D]``
or 3-D ``[B, S, H·D]`` inputs, is what this rule writes out:

* 3-D inputs split into heads (Reshape ``[0, 0, H, D]``, Transpose) and the result merged
  back;
* ``past_key`` / ``past_value`` concatenated before K / V along the sequence (the present
  outputs);
* grouped / multi-query KV heads repeated for the query heads as LLaMA's ``repeat_kv``
  writes it (Unsqueeze, Expand by ``[1, 1, n, 1, 1]``, Reshape), which the flash-attention
  fusion reads as a head-index view;
* ``Q·Kᵀ`` with both sides scaled by ``sqrt(scale)`` first (ONNX's reference; default
  ``scale = 1 / sqrt(D)``), ``softcap`` as ``tanh(x / c) · c``;
* the mask (bool: ``Where(mask, 0, -inf)``; float: added), the causal triangle with query
  ``i`` at key position ``past + i`` as a constant bias (static lengths);
* Softmax in ``softmax_precision`` (Casts around it when that differs), then ``·V``; a
  query row whose every key is masked gives zeros, as the op defines (a Where on
  ``ReduceMax(bias) > -inf``, only when there is a mask).

Not rewritten (the op stays): ``nonpad_kv_seqlen``, sliding windows, a used
``qk_matmul_output``, a causal mask of unknown lengths, head sizes or KV head counts that
are not static.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.element_types import numpy_dtype_of
from tilegraph.dialects.graph.attention import AttentionOp
from tilegraph.dialects.graph.binary import AddOp, DivOp, GreaterOp, MulOp
from tilegraph.dialects.graph.data_movement import ConcatOp, ExpandOp
from tilegraph.dialects.graph.elementwise import CastOp, TanhOp, onnx_dtype_code
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.logical import WhereOp
from tilegraph.dialects.graph.nn import SoftmaxOp
from tilegraph.dialects.graph.reduction import ReduceMaxOp
from tilegraph.dialects.graph.shape_ops import TransposeOp, UnsqueezeOp
from tilegraph.dialects.graph.windows import known
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.simplify.match import (
    OpSequence,
    drop_ops,
    is_float,
    reshaped,
    use_count,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule


class _Ops(OpSequence):
    """The ops of the decomposition, in order, with the attention's element type."""

    def __init__(self, dtype: np.dtype):
        super().__init__()
        self.dtype = dtype

    def scalar(self, value: float) -> SSAValue:
        return self.const(np.array(value, self.dtype))

    def reshape(self, value: SSAValue, shape: list[int]) -> SSAValue:
        return reshaped(value, shape, self.ops)


def _shape(value: SSAValue) -> tuple:
    t = value.type
    assert isinstance(t, TensorType)
    return t.origin_shape


@simplify_rule
class AttentionAsMatMuls(SimplifyRule):
    INFO = RuleInfo(
        None,
        "attention-as-matmuls",
        "Attention(Q, K, V[, mask, past_key, past_value])",
        "heads split / repeated, Q·Kᵀ, mask and causal bias, Softmax, ·V (its definition)",
        "no nonpad_kv_seqlen, windows or used qk_matmul_output; static head sizes; causal "
        "with static lengths",
        "ORT (Attention as its function body)",
    )
    ROOTS = (AttentionOp,)

    def rewrite(self, op: AttentionOp, rewriter: PatternRewriter) -> None:
        if op.nonpad_kv_seqlen is not None or use_count(op.qk_matmul_output):
            return
        if int(op.attr("left_window_size")) >= 0 or int(op.attr("right_window_size")) >= 0:
            return
        q_type = op.Q.type
        if not isinstance(q_type, TensorType) or not is_float(op.Q):
            return
        emit = _Ops(np.dtype(numpy_dtype_of(q_type.element_type)))
        built = self._build(op, emit)
        if built is None:
            drop_ops(emit.ops)
            return
        y, present_k, present_v = built
        results = [y, present_k, present_v, None]
        for old, new in zip(op.results, results, strict=True):
            if use_count(old) and (new is None or new.type != old.type):
                drop_ops(emit.ops)
                return
        rewriter.replace(op, emit.ops, results)

    @staticmethod
    def _build(op: AttentionOp, emit: _Ops) -> tuple[SSAValue, SSAValue, SSAValue] | None:
        q, k, v = op.Q, op.K, op.V
        three_d = len(_shape(q)) == 3
        if three_d:
            hq, hkv = op.attr("q_num_heads"), op.attr("kv_num_heads")
            dims = [_shape(x)[2] for x in (q, k, v)]
            if hq is None or hkv is None or not all(known(d) for d in dims):
                return None
            heads = [int(hq), int(hkv), int(hkv)]
            q, k, v = (
                emit.op(TransposeOp, emit.reshape(x, [0, 0, h, int(d) // h]), perm=[0, 2, 1, 3])
                for x, h, d in zip((q, k, v), heads, dims, strict=True)
            )
        if op.past_key is not None and op.past_value is not None:
            k = emit.op(ConcatOp, op.past_key, k, axis=2)
            v = emit.op(ConcatOp, op.past_value, v, axis=2)
        elif op.past_key is not None or op.past_value is not None:
            return None
        present_k, present_v = k, v
        (_, heads_q, length_q, size), (_, heads_kv, length_k, _) = _shape(q), _shape(k)
        size_v = _shape(v)[3]
        if not all(known(d) for d in (heads_q, heads_kv, size, size_v)) or heads_q % heads_kv:
            return None
        if heads_q != heads_kv:
            k, v = (
                _repeat_kv(emit, x, heads_kv, heads_q // heads_kv, d)
                for x, d in ((k, size), (v, size_v))
            )
        scale = op.attr("scale")
        root = emit.scalar(float(np.sqrt(1 / np.sqrt(size) if scale is None else float(scale))))
        scores = emit.op(
            MatMulOp,
            emit.op(MulOp, q, root),
            emit.op(MulOp, emit.op(TransposeOp, k, perm=[0, 1, 3, 2]), root),
        )
        cap = float(op.attr("softcap"))
        if cap > 0:
            c = emit.scalar(cap)
            scores = emit.op(MulOp, emit.op(TanhOp, emit.op(DivOp, scores, c)), c)
        biased = _bias(op, emit, length_q, length_k)
        if biased is None:
            return None
        bias, rows_may_be_masked = biased
        if bias is not None:
            scores = emit.op(AddOp, scores, bias)
        weights = _softmax(op, emit, scores)
        if bias is not None and rows_may_be_masked:
            axes = emit.const(np.array([-1], np.int64))
            top = emit.op(ReduceMaxOp, bias, axes, keepdims=1)
            seen = emit.op(GreaterOp, top, emit.scalar(-np.inf))
            weights = emit.op(WhereOp, seen, weights, emit.scalar(0.0))
        y = emit.op(MatMulOp, weights, v)
        if three_d:
            y = emit.reshape(emit.op(TransposeOp, y, perm=[0, 2, 1, 3]), [0, 0, -1])
        return y, present_k, present_v


def _repeat_kv(emit: _Ops, x: SSAValue, heads: int, repeats: int, size: int) -> SSAValue:
    """``[B, heads, S, D]`` -> ``[B, heads · repeats, S, D]``, each head repeated in place."""
    spread = emit.op(UnsqueezeOp, x, emit.const(np.array([2], np.int64)))
    spread = emit.op(ExpandOp, spread, emit.const(np.array([1, 1, repeats, 1, 1], np.int64)))
    return emit.reshape(spread, [0, heads * repeats, -1, size])


def _bias(op: AttentionOp, emit: _Ops, length_q, length_k) -> tuple[SSAValue | None, bool] | None:
    """The additive bias of the mask and the causal triangle (None: no bias) and whether a
    query row may have every key masked; None when it cannot be written out."""
    bias: SSAValue | None = None
    rows_may_be_masked = False
    mask = op.attn_mask
    if mask is not None:
        mask_type = mask.type
        assert isinstance(mask_type, TensorType)
        if not known(length_k) or _shape(mask)[-1] != length_k:
            return None  # a mask shorter than the keys is padded by the op: not written out
        if is_float(mask):
            bias = mask
        else:
            bias = emit.op(WhereOp, mask, emit.scalar(0.0), emit.scalar(-np.inf))
        rows_may_be_masked = True
    if int(op.attr("is_causal")):
        if not (known(length_q) and known(length_k)):
            return None
        past = _shape(op.past_key)[2] if op.past_key is not None else 0
        if not known(past):
            return None
        offset = int(past)  # query i sits at position past + i of the keys
        allowed = np.tril(np.ones((int(length_q), int(length_k)), bool), k=offset)
        triangle = emit.const(np.where(allowed, 0, -np.inf).astype(emit.dtype))
        bias = triangle if bias is None else emit.op(AddOp, bias, triangle)
        rows_may_be_masked |= offset < 0
    return bias, rows_may_be_masked


def _softmax(op: AttentionOp, emit: _Ops, scores: SSAValue) -> SSAValue:
    precision = op.attr("softmax_precision")
    if precision is None:
        return emit.op(SoftmaxOp, scores, axis=-1)
    from onnx.helper import tensor_dtype_to_np_dtype

    wide = np.dtype(tensor_dtype_to_np_dtype(int(precision)))
    if wide == emit.dtype:
        return emit.op(SoftmaxOp, scores, axis=-1)
    floats = ("float32", "float16", "float64")
    if wide.name not in floats or emit.dtype.name not in floats:
        return emit.op(SoftmaxOp, scores, axis=-1)
    widened = emit.op(CastOp, scores, to=onnx_dtype_code(wide.name))
    softmax = emit.op(SoftmaxOp, widened, axis=-1)
    return emit.op(CastOp, softmax, to=onnx_dtype_code(emit.dtype.name))
