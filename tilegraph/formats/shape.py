"""Storage shape from origin shape (``docs/formats.md``, "Storage shape from origin shape").

Dims are those of :mod:`tilegraph.formats.dims`: origin dims are normalised on the way in
(``None`` becomes ``UNKNOWN``, sympy integers ``int``); a storage dim computed from an unknown
dim is ``UNKNOWN``, and symbolic dims give expressions (``ceiling(s0/16)``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import overload

import sympy

from tilegraph.formats.dims import UNKNOWN, Dim, ceil_div, dim_mul, is_unknown, normalize_dim
from tilegraph.formats.format import Format, FormatError, parse_format
from tilegraph.formats.platform import DEFAULT_PLATFORM, Platform, get_platform
from tilegraph.formats.reshape_type import expand_rank

N0 = 16  #: fractal rows along N / M (cube N0 = M0)
UNKNOWN_RANK = -2  #: GE's ``[-2]`` shape marks an unknown rank, like ``None``


@dataclass(frozen=True)
class GroupPlan:
    """FRACTAL_Z groups rule: ``groups`` filters of ``n_per_group`` outputs, ``enlarge``
    groups per block (None when it cannot be decided from a symbolic/unknown C)."""

    groups: int
    n_per_group: int
    enlarge: int | None

    @property
    def blocks(self) -> int | None:
        """G' = ceil(groups, enlarge)."""
        return None if self.enlarge is None else -(-self.groups // self.enlarge)


def group_plan(n: Dim, c: Dim, c0: int, groups: int) -> GroupPlan | None:
    """The groups rule of formats.md, or None when groups are ignored.

    Applies only when ``groups > 1`` and N is a known int with ``N >= groups``; FormatError
    if then N is not a multiple of groups. ``e = min(lcm(c0/gcd(C,c0), 16/gcd(N',16)), g)``;
    with an unknown/symbolic C, e is still known when ``16/gcd(N',16) >= g`` (then e = g).
    """
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise FormatError(f"groups must be an int >= 1, got {groups!r}")
    if groups == 1 or not isinstance(n, int) or is_unknown(n) or n < groups:
        return None
    if n % groups:
        raise FormatError(f"FRACTAL_Z groups: N = {n} is not a multiple of groups = {groups}")
    n_per_group = n // groups
    b = N0 // math.gcd(n_per_group, N0)
    if isinstance(c, int) and not is_unknown(c):
        enlarge: int | None = min(math.lcm(c0 // math.gcd(c, c0), b), groups)
    else:
        enlarge = groups if b >= groups else None
    return GroupPlan(groups, n_per_group, enlarge)


def resolve_c0(
    storage_format: Format,
    dtype: object | None,
    c0: int | None,
    platform: str | Platform = DEFAULT_PLATFORM,
) -> int:
    """C0 used by ``storage_format``: 4 for NC1HWC0_C04, else ``c0`` if given, else the
    platform table entry of ``dtype`` (FormatError when neither is available)."""
    if c0 is not None:
        if isinstance(c0, bool) or not isinstance(c0, int) or c0 <= 0:
            raise FormatError(f"c0 must be a positive int, got {c0!r}")
    if storage_format is Format.NC1HWC0_C04:
        if c0 not in (None, 4):
            raise FormatError(f"NC1HWC0_C04 has C0 = 4; got c0 = {c0}")
        return 4
    if c0 is not None:
        return c0
    if dtype is None:
        raise FormatError(f"storage format {storage_format.value} needs a dtype (or c0)")
    return get_platform(platform).c0_for(dtype)


def axis_dims(
    shape: Sequence[Dim], origin_format: Format, storage_format: Format, reshape_type: str | None
) -> dict[str, Dim]:
    """N, C, H, W, D (D = 1 for 4-D origins) of an origin shape, after rank expansion.

    An ND origin of rank 4 is read as NCHW; other ND ranks, ranks above the origin format's,
    and 3-D origins for 4-D storage formats raise FormatError.
    """
    fmt = origin_format
    if fmt is Format.ND:
        if len(shape) != 4:
            extra = " (or a 2-D [K, N] for FRACTAL_Z)" if storage_format is Format.FRACTAL_Z else ""
            raise FormatError(
                f"cannot derive {storage_format.value} from an ND origin of rank {len(shape)}: "
                f"ND carries no axis meaning; only a rank-4 ND origin is read as NCHW{extra}"
            )
        fmt = Format.NCHW
    axes = fmt.axes
    if axes is None:
        raise FormatError(f"origin format must be ND or an axis format, got {fmt.value}")
    if fmt.is_3d and not storage_format.is_3d:
        raise FormatError(
            f"storage format {storage_format.value} needs a 4-D origin format "
            f"(NCHW, NHWC, HWCN, CHWN), got {fmt.value}"
        )
    full = expand_rank(list(shape), fmt, reshape_type)
    dims: dict[str, Dim] = dict(zip(axes, full, strict=True))
    dims.setdefault("D", 1)
    return dims


def _fractal_z(d: dict[str, Dim], c0: int, groups: int, three_d: bool) -> list[Dim]:
    n, c = d["N"], d["C"]
    spatial = dim_mul(d["D"], d["H"], d["W"]) if three_d else dim_mul(d["H"], d["W"])
    plan = group_plan(n, c, c0, groups)
    if plan is None:
        return [dim_mul(ceil_div(c, c0), spatial), ceil_div(n, N0), N0, c0]
    e, blocks = plan.enlarge, plan.blocks
    if e is None or blocks is None:
        return [UNKNOWN, UNKNOWN, N0, c0]
    c1 = ceil_div(dim_mul(c, e), c0)
    return [dim_mul(blocks, c1, spatial), ceil_div(plan.n_per_group * e, N0), N0, c0]


def _from_axes(fmt: Format, d: dict[str, Dim], c0: int, groups: int) -> list[Dim]:
    n, c, h, w = d["N"], d["C"], d["H"], d["W"]
    if fmt in (Format.NC1HWC0, Format.NC1HWC0_C04):
        return [n, ceil_div(c, c0), h, w, c0]
    if fmt is Format.NDC1HWC0:
        return [n, d["D"], ceil_div(c, c0), h, w, c0]
    if fmt is Format.C1HWNCoC0:
        if c0 < N0:
            raise FormatError(
                f"C1HWNCoC0 with C0 = {c0} < 16 cannot hold the data: the Co axis (size C0) "
                f"holds N mod 16"
            )
        return [ceil_div(c, c0), h, w, ceil_div(n, N0), c0, c0]
    if fmt is Format.FRACTAL_Z_C04:
        if isinstance(c, int) and c > 4:
            raise FormatError(f"FRACTAL_Z_C04 needs C <= 4, got C = {c}")
        return [ceil_div(dim_mul(4, h, w), c0), ceil_div(n, N0), N0, c0]
    if fmt in (Format.FRACTAL_Z, Format.FRACTAL_Z_3D):
        return _fractal_z(d, c0, groups, fmt is Format.FRACTAL_Z_3D)
    raise AssertionError(fmt)  # pragma: no cover


def nz_shape(shape: Sequence[Dim], c0: int) -> list[Dim]:
    """FRACTAL_NZ: ``[..., R, K] -> [..., ceil(K,c0), ceil(R,16), 16, c0]``; ``[K]`` is a
    column ``[K, 1]``: ``[1, ceil(K,16), 16, c0]``."""
    if len(shape) == 1:
        return [1, ceil_div(shape[0], N0), N0, c0]
    *batch, r, k = shape
    return [*batch, ceil_div(k, c0), ceil_div(r, N0), N0, c0]


@overload
def storage_shape(
    origin_shape: None,
    origin_format: Format | str,
    storage_format: Format | str,
    dtype: object | None = None,
    *,
    groups: int = 1,
    c0: int | None = None,
    reshape_type: str | None = None,
    platform: str | Platform = DEFAULT_PLATFORM,
) -> None: ...
@overload
def storage_shape(
    origin_shape: Iterable[object],
    origin_format: Format | str,
    storage_format: Format | str,
    dtype: object | None = None,
    *,
    groups: int = 1,
    c0: int | None = None,
    reshape_type: str | None = None,
    platform: str | Platform = DEFAULT_PLATFORM,
) -> list[Dim]: ...
def storage_shape(
    origin_shape: Iterable[object] | None,
    origin_format: Format | str,
    storage_format: Format | str,
    dtype: object | None = None,
    *,
    groups: int = 1,
    c0: int | None = None,
    reshape_type: str | None = None,
    platform: str | Platform = DEFAULT_PLATFORM,
) -> list[Dim] | None:
    """Storage shape of a tensor with ``origin_shape`` in ``origin_format`` stored as
    ``storage_format`` (formats.md rules).

    * ``origin_shape`` None or ``[-2]`` (unknown rank) and ``[]`` (scalar) are returned as is.
    * ``storage == origin``, ``storage == ND`` and ND -> axis format return the shape unchanged.
    * Axis-format permutations need the exact origin rank (4, or 5 for 3-D); no expansion.
    * 5HD/fractal formats expand low-rank axis origins by ``reshape_type`` (default table);
      a rank-4 ND origin is read as NCHW; a rank-2 ND origin gives the 2-D FRACTAL_Z.
    * ``dtype`` picks C0 on ``platform``; ``c0`` overrides it (NC1HWC0_C04 is always 4).
    * ``groups`` applies to FRACTAL_Z / FRACTAL_Z_3D only (groups rule); ignored elsewhere.

    Returns a new list; raises FormatError for invalid names or impossible requests.
    """
    of = parse_format(origin_format)
    sf = parse_format(storage_format)
    get_platform(platform)
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise FormatError(f"groups must be an int >= 1, got {groups!r}")
    if not of.is_origin:
        raise FormatError(
            f"origin format must be ND or an axis format, got {of.value} (storage {sf.value})"
        )
    if origin_shape is None:
        return None
    raw = list(origin_shape)
    if len(raw) == 1 and not isinstance(raw[0], sympy.Basic) and raw[0] == UNKNOWN_RANK:
        return raw  # type: ignore[return-value]
    shape = [normalize_dim(d) for d in raw]
    if not shape or sf is of or sf is Format.ND or (of is Format.ND and sf.is_origin):
        return shape
    if sf.is_origin:
        if of.is_3d != sf.is_3d or len(shape) != of.rank:
            raise FormatError(
                f"cannot permute {of.value} shape {shape} to {sf.value}: a permutation needs "
                f"an origin of rank {sf.rank} in a {'3-D' if sf.is_3d else '4-D'} axis format"
            )
        axes, target = of.axes or "", sf.axes or ""
        return [shape[axes.index(a)] for a in target]
    if sf is Format.FRACTAL_NZ:
        return nz_shape(shape, resolve_c0(sf, dtype, c0, platform))
    if sf is Format.FRACTAL_Z and of is Format.ND and len(shape) == 2:
        k0 = resolve_c0(sf, dtype, c0, platform)
        return [ceil_div(shape[0], k0), ceil_div(shape[1], N0), N0, k0]
    dims = axis_dims(shape, of, sf, reshape_type)
    return _from_axes(sf, dims, resolve_c0(sf, dtype, c0, platform), groups)
