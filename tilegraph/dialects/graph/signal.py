"""Signal ops: DFT (opset 20 form: ``axis`` and ``dft_length`` as inputs), STFT and
MelWeightMatrix.

Complex tensors are real ones with a last dim of 2 (real, imaginary); a real signal has a
last dim of 1. DFT's ``onesided`` keeps the non-negative frequencies of a forward transform
(RFFT) and, with ``inverse = 1``, takes such a one-sided spectrum to a real signal (IRFFT,
default length ``2 * (n - 1)``; a ``dft_length`` whose one-sided spectrum has more or fewer
bins zero-pads or cuts the spectrum, as numpy's irfft and ONNX's reference do, where
onnxruntime differs); the plain inverse divides by the length. The transforms are
numpy's FFT in the input's precision (single for float16/32, double for float64), as ONNX's
reference and onnxruntime compute them. MelWeightMatrix follows
the ONNX definition step for step (its integer bin edges depend on the rounding of each
step). On the tiled path ``conv-forms`` rewrites STFT and DFT of constant parameters into
the cube's products with their basis (:mod:`tilegraph.passes.fourier_forms`); the rest are
host ops.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
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

from tilegraph.dialects.element_conversion import convert
from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.base import GraphOp, ShapeError, constant_value, int_attr, tensor_type
from tilegraph.dialects.graph.elementwise import onnx_dtype_name
from tilegraph.dialects.graph.facts import ND_OPAQUE
from tilegraph.dialects.graph.shape_utils import nd_result, normalize_axis, require
from tilegraph.dialects.graph.windows import known
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import UNKNOWN, Dim

_Slots = Sequence[SSAValue | None]
_Props = Mapping[str, Attribute]


def _scalar(value: SSAValue | None) -> int | None:
    """The value of a constant integer scalar operand (None: absent or not a constant)."""
    data = constant_value(value)
    return None if data is None else int(np.asarray(data).reshape(-1)[0])


def _given(value: np.ndarray | None) -> int | None:
    return None if value is None else int(np.asarray(value).reshape(-1)[0])


def _signal_type(value: SSAValue | None, what: str) -> TensorType:
    """A real ``[..., 1]`` or complex ``[..., 2]`` floating-point tensor of rank >= 2. A last
    dim not known yet passes (an exporter's ``Concat(Unsqueeze(x), Expand(0, Shape(...)))``
    before the sizes are given); the kernel checks it when the data come."""
    x = require(tensor_type(value), what)
    last = x.origin_shape[-1] if x.rank else UNKNOWN
    if x.rank < 2 or (known(last) and last not in (1, 2)):
        raise ShapeError(f"{what} must end in a dim of 1 (real) or 2 (complex)")
    if x.dtype.numpy.kind != "f":
        raise ShapeError(f"{what} must be floating-point, not {x.element_type}")
    return x


def _complex(x: np.ndarray) -> np.ndarray:
    """``[..., 1]`` real or ``[..., 2]`` complex data -> complex values without the last dim,
    complex64 for float16/32 data and complex128 for float64 (the FFT's precision)."""
    if x.ndim < 2 or x.shape[-1] not in (1, 2):
        raise ShapeError(
            f"a signal must end in a dim of 1 (real) or 2 (complex), got {list(x.shape)}"
        )
    signal = x[..., 0].astype(np.result_type(x.dtype, np.complex64))
    return signal + 1j * x[..., 1] if x.shape[-1] == 2 else signal


def _interleaved(values: np.ndarray) -> np.ndarray:
    """complex -> ``[..., 2]`` (real, imaginary)."""
    return np.stack([np.real(values), np.imag(values)], axis=-1)


@irdl_op_definition
class DFTOp(GraphOp):
    """ONNX DFT (see the module docstring); ``axis`` defaults to -2 (the last signal dim)."""

    name = "graph.dft"
    ONNX_OP: ClassVar = "DFT"
    input = operand_def(TensorType)
    dft_length = opt_operand_def(TensorType)
    axis_input = opt_operand_def(TensorType)
    output = result_def(TensorType)
    axis = int_attr()
    """DFT-17's attribute form of the axis (opset 18-19 models); DFT-20 makes it an input."""
    inverse = int_attr()
    onesided = int_attr()
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"inverse": 0, "onesided": 0}

    @classmethod
    def _irfft(cls, props: _Props) -> bool:
        return bool(cls.read_attr(props, "inverse")) and bool(cls.read_attr(props, "onesided"))

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x = _signal_type(operands[0], "DFT's input")
        slots = (list(operands) + [None, None])[:3]
        irfft = cls._irfft(props)
        parts = 1 if irfft else 2  # IRFFT gives a real signal
        attr = cls.read_attr(props, "axis")
        axis_value = attr if attr is not None else -2
        if slots[2] is not None:
            axis_value = _scalar(slots[2])
            if axis_value is None:  # known at run time only: which dim changes is unknown
                return [nd_result(x, [*[UNKNOWN] * (x.rank - 1), parts])]
        axis = normalize_axis(axis_value, x.rank)
        if axis == x.rank - 1:
            raise ShapeError("DFT's axis cannot be the last (real/imaginary) dim")
        size = x.origin_shape[axis]
        n: Dim = (2 * (size - 1) if known(size) else UNKNOWN) if irfft else size
        if slots[1] is not None:
            given = _scalar(slots[1])
            n = given if given is not None else UNKNOWN
        if cls.read_attr(props, "onesided") and not irfft and known(n):
            n = n // 2 + 1
        shape = list(x.origin_shape)
        shape[axis], shape[-1] = n, parts
        return [nd_result(x, shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, length, axis_value = (list(inputs) + [None, None])[:3]
        assert x is not None
        attr = self.attr("axis")
        axis = _given(axis_value)
        if axis is None:
            axis = int(attr) if attr is not None else -2
        axis %= x.ndim
        signal = _complex(x)
        irfft = self._irfft(self.properties)
        n = _given(length)
        if n is None:
            n = 2 * (x.shape[axis] - 1) if irfft else x.shape[axis]
        if irfft:
            return (np.fft.irfft(signal, n=n, axis=axis)[..., None].astype(x.dtype),)
        if self.attr("inverse"):
            out = np.fft.ifft(signal, n=n, axis=axis)
        else:
            out = np.fft.fft(signal, n=n, axis=axis)
            if self.attr("onesided"):
                out = np.take(out, np.arange(n // 2 + 1), axis=axis)
        return (_interleaved(out).astype(x.dtype),)


@irdl_op_definition
class STFTOp(GraphOp):
    """ONNX STFT: DFTs of the ``[batch, length, 1 | 2]`` signal's frames of ``frame_length``
    samples every ``frame_step``, each multiplied by ``window`` (default all ones); the
    result is ``[batch, frames, bins, 2]`` with ``frames = (length - frame_length) //
    frame_step + 1`` and ``bins = frame_length // 2 + 1`` when ``onesided`` (the default),
    else ``frame_length``. ``frame_length`` defaults to the window's length, else the
    signal's. A ``[batch, length]`` signal is real, as onnxruntime reads it (the ONNX
    definition asks for the trailing 1; exporters built on onnxscript, e.g. onnx-asr's
    feature extractors, leave it out)."""

    name = "graph.stft"
    ONNX_OP: ClassVar = "STFT"
    signal = operand_def(TensorType)
    frame_step = operand_def(TensorType)
    window = opt_operand_def(TensorType)
    frame_length = opt_operand_def(TensorType)
    output = result_def(TensorType)
    onesided = int_attr()
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"onesided": 1}

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "STFT's signal")
        if x.rank != 2:
            x = _signal_type(operands[0], "STFT's signal")
            if x.rank != 3:
                raise ShapeError(
                    f"STFT's signal must be [batch, length] or [batch, length, 1 | 2], "
                    f"got rank {x.rank}"
                )
        elif x.dtype.numpy.kind != "f":
            raise ShapeError(f"STFT's signal must be floating-point, not {x.element_type}")
        slots = (list(operands) + [None, None])[:4]
        window = tensor_type(slots[2])
        if window is not None and window.rank != 1:
            raise ShapeError(f"STFT's window must be 1-D, got rank {window.rank}")
        step = _scalar(slots[1])
        if step is not None and step < 1:
            raise ShapeError(f"STFT's frame_step must be positive, got {step}")
        length: Dim = x.origin_shape[1]
        if window is not None:
            length = window.origin_shape[0]
        if slots[3] is not None:
            given = _scalar(slots[3])
            if given is not None and known(length) and window is not None and given != length:
                raise ShapeError(f"STFT's frame_length {given} differs from the window's {length}")
            length = given if given is not None else UNKNOWN
        signal = x.origin_shape[1]
        frames: Dim = UNKNOWN
        if step is not None and known(length) and known(signal):
            if length > signal:
                raise ShapeError(f"STFT's frame_length {length} exceeds the signal's {signal}")
            frames = (signal - length) // step + 1
        bins: Dim = length
        if cls.read_attr(props, "onesided") and known(length):
            bins = length // 2 + 1
        return [nd_result(x, [x.origin_shape[0], frames, bins, 2])]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, step_value, window, length_value = (list(inputs) + [None, None])[:4]
        assert x is not None and step_value is not None
        if x.ndim == 2:
            x = x[..., None]  # a real [batch, length] signal
        step = int(np.asarray(step_value).reshape(-1)[0])
        length = _given(length_value)
        if length is None:
            length = window.shape[0] if window is not None else x.shape[1]
        weights = np.ones(length, x.dtype) if window is None else window.astype(x.dtype)
        frames = (x.shape[1] - length) // step + 1
        index = np.arange(frames)[:, None] * step + np.arange(length)
        spectrum = np.fft.fft(_complex(x)[:, index] * weights, axis=-1)
        if self.attr("onesided"):
            spectrum = spectrum[..., : length // 2 + 1]
        return (_interleaved(spectrum).astype(x.dtype),)


def _mel_edges(
    bins: int, dft_length: int, rate: np.ndarray, low: np.ndarray, high: np.ndarray
) -> np.ndarray:
    """The ``bins + 2`` triangle edges as spectrogram bin indices, each step as ONNX's
    definition computes it (the mel bounds in the edges' float type, then float64)."""
    low_mel = 2595 * np.log1p(low / 700) / np.log(10)
    high_mel = 2595 * np.log1p(high / 700) / np.log(10)
    mel = np.arange(bins + 2) * ((high_mel - low_mel) / (bins + 2)) + low_mel
    hertz = 700 * np.expm1(mel / 2595 * np.log(10))
    return (((dft_length + 1) * hertz) // rate).astype(np.int64)


@irdl_op_definition
class MelWeightMatrixOp(GraphOp):
    """ONNX MelWeightMatrix: ``[dft_length // 2 + 1, num_mel_bins]`` triangular filters
    (peak 1) between ``lower_edge_hertz`` and ``upper_edge_hertz`` on the mel scale
    ``2595 * log10(1 + f / 700)``, in ``output_datatype`` (float32 by default)."""

    name = "graph.mel_weight_matrix"
    ONNX_OP: ClassVar = "MelWeightMatrix"
    num_mel_bins = operand_def(TensorType)
    dft_length = operand_def(TensorType)
    sample_rate = operand_def(TensorType)
    lower_edge_hertz = operand_def(TensorType)
    upper_edge_hertz = operand_def(TensorType)
    output = result_def(TensorType)
    output_datatype = int_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = ND_OPAQUE
    DEFAULTS: ClassVar = {"output_datatype": 1}

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        names = (
            "num_mel_bins",
            "dft_length",
            "sample_rate",
            "lower_edge_hertz",
            "upper_edge_hertz",
        )
        for value, name, kind in zip(operands, names, "iiiff", strict=True):
            t = require(tensor_type(value), name)
            if t.dtype.numpy.kind != kind or t.rank > 1 or t.num_elements() not in (1, None):
                what = "an integer" if kind == "i" else "a floating-point"
                raise ShapeError(f"MelWeightMatrix's {name} must be {what} scalar")
        bins, dft_length = _scalar(operands[0]), _scalar(operands[1])
        rows = dft_length // 2 + 1 if dft_length is not None else UNKNOWN
        elt = element_type_of(onnx_dtype_name(int(cls.read_attr(props, "output_datatype"))))
        return [TensorType([rows, UNKNOWN if bins is None else bins], elt)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        bins_value, length_value, rate, low, high = inputs
        assert rate is not None and low is not None and high is not None
        bins, dft_length = _given(bins_value), _given(length_value)
        assert bins is not None and dft_length is not None
        edges = _mel_edges(bins, dft_length, np.asarray(rate), np.asarray(low), np.asarray(high))
        rows = dft_length // 2 + 1
        if edges.min(initial=0) < 0 or edges.max(initial=0) >= rows:
            raise ValueError(f"the mel edges {list(edges)} fall outside the {rows} DFT bins")
        out = np.zeros((rows, bins))
        for i in range(bins):
            left, centre, right = (int(e) for e in edges[i : i + 3])
            if centre == left:
                out[centre, i] = 1
            else:
                out[left : centre + 1, i] = (np.arange(left, centre + 1) - left) / (centre - left)
            if right > centre:
                out[centre:right, i] = (right - np.arange(centre, right)) / (right - centre)
        result = self.output.type
        assert isinstance(result, TensorType)
        return (convert(out, result.dtype),)


SIGNAL_OPS: list[type[GraphOp]] = [DFTOp, STFTOp, MelWeightMatrixOp]
