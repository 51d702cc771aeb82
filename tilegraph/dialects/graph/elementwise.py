"""Unary elementwise graph ops: activations, math, Cast, Clip, Dropout.

All are format-agnostic (every operand and result shares one format) and fuse as ELEMWISE.
The broadcasting binaries and the variadics live in :mod:`.binary`, which builds its facts
with :func:`agnostic_facts` from here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

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

from tilegraph.dialects.element_conversion import E8M0_ROUND_MODES, convert
from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.base import (
    GraphOp,
    ShapeError,
    constant_value,
    float_attr,
    int_attr,
    str_attr,
    tensor_type,
)
from tilegraph.dialects.graph.facts import (
    ANY_FORMAT,
    ND_OPAQUE,
    FormatRole,
    FusionKind,
    KernelVariant,
    OpFacts,
    PrecisionRole,
    with_precision,
)
from tilegraph.dialects.graph.shape_utils import require, result_like
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType, parse_dtype

_SAME_FORMAT_1 = KernelVariant((ANY_FORMAT,), (ANY_FORMAT,), "any")


def agnostic_facts(fusion: FusionKind, *kernels: KernelVariant) -> OpFacts:
    """Facts of a format-agnostic op: every operand and result shares one format."""
    return OpFacts(role=FormatRole.AGNOSTIC, fusion=fusion, kernels=kernels)


_DATA_OPERAND_ELEMWISE = OpFacts(
    role=FormatRole.AGNOSTIC,
    fusion=FusionKind.ELEMWISE,
    format_operands=(0,),
    kernels=(_SAME_FORMAT_1,),
)
"""Elementwise on operand 0; the other operands (Clip bounds, Dropout ratio) are scalars."""


# ---- unary --------------------------------------------------------------------------------


class UnaryElementwiseOp(GraphOp):
    """``y = f(x)`` elementwise; subclasses define :meth:`compute`."""

    input = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())

    FACTS: ClassVar[OpFacts] = with_precision(
        agnostic_facts(FusionKind.ELEMWISE, _SAME_FORMAT_1), PrecisionRole.WHITE
    )

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        return [result_like(x, x.origin_shape)]

    def compute(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        return (np.asarray(self.compute(x)).astype(x.dtype, copy=False),)


def _float_only(x: np.ndarray) -> np.ndarray:
    return x if x.dtype.kind == "f" else x.astype(np.float64)


@irdl_op_definition
class ReluOp(UnaryElementwiseOp):
    name = "graph.relu"
    ONNX_OP: ClassVar = "Relu"

    def compute(self, x: np.ndarray) -> np.ndarray:
        return np.maximum(x, 0)


@irdl_op_definition
class SigmoidOp(UnaryElementwiseOp):
    name = "graph.sigmoid"
    ONNX_OP: ClassVar = "Sigmoid"

    def compute(self, x: np.ndarray) -> np.ndarray:
        x = _float_only(x)
        # split by sign so exp never overflows
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


@irdl_op_definition
class TanhOp(UnaryElementwiseOp):
    name = "graph.tanh"
    ONNX_OP: ClassVar = "Tanh"

    def compute(self, x: np.ndarray) -> np.ndarray:
        return np.tanh(x)


@irdl_op_definition
class ExpOp(UnaryElementwiseOp):
    name = "graph.exp"
    ONNX_OP: ClassVar = "Exp"
    FACTS: ClassVar[OpFacts] = with_precision(UnaryElementwiseOp.FACTS, PrecisionRole.BLACK)

    def compute(self, x: np.ndarray) -> np.ndarray:
        return np.exp(x)


@irdl_op_definition
class LogOp(UnaryElementwiseOp):
    name = "graph.log"
    ONNX_OP: ClassVar = "Log"
    FACTS: ClassVar[OpFacts] = with_precision(UnaryElementwiseOp.FACTS, PrecisionRole.BLACK)

    def compute(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(x)


@irdl_op_definition
class SqrtOp(UnaryElementwiseOp):
    name = "graph.sqrt"
    ONNX_OP: ClassVar = "Sqrt"

    def compute(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return np.sqrt(x)


@irdl_op_definition
class NegOp(UnaryElementwiseOp):
    name = "graph.neg"
    ONNX_OP: ClassVar = "Neg"

    def compute(self, x: np.ndarray) -> np.ndarray:
        return np.negative(x)


@irdl_op_definition
class ReciprocalOp(UnaryElementwiseOp):
    name = "graph.reciprocal"
    ONNX_OP: ClassVar = "Reciprocal"

    def compute(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.reciprocal(_float_only(x))


@irdl_op_definition
class AbsOp(UnaryElementwiseOp):
    name = "graph.abs"
    ONNX_OP: ClassVar = "Abs"

    def compute(self, x: np.ndarray) -> np.ndarray:
        return np.abs(x)


@irdl_op_definition
class SignOp(UnaryElementwiseOp):
    name = "graph.sign"
    ONNX_OP: ClassVar = "Sign"

    def compute(self, x: np.ndarray) -> np.ndarray:
        return np.sign(x)


@irdl_op_definition
class FloorOp(UnaryElementwiseOp):
    name = "graph.floor"
    ONNX_OP: ClassVar = "Floor"

    def compute(self, x: np.ndarray) -> np.ndarray:
        return np.floor(x)


@irdl_op_definition
class CeilOp(UnaryElementwiseOp):
    name = "graph.ceil"
    ONNX_OP: ClassVar = "Ceil"

    def compute(self, x: np.ndarray) -> np.ndarray:
        return np.ceil(x)


@irdl_op_definition
class ErfOp(UnaryElementwiseOp):
    name = "graph.erf"
    ONNX_OP: ClassVar = "Erf"

    def compute(self, x: np.ndarray) -> np.ndarray:
        from math import erf

        return np.vectorize(erf, otypes=[np.float64])(x)


@irdl_op_definition
class GeluOp(UnaryElementwiseOp):
    """ONNX Gelu-20: ``0.5 x (1 + erf(x / sqrt 2))``, or with ``approximate = "tanh"``
    ``0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))`` — two different functions."""

    name = "graph.gelu"
    ONNX_OP: ClassVar = "Gelu"
    approximate = str_attr()
    DEFAULTS: ClassVar = {"approximate": "none"}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        if cls.read_attr(props, "approximate") not in ("none", "tanh"):
            raise ShapeError('gelu: approximate must be "none" or "tanh"')
        return super().infer_shapes(operands, props)

    def compute(self, x: np.ndarray) -> np.ndarray:
        from math import erf, pi, sqrt

        acc = x.astype(np.float64)
        if self.attr("approximate") == "tanh":
            inner = sqrt(2 / pi) * (acc + 0.044715 * acc**3)
            return 0.5 * acc * (1 + np.tanh(inner))
        return 0.5 * acc * (1 + np.vectorize(erf, otypes=[np.float64])(acc / sqrt(2)))


@irdl_op_definition
class SoftplusOp(UnaryElementwiseOp):
    name = "graph.softplus"
    ONNX_OP: ClassVar = "Softplus"

    def compute(self, x: np.ndarray) -> np.ndarray:
        return np.logaddexp(0, _float_only(x))


@irdl_op_definition
class IdentityOp(UnaryElementwiseOp):
    name = "graph.identity"
    ONNX_OP: ClassVar = "Identity"

    def compute(self, x: np.ndarray) -> np.ndarray:
        return x.copy()


class _InferenceDropout(GraphOp):
    """Dropout at inference (ONNX Dropout-13+: ``ratio`` and ``training_mode`` are optional
    operands): the output is the input. A ``training_mode`` operand that is a constant
    ``true`` is rejected: tilegraph compiles for inference only. Subclasses declare the
    results (``output`` first)."""

    ONNX_OP: ClassVar = "Dropout"
    ONNX_IGNORED_ATTRS: ClassVar = frozenset({"seed"})
    input = operand_def(TensorType)
    ratio = opt_operand_def(TensorType)
    training_mode = opt_operand_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    FACTS: ClassVar = _DATA_OPERAND_ELEMWISE

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        training = constant_value(operands[2]) if len(operands) > 2 else None
        if training is not None and bool(training.reshape(-1)[0]):
            raise ShapeError(f"{cls.name} in training mode is not supported (inference only)")
        return [result_like(x, x.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x = inputs[0]
        assert x is not None
        training = inputs[2] if len(inputs) > 2 else None
        if training is not None and bool(np.asarray(training).reshape(-1)[0]):
            raise ValueError(f"{self.name} in training mode is not supported")
        return (x.copy(),)


@irdl_op_definition
class DropoutOp(_InferenceDropout):
    """Dropout at inference: the identity (ONNX Dropout-13+: ``ratio`` and ``training_mode``
    are optional operands). A model that uses the mask imports as ``graph.dropout_mask``.

    A ``training_mode`` operand that is a constant ``true`` is rejected: tilegraph compiles
    for inference only.
    """

    name = "graph.dropout"
    output = result_def(TensorType)


@irdl_op_definition
class DropoutMaskOp(_InferenceDropout):
    """Dropout at inference whose model uses the ``mask`` output: the input, and a mask of
    all true (nothing is dropped when the ratio is not applied). The importer picks it when
    the mask is used; it runs as a host op."""

    name = "graph.dropout_mask"
    output = result_def(TensorType)
    mask = result_def(TensorType)
    FACTS: ClassVar = ND_OPAQUE

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        (y,) = super().infer_shapes(operands, props)
        return [y, TensorType(y.origin_shape, element_type_of(DType.bool))]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (y,) = super().reference(*inputs)
        return y, np.ones(y.shape, np.bool_)


@irdl_op_definition
class EluOp(UnaryElementwiseOp):
    name = "graph.elu"
    ONNX_OP: ClassVar = "Elu"
    alpha = float_attr()
    DEFAULTS: ClassVar = {"alpha": 1.0}

    def compute(self, x: np.ndarray) -> np.ndarray:
        a = np.float32(self.attr("alpha"))
        return np.where(x > 0, x, a * np.expm1(np.minimum(x, 0)))


@irdl_op_definition
class SeluOp(UnaryElementwiseOp):
    name = "graph.selu"
    ONNX_OP: ClassVar = "Selu"
    alpha = float_attr()
    gamma = float_attr()
    DEFAULTS: ClassVar = {"alpha": 1.67326319217681884765625, "gamma": 1.05070102214813232421875}

    def compute(self, x: np.ndarray) -> np.ndarray:
        a, g = np.float32(self.attr("alpha")), np.float32(self.attr("gamma"))
        return np.where(x > 0, g * x, g * a * np.expm1(np.minimum(x, 0)))


@irdl_op_definition
class LeakyReluOp(UnaryElementwiseOp):
    name = "graph.leaky_relu"
    ONNX_OP: ClassVar = "LeakyRelu"
    alpha = float_attr()
    DEFAULTS: ClassVar = {"alpha": 0.01}

    def compute(self, x: np.ndarray) -> np.ndarray:
        return np.where(x >= 0, x, np.float32(self.attr("alpha")) * x)


@irdl_op_definition
class HardSigmoidOp(UnaryElementwiseOp):
    name = "graph.hard_sigmoid"
    ONNX_OP: ClassVar = "HardSigmoid"
    alpha = float_attr()
    beta = float_attr()
    DEFAULTS: ClassVar = {"alpha": 0.2, "beta": 0.5}

    def compute(self, x: np.ndarray) -> np.ndarray:
        a, b = np.float32(self.attr("alpha")), np.float32(self.attr("beta"))
        return np.clip(a * x + b, 0, 1)


@irdl_op_definition
class ShrinkOp(UnaryElementwiseOp):
    name = "graph.shrink"
    ONNX_OP: ClassVar = "Shrink"
    bias = float_attr()
    lambd = float_attr()
    DEFAULTS: ClassVar = {"bias": 0.0, "lambd": 0.5}

    def compute(self, x: np.ndarray) -> np.ndarray:
        b, lam = self.attr("bias"), self.attr("lambd")
        xf = x.astype(np.float64)
        return np.where(xf < -lam, xf + b, np.where(xf > lam, xf - b, 0))


@irdl_op_definition
class CastOp(UnaryElementwiseOp):
    """Cast to the element type ONNX's ``to`` names, between every numeric type including
    float8, float4, 4- and 2-bit integers (strings, complex and float6 are refused): floats
    round to nearest even, integers wrap, float8 saturates unless ``saturate`` is 0, float8
    e8m0 rounds by ``round_mode`` (up, down, nearest).

    The conversions are :func:`tilegraph.dialects.element_conversion.convert`."""

    name = "graph.cast"
    ONNX_OP: ClassVar = "Cast"
    FACTS: ClassVar[OpFacts] = with_precision(UnaryElementwiseOp.FACTS, PrecisionRole.GRAY)
    to = int_attr()
    saturate = int_attr()
    round_mode = str_attr()
    DEFAULTS: ClassVar = {"saturate": 1, "round_mode": "up"}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        to = cls.read_attr(props, "to")
        if to is None:
            raise ShapeError("graph.cast needs the 'to' attribute")
        check_round_mode(cls.read_attr(props, "round_mode"))
        return [result_like(x, x.origin_shape, element_type_of(onnx_dtype_name(to)))]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        target = parse_dtype(onnx_dtype_name(self.attr("to")))
        return (cast_array(x, target, self.attr("saturate"), self.attr("round_mode")),)

    def conversion_attrs(self) -> dict[str, Any]:
        """``to`` and whichever of ``saturate`` / ``round_mode`` are set: what a rewrite that
        rebuilds this cast elsewhere must pass on."""
        names = ("to", "saturate", "round_mode")
        return {name: self.attr(name) for name in names if name in self.properties}

    def is_plain_conversion(self) -> bool:
        """Whether a plain element conversion (numpy's ``astype``, rounding to nearest
        even) is this cast: not when int4 (which wraps in its int8 container) or a float8 /
        float4 / 2-bit / uint4 type (saturation, ``round_mode``) is either side."""
        types = (self.input.type, self.output.type)
        return all(isinstance(t, TensorType) and t.dtype in PLAIN_CAST_DTYPES for t in types)


PLAIN_CAST_DTYPES = frozenset(
    dt for dt in DType if dt.bits >= 8 and not dt.value.startswith(("float8", "float4"))
)
"""The types between which Cast is a plain element conversion (see
:meth:`CastOp.is_plain_conversion`)."""


def check_round_mode(mode: str) -> None:
    """Refuse a Cast ``round_mode`` other than the spec's three."""
    if mode not in E8M0_ROUND_MODES:
        raise ShapeError(f"round_mode must be one of {', '.join(E8M0_ROUND_MODES)}, got {mode!r}")


def cast_array(
    x: np.ndarray, target: DType, saturate: int = 1, round_mode: str = "up"
) -> np.ndarray:
    """``x`` converted to ``target`` as ONNX Cast does (values held in ``target``'s container)."""
    return convert(x, target, saturate=bool(saturate), round_mode=round_mode)


@irdl_op_definition
class CastLikeOp(GraphOp):
    """ONNX CastLike: ``input`` cast to the element type of ``target_type`` (whose values
    are not read), with Cast's ``saturate`` and ``round_mode``."""

    name = "graph.cast_like"
    ONNX_OP: ClassVar = "CastLike"
    input = operand_def(TensorType)
    target_type = operand_def(TensorType)
    output = result_def(TensorType)
    saturate = int_attr()
    round_mode = str_attr()
    traits = traits_def(Pure())
    FACTS: ClassVar = _DATA_OPERAND_ELEMWISE
    DEFAULTS: ClassVar = {"saturate": 1, "round_mode": "up"}

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        like = require(tensor_type(operands[1]), "target_type")
        check_round_mode(cls.read_attr(props, "round_mode"))
        return [result_like(x, x.origin_shape, like.element_type)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x = inputs[0]
        assert x is not None
        out = self.output.type
        assert isinstance(out, TensorType)
        return (cast_array(x, out.dtype, self.attr("saturate"), self.attr("round_mode")),)


_ONNX_DTYPES = {
    1: "float32",
    2: "uint8",
    3: "int8",
    4: "uint16",
    5: "int16",
    6: "int32",
    7: "int64",
    9: "bool",
    10: "float16",
    11: "float64",
    12: "uint32",
    13: "uint64",
    16: "bfloat16",
    17: "float8_e4m3",
    18: "float8_e4m3fnuz",
    19: "float8_e5m2",
    20: "float8_e5m2fnuz",
    21: "uint4",
    22: "int4",
    23: "float4_e2m1",
    24: "float8_e8m0",
    25: "uint2",
    26: "int2",
}
_ONNX_CODES = {name: code for code, name in _ONNX_DTYPES.items()}

_UNHELD_ONNX_DTYPES = {
    8: "STRING",
    14: "COMPLEX64",
    15: "COMPLEX128",
    27: "FLOAT6E2M3",
    28: "FLOAT6E3M2",
}


def onnx_dtype_code(name: str) -> int:
    """The ONNX TensorProto data type number of a dtype name (Cast's ``to`` for a rewrite
    that builds a cast); the inverse of :func:`onnx_dtype_name`."""
    return _ONNX_CODES[name]


def onnx_dtype_name(code: int) -> str:
    """The dtype name of an ONNX TensorProto data type number."""
    try:
        return _ONNX_DTYPES[code]
    except KeyError:
        what = f" ({_UNHELD_ONNX_DTYPES[code]})" if code in _UNHELD_ONNX_DTYPES else ""
        raise ShapeError(f"unsupported ONNX data type {code}{what}") from None


@irdl_op_definition
class ClipOp(GraphOp):
    """``min(max(x, lo), hi)``; bounds are optional scalar operands (ONNX opset >= 11)."""

    name = "graph.clip"
    ONNX_OP: ClassVar = "Clip"
    input = operand_def(TensorType)
    min = opt_operand_def(TensorType)
    max = opt_operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    FACTS: ClassVar = _DATA_OPERAND_ELEMWISE

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        for bound in operands[1:]:
            t = tensor_type(bound)
            if t is not None and (t.rank != 0 or t.element_type != x.element_type):
                raise ShapeError("clip bounds must be scalars of the input's element type")
        return [result_like(x, x.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, lo, hi = (list(inputs) + [None, None])[:3]
        assert x is not None
        y = x
        if lo is not None:
            y = np.maximum(y, lo)
        if hi is not None:
            y = np.minimum(y, hi)
        return (np.asarray(y, dtype=x.dtype),)


ELEMENTWISE_OPS: list[type[GraphOp]] = [
    ReluOp, SigmoidOp, TanhOp, ExpOp, LogOp, SqrtOp, NegOp, ReciprocalOp, AbsOp, SignOp,
    FloorOp, CeilOp, ErfOp, GeluOp, SoftplusOp, IdentityOp, DropoutOp, DropoutMaskOp, EluOp,
    SeluOp, LeakyReluOp, HardSigmoidOp, ShrinkOp, CastOp, CastLikeOp, ClipOp,
]  # fmt: skip
