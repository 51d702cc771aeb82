"""``expand-recurrent-lengths``: a recurrent layer with ``sequence_lens`` as the same layer
without it plus ops that have kernels (ReverseSequence, Less, Where, Slice, Concat).

ONNX's RNN / GRU / LSTM with ``sequence_lens`` run each batch entry ``b`` over its first
``len[b]`` steps only: steps ``t >= len[b]`` give ``Y = 0`` and leave the state as it was;
the reverse direction runs each entry from its own step ``len[b] - 1`` down to 0. The
recurrent kernel runs every step of every entry, so this pass rewrites, per direction
(layout 0; ``X`` ``[seq, batch, input]``)::

    forward:  Y1 = Op(X)                          # direction = forward, no sequence_lens
    reverse:  Y1 = Op(ReverseSequence(X, lens))   # each entry's first len[b] steps reversed
    R  = ReverseSequence(Y1, lens)                # row 0: Y1 at step len[b] - 1
    Y  = Where(t < len[b], Y1 (forward) | R (reverse), 0)
    Y_h = Where(len[b] > 0, R[0], 0)
    Y_c = Where(len[b] > 0, ReverseSequence(C1, lens)[0], 0)   # LSTM: C1 from lstm_cells

(only what is used: a forward layer whose ``Y_h`` nobody reads needs no ``R``)

Why it is exact, not approximately so: the forward recurrence's step ``t`` depends on steps
``<= t`` only, so for ``t < len[b]`` the unmasked layer computes the masked layer's state
bit for bit (the same operations on the same values), and later steps are discarded by a
select (a NaN in the padding stays there). The reverse direction on an entry is the forward
recurrence over ``X[len-1], ..., X[0]``, which is what ``ReverseSequence`` puts in rows
``0 .. len-1``; its state after step ``s`` belongs at row ``len-1-s``, which is where the
second ``ReverseSequence`` moves it (the mask ``t < len[b]`` is the same before and after,
as ``ReverseSequence`` moves rows within ``[0, len)`` only). The final state is the state
after step ``len[b] - 1``, which is row 0 of ``R`` in both directions; an entry of length 0
gets zeros (onnxruntime's result: :mod:`tilegraph.dialects.graph.recurrent` matches it). A
bidirectional layer is its two directions as one-direction layers (``W``, ``R``, ``B``,
the initial states and ``P`` sliced per direction, the activations split as ONNX assigns
them), their ``Y`` and ``Y_h`` concatenated back.

The step numbers are a constant when ``T`` is static, else ``Range(0, Shape(X)[0])``
(a model whose batch or sequence comes from data: tashkeel's packed sequences).

**The final cell state.** ``Y_c`` cannot be read from ``Y`` (``h = o ⊙ tanh(c)`` does not
give ``c`` back), so an LSTM whose ``Y_c`` is used becomes ``graph.lstm_cells``: the same
layer with a fourth result ``C1``, the cell state after each step (its kernel stores the
``c`` it already computes to one more GM sequence output per step). ``Y_c`` is then ``C1``
at step ``len[b] - 1``, taken exactly as ``Y_h`` is taken from ``Y1`` (the argument above
holds for ``c`` as for ``h``). Chosen over a length-masked state update (GE's DynamicRNN
takes a ``seq_length`` input and keeps the state of finished entries): that needs the
lengths and a per-row select in every step of the kernel, this one store per step and
the ops the pass already makes.

Not rewritten: ``layout = 1`` (the recurrent kernel takes layout 0 only).

Statistics: ``expanded-recurrent-lengths``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tilegraph.dialects.element_types import element_type_of, numpy_dtype_of
from tilegraph.dialects.graph.constant_ops import ShapeOp
from tilegraph.dialects.graph.data_movement import ConcatOp, SliceOp
from tilegraph.dialects.graph.elementwise import CastOp
from tilegraph.dialects.graph.generators import RangeOp
from tilegraph.dialects.graph.indexing import ReverseSequenceOp
from tilegraph.dialects.graph.logical import WhereOp
from tilegraph.dialects.graph.recurrent import (
    GRUOp,
    LSTMBase,
    LSTMCellsOp,
    RecurrentOp,
    direction_activation_attrs,
)
from tilegraph.dialects.graph.shape_ops import SqueezeOp, UnsqueezeOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.expand_qoperator import OpSequence
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import start_pass

_SHARED_ATTRS = ("clip", "hidden_size")
_ONNX_INT = {np.dtype(np.int32): 6, np.dtype(np.int64): 7}
"""ONNX's type codes of the lengths' types (RNN / GRU / LSTM take int32)."""


class _Rewrite:
    """The ops replacing one recurrent op ``op`` (``T`` steps, ``B`` batch entries; either
    may be a symbol: the ops read ``T`` from ``X``'s shape then)."""

    def __init__(self, op: RecurrentOp, int_type: np.dtype):
        self.op = op
        self.seq = OpSequence(op)
        lens = op.sequence_lens
        assert lens is not None
        self.lens = lens
        y_type = op.Y.type
        assert isinstance(y_type, TensorType)
        self.zero = self.seq.constant(np.zeros((), numpy_dtype_of(y_type.element_type)))
        column = self.unsqueeze(lens, [0, 2])  # [1, B, 1]
        # only what is used is made: a forward layer whose Y_h is not read needs no reversal
        self.valid = self.started = None
        self.cells = isinstance(op, LSTMBase) and bool(op.Y_c.uses)
        """The final cell state is read: each direction's layer is a ``graph.lstm_cells``."""
        if op.Y.uses:  # [T, B, 1]: t < len[b]
            self.valid = self.seq.value("graph.less", self._steps(int_type), column)
        if op.Y_h.uses or self.cells:  # [1, B, 1]: len[b] > 0
            zero = self.seq.constant(np.zeros((), int_type))
            self.started = self.seq.value("graph.greater", column, zero)

    def _steps(self, int_type: np.dtype) -> SSAValue:
        """``[T, 1, 1]``: the step numbers ``0 .. T-1`` in the lengths' type."""
        x = self.op.X.type
        assert isinstance(x, TensorType)
        steps = x.origin_shape[0]
        if isinstance(steps, int):
            return self.seq.constant(np.arange(steps, dtype=int_type).reshape(steps, 1, 1))
        at = self.seq.constant
        count = self.seq.value(SqueezeOp, self.seq.value(ShapeOp, self.op.X, start=0, end=1))
        numbers = self.seq.value(RangeOp, at(np.int64(0)), count, at(np.int64(1)))
        numbers = self.seq.value(CastOp, numbers, to=_ONNX_INT[int_type])
        axes = self.seq.constant(np.array([1, 2], np.int64))
        # Range's length is unknown to shape inference; it is X's first dim, which keeps Y's
        # type what it was
        column = TensorType([steps, 1, 1], element_type_of(int_type))
        return self.seq.value(UnsqueezeOp, numbers, axes, result_types=[column])

    def unsqueeze(self, value: SSAValue, axes: list[int]) -> SSAValue:
        return self.seq.value(UnsqueezeOp, value, self.seq.constant(np.array(axes, np.int64)))

    def reverse(self, value: SSAValue) -> SSAValue:
        """``value`` ``[T, B, ...]`` with each entry's first ``len[b]`` steps reversed."""
        return self.seq.value(ReverseSequenceOp, value, self.lens, batch_axis=1, time_axis=0)

    def row(self, value: SSAValue, d: int) -> SSAValue:
        """Row ``d`` of ``value``'s axis 0 (kept as an axis of 1)."""
        at = self.seq.constant
        starts, ends, axes = at(np.array([d])), at(np.array([d + 1])), at(np.array([0]))
        return self.seq.value(SliceOp, value, starts, ends, axes)

    def direction(self, value: SSAValue | None, d: int, dirs: int) -> SSAValue | None:
        """Direction ``d``'s part of a per-direction operand (``[dirs, ...]``)."""
        return value if value is None or dirs == 1 else self.row(value, d)

    def run(self, d: int, dirs: int, reverse: bool) -> list[SSAValue | None]:
        """Direction ``d``'s ``Y`` ``[T, 1, B, H]``, ``Y_h`` and ``Y_c`` ``[1, B, H]``
        (None: not used)."""
        op = self.op
        x = self.reverse(op.X) if reverse else op.X
        per = [self.direction(v, d, dirs) for v in (op.W, op.R, op.B)]
        states = [self.direction(op.initial_h, d, dirs)]
        attrs = {k: op.attr(k) for k in _SHARED_ATTRS} | direction_activation_attrs(op, d, dirs)
        if isinstance(op, GRUOp):
            attrs["linear_before_reset"] = op.attr("linear_before_reset")
        if isinstance(op, LSTMBase):
            states += [self.direction(v, d, dirs) for v in (op.initial_c, op.P)]
            attrs["input_forget"] = op.attr("input_forget")
        kind = LSTMCellsOp if self.cells else type(op)
        layer = self.seq.op(kind, x, *per, None, *states, direction="forward", **attrs)
        used = self.valid is not None or op.Y_h.uses
        y = self.squeeze(layer.results[0]) if used else None  # [T, B, H]
        need_back = (reverse and self.valid is not None) or bool(op.Y_h.uses)
        back = self.reverse(y) if need_back and y is not None else None
        kept = None
        if self.valid is not None:
            assert y is not None and (back is not None or not reverse)
            kept = self.seq.value(WhereOp, self.valid, back if reverse else y, self.zero)
            kept = self.unsqueeze(kept, [1])
        y_h = self.last(back) if op.Y_h.uses else None
        # the cell state after each step, taken as Y_h is taken from Y
        y_c = self.last(self.reverse(self.squeeze(layer.results[3]))) if self.cells else None
        return [kept, y_h, y_c]

    def squeeze(self, value: SSAValue) -> SSAValue:
        """A one-direction sequence ``[T, 1, B, H]`` as ``[T, B, H]``."""
        return self.seq.value(SqueezeOp, value, self.seq.constant(np.array([1], np.int64)))

    def last(self, back: SSAValue | None) -> SSAValue:
        """Row 0 of ``back`` (a per-step state reversed per entry: the state after step
        ``len[b] - 1``), zero where ``len[b] = 0``."""
        assert back is not None and self.started is not None
        return self.seq.value(WhereOp, self.started, self.row(back, 0), self.zero)


def _expand(op: RecurrentOp) -> bool:
    """Rewrite ``op`` (see the module docstring); False when it is not rewritten."""
    if op.sequence_lens is None or int(op.attr("layout") or 0) != 0:
        return False
    lens_type = op.sequence_lens.type
    assert isinstance(lens_type, TensorType)
    int_type = numpy_dtype_of(lens_type.element_type)
    finals = (op.Y_h, op.Y_c) if isinstance(op, LSTMBase) else (op.Y_h,)
    if int_type not in _ONNX_INT or not any(r.uses for r in (op.Y, *finals)):
        return False
    direction = op.attr("direction") or "forward"
    dirs = 2 if direction == "bidirectional" else 1
    rewrite = _Rewrite(op, int_type)
    parts = [rewrite.run(d, dirs, direction == "reverse" or d == 1) for d in range(dirs)]
    for i, old in enumerate((op.Y, *finals)):
        new = [part[i] for part in parts]
        if new[0] is None:
            continue
        joined = new[0] if dirs == 1 else rewrite.seq.value(ConcatOp, *new, axis=int(i == 0))
        assert joined is not None
        joined.name_hint = old.name_hint
        old.replace_all_uses_with(joined)
    Rewriter.erase_op(op)
    return True


@register_pass
@dataclass(frozen=True)
class ExpandRecurrentLengthsPass(ModulePass):
    """A recurrent layer with ``sequence_lens`` becomes the layer without it, per
    direction, plus ReverseSequence / Less / Where / Slice / Concat (exactly ONNX's
    semantics; see the module docstring)."""

    name = "expand-recurrent-lengths"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        for anchor in list(op.walk()):
            if isinstance(anchor, RecurrentOp) and _expand(anchor):
                stats.add("expanded-recurrent-lengths")
