"""The tile pool kernel's max pooling is taken over the kernel's rows, then its columns
(``vector_layout._separable_max``): it must equal the maximum over every (i, j) tap, bit
for bit, for strides, dilations, float16 and NaN / -inf halos."""

from __future__ import annotations

import numpy as np
import pytest

from tilegraph.runtime.tile_interpreter.vector_layout import _separable_max


def _every_tap(src: np.ndarray, rows: int, cols: int, kernel, strides, dilations) -> np.ndarray:
    """The 2-D definition: for each output, the max over its kh x kw window."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, strides, dilations
    out = np.empty((*src.shape[:2], rows, cols, *src.shape[4:]), src.dtype)
    for r in range(rows):
        for c in range(cols):
            window = np.stack(
                [src[:, :, r * sh + i * dh, c * sw + j * dw] for i in range(kh) for j in range(kw)]
            )
            out[:, :, r, c] = window.max(axis=0)
    return out


@pytest.mark.parametrize(
    ("kernel", "strides", "dilations"),
    [
        ((13, 13), (1, 1), (1, 1)),
        ((3, 2), (2, 3), (1, 1)),
        ((3, 3), (2, 1), (2, 3)),
        ((1, 4), (1, 1), (1, 1)),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_separable_max_equals_every_tap(kernel, strides, dilations, dtype) -> None:
    rng = np.random.default_rng(7)
    rows, cols = 5, 4
    (kh, kw), (sh, sw), (dh, dw) = kernel, strides, dilations
    height, width = (rows - 1) * sh + (kh - 1) * dh + 1, (cols - 1) * sw + (kw - 1) * dw + 1
    src = rng.standard_normal((2, 3, height + 1, width + 2, 16)).astype(dtype)
    src[:, :, 0, :] = -np.inf  # a padded halo row
    src[1, 2, 1, 1, 5] = np.nan  # propagates to every output whose window reads it
    ours = _separable_max(src, rows, cols, kernel, strides, dilations)
    theirs = _every_tap(src, rows, cols, kernel, strides, dilations)
    assert ours.dtype == src.dtype
    np.testing.assert_array_equal(ours, theirs)
    assert np.isnan(theirs).any() == np.isnan(ours).any()
