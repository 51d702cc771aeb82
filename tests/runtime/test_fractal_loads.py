"""``tile.load2d``'s pieces shared by both executors: the fractals past a ragged block's
valid extent read as zero (one extent, or one per tile of a batch) and the rest is left
as loaded; a load whose source ends inside the destination zero-fills what it does not
cover. Checked tile by tile against the definition."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest

from tilegraph.runtime.tile_interpreter.fractal import load_fractals, past_valid_zeroing


def _expected(dst: np.ndarray, axis: int, valid: Any) -> np.ndarray:
    """``dst`` with, in every tile (leading index), the fractals at ``axis`` (of the last
    four dims) from ``ceil(valid / 16)`` on zero."""
    lead = dst.shape[:-4]
    counts = np.broadcast_to(
        np.asarray(valid).reshape(np.shape(valid) + (1,) * (len(lead) - np.ndim(valid))), lead
    )
    out = dst.copy()
    for tile in np.ndindex(*lead):
        first = -(-int(counts[tile]) // 16)
        fractals = out[tile]
        if axis == 0:
            fractals[first:] = 0
        else:
            fractals[:, first:] = 0
    return out


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize(
    ("lead", "valid"),
    [
        ((), 40),  # one tile, 3 of its 4 fractals valid
        ((), 64),  # all valid: nothing zeroed
        ((3, 2), 17),  # one extent for the whole batch
        ((3, 2), [[64], [33], [1]]),  # one per row of tiles, broadcast along the second
        ((3, 2), [[64, 50], [16, 64], [1, 64]]),  # one per tile
    ],
)
def test_zero_past_valid(axis: int, lead: tuple[int, ...], valid: Any):
    rng = np.random.default_rng(7)
    dst = rng.standard_normal((*lead, 4, 4, 16, 16)).astype(np.float32)
    want = _expected(dst, axis, np.asarray(valid))
    op = SimpleNamespace(ragged_axis=axis, valid=True, valid_k=None, k_axis=1 - axis)
    past_valid_zeroing(cast(Any, op))(dst, [np.asarray(valid)])
    np.testing.assert_array_equal(dst, want)


def test_zero_past_valid_k_then_m():
    """A ragged block that is also the last K step: both extents cut, each along its axis
    (K counted in K0 elements: the last dim)."""
    rng = np.random.default_rng(9)
    dst = rng.standard_normal((2, 3, 4, 16, 8)).astype(np.float32)  # L0A: (M1, K1, 16, K0)
    want = _expected(dst, 0, np.asarray([40, 16]))  # 3 / 1 M fractals
    want[..., 3:, :, :] = 0  # 17 of 32 K elements: 3 of 4 K fractals
    op = SimpleNamespace(ragged_axis=0, valid=True, valid_k=True, k_axis=1)
    past_valid_zeroing(cast(Any, op))(dst, [np.asarray([40, 16]), 17])
    np.testing.assert_array_equal(dst, want)


@pytest.mark.parametrize("mode", ["copy", "transpose"])
def test_load_zero_fills_only_what_the_source_does_not_cover(mode: str):
    rng = np.random.default_rng(8)
    src = rng.standard_normal((3, 5, 16, 16)).astype(np.float32)
    dst = np.full((2, 4, 16, 16), np.nan, np.float32)  # stale contents of L0
    load_fractals(src, 1, 0, dst, mode)  # rows 1..2 of 3 fractal rows: the source covers all
    part = src[1:3, 0:4] if mode == "copy" else np.swapaxes(src[1:5, 0:2], 0, 1)
    part = part if mode == "copy" else np.swapaxes(part, -2, -1)
    if mode == "copy":
        np.testing.assert_array_equal(dst, part)
    else:  # (2, 4) fractals from source (4, 2) but it has 3 fractal rows: the 4th is zero
        want = np.zeros_like(dst)
        want[:, : part.shape[1]] = part
        np.testing.assert_array_equal(dst, want)
