"""Recurrent ops: RNN, GRU, LSTM (ONNX semantics, every direction and layout).

One driver (:class:`RecurrentOp`) runs the time loop for all three: directions (forward,
reverse, bidirectional), ``layout`` 0 / 1, ``sequence_lens`` (steps past a sequence's
length give zeros in ``Y`` and keep the last valid state; a length of 0 gives zero final
states, as onnxruntime does), initial states, ``clip`` and the
activation list with ``activation_alpha`` / ``activation_beta``. Each op contributes its
cell (:meth:`RecurrentOp.cell`): a few lines of its equations. Computed in float64, returned
in the input's type. On the tiled path: :mod:`tilegraph.lowering.conversion.tiling.recurrent`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import ArrayAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from tilegraph.dialects.graph.base import (
    GraphOp,
    ShapeError,
    float_attr,
    int_attr,
    shape_text,
    str_attr,
    tensor_type,
)
from tilegraph.dialects.graph.facts import ND_OPAQUE
from tilegraph.dialects.graph.shape_utils import require
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import Dim, dims_compatible

Activation = Callable[[np.ndarray], np.ndarray]


def _activation(name: str, alpha: float | None, beta: float | None) -> Activation:
    """ONNX's recurrent activation functions (alpha / beta defaults as the spec gives)."""
    key = name.lower()
    if key == "relu":
        return lambda x: np.maximum(x, 0)
    if key == "tanh":
        return np.tanh
    if key == "sigmoid":
        return lambda x: 1 / (1 + np.exp(-x))
    if key == "affine":
        return lambda x: (alpha if alpha is not None else 1.0) * x + (beta or 0.0)
    if key == "leakyrelu":
        a = 0.01 if alpha is None else alpha
        return lambda x: np.where(x >= 0, x, a * x)
    if key == "thresholdedrelu":
        a = 1.0 if alpha is None else alpha
        return lambda x: np.where(x > a, x, 0)
    if key == "scaledtanh":
        return lambda x: (alpha or 1.0) * np.tanh((beta or 1.0) * x)
    if key == "hardsigmoid":
        a, b = (0.2 if alpha is None else alpha), (0.5 if beta is None else beta)
        return lambda x: np.clip(a * x + b, 0, 1)
    if key == "elu":
        a = 1.0 if alpha is None else alpha
        return lambda x: np.where(x >= 0, x, a * (np.exp(x) - 1))
    if key == "softsign":
        return lambda x: x / (1 + np.abs(x))
    if key == "softplus":
        return lambda x: np.logaddexp(0, x)
    raise ShapeError(f"unknown recurrent activation '{name}'")


_TAKES_ALPHA = frozenset(
    ("affine", "leakyrelu", "thresholdedrelu", "scaledtanh", "hardsigmoid", "elu")
)
_TAKES_BETA = frozenset(("affine", "scaledtanh", "hardsigmoid"))


def activation_lists(op: GraphOp, defaults: tuple[str, ...], dirs: int) -> list[list[Activation]]:
    """Each direction's activation functions from ``op``'s ``activations``,
    ``activation_alpha`` and ``activation_beta`` (``defaults`` per direction when absent)."""
    names = list(op.attr("activations") or ()) or list(defaults * dirs)
    alphas = list(op.attr("activation_alpha") or [])
    betas = list(op.attr("activation_beta") or [])
    per = len(names) // dirs
    alpha = iter(alphas)
    beta = iter(betas)
    # alpha / beta are consumed in order by the activations that take them
    fns = [
        _activation(n, next(alpha, None) if n.lower() in _TAKES_ALPHA else None,
                    next(beta, None) if n.lower() in _TAKES_BETA else None)
        for n in names
    ]  # fmt: skip
    return [fns[d * per : (d + 1) * per] for d in range(dirs)]


def direction_activation_attrs(op: GraphOp, d: int, dirs: int) -> dict[str, list | None]:
    """``activations``, ``activation_alpha`` and ``activation_beta`` of direction ``d`` of
    ``op`` alone (of ``dirs``), as a one-direction op of the same kind takes them (alpha /
    beta are consumed in order by the activations that take them: the first direction's
    are those its activations take); None where ``op`` has none."""
    names = list(op.attr("activations") or ())
    if not names:
        return {"activations": None, "activation_alpha": None, "activation_beta": None}
    per = len(names) // dirs
    before, own = names[: d * per], names[d * per : (d + 1) * per]
    out: dict[str, list | None] = {"activations": own}
    for key, takes in (("activation_alpha", _TAKES_ALPHA), ("activation_beta", _TAKES_BETA)):
        values = list(op.attr(key) or [])
        start = sum(n.lower() in takes for n in before)
        mine = values[start : start + sum(n.lower() in takes for n in own)]
        out[key] = mine or None
    return out


def recurrent_results(
    x: TensorType, props: Mapping[str, Attribute], hidden: Dim, layout: int, states: int
) -> list[TensorType]:
    """The types of ``Y`` and the ``states`` final states of a recurrent op on ``x``
    (``props``' ``direction`` checked: ONNX's forward, reverse or bidirectional)."""
    direction = GraphOp.read_attr(props, "direction") or "forward"
    if direction not in ("forward", "reverse", "bidirectional"):
        raise ShapeError(f"direction must be forward, reverse or bidirectional, not {direction}")
    dirs = 2 if direction == "bidirectional" else 1
    seq, batch = x.origin_shape[:2] if layout == 0 else x.origin_shape[1::-1]
    y: list[Dim] = [seq, dirs, batch, hidden] if layout == 0 else [batch, seq, dirs, hidden]
    state: list[Dim] = [dirs, batch, hidden] if layout == 0 else [batch, dirs, hidden]
    elt = x.element_type
    return [TensorType(y, elt), *[TensorType(state, elt)] * states]


class RecurrentOp(GraphOp):
    """The shared operands, attributes, shapes and time loop of RNN, GRU and LSTM.

    ``W`` absent (not an ONNX form: ``hoist-recurrent-projection`` makes it): ``X`` is the
    input projection ``X·Wᵀ`` of every step, computed apart, ``[seq, batch, dirs · gates ·
    H]`` (direction ``d``'s gates at columns ``d · gates · H``, in time order for either
    direction; layout 0); the biases stay in ``B``."""

    X = operand_def(TensorType)
    W = opt_operand_def(TensorType)
    R = operand_def(TensorType)
    B = opt_operand_def(TensorType)
    sequence_lens = opt_operand_def(TensorType)
    initial_h = opt_operand_def(TensorType)
    Y = result_def(TensorType)
    Y_h = result_def(TensorType)
    activation_alpha = opt_prop_def(ArrayAttr)
    activation_beta = opt_prop_def(ArrayAttr)
    activations = opt_prop_def(ArrayAttr)
    clip = float_attr()
    direction = str_attr()
    hidden_size = int_attr()
    layout = int_attr()
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    FACTS: ClassVar = ND_OPAQUE
    GATES: ClassVar[int] = 1
    DEFAULT_ACTIVATIONS: ClassVar[tuple[str, ...]] = ("Tanh",)
    STATES: ClassVar[int] = 1
    """Hidden state only (1) or hidden and cell state (2: LSTM)."""

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "X")
        w = tensor_type(operands[1])
        if w is None:  # X is the input projection (see the class docstring)
            r = require(tensor_type(operands[2]), "R")
            if x.rank != 3 or r.rank != 3:
                raise ShapeError("X (the input projection) and R must be 3-D")
            hidden, dirs = r.origin_shape[2], r.origin_shape[0]
            width = x.origin_shape[2]
            if all(isinstance(v, int) for v in (hidden, dirs, width)):
                if width != dirs * cls.GATES * hidden:  # type: ignore[operator]
                    raise ShapeError(
                        f"without W, X is the input projection: its last axis must be "
                        f"{dirs} x {cls.GATES} x {hidden}, got {width}"
                    )
        elif x.rank != 3 or w.rank != 3:
            raise ShapeError("X and W must be 3-D")
        else:
            hidden = w.origin_shape[1] // cls.GATES  # type: ignore[operator]
        given = cls.read_attr(props, "hidden_size")
        hidden = given if given is not None else hidden
        layout = int(cls.read_attr(props, "layout") or 0)
        results = recurrent_results(x, props, hidden, layout, cls.STATES)
        state = results[1].origin_shape
        names = ("initial_h", "initial_c")[: cls.STATES]
        for name, operand in zip(names, operands[5 : 5 + cls.STATES], strict=False):
            given = tensor_type(operand)
            if given is None:
                continue
            dims = given.origin_shape
            if len(dims) != len(state) or not all(map(dims_compatible, dims, state)):
                raise ShapeError(
                    f"{name} must be {shape_text(state)} (directions, batch, hidden_size; the "
                    f"batch of X {shape_text(x.origin_shape)}), got {shape_text(dims)}"
                )
        return results

    def cell(
        self, xw: np.ndarray, states: list[np.ndarray], r: np.ndarray, b: np.ndarray,
        extra: dict[str, np.ndarray], f: list[Activation], clip: float | None,
    ) -> list[np.ndarray]:  # fmt: skip
        """The new states from the step's input projection ``xw = x_t·Wᵀ`` (no bias)."""
        raise NotImplementedError

    def _activations(self, dirs: int) -> list[list[Activation]]:
        return activation_lists(self, self.DEFAULT_ACTIVATIONS, dirs)

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        return self.run_layer(*inputs)[0]

    def run_layer(self, *inputs: np.ndarray | None) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
        """The results (``Y`` and the final states, :meth:`reference`) and the last state
        after each step, placed as ``Y`` places ``h`` (zeros where ``Y`` has them): LSTM's
        cell state per step (:class:`LSTMCellsOp`), ``h`` again for RNN / GRU."""
        slots = list(inputs) + [None] * 8
        x, w, r, b, lens, h0 = slots[:6]
        assert x is not None and r is not None
        extra = self.extra_inputs(slots)
        layout = int(self.attr("layout") or 0)
        xs = (x if layout == 0 else np.swapaxes(x, 0, 1)).astype(np.float64)
        seq, batch, _ = xs.shape
        dirs, hidden = r.shape[0], r.shape[-1]
        width = self.GATES * hidden
        bias = np.zeros((dirs, 2 * self.GATES * hidden)) if b is None else b.astype(np.float64)
        lengths = np.full(batch, seq) if lens is None else np.asarray(lens).astype(np.int64)
        init = [h0, extra.get("initial_c")][: self.STATES]
        clip = self.attr("clip")
        y = np.zeros((seq, dirs, batch, hidden))
        last = np.zeros((seq, dirs, batch, hidden))
        finals = [np.zeros((dirs, batch, hidden)) for _ in range(self.STATES)]
        for d, fns in enumerate(self._activations(dirs)):
            reverse = self.attr("direction") == "reverse" or d == 1
            states = [
                np.zeros((batch, hidden))
                if s is None
                else (s if layout == 0 else np.swapaxes(s, 0, 1))[d].astype(np.float64)
                for s in init
            ]
            per_dir = {k: v[d].astype(np.float64) for k, v in extra.items() if k != "initial_c"}
            for step in range(seq):
                # a reversed sequence runs from its own last step, not the padded length's
                t = (lengths - 1 - step) if reverse else np.full(batch, step)
                active = step < lengths
                xt = xs[np.clip(t, 0, seq - 1), np.arange(batch)]
                # without W, X is the projection: direction d's columns
                xw = xt[:, d * width : (d + 1) * width] if w is None else xt @ w[d].T
                new = self.cell(xw, states, r[d].astype(np.float64), bias[d], per_dir, fns, clip)
                states = [np.where(active[:, None], n, s) for n, s in zip(new, states, strict=True)]
                rows = np.arange(batch)[active]
                y[np.clip(t, 0, seq - 1)[active], d, rows] = states[0][active]
                last[np.clip(t, 0, seq - 1)[active], d, rows] = states[-1][active]
            for i, s in enumerate(states):
                # a sequence of length 0 ends in zeros, not its initial state: onnxruntime's
                # result (the specification does not say)
                finals[i][d] = np.where((lengths > 0)[:, None], s, 0)
        out_y, out_last = (v if layout == 0 else np.transpose(v, (2, 0, 1, 3)) for v in (y, last))
        outs = [out_y, *(s if layout == 0 else np.swapaxes(s, 0, 1) for s in finals)]
        return tuple(o.astype(x.dtype) for o in outs), out_last.astype(x.dtype)

    def extra_inputs(self, slots: list[np.ndarray | None]) -> dict[str, np.ndarray]:
        return {}


def _clip(v: np.ndarray, clip: float | None) -> np.ndarray:
    return v if clip is None else np.clip(v, -clip, clip)


def _split_bias(b: np.ndarray, gates: int) -> tuple[np.ndarray, np.ndarray]:
    half = b.shape[0] // 2
    return b[:half], b[half:]


@irdl_op_definition
class RNNOp(RecurrentOp):
    """ONNX RNN: ``H = f(X·Wᵀ + H·Rᵀ + Wb + Rb)`` (f: Tanh by default)."""

    name = "graph.rnn"
    ONNX_OP: ClassVar = "RNN"

    def cell(self, xw, states, r, b, extra, f, clip):  # noqa: ANN001
        wb, rb = _split_bias(b, 1)
        return [f[0](_clip(xw + states[0] @ r.T + wb + rb, clip))]


@irdl_op_definition
class GRUOp(RecurrentOp):
    """ONNX GRU (gates z, r, h; ``linear_before_reset`` applies the reset gate after the
    recurrent product)."""

    name = "graph.gru"
    ONNX_OP: ClassVar = "GRU"
    linear_before_reset = int_attr()
    GATES: ClassVar = 3
    DEFAULT_ACTIVATIONS: ClassVar = ("Sigmoid", "Tanh")

    def cell(self, xw, states, r, b, extra, f, clip):  # noqa: ANN001
        h = states[0]
        wb, rb = _split_bias(b, 3)
        n = h.shape[1]
        gx = xw + wb
        z = f[0](_clip(gx[:, :n] + h @ r[:n].T + rb[:n], clip))
        reset = f[0](_clip(gx[:, n : 2 * n] + h @ r[n : 2 * n].T + rb[n : 2 * n], clip))
        if self.attr("linear_before_reset"):
            cand = gx[:, 2 * n :] + reset * (h @ r[2 * n :].T + rb[2 * n :])
        else:
            cand = gx[:, 2 * n :] + (reset * h) @ r[2 * n :].T + rb[2 * n :]
        hn = f[1](_clip(cand, clip))
        return [(1 - z) * hn + z * h]


class LSTMBase(RecurrentOp):
    """ONNX LSTM (gates i, o, f, c; peepholes P; ``input_forget`` couples f = 1 - i); the
    third result is the final cell state ``Y_c``: ``graph.lstm`` and ``graph.lstm_cells``
    (irdl takes the fields of an undecorated base, not of another op)."""

    # restated in ONNX's order: irdl lists a subclass's own fields before inherited ones
    X = operand_def(TensorType)
    W = opt_operand_def(TensorType)
    R = operand_def(TensorType)
    B = opt_operand_def(TensorType)
    sequence_lens = opt_operand_def(TensorType)
    initial_h = opt_operand_def(TensorType)
    initial_c = opt_operand_def(TensorType)
    P = opt_operand_def(TensorType)
    Y = result_def(TensorType)
    Y_h = result_def(TensorType)
    Y_c = result_def(TensorType)
    input_forget = int_attr()
    GATES: ClassVar = 4
    STATES: ClassVar = 2
    DEFAULT_ACTIVATIONS: ClassVar = ("Sigmoid", "Tanh", "Tanh")

    def extra_inputs(self, slots: list[np.ndarray | None]) -> dict[str, np.ndarray]:
        found = {"initial_c": slots[6], "P": slots[7]}
        return {k: v for k, v in found.items() if v is not None}

    def cell(self, xw, states, r, b, extra, f, clip):  # noqa: ANN001
        h, c = states
        wb, rb = _split_bias(b, 4)
        p = extra.get("P", np.zeros(3 * h.shape[1]))
        gates = xw + h @ r.T
        return list(lstm_cell(gates, c, wb + rb, p, f, clip, bool(self.attr("input_forget"))))


@irdl_op_definition
class LSTMOp(LSTMBase):
    """ONNX LSTM (gates i, o, f, c; peepholes P; ``input_forget`` couples f = 1 - i); the
    third result is the final cell state ``Y_c``."""

    name = "graph.lstm"
    ONNX_OP: ClassVar = "LSTM"


@irdl_op_definition
class LSTMCellsOp(LSTMBase):
    """``graph.lstm`` with a fourth result ``Y_cs``: the cell state after each step,
    shaped and placed as ``Y`` holds ``h`` (``[seq, dirs, batch, hidden]``, layout 0).
    ``expand-recurrent-lengths`` makes it for an LSTM with ``sequence_lens`` whose final
    cell state is read: ``Y_c`` is then ``Y_cs`` at each entry's last step, as ``Y_h`` is
    ``Y`` there. Not an ONNX op (layout 0 only)."""

    name = "graph.lstm_cells"
    ONNX_OP: ClassVar = None
    # the results restated, in order (a subclass's own fields come first); the operands
    # are LSTMBase's
    Y = result_def(TensorType)
    Y_h = result_def(TensorType)
    Y_c = result_def(TensorType)
    Y_cs = result_def(TensorType)

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        if int(cls.read_attr(props, "layout") or 0) != 0:
            raise ShapeError("graph.lstm_cells takes layout 0 only")
        results = super().infer_shapes(operands, props)
        return [*results, results[0]]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        outs, cells = self.run_layer(*inputs)
        return (*outs, cells)


def lstm_cell(
    gates: np.ndarray, c: np.ndarray, bias: np.ndarray, peep: np.ndarray,
    f: list[Activation], clip: float | None, input_forget: bool,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """ONNX LSTM's cell: the new ``(h, c)`` from the gate sums ``gates`` (i, o, f, c; the
    input and recurrent products, biases not yet added), each gate summed as onnxruntime
    orders it — the peephole term, then the bias — then clipped and activated; every result
    in ``c``'s dtype (float64 for ``graph.lstm``'s reference, float32 for
    ``graph.dynamic_quantize_lstm``'s, which reproduces onnxruntime's arithmetic)."""
    n = c.shape[1]

    def gate(k: int, extra: np.ndarray | float, fn: Activation) -> np.ndarray:
        v = gates[:, k * n : (k + 1) * n] + extra + bias[k * n : (k + 1) * n]
        return fn(_clip(v, clip)).astype(c.dtype)

    i = gate(0, peep[:n] * c, f[0])
    fg = 1 - i if input_forget else gate(2, peep[2 * n :] * c, f[0])
    c_new = (fg * c + i * gate(3, 0.0, f[1])).astype(c.dtype)
    o = gate(1, peep[n : 2 * n] * c_new, f[0])
    return (o * f[2](c_new)).astype(c.dtype), c_new


RECURRENT_OPS: list[type[GraphOp]] = [RNNOp, GRUOp, LSTMOp, LSTMCellsOp]
