"""The ragged last M / N block of the matmul kernels (``tile.mmad``'s ``m`` / ``n``).

When the base blocks do not cover M's (or N's) fractals exactly, the last block's ``mmad``
multiplies only the fractals that remain (Ascend C's ``MmadParams`` m / n), its GM -> L1
window moves only the valid rows / columns (``nd2nz`` rows / cols) and its fixpipe writes
only the valid m x n (``FixpipeParams``). Every level
must still agree (fp32, fp16, int8), NaN in an operand's padding must not leak, and the
``mmad`` kernel must leave the accumulator's fractals past ``m`` / ``n`` as they were.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import IndexType, f32, i1
from xdsl.ir import SSAValue
from xdsl.utils.test_value import create_ssa_value

from tests.lowering.test_int8_matmul_kernels import _levels, quant_matmul
from tests.lowering.test_tile_differential import (
    NAN,
    Graph,
    assert_matches,
    assert_no_nan,
    run_levels,
)
from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import FixpipeOp, Load2dOp, MmadOp, Nd2NzOp
from tilegraph.dialects.tile.base import scoped_memref
from tilegraph.lowering.conversion.tiling import matmul_block
from tilegraph.runtime.fast_executor.forms import batched_kernel_of
from tilegraph.runtime.tile_interpreter.kernels import kernel_of

TOL = {"float32": (1e-4, 1e-4), "float16": (2e-2, 2e-2)}


def _mmads(levels) -> list[MmadOp]:
    return [op for op in levels.module.walk() if isinstance(op, MmadOp)]


def _matmul(a_shape: list[int], b_shape: list[int], dtype: str, nz_a: bool = False):
    g = Graph(dtype=dtype)
    if nz_a:  # A held as FRACTAL_NZ: its padding rows / columns can hold NaN
        t = TensorType(a_shape, element_type_of(dtype), "ND", "FRACTAL_NZ")
        a = g.b.block.insert_arg(t, len(g.b.block.args))
        g.arrays.append(g.rng.standard_normal(a_shape).astype(dtype))
    else:
        a = g.input(a_shape)
    return g.b.build(g.op("matmul", a, g.const(b_shape))), g.arrays


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize(
    ("a_shape", "b_shape", "block", "ragged"),
    [
        ([80, 36], [36, 72], None, "m"),  # 5 M fractals in blocks of 2
        ([19, 40], [40, 75], None, "n"),  # 5 N fractals in blocks of 2
        ([2, 40, 20], [20, 40], (2, 2, 1), "mn"),  # 3 and 3 in blocks of 2, batched
        ([20, 40], [40, 24], (2, 2, 2), "k"),  # K: 3 fractals in steps of 2
        ([40, 72], [72, 40], (2, 2, 2), "mnk"),  # 3, 3 and 5 of 2 (K 72: a part fractal)
    ],
)
def test_ragged_blocks_agree(a_shape, b_shape, block, ragged: str, dtype: str, monkeypatch):
    """Blocks of the test preset's choice, or ``block`` (m1, n1, k1 fractals) as the
    default of the tiling parameters."""
    if block is not None:
        monkeypatch.setattr(matmul_block, "_heuristic_block", lambda *args: block)
    module, inputs = _matmul(a_shape, b_shape, dtype)
    levels = run_levels(module, inputs, "test")
    rtol, atol = TOL[dtype]
    assert_matches(levels, rtol=rtol, atol=atol)
    mmads = _mmads(levels)
    assert mmads, "the matmul should run on the cube"
    assert all((op.m is not None) == ("m" in ragged) for op in mmads)
    assert all((op.n is not None) == ("n" in ragged) for op in mmads)
    if "k" in ragged:  # (the preset's own K step may be ragged too: it depends on dtype)
        assert all(op.k is not None for op in mmads)


def test_ragged_int8_blocks_agree(monkeypatch):
    """The int8 cube (K0 = 32, int32 accumulator, fixpipe's deq): 37 x 70 by 45 x 70 (rows
    of K) in blocks of 2 x 2 fractals, both M's and N's last block ragged."""
    monkeypatch.setattr(matmul_block, "_heuristic_block", lambda *args: (2, 2, 1))
    levels = _levels(quant_matmul("2d", "relu"))
    assert_matches(levels, rtol=0, atol=0)
    mmads = _mmads(levels)
    assert mmads and all(op.m is not None and op.n is not None for op in mmads)


def test_ragged_blocks_nan_padding(monkeypatch):
    """A (37 rows) held as FRACTAL_NZ with NaN in its padding rows, in blocks of 2 x 2
    fractals: the ragged blocks leak none. (K is whole fractals: NaN in an NZ operand's K
    padding reaches the valid outputs on main already, ragged blocks or not.)"""
    monkeypatch.setattr(matmul_block, "_heuristic_block", lambda *args: (2, 2, 1))
    module, inputs = _matmul([37, 32], [32, 40], "float32", nz_a=True)
    levels = run_levels(module, inputs, "test", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    mmads = _mmads(levels)
    assert mmads and all(op.m is not None and op.n is not None for op in mmads)


def _value(type_) -> SSAValue:
    return create_ssa_value(type_)


def test_ragged_mmad_kernel_multiplies_the_valid_fractals_only():
    """m = 20 rows (2 fractals of 3), n = 16 columns (1 of 2): those fractals of C are the
    product, the others keep what they held (NaN here)."""
    m1, k1, n1 = 3, 2, 2
    a_t = scoped_memref([m1, k1, 16, 8], f32, "L0A")
    b_t = scoped_memref([k1, n1, 16, 8], f32, "L0B")
    c_t = scoped_memref([n1, m1, 16, 16], f32, "L0C")
    index = IndexType()
    op = MmadOp(_value(a_t), _value(b_t), _value(c_t), _value(i1), _value(index), _value(index))
    op.verify()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m1, k1, 16, 8)).astype(np.float32)
    b = rng.standard_normal((k1, n1, 16, 8)).astype(np.float32)
    c = np.full((n1, m1, 16, 16), np.nan, np.float32)
    kernel_of(op)(a, b, c, True, 20, 16)
    rows = a.transpose(0, 2, 1, 3).reshape(m1 * 16, k1 * 8)  # ZZ -> (M, K)
    cols = b.transpose(0, 3, 1, 2).reshape(k1 * 8, n1 * 16)  # ZN -> (K, N)
    product = (rows @ cols).reshape(m1 * 16, n1, 16).transpose(1, 0, 2)  # (N1, M, 16)
    c_rows = c.reshape(n1, m1 * 16, 16)
    np.testing.assert_allclose(c_rows[0, :32], product[0, :32], rtol=1e-5, atol=1e-5)
    assert np.isnan(c_rows[0, 32:]).all() and np.isnan(c_rows[1]).all()


def _ragged_load(scope: str) -> Load2dOp:
    """A ``swap`` load of a (K1 = 2, M1 = 3) L1 window into L0A (3, 2, 16, 16), or a
    ``copy`` of a (2, 3) window into L0B (2, 3, 16, 16), with ``valid``."""
    src = scoped_memref([2, 3, 16, 16], f32, "L1")
    dst = scoped_memref([3, 2, 16, 16] if scope == "L0A" else [2, 3, 16, 16], f32, scope)
    index = IndexType()
    mode = "swap" if scope == "L0A" else "copy"
    op = Load2dOp(_value(src), _value(index), _value(index), _value(dst), mode, _value(index))
    op.verify()
    return op


@pytest.mark.parametrize("scope", ["L0A", "L0B"])
def test_ragged_load2d_loads_the_valid_fractals_only(scope: str):
    """valid = 20 elements: 2 of the 3 M (L0A) / N (L0B) fractals are loaded, the third
    reads as zero — in the interpreter, and in the fast executor's batched form with one
    ``valid`` per tile (20, then 48: the whole)."""
    op = _ragged_load(scope)
    rng = np.random.default_rng(1)
    src = rng.standard_normal((2, 3, 16, 16)).astype(np.float32)
    whole = np.full((3, 2, 16, 16) if scope == "L0A" else (2, 3, 16, 16), np.nan, np.float32)
    kernel_of(op)(src, 0, 0, whole, 48)
    dst = np.full_like(whole, np.nan)
    kernel_of(op)(src, 0, 0, dst, 20)
    axis = op.ragged_axis
    kept = [slice(None)] * 4
    kept[axis] = slice(0, 2)
    past = [slice(None)] * 4
    past[axis] = slice(2, 3)
    np.testing.assert_array_equal(dst[tuple(kept)], whole[tuple(kept)])
    assert not dst[tuple(past)].any()
    batched = batched_kernel_of(op, [False, False, False, True, True])
    assert batched is not None
    tiles = np.full((2, *whole.shape), np.nan, np.float32)
    batched(src, 0, 0, tiles, np.array([20, 48]))
    np.testing.assert_array_equal(tiles[0], dst)
    np.testing.assert_array_equal(tiles[1], whole)


def _ragged_nd2nz() -> Nd2NzOp:
    """A (40 x 48) GM matrix's window into an L1 NZ (3, 3, 16, 16) with valid rows / cols."""
    src = scoped_memref([40, 48], f32, "GM")
    dst = scoped_memref([3, 3, 16, 16], f32, "L1")
    index = IndexType()
    offsets = [_value(index), _value(index)]
    op = Nd2NzOp(_value(src), offsets, _value(dst), _value(index), _value(index))
    op.verify()
    return op


def _nz_plane(nz: np.ndarray) -> np.ndarray:
    """An NZ (C1, R1, 16, C0) tile as its (R1·16, C1·C0) matrix."""
    c1, r1, r0, c0 = nz.shape[-4:]
    return nz.transpose(1, 2, 0, 3).reshape(r1 * r0, c1 * c0)


def test_ragged_nd2nz_moves_the_valid_rows_and_columns_only():
    """rows = 20, cols = 33 of a window at (16, 0): those elements come from GM, every
    other one reads as zero, though GM holds more rows and columns there — in the
    interpreter and in the fast executor's batched form with one extent per tile."""
    op = _ragged_nd2nz()
    rng = np.random.default_rng(2)
    src = rng.standard_normal((40, 48)).astype(np.float32)
    dst = np.full((3, 3, 16, 16), np.nan, np.float32)
    kernel_of(op)(src, 16, 0, dst, 20, 33)
    expected = np.zeros((48, 48), np.float32)
    expected[:20, :33] = src[16:36, :33]
    np.testing.assert_array_equal(_nz_plane(dst), expected)
    batched = batched_kernel_of(op, [False, False, False, True, True, True])
    assert batched is not None
    tiles = np.full((2, 3, 3, 16, 16), np.nan, np.float32)
    batched(src, 16, 0, tiles, np.array([20, 48]), np.array([33, 48]))
    np.testing.assert_array_equal(tiles[0], dst)
    whole = np.zeros((48, 48), np.float32)
    whole[:24] = src[16:40]  # a whole window cut at GM's last row
    np.testing.assert_array_equal(_nz_plane(tiles[1]), whole)


def _ragged_fixpipe(layout: str) -> FixpipeOp:
    """An L0C (N1 = 2, M1 = 3) accumulator out to a (64 x 64) GM matrix (``nd``) or to its
    NZ (4, 4, 16, 16) form (``nz``), with valid m / n."""
    src = scoped_memref([2, 3, 16, 16], f32, "L0C")
    dst = scoped_memref([64, 64] if layout == "nd" else [4, 4, 16, 16], f32, "GM")
    index = IndexType()
    op = FixpipeOp(
        _value(src),
        _value(dst),
        [_value(index), _value(index)] + [_value(index)] * 2 * (layout == "nz"),
        layout=layout,
        m=_value(index),
        n=_value(index),
    )
    op.verify()
    return op


def test_ragged_fixpipe_writes_the_valid_part_only():
    """m = 20, n = 17 of a 48 x 32 tile written at (16, 16) of a larger GM matrix: those
    elements are the accumulator's, every other element of GM (the tile's padding past
    m / n and the rest) keeps what it held — in the interpreter and in the batched form
    (a second tile, whole, at (0, 32))."""
    op = _ragged_fixpipe("nd")
    rng = np.random.default_rng(3)
    acc = rng.standard_normal((2, 3, 16, 16)).astype(np.float32)
    rows = acc.transpose(1, 2, 0, 3).reshape(48, 32)  # NZ (N1, M1, 16, 16) -> (M, N)
    gm = np.full((64, 64), np.nan, np.float32)
    kernel_of(op)(acc, gm, 16, 16, 20, 17)
    expected = np.full((64, 64), np.nan, np.float32)
    expected[16:36, 16:33] = rows[:20, :17]
    np.testing.assert_array_equal(gm, expected)
    batched = batched_kernel_of(op, [True, False, True, True, True, True])
    assert batched is not None
    gm = np.full((64, 64), np.nan, np.float32)
    at_rows, at_cols = np.array([16, 0]), np.array([0, 32])
    batched(np.stack([acc, acc]), gm, at_rows, at_cols, np.array([20, 48]), np.array([17, 32]))
    expected = np.full((64, 64), np.nan, np.float32)
    expected[16:36, :17] = rows[:20, :17]
    expected[:48, 32:] = rows  # the whole tile
    np.testing.assert_array_equal(gm, expected)


def test_ragged_fixpipe_nz_writes_the_valid_fractals_only():
    """Into a FRACTAL_NZ result, m = 20 / n = 17 write the 2 x 2 fractals holding them."""
    op = _ragged_fixpipe("nz")
    acc = np.random.default_rng(4).standard_normal((2, 3, 16, 16)).astype(np.float32)
    gm = np.full((4, 4, 16, 16), np.nan, np.float32)
    kernel_of(op)(acc, gm, 0, 0, 0, 0, 20, 17)
    np.testing.assert_array_equal(gm[:2, :2], acc[:2, :2])
    assert np.isnan(gm[:, 2:]).all() and np.isnan(gm[2:]).all()
