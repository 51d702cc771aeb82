"""onnxruntime's ``com.microsoft`` DynamicQuantizeLSTM: an LSTM whose gate products run on
int8 / uint8 weights with activations quantised at run time.

What onnxruntime computes (its CPU kernel ``contrib_ops/cpu/quantization/
dynamic_quantize_lstm.cc`` over the LSTM of ``core/providers/cpu/rnn/uni_directional_lstm.cc``
and the quantised ``ComputeGemm`` of ``core/providers/cpu/rnn/rnn_helpers.cc``), and so what
the reference here reproduces:

* Operands: ``X`` float32 ``[seq, batch, input]``; ``W`` int8 or uint8 ``[dirs, input, 4H]``
  and ``R`` ``[dirs, H, 4H]`` (transposed against ONNX LSTM's ``[dirs, 4H, input]``, gate
  order i, o, f, c as in ONNX); ``B``, ``sequence_lens``, ``initial_h``, ``initial_c``,
  ``P`` as ONNX LSTM; then ``W_scale``, ``W_zero_point``, ``R_scale``, ``R_zero_point``,
  each ``[dirs]`` (per tensor) or ``[dirs, 4H]`` (per output channel). Only the first zero
  point of a direction is used (onnxruntime requires int8 zero points to be 0 and uint8
  ones to be equal along the channels). No ``layout`` attribute: ``X`` is sequence-major.
* The input projection: per direction, all ``seq * batch`` rows of ``X`` are quantised
  **once** onto DynamicQuantizeLinear's uint8 grid (range including 0, ``scale = (hi - lo)
  / 255``, zero point ``round_half_even(-lo / scale)``, ``q = clip(round_half_even(x /
  scale) + zp, 0, 255)``, float32 throughout), multiplied exactly in int32 by ``W - W_zp``,
  and scaled by the float32 product ``x_scale * W_scale[channel]``.
* Each time step: the hidden state ``h`` of the whole batch is quantised the same way (its
  own run-time scale and zero point per step), ``(q_h - zp_h) · (R - R_zp)`` in int32,
  scaled by ``h_scale * R_scale[channel]`` and accumulated onto the step's projection.
  (With several intra-op threads onnxruntime splits a batch of more than 4 rows, or of 2+
  rows when ``H <= 256``, into row blocks quantised separately; one thread, or batch 1 as
  in exported CRNNs, quantises the whole batch, which is what this op states.)
* Then ONNX LSTM's cell: bias ``Wb + Rb``, peepholes, ``clip``, the activation list,
  ``input_forget``, in float32. ``sequence_lens`` is refused (onnxruntime zeroes a finished
  row's hidden state for the next step's quantisation, not a case exported models need).

``graph.dynamic_quantize_lstm_steps`` is the recurrence alone, over the input projection
computed apart (:func:`input_projection`; ``expand-quantized-lstm`` makes it a quantised
matmul for the int8 cube under ``int8``); both ops' references share
:func:`quantized_lstm_steps`.
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
    str_attr,
    tensor_type,
)
from tilegraph.dialects.graph.facts import ND_OPAQUE
from tilegraph.dialects.graph.quantize import dynamic_quantize
from tilegraph.dialects.graph.recurrent import activation_lists, lstm_cell, recurrent_results
from tilegraph.dialects.graph.shape_utils import require
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType
from tilegraph.formats.dims import Dim


def quantized_product(x: np.ndarray, w: np.ndarray, w_zero: int, w_scale: np.ndarray) -> np.ndarray:
    """``x`` (float32 rows) quantised dynamically, times the integer weights ``w`` ``[K, N]``
    less ``w_zero``, exact, then scaled by ``x_scale * w_scale`` (float32, per tensor or per
    column): onnxruntime's quantised ``ComputeGemm``."""
    q, scale, zero = dynamic_quantize(x)
    # float64 products of integers below 2**53 are exact: the int32 accumulator's value
    acc = (q.astype(np.float64) - float(zero)) @ (w.astype(np.float64) - float(w_zero))
    return acc.astype(np.float32) * (scale * w_scale.astype(np.float32))


class _QuantizedLSTMBase(GraphOp):
    """The results and attributes DynamicQuantizeLSTM and its recurrence op share (the
    operands are each op's own: irdl lists a subclass's fields before inherited ones)."""

    Y = result_def(TensorType)
    Y_h = result_def(TensorType)
    Y_c = result_def(TensorType)
    activation_alpha = opt_prop_def(ArrayAttr)
    activation_beta = opt_prop_def(ArrayAttr)
    activations = opt_prop_def(ArrayAttr)
    clip = float_attr()
    direction = str_attr()
    hidden_size = int_attr()
    input_forget = int_attr()
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    FACTS: ClassVar = ND_OPAQUE
    DEFAULT_ACTIVATIONS: ClassVar = ("Sigmoid", "Tanh", "Tanh")
    GATES: ClassVar = 4
    """Gates per hidden column (i, o, f, c), as ``graph.lstm``'s."""

    @classmethod
    def hidden_of(cls, props: Mapping[str, Attribute], r: TensorType) -> Dim:
        """``hidden_size``, else ``R``'s ``H`` (``[dirs, H, 4H]``)."""
        hidden = cls.read_attr(props, "hidden_size")
        return hidden if hidden is not None else r.origin_shape[1]


@irdl_op_definition
class DynamicQuantizeLSTMOp(_QuantizedLSTMBase):
    """onnxruntime's DynamicQuantizeLSTM (domain ``com.microsoft``, the only op of that
    domain imported): ONNX LSTM with int8 / uint8 ``W`` ``[dirs, input, 4H]`` and ``R``
    ``[dirs, H, 4H]`` and their per-tensor or per-channel scales and zero points; ``X`` is
    quantised to uint8 once over all steps and ``h`` at each step (range including 0, as
    DynamicQuantizeLinear), the integer products are exact and scaled by ``x_scale *
    w_scale``, as onnxruntime's CPU kernel computes it (the module docstring has the
    details); no ``sequence_lens``. Results ``Y`` ``[seq, dirs, batch, H]``, ``Y_h`` and
    ``Y_c`` ``[dirs, batch, H]``."""

    name = "graph.dynamic_quantize_lstm"
    ONNX_OP: ClassVar = "DynamicQuantizeLSTM"
    ONNX_DOMAIN: ClassVar = "com.microsoft"
    X = operand_def(TensorType)
    W = operand_def(TensorType)
    R = operand_def(TensorType)
    B = opt_operand_def(TensorType)
    sequence_lens = opt_operand_def(TensorType)
    initial_h = opt_operand_def(TensorType)
    initial_c = opt_operand_def(TensorType)
    P = opt_operand_def(TensorType)
    W_scale = operand_def(TensorType)
    W_zero_point = operand_def(TensorType)
    R_scale = operand_def(TensorType)
    R_zero_point = operand_def(TensorType)

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "X")
        w = require(tensor_type(operands[1]), "W")
        r = require(tensor_type(operands[2]), "R")
        if x.rank != 3 or w.rank != 3 or r.rank != 3:
            raise ShapeError("X, W and R must be 3-D")
        if x.dtype != DType.float32:
            raise ShapeError(f"X must be float32, got {x.element_type}")
        for name, t in (("W", w), ("R", r)):
            if t.dtype not in (DType.int8, DType.uint8):
                raise ShapeError(f"{name} must be int8 or uint8, got {t.element_type}")
        if len(operands) > 4 and operands[4] is not None:
            raise ShapeError("sequence_lens is not supported (see the op's documentation)")
        hidden = cls.hidden_of(props, r)
        return recurrent_results(x, props, hidden, 0, 2)

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, w, r, b, _lens, h0, c0, p, ws, wz, rs, rz = (list(inputs) + [None] * 12)[:12]
        assert x is not None and w is not None and r is not None
        assert ws is not None and wz is not None and rs is not None and rz is not None
        return quantized_lstm_steps(self, input_projection(x, w, ws, wz), r, b, h0, c0, p, rs, rz)


def input_projection(x: np.ndarray, w: np.ndarray, ws: np.ndarray, wz: np.ndarray) -> np.ndarray:
    """The input projection of every step and direction, ``[seq, batch, dirs * 4H]``
    float32 (direction ``d``'s gates at columns ``d * 4H ...``, in time order whatever the
    direction): ``X`` quantised once (one scale and zero point for all directions: the
    range of the same tensor), times ``W[d] - W_zp[d]`` exact, scaled by ``x_scale *
    W_scale[d][channel]``."""
    seq, batch, _ = x.shape
    dirs = w.shape[0]
    rows = x.astype(np.float32).reshape(seq * batch, -1)
    parts = [
        quantized_product(rows, w[d], _first(wz, dirs, d), ws.reshape(dirs, -1)[d])
        for d in range(dirs)
    ]
    return np.concatenate(parts, axis=1).reshape(seq, batch, -1)


def quantized_lstm_steps(
    op: GraphOp,
    gx: np.ndarray,
    r: np.ndarray,
    b: np.ndarray | None,
    h0: np.ndarray | None,
    c0: np.ndarray | None,
    p: np.ndarray | None,
    rs: np.ndarray,
    rz: np.ndarray,
    product: Callable[[np.ndarray, np.ndarray, int, np.ndarray], np.ndarray] = quantized_product,
) -> tuple[np.ndarray, ...]:
    """The recurrence of ``op`` (its ``direction``, ``clip``, ``input_forget`` and
    activations) over the input projection ``gx`` (:func:`input_projection`): per step
    ``h`` quantised, its exact product with ``R - R_zp`` scaled by ``h_scale *
    R_scale[channel]`` added to the step's projection, then ONNX LSTM's cell. ``product``
    computes that gate product (:func:`quantized_product`; another form of it, e.g. the
    int8 cube's re-centred one, can be checked against it over whole sequences)."""
    f32 = np.float32
    seq, batch, _ = gx.shape
    dirs, hidden = r.shape[0], r.shape[1]
    clip, input_forget = op.attr("clip"), bool(op.attr("input_forget"))
    y = np.zeros((seq, dirs, batch, hidden), f32)
    finals = [np.zeros((dirs, batch, hidden), f32) for _ in range(2)]
    for d, fns in enumerate(activation_lists(op, _QuantizedLSTMBase.DEFAULT_ACTIVATIONS, dirs)):
        reverse = op.attr("direction") == "reverse" or d == 1
        g_d = gx[:, :, d * 4 * hidden : (d + 1) * 4 * hidden]
        g_d = g_d[::-1] if reverse else g_d
        r_scale = rs.reshape(dirs, -1)[d]
        bias = (
            np.zeros(4 * hidden, f32)
            if b is None
            else (b[d, : 4 * hidden].astype(f32) + b[d, 4 * hidden :].astype(f32))
        )
        peep = np.zeros(3 * hidden, f32) if p is None else p[d].astype(f32)
        h = np.zeros((batch, hidden), f32) if h0 is None else h0[d].astype(f32)
        c = np.zeros((batch, hidden), f32) if c0 is None else c0[d].astype(f32)
        for step in range(seq):
            g = g_d[step] + product(h, r[d], _first(rz, dirs, d), r_scale)
            h, c = lstm_cell(g, c, bias, peep, fns, clip, input_forget)
            y[seq - 1 - step if reverse else step, d] = h
        finals[0][d], finals[1][d] = h, c
    return y, finals[0], finals[1]


@irdl_op_definition
class DynamicQuantizeLSTMStepsOp(_QuantizedLSTMBase):
    """The recurrence of a DynamicQuantizeLSTM whose input projection is computed apart
    (``expand-quantized-lstm``): ``G`` float32 ``[seq, batch, dirs * 4H]`` is
    :func:`input_projection` (no bias; direction ``d``'s gates at columns ``d * 4H``, in
    time order for either direction). ``R`` is held as the int8 cube reads it: int8
    ``[dirs, 4H, H]`` (ONNX LSTM's layout, the transpose of DynamicQuantizeLSTM's), a
    uint8 ``R`` re-centred (:func:`centred_recurrent_weights`: ``R - 128`` with its zero
    point ``R_zp - 128``, the same differences ``R - R_zp``); ``R_zero_point`` int8, the
    direction's first used; ``R_scale`` ``[dirs]`` or ``[dirs, 4H]``. ``B``,
    ``initial_h``, ``initial_c``, ``P`` and the attributes are
    ``graph.dynamic_quantize_lstm``'s. Each step quantises ``h`` by its own range, adds its
    exact product with ``R - R_zp`` scaled by ``h_scale * R_scale`` to the step's row of
    ``G`` and runs ONNX LSTM's cell. Results ``Y``, ``Y_h``, ``Y_c`` as the full op's."""

    name = "graph.dynamic_quantize_lstm_steps"
    G = operand_def(TensorType)
    R = operand_def(TensorType)
    B = opt_operand_def(TensorType)
    initial_h = opt_operand_def(TensorType)
    initial_c = opt_operand_def(TensorType)
    P = opt_operand_def(TensorType)
    R_scale = operand_def(TensorType)
    R_zero_point = operand_def(TensorType)

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        g = require(tensor_type(operands[0]), "G")
        r = require(tensor_type(operands[1]), "R")
        if g.rank != 3 or r.rank != 3:
            raise ShapeError("G and R must be 3-D")
        if g.dtype != DType.float32:
            raise ShapeError(f"G must be float32, got {g.element_type}")
        if r.dtype != DType.int8:
            raise ShapeError(f"R must be int8 ([dirs, 4H, H], re-centred), got {r.element_type}")
        hidden = cls.read_attr(props, "hidden_size")
        hidden = hidden if hidden is not None else r.origin_shape[2]
        dirs, width = r.origin_shape[0], g.origin_shape[2]
        known = all(isinstance(v, int) for v in (dirs, width, hidden))
        if known and width != dirs * 4 * hidden:
            raise ShapeError(f"G's last axis must be {dirs} x 4 x {hidden}")
        return recurrent_results(g, props, hidden, 0, 2)

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        g, r, b, h0, c0, p, rs, rz = (list(inputs) + [None] * 8)[:8]
        assert g is not None and r is not None and rs is not None and rz is not None
        return quantized_lstm_steps(self, g, r.transpose(0, 2, 1), b, h0, c0, p, rs, rz)


def centred_recurrent_weights(
    r: np.ndarray, zero_points: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """DynamicQuantizeLSTM's ``R`` ``[dirs, H, 4H]`` (int8 or uint8) and its zero points as
    ``graph.dynamic_quantize_lstm_steps`` holds them: int8 ``[dirs, 4H, H]`` and each
    direction's int8 zero point ``[dirs]``. A uint8 ``R`` and its zero point both move by
    -128 (onto int8's range: ``R_zp - 128`` is in -128 .. 127), which leaves every
    difference ``R - R_zp`` as it was."""
    dirs = r.shape[0]
    zero = first_zero_points(zero_points, dirs).astype(np.int16)
    if r.dtype == np.uint8:
        r, zero = r.astype(np.int16) - 128, zero - 128
    return r.transpose(0, 2, 1).astype(np.int8), zero.astype(np.int8)


def first_zero_points(zero_points: np.ndarray, dirs: int) -> np.ndarray:
    """Per direction, the zero point onnxruntime uses: the direction's first (of ``[dirs]``
    or ``[dirs, 4H]``)."""
    return zero_points.reshape(dirs, -1)[:, 0]


def _first(zero_points: np.ndarray, dirs: int, d: int) -> int:
    return int(first_zero_points(zero_points, dirs)[d])


QUANTIZED_RECURRENT_OPS: list[type[GraphOp]] = [DynamicQuantizeLSTMOp, DynamicQuantizeLSTMStepsOp]
