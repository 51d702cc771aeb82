"""``tile.gather_rows`` and ``tile.scatter_rows {elements}`` (GatherElements /
ScatterElements on a UB block of a long axis): what they move, what they check, and what
the cycle model charges for them."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import i64
from xdsl.utils.exceptions import VerifyException

from tests.dialects.test_tile_ops import buf, idx
from tilegraph.cost_model.tile_costs import SCALAR_READ_CYCLES, SCALAR_WRITE_CYCLES, cost_of
from tilegraph.dialects.tile import GatherRowsOp, ScatterRowsOp
from tilegraph.hardware import hardware_preset
from tilegraph.runtime.tile_interpreter.kernels import kernel_of

INDICES = np.array([[3, -1], [5, 0], [-7, 6]], np.int64)
"""Into an axis of 8 (columns 0 and 1): positions 3, 7 / 5, 0 / 1, 6."""


def _gather(base: int) -> np.ndarray:
    """The [3, 2] result after the block of 4 positions at ``base`` of ``arange(16).reshape
    (8, 2) * 10``, starting from -1 everywhere."""
    op = GatherRowsOp(buf((4, 2)), idx()[0], buf((3, 2), dtype=i64), buf((3, 2)), 8)
    op.verify()
    table = (np.arange(16, dtype=np.float32) * 10).reshape(8, 2)
    dst = np.full((3, 2), -1, np.float32)
    kernel_of(op)(table[base : base + 4].copy(), base, INDICES, dst)
    return dst


def test_gather_rows_takes_the_elements_in_the_block_and_keeps_the_others():
    # block 0..3: (0,0) <- pos 3 col 0 = 60; (1,1) <- pos 0 col 1 = 10; (2,0) <- pos 1 col 0 = 20
    assert _gather(0).tolist() == [[60, -1], [-1, 10], [20, -1]]
    # block 4..7: (0,1) <- pos 7 col 1 = 150; (1,0) <- pos 5 col 0 = 100; (2,1) <- pos 6 = 130
    assert _gather(4).tolist() == [[-1, 150], [100, -1], [-1, 130]]


def test_gather_rows_checks_every_index_even_outside_the_block():
    op = GatherRowsOp(buf((4, 2)), idx()[0], buf((1, 2), dtype=i64), buf((1, 2)), 8)
    dst = np.zeros((1, 2), np.float32)
    with pytest.raises(IndexError, match="index 8 is out of range for an axis of size 8"):
        kernel_of(op)(np.zeros((4, 2), np.float32), 0, np.array([[0, 8]]), dst)


def test_scatter_rows_elements_keep_their_columns_in_order():
    """Element (j, c) to row wrap(idx[j, c]) of column c; repeats combine in j's order."""
    op = ScatterRowsOp(buf((3, 2)), buf((3, 2), dtype=i64), buf((8, 2)), idx()[0], (8,), None, True)
    op.verify()
    dst = np.zeros((8, 2), np.float32)
    where = np.array([[3, -1], [3, 0], [1, 7]], np.int64)
    kernel_of(op)(np.array([[1, 2], [3, 4], [5, 6]], np.float32), where, dst, 0)
    expected = np.zeros((8, 2), np.float32)
    expected[3, 0], expected[7, 1], expected[0, 1], expected[1, 0] = 3, 6, 4, 5  # 3 after 1
    np.testing.assert_array_equal(dst, expected)


def test_the_verifiers_check_the_element_forms():
    with pytest.raises(VerifyException, match="indices and dst"):
        GatherRowsOp(buf((4, 2)), idx()[0], buf((3, 2), dtype=i64), buf((3, 1)), 8).verify()
    with pytest.raises(VerifyException, match="an elements scatter"):
        ScatterRowsOp(
            buf((3, 2)), buf((3, 1), dtype=i64), buf((8, 2)), idx()[0], (8,), None, True
        ).verify()
    with pytest.raises(VerifyException, match="an elements scatter"):
        ScatterRowsOp(
            buf((3, 2)), buf((3, 2), dtype=i64), buf((8, 2)), idx()[0], (4, 2), None, True
        ).verify()


def test_the_costs_read_every_index_and_move_the_blocks_share():
    """100 x 4 indices into an axis of 1000: all read; the moves are the block's share."""
    hw = hardware_preset("ascend910b")
    move = SCALAR_READ_CYCLES + SCALAR_WRITE_CYCLES
    scan = 400 * SCALAR_READ_CYCLES

    def gather(block: int) -> int:
        op = GatherRowsOp(buf((block, 4)), idx()[0], buf((100, 4), dtype=i64), buf((100, 4)), 1000)
        return cost_of(op, hw)

    def scatter(block: int, reduction: str | None) -> int:
        src, where = buf((100, 4)), buf((100, 4), dtype=i64)
        return cost_of(ScatterRowsOp(src, where, buf((block, 4)), idx()[0], (1000,), reduction, True), hw)  # fmt: skip

    assert gather(1000) == scan + 400 * move
    assert gather(250) == scan + 100 * move
    assert scatter(250, None) == scan + 100 * move
    assert scatter(250, "max") == scan + 100 * (move + SCALAR_READ_CYCLES)
