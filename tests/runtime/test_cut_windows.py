"""A batched ``tile.copy``'s cut windows (ragged tails, halos, windows wholly outside) as
:class:`~tilegraph.runtime.fast_executor.windows.CutWindows` copies them — worked out once
per call site and offsets, then one flat gather and scatter — against the op's kernel run
item by item on the same data: loads (the tile filled with the pad first, NaN here so a
lane the kernel leaves shows up) and stores, per-item offsets on either side, several
clipped extents in one batch, and the same call site called again with new values and with
new offsets (a remembered plan must not serve other offsets)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import IndexType, f32
from xdsl.ir import SSAValue
from xdsl.utils.test_value import create_ssa_value

from tilegraph.dialects.tile import CopyOp, scoped_memref
from tilegraph.runtime.fast_executor.batching import one_by_one
from tilegraph.runtime.fast_executor.forms import batched_kernel_of
from tilegraph.runtime.fast_executor.windows import CutWindows, copy_whole_windows
from tilegraph.runtime.tile_interpreter.kernels import kernel_of

rng = np.random.default_rng(25)


def buf(shape: tuple[int, ...], scope: str) -> SSAValue:
    return create_ssa_value(scoped_memref(list(shape), f32, scope))


def indices(n: int) -> list[SSAValue]:
    return [create_ssa_value(IndexType()) for _ in range(n)]


def equal_to_one_by_one(op: CopyOp, calls: list[list], mask: list[bool], written: int) -> None:
    """The batched form (one instance, called on each of ``calls`` in turn, as a compiled
    kernel is on every run) writes what the kernel writes item by item, bit for bit."""
    kernel = batched_kernel_of(op, mask)
    assert kernel is not None
    single = one_by_one(kernel_of(op), mask)
    for args in calls:
        expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        single(*expected)
        kernel(*args)
        np.testing.assert_array_equal(args[written], expected[written])


def load_args(rows: np.ndarray, cols: np.ndarray) -> list:
    """GM (5, 21) -> UB (4, 8) tiles at per-item (row, column) offsets."""
    src = rng.standard_normal((5, 21)).astype(np.float32)
    dst = rng.standard_normal((len(rows), 4, 8)).astype(np.float32)  # stale values
    return [src, rows, cols, dst, 0, 0]


def test_loads_with_ragged_rows_columns_and_corner_fill_the_pad_then_copy_the_rest():
    """Items cut at the bottom, at the right, at both, above (a halo), wholly outside, and
    whole ones: several clipped extents in one batch."""
    op = CopyOp(buf((5, 21), "GM"), indices(2), buf((4, 8), "UB"), indices(2), float("nan"))
    op.verify()
    mask = [False, True, True, True, False, False]
    rows = np.array([0, 0, 4, 2, -2, 1, 9, 3])
    cols = np.array([0, 16, 0, 16, 8, 13, 0, 19])
    first, again = load_args(rows, cols), load_args(rows, cols)
    moved = load_args(rows[::-1].copy(), cols)
    equal_to_one_by_one(op, [first, again, moved], mask, written=3)


def test_stores_of_ragged_tiles_into_one_buffer_equal_one_by_one():
    """UB tiles -> one GM buffer: the last block of each row and column hangs over the end
    (a recurrent step's h·R tail); the windows do not overlap."""
    op = CopyOp(buf((2, 8), "UB"), indices(2), buf((5, 21), "GM"), indices(2))
    op.verify()
    mask = [True, False, False, False, True, True]
    rows = np.repeat([0, 2, 4], 3)
    cols = np.tile([0, 8, 16], 3)

    def args() -> list:
        tiles = rng.standard_normal((len(rows), 2, 8)).astype(np.float32)
        return [tiles, 0, 0, np.full((5, 21), np.nan, np.float32), rows, cols]

    equal_to_one_by_one(op, [args(), args()], mask, written=3)


def test_a_load_from_per_item_sources_at_one_offset_equals_one_by_one():
    """Batched sources at one int offset past their edge: every item cut alike."""
    op = CopyOp(buf((3, 6), "UB"), indices(2), buf((4, 8), "UB"), indices(2), 0.0)
    op.verify()
    mask = [True, False, False, True, False, False]
    src = rng.standard_normal((5, 3, 6)).astype(np.float32)
    dst = np.full((5, 4, 8), np.nan, np.float32)
    equal_to_one_by_one(op, [[src, 1, 0, dst, 0, 0]], mask, written=3)


def test_a_load_into_one_unbatched_tile_keeps_the_last_items_fill_and_window():
    """Each item refills the one tile: what stays is the last item's pad and window."""
    op = CopyOp(buf((5, 21), "GM"), indices(2), buf((4, 8), "UB"), indices(2), float("nan"))
    op.verify()
    mask = [False, True, True, False, False, False]
    src = rng.standard_normal((5, 21)).astype(np.float32)
    dst = np.zeros((4, 8), np.float32)
    rows, cols = np.array([3, 0, 2]), np.array([16, 0, 15])
    equal_to_one_by_one(op, [[src, rows, cols, dst, 0, 0]], mask, written=3)


@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("fill", [None, -1.0])
def test_cut_windows_copy_the_clipped_part_and_fill_only_the_cut_items(fill, strided):
    """:class:`CutWindows` on its own: items not in ``cut`` are left alone; a plan made for
    one set of offsets is not used for another; buffers that are strided views (an arena's
    slot) are read and written in place."""
    whole = np.arange(60, dtype=np.float32).reshape(5, 12)
    src = whole[:, ::2] if strided else whole[:, :6].copy()
    copy = CutWindows()
    for rows in (np.array([0, 4, 3, 1]), np.array([4, 0, -1, 1])):
        slots = np.full((4, 2, 8), 7.0, np.float32)
        dst = slots[:, :, ::2] if strided else slots[:, :, :4].copy()
        cut = np.array([0, 1, 2])
        copy(4, (2, 4), (src, (rows, 3), False), (dst, (0, 0), True), cut, fill)
        for t, r in enumerate(rows[:3]):
            expected = np.full((2, 4), 7.0 if fill is None else fill, np.float32)
            lo, hi = max(0, -r), min(2, 5 - r)
            expected[lo:hi, :3] = src[r + lo : r + hi, 3:6]
            np.testing.assert_array_equal(dst[t], expected)
        assert (dst[3] == 7.0).all()  # not cut: left to copy_whole_windows


def test_a_few_windows_copied_item_by_item_follow_each_calls_offsets():
    """A batch of a few windows (sliced item by item, its slices remembered per offsets)
    called again with the same offsets and new values, then with other offsets: each call
    copies its own windows and returns its own cut items."""
    src = rng.standard_normal((6, 9)).astype(np.float32)
    for rows, cols in (
        (np.array([0, 2, 5]), 1),
        (np.array([0, 2, 5]), 1),
        (np.array([4, 1, 3]), 6),
    ):
        src = src + 1
        dst = np.full((3, 2, 4), np.nan, np.float32)
        cut = copy_whole_windows(3, (2, 4), src, (rows, cols), False, dst, (0, 0), True)
        inside = [t for t, r in enumerate(rows) if r + 2 <= 6 and cols + 4 <= 9]
        assert cut.tolist() == [t for t in range(3) if t not in inside]
        for t in inside:
            np.testing.assert_array_equal(dst[t], src[rows[t] : rows[t] + 2, cols : cols + 4])
        assert np.isnan(dst[cut]).all()
