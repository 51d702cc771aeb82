"""Mapping between xDSL element types and :class:`tilegraph.formats.DType`."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    bf16,
    f8E4M3FN,
    f8E4M3FNUZ,
    f8E5M2,
    f8E5M2FNUZ,
    f8E8M0FNU,
    f16,
    f32,
    f64,
    i1,
)
from xdsl.ir import Attribute

from tilegraph.formats import DType

_SIGNED = {
    2: DType.int2,
    4: DType.int4,
    8: DType.int8,
    16: DType.int16,
    32: DType.int32,
    64: DType.int64,
}
_UNSIGNED = {
    2: DType.uint2,
    4: DType.uint4,
    8: DType.uint8,
    16: DType.uint16,
    32: DType.uint32,
    64: DType.uint64,
}

# MLIR's builtin narrow float types, printed f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ,
# f8E8M0FNU and f4E2M1FN
_NARROW_FLOATS: dict[type[Attribute], tuple[DType, Attribute]] = {
    Float8E4M3FNType: (DType.float8_e4m3, f8E4M3FN),
    Float8E4M3FNUZType: (DType.float8_e4m3fnuz, f8E4M3FNUZ),
    Float8E5M2Type: (DType.float8_e5m2, f8E5M2),
    Float8E5M2FNUZType: (DType.float8_e5m2fnuz, f8E5M2FNUZ),
    Float8E8M0FNUType: (DType.float8_e8m0, f8E8M0FNU),
    Float4E2M1FNType: (DType.float4_e2m1, Float4E2M1FNType()),
}

_FROM_DTYPE: dict[DType, Attribute] = {
    DType.float16: f16,
    DType.bfloat16: bf16,
    DType.float32: f32,
    DType.float64: f64,
    DType.bool: i1,
    **dict(_NARROW_FLOATS.values()),
    **{dt: IntegerType(bits) for bits, dt in _SIGNED.items()},
    **{dt: IntegerType(bits, Signedness.UNSIGNED) for bits, dt in _UNSIGNED.items()},
}


class UnsupportedElementType(ValueError):
    """An element type tilegraph tensors cannot hold."""


def dtype_of(element_type: Attribute) -> DType:
    """The :class:`DType` of an xDSL element type (signless integers are signed)."""
    narrow = _NARROW_FLOATS.get(type(element_type))
    if narrow is not None:
        return narrow[0]
    match element_type:
        case Float16Type():
            return DType.float16
        case BFloat16Type():
            return DType.bfloat16
        case Float32Type():
            return DType.float32
        case Float64Type():
            return DType.float64
        case IntegerType():
            bits = element_type.width.data
            if bits == 1:
                return DType.bool
            table = _UNSIGNED if element_type.signedness.data == Signedness.UNSIGNED else _SIGNED
            if bits in table:
                return table[bits]
    raise UnsupportedElementType(f"unsupported element type {element_type}")


def element_type_of(dtype: DType | str | np.dtype) -> Attribute:
    """The xDSL element type for a dtype name, :class:`DType` or numpy dtype."""
    from tilegraph.formats import parse_dtype

    dt = parse_dtype(dtype)
    try:
        return _FROM_DTYPE[dt]
    except KeyError:
        raise UnsupportedElementType(f"no element type for dtype {dt}") from None


def numpy_dtype_of(element_type: Attribute) -> np.dtype:
    """The numpy dtype that holds values of ``element_type``."""
    return np.dtype(dtype_of(element_type).numpy)


def in_container(array: np.ndarray) -> np.ndarray:
    """``array`` held the way tilegraph holds its element type (``DType.numpy``): onnx's
    ml_dtypes bfloat16 and int4 arrays become float32 and int8, the rest stay as they are."""
    from tilegraph.formats import parse_dtype

    return array.astype(parse_dtype(array.dtype).numpy, copy=False)
