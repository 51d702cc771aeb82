"""Integer ``tile.mmad`` (int8 cube, int32 accumulation) computed through float BLAS: the
products must equal integer arithmetic bit for bit, in the interpreter's kernel and in the
fast executor's batched and nest forms, and the accumulator must wrap as int32 does when
a sum leaves its range (where floats would not be exact, the integer path runs)."""

from __future__ import annotations

import numpy as np
import pytest

from tilegraph.runtime.fast_executor.cube import nest_product
from tilegraph.runtime.tile_interpreter.cube import fractal_product, matmul_dtype

rng = np.random.default_rng(3)


def int8(*shape: int) -> np.ndarray:
    return rng.integers(-128, 128, size=shape, dtype=np.int8)


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ZZ (M1, K1, 16, K0) x ZN (K1, N1, 16, K0) -> NZ (N1, M1, 16, 16) in int64."""
    m1, k1, m0, k0 = a.shape
    n1 = b.shape[1]
    rows = a.transpose(0, 2, 1, 3).reshape(m1 * m0, k1 * k0).astype(np.int64)
    cols = b.transpose(0, 3, 1, 2).reshape(k1 * k0, n1 * 16).astype(np.int64)
    return (rows @ cols).reshape(m1 * m0, n1, 16).transpose(1, 0, 2).reshape(n1, m1, 16, 16)


def test_the_compute_type_is_exact_for_the_sums_it_can_reach():
    assert matmul_dtype(np.int8, np.int8, np.int32, 1024) == np.float32  # 2**14 * 2**10
    assert matmul_dtype(np.int8, np.int8, np.int32, 1025) == np.float64
    assert matmul_dtype(np.int8, np.int8, np.int32, 1 << 17) == np.int32  # could wrap
    assert matmul_dtype(np.uint8, np.int8, np.int32, 520) == np.float64  # 255 * 128 * 520
    assert matmul_dtype(np.float16, np.float16, np.float32, 4096) == np.float32
    assert matmul_dtype(np.int8, np.int8, np.float32, 64) == np.float32


@pytest.mark.parametrize("k1", [2, 40, 80])  # float32, float64 and float64 with accumulation
@pytest.mark.parametrize("init", [True, False])
def test_fractal_product_of_int8_equals_integer_arithmetic(k1, init):
    a, b = int8(3, k1, 16, 32), int8(k1, 2, 16, 32)
    c0 = rng.integers(-(1 << 20), 1 << 20, size=(2, 3, 16, 16)).astype(np.int32)
    c = c0.copy()
    fractal_product(a, b, c, init)
    expected = reference(a, b) + (0 if init else c0.astype(np.int64))
    assert c.dtype == np.int32
    np.testing.assert_array_equal(c, expected.astype(np.int32))


def test_an_accumulator_that_leaves_int32_wraps_as_int32():
    a, b = np.full((1, 1, 16, 32), -128, np.int8), np.full((1, 1, 16, 32), -128, np.int8)
    c = np.full((1, 1, 16, 16), np.iinfo(np.int32).max, np.int32)
    fractal_product(a, b, c, False)
    wrapped = (np.int64(np.iinfo(np.int32).max) + 32 * 128 * 128 + (1 << 31)) % (1 << 32) - (
        1 << 31
    )
    np.testing.assert_array_equal(c, np.full_like(c, wrapped))


@pytest.mark.parametrize("start", [0, None, 2])
def test_nest_product_of_int8_sums_the_steps_exactly(start):
    """A K loop of 4 steps over 3 row tiles, run as one nest: each step's int8 product
    added in int32 from the step that starts the sum (none: onto the accumulator)."""
    rows, steps, m1, k1, n1 = 3, 4, 2, 4, 2
    a = int8(rows, steps, m1, k1, 16, 32)
    b = int8(1, steps, k1, n1, 16, 32)
    c0 = rng.integers(-1000, 1000, size=(rows, 1, n1, m1, 16, 16)).astype(np.int32)
    init = (np.arange(steps) == start).reshape(1, steps)
    expected = c0.astype(np.int64)
    for t in range(rows):
        for s in range(steps):
            product = reference(a[t, s], b[0, s])
            expected[t, 0] = product if init[0, s] else expected[t, 0] + product
    c = c0.copy()
    nest_product(2, 1)(a, b, c, init)
    np.testing.assert_array_equal(c, expected.astype(np.int32))


def test_fractal_product_plans_per_shape_and_type():
    """The plan of a product is kept per operand shapes and types: the same shapes in
    another type, or with a batch of tiles, each still give their own exact product."""
    a8, b8 = int8(2, 3, 16, 32), int8(3, 1, 16, 32)
    for _ in range(2):  # the second round runs on the kept plans
        af, bf = a8.astype(np.float32), b8.astype(np.float32)
        c = np.zeros((1, 2, 16, 16), np.float32)
        fractal_product(af, bf, c, True)
        np.testing.assert_array_equal(c, reference(a8, b8).astype(np.float32))
        c = np.ones((1, 2, 16, 16), np.int32)  # int8 in float32, not in int8's wrap
        fractal_product(a8, b8, c, False)
        np.testing.assert_array_equal(c, reference(a8, b8) + 1)
        other = a8[::-1].copy()  # two tiles of A against one B
        c = np.zeros((2, 1, 2, 16, 16), np.int32)
        fractal_product(np.stack([a8, other]), b8, c, True)
        np.testing.assert_array_equal(c, np.stack([reference(a8, b8), reference(other, b8)]))
