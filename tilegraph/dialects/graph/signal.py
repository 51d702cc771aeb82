"""Signal ops: DFT (opset 20 form: ``axis`` and ``dft_length`` as inputs).

Real input is ``[..., 1]`` and complex input ``[..., 2]`` (real, imaginary) in the last
dim; the output is complex ``[..., 2]``. ``onesided`` keeps the non-negative frequencies.
The inverse transform is refused for now (``inverse = 1``). Computed with numpy's FFT in
float64. A host op on the tiled path.
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

from tilegraph.dialects.graph.base import GraphOp, ShapeError, constant_value, int_attr, tensor_type
from tilegraph.dialects.graph.facts import ND_OPAQUE
from tilegraph.dialects.graph.shape_utils import nd_result, normalize_axis, require
from tilegraph.dialects.layout_type import TensorType
from tilegraph.symbolic.dims import UNKNOWN, Dim


def _scalar(value: SSAValue | None) -> int | None:
    data = constant_value(value)
    return None if data is None else int(np.asarray(data).reshape(-1)[0])


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
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        if x.rank < 2 or x.origin_shape[-1] not in (1, 2):
            raise ShapeError("DFT's input must end in a dim of 1 (real) or 2 (complex)")
        slots = (list(operands) + [None, None])[:3]
        if cls.read_attr(props, "inverse"):
            raise ShapeError("the inverse DFT is not supported yet")
        attr = cls.read_attr(props, "axis")
        axis_value = attr if attr is not None else -2
        if slots[2] is not None:
            axis_value = _scalar(slots[2])
            if axis_value is None:  # known at run time only: which dim changes is unknown
                return [nd_result(x, [*[UNKNOWN] * (x.rank - 1), 2])]
        axis = normalize_axis(axis_value, x.rank)
        if axis == x.rank - 1:
            raise ShapeError("DFT's axis cannot be the last (real/imaginary) dim")
        n: Dim = x.origin_shape[axis]
        if slots[1] is not None:
            given = _scalar(slots[1])
            n = given if given is not None else UNKNOWN
        if cls.read_attr(props, "onesided") and isinstance(n, int) and n >= 0:
            n = n // 2 + 1
        shape = list(x.origin_shape)
        shape[axis], shape[-1] = n, 2
        return [nd_result(x, shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, length, axis_value = (list(inputs) + [None, None])[:3]
        assert x is not None
        attr = self.attr("axis")
        if axis_value is not None:
            axis = int(np.asarray(axis_value).reshape(-1)[0])
        else:
            axis = int(attr) if attr is not None else -2
        axis %= x.ndim
        signal = x[..., 0] + (1j * x[..., 1] if x.shape[-1] == 2 else 0)
        signal = signal.astype(np.complex128)
        n = int(np.asarray(length).reshape(-1)[0]) if length is not None else x.shape[axis]
        out = np.fft.fft(signal, n=n, axis=axis)
        if self.attr("onesided"):
            out = np.take(out, np.arange(n // 2 + 1), axis=axis)
        return (np.stack([out.real, out.imag], axis=-1).astype(x.dtype),)


SIGNAL_OPS: list[type[GraphOp]] = [DFTOp]
