"""``tile.scatter_rows`` (ScatterND's scalar loop on a UB-resident block): what it writes,
in which order, what it checks, and what the cycle model charges for it."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import i64
from xdsl.utils.exceptions import VerifyException

from tests.dialects.test_tile_ops import buf, idx
from tilegraph.cost_model.tile_costs import SCALAR_READ_CYCLES, SCALAR_WRITE_CYCLES, cost_of
from tilegraph.dialects.tile import ScatterRowsOp
from tilegraph.hardware import hardware_preset
from tilegraph.runtime.tile_interpreter.kernels import kernel_of

TUPLES = np.array([[0, 1], [1, -1], [2, 0], [0, 1], [-3, 2]], np.int64)
"""Into a [3, 4] output (rows 0..11): rows 1, 7, 8, 1 again and 2 (-3 wraps to 0)."""


def _scatter(block: int, base: int, reduction: str | None) -> np.ndarray:
    """The block of ``block`` rows at row ``base`` of ``arange(12) * 10`` after the tuples
    with updates 1..5."""
    src, tuples, dst = buf((5, 1)), buf((5, 2), dtype=i64), buf((block, 1))
    op = ScatterRowsOp(src, tuples, dst, idx()[0], (3, 4), reduction)
    op.verify()
    dst = (np.arange(base, base + block, dtype=np.float32) * 10).reshape(block, 1)
    updates = np.arange(1, 6, dtype=np.float32).reshape(5, 1)
    kernel_of(op)(updates, TUPLES, dst, base)
    return dst[:, 0]


def test_only_rows_in_the_block_are_written_the_last_tuple_winning():
    assert _scatter(4, 0, None).tolist() == [0, 4, 5, 30]  # row 1: tuple 4 after tuple 1
    assert _scatter(4, 6, None).tolist() == [60, 2, 3, 90]  # rows 7 and 8, base 6
    assert _scatter(2, 10, None).tolist() == [100, 110]  # no tuple falls there


@pytest.mark.parametrize(
    ("reduction", "row_one"), [("add", 10 + 1 + 4), ("mul", 10 * 1 * 4), ("max", 10), ("min", 1)]
)
def test_a_reduction_combines_equal_rows_in_tuple_order(reduction: str, row_one: float):
    got = _scatter(3, 0, reduction)
    assert got[1] == row_one
    combine = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}
    assert got[2] == combine[reduction](20, 5) and got[0] == 0


def test_a_bad_tuple_is_an_error_even_outside_the_block():
    op = ScatterRowsOp(buf((1, 1)), buf((1, 2), dtype=i64), buf((2, 1)), idx()[0], (3, 4))
    dst = np.zeros((2, 1), np.float32)
    with pytest.raises(IndexError, match="out of range for an axis of size 4"):
        kernel_of(op)(np.ones((1, 1), np.float32), np.array([[2, 4]]), dst, 0)


def test_verifier_checks_the_shapes():
    with pytest.raises(VerifyException, match=r"indices must be \[5, 2\]"):
        ScatterRowsOp(buf((5, 1)), buf((5, 3), dtype=i64), buf((4, 1)), idx()[0], (3, 4)).verify()
    with pytest.raises(VerifyException, match="src and dst must be"):
        ScatterRowsOp(buf((5, 2)), buf((5, 2), dtype=i64), buf((4, 1)), idx()[0], (3, 4)).verify()
    with pytest.raises(VerifyException, match="reduction must be one of"):
        ScatterRowsOp(
            buf((5, 1)), buf((5, 2), dtype=i64), buf((4, 1)), idx()[0], (3, 4), "sub"
        ).verify()


def test_the_cost_reads_every_tuple_and_writes_the_blocks_share():
    """100 tuples of 3 components: all read by every block; the writes are the block's
    share of the 1000 rows (tuples spread evenly), the destination read with a reduction."""
    hw = hardware_preset("ascend910b")

    def cost(block: int, reduction: str | None) -> int:
        src, tuples, dst = buf((100, 1)), buf((100, 3), dtype=i64), buf((block, 1))
        return cost_of(ScatterRowsOp(src, tuples, dst, idx()[0], (10, 10, 10), reduction), hw)

    scan = 100 * 3 * SCALAR_READ_CYCLES
    move = SCALAR_READ_CYCLES + SCALAR_WRITE_CYCLES
    assert cost(1000, None) == scan + 100 * move
    assert cost(250, None) == scan + 25 * move  # a quarter of the rows: of the tuples
    assert cost(250, "add") == scan + 25 * (move + SCALAR_READ_CYCLES)
    assert cost(4000, None) == cost(1000, None)  # a block past the output writes no more
