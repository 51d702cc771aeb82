"""The vector unit's elementwise kernels write a ufunc's result straight into the
destination when its loop runs in the operands' and destination's own types
(:func:`~tilegraph.runtime.tile_interpreter.vector.computes_in`): the same bits as storing
a fresh result, for every op of the families, in each type, with the destination one of
the operands or a broadcast of them, and in the types where numpy casts (then the fresh
result is stored as before)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import f32
from xdsl.utils.test_value import create_ssa_value

from tilegraph.dialects.tile import BINARY_OPS, SCALAR_OPS, UNARY_OPS, scoped_memref
from tilegraph.runtime.tile_interpreter.kernels import kernel_of
from tilegraph.runtime.tile_interpreter.vector import BINARY, SCALAR, UNARY, computes_in

rng = np.random.default_rng(11)

TYPES = [
    ("float32", "float32", "float32"),
    ("float16", "float16", "float16"),
    ("int32", "int32", "int32"),
    ("float16", "float32", "float16"),  # mixed: computed in float32, stored rounded
    ("int32", "int32", "float32"),  # an int result stored into floats
]


def operand(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    if dtype.startswith("int"):
        return rng.integers(1, 9, shape).astype(dtype)  # positive: pow, shifts, logs
    return rng.uniform(0.5, 2.0, shape).astype(dtype)


def _has_loop(fn, *dtypes: str) -> bool:
    """Whether the op's ufunc runs on operands of ``dtypes`` (a bitwise op has no float
    loop): the cases are the ones that exist."""
    try:
        with np.errstate(all="ignore"):
            fn(*(operand(t, (1, 2)) for t in dtypes))
    except TypeError:
        return False
    return True


UNARY_TYPES = [("float32", "float32"), ("float16", "float16"), ("int32", "int32"),
               ("float16", "float32")]  # fmt: skip
BINARY_CASES = [(n, *t) for n in sorted(BINARY) for t in TYPES if _has_loop(BINARY[n], *t[:2])]
UNARY_CASES = [(n, *t) for n in sorted(UNARY) for t in UNARY_TYPES if _has_loop(UNARY[n], t[0])]


def fresh(fn, *args, dst: np.ndarray) -> np.ndarray:
    """The interpreter's store of a fresh result, on a copy of ``dst``."""
    expected = dst.copy()
    with np.errstate(all="ignore"):
        expected[...] = fn(*args)
    return expected


def tile(shape: tuple[int, ...]):
    """An operand of the op (the kernels take their types from the arrays they get)."""
    return create_ssa_value(scoped_memref(list(shape), f32, "UB"))


@pytest.mark.parametrize(("name", "ta", "tb", "td"), BINARY_CASES)
@pytest.mark.parametrize("alias", [False, True])
def test_binary_in_place_equals_a_fresh_store(name, ta, tb, td, alias):
    a, b = operand(ta, (4, 16)), operand(tb, (1, 16))  # b broadcast along the rows
    dst = a if alias and ta == td else np.full((4, 16), 7, td)
    expected = fresh(BINARY[name], a.copy(), b, dst=dst)
    with np.errstate(all="ignore"):
        kernel_of(BINARY_OPS[name](tile((4, 16)), tile((1, 16)), tile((4, 16))))(a, b, dst)
    np.testing.assert_array_equal(dst, expected)


@pytest.mark.parametrize(("name", "ts", "td"), UNARY_CASES)
@pytest.mark.parametrize("alias", [False, True, "broadcast"])
def test_unary_in_place_equals_a_fresh_store(name, ts, td, alias):
    src = operand(ts, (1, 16) if alias == "broadcast" else (4, 16))
    dst = src if alias is True and ts == td else np.full((4, 16), 7, td)
    expected = fresh(UNARY[name], src.copy(), dst=dst)
    with np.errstate(all="ignore"):
        kernel_of(UNARY_OPS[name](tile((4, 16)), tile((4, 16))))(src, dst)
    np.testing.assert_array_equal(dst, expected)


def test_computes_in_only_where_the_loop_needs_no_cast():
    f32, f16, i32 = (np.dtype(t) for t in ("float32", "float16", "int32"))
    assert computes_in(np.add, (f16, f16), f16)
    assert not computes_in(np.add, (f16, f32), f16)  # A is cast to float32
    assert not computes_in(np.divide, (i32, i32), i32)  # true division: float64
    assert not computes_in(np.add, (i32, i32), f32)  # the result is cast on the store
    assert not computes_in(np.copy, (f32,), f32)  # not a ufunc
    assert not computes_in(np.bitwise_and, (f32, f32), f32)  # no loop: the plain path


@pytest.mark.parametrize("name", sorted(SCALAR))
@pytest.mark.parametrize(("ts", "td"), [("float32", "float32"), ("float16", "float16"),
                                        ("float16", "float32")])  # fmt: skip
def test_scalar_in_place_equals_a_fresh_store(name, ts, td):
    src = operand(ts, (4, 16))
    dst = np.full((4, 16), 7, td)
    expected = fresh(SCALAR[name], src, np.asarray(0.7, src.dtype), dst=dst)
    op = SCALAR_OPS[name](tile((4, 16)), 0.7, tile((4, 16)))
    kernel_of(op)(src, dst)
    np.testing.assert_array_equal(dst, expected)
