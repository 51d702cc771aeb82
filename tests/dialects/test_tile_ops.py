"""Semantics of the ``tile`` dialect: each op's registered kernel (``kernel_of(op)``)
against numpy written here.

Expected values are derived from the documented meaning of each op (the docstrings of
``tilegraph.dialects.tile``), element by element where the layout is the point of the op
(NZ/ZZ/ZN fractals, NC1HWC0, img2col), never by reusing the implementation's reshapes.
Also: pipes and costs of every op class, and verifier checks found missing in review.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import product
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    StringAttr,
    bf16,
    f16,
    f32,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from tilegraph.cost_model.tile_costs import cost_of
from tilegraph.dialects.graph.dense import DenseAttr
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import (
    BINARY_OPS,
    SCALAR_OPS,
    TILE_OPS,
    UNARY_OPS,
    AllocOp,
    ArangeOp,
    ArgOp,
    BlockIdxOp,
    BlockNumOp,
    BroadcastOp,
    CastOp,
    CmpOp,
    ConstantOp,
    CopyFlatOp,
    CopyOp,
    DupOp,
    FixpipeOp,
    GatherRowsOp,
    GetValueOp,
    LaunchOp,
    Load2dOp,
    Load3dOp,
    Load5hdOp,
    MmadOp,
    Nd2NzOp,
    Nz2NdOp,
    OneHotOp,
    PickOp,
    PipeBarrierOp,
    PoolOp,
    PutOp,
    ReadOp,
    ReduceOp,
    ReshapeViewOp,
    ScanOp,
    ScatterRowsOp,
    SelectOp,
    SetFlagOp,
    SliceViewOp,
    Store5hdOp,
    StridedViewOp,
    StrideOp,
    SubBlockIdxOp,
    SyncAllOp,
    SyncBlockSetOp,
    SyncBlockWaitOp,
    TakeOp,
    TapsOp,
    TopKOp,
    TransposeOp,
    ViewOp,
    WaitFlagOp,
    WriteOp,
    scoped_memref,
)
from tilegraph.dialects.tile.loop import LoopLaunchesOp
from tilegraph.dialects.tile.workspace import strided_memref
from tilegraph.hardware import hardware_preset
from tilegraph.runtime.tile_interpreter.kernels import kernel_of
from tilegraph.target import pin_target

HW = hardware_preset("ascend910b")
rng = np.random.default_rng(0)


# --------------------------------------------------------------------------------------
# Building ops
# --------------------------------------------------------------------------------------


def buf(shape: tuple[int, ...] | list[int], scope: str = "UB", dtype: Attribute = f32) -> SSAValue:
    """An SSA value of type ``memref<shape x dtype, "scope">``."""
    return create_ssa_value(scoped_memref(list(shape), dtype, scope))


def idx(n: int = 1) -> list[SSAValue]:
    return [create_ssa_value(IndexType()) for _ in range(n)]


def flag() -> SSAValue:
    return create_ssa_value(i1)


def ints(values) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def run(op, *values: Any) -> tuple:
    """Verify ``op`` and call its kernel with the runtime operand values."""
    op.verify()
    return kernel_of(op)(*values)


def nan_filled(shape, dtype=np.float32) -> np.ndarray:
    return np.full(shape, np.nan, dtype)


# Layout helpers written from the docs (element by element, independent of the code).


def to_zz(a: np.ndarray, k0: int) -> np.ndarray:
    """ZZ ``(M1, K1, 16, K0)``: element (m, k) at [m//16, k//K0, m%16, k%K0]."""
    m, k = a.shape
    out = np.zeros((m // 16, k // k0, 16, k0), a.dtype)
    for i, j in product(range(m), range(k)):
        out[i // 16, j // k0, i % 16, j % k0] = a[i, j]
    return out


def to_zn(b: np.ndarray, k0: int) -> np.ndarray:
    """ZN ``(K1, N1, 16, K0)``: element (k, n) at [k//K0, n//16, n%16, k%K0]."""
    k, n = b.shape
    out = np.zeros((k // k0, n // 16, 16, k0), b.dtype)
    for i, j in product(range(k), range(n)):
        out[i // k0, j // 16, j % 16, i % k0] = b[i, j]
    return out


def to_nz(c: np.ndarray) -> np.ndarray:
    """NZ accumulator ``(N1, M1, 16, 16)``: element (m, n) at [n//16, m//16, m%16, n%16]."""
    m, n = c.shape
    out = np.zeros((n // 16, m // 16, 16, 16), c.dtype)
    for i, j in product(range(m), range(n)):
        out[j // 16, i // 16, i % 16, j % 16] = c[i, j]
    return out


def from_nz(nz: np.ndarray) -> np.ndarray:
    n1, m1, _, _ = nz.shape
    out = np.zeros((m1 * 16, n1 * 16), nz.dtype)
    for i, j in product(range(m1 * 16), range(n1 * 16)):
        out[i, j] = nz[j // 16, i // 16, i % 16, j % 16]
    return out


# --------------------------------------------------------------------------------------
# tile.copy
# --------------------------------------------------------------------------------------

GM_SRC = np.arange(6 * 10, dtype=np.float32).reshape(6, 10) + 1  # no zeros: fill is visible


def copy_op(src_shape, src_scope, dst_shape, dst_scope, pad=None, dst_dtype=f32):
    rank = len(src_shape)
    return CopyOp(
        buf(src_shape, src_scope), idx(rank), buf(dst_shape, dst_scope, dst_dtype), idx(rank), pad
    )


def test_copy_gm_to_ub_window_inside():
    op = copy_op((6, 10), "GM", (4, 4), "UB")
    dst = nan_filled((4, 4))
    assert run(op, GM_SRC, 1, 2, dst, 0, 0) == ()
    np.testing.assert_array_equal(dst, GM_SRC[1:5, 2:6])


def test_copy_clips_tail_and_zero_fills_the_rest():
    op = copy_op((6, 10), "GM", (4, 4), "UB")
    dst = nan_filled((4, 4))
    run(op, GM_SRC, 4, 8, dst, 0, 0)  # only rows 4..5, cols 8..9 exist
    expected = np.zeros((4, 4), np.float32)
    expected[:2, :2] = GM_SRC[4:6, 8:10]
    np.testing.assert_array_equal(dst, expected)


def test_copy_negative_source_offsets_leave_a_zero_halo():
    op = copy_op((6, 10), "GM", (4, 4), "UB")
    dst = nan_filled((4, 4))
    run(op, GM_SRC, -1, -2, dst, 0, 0)
    expected = np.zeros((4, 4), np.float32)
    expected[1:, 2:] = GM_SRC[0:3, 0:2]
    np.testing.assert_array_equal(dst, expected)


def test_copy_pad_value_fills_unreached_lanes():
    op = copy_op((6, 10), "GM", (4, 4), "UB", pad=-7.5)
    dst = nan_filled((4, 4))
    run(op, GM_SRC, 5, -1, dst, 0, 0)
    expected = np.full((4, 4), -7.5, np.float32)
    expected[0, 1:] = GM_SRC[5, 0:3]
    np.testing.assert_array_equal(dst, expected)


def test_copy_halo_window_larger_than_the_image_keeps_every_row():
    # A 3x3 image loaded with a halo of 1 into a 5x5 tile: the window is the tile's extent.
    img = np.arange(1, 10, dtype=np.float32).reshape(3, 3)
    op = copy_op((3, 3), "GM", (5, 5), "UB", pad=-1.0)
    dst = nan_filled((5, 5))
    run(op, img, -1, -1, dst, 0, 0)
    expected = np.full((5, 5), -1.0, np.float32)
    expected[1:4, 1:4] = img
    np.testing.assert_array_equal(dst, expected)


def test_copy_destination_offsets_on_a_load():
    op = copy_op((6, 10), "GM", (4, 4), "L1")
    dst = nan_filled((4, 4))
    run(op, GM_SRC, 0, 0, dst, 1, 2)  # window placed at (1, 2) in the tile
    expected = np.zeros((4, 4), np.float32)
    expected[1:, 2:] = GM_SRC[0:3, 0:2]
    np.testing.assert_array_equal(dst, expected)


def test_copy_store_to_gm_writes_only_the_window():
    tile = np.arange(16, dtype=np.float32).reshape(4, 4) + 100
    gm = np.full((6, 6), -3.0, np.float32)
    op = copy_op((4, 4), "UB", (6, 6), "GM")
    run(op, tile, 0, 0, gm, 4, 3)  # the tile's last rows/cols fall off GM's edge
    expected = np.full((6, 6), -3.0, np.float32)
    expected[4:6, 3:6] = tile[:2, :3]
    np.testing.assert_array_equal(gm, expected)


def test_copy_store_with_negative_destination_offset():
    tile = np.arange(16, dtype=np.float32).reshape(4, 4)
    gm = np.full((6, 6), -3.0, np.float32)
    run(copy_op((4, 4), "UB", (6, 6), "GM"), tile, 0, 0, gm, -2, 0)
    expected = np.full((6, 6), -3.0, np.float32)
    expected[0:2, 0:4] = tile[2:4]
    np.testing.assert_array_equal(gm, expected)


def test_copy_ub_to_l1_is_not_a_load_and_keeps_the_rest():
    tile = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    l1 = np.full((4, 4), 9.0, np.float32)
    run(copy_op((2, 2), "UB", (4, 4), "L1"), tile, 0, 0, l1, 1, 1)
    expected = np.full((4, 4), 9.0, np.float32)
    expected[1:3, 1:3] = tile
    np.testing.assert_array_equal(l1, expected)


def test_copy_l1_to_ub_is_a_load_and_fills():
    l1 = np.arange(4, dtype=np.float32).reshape(2, 2) + 1
    ub = nan_filled((3, 3))
    run(copy_op((2, 2), "L1", (3, 3), "UB", pad=5.0), l1, 0, 0, ub, 0, 0)
    expected = np.full((3, 3), 5.0, np.float32)
    expected[:2, :2] = l1
    np.testing.assert_array_equal(ub, expected)


def test_copy_casts_to_the_destination_type():
    src = np.array([[1.0 / 3.0, 1000.1]], np.float32)
    dst = np.zeros((1, 2), np.float16)
    run(copy_op((1, 2), "GM", (1, 2), "UB", dst_dtype=f16), src, 0, 0, dst, 0, 0)
    assert dst.dtype == np.float16
    np.testing.assert_array_equal(dst, src.astype(np.float16))


@pytest.mark.parametrize(
    ("src", "dst", "pipe"),
    [
        ("GM", "UB", "MTE2"),
        ("GM", "L1", "MTE2"),
        ("UB", "GM", "MTE3"),
        ("L1", "GM", "MTE3"),
        ("UB", "L1", "MTE3"),
        ("L1", "UB", "MTE1"),
        ("UB", "UB", "V"),
    ],
)
def test_copy_pipe_follows_the_path(src, dst, pipe):
    op = copy_op((4, 4), src, (4, 4), dst)
    op.verify()
    assert op.pipe() == pipe


def test_copy_flat_moves_a_run_of_elements_whatever_the_shapes():
    src = np.arange(12, dtype=np.float32).reshape(2, 6) + 1
    dst = nan_filled((3, 5))
    op = CopyFlatOp(buf((2, 6), "GM"), idx()[0], buf((3, 5)), idx()[0], 7)
    assert op.pipe() == "MTE2"
    run(op, src, 4, dst, 2)
    expected = np.zeros(15, np.float32)  # a load zero-fills first
    expected[2:9] = np.arange(5, 12)
    np.testing.assert_array_equal(dst.reshape(-1), expected)
    run(op, src, 8, dst, 0)  # only 4 elements are left in the source
    expected = np.zeros(15, np.float32)
    expected[:4] = [9, 10, 11, 12]
    np.testing.assert_array_equal(dst.reshape(-1), expected)


def test_copy_flat_store_cut_at_the_destination_end_keeps_the_rest():
    tile = np.arange(8, dtype=np.float32).reshape(2, 4)
    gm = np.full(10, -1.0, np.float32)
    run(CopyFlatOp(buf((2, 4)), idx()[0], buf((10,), "GM"), idx()[0], 8), tile, 0, gm, 5)
    np.testing.assert_array_equal(gm, [-1, -1, -1, -1, -1, 0, 1, 2, 3, 4])


@pytest.mark.parametrize(
    ("atomic", "combined"), [("add", [9, 11, 13]), ("max", [6, 7, 8]), ("min", [3, 4, 5])]
)
def test_an_atomic_copy_flat_store_combines_with_gm(atomic: str, combined: list[float]):
    tile = np.array([3, 4, 5], np.float32)
    gm = np.array([-1, 6, 7, 8, -1], np.float32)
    op = CopyFlatOp(buf((3,)), idx()[0], buf((5,), "GM"), idx()[0], 3, atomic=atomic)
    op.verify()
    assert op.read() == (op.src, op.dst)  # it reads what it lands on
    run(op, tile, 0, gm, 1)
    np.testing.assert_array_equal(gm, [-1, *combined, -1])


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: CopyFlatOp(buf((4,), "GM"), idx()[0], buf((4,)), idx()[0], 4, atomic="add"),
         "stores on-chip data to GM"),
        (lambda: CopyFlatOp(buf((4,)), idx()[0], buf((4,), "GM"), idx()[0], 4, atomic="mul"),
         "atomic must be one of"),
    ],
    ids=["a_load", "mul"],
)  # fmt: skip
def test_an_atomic_copy_flat_is_a_store_that_adds_or_takes_max_min(make, message: str):
    with pytest.raises(VerifyException, match=message):
        make().verify()


# --------------------------------------------------------------------------------------
# tile.nd2nz and tile.load_5hd
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("row", "col"), [(4, 0), (0, 30), (10, 20)])
def test_nd2nz_window_in_nz_order(row, col):
    src = rng.standard_normal((2, 20, 40)).astype(np.float32)
    c1, r1, c0 = 3, 2, 8
    op = Nd2NzOp(buf(src.shape, "GM"), idx(3), buf((c1, r1, 16, c0), "L1"))
    dst = nan_filled((c1, r1, 16, c0))
    run(op, src, 1, row, col, dst)
    for r, c in product(range(r1 * 16), range(c1 * c0)):
        inside = row + r < 20 and col + c < 40
        want = src[1, row + r, col + c] if inside else 0.0  # zero padded to whole fractals
        assert dst[c // c0, r // 16, r % 16, c % c0] == want, (r, c)


@pytest.mark.parametrize(("row", "col"), [(4, 0), (0, 30), (10, 20)])
def test_nz2nd_writes_the_nz_tile_back_as_rows(row, col):
    """The inverse of nd2nz: element (r, c) of the tile comes from [c//C0, r//16, r%16, c%C0];
    what falls outside the GM matrix is cut, the rest of GM is untouched."""
    c1, r1, c0 = 3, 2, 8
    tile = rng.standard_normal((c1, r1, 16, c0)).astype(np.float32)
    gm = np.full((2, 20, 40), -7.0, np.float32)
    op = Nz2NdOp(buf(tile.shape, "UB"), buf(gm.shape, "GM"), idx(3))
    run(op, tile, gm, 1, row, col)
    for r, c in product(range(20), range(40)):
        inside = row <= r < row + r1 * 16 and col <= c < col + c1 * c0
        rr, cc = r - row, c - col
        want = tile[cc // c0, rr // 16, rr % 16, cc % c0] if inside else -7.0
        assert gm[1, r, c] == want, (r, c)
    assert np.all(gm[0] == -7.0)


def test_load_5hd_nchw_window_to_nc1hwc0():
    src = rng.standard_normal((2, 20, 5, 6)).astype(np.float32)
    c1, h, w, c0 = 2, 4, 6, 16
    op = Load5hdOp(buf(src.shape, "GM"), idx(4), buf((1, c1, h, w, c0), "L1"))
    dst = nan_filled((1, c1, h, w, c0))
    run(op, src, 1, 4, 1, 0, dst)
    for c, y, x in product(range(c1 * c0), range(h), range(w)):
        inside = 4 + c < 20 and 1 + y < 5
        want = src[1, 4 + c, 1 + y, x] if inside else 0.0
        assert dst[0, c // c0, y, x, c % c0] == want, (c, y, x)


def test_load_5hd_halo_larger_than_the_image():
    src = rng.standard_normal((1, 3, 5, 6)).astype(np.float32)
    op = Load5hdOp(buf(src.shape, "GM"), idx(4), buf((1, 1, 7, 8, 16), "UB"))
    dst = nan_filled((1, 1, 7, 8, 16))
    run(op, src, 0, 0, -1, -1, dst)
    expected = np.zeros((16, 7, 8), np.float32)  # channel-major, then into C0 lanes
    expected[:3, 1:6, 1:7] = src[0]
    np.testing.assert_array_equal(dst[0, 0], expected.transpose(1, 2, 0))


def test_load_5hd_pad_value_outside_the_image_zero_in_channel_lanes():
    src = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    op = Load5hdOp(buf(src.shape, "GM"), idx(4), buf((1, 1, 6, 6, 16), "UB"), pad=-np.inf)
    dst = nan_filled((1, 1, 6, 6, 16))
    run(op, src, 0, 0, -1, -1, dst)
    expected = np.zeros((16, 6, 6), np.float32)  # lanes past C = 3 are always zero
    expected[:3] = -np.inf  # positions outside the image read as pad
    expected[:3, 1:5, 1:5] = src[0]
    np.testing.assert_array_equal(dst[0, 0], expected.transpose(1, 2, 0))


def test_load_5hd_from_a_chw_source():
    src = rng.standard_normal((5, 3, 4)).astype(np.float32)
    op = Load5hdOp(buf(src.shape, "GM"), idx(4), buf((1, 1, 3, 4, 8), "L1"))
    dst = nan_filled((1, 1, 3, 4, 8))
    run(op, src, 0, 0, 0, 0, dst)
    for c, y, x in product(range(8), range(3), range(4)):
        assert dst[0, 0, y, x, c] == (src[c, y, x] if c < 5 else 0.0)


def test_store_5hd_nc1hwc0_tile_into_an_nchw_window():
    tile = rng.standard_normal((1, 2, 3, 4, 8)).astype(np.float32)  # 16 channel lanes
    gm = np.full((2, 20, 5, 6), -9.0, np.float32)
    op = Store5hdOp(buf(tile.shape), buf(gm.shape, "GM"), idx(4))
    assert op.pipe() == "MTE3"
    run(op, tile, gm, 1, 12, 3, 4)  # channels 12..27 of 20, rows 3..5 of 5, cols 4..7 of 6
    expected = np.full((2, 20, 5, 6), -9.0, np.float32)
    for c, y, x in product(range(16), range(3), range(4)):
        if 12 + c < 20 and 3 + y < 5 and 4 + x < 6:  # lanes past the edges are dropped
            expected[1, 12 + c, 3 + y, 4 + x] = tile[0, c // 8, y, x, c % 8]
    np.testing.assert_array_equal(gm, expected)


def test_load_5hd_then_store_5hd_round_trips():
    src = rng.standard_normal((1, 5, 3, 4)).astype(np.float32)
    tile = nan_filled((1, 1, 3, 4, 8))
    run(Load5hdOp(buf(src.shape, "GM"), idx(4), buf(tile.shape)), src, 0, 0, 0, 0, tile)
    out = np.zeros_like(src)
    run(Store5hdOp(buf(tile.shape), buf(src.shape, "GM"), idx(4)), tile, out, 0, 0, 0, 0)
    np.testing.assert_array_equal(out, src)


# --------------------------------------------------------------------------------------
# tile.load2d
# --------------------------------------------------------------------------------------

L1_FRACTALS = rng.standard_normal((3, 2, 16, 8)).astype(np.float32)


def _fractal(src: np.ndarray, i: int, j: int) -> np.ndarray:
    if 0 <= i < src.shape[0] and 0 <= j < src.shape[1]:
        return src[i, j]
    return np.zeros(src.shape[2:], src.dtype)  # fractals outside src read as zero


@pytest.mark.parametrize(
    ("mode", "dst_scope", "dst_shape", "i", "j", "pick", "transposed"),
    [
        ("copy", "L0A", (2, 3, 16, 8), 1, 0, lambda a, b: (a, b), False),
        ("swap", "L0A", (2, 3, 16, 8), 0, 0, lambda a, b: (b, a), False),
        ("swap", "L0A", (2, 3, 16, 8), 1, 1, lambda a, b: (b, a), False),
        ("transpose", "L0B", (2, 3, 8, 16), 0, 0, lambda a, b: (b, a), True),
        ("transpose_fractals", "L0A", (2, 2, 8, 16), 1, 1, lambda a, b: (a, b), True),
    ],
)
def test_load2d_modes(mode, dst_scope, dst_shape, i, j, pick, transposed):
    op = Load2dOp(buf(L1_FRACTALS.shape, "L1"), *idx(2), buf(dst_shape, dst_scope), mode=mode)
    assert op.pipe() == "MTE1"
    dst = nan_filled(dst_shape)
    run(op, L1_FRACTALS, i, j, dst)
    for a, b in product(range(dst_shape[0]), range(dst_shape[1])):
        da, db = pick(a, b)
        want = _fractal(L1_FRACTALS, i + da, j + db)
        np.testing.assert_array_equal(dst[a, b], want.T if transposed else want, err_msg=(a, b))


# --------------------------------------------------------------------------------------
# tile.mmad
# --------------------------------------------------------------------------------------


def _mmad_case(dtype, k0, m=20, k=12, n=24):
    """A (m x k) x B (k x n) padded to whole fractals, in ZZ / ZN layout."""
    mp, kp, np_ = -(-m // 16) * 16, -(-k // k0) * k0, -(-n // 16) * 16
    a = np.zeros((mp, kp), dtype)
    b = np.zeros((kp, np_), dtype)
    a[:m, :k] = rng.integers(-4, 5, (m, k))
    b[:k, :n] = rng.integers(-4, 5, (k, n))
    return a, b, to_zz(a, k0), to_zn(b, k0)


@pytest.mark.parametrize(
    ("in_type", "acc_type", "np_in", "np_acc", "k0"),
    [
        (f32, f32, np.float32, np.float32, 8),  # K0 = 32 B / 4 B
        (f16, f32, np.float16, np.float32, 16),
        (i8, i32, np.int8, np.int32, 32),
    ],
)
def test_mmad_init_then_accumulate(in_type, acc_type, np_in, np_acc, k0):
    a, b, zz, zn = _mmad_case(np_in, k0)
    n1, m1 = b.shape[1] // 16, a.shape[0] // 16
    op = MmadOp(buf(zz.shape, "L0A", in_type), buf(zn.shape, "L0B", in_type),
                buf((n1, m1, 16, 16), "L0C", acc_type), flag())  # fmt: skip
    c = np.full((n1, m1, 16, 16), 77, np_acc)  # garbage: init must overwrite it
    run(op, zz, zn, c, True)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_array_equal(from_nz(c), want.astype(np_acc))
    run(op, zz, zn, c, False)  # accumulate: c += a x b
    np.testing.assert_array_equal(from_nz(c), (2 * want).astype(np_acc))
    assert c.dtype == np_acc


def test_mmad_k_loop_accumulates_partial_products():
    a, b, _, _ = _mmad_case(np.float32, 8, m=16, k=32, n=16)
    op = MmadOp(buf((1, 2, 16, 8), "L0A"), buf((2, 1, 16, 8), "L0B"),
                buf((1, 1, 16, 16), "L0C"), flag())  # fmt: skip
    c = np.zeros((1, 1, 16, 16), np.float32)
    for step, ks in enumerate((slice(0, 16), slice(16, 32))):
        run(op, to_zz(a[:, ks], 8), to_zn(b[ks, :], 8), c, step == 0)
    np.testing.assert_allclose(from_nz(c), a @ b, rtol=1e-6)


@pytest.mark.parametrize(
    ("dtype", "preset_key", "a_shape", "n1"),
    [
        (f32, "float32", (2, 3, 16, 8), 2),
        (f32, "float32", (1, 5, 16, 8), 3),
        (f16, "float16", (3, 2, 16, 16), 1),
        (bf16, "bfloat16", (1, 1, 16, 16), 4),
        (i8, "int8", (2, 4, 16, 32), 2),
    ],
)
def test_mmad_cost_formula(dtype, preset_key, a_shape, n1):
    m1, k1, _, k0 = a_shape
    acc = i32 if dtype == i8 else f32
    op = MmadOp(buf(a_shape, "L0A", dtype), buf((k1, n1, 16, k0), "L0B", dtype),
                buf((n1, m1, 16, 16), "L0C", acc), flag())  # fmt: skip
    op.verify()
    m, k, n = m1 * 16, k1 * k0, n1 * 16
    kk = HW.cube_macs_per_cycle[preset_key] // 256
    assert cost_of(op, HW) == 6 + math.ceil(m / 16) * math.ceil(k / kk) * math.ceil(n / 16)
    assert op.pipe() == "M"


def test_mmad_cost_f32_literal():
    # float32 on 910B: 1024 MACs/cycle -> K0 = 4; M = 32, K = 24, N = 32 -> 6 + 2*6*2.
    op = MmadOp(buf((2, 3, 16, 8), "L0A"), buf((3, 2, 16, 8), "L0B"),
                buf((2, 2, 16, 16), "L0C"), flag())  # fmt: skip
    assert cost_of(op, HW) == 30


# --------------------------------------------------------------------------------------
# tile.fixpipe
# --------------------------------------------------------------------------------------

ACC = rng.standard_normal((32, 32)).astype(np.float32)  # (M, N) = (32, 32): N1 = M1 = 2
BIAS = rng.standard_normal(32).astype(np.float32)


def test_fixpipe_nd_bias_relu_clipped_at_the_edge():
    op = FixpipeOp(buf((2, 2, 16, 16), "L0C"), buf((40, 40), "GM"), idx(2), buf((32,), "L1"),
                   layout="nd", relu=True)  # fmt: skip
    assert op.pipe() == "FIX"
    gm = np.full((40, 40), -9.0, np.float32)
    run(op, to_nz(ACC), gm, 16, 20, BIAS)
    want = np.maximum(ACC + BIAS[None, :], 0)  # + bias per column n, then relu
    expected = np.full((40, 40), -9.0, np.float32)
    expected[16:40, 20:40] = want[:24, :20]
    np.testing.assert_allclose(gm, expected, rtol=1e-6)


def test_fixpipe_nd_plain_into_a_batched_buffer_with_cast():
    op = FixpipeOp(buf((2, 2, 16, 16), "L0C"), buf((2, 32, 40), "UB", f16), idx(3), layout="nd")
    out = np.full((2, 32, 40), 5.0, np.float16)
    run(op, to_nz(ACC), out, 1, 0, 8)
    expected = np.full((2, 32, 40), 5.0, np.float16)
    expected[1, :, 8:40] = ACC.astype(np.float16)  # no relu: negatives stay
    np.testing.assert_array_equal(out, expected)
    assert (out[1, :, 8:] < 0).any()


def test_fixpipe_bias_without_relu_and_relu_without_bias():
    with_bias = FixpipeOp(buf((2, 2, 16, 16), "L0C"), buf((32, 32), "GM"), idx(2),
                          buf((32,), "L1"), layout="nd")  # fmt: skip
    out = np.zeros((32, 32), np.float32)
    run(with_bias, to_nz(ACC), out, 0, 0, BIAS)
    np.testing.assert_allclose(out, ACC + BIAS, rtol=1e-6)
    relu_only = FixpipeOp(buf((2, 2, 16, 16), "L0C"), buf((32, 32), "L1"), idx(2),
                          layout="nd", relu=True)  # fmt: skip
    run(relu_only, to_nz(ACC), out, 0, 0)
    np.testing.assert_array_equal(out, np.maximum(ACC, 0))


@pytest.mark.parametrize(("h_offset", "relu"), [(0, False), (2, True), (3, True)])
def test_fixpipe_nc1hwc0(h_offset, relu):
    rows, h, w = 3, 5, 8  # rows x W = 24 pixels of M = 32
    op = FixpipeOp(buf((2, 2, 16, 16), "L0C"), buf((1, 2, h, w, 16), "GM"), idx(5),
                   buf((32,), "L1"), layout="nc1hwc0", relu=relu, rows=rows)  # fmt: skip
    out = np.full((1, 2, h, w, 16), -9.0, np.float32)
    run(op, to_nz(ACC), out, 0, 0, h_offset, 0, 0, BIAS)
    val = ACC + BIAS
    if relu:
        val = np.maximum(val, 0)
    expected = np.full((1, 2, h, w, 16), -9.0, np.float32)
    for m, n in product(range(rows * w), range(32)):
        y = h_offset + m // w
        if y < h:  # rows past the bottom edge are cut
            expected[0, n // 16, y, m % w, n % 16] = val[m, n]
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_fixpipe_nz_writes_fractals_at_fractal_offsets():
    op = FixpipeOp(buf((2, 2, 16, 16), "L0C"), buf((3, 4, 16, 16), "GM"), idx(4),
                   buf((32,), "L1"), layout="nz", relu=True)  # fmt: skip
    out = np.full((3, 4, 16, 16), -9.0, np.float32)
    run(op, to_nz(ACC), out, 2, 1, 0, 0, BIAS)  # N1 offset 2: the second column block is cut
    val = np.maximum(ACC + BIAS, 0)
    expected = np.full((3, 4, 16, 16), -9.0, np.float32)
    for m, n in product(range(32), range(16)):  # only n < 16 lands (fractal row 2 of 3)
        expected[2, 1 + m // 16, m % 16, n] = val[m, n]
    np.testing.assert_allclose(out, expected, rtol=1e-6)


# --------------------------------------------------------------------------------------
# tile.load3d (img2col) against a direct convolution
# --------------------------------------------------------------------------------------


def _direct_conv(x: np.ndarray, wt: np.ndarray, stride: int, dilation: int, pad: int):
    c, h, w = x.shape
    co, _, kh, kw = wt.shape
    xp = np.zeros((c, h + 2 * pad, w + 2 * pad), np.float64)
    xp[:, pad : pad + h, pad : pad + w] = x
    oh = (h + 2 * pad - dilation * (kh - 1) - 1) // stride + 1
    ow = (w + 2 * pad - dilation * (kw - 1) - 1) // stride + 1
    y = np.zeros((co, oh, ow))
    for o, r, s in product(range(co), range(oh), range(ow)):
        for ci, i, j in product(range(c), range(kh), range(kw)):
            y[o, r, s] += (
                xp[ci, r * stride + i * dilation, s * stride + j * dilation] * wt[o, ci, i, j]
            )
    return y, xp


@pytest.mark.parametrize(("stride", "dilation"), [(2, 1), (1, 2)])
def test_load3d_img2col_matches_direct_convolution(stride, dilation):
    channels, c1, c0, h, w, k, pad = 11, 2, 8, 5, 5, 3, 1  # channels < C1*C0 = 16
    x = rng.standard_normal((channels, h, w)).astype(np.float32)
    wt = rng.standard_normal((4, channels, k, k)).astype(np.float32)
    y, xp = _direct_conv(x, wt, stride, dilation, pad)
    oh, ow = y.shape[1:]
    need_h = (oh - 1) * stride + (k - 1) * dilation + 1
    # The L1 window: row 0 is the (zero) top padding row; padding channel lanes are NaN.
    fmap = np.full((1, c1, need_h, w, c0), np.nan, np.float32)
    for ci in range(c1 * c0):
        if ci < channels:
            fmap[0, ci // c0, :, :, ci % c0] = 0.0
            rows = min(need_h - pad, h)
            fmap[0, ci // c0, pad : pad + rows, :, ci % c0] = x[ci, :rows]
    k1 = c1 * k * k
    m1 = -(-(oh * ow) // 16)
    op = Load3dOp(buf(fmap.shape, "L1"), idx()[0], buf((m1, k1, 16, c0), "L0A"),
                  kernel_shape=(k, k), strides=(stride, stride), dilations=(dilation, dilation),
                  pad_left=pad, out_width=ow, channels=channels)  # fmt: skip
    assert op.pipe() == "MTE1"
    dst = nan_filled((m1, k1, 16, c0))
    run(op, fmap, 0, dst)
    assert not np.isnan(dst).any()
    # img2col element by element: M = output pixel, K = (c1, kh, kw, c0).
    for mm in range(oh * ow):
        r, s = divmod(mm, ow)
        for kf, lane in product(range(k1), range(c0)):
            cc1, rest = divmod(kf, k * k)
            i, j = divmod(rest, k)
            ci = cc1 * c0 + lane
            want = (
                xp[ci, r * stride + i * dilation, s * stride + j * dilation] if ci < channels else 0
            )
            assert dst[mm // 16, kf, mm % 16, lane] == np.float32(want), (mm, kf, lane)
    # And as a convolution: (pixels x K) @ (K x Co) with weights in the same K order.
    a2 = np.zeros((m1 * 16, k1 * c0))
    for mm, kk in product(range(m1 * 16), range(k1 * c0)):
        a2[mm, kk] = dst[mm // 16, kk // c0, mm % 16, kk % c0]
    b2 = np.zeros((k1 * c0, 4))
    for kf, lane in product(range(k1), range(c0)):
        cc1, rest = divmod(kf, k * k)
        ci = cc1 * c0 + lane
        if ci < channels:
            b2[kf * c0 + lane] = wt[:, ci, rest // k, rest % k]
    conv = (a2 @ b2)[: oh * ow].T.reshape(4, oh, ow)
    np.testing.assert_allclose(conv, y, rtol=1e-5, atol=1e-5)
    # A K slice starting at k_offset is the same columns of the full img2col.
    part = Load3dOp(buf(fmap.shape, "L1"), idx()[0], buf((m1, 9, 16, c0), "L0A"),
                    kernel_shape=(k, k), strides=(stride, stride), dilations=(dilation, dilation),
                    pad_left=pad, out_width=ow, channels=channels)  # fmt: skip
    sliced = nan_filled((m1, 9, 16, c0))
    run(part, fmap, 9, sliced)
    np.testing.assert_array_equal(sliced[:, :, : oh * ow], dst[:, 9:, : oh * ow])


# --------------------------------------------------------------------------------------
# Vector ops
# --------------------------------------------------------------------------------------

UNARY_REF: dict[str, tuple[Callable[[np.ndarray], np.ndarray], str]] = {
    # name: (meaning, input domain)
    "vabs": (lambda x: np.abs(x), "any"),
    "vneg": (lambda x: -x, "any"),
    "vrelu": (lambda x: np.where(x > 0, x, 0), "any"),
    "vexp": (lambda x: np.exp(x), "any"),
    "vln": (lambda x: np.log(x), "pos"),
    "vsqrt": (lambda x: np.sqrt(x), "pos"),
    "vrsqrt": (lambda x: 1 / np.sqrt(x), "pos"),
    "vrec": (lambda x: 1 / x, "pos"),
    "vtanh": (lambda x: np.tanh(x), "any"),
    "vsigmoid": (lambda x: 1 / (1 + np.exp(-x)), "any"),
    "verf": (np.vectorize(math.erf), "any"),
    "vsin": (lambda x: np.sin(x), "any"),
    "vcos": (lambda x: np.cos(x), "any"),
    "vatan": (lambda x: np.arctan(x), "any"),
    "vfloor": (lambda x: np.floor(x), "any"),
    "vceil": (lambda x: np.ceil(x), "any"),
    "vround": (lambda x: np.floor(x + 0.5), "nohalf"),
    "vsign": (lambda x: (x > 0).astype(x.dtype) - (x < 0), "zeros"),
    "vnot": (lambda x: x == 0, "zeros"),
    "vbitnot": (lambda x: -x - 1, "int"),
    "vcopy": (lambda x: x, "any"),
}


def _inputs(shape, domain: str) -> np.ndarray:
    x = rng.uniform(-3, 3, shape)
    if domain == "pos":
        x = np.abs(x) + 0.25
    elif domain == "nohalf":
        x = np.round(x * 4) / 4 + 0.1  # never exactly .5
    elif domain == "zeros":
        x[..., ::3] = 0
    return x.astype(np.float32)


def test_unary_reference_table_covers_every_unary_op():
    assert set(UNARY_REF) == set(UNARY_OPS)


@pytest.mark.parametrize("name", sorted(UNARY_REF))
@pytest.mark.parametrize(("src_shape", "dst_shape"), [((4, 8), (4, 8)), ((1, 8), (4, 8))])
def test_unary_ops(name, src_shape, dst_shape):
    fn, domain = UNARY_REF[name]
    if domain == "int":
        x = rng.integers(-100, 100, src_shape).astype(np.int32)
        op = UNARY_OPS[name](buf(src_shape, dtype=i32), buf(dst_shape, dtype=i32))
        dst = np.zeros(dst_shape, np.int32)
        run(op, x, dst)
        np.testing.assert_array_equal(dst, np.broadcast_to(fn(x.astype(np.int64)), dst_shape))
        return
    x = _inputs(src_shape, domain)
    op = UNARY_OPS[name](buf(src_shape), buf(dst_shape))
    dst = nan_filled(dst_shape)
    run(op, x, dst)
    want = np.broadcast_to(fn(x.astype(np.float64)), dst_shape)
    np.testing.assert_allclose(dst, want, rtol=2e-6, atol=1e-6, err_msg=name)


BINARY_REF: dict[str, tuple[Callable[[Any, Any], Any], str]] = {
    "vadd": (lambda a, b: a + b, "any"),
    "vsub": (lambda a, b: a - b, "any"),
    "vmul": (lambda a, b: a * b, "any"),
    "vdiv": (lambda a, b: a / b, "nonzero"),
    "vmax": (lambda a, b: np.where(a > b, a, b), "any"),
    "vmin": (lambda a, b: np.where(a < b, a, b), "any"),
    "vpow": (lambda a, b: np.exp(b * np.log(a)), "pos"),
    "vand": (lambda a, b: (a != 0) & (b != 0), "bool"),
    "vor": (lambda a, b: (a != 0) | (b != 0), "bool"),
    "vbitand": (lambda a, b: a & b, "int"),
    "vbitor": (lambda a, b: a | b, "int"),
    "vbitxor": (lambda a, b: a ^ b, "int"),
    # shift counts of 0..33: 32 and 33 are out of range, giving the sign fill (ONNX BitShift)
    "vshl": (lambda a, b: np.where(b < 32, (a << np.minimum(b, 31)) % 2**32, 0), "shift"),
    "vshr": (
        lambda a, b: np.where(b < 32, a >> np.minimum(b, 31), np.where(a < 0, -1, 0)),
        "shift",
    ),  # fmt: skip
}


def test_binary_reference_table_covers_every_binary_op():
    assert set(BINARY_REF) == set(BINARY_OPS)


@pytest.mark.parametrize("name", sorted(BINARY_REF))
@pytest.mark.parametrize(
    ("lhs_shape", "rhs_shape"),
    [((4, 8), (4, 8)), ((4, 1), (1, 8)), ((1, 8), (4, 8)), ((4, 8), (8,))],
)
def test_binary_ops_with_broadcast(name, lhs_shape, rhs_shape):
    fn, domain = BINARY_REF[name]
    if domain == "bool":
        a = rng.integers(0, 2, lhs_shape).astype(bool)
        b = rng.integers(0, 2, rhs_shape).astype(bool)
        dtype, np_dtype = i1, np.bool_
    elif domain in ("int", "shift"):
        a = rng.integers(-1000, 1000, lhs_shape).astype(np.int32)
        b = rng.integers(0, 34, rhs_shape) if domain == "shift" else rng.integers(-9, 9, rhs_shape)
        b = b.astype(np.int32)
        dtype, np_dtype = i32, np.int32
    else:
        a, b = _inputs(lhs_shape, "any"), _inputs(rhs_shape, "any")
        if domain == "pos":
            a = np.abs(a) + 0.5
        if domain == "nonzero":
            b = np.where(np.abs(b) < 0.25, 1.0, b).astype(np.float32)
        dtype, np_dtype = f32, np.float32
    op = BINARY_OPS[name](buf(lhs_shape, dtype=dtype), buf(rhs_shape, dtype=dtype),
                          buf((4, 8), dtype=dtype))  # fmt: skip
    dst = np.zeros((4, 8), np_dtype)
    run(op, a, b, dst)
    if domain in ("int", "shift"):
        want = fn(a.astype(np.int64), b.astype(np.int64))
        want = ((want + 2**31) % 2**32 - 2**31).astype(np.int32)  # wrap as int32
        np.testing.assert_array_equal(dst, np.broadcast_to(want, (4, 8)), err_msg=name)
        return
    want = fn(a.astype(np.float64) if domain != "bool" else a, b if domain == "bool" else b)
    np.testing.assert_allclose(dst, np.broadcast_to(want, (4, 8)), rtol=2e-6, err_msg=name)


SCALAR_REF = {
    "vadds": lambda x, s: x + s,
    "vmuls": lambda x, s: x * s,
    "vmaxs": lambda x, s: np.where(x > s, x, s),
    "vmins": lambda x, s: np.where(x < s, x, s),
}


def test_scalar_reference_table_covers_every_scalar_op():
    assert set(SCALAR_REF) == set(SCALAR_OPS)


@pytest.mark.parametrize("name", sorted(SCALAR_REF))
@pytest.mark.parametrize("scalar", [0.5, -1.25])
def test_scalar_ops(name, scalar):
    x = _inputs((1, 8), "any")
    op = SCALAR_OPS[name](buf((1, 8)), scalar, buf((3, 8)))
    dst = nan_filled((3, 8))
    run(op, x, dst)
    np.testing.assert_allclose(dst, np.broadcast_to(SCALAR_REF[name](x, scalar), (3, 8)))
    assert dst.dtype == np.float32


@pytest.mark.parametrize(
    ("predicate", "fn"),
    [
        ("eq", lambda a, b: a == b),
        ("ne", lambda a, b: a != b),
        ("lt", lambda a, b: a < b),
        ("le", lambda a, b: a <= b),
        ("gt", lambda a, b: a > b),
        ("ge", lambda a, b: a >= b),
    ],
)
def test_vcmp_then_vsel(predicate, fn):
    a = rng.integers(-2, 3, (4, 8)).astype(np.float32)  # small ints: equality happens
    b = rng.integers(-2, 3, (1, 8)).astype(np.float32)
    cmp = CmpOp(operands=[buf((4, 8)), buf((1, 8)), buf((4, 8), dtype=i1)],
                properties={"predicate": StringAttr(predicate)})  # fmt: skip
    mask = np.zeros((4, 8), np.bool_)
    run(cmp, a, b, mask)
    np.testing.assert_array_equal(mask, fn(a, b))
    assert mask.any() and not mask.all()
    sel = SelectOp(operands=[buf((4, 8), dtype=i1), buf((4, 8)), buf((1, 8)), buf((4, 8))])
    out = nan_filled((4, 8))
    run(sel, mask, a, b, out)
    for r, c in product(range(4), range(8)):
        assert out[r, c] == (a[r, c] if mask[r, c] else b[0, c])


def test_vcast_float_to_half_and_back():
    x = np.array([[1 / 3, -2.5, 65504.0, 1e-8]], np.float32)
    half = np.zeros((1, 4), np.float16)
    run(CastOp(operands=[buf((1, 4)), buf((1, 4), dtype=f16)]), x, half)
    np.testing.assert_array_equal(half, np.array([[1 / 3, -2.5, 65504.0, 1e-8]], np.float16))
    back = np.zeros((1, 4), np.float32)
    run(CastOp(operands=[buf((1, 4), dtype=f16), buf((1, 4))]), half, back)
    np.testing.assert_array_equal(back, half.astype(np.float32))


def test_vcast_broadcasts():
    x = np.array([[1.0, 2.0]], np.float32)
    out = np.zeros((3, 2), np.float16)
    run(CastOp(operands=[buf((1, 2)), buf((3, 2), dtype=f16)]), x, out)
    np.testing.assert_array_equal(out, np.float16([[1, 2]] * 3))


def test_vcast_float_to_int_rounds_to_nearest():
    x = np.array([2.7, -2.7, 0.4, 1.6, -0.6], np.float32)
    out = np.zeros(5, np.int32)
    run(CastOp(operands=[buf((5,)), buf((5,), dtype=i32)]), x, out)
    np.testing.assert_array_equal(out, [3, -3, 0, 2, -1])


def test_vdup_fills():
    out = nan_filled((3, 5))
    run(DupOp(buf((3, 5)), 0.5), out)
    assert (out == 0.5).all()
    mask = np.zeros(4, np.bool_)
    run(DupOp(buf((4,), dtype=i1), 1.0), mask)
    assert mask.all()


@pytest.mark.parametrize(("src_shape", "dst_shape"), [((1, 8), (4, 8)), ((4, 1), (4, 8)),
                                                      ((8,), (2, 3, 8)), ((1, 1), (2, 2))])  # fmt: skip
def test_vbrc_repeats_along_size_one_dims(src_shape, dst_shape):
    x = _inputs(src_shape, "any")
    out = nan_filled(dst_shape)
    run(BroadcastOp(operands=[buf(src_shape), buf(dst_shape)]), x, out)
    for pos in product(*(range(d) for d in dst_shape)):
        src_pos = tuple(
            0 if s == 1 else p
            for s, p in zip(src_shape, pos[len(pos) - len(src_shape) :], strict=True)
        )
        assert out[pos] == x[src_pos]


REDUCE_REF = {"sum": np.add, "max": max, "min": min, "prod": np.multiply}


@pytest.mark.parametrize("kind", sorted(REDUCE_REF))
@pytest.mark.parametrize("axes", [(0,), (1,), (0, 2), (0, 1, 2)])
def test_vreduce_keeps_reduced_dims(kind, axes):
    x = rng.uniform(0.5, 1.5, (2, 3, 4)).astype(np.float32)
    shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    op = ReduceOp(operands=[buf(x.shape), buf(shape)],
                  properties={"kind": StringAttr(kind), "axes": ints(axes)})  # fmt: skip
    out = nan_filled(shape)
    run(op, x, out)
    want = np.zeros(shape)
    for pos in product(*(range(d) for d in shape)):
        acc = None
        for full in product(*(range(d) if i in axes else [pos[i]] for i, d in enumerate(x.shape))):
            v = float(x[full])
            acc = v if acc is None else REDUCE_REF[kind](acc, v)
        want[pos] = acc
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_vreduce_may_drop_reduced_dims():
    x = rng.standard_normal((3, 4)).astype(np.float32)
    op = ReduceOp(operands=[buf((3, 4)), buf((4,))],
                  properties={"kind": StringAttr("max"), "axes": ints([0])})  # fmt: skip
    out = nan_filled((4,))
    run(op, x, out)
    np.testing.assert_array_equal(out, [max(x[:, j]) for j in range(4)])


def _row_reduce(kind: str, rows: int, extent: int) -> ReduceOp:
    return ReduceOp(operands=[buf((rows, extent)), buf((rows,))],
                    properties={"kind": StringAttr(kind), "axes": ints([1])})  # fmt: skip


def test_a_short_row_sum_costs_pair_passes_not_a_cross_lane_repeat_per_row():
    """[1024, 2] fp32 summed over its rows: one PairReduceSum pass of 32 repeats (7 cycles
    each), not 1024 cross-lane repeats; a max has no pair form, a long row keeps the
    cross-lane repeat (cheaper there), and an extent that is no power of two too."""
    pairs = cost_of(_row_reduce("sum", 1024, 2), HW)
    assert pairs == 32 * HW.vector_cross_lane_cycles
    assert cost_of(_row_reduce("max", 1024, 2), HW) > 1024 * HW.vector_cross_lane_cycles
    assert cost_of(_row_reduce("sum", 8, 512), HW) == 64 + 8 * HW.vector_cross_lane_cycles
    assert cost_of(_row_reduce("sum", 1024, 3), HW) > 1024 * HW.vector_cross_lane_cycles


def test_vtranspose():
    x = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
    perm = (0, 2, 3, 1)
    op = TransposeOp(operands=[buf(x.shape), buf((1, 3, 4, 2))], properties={"perm": ints(perm)})
    out = nan_filled((1, 3, 4, 2))
    run(op, x, out)
    for pos in product(*(range(d) for d in out.shape)):
        src = [0] * 4
        for i, p in enumerate(perm):  # dst dim i is src dim perm[i]
            src[p] = pos[i]
        assert out[pos] == x[tuple(src)]


def _pool_op(kind, src_shape, dst_shape, h, w):
    return PoolOp(buf(src_shape), idx()[0], buf(dst_shape), kind=kind, kernel_shape=(3, 3),
                  strides=(2, 2), dilations=(1, 1), pads=(1, 1, 1, 1), height=h, width=w)  # fmt: skip


@pytest.mark.parametrize("kind", ["max", "avg", "avg_include_pad"])
def test_vpool_against_direct_windows(kind):
    h = w = 5  # 3x3, stride 2, pad 1 -> 3x3 outputs
    x = rng.standard_normal((1, 2, h, w)).astype(np.float32)
    fill = -np.inf if kind == "max" else 0.0
    padded = np.full((1, 2, h + 2, w + 2), fill, np.float32)
    padded[:, :, 1 : 1 + h, 1 : 1 + w] = x
    want = np.zeros((1, 2, 3, 3))
    for c, r, s in product(range(2), range(3), range(3)):
        taps = [(2 * r + i - 1, 2 * s + j - 1) for i in range(3) for j in range(3)]
        inside = [x[0, c, y, z] for y, z in taps if 0 <= y < h and 0 <= z < w]
        if kind == "max":
            want[0, c, r, s] = max(inside)
        elif kind == "avg":
            want[0, c, r, s] = sum(inside) / len(inside)
        else:
            want[0, c, r, s] = sum(inside) / 9  # every tap is inside the padded image
    out = nan_filled((1, 2, 3, 3))
    run(_pool_op(kind, padded.shape, out.shape, h, w), padded, 0, out)
    np.testing.assert_allclose(out, want, rtol=1e-5)
    # Output rows 1..2 from the padded rows that start at 1 * stride: row0 = 1.
    part = nan_filled((1, 2, 2, 3))
    run(_pool_op(kind, (1, 2, 5, 7), part.shape, h, w), padded[:, :, 2:], 1, part)
    np.testing.assert_allclose(part, want[:, :, 1:], rtol=1e-5)


# --------------------------------------------------------------------------------------
# Host ops
# --------------------------------------------------------------------------------------


def test_alloc_constant_read_write():
    (z,) = run(AllocOp(scoped_memref([2, 3], f16, "UB")))
    assert z.shape == (2, 3) and z.dtype == np.float16 and not z.any()
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    (c,) = run(ConstantOp(DenseAttr.from_array(data), scoped_memref([2, 3], f32, "GM")))
    np.testing.assert_array_equal(c, data)
    tensor = TensorType([2, 3], f32)
    (t,) = run(ReadOp(buf((2, 3), "GM"), tensor), data)
    np.testing.assert_array_equal(t, data)
    out = np.zeros((2, 3), np.float32)
    assert run(WriteOp(create_ssa_value(tensor), buf((2, 3), "GM")), data + 1, out) == ()
    np.testing.assert_array_equal(out, data + 1)


def test_alloc_capacity_follows_the_platform():
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Block, Region

    fits_910b = AllocOp(scoped_memref([64, 64], f32, "UB"))  # 16 KiB
    fits_910b.verify()
    module = ModuleOp(Region(Block([fits_910b])))
    pin_target(module, "the test", "test")
    with pytest.raises(VerifyException, match="UB holds 8192 B on test"):
        fits_910b.verify()
    with pytest.raises(VerifyException, match="holds 196608 B on ascend910b"):
        AllocOp(scoped_memref([192 * 256 + 1], f32, "UB")).verify()
    AllocOp(scoped_memref([192 * 256], f32, "UB")).verify()  # exactly full is fine
    AllocOp(scoped_memref([1 << 20, 64], f32, "GM")).verify()  # GM is unbounded


def test_scoped_memref_rejects_unknown_scopes():
    with pytest.raises(ValueError, match="unknown memory scope"):
        scoped_memref([4], f32, "L2")


# --------------------------------------------------------------------------------------
# Pipes and costs of every op class
# --------------------------------------------------------------------------------------


def _build(cls) -> Any:
    """A verifying instance of ``cls`` (one per class in TILE_OPS)."""
    t = buf((4, 16))
    if cls in UNARY_OPS.values():
        return cls(t, buf((4, 16)))
    if cls in BINARY_OPS.values():
        return cls(t, buf((1, 16)), buf((4, 16)))
    if cls in SCALAR_OPS.values():
        return cls(t, 2.0, buf((4, 16)))
    g = buf((64, 64), "GM")
    builders: dict[str, Callable[[], Any]] = {
        "tile.alloc": lambda: AllocOp(scoped_memref([4, 16], f32, "UB")),
        "tile.constant": lambda: ConstantOp(
            DenseAttr.from_array(np.ones((2, 2), np.float32)), scoped_memref([2, 2], f32, "GM")
        ),
        "tile.launch": lambda: LaunchOp("kernel", [g, buf((64, 64), "GM")]),
        "tile.loop_launches": lambda: LoopLaunchesOp(
            2, [[], [], [], [], [], [], [g]], Block(arg_types=[g.type])
        ),
        "tile.read": lambda: ReadOp(g, TensorType([64, 64], f32)),
        "tile.write": lambda: WriteOp(create_ssa_value(TensorType([64, 64], f32)), g),
        "tile.copy": lambda: CopyOp(g, idx(2), t, idx(2)),
        "tile.nd2nz": lambda: Nd2NzOp(g, idx(2), buf((2, 2, 16, 8), "L1")),
        "tile.nz2nd": lambda: Nz2NdOp(buf((2, 2, 16, 8), "UB"), g, idx(2)),
        "tile.load_5hd": lambda: Load5hdOp(
            buf((1, 3, 8, 8), "GM"), idx(4), buf((1, 1, 8, 8, 16), "L1")
        ),
        "tile.load2d": lambda: Load2dOp(
            buf((2, 2, 16, 8), "L1"), *idx(2), buf((2, 2, 16, 8), "L0A"), mode="swap"
        ),
        "tile.load3d": lambda: Load3dOp(
            buf((1, 1, 8, 8, 16), "L1"),
            idx()[0],
            buf((4, 9, 16, 16), "L0A"),
            kernel_shape=(3, 3),
            strides=(1, 1),
            dilations=(1, 1),
            pad_left=1,
            out_width=8,
            channels=3,
        ),  # fmt: skip
        "tile.fixpipe": lambda: FixpipeOp(
            buf((1, 1, 16, 16), "L0C"), g, idx(2), buf((16,), "L1"), layout="nd", relu=True
        ),
        "tile.mmad": lambda: MmadOp(
            buf((1, 2, 16, 8), "L0A"),
            buf((2, 1, 16, 8), "L0B"),
            buf((1, 1, 16, 16), "L0C"),
            flag(),
        ),  # fmt: skip
        "tile.vcmp": lambda: CmpOp(
            operands=[t, buf((4, 16)), buf((4, 16), dtype=i1)],
            properties={"predicate": StringAttr("lt")},
        ),
        "tile.vsel": lambda: SelectOp(
            operands=[buf((4, 16), dtype=i1), t, buf((4, 16)), buf((4, 16))]
        ),
        "tile.vcast": lambda: CastOp(operands=[t, buf((4, 16), dtype=f16)]),
        "tile.vdup": lambda: DupOp(t, 1.0),
        "tile.vbrc": lambda: BroadcastOp(operands=[buf((1, 16)), t]),
        "tile.vreduce": lambda: ReduceOp(
            operands=[t, buf((1, 16))],
            properties={"kind": StringAttr("sum"), "axes": ints([0])},
        ),
        "tile.vtranspose": lambda: TransposeOp(
            operands=[t, buf((16, 4))], properties={"perm": ints([1, 0])}
        ),
        "tile.vstride": lambda: StrideOp(t, buf((2, 16)), [2, -1]),
        "tile.vpick": lambda: PickOp(t, buf((2, 4)), [[3, 0], [0, 0, 1, 1]]),
        "tile.vpool": lambda: _pool_op("max", (1, 2, 7, 7), (1, 2, 3, 3), 5, 5),
        "tile.vscan": lambda: ScanOp(t, buf((4, 16)), "sum", 1, False, True),
        "tile.varg": lambda: ArgOp(t, buf((4, 1), dtype=i64), "max", 1, False),
        "tile.vtopk": lambda: TopKOp(t, buf((4, 3), dtype=i64), 1, True),
        "tile.vtake": lambda: TakeOp(t, buf((4, 3), dtype=i64), buf((4, 3)), 1),
        "tile.vput": lambda: PutOp(buf((4, 3)), buf((4, 3), dtype=i64), t, 1),
        "tile.vonehot": lambda: OneHotOp(buf((4,), dtype=i64), idx()[0], t, 1, 16, 1.0, 0.0),
        "tile.vtaps": lambda: TapsOp(t, buf((8, 16)), 0, [[0, 1]] * 8, [[0.5, 0.5]] * 8),
        "tile.varange": lambda: ArangeOp(idx()[0], buf((64,)), 0.0, 1.0),
        "tile.copy_flat": lambda: CopyFlatOp(g, idx()[0], t, idx()[0], 64),
        "tile.get_value": lambda: GetValueOp(buf((4, 8), dtype=i64), idx(2), 30522),
        "tile.gather_rows": lambda: GatherRowsOp(
            buf((8, 3)), idx()[0], buf((4, 3), dtype=i64), buf((4, 3)), 100
        ),
        "tile.scatter_rows": lambda: ScatterRowsOp(
            buf((4, 1)), buf((4, 2), dtype=i64), buf((8, 1)), idx()[0], (4, 6), "add"
        ),
        "tile.store_5hd": lambda: Store5hdOp(
            buf((1, 1, 8, 8, 16)), buf((1, 3, 8, 8), "GM"), idx(4)
        ),
        "tile.set_flag": lambda: SetFlagOp("MTE2", "MTE1", 0),
        "tile.wait_flag": lambda: WaitFlagOp("MTE2", "MTE1", 7),
        "tile.pipe_barrier": lambda: PipeBarrierOp("V"),
        "tile.sync_block_set": lambda: SyncBlockSetOp(0, "aic_to_aiv", "FIX", idx()[0]),
        "tile.sync_block_wait": lambda: SyncBlockWaitOp(2, "aiv_to_aic", "FIX"),
        "tile.sync_all": lambda: _in_kernel(SyncAllOp()),
        "tile.block_idx": BlockIdxOp,
        "tile.block_num": BlockNumOp,
        "tile.sub_block_idx": SubBlockIdxOp,
        "tile.view": lambda: ViewOp(buf((512,), "GM", i8), 64, scoped_memref([4, 16], f32, "GM")),
        "tile.strided_view": lambda: StridedViewOp(
            buf((1, 8, 64), "GM"),
            strided_memref(scoped_memref([1, 8, 64], f32, "GM"), (1, 4, 8, 16), (512, 16, 64, 1)),
        ),
        "tile.reshape_view": lambda: ReshapeViewOp(
            buf((1, 8, 64), "GM"), scoped_memref([8, 64], f32, "GM")
        ),
        "tile.slice_view": lambda: SliceViewOp(
            buf((1, 8, 64), "GM"), 128, scoped_memref([2, 64], f32, "GM")
        ),
    }
    return builders[cls.name]()


def _in_kernel(op: Operation) -> Operation:
    """``op`` in a kernel function (where an all-core barrier is legal)."""
    fn = func.FuncOp("kernel", ((), ()))
    fn.attributes["tile.kernel"] = StringAttr("vector")
    fn.body.block.add_ops([op, func.ReturnOp()])
    return op


def test_get_value_reads_an_element_as_an_index_wrapping_negatives():
    data = np.array([[3, -1], [-4, 2]], np.int64)
    op = GetValueOp(buf((2, 2), dtype=i64), idx(2), 4)
    assert [run(op, data, i, j)[0] for i in range(2) for j in range(2)] == [3, 3, 0, 2]
    assert run(GetValueOp(buf((2, 2), dtype=i64), idx(2)), data, 0, 1) == (-1,)
    with pytest.raises(IndexError, match="-4 is out of range for an axis of size 3"):
        run(GetValueOp(buf((2, 2), dtype=i64), idx(2), 3), data, 1, 0)


def test_copy_flat_partial_keeps_the_rest_of_the_destination():
    src = np.arange(8, dtype=np.float32)
    dst = np.full((2, 4), -1.0, np.float32)
    run(CopyFlatOp(buf((8,), "GM"), idx()[0], buf((2, 4)), idx()[0], 3, partial=True),
        src, 5, dst, 4)  # fmt: skip
    assert dst.tolist() == [[-1, -1, -1, -1], [5, 6, 7, -1]]


@pytest.mark.parametrize("cls", TILE_OPS, ids=lambda c: c.name)
def test_every_op_has_a_pipe_and_a_positive_cost(cls):
    op = _build(cls)
    assert type(op) is cls
    op.verify()
    assert op.pipe() in {"MTE1", "MTE2", "MTE3", "M", "V", "FIX", "S"}
    cost = cost_of(op, HW)
    assert isinstance(cost, int) and cost > 0


@pytest.mark.parametrize(
    ("name", "pipe"),
    [("tile.alloc", "S"), ("tile.nd2nz", "MTE2"), ("tile.load_5hd", "MTE2"),
     ("tile.load2d", "MTE1"), ("tile.load3d", "MTE1"), ("tile.fixpipe", "FIX"),
     ("tile.mmad", "M"), ("tile.vexp", "V"), ("tile.vadd", "V"), ("tile.vadds", "V"),
     ("tile.vcmp", "V"), ("tile.vreduce", "V"), ("tile.vtranspose", "V")],
)  # fmt: skip
def test_pipes_of_op_families(name, pipe):
    (cls,) = [c for c in TILE_OPS if c.name == name]
    assert _build(cls).pipe() == pipe


def test_vector_cost_grows_with_size_and_transcendentals_cost_more():
    small = UNARY_OPS["vabs"](buf((4, 16)), buf((4, 16)))
    large = UNARY_OPS["vabs"](buf((64, 64)), buf((64, 64)))
    slow = UNARY_OPS["vexp"](buf((64, 64)), buf((64, 64)))
    assert cost_of(small, HW) < cost_of(large, HW) < cost_of(slow, HW)


# --------------------------------------------------------------------------------------
# Verifier checks that review found missing (fixed; kept as regression tests)
# --------------------------------------------------------------------------------------


def test_alloc_in_unknown_scope_is_a_verify_error():
    memref = MemRefType(f32, [4], NoneAttr(), StringAttr("XYZ"))
    with pytest.raises(VerifyException):
        AllocOp(memref).verify()


@pytest.mark.parametrize("axes", [[2], [0, 0]], ids=["out_of_range", "duplicate"])
def test_vreduce_rejects_bad_axes(axes):
    shape = (2, 3) if axes == [2] else (1, 3)
    op = ReduceOp(operands=[buf((2, 3)), buf(shape)],
                  properties={"kind": StringAttr("sum"), "axes": ints(axes)})  # fmt: skip
    with pytest.raises(VerifyException):
        op.verify()


def test_mmad_rejects_non_16_fractals():
    op = MmadOp(buf((1, 1, 8, 8), "L0A"), buf((1, 1, 16, 8), "L0B"),
                buf((1, 1, 16, 16), "L0C"), flag())  # fmt: skip
    with pytest.raises(VerifyException):
        op.verify()


def test_load2d_rejects_mismatched_fractals():
    op = Load2dOp(buf((2, 2, 16, 8), "L1"), *idx(2), buf((2, 2, 16, 16), "L0A"), mode="copy")
    with pytest.raises(VerifyException):
        op.verify()


@pytest.mark.parametrize(
    ("dst_shape", "layout", "rows"),
    [((1, 1, 4, 8, 16), "nc1hwc0", 4), ((32, 32), "nz", None), ((32,), "nd", None)],
    ids=["nc1hwc0_more_pixels_than_m", "nz_into_2d", "nd_into_1d"],
)
def test_fixpipe_rejects_a_destination_that_does_not_fit_the_layout(dst_shape, layout, rows):
    op = FixpipeOp(buf((1, 1, 16, 16), "L0C"), buf(dst_shape, "GM"), idx(len(dst_shape)),
                   layout=layout, rows=rows)  # fmt: skip
    with pytest.raises(VerifyException):
        op.verify()


def test_fixpipe_rejects_a_short_bias():
    op = FixpipeOp(buf((2, 1, 16, 16), "L0C"), buf((16, 32), "GM"), idx(2), buf((16,), "L1"),
                   layout="nd")  # fmt: skip
    with pytest.raises(VerifyException):
        op.verify()


def test_load3d_rejects_mismatched_c0():
    op = Load3dOp(buf((1, 1, 8, 8, 8), "L1"), idx()[0], buf((4, 9, 16, 16), "L0A"),
                  kernel_shape=(3, 3), strides=(1, 1), dilations=(1, 1), pad_left=1,
                  out_width=8, channels=3)  # fmt: skip
    with pytest.raises(VerifyException):
        op.verify()


def test_constant_rejects_mismatched_element_type():
    op = ConstantOp(DenseAttr.from_array(np.ones(2, np.float32)), scoped_memref([2], f16, "GM"))
    with pytest.raises(VerifyException):
        op.verify()


def test_vcmp_rejects_a_non_i1_mask():
    op = CmpOp(operands=[buf((4,)), buf((4,)), buf((4,))],
               properties={"predicate": StringAttr("lt")})  # fmt: skip
    with pytest.raises(VerifyException):
        op.verify()


def test_launch_rejects_on_chip_arguments():
    op = LaunchOp("kernel", [buf((4,), "UB")])
    with pytest.raises(VerifyException):
        op.verify()


def test_bool_attr_relu_false_means_no_relu():
    # relu = false written explicitly in the IR must not apply ReLU.
    op = FixpipeOp(buf((2, 2, 16, 16), "L0C"), buf((32, 32), "GM"), idx(2), layout="nd")
    op.properties["relu"] = BoolAttr.from_bool(False)
    out = np.zeros((32, 32), np.float32)
    run(op, to_nz(ACC), out, 0, 0)
    np.testing.assert_array_equal(out, ACC)


def test_rows_property_is_an_integer_attr():
    op = FixpipeOp(buf((1, 1, 16, 16), "L0C"), buf((1, 1, 2, 8, 16), "GM"), idx(5),
                   layout="nc1hwc0", rows=2)  # fmt: skip
    assert isinstance(op.rows, IntegerAttr) and op.rows.value.data == 2


@pytest.mark.parametrize(
    ("steps", "src_shape", "dst_shape", "index"),
    [
        ((1, 2), (3, 9), (3, 5), np.s_[:, ::2]),
        ((1, -3), (2, 10), (2, 4), np.s_[:, ::-3]),
        ((-1, 1), (4, 5), (4, 5), np.s_[::-1, :]),
        ((0, 1), (1, 6), (3, 6), np.s_[[0, 0, 0], :]),
    ],
)
def test_vstride_picks_by_steps(steps, src_shape, dst_shape, index):
    """dst[i] = src[base + i * step]: from the start for a step >= 0, from the end for a
    negative one; step 0 broadcasts."""
    op = StrideOp(buf(src_shape), buf(dst_shape), steps)
    op.verify()
    src = np.arange(math.prod(src_shape), dtype=np.float32).reshape(src_shape)
    dst = np.zeros(dst_shape, np.float32)
    kernel_of(op)(src, dst)
    np.testing.assert_array_equal(dst, src[index])
    assert op.pipe() == "V" and cost_of(op, hardware_preset()) > 0


def test_vpick_gathers_by_a_table_per_dim():
    """dst[i, j] = src[rows[i], cols[j]]: repeated, reordered and skipped positions."""
    rows, cols = [2, 2, 0], [0, 0, 1, 1, 3]
    op = PickOp(buf((3, 4)), buf((3, 5)), [rows, cols])
    op.verify()
    assert op.tables() == [tuple(rows), tuple(cols)]
    src = np.arange(12, dtype=np.float32).reshape(3, 4)
    dst = np.zeros((3, 5), np.float32)
    kernel_of(op)(src, dst)
    np.testing.assert_array_equal(dst, src[np.ix_(rows, cols)])
    assert op.pipe() == "V"
    # the offset table adds 4 bytes per element to the repeats of a plain vector op
    assert cost_of(op, hardware_preset()) >= cost_of(
        StrideOp(buf((3, 4)), buf((3, 5)), [0, 0]), hardware_preset()
    )


# --------------------------------------------------------------------------------------
# Ops along an axis (vector_axis.py): semantics, verifiers, costs
# --------------------------------------------------------------------------------------


def _run(op: Any, *arrays: Any) -> None:
    op.verify()
    kernel_of(op)(*arrays)


def test_vscan_runs_exclusive_and_reverse_sums():
    src = np.arange(1, 5, dtype=np.float32).reshape(1, 4)
    dst = np.zeros_like(src)
    _run(ScanOp(buf((1, 4)), buf((1, 4)), "sum", 1, True, True), src, dst)
    assert dst.tolist() == [[9, 7, 4, 0]]
    _run(ScanOp(buf((1, 4)), buf((1, 4)), "prod", 1, False, False), src, dst)
    assert dst.tolist() == [[1, 2, 6, 24]]


def test_varg_picks_the_first_or_last_extreme():
    src = np.array([[1, 3, 3, 0]], np.float32)
    dst = np.zeros((1,), np.int64)
    _run(ArgOp(buf((1, 4)), buf((1,), dtype=i64), "max", 1, False), src, dst)
    assert dst.tolist() == [1]
    _run(ArgOp(buf((1, 4)), buf((1,), dtype=i64), "max", 1, True), src, dst)
    assert dst.tolist() == [2]


def test_vtopk_and_vtake_give_the_k_largest_in_order_ties_by_position():
    src = np.array([[2, 5, 5, 1, 7]], np.float32)
    indices = np.zeros((1, 3), np.int64)
    values = np.zeros((1, 3), np.float32)
    _run(TopKOp(buf((1, 5)), buf((1, 3), dtype=i64), 1, True), src, indices)
    assert indices.tolist() == [[4, 1, 2]]
    _run(TakeOp(buf((1, 5)), buf((1, 3), dtype=i64), buf((1, 3)), 1), src, indices, values)
    assert values.tolist() == [[7, 5, 5]]


def test_vput_writes_by_position_and_keeps_the_rest():
    dst = np.array([[1, 2, 3, 4, 5]], np.float32)
    src = np.array([[70, 90]], np.float32)
    _run(PutOp(buf((1, 2)), buf((1, 2), dtype=i64), buf((1, 5)), 1), src, np.array([[4, -4]]), dst)
    assert dst.tolist() == [[1, 90, 3, 4, 70]]  # -4 counts from the end
    with pytest.raises(VerifyException, match="indices and source must be"):
        PutOp(buf((1, 2)), buf((1, 3), dtype=i64), buf((1, 5)), 1).verify()


def test_vonehot_counts_positions_from_the_offset():
    idx_tile = np.array([3, -1, 9], np.int64)  # -1 is depth - 1 = 5; 9 is out of range
    dst = np.zeros((3, 3), np.float32)
    _run(OneHotOp(buf((3,), dtype=i64), idx()[0], buf((3, 3)), 1, 6, 1.0, -1.0), idx_tile, 3, dst)
    assert dst.tolist() == [[1, -1, -1], [-1, -1, 1], [-1, -1, -1]]


def test_varange_counts_from_the_tile_offset():
    ints = np.zeros(4, np.int64)
    _run(ArangeOp(idx()[0], buf((4,), dtype=i64), 7.0, -3.0), 5, ints)
    assert ints.tolist() == [7 - 3 * p for p in range(5, 9)]
    # a 16-bit float sequence is computed in float32 and rounded once (float16's spacing
    # is 2 at 2049: computed in float16 every value would be 2048)
    halves = np.zeros(3, np.float16)
    _run(ArangeOp(idx()[0], buf((3,), dtype=f16), 2049.0, 0.5), 2, halves)
    expected = np.float32(2049.0) + np.arange(2, 5, dtype=np.float32) * np.float32(0.5)
    assert halves.tolist() == expected.astype(np.float16).tolist()
    # Duplicate, Mul and Add over the tile: three passes, twice the bytes twice the cost
    assert cost_of(ArangeOp(idx()[0], buf((4096,)), 0, 1), HW) == 2 * cost_of(
        ArangeOp(idx()[0], buf((2048,)), 0, 1), HW
    )


def test_vtaps_weighs_positions_along_its_axis():
    src = np.array([[0, 10, 20]], np.float32)
    dst = np.zeros((1, 2), np.float32)
    op = TapsOp(buf((1, 3)), buf((1, 2)), 1, [[0, 1], [1, 2]], [[0.75, 0.25], [0.5, 0.5]])
    _run(op, src, dst)
    assert dst.tolist() == [[2.5, 15]]
    # along the innermost axis each tap also gathers: dearer than along rows
    rows = TapsOp(buf((3, 1)), buf((2, 1)), 0, [[0, 1], [1, 2]], [[0.75, 0.25], [0.5, 0.5]])
    assert cost_of(op, HW) > cost_of(rows, HW) > 0


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: ScanOp(buf((2, 4)), buf((2, 5)), "sum", 1, False, False), "!= result"),
        (lambda: ScanOp(buf((2, 4)), buf((2, 4)), "max", 1, False, False), "kind"),
        (lambda: ArgOp(buf((2, 4)), buf((2, 2), dtype=i64), "max", 1, False), "gives"),
        (lambda: TopKOp(buf((2, 4)), buf((2, 5), dtype=i64), 1, True), "k = 5"),
        (lambda: TakeOp(buf((2, 4)), buf((2, 3), dtype=i64), buf((2, 2)), 1), "indices"),
        (lambda: OneHotOp(buf((3,), dtype=i64), idx()[0], buf((4, 3)), 1, 3, 1, 0), "without"),
        (
            lambda: TapsOp(buf((1, 3)), buf((1, 2)), 1, [[0, 3], [1, 2]], [[1, 0], [1, 0]]),
            "outside",
        ),
        (lambda: TapsOp(buf((1, 3)), buf((1, 2)), 2, [[0], [1]], [[1], [1]]), "axis 2"),
        (lambda: ArangeOp(idx()[0], buf((2, 4)), 0, 1), "1-D"),
    ],
)
def test_axis_op_verifiers(make, message):
    with pytest.raises(VerifyException, match=message):
        make().verify()
