"""``hoist-recurrent-projection``: a float RNN / GRU / LSTM whose ``W`` would stream from
GM in every step of its kernel computes its input projection for all steps first, as one
matmul, and the layer reads it::

    G = MatMul(X as [seq · batch, input], Reshape(Transpose(W, [2, 0, 1]), [input,
               dirs · gates · H])) as [seq, batch, dirs · gates · H]
    Y, ... = Op(G, W = none, R, B, ...)        # X·Wᵀ of step t: row t of G

``G`` is ``[seq, batch, dirs · gates · H]`` (both directions' gates side by side: one
matmul for a bidirectional layer, ``M = seq · batch`` rows instead of ``batch`` per step);
the recurrent kernel (:mod:`tilegraph.lowering.conversion.tiling.recurrent`) then
multiplies only ``h_{t-1}·Rᵀ`` per step and its vector side adds the gate's columns of
``G_t`` (cuDNN and onnxruntime's CPU LSTM compute the projection of all steps first too;
GE's DynamicRNN multiplies the concatenated ``[x_t, h_{t-1}]`` per step instead, which is
what the kernel does when this pass leaves a layer alone).

When: only where the kernel's plan (:func:`~tilegraph.lowering.conversion.tiling.
recurrent_plan.layer_sizes`, with the target's hardware and the default tiling choices)
leaves ``W`` streaming from GM per step — L1 does not hold it beside ``R``: then each step
moves all of ``W`` again, and the cycle model's step is bound by it (ddddocr's CRNN: a
bidirectional LSTM of hidden 512). Where ``W`` is resident in L1 the ``x_t`` matmul
overlaps the wait for the previous step's state and hoisting saves little (about 5 % of
piper tashkeel's GRU steps) — less than the extra kernel's launch. Layout 0, no
``sequence_lens`` (``expand-recurrent-lengths`` runs first), static shapes, more than one
step, float32 (a 16-bit layer would round ``G`` to 16 bits before the sum its fused form
accumulates in float32 in L0C: it is left alone).

Not exact: ``G``'s rounding to the element type comes before the recurrent product is
added (as in the frameworks above); within float tolerance of the layer.

Statistics: ``hoisted-recurrent-projections``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block
from xdsl.passes import ModulePass

from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.recurrent import GRUOp, LSTMBase, RecurrentOp
from tilegraph.dialects.graph.shape_ops import ReshapeOp, TransposeOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.recurrent_plan import Shape, layer_sizes
from tilegraph.passes.expand_qoperator import OpSequence, replace_results
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import start_pass
from tilegraph.target import target_of

_ATTRS = ("activations", "activation_alpha", "activation_beta", "clip", "direction", "layout")


def _w_streams(op: RecurrentOp, x: TensorType, hidden: int, dirs: int) -> bool:
    """The kernel's plan of ``op`` (default choices) leaves ``W`` streaming per step, and
    the projected layer has a plan too."""
    target = target_of(op)
    b = KernelBuilder(Block(), target.hw, dry_run=True, precision=target.precision)
    seq, batch, inputs = (int(d) for d in x.origin_shape)
    layer = Shape(batch, inputs, hidden, dirs)
    peephole = isinstance(op, LSTMBase) and op.P is not None
    assert op.W is not None
    whole = layer_sizes(b, op.GATES, layer, x.element_type, peephole, op.R, op.W, False)
    if isinstance(whole, str) or any(w.name == "w" for w in whole[0].resident):
        return False
    alone = layer_sizes(b, op.GATES, layer, x.element_type, peephole, op.R, op.R, True)
    return not isinstance(alone, str)


def _hoist(op: RecurrentOp) -> bool:
    """Rewrite ``op`` (see the module docstring); False when it is left alone."""
    x, y = op.X.type, op.Y.type
    if op.W is None or op.sequence_lens is not None or int(op.attr("layout") or 0) != 0:
        return False
    assert isinstance(x, TensorType) and isinstance(y, TensorType)
    if str(x.element_type) != "f32" or not x.is_static or not y.is_static:
        return False
    seq, dirs, batch, hidden = (int(d) for d in y.origin_shape)
    if seq < 2 or not _w_streams(op, x, hidden, dirs):
        return False
    s = OpSequence(op)
    at = s.constant
    inputs = int(x.origin_shape[2])
    w_t = s.value(TransposeOp, op.W, perm=[2, 0, 1])  # [input, dirs, gates·H]
    w_t = s.value(ReshapeOp, w_t, at(np.array([inputs, dirs * op.GATES * hidden], np.int64)))
    # X as one matrix of seq · batch rows: a matmul of [seq, batch, input] would be seq
    # matmuls of batch rows, each reading all of W
    rows = s.value(ReshapeOp, op.X, at(np.array([seq * batch, inputs], np.int64)))
    g = s.value(MatMulOp, rows, w_t)
    g = s.value(ReshapeOp, g, at(np.array([seq, batch, dirs * op.GATES * hidden], np.int64)))
    attrs = {k: op.attr(k) for k in _ATTRS} | {"hidden_size": hidden}
    states = [op.initial_h]
    if isinstance(op, GRUOp):
        attrs["linear_before_reset"] = op.attr("linear_before_reset")
    if isinstance(op, LSTMBase):
        states += [op.initial_c, op.P]
        attrs["input_forget"] = op.attr("input_forget")
    layer = s.op(type(op), g, None, op.R, op.B, None, *states, **attrs)
    replace_results(op, list(layer.results))
    return True


@register_pass
@dataclass(frozen=True)
class HoistRecurrentProjectionPass(ModulePass):
    """A float recurrent layer whose ``W`` would stream per step computes ``X·Wᵀ`` of all
    steps as one matmul first (see the module docstring)."""

    name = "hoist-recurrent-projection"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        for anchor in list(op.walk()):
            if isinstance(anchor, RecurrentOp) and _hoist(anchor):
                stats.add("hoisted-recurrent-projections")
