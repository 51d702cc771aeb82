"""Linear and cubic resize on the vector cores: per output row a few source rows and their
weights, then per output column a few source columns and theirs (``tile.vtaps``).

A linear or cubic resize is separable: along each resized axis, output position ``o`` is a
weighted sum of ``T`` input positions (linear: 2 taps, cubic: 4; more under antialias
when downscaling), the weights a compile-time table of the coordinate transformation, the
scale, ``cubic_coeff_a`` and ``exclude_outside`` — exactly the matrices the graph level
multiplies by (:func:`~tilegraph.dialects.graph.spatial.axis_weights`, read through
:func:`.resize.resize_weights`). The kernel resizes the two innermost axes, as the nearest
kernel (:mod:`.resize`) does, and shares its tiling: output tiles of whole rows (several
planes when they fit half of UB), each loading the window of input rows its output rows'
taps read, row tiles with the same relative taps and weights one ``tile.parallel`` loop.
Per tile:

* ``tile.vtaps`` along the rows: ``rows[.., i, :] = sum_t wr[i, t] * window[.., r[i, t], :]``
  (each tap a whole row, its weight a scalar: an ``Axpy`` per tap);
* ``tile.vtaps`` along the columns: ``out[.., :, j] = sum_t wc[j, t] * rows[.., :, c[j, t]]``
  (each tap a gather of columns by an offset table and a multiply-add);
* the tile is stored.

Rows first, then columns, as the graph level resizes axis by axis (in float32 here, in
float64 there: the executors agree to float32 rounding). What stays on the host: integer
tensors (the graph level rounds the weighted sums back), resizes by more than
:data:`MAX_TAPS` taps per position (a strong antialiased downscale), and what the nearest
kernel leaves there (tf_crop_and_resize, a leading axis, run-time scales, not row-major).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

import numpy as np
from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.tile import memref_shape
from tilegraph.dialects.tile.vector_axis import TapsOp
from tilegraph.lowering.conversion.kernel_body import KernelBody
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.resize import (
    Compute,
    RowNest,
    RowTable,
    emit_row_nests,
    leading_axes_kept,
    lone_resize,
    resize_weights,
)

MAX_TAPS = 16
"""The most input positions one output position may read (an x1/4 antialiased cubic
reads 16)."""


def taps_of(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``W[out, in]`` as (positions, weights), ``T`` taps per output position (those with
    a nonzero weight; padded with weight 0 at the row's first tap)."""
    rows = [np.nonzero(row)[0] for row in w]
    count = max(1, max(len(r) for r in rows))
    positions = np.zeros((len(rows), count), np.int64)
    weights = np.zeros((len(rows), count))
    for o, found in enumerate(rows):
        found = found if len(found) else np.zeros(1, np.int64)
        positions[o, :] = found[0]
        positions[o, : len(found)] = found
        weights[o, : len(found)] = w[o, found]
    return positions, weights


def tap_rows(positions: np.ndarray, weights: np.ndarray) -> RowTable:
    """The rows of a resize by taps: output row ``o`` reads input rows ``positions[o]``."""

    def relative(start: int, stop: int, first: int) -> tuple:
        rel = tuple(tuple(int(p) - first for p in row) for row in positions[start:stop])
        return rel, tuple(tuple(float(x) for x in row) for row in weights[start:stop])

    return RowTable(positions.min(axis=1), positions.max(axis=1), relative)


def _weigher(col_taps: tuple[np.ndarray, np.ndarray], element: Attribute) -> Compute:
    """Rows by the nest's taps, then columns by ``col_taps``."""
    positions, weights = col_taps

    def compute(b: KernelBuilder, window: SSAValue, nest: RowNest, lead: list[int]):
        width = memref_shape(window)[-1]
        rank = len(lead) + 2
        rows = b.buffer([*lead, nest.rows, width], element, "UB", "rows_ub")
        out = b.buffer([*lead, nest.rows, len(positions)], element, "UB", "resized_ub")
        row_positions, row_weights = nest.table
        b.add(TapsOp(window, rows, rank - 2, row_positions, row_weights))
        b.add(TapsOp(rows, out, rank - 1, positions.tolist(), weights.tolist()))
        return out

    return compute


def emit_taps_resize_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a lone linear or cubic resize (see the module docstring); returns why it
    cannot (None when emitted)."""
    resize = lone_resize(body)
    if isinstance(resize, str):
        return resize
    in_shape = resize.in_shape
    weights = resize_weights(resize.op, in_shape, resize.out_shape)
    if isinstance(weights, str):
        return weights
    reason = leading_axes_kept(weights)
    if reason is not None:
        return reason
    if str(resize.element) not in ("f32", "f16", "bf16"):
        mode = resize.op.attr("mode")
        return f"a {mode} resize of {resize.element} (rounded back at the graph level)"
    axes = [
        w if w is not None else np.eye(n) for n, w in zip(in_shape[-2:], weights[-2:], strict=True)
    ]
    row_taps, col_taps = (taps_of(w) for w in axes)
    if max(row_taps[0].shape[1], col_taps[0].shape[1]) > MAX_TAPS:
        return f"a resize reading more than {MAX_TAPS} input positions per output position"

    def beyond_window(tile: Sequence[int]) -> int:  # the row-resized tile and the result
        return prod(tile[:-1]) * in_shape[-1] + prod(tile)

    compute = _weigher(col_taps, resize.element)
    return emit_row_nests(b, resize, tap_rows(*row_taps), beyond_window, compute)
