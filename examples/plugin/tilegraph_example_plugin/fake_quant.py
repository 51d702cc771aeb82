"""The ``example`` dialect: one op, ``example.fake_quant``.

``example.fake_quant`` rounds a float tensor to the grid of symmetric ``bits``-bit integers
scaled by ``scale``, and back: what the tensor looks like after a round trip through int8 (or
int4, ...), the op that quantisation-aware training and precision studies insert::

    %y = example.fake_quant %x {scale = 0.1, bits = 4} : !layout.tensor<4xf32>

It is a tilegraph graph op (a :class:`~tilegraph.dialects.graph.elementwise.UnaryElementwiseOp`),
so tilegraph's passes handle it like ``graph.relu``: format-agnostic, it fuses as ELEMWISE,
its reference kernel serves constant folding and the fast executor, and on the tiled path it
runs on the host. The xDSL interpreters run it through
:class:`tilegraph_example_plugin.interpreter.ExampleFunctions`.
"""

from collections.abc import Mapping, Sequence
from math import isfinite
from typing import ClassVar

import numpy as np
from tilegraph.dialects.graph.base import ShapeError, float_attr, int_attr, tensor_type
from tilegraph.dialects.graph.elementwise import UnaryElementwiseOp
from tilegraph.dialects.graph.shape_utils import require, result_like
from tilegraph.dialects.layout_type import TensorType
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import irdl_op_definition
from xdsl.utils.exceptions import VerifyException

MIN_BITS, MAX_BITS = 2, 16


def fake_quant(x: np.ndarray, scale: float, bits: int) -> np.ndarray:
    """``clip(round(x / scale), -2**(bits-1), 2**(bits-1) - 1) * scale`` elementwise.

    Computed in float64 and returned in ``x``'s dtype; rounds half to even (as ONNX
    QuantizeLinear does). NaN stays NaN and 0 stays 0, so padding lanes keep their value.
    """
    bound = 2 ** (bits - 1)
    q = np.clip(np.round(x.astype(np.float64) / scale), -bound, bound - 1)
    return (q * scale).astype(x.dtype)


@irdl_op_definition
class FakeQuantOp(UnaryElementwiseOp):
    """Symmetric fake quantisation: ``y = fake_quant(x, scale, bits)`` (``bits`` default 8).

    Verifier: ``x`` is a float16/32/64 tensor; ``y`` has exactly ``x``'s type (shape, element
    type, formats: the op never changes layout); ``scale`` is given, positive and finite;
    ``bits`` is in 2..16.
    """

    name = "example.fake_quant"
    scale = float_attr()
    bits = int_attr()
    DEFAULTS: ClassVar = {"bits": 8}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        if x.dtype.numpy.kind != "f":
            raise ShapeError(f"fake_quant takes float16/32/64, not {x.element_type}")
        return [result_like(x, x.origin_shape)]

    def verify_(self) -> None:
        super().verify_()  # the operand is a tensor; result shape and element type
        if self.output.type != self.input.type:
            raise VerifyException(
                f"result type {self.output.type} differs from the operand type {self.input.type}"
            )
        scale, bits = self.attr("scale"), self.attr("bits")
        if scale is None or not (isfinite(scale) and scale > 0):
            raise VerifyException(f"scale must be positive and finite, got {scale}")
        if not MIN_BITS <= bits <= MAX_BITS:
            raise VerifyException(f"bits must be in {MIN_BITS}..{MAX_BITS}, got {bits}")

    def compute(self, x: np.ndarray) -> np.ndarray:
        return fake_quant(x, self.attr("scale"), self.attr("bits"))


Example = Dialect("example", [FakeQuantOp])
"""The dialect the ``tilegraph.dialects`` entry point ``example`` names."""
