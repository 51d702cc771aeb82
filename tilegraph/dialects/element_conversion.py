"""Value conversion between element types as ONNX Cast defines it (numpy kernels).

Arrays hold values in their type's numpy container (:attr:`tilegraph.formats.DType.numpy`).
Beyond numpy's ``astype`` (which already rounds to nearest even and wraps integers), ONNX
asks for:

* float8 targets (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz) with ``saturate`` (the default):
  infinities and values beyond the type's range become +-its largest finite value; without
  ``saturate`` they become NaN (or +-inf for e5m2), which is what ``ml_dtypes`` does;
* float8 e8m0 (a power-of-two scale): ``round_mode`` up / down / nearest and ``saturate``;
* int4 (held in int8): wraps into [-8, 7] like the other narrow integers;
* bfloat16 (held in float32): rounded to bfloat16 precision.
"""

from __future__ import annotations

import numpy as np

from tilegraph.formats import DType

SATURATING_FLOAT8 = frozenset(
    {DType.float8_e4m3, DType.float8_e4m3fnuz, DType.float8_e5m2, DType.float8_e5m2fnuz}
)
"""The float8 types whose conversion the ``saturate`` attribute changes."""

E8M0_ROUND_MODES = ("up", "down", "nearest")

_E8M0_BIAS = 127
_E8M0_MAX_CODE = 254  # 2**127
_E8M0_NAN_CODE = 255


def _float_view(x: np.ndarray) -> np.ndarray:
    """``x`` as float64 (exact for every type tilegraph holds up to 53-bit integers)."""
    return np.asarray(x).astype(np.float64)


def largest_finite(dtype: DType) -> float:
    """The largest finite value of a narrow float type held in an ``ml_dtypes`` type."""
    import ml_dtypes

    return float(ml_dtypes.finfo(dtype.numpy).max)


def to_e8m0(x: np.ndarray, *, saturate: bool = True, round_mode: str = "up") -> np.ndarray:
    """``x`` rounded to a power of two 2**k (k in [-127, 127]) as float8 e8m0 codes.

    ``round_mode`` picks the power below (down), above (up) or nearest (ties up, linear
    distance) of a value between two powers. Zero and values below 2**-127 give the
    smallest code with ``saturate`` and NaN without; values above 2**127 and infinities
    give the largest code with ``saturate`` and NaN without; NaN stays NaN. The spec leaves
    negative inputs unspecified: their magnitude is converted (as onnx's reference does).
    """
    if round_mode not in E8M0_ROUND_MODES:
        raise ValueError(f"round_mode must be one of {E8M0_ROUND_MODES}, got {round_mode!r}")
    import ml_dtypes

    magnitude = np.abs(_float_view(x))
    finite_nonzero = np.isfinite(magnitude) & (magnitude > 0)
    fraction, exponent = np.frexp(np.where(finite_nonzero, magnitude, 1.0))
    # magnitude = fraction * 2**exponent with fraction in [0.5, 1): floor(log2) = exponent - 1
    power = exponent.astype(np.int64) - 1
    if round_mode == "up":
        power += fraction > 0.5
    elif round_mode == "nearest":
        power += fraction >= 0.75  # 1.5 * 2**k is the midpoint of 2**k and 2**(k+1)
    code = power + _E8M0_BIAS
    too_small = (code < 0) | (magnitude == 0)
    too_large = (code > _E8M0_MAX_CODE) | np.isinf(magnitude)
    code = np.clip(code, 0, _E8M0_MAX_CODE)
    if saturate:
        code = np.where(too_small, 0, np.where(too_large, _E8M0_MAX_CODE, code))
    else:
        code = np.where(too_small | too_large, _E8M0_NAN_CODE, code)
    code = np.where(np.isnan(magnitude), _E8M0_NAN_CODE, code)
    return code.astype(np.uint8).view(ml_dtypes.float8_e8m0fnu)


def convert(
    x: np.ndarray, target: DType, *, saturate: bool = True, round_mode: str = "up"
) -> np.ndarray:
    """``x`` converted to ``target`` as ONNX Cast does, in ``target``'s container.

    ``saturate`` acts on float8 targets only, ``round_mode`` on float8 e8m0 only.
    """
    x = np.asarray(x)
    if target == DType.float8_e8m0:
        return to_e8m0(x, saturate=saturate, round_mode=round_mode)
    if target in SATURATING_FLOAT8 and saturate:
        limit = largest_finite(target)
        return np.clip(_float_view(x), -limit, limit).astype(target.numpy)
    if target == DType.int4:  # int8 container: wrap into [-8, 7] as the narrow types do
        return (((x.astype(np.int64) + 8) & 0xF) - 8).astype(target.numpy)
    if target == DType.bfloat16:  # float32 container: round to bfloat16's precision
        import ml_dtypes

        return x.astype(ml_dtypes.bfloat16).astype(target.numpy)
    return x.astype(target.numpy)


def exact_array(x: np.ndarray, dtype: DType) -> np.ndarray:
    """Values of ``dtype`` held in its container as an array of ``dtype.exact_numpy``: a
    type carry, exact (bfloat16 NaN payloads too, which ``ml_dtypes``' narrowing would
    canonicalize). A container value that is not one of the type's is rounded to nearest
    even (bfloat16) or wrapped (int4), as ``ml_dtypes`` converts."""
    x = np.asarray(x)
    exact = dtype.exact_numpy
    if dtype != DType.bfloat16 or x.dtype != np.float32:
        with np.errstate(all="ignore"):
            return x.astype(exact, copy=False)
    words = x.view(np.uint32)
    carried = (words & 0xFFFF) == 0  # a bfloat16 value: its upper half is its bit pattern
    with np.errstate(all="ignore"):  # NaN and beyond-range values convert as ml_dtypes does
        rounded = x.astype(exact).view(np.uint16)
    return np.where(carried, words >> 16, rounded).astype(np.uint16).view(exact)


_UNSIGNED_OF_WIDTH = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def bit_pattern(x: np.ndarray, dtype: DType) -> np.ndarray:
    """The raw bit patterns of ``x`` (values of ``dtype`` in its container), one unsigned
    integer per element holding ``dtype.bits`` bits (sub-byte types in a uint8)."""
    x = np.asarray(x)
    if dtype == DType.bfloat16:
        return exact_array(x, dtype).view(np.uint16)
    if dtype == DType.int4:
        return (x.astype(np.int64) & 0xF).astype(np.uint8)
    if dtype == DType.bool:
        return x.astype(np.uint8)
    # ml_dtypes keeps a sub-byte value's code in the low bits of its byte
    codes = x.view(_UNSIGNED_OF_WIDTH[max(dtype.bits, 8)])
    return codes & np.uint8((1 << dtype.bits) - 1) if dtype.bits < 8 else codes


def from_bit_pattern(codes: np.ndarray, dtype: DType) -> np.ndarray:
    """Values of ``dtype`` (in its container) whose bit patterns are ``codes``."""
    if dtype == DType.bfloat16:
        import ml_dtypes

        return codes.astype(np.uint16).view(ml_dtypes.bfloat16).astype(np.float32)
    if dtype == DType.int4:
        return (((codes.astype(np.int64) & 0xF) ^ 8) - 8).astype(np.int8)
    if dtype == DType.bool:  # a byte other than 0 or 1 is not a bool: any set bit is true
        return codes != 0
    width = max(dtype.bits, 8)
    return codes.astype(_UNSIGNED_OF_WIDTH[width]).view(dtype.numpy)
