"""Element types: the ``DType`` enum, name parsing, bit widths and numpy containers.

numpy has no native int4 or bfloat16, so those are held in a wider *container*
(``DType.numpy``): int4 values live in int8, bfloat16 values in float32 (every bf16 value is
exactly representable). The narrow ONNX types added later (float8 e4m3fn / e4m3fnuz / e5m2 /
e5m2fnuz / e8m0fnu, float4 e2m1fn, uint4, int2, uint2) are held in ``ml_dtypes``' numpy types
of the same name, one byte per element: exact, and the arrays onnx itself produces. Format
code that needs C0 must therefore be told the logical dtype (``dtype="int4"``) when the
array's numpy dtype is only a container. ``DType.exact_numpy`` is the one-per-element type
(``ml_dtypes.bfloat16`` / ``ml_dtypes.int4`` for those two): what arrays at the interface hold.
"""

from __future__ import annotations

import builtins
from enum import StrEnum
from functools import cache
from typing import Any

import numpy as np

from tilegraph.formats.format import FormatError


class DType(StrEnum):
    """Logical element types. Values are the lower-case canonical names."""

    float16 = "float16"
    bfloat16 = "bfloat16"
    float32 = "float32"
    float64 = "float64"
    int4 = "int4"
    int8 = "int8"
    uint8 = "uint8"
    int16 = "int16"
    uint16 = "uint16"
    int32 = "int32"
    uint32 = "uint32"
    int64 = "int64"
    uint64 = "uint64"
    bool = "bool"
    float8_e4m3 = "float8_e4m3"
    """OCP/ONNX float8 E4M3FN: no infinities, one NaN pattern per sign, max 448."""
    float8_e4m3fnuz = "float8_e4m3fnuz"
    """E4M3 with no negative zero (0x80 is the only NaN), max 240."""
    float8_e5m2 = "float8_e5m2"
    """IEEE-like float8 E5M2 with infinities, max 57344."""
    float8_e5m2fnuz = "float8_e5m2fnuz"
    """E5M2 with no infinities and no negative zero (0x80 is NaN), max 57344."""
    float8_e8m0 = "float8_e8m0"
    """MX scale type E8M0FNU: powers of two 2**-127 .. 2**127 and NaN (0xFF); no zero."""
    float4_e2m1 = "float4_e2m1"
    """OCP float4 E2M1FN: +-{0, 0.5, 1, 1.5, 2, 3, 4, 6}, no infinities or NaN."""
    uint4 = "uint4"
    int2 = "int2"
    uint2 = "uint2"

    @property
    def bits(self) -> int:
        """Storage width in bits (bool is stored in one byte: 8)."""
        return _BITS[self.value]

    @property
    def numpy(self) -> np.dtype[Any]:
        """numpy dtype holding values of this type (a wider container for int4/bf16, an
        ``ml_dtypes`` type for the other narrow types)."""
        return _numpy_dtypes()[self.value]

    @property
    def exact_numpy(self) -> np.dtype[Any]:
        """numpy dtype holding exactly this type's values, one per element: ``numpy``, except
        ``ml_dtypes``' bfloat16 and int4 where ``numpy`` is a wider container. The type users
        exchange arrays of with tilegraph (see ``tilegraph.runtime.boundary``)."""
        return _exact_dtypes()[self.value]

    @property
    def is_float(self) -> builtins.bool:
        """True for the floating-point types (fp4/fp8/fp16/bf16/fp32/fp64)."""
        return self.value.startswith(("float", "bfloat"))

    @property
    def is_exact_in_numpy(self) -> builtins.bool:
        """False when ``numpy`` is only a container (int4, bfloat16)."""
        return self.value not in ("int4", "bfloat16")

    def nbytes(self, count: int) -> int:
        """Bytes needed to store ``count`` packed elements: ``ceil(count * bits / 8)``."""
        return (count * self.bits + 7) // 8


_BITS: dict[str, int] = {
    "float16": 16,
    "bfloat16": 16,
    "float32": 32,
    "float64": 64,
    "int4": 4,
    "int8": 8,
    "uint8": 8,
    "int16": 16,
    "uint16": 16,
    "int32": 32,
    "uint32": 32,
    "int64": 64,
    "uint64": 64,
    "bool": 8,
    "float8_e4m3": 8,
    "float8_e4m3fnuz": 8,
    "float8_e5m2": 8,
    "float8_e5m2fnuz": 8,
    "float8_e8m0": 8,
    "float4_e2m1": 4,
    "uint4": 4,
    "int2": 2,
    "uint2": 2,
}

_NUMPY: dict[str, str] = {
    "float16": "float16",
    "bfloat16": "float32",
    "float32": "float32",
    "float64": "float64",
    "int4": "int8",
    "int8": "int8",
    "uint8": "uint8",
    "int16": "int16",
    "uint16": "uint16",
    "int32": "int32",
    "uint32": "uint32",
    "int64": "int64",
    "uint64": "uint64",
    "bool": "bool",
}

_ML_DTYPES: dict[str, str] = {
    "float8_e4m3": "float8_e4m3fn",
    "float8_e4m3fnuz": "float8_e4m3fnuz",
    "float8_e5m2": "float8_e5m2",
    "float8_e5m2fnuz": "float8_e5m2fnuz",
    "float8_e8m0": "float8_e8m0fnu",
    "float4_e2m1": "float4_e2m1fn",
    "uint4": "uint4",
    "int2": "int2",
    "uint2": "uint2",
}
"""The types held in ``ml_dtypes``' numpy type of that name."""


@cache
def _numpy_dtypes() -> dict[str, np.dtype[Any]]:
    # ml_dtypes comes with onnx; imported on first use so that format code needs it only
    # when it meets one of these types
    import ml_dtypes

    table = {name: np.dtype(container) for name, container in _NUMPY.items()}
    table.update({name: np.dtype(getattr(ml_dtypes, ml)) for name, ml in _ML_DTYPES.items()})
    return table


@cache
def _exact_dtypes() -> dict[str, np.dtype[Any]]:
    import ml_dtypes

    return {
        **_numpy_dtypes(),
        "bfloat16": np.dtype(ml_dtypes.bfloat16),
        "int4": np.dtype(ml_dtypes.int4),
    }


def is_ml_dtypes(dtype: np.dtype[Any]) -> builtins.bool:
    """Whether ``dtype`` is one of ``ml_dtypes``' types (bfloat16, float8, int4, ...), whose
    values numpy's own functions do not all handle: compare them as float64, which holds
    every one exactly."""
    return dtype.type.__module__.startswith("ml_dtypes")


def is_ml_dtypes_float(dtype: np.dtype[Any]) -> builtins.bool:
    """Whether ``dtype`` is one of ``ml_dtypes``' floating types (bfloat16, float8, float4)."""
    return is_ml_dtypes(dtype) and "float" in dtype.name


# Lower-case string names -> DType. Short names follow MLIR/C conventions, not numpy type
# codes: "i4" is int4 (numpy's "i4" would be int32), "float" is float32, "int" is int32.
_ALIASES: dict[str, DType] = {}
for _dt, _names in {
    DType.float16: ("float16", "fp16", "f16", "half"),
    DType.bfloat16: ("bfloat16", "bf16"),
    DType.float32: ("float32", "fp32", "f32", "float", "single"),
    DType.float64: ("float64", "fp64", "f64", "double"),
    DType.int4: ("int4", "i4", "si4"),
    DType.int8: ("int8", "i8", "si8"),
    DType.uint8: ("uint8", "u8", "ui8"),
    DType.int16: ("int16", "i16", "si16"),
    DType.uint16: ("uint16", "u16", "ui16"),
    DType.int32: ("int32", "i32", "si32", "int"),
    DType.uint32: ("uint32", "u32", "ui32"),
    DType.int64: ("int64", "i64", "si64"),
    DType.uint64: ("uint64", "u64", "ui64"),
    DType.bool: ("bool", "i1", "boolean"),
    DType.float8_e4m3: (
        "float8_e4m3",
        "float8_e4m3fn",
        "fp8",
        "f8",
        "fp8_e4m3",
        "f8e4m3",
        "f8e4m3fn",
        "float8e4m3fn",
    ),
    DType.float8_e4m3fnuz: ("float8_e4m3fnuz", "float8e4m3fnuz", "f8e4m3fnuz"),
    DType.float8_e5m2: ("float8_e5m2", "float8e5m2", "f8e5m2", "fp8_e5m2"),
    DType.float8_e5m2fnuz: ("float8_e5m2fnuz", "float8e5m2fnuz", "f8e5m2fnuz"),
    DType.float8_e8m0: ("float8_e8m0", "float8_e8m0fnu", "float8e8m0", "f8e8m0fnu"),
    DType.float4_e2m1: ("float4_e2m1", "float4_e2m1fn", "float4e2m1", "f4e2m1fn"),
    DType.uint4: ("uint4", "u4", "ui4"),
    DType.int2: ("int2", "i2", "si2"),
    DType.uint2: ("uint2", "u2", "ui2"),
}.items():
    for _name in _names:
        _ALIASES[_name] = _dt


def parse_dtype(x: object) -> DType:
    """Return the ``DType`` for ``x``.

    Accepts a DType; a name (case-insensitive, optional GE ``DT_`` prefix): "float16", "fp16",
    "f16", "half", "float"/"fp32"/"f32", "bf16", "int8"/"i8", "int4"/"i4", "int32"/"i32", ...;
    or anything ``numpy.dtype`` accepts that is not a string (``np.float16``,
    ``np.dtype("int8")``, ``float`` -> float64, ml_dtypes' bfloat16/int4/float8_e4m3fn).
    Strings are *only* looked up in the name table (so "i4" means int4). Unknown input raises
    FormatError naming it.
    """
    if isinstance(x, DType):
        return x
    if isinstance(x, str):
        key = x.strip().lower()
        if key.startswith("dt_"):
            key = key[3:]
        found = _ALIASES.get(key)
        if found is not None:
            return found
        raise FormatError(f"unknown dtype {x!r}; valid dtypes: {', '.join(DType)}")
    if x is None:
        raise FormatError(f"no dtype given (None); valid dtypes: {', '.join(DType)}")
    try:
        np_dtype = np.dtype(x)  # type: ignore[call-overload]
    except (TypeError, ValueError) as exc:
        raise FormatError(f"unknown dtype {x!r}; valid dtypes: {', '.join(DType)}") from exc
    found = _ALIASES.get(np_dtype.name)
    if found is None:
        raise FormatError(
            f"numpy dtype {np_dtype.name!r} (from {x!r}) has no tilegraph dtype; "
            f"valid dtypes: {', '.join(DType)}"
        )
    return found
