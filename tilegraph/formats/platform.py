"""Platform profiles: the per-platform C0 (cube K0) table.

C0 is the number of elements of one cube-fractal row along the reduction axis; it depends on
the dtype *and* the platform (``docs/formats.md``, "C0 per element type"). Types the table
does not list get a documented choice:

* ``bool`` is one byte and behaves like uint8: C0 = 32 on both platforms.
* 64-bit types (float64, int64, uint64): 16 on ascend910b (its rule is "16 for every type
  wider than 8 bits"), 4 on ascend950 (its 32-bit types use the 32-byte row, fp32/int32 = 8,
  so a 64-bit type gets 32 / 8 = 4).
* uint32 on ascend950 follows the table literally: 16 (only int32 and fp32 drop to 8).
* The narrow ONNX types fill the same 32-byte row as int8 and int4 do, on both platforms:
  C0 = 32 for every float8 type (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0), 64 for the 4-bit
  float4_e2m1 and uint4, 128 for int2 and uint2.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from tilegraph.formats.dtype import DType, parse_dtype
from tilegraph.formats.format import FormatError
from tilegraph.hardware import DEFAULT_PRESET, base_platform


@dataclass(frozen=True)
class Platform:
    """A named hardware profile. ``c0`` maps every dtype the platform supports to its C0."""

    name: str
    c0: Mapping[DType, int]

    def __post_init__(self) -> None:
        table = {parse_dtype(k): int(v) for k, v in self.c0.items()}
        bad = {k: v for k, v in table.items() if v <= 0}
        if bad:
            raise FormatError(f"platform {self.name!r}: C0 values must be positive, got {bad}")
        object.__setattr__(self, "c0", MappingProxyType(table))

    def __hash__(self) -> int:
        return hash((self.name, tuple(sorted((k.value, v) for k, v in self.c0.items()))))

    def c0_for(self, dtype: object) -> int:
        """C0 of ``dtype`` (anything ``parse_dtype`` accepts) on this platform."""
        dt = parse_dtype(dtype)
        try:
            return self.c0[dt]
        except KeyError:
            raise FormatError(f"platform {self.name!r} has no C0 for dtype {dt.value}") from None


_C0_910B: dict[DType, int] = {
    DType.float16: 16,
    DType.bfloat16: 16,
    DType.float32: 16,
    DType.float64: 16,
    DType.int4: 64,
    DType.int8: 32,
    DType.uint8: 32,
    DType.int16: 16,
    DType.uint16: 16,
    DType.int32: 16,
    DType.uint32: 16,
    DType.int64: 16,
    DType.uint64: 16,
    DType.bool: 32,
    DType.float8_e4m3: 32,
    DType.float8_e4m3fnuz: 32,
    DType.float8_e5m2: 32,
    DType.float8_e5m2fnuz: 32,
    DType.float8_e8m0: 32,
    DType.float4_e2m1: 64,
    DType.uint4: 64,
    DType.int2: 128,
    DType.uint2: 128,
}
_C0_950: dict[DType, int] = {
    **_C0_910B,
    DType.float32: 8,
    DType.int32: 8,
    DType.float64: 4,
    DType.int64: 4,
    DType.uint64: 4,
}

#: Known platforms by lower-case name. Add a ``Platform`` here to register a new profile.
PLATFORMS: dict[str, Platform] = {
    "ascend910b": Platform("ascend910b", _C0_910B),
    "ascend950": Platform("ascend950", _C0_950),
    # The hardware presets' other names (tilegraph.hardware): both use the 910B C0 rules.
    "ascend310p": Platform("ascend310p", _C0_910B),
    "test": Platform("test", _C0_910B),
}

DEFAULT_PLATFORM = DEFAULT_PRESET
"""The default preset's name (written once, in :mod:`tilegraph.hardware`)."""


def get_platform(platform: str | Platform = DEFAULT_PLATFORM) -> Platform:
    """Return the Platform for a name (case-insensitive) or pass a Platform through. A
    hardware preset's what-if overrides (``ascend910b:ub=256KiB``) leave the C0 rules
    alone: the base preset's name picks them."""
    if isinstance(platform, Platform):
        return platform
    if isinstance(platform, str):
        found = PLATFORMS.get(base_platform(platform))
        if found is not None:
            return found
    raise FormatError(f"unknown platform {platform!r}; valid platforms: {', '.join(PLATFORMS)}")


def c0_for(dtype: object, platform: str | Platform = DEFAULT_PLATFORM) -> int:
    """C0 of ``dtype`` on ``platform`` (default ascend910b)."""
    return get_platform(platform).c0_for(dtype)
