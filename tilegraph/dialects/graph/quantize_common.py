"""What the quantization ops share: the quantized types and requantization."""

from __future__ import annotations

import numpy as np

from tilegraph.dialects.element_conversion import SATURATING_FLOAT8, convert
from tilegraph.formats import DType

INTEGER_RANGES: dict[DType, tuple[int, int]] = {
    DType.int8: (-128, 127),
    DType.uint8: (0, 255),
    DType.int16: (-32768, 32767),
    DType.uint16: (0, 65535),
    DType.int4: (-8, 7),
    DType.uint4: (0, 15),
    DType.int2: (-2, 1),
    DType.uint2: (0, 3),
}
"""The integer types values quantize to, with their ranges."""

QUANTIZED_TYPES = (*INTEGER_RANGES, *sorted(SATURATING_FLOAT8), DType.float4_e2m1)
"""Every type QuantizeLinear produces (the float types round, they have no zero point)."""


def requantize(
    scaled: np.ndarray, zero: np.ndarray | float | None, target: DType, saturate: bool = True
) -> np.ndarray:
    """``saturate(round(scaled) + zero)`` in ``target``: an integer target rounds half to
    even and clips to its range; a float target rounds to nearest even, saturating float8
    unless ``saturate`` is false (float4 always saturates)."""
    offset = 0.0 if zero is None else np.asarray(zero).astype(np.float64)
    if target in INTEGER_RANGES:
        lo, hi = INTEGER_RANGES[target]
        return convert(np.clip(np.rint(scaled).astype(np.float64) + offset, lo, hi), target)
    return convert(np.asarray(scaled).astype(np.float64) + offset, target, saturate=saturate)
