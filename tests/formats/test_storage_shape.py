"""storage_shape, C0 table, reshape types and name parsing.

Every expected value below was computed by hand from docs/formats.md (the arithmetic is in the
comments), never by running the library.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import sympy

from tilegraph.formats import (
    PLATFORMS,
    DType,
    Format,
    FormatError,
    Platform,
    c0_for,
    default_reshape_type,
    drop_expansion,
    expand_rank,
    get_platform,
    parse_dtype,
    parse_format,
    storage_shape,
)

S0 = sympy.Symbol("s0", integer=True, positive=True)
A950 = "ascend950"

# --------------------------------------------------------------------------- C0 table


@pytest.mark.parametrize(
    ("dtype", "c0_910b", "c0_950"),
    [
        ("float16", 16, 16),
        ("bfloat16", 16, 16),
        ("float32", 16, 8),
        ("int32", 16, 8),
        ("int16", 16, 16),
        ("uint16", 16, 16),
        ("uint32", 16, 16),
        ("int8", 32, 32),
        ("uint8", 32, 32),
        ("float8_e4m3", 32, 32),
        ("int4", 64, 64),
        # outside the formats.md table (documented choices)
        ("bool", 32, 32),
        ("float64", 16, 4),
        ("int64", 16, 4),
        ("uint64", 16, 4),
    ],
)
def test_c0_table(dtype: str, c0_910b: int, c0_950: int) -> None:
    assert c0_for(dtype) == c0_910b
    assert c0_for(dtype, "ascend910b") == c0_910b
    assert c0_for(dtype, A950) == c0_950
    assert PLATFORMS[A950].c0[DType(dtype)] == c0_950


def test_platform_objects() -> None:
    p = get_platform("Ascend910B")
    assert p is PLATFORMS["ascend910b"] and get_platform(p) is p
    assert hash(p) == hash(Platform("ascend910b", dict(p.c0)))
    custom = Platform("toy", {DType.float16: 8})
    assert c0_for("float16", custom) == 8
    with pytest.raises(FormatError, match="toy"):
        c0_for("int8", custom)
    with pytest.raises(FormatError, match="ascend910b"):
        get_platform("ascend310")
    with pytest.raises(FormatError, match="ascend950"):
        storage_shape([1, 3, 4, 4], "NCHW", "NC1HWC0", "fp16", platform="gpu")


# --------------------------------------------------------------------------- NC1HWC0


@pytest.mark.parametrize(
    ("dtype", "platform", "expected"),
    [
        ("float16", "ascend910b", [8, 1, 224, 224, 16]),
        ("float16", A950, [8, 1, 224, 224, 16]),
        ("float32", "ascend910b", [8, 1, 224, 224, 16]),
        ("float32", A950, [8, 1, 224, 224, 8]),
        ("int8", "ascend910b", [8, 1, 224, 224, 32]),
        ("int8", A950, [8, 1, 224, 224, 32]),
        ("int4", "ascend910b", [8, 1, 224, 224, 64]),
        ("int4", A950, [8, 1, 224, 224, 64]),
    ],
)
def test_nc1hwc0_c3(dtype: str, platform: str, expected: list[int]) -> None:
    assert storage_shape([8, 3, 224, 224], "NCHW", "NC1HWC0", dtype, platform=platform) == expected


@pytest.mark.parametrize(
    ("dtype", "platform", "expected"),
    [
        ("fp16", "ascend910b", [2, 7, 5, 6, 16]),  # ceil(100/16) = 7
        ("fp32", "ascend910b", [2, 7, 5, 6, 16]),
        ("fp32", A950, [2, 13, 5, 6, 8]),  # ceil(100/8) = 13
        ("int8", A950, [2, 4, 5, 6, 32]),  # ceil(100/32) = 4
        ("int4", "ascend910b", [2, 2, 5, 6, 64]),  # ceil(100/64) = 2
    ],
)
def test_nc1hwc0_c100(dtype: str, platform: str, expected: list[int]) -> None:
    assert storage_shape([2, 100, 5, 6], "NCHW", "NC1HWC0", dtype, platform=platform) == expected


def test_nc1hwc0_from_other_axis_formats() -> None:
    # NHWC [N=2, H=5, W=7, C=33] -> [2, ceil(33/16)=3, 5, 7, 16]
    assert storage_shape([2, 5, 7, 33], "NHWC", "NC1HWC0", "fp16") == [2, 3, 5, 7, 16]
    # HWCN [H=3, W=3, C=64, N=128] -> [128, 4, 3, 3, 16]
    assert storage_shape([3, 3, 64, 128], "HWCN", "NC1HWC0", "fp16") == [128, 4, 3, 3, 16]
    # CHWN [C=20, H=2, W=3, N=5], int8 -> [5, 1, 2, 3, 32]
    assert storage_shape([20, 2, 3, 5], "CHWN", "NC1HWC0", "int8") == [5, 1, 2, 3, 32]


def test_nc1hwc0_c04() -> None:
    assert storage_shape([1, 3, 224, 224], "NCHW", "NC1HWC0_C04", "fp16") == [1, 1, 224, 224, 4]
    # C = 6 -> ceil(6/4) = 2; C0 is 4 whatever the dtype / platform
    assert storage_shape([1, 6, 8, 8], "NCHW", "NC1HWC0_C04", "fp32", platform=A950) == [
        1,
        2,
        8,
        8,
        4,
    ]
    assert storage_shape([1, 6, 8, 8], "NCHW", "NC1HWC0_C04", "int4") == [1, 2, 8, 8, 4]
    assert storage_shape([1, 6, 8, 8], "NCHW", "NC1HWC0_C04", c0=4) == [1, 2, 8, 8, 4]
    with pytest.raises(FormatError, match="C0 = 4"):
        storage_shape([1, 6, 8, 8], "NCHW", "NC1HWC0_C04", "fp16", c0=16)


def test_c0_override() -> None:
    assert storage_shape([8, 3, 224, 224], "NCHW", "NC1HWC0", "fp16", c0=8) == [8, 1, 224, 224, 8]
    # FRACTAL_NZ with a forced C0 of 32 for fp16: [100, 200] -> [ceil(200/32)=7, 7, 16, 32]
    assert storage_shape([100, 200], "ND", "FRACTAL_NZ", "fp16", c0=32) == [7, 7, 16, 32]
    # with c0 given, no dtype is needed
    assert storage_shape([100, 200], "ND", "FRACTAL_NZ", c0=16) == [13, 7, 16, 16]
    with pytest.raises(FormatError, match="dtype"):
        storage_shape([100, 200], "ND", "FRACTAL_NZ")
    with pytest.raises(FormatError, match="c0"):
        storage_shape([100, 200], "ND", "FRACTAL_NZ", c0=0)


# --------------------------------------------------------------------------- FRACTAL_Z


@pytest.mark.parametrize(
    ("dtype", "platform", "expected"),
    [
        ("fp16", "ascend910b", [49, 4, 16, 16]),  # C1=1, 1*7*7=49, ceil(64/16)=4
        ("fp32", "ascend910b", [49, 4, 16, 16]),
        ("fp32", A950, [49, 4, 16, 8]),
        ("int8", "ascend910b", [49, 4, 16, 32]),
        ("int4", A950, [49, 4, 16, 64]),
    ],
)
def test_fractal_z(dtype: str, platform: str, expected: list[int]) -> None:
    assert storage_shape([64, 3, 7, 7], "NCHW", "FRACTAL_Z", dtype, platform=platform) == expected
    # the same weight as HWCN / NHWC / CHWN
    assert storage_shape([7, 7, 3, 64], "HWCN", "FRACTAL_Z", dtype, platform=platform) == expected
    assert storage_shape([64, 7, 7, 3], "NHWC", "FRACTAL_Z", dtype, platform=platform) == expected
    assert storage_shape([3, 7, 7, 64], "CHWN", "FRACTAL_Z", dtype, platform=platform) == expected


def test_fractal_z_bigger() -> None:
    # [256, 64, 3, 3] fp16: C1 = 4, 4*9 = 36, N1 = 16
    assert storage_shape([256, 64, 3, 3], "NCHW", "FRACTAL_Z", "fp16") == [36, 16, 16, 16]
    # int8: C1 = ceil(64/32) = 2 -> 18
    assert storage_shape([256, 64, 3, 3], "NCHW", "FRACTAL_Z", "int8") == [18, 16, 16, 32]
    # fp32 on 950: C1 = 8 -> 72
    assert storage_shape([256, 64, 3, 3], "NCHW", "FRACTAL_Z", "fp32", platform=A950) == [
        72,
        16,
        16,
        8,
    ]


@pytest.mark.parametrize(
    ("shape", "groups", "dtype", "expected"),
    [
        # depthwise N=32, C=1, g=32, fp16: N'=1; c0/gcd(1,16)=16; 16/gcd(1,16)=16; lcm=16;
        # e=min(16,32)=16; G'=2; C1=ceil(16/16)=1; N1=ceil(16/16)=1 -> [2*1*9, 1, 16, 16]
        ([32, 1, 3, 3], 32, "fp16", [18, 1, 16, 16]),
        # g=2, N=64, C=32: N'=32; 16/gcd(32,16)=1; 16/gcd(32,16)=1; e=1; G'=2; C1=2
        # -> [2*2*9, ceil(32/16)=2, 16, 16]
        ([64, 32, 3, 3], 2, "fp16", [36, 2, 16, 16]),
        # g=4, N=8, C=3: N'=2; 16/gcd(3,16)=16; 16/gcd(2,16)=8; lcm=16; e=4; G'=1;
        # C1=ceil(12/16)=1; N1=ceil(8/16)=1 -> [1, 1, 16, 16]
        ([8, 3, 1, 1], 4, "fp16", [1, 1, 16, 16]),
        # int8 (c0=32), g=2, N=6, C=5, H=2, W=3: N'=3; 32/gcd(5,32)=32; 16/gcd(3,16)=16;
        # lcm=32; e=2; G'=1; C1=ceil(10/32)=1; N1=ceil(6/16)=1 -> [6, 1, 16, 32]
        ([6, 5, 2, 3], 2, "int8", [6, 1, 16, 32]),
        # depthwise g=20 (not a multiple of e=16): G'=ceil(20/16)=2, C1=1, N1=1 -> [18,1,16,16]
        ([20, 1, 3, 3], 20, "fp16", [18, 1, 16, 16]),
        # g=3, N=9, C=2: N'=3; 16/gcd(2,16)=8; 16/gcd(3,16)=16; lcm=16; e=3; G'=1;
        # C1=ceil(6/16)=1; N1=ceil(9/16)=1 -> [1, 1, 16, 16]
        ([9, 2, 1, 1], 3, "fp16", [1, 1, 16, 16]),
        # fp32 on 950 (c0=8): g=2, N=4, C=8: N'=2; 8/gcd(8,8)=1; 16/gcd(2,16)=8; lcm=8;
        # e=min(8,2)=2; G'=1; C1=ceil(16/8)=2; N1=ceil(4/16)=1 -> [2*1*1, 1, 16, 8]
        ([4, 8, 1, 1], 2, "fp32-950", [2, 1, 16, 8]),
        # g > N: groups ignored -> [C1*H*W = 9, ceil(4/16) = 1, 16, 16]
        ([4, 3, 3, 3], 8, "fp16", [9, 1, 16, 16]),
        # g = 1: the plain rule
        ([64, 3, 7, 7], 1, "fp16", [49, 4, 16, 16]),
    ],
)
def test_fractal_z_groups(shape: list[int], groups: int, dtype: str, expected: list[int]) -> None:
    platform = A950 if dtype.endswith("-950") else "ascend910b"
    dtype = dtype.removesuffix("-950")
    assert (
        storage_shape(shape, "NCHW", "FRACTAL_Z", dtype, groups=groups, platform=platform)
        == expected
    )


def test_fractal_z_groups_layout_independent_of_axis_format() -> None:
    # HWCN [H=3, W=3, C=1, N=32], g=32 -> same as NCHW [32, 1, 3, 3]
    assert storage_shape([3, 3, 1, 32], "HWCN", "FRACTAL_Z", "fp16", groups=32) == [18, 1, 16, 16]


def test_fractal_z_groups_unknown_n_ignored() -> None:
    # N unknown: groups ignored: [ceil(32/16)*9 = 18, N?, 16, 16]
    assert storage_shape([-1, 32, 3, 3], "NCHW", "FRACTAL_Z", "fp16", groups=2) == [18, -1, 16, 16]
    # None is the same unknown dim, normalised to -1
    assert storage_shape([None, 32, 3, 3], "NCHW", "FRACTAL_Z", "fp16", groups=2) == [
        18,
        -1,
        16,
        16,
    ]
    # symbolic N: groups ignored too
    assert storage_shape([S0, 32, 3, 3], "NCHW", "FRACTAL_Z", "fp16", groups=2) == [
        18,
        sympy.ceiling(S0 / 16),
        16,
        16,
    ]


def test_fractal_z_groups_unknown_c() -> None:
    # depthwise N=32, g=8: N'=4, 16/gcd(4,16)=4 < 8 so e depends on C -> unknown dims
    assert storage_shape([32, -1, 3, 3], "NCHW", "FRACTAL_Z", "fp16", groups=8) == [-1, -1, 16, 16]
    # N=32, g=16: N'=2, 16/gcd(2,16)=8 < 16 -> undecidable as well
    # N=16, g=16: N'=1, 16/1 = 16 >= g -> e = g = 16 whatever C: N1 = ceil(16/16) = 1
    assert storage_shape([16, -1, 3, 3], "NCHW", "FRACTAL_Z", "fp16", groups=16) == [
        -1,
        1,
        16,
        16,
    ]


def test_fractal_z_groups_errors() -> None:
    with pytest.raises(FormatError, match="multiple of groups"):
        storage_shape([10, 3, 3, 3], "NCHW", "FRACTAL_Z", "fp16", groups=4)
    with pytest.raises(FormatError, match="groups"):
        storage_shape([10, 3, 3, 3], "NCHW", "FRACTAL_Z", "fp16", groups=0)


def test_fractal_z_2d() -> None:
    # [K=100, N=200]: [ceil(100/16)=7, ceil(200/16)=13, 16, 16]
    assert storage_shape([100, 200], "ND", "FRACTAL_Z", "fp16") == [7, 13, 16, 16]
    assert storage_shape([100, 200], "ND", "FRACTAL_Z", "int8") == [4, 13, 16, 32]
    assert storage_shape([100, 200], "ND", "FRACTAL_Z", "fp32", platform=A950) == [13, 13, 16, 8]
    assert storage_shape([100, 200], "ND", "FRACTAL_Z", "int4") == [2, 13, 16, 64]
    with pytest.raises(FormatError, match="ND"):
        storage_shape([100, 200, 3], "ND", "FRACTAL_Z", "fp16")


def test_fractal_z_c04() -> None:
    # [64, 3, 7, 7] fp16: ceil(4*49/16) = ceil(196/16) = 13, N1 = 4
    assert storage_shape([64, 3, 7, 7], "NCHW", "FRACTAL_Z_C04", "fp16") == [13, 4, 16, 16]
    # fp32 on 950: ceil(196/8) = 25 (c0 is the dtype's C0, not 4)
    assert storage_shape([64, 3, 7, 7], "NCHW", "FRACTAL_Z_C04", "fp32", platform=A950) == [
        25,
        4,
        16,
        8,
    ]
    # int8: ceil(196/32) = 7; NHWC origin
    assert storage_shape([64, 7, 7, 3], "NHWC", "FRACTAL_Z_C04", "int8") == [7, 4, 16, 32]
    with pytest.raises(FormatError, match="C <= 4"):
        storage_shape([64, 5, 7, 7], "NCHW", "FRACTAL_Z_C04", "fp16")


def test_fractal_z_3d() -> None:
    # NCDHW [32, 20, 3, 5, 5] fp16: C1 = 2, 2*3*5*5 = 150, N1 = 2
    assert storage_shape([32, 20, 3, 5, 5], "NCDHW", "FRACTAL_Z_3D", "fp16") == [150, 2, 16, 16]
    assert storage_shape([3, 5, 5, 20, 32], "DHWCN", "FRACTAL_Z_3D", "fp16") == [150, 2, 16, 16]
    assert storage_shape([32, 3, 5, 5, 20], "NDHWC", "FRACTAL_Z_3D", "fp16") == [150, 2, 16, 16]
    # int8: C1 = 1 -> 75
    assert storage_shape([32, 20, 3, 5, 5], "NCDHW", "FRACTAL_Z_3D", "int8") == [75, 2, 16, 32]
    # groups: depthwise N=32, C=1, g=32: e=16, G'=2, C1=1 -> [2*1*3*3*3 = 54, 1, 16, 16]
    assert storage_shape([32, 1, 3, 3, 3], "NCDHW", "FRACTAL_Z_3D", "fp16", groups=32) == [
        54,
        1,
        16,
        16,
    ]
    # a 4-D origin has D = 1
    assert storage_shape([64, 3, 7, 7], "NCHW", "FRACTAL_Z_3D", "fp16") == [49, 4, 16, 16]


@pytest.mark.parametrize(
    ("shape", "dtype", "platform", "expected"),
    [
        ([100], "fp16", "ascend910b", [1, 7, 16, 16]),  # column [100, 1]
        ([100], "int8", "ascend910b", [1, 7, 16, 32]),
        ([100, 200], "fp16", "ascend910b", [13, 7, 16, 16]),  # [ceil(200/16), ceil(100/16)]
        ([100, 200], "fp32", A950, [25, 7, 16, 8]),  # ceil(200/8) = 25
        ([100, 200], "int4", A950, [4, 7, 16, 64]),  # ceil(200/64) = 4
        ([4, 100, 200], "fp16", "ascend910b", [4, 13, 7, 16, 16]),
        ([2, 3, 100, 200], "int8", "ascend910b", [2, 3, 7, 7, 16, 32]),  # ceil(200/32) = 7
        ([1, 1], "fp16", "ascend910b", [1, 1, 16, 16]),
    ],
)
def test_fractal_nz(shape: list[int], dtype: str, platform: str, expected: list[int]) -> None:
    assert storage_shape(shape, "ND", "FRACTAL_NZ", dtype, platform=platform) == expected


def test_fractal_nz_other_origins_no_expansion() -> None:
    # NCHW [2, 3, 5, 40]: last two dims (R=5, K=40) -> [2, 3, ceil(40/16)=3, 1, 16, 16]
    assert storage_shape([2, 3, 5, 40], "NCHW", "FRACTAL_NZ", "fp16") == [2, 3, 3, 1, 16, 16]
    # a low-rank NCHW tensor is not expanded for NZ
    assert storage_shape([40], "NCHW", "FRACTAL_NZ", "fp16") == [1, 3, 16, 16]


def test_ndc1hwc0() -> None:
    # NCDHW [2, 20, 4, 5, 6] fp16 -> [2, 4, ceil(20/16)=2, 5, 6, 16]
    assert storage_shape([2, 20, 4, 5, 6], "NCDHW", "NDC1HWC0", "fp16") == [2, 4, 2, 5, 6, 16]
    assert storage_shape([2, 4, 5, 6, 20], "NDHWC", "NDC1HWC0", "fp16") == [2, 4, 2, 5, 6, 16]
    assert storage_shape([4, 5, 6, 20, 2], "DHWCN", "NDC1HWC0", "fp16") == [2, 4, 2, 5, 6, 16]
    # 4-D origin: D = 1
    assert storage_shape([2, 20, 5, 6], "NCHW", "NDC1HWC0", "fp16") == [2, 1, 2, 5, 6, 16]
    assert storage_shape([2, 20, 5, 6], "NCHW", "NDC1HWC0", "fp32", platform=A950) == [
        2,
        1,
        3,
        5,
        6,
        8,
    ]


def test_c1hwncoc0() -> None:
    # HWCN [H=3, W=3, C=20, N=40] fp16: [ceil(20/16)=2, 3, 3, ceil(40/16)=3, 16, 16]
    assert storage_shape([3, 3, 20, 40], "HWCN", "C1HWNCoC0", "fp16") == [2, 3, 3, 3, 16, 16]
    assert storage_shape([40, 20, 3, 3], "NCHW", "C1HWNCoC0", "fp16") == [2, 3, 3, 3, 16, 16]
    # int8: C1 = 1, Co = C0 = 32
    assert storage_shape([3, 3, 20, 40], "HWCN", "C1HWNCoC0", "int8") == [1, 3, 3, 3, 32, 32]
    # fp32 on 950 has C0 = 8 < 16: the layout cannot hold N mod 16
    with pytest.raises(FormatError, match="C1HWNCoC0"):
        storage_shape([3, 3, 20, 40], "HWCN", "C1HWNCoC0", "fp32", platform=A950)


# --------------------------------------------------------------------------- permutations


@pytest.mark.parametrize(
    ("origin", "shape", "storage", "expected"),
    [
        ("NCHW", [1, 2, 3, 4], "NHWC", [1, 3, 4, 2]),
        ("NCHW", [1, 2, 3, 4], "HWCN", [3, 4, 2, 1]),
        ("NCHW", [1, 2, 3, 4], "CHWN", [2, 3, 4, 1]),
        ("NHWC", [1, 3, 4, 2], "NCHW", [1, 2, 3, 4]),
        ("HWCN", [3, 4, 2, 1], "CHWN", [2, 3, 4, 1]),
        ("CHWN", [2, 3, 4, 1], "NHWC", [1, 3, 4, 2]),
        ("NCDHW", [1, 2, 3, 4, 5], "NDHWC", [1, 3, 4, 5, 2]),
        ("NCDHW", [1, 2, 3, 4, 5], "DHWCN", [3, 4, 5, 2, 1]),
        ("DHWCN", [3, 4, 5, 2, 1], "NCDHW", [1, 2, 3, 4, 5]),
        ("NCHW", [1, 2, 3, 4], "NCHW", [1, 2, 3, 4]),
        # ND carries no axis meaning: relabelling changes nothing, at any rank
        ("ND", [5, 6], "NCHW", [5, 6]),
        ("ND", [5, 6, 7, 8], "NHWC", [5, 6, 7, 8]),
        ("NCHW", [1, 2, 3, 4], "ND", [1, 2, 3, 4]),
    ],
)
def test_permutations(origin: str, shape: list[int], storage: str, expected: list[int]) -> None:
    assert storage_shape(shape, origin, storage) == expected


def test_permutation_errors() -> None:
    with pytest.raises(FormatError, match="rank 4"):
        storage_shape([2, 3, 4], "NCHW", "NHWC")
    with pytest.raises(FormatError, match="NCDHW"):
        storage_shape([1, 2, 3, 4], "NCHW", "NCDHW")


# --------------------------------------------------------------------------- rank expansion


@pytest.mark.parametrize(
    ("fmt", "rank", "expected"),
    [
        ("NCHW", 1, "C"),
        ("NCHW", 2, "CH"),
        ("NCHW", 3, "CHW"),
        ("NHWC", 1, "C"),
        ("NHWC", 2, "HW"),
        ("NHWC", 3, "HWC"),
        ("HWCN", 1, "C"),
        ("HWCN", 2, "CN"),
        ("HWCN", 3, "WCN"),
        ("CHWN", 1, "C"),
        ("CHWN", 2, "WN"),
        ("CHWN", 3, "HWN"),
        ("NCHW", 4, "NCHW"),
        ("NCHW", 0, ""),
        ("NCDHW", 2, "HW"),
        ("NCDHW", 4, "CDHW"),
        ("NDHWC", 2, "WC"),
        ("DHWCN", 3, "WCN"),
    ],
)
def test_default_reshape_type(fmt: str, rank: int, expected: str) -> None:
    assert default_reshape_type(fmt, rank) == expected


def test_expand_rank() -> None:
    assert expand_rank([64], "NCHW") == [1, 64, 1, 1]
    assert expand_rank([5, 7], "NHWC") == [1, 5, 7, 1]
    assert expand_rank([5, 7], "HWCN") == [1, 1, 5, 7]
    assert expand_rank([5, 7], "NCHW", "NC") == [5, 7, 1, 1]
    assert expand_rank([5, 7], "CHWN", "CN") == [5, 1, 1, 7]
    assert expand_rank([4, 5, 6], "NCDHW") == [1, 1, 4, 5, 6]
    assert expand_rank([1, 2, 3, 4], "NCHW", "C") == [1, 2, 3, 4]  # full rank: ignored
    assert expand_rank([None, S0], "NCHW") == [1, None, S0, 1]
    assert drop_expansion([1, 64, 1, 1], "NCHW", 1) == [64]
    assert drop_expansion([5, 7, 1, 1], "NCHW", 2, "NC") == [5, 7]
    with pytest.raises(FormatError, match="not 1"):
        drop_expansion([5, 7, 2, 1], "NCHW", 2, "NC")


@pytest.mark.parametrize(
    ("shape", "reshape_type", "match"),
    [
        ([5, 7], "HC", "increasing"),
        ([5, 7], "CC", "increasing"),
        ([5, 7], "CX", "'X'"),
        ([5, 7], "C", "rank 2"),
        ([5], "NC", "rank 1"),
        ([1, 2, 3, 4, 5], None, "rank 5"),
    ],
)
def test_expand_rank_errors(shape: list[int], reshape_type: str | None, match: str) -> None:
    with pytest.raises(FormatError, match=match):
        expand_rank(shape, "NCHW", reshape_type)
    with pytest.raises(FormatError):
        storage_shape(shape, "NCHW", "NC1HWC0", "fp16", reshape_type=reshape_type)


def test_expansion_errors_for_non_axis_formats() -> None:
    with pytest.raises(FormatError, match="ND"):
        expand_rank([3], "ND")
    with pytest.raises(FormatError, match="NC1HWC0"):
        default_reshape_type("NC1HWC0", 1)


def test_storage_shape_with_rank_expansion() -> None:
    # conv bias [64], NCHW, "C" -> [1,64,1,1] -> [1, 4, 1, 1, 16]
    assert storage_shape([64], "NCHW", "NC1HWC0", "fp16") == [1, 4, 1, 1, 16]
    assert storage_shape([64], "NCHW", "NC1HWC0", "fp16", reshape_type="C") == [1, 4, 1, 1, 16]
    # explicit "N": [64,1,1,1] -> [64, 1, 1, 1, 16]
    assert storage_shape([64], "NCHW", "NC1HWC0", "fp16", reshape_type="N") == [64, 1, 1, 1, 16]
    # NHWC [5, 33] "HW" -> N=1,H=5,W=33,C=1 -> [1, 1, 5, 33, 16]
    assert storage_shape([5, 33], "NHWC", "NC1HWC0", "fp16") == [1, 1, 5, 33, 16]
    # NCHW [33, 5] "CH" -> C=33, H=5 -> [1, 3, 5, 1, 16]
    assert storage_shape([33, 5], "NCHW", "NC1HWC0", "fp16") == [1, 3, 5, 1, 16]
    # NCHW [3, 5] "NC" -> [3, 1, 1, 1, 16]
    assert storage_shape([3, 5], "NCHW", "NC1HWC0", "fp16", reshape_type="NC") == [3, 1, 1, 1, 16]
    # HWCN [33, 40] "CN" -> C=33, N=40 -> [40, 3, 1, 1, 16]
    assert storage_shape([33, 40], "HWCN", "NC1HWC0", "fp16") == [40, 3, 1, 1, 16]
    # CHWN [2, 3, 40] "HWN" -> C=1,H=2,W=3,N=40 -> [40, 1, 2, 3, 16]
    assert storage_shape([2, 3, 40], "CHWN", "NC1HWC0", "fp16") == [40, 1, 2, 3, 16]
    # FRACTAL_Z from NCHW rank 2 [64, 3], "CH" -> N=1,C=64,H=3,W=1 -> [4*3, 1, 16, 16]
    assert storage_shape([64, 3], "NCHW", "FRACTAL_Z", "fp16") == [12, 1, 16, 16]
    # NCDHW rank 1 [20] "C" -> NDC1HWC0 [1, 1, 2, 1, 1, 16]
    assert storage_shape([20], "NCDHW", "NDC1HWC0", "fp16") == [1, 1, 2, 1, 1, 16]
    # NCHW rank 1 -> NDC1HWC0: expand to 4-D, D = 1
    assert storage_shape([20], "NCHW", "NDC1HWC0", "fp16") == [1, 1, 2, 1, 1, 16]


def test_nd_rank4_read_as_nchw() -> None:
    assert storage_shape([8, 3, 224, 224], "ND", "NC1HWC0", "fp16") == [8, 1, 224, 224, 16]
    assert storage_shape([64, 3, 7, 7], "ND", "FRACTAL_Z", "fp16") == [49, 4, 16, 16]
    # ND is never expanded
    with pytest.raises(FormatError, match="ND"):
        storage_shape([3, 224, 224], "ND", "NC1HWC0", "fp16")
    with pytest.raises(FormatError, match="ND"):
        storage_shape([64], "ND", "NC1HWC0", "fp16")


def test_wrong_rank_and_impossible_requests() -> None:
    with pytest.raises(FormatError, match="rank"):
        storage_shape([1, 2, 3, 4, 5], "NCHW", "NC1HWC0", "fp16")
    with pytest.raises(FormatError, match="4-D origin"):
        storage_shape([1, 2, 3, 4, 5], "NCDHW", "NC1HWC0", "fp16")
    with pytest.raises(FormatError, match="4-D origin"):
        storage_shape([1, 2, 3, 4, 5], "NCDHW", "FRACTAL_Z", "fp16")
    with pytest.raises(FormatError, match="origin format"):
        storage_shape([1, 1, 1, 1, 16], "NC1HWC0", "NCHW", "fp16")


# --------------------------------------------------------------------------- unknown / symbolic


def test_unknown_dims_stay_unknown() -> None:
    assert storage_shape([-1, 3, 224, 224], "NCHW", "NC1HWC0", "fp16") == [-1, 1, 224, 224, 16]
    # None is accepted for an unknown dim and comes back as -1
    assert storage_shape([None, 3, 224, 224], "NCHW", "NC1HWC0", "fp16") == [-1, 1, 224, 224, 16]
    assert storage_shape([8, -1, 224, 224], "NCHW", "NC1HWC0", "fp16") == [8, -1, 224, 224, 16]
    assert storage_shape([8, None, 4, 4], "NCHW", "NC1HWC0", "fp16") == [8, -1, 4, 4, 16]
    # product with an unknown H -> unknown
    assert storage_shape([64, 3, -1, 7], "NCHW", "FRACTAL_Z", "fp16") == [-1, 4, 16, 16]
    assert storage_shape([64, 3, 7, None], "NCHW", "FRACTAL_Z", "fp16") == [-1, 4, 16, 16]
    assert storage_shape([None, 100], "ND", "FRACTAL_NZ", "fp16") == [7, -1, 16, 16]
    assert storage_shape([100, -1], "ND", "FRACTAL_NZ", "fp16") == [-1, 7, 16, 16]
    assert storage_shape([-1, 3, 224, 224], "NCHW", "NHWC") == [-1, 224, 224, 3]
    assert storage_shape([-1], "NCHW", "NC1HWC0", "fp16") == [1, -1, 1, 1, 16]
    # FRACTAL_Z_C04 with unknown C is fine (C only bounds the data)
    assert storage_shape([64, -1, 7, 7], "NCHW", "FRACTAL_Z_C04", "fp16") == [13, 4, 16, 16]


def test_unknown_rank_and_scalars() -> None:
    assert storage_shape(None, "NCHW", "NC1HWC0", "fp16") is None
    assert storage_shape([-2], "NCHW", "NC1HWC0", "fp16") == [-2]
    assert storage_shape([], "NCHW", "NC1HWC0", "fp16") == []
    assert storage_shape([], "ND", "FRACTAL_NZ", "fp16") == []


def test_symbolic_dims() -> None:
    c1 = sympy.ceiling(S0 / 16)
    assert storage_shape([S0, 3, 224, 224], "NCHW", "NC1HWC0", "fp16") == [S0, 1, 224, 224, 16]
    assert storage_shape([8, S0, 224, 224], "NCHW", "NC1HWC0", "fp16") == [8, c1, 224, 224, 16]
    assert storage_shape([64, S0, 7, 7], "NCHW", "FRACTAL_Z", "fp16") == [49 * c1, 4, 16, 16]
    assert storage_shape([S0, 100], "ND", "FRACTAL_NZ", "fp16") == [7, c1, 16, 16]
    assert storage_shape([8, S0, 4, 4], "NCHW", "NC1HWC0", "int8") == [
        8,
        sympy.ceiling(S0 / 32),
        4,
        4,
        32,
    ]
    # an expression that is a multiple of C0 simplifies (S0 is an integer symbol)
    assert storage_shape([8, 16 * S0, 4, 4], "NCHW", "NC1HWC0", "fp16") == [8, S0, 4, 4, 16]
    # sympy integers come back as ints
    out = storage_shape([sympy.Integer(8), sympy.Integer(3), 4, 4], "NCHW", "NC1HWC0", "fp16")
    assert out == [8, 1, 4, 4, 16] and all(type(d) is int for d in out)


def test_bad_dims() -> None:
    with pytest.raises(FormatError, match="-3"):
        storage_shape([-3, 3, 4, 4], "NCHW", "NC1HWC0", "fp16")
    with pytest.raises(FormatError, match="2.5"):
        storage_shape([2.5, 3, 4, 4], "NCHW", "NC1HWC0", "fp16")


# --------------------------------------------------------------------------- names


def test_names_and_enums_are_equivalent() -> None:
    expected = [8, 1, 224, 224, 16]
    shape = [8, 3, 224, 224]
    assert storage_shape(shape, Format.NCHW, Format.NC1HWC0, DType.float16) == expected
    assert storage_shape(shape, "nchw", "nc1hwc0", "half") == expected
    assert storage_shape(shape, "NCHW", "NC1HWC0", np.float16) == expected
    assert storage_shape(shape, "NCHW", "NC1HWC0", np.dtype("float16")) == expected
    assert storage_shape(tuple(shape), "FORMAT_NCHW", "NC1HWC0", "DT_FLOAT16") == expected
    assert storage_shape(np.array(shape), "NCHW", "NC1HWC0", "f16") == expected


def test_format_enum() -> None:
    assert Format("C1HWNCoC0") is Format.C1HWNCoC0
    assert parse_format("c1hwncoc0") is Format.C1HWNCoC0
    assert [f.value for f in Format] == [f.name for f in Format]
    assert Format.NCHW.axes == "NCHW" and Format.HWCN.axes == "HWCN"
    assert Format.ND.axes is None and Format.NC1HWC0.axes is None
    assert Format.NCHW.rank == 4 and Format.NDHWC.rank == 5 and Format.FRACTAL_Z.rank is None
    assert Format.ND.is_origin and Format.CHWN.is_origin and not Format.FRACTAL_NZ.is_origin
    assert Format.NCDHW.is_3d and Format.FRACTAL_Z_3D.is_3d and not Format.NCHW.is_3d
    assert Format.NC1HWC0.uses_c0 and Format.FRACTAL_NZ.uses_c0 and not Format.NHWC.uses_c0
    assert Format.C1HWNCoC0.pads and not Format.ND.pads
    assert Format.HWCN.axis_index("C") == 2


def test_parse_errors_name_the_input() -> None:
    with pytest.raises(FormatError, match="NC1HW.*C1HWNCoC0"):
        parse_format("NCHW0")
    with pytest.raises(FormatError, match="float17"):
        parse_dtype("float17")
    with pytest.raises(FormatError, match="complex"):
        parse_dtype(np.complex64)
    with pytest.raises(FormatError, match="None"):
        parse_dtype(None)
    with pytest.raises(FormatError, match="NCWH"):
        storage_shape([1, 2, 3, 4], "NCWH", "NC1HWC0", "fp16")
    with pytest.raises(FormatError, match="float17"):
        storage_shape([1, 2, 3, 4], "NCHW", "NC1HWC0", "float17")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("float16", DType.float16),
        ("fp16", DType.float16),
        ("f16", DType.float16),
        ("half", DType.float16),
        ("float", DType.float32),
        ("fp32", DType.float32),
        ("f32", DType.float32),
        ("int8", DType.int8),
        ("i8", DType.int8),
        ("int4", DType.int4),
        ("i4", DType.int4),
        ("bf16", DType.bfloat16),
        ("int32", DType.int32),
        ("i32", DType.int32),
        ("BOOL", DType.bool),
        ("fp8", DType.float8_e4m3),
        ("DT_FLOAT", DType.float32),
        (np.float32, DType.float32),
        (np.dtype("uint8"), DType.uint8),
        (bool, DType.bool),
        (DType.int16, DType.int16),
    ],
)
def test_parse_dtype(name: object, expected: DType) -> None:
    assert parse_dtype(name) is expected


def test_dtype_properties() -> None:
    assert DType.int4.bits == 4 and DType.bfloat16.bits == 16 and DType.bool.bits == 8
    assert DType.int4.numpy == np.int8
    assert DType.bfloat16.numpy == np.float32
    assert DType.float8_e4m3.numpy == ml_dtypes.float8_e4m3fn
    assert DType.float16.numpy == np.float16
    assert DType.int4.nbytes(3) == 2
    assert DType.float16.is_float and not DType.int8.is_float
