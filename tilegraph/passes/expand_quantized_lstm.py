"""``expand-quantized-lstm``: a DynamicQuantizeLSTM's input projection as graph ops, under
``int8``.

``graph.dynamic_quantize_lstm`` quantises ``X`` once over the whole sequence and multiplies
every step's row by ``W`` before the recurrence needs it, so the projection of all steps is
one quantised matmul, which this pass writes as the ops onnxruntime's ``quantize_dynamic``
makes of a MatMul (and ``expand-qoperator`` / ``fold-integer-ops``, run next, put on the
int8 cube)::

    x_q, x_scale, x_zp = DynamicQuantizeLinear(X)                 # [seq, batch, input]
    G = Cast(MatMulInteger(x_q, W_all, x_zp, W_zp_all), float32) · (x_scale · W_scale_all)
    Y, Y_h, Y_c = graph.dynamic_quantize_lstm_steps(G, R_c, B, initial_h, initial_c, P,
                                                    R_scale_all, R_zp_c)

``W_all`` ``[input, dirs * 4H]`` is the directions' ``W[d]`` side by side (one matmul for
both directions of a bidirectional layer: ``X``'s quantisation is the same for both),
``W_zp_all`` each direction's first zero point repeated over its ``4H`` columns (the one
onnxruntime uses), ``W_scale_all`` its scales per column (a per-tensor scale repeated:
``x_scale · W_scale`` is the same float32 product either way). So ``G`` is, bit for bit,
the op's :func:`~tilegraph.dialects.graph.quantized_recurrent.input_projection`: the
integer products exact, ``float32(acc)`` times the float32 ``x_scale · W_scale``. The
recurrence (``h`` quantised by its own range each step) stays one op,
``graph.dynamic_quantize_lstm_steps``, with ``R`` as the int8 cube reads it: ``R_c``
int8 ``[dirs, 4H, H]`` and ``R_zp_c`` int8 ``[dirs]``
(:func:`~tilegraph.dialects.graph.quantized_recurrent.centred_recurrent_weights`: a uint8
``R`` and its zero point moved by -128, the differences ``R - R_zp`` unchanged), and
``R_scale_all`` ``[dirs, 4H]`` (a per-tensor scale repeated over its direction's columns:
the same float32 products ``h_scale · R_scale``).

Not expanded: ``W``, ``W_scale``, ``W_zero_point``, ``R``, ``R_scale`` or
``R_zero_point`` not constants. Under any other precision the pass changes nothing.

Statistics: ``expanded-quantized-lstm``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilegraph.dialects.graph.elementwise import CastOp
from tilegraph.dialects.graph.quantize import DynamicQuantizeLinearOp
from tilegraph.dialects.graph.quantized_linalg import MatMulIntegerOp
from tilegraph.dialects.graph.quantized_recurrent import (
    DynamicQuantizeLSTMOp,
    DynamicQuantizeLSTMStepsOp,
    centred_recurrent_weights,
    first_zero_points,
)
from tilegraph.passes.expand_qoperator import OpSequence, replace_results
from tilegraph.passes.fold_qdq import INT8_PRECISION
from tilegraph.passes.registry import register_pass
from tilegraph.passes.simplify.match import constant_array
from tilegraph.passes.statistics import start_pass
from tilegraph.target import target_of

_ONNX_FLOAT = 1
_STEP_ATTRS = (
    "activation_alpha",
    "activation_beta",
    "activations",
    "clip",
    "direction",
    "hidden_size",
    "input_forget",
)
"""The attributes the steps op shares with DynamicQuantizeLSTM."""


def _projection_weights(
    w: np.ndarray, scale: np.ndarray, zero: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``W_all``, ``W_zp_all`` and ``W_scale_all`` (see the module docstring) of ``W``
    ``[dirs, input, 4H]`` and its ``[dirs]`` or ``[dirs, 4H]`` scales and zero points."""
    dirs, _, gates = w.shape
    w_all = np.concatenate(list(w), axis=1)
    firsts = first_zero_points(zero, dirs)[:, None]
    zero_all = np.broadcast_to(firsts, (dirs, gates)).reshape(-1).astype(w.dtype)
    scale_all = np.broadcast_to(scale.reshape(dirs, -1), (dirs, gates)).reshape(-1)
    return w_all, zero_all, scale_all.astype(np.float32)


def _expand(op: DynamicQuantizeLSTMOp) -> bool:
    """Rewrite ``op`` (see the module docstring); False when its weights are not constants."""
    w, scale, zero = (constant_array(v) for v in (op.W, op.W_scale, op.W_zero_point))
    r, r_scale, r_zero = (constant_array(v) for v in (op.R, op.R_scale, op.R_zero_point))
    if any(a is None for a in (w, scale, zero, r, r_scale, r_zero)):
        return False
    assert w is not None and scale is not None and zero is not None
    assert r is not None and r_scale is not None and r_zero is not None
    w_all, zero_all, scale_all = _projection_weights(w, scale, zero)
    r_c, r_zero_c = centred_recurrent_weights(r, r_zero)
    dirs, gates = r.shape[0], r.shape[2]
    r_scale_all = np.broadcast_to(r_scale.reshape(dirs, -1), (dirs, gates)).astype(np.float32)
    seq = OpSequence(op)
    x_q, x_scale, x_zero = seq.op(DynamicQuantizeLinearOp, op.X).results
    acc = seq.value(MatMulIntegerOp, x_q, seq.constant(w_all), x_zero, seq.constant(zero_all))
    scales = seq.value("graph.mul", x_scale, seq.constant(scale_all))
    g = seq.value("graph.mul", seq.value(CastOp, acc, to=_ONNX_FLOAT), scales)
    attrs = {k: op.attr(k) for k in _STEP_ATTRS}
    steps = seq.op(
        DynamicQuantizeLSTMStepsOp,
        g,
        seq.constant(r_c),
        op.B,
        op.initial_h,
        op.initial_c,
        op.P,
        seq.constant(np.ascontiguousarray(r_scale_all)),
        seq.constant(r_zero_c),
        **attrs,
    )
    replace_results(op, list(steps.results))
    return True


@register_pass
@dataclass(frozen=True)
class ExpandQuantizedLSTMPass(ModulePass):
    """Under the ``int8`` precision, a DynamicQuantizeLSTM with constant weights becomes its
    input projection as DynamicQuantizeLinear + MatMulInteger + scales (for the int8 cube)
    and ``graph.dynamic_quantize_lstm_steps``, the recurrence."""

    name = "expand-quantized-lstm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        if target_of(op).precision != INT8_PRECISION:
            return
        for anchor in list(op.walk()):
            if isinstance(anchor, DynamicQuantizeLSTMOp) and _expand(anchor):
                stats.add("expanded-quantized-lstm")
