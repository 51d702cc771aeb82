"""What the vision ops (:mod:`tilegraph.dialects.graph.vision`,
:mod:`tilegraph.dialects.graph.vision_index`) share: the attribute and shape checks of their
shape functions, and the numpy kernels of the ops that read a tensor at computed positions
(GridSample, DeformConv, AffineGrid, RoiAlign) and of NonMaxSuppression.

Sampling is separable. Along each spatial axis a coordinate becomes a few *taps* — (integer
position, weight) pairs: one for nearest, two for linear, four for cubic (Keys' kernel with
``a = -0.75``) — and a sample is the sum over every combination of one tap per axis of the
product of their weights times the tensor at their positions (:func:`interpolate`). Padding
modes act per tap: ``zeros`` zeroes the weight of a tap outside the tensor, ``border`` clamps
its position, ``reflection`` reflects it at the borders. The coordinate rules are PyTorch's,
which onnxruntime and onnx's reference follow: coordinates are computed in the grid's element
type, nearest rounds half to even, and for nearest and linear ``border`` / ``reflection``
first move the coordinates beyond the borders (``[-0.5, size - 0.5]``, or ``[0, size - 1]``
with ``align_corners``) inside.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.ir import Attribute

from tilegraph.dialects.graph.base import GraphOp, ShapeError
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import Dim, dims_compatible

CUBIC_A = -0.75
"""The cubic convolution coefficient of GridSample (PyTorch's and ONNX's)."""

SAMPLING_MODES = {
    "linear": "linear",
    "bilinear": "linear",
    "cubic": "cubic",
    "bicubic": "cubic",
    "nearest": "nearest",
}
"""GridSample's ``mode`` values -> the interpolation (GridSample-16 names and GridSample-20's)."""

PADDING_MODES = ("zeros", "border", "reflection")

Tap = tuple[np.ndarray, np.ndarray]
"""A position (int64) and its weight (float64), arrays broadcastable to the sample shape."""


# ---- shape-function checks ----------------------------------------------------------------


def one_of(
    cls: type[GraphOp], props: Mapping[str, Attribute], name: str, allowed: Sequence[Any]
) -> Any:
    """The value of attribute ``name``, which must be one of ``allowed`` (else a ShapeError
    naming the attribute)."""
    value = cls.read_attr(props, name)
    if value not in allowed:
        raise ShapeError(
            f"{cls.ONNX_OP}: {name} = {value!r} is not supported "
            f"(one of {', '.join(map(repr, allowed))})"
        )
    return value


def check_shape(t: TensorType, want: Sequence[Dim], what: str) -> None:
    """``t`` must have rank ``len(want)`` and dims compatible with ``want``."""
    if t.rank != len(want) or not all(map(dims_compatible, t.origin_shape, want)):
        raise ShapeError(f"{what} must have shape {list(want)}, got {list(t.origin_shape)}")


def require_float(t: TensorType, what: str) -> None:
    """``t`` must hold a floating-point type."""
    if not t.dtype.is_float:
        raise ShapeError(f"{what} must be a floating-point tensor, got {t.element_type}")


# ---- sampling -------------------------------------------------------------------------------


def gather(x: np.ndarray, index: Sequence[np.ndarray]) -> np.ndarray:
    """``x[n, c, index_0, ..., index_r-1]`` for ``x`` of shape ``[N, C, *S]`` and in-range
    integer positions broadcastable to ``[N, C or 1, *P]``: an array ``[N, C, *P]``."""
    lead = np.broadcast_shapes(*(i.shape for i in index))
    ones = [1] * (len(lead) - 2)
    n = np.arange(x.shape[0]).reshape(-1, 1, *ones)
    c = np.arange(x.shape[1]).reshape(1, -1, *ones)
    return x[(n, c, *index)]


def interpolate(x: np.ndarray, taps: Sequence[Sequence[Tap]]) -> np.ndarray:
    """The samples of ``x`` (``[N, C, *S]``) given the taps of each spatial axis: the sum,
    over one tap per axis, of the product of the weights times ``x`` there (float64)."""
    out: np.ndarray | None = None
    for combo in itertools.product(*taps):
        weight = np.prod(np.broadcast_arrays(*(w for _, w in combo)), axis=0)
        term = gather(x, [i for i, _ in combo]) * weight
        out = term if out is None else out + term
    assert out is not None
    return out


def borders(size: int, align_corners: bool) -> tuple[float, float]:
    """The coordinate range of an axis: pixel centres with ``align_corners``, else edges."""
    return (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)


def reflect(x: np.ndarray, low: float, high: float) -> np.ndarray:
    """Coordinates reflected at ``low`` and ``high`` until they lie between them (float64)."""
    x = np.asarray(x, np.float64)
    span = high - low
    if span <= 0:
        return np.full_like(x, low)
    below = x < low
    dx = np.where(below, low - x, x - high)
    flips = np.floor(dx / span)
    rest = dx - flips * span
    even = flips % 2 == 0
    from_low = np.where(even, low + rest, high - rest)
    from_high = np.where(even, high - rest, low + rest)
    return np.where(below, from_low, np.where(x > high, from_high, x))


def unnormalize(grid: np.ndarray, size: int, align_corners: bool) -> np.ndarray:
    """Normalised coordinates in ``[-1, 1]`` -> pixel coordinates along an axis of ``size``
    (in the grid's element type, as onnx's reference computes them)."""
    if align_corners:
        return (grid + 1) / 2.0 * (size - 1)
    return ((grid + 1) * size - 1) / 2.0


def _padded(position: np.ndarray, weight: np.ndarray, size: int, padding: str, edges) -> Tap:
    """A tap with the padding mode applied to its position."""
    if padding == "zeros":
        inside = (position >= 0) & (position < size)
        return np.clip(position, 0, size - 1), np.where(inside, weight, 0.0)
    if padding == "reflection":
        position = np.trunc(reflect(position, *edges)).astype(np.int64)
    return np.clip(position, 0, size - 1), weight


def cubic_weights(t: np.ndarray) -> list[np.ndarray]:
    """Keys' cubic weights of the taps at ``-1, 0, 1, 2`` around a fraction ``t`` in [0, 1)."""
    t = np.asarray(t, np.float64)
    a = CUBIC_A

    def far(d: np.ndarray) -> np.ndarray:  # 1 <= d < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    def near(d: np.ndarray) -> np.ndarray:  # 0 <= d <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def axis_taps(
    coord: np.ndarray, size: int, mode: str, padding: str, align_corners: bool
) -> list[Tap]:
    """The taps of pixel coordinates ``coord`` along an axis of ``size`` for GridSample's
    interpolation ``mode`` (linear, cubic, nearest) and ``padding`` mode. Cubic leaves the
    coordinate where it is and pads each of its four taps (PyTorch's and onnxruntime's rule;
    onnx's reference moves it inside first, which differs near the border)."""
    edges = borders(size, align_corners)
    if mode == "nearest":
        coord = np.rint(coord)
    outside = (coord < edges[0]) | (coord > edges[1])
    if padding == "border" and mode != "cubic":
        coord = np.where(outside, np.clip(coord, 0, size - 1), coord).astype(coord.dtype)
    elif padding == "reflection" and mode != "cubic":
        coord = np.where(outside, reflect(coord, *edges), coord).astype(coord.dtype)
    one = np.ones(coord.shape)
    if mode == "nearest":
        return [_padded(coord.astype(np.int64), one, size, padding, edges)]
    base = np.floor(coord)
    t = coord - base
    start = base.astype(np.int64)
    if mode == "linear":
        pairs = [(start, 1 - t), (start + 1, t)]
    else:
        pairs = [(start + k - 1, w) for k, w in enumerate(cubic_weights(t))]
    return [_padded(p, np.asarray(w, np.float64), size, padding, edges) for p, w in pairs]


def grid_sample(
    x: np.ndarray, grid: np.ndarray, mode: str, padding: str, align_corners: bool
) -> np.ndarray:
    """ONNX GridSample of ``x`` ``[N, C, *S]`` at ``grid`` ``[N, *O, r]`` (the last axis
    holds the coordinates in reverse axis order: x for the last spatial axis first)."""
    spatial = x.shape[2:]
    r = len(spatial)
    taps = []
    for axis, size in enumerate(spatial):
        coord = unnormalize(grid[..., r - 1 - axis], size, align_corners)[:, None]
        taps.append(axis_taps(coord, size, mode, padding, align_corners))
    if mode == "nearest":  # one tap per axis: copy the element (any element type)
        positions = [axis[0][0] for axis in taps]
        inside = np.prod(np.broadcast_arrays(*(axis[0][1] for axis in taps)), axis=0) > 0
        return np.where(inside, gather(x, positions), np.zeros((), x.dtype))
    return interpolate(x.astype(np.float64), taps).astype(x.dtype)


def bilinear_zeros(x: np.ndarray, coords: Sequence[np.ndarray]) -> np.ndarray:
    """``x`` ``[N, C, *S]`` sampled bilinearly at pixel coordinates (one array per spatial
    axis, broadcastable to ``[N, C, *P]``), zero outside the tensor (DeformConv's rule)."""
    taps = [
        axis_taps(np.asarray(c), size, "linear", "zeros", True)
        for c, size in zip(coords, x.shape[2:], strict=True)
    ]
    return interpolate(x.astype(np.float64), taps)


def affine_grid(theta: np.ndarray, spatial: Sequence[int], align_corners: bool) -> np.ndarray:
    """ONNX AffineGrid: ``theta`` ``[N, r, r + 1]`` applied to the normalised coordinates
    of the pixels of ``spatial`` (``[H, W]`` or ``[D, H, W]``): ``[N, *spatial, r]`` with
    the coordinates in reverse axis order (x first)."""
    axes = []
    for size in spatial:
        if align_corners:
            step = 2.0 / (size - 1) if size > 1 else 0.0
            axes.append(-1.0 + np.arange(size) * step)
        else:
            step = 2.0 / size
            axes.append(-1.0 + step / 2 + np.arange(size) * step)
    mesh = np.meshgrid(*axes, indexing="ij")
    homogeneous = np.stack([*mesh[::-1], np.ones(mesh[0].shape)], axis=-1)
    grid = np.einsum("...k,nrk->n...r", homogeneous, theta.astype(np.float64))
    return grid.astype(theta.dtype)


def _roi_axis(
    start: np.floating, bin_size: np.floating, bins: int, grid: int, size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One axis of RoiAlign's sample points ``[bins, grid]``, computed in the boxes' type:
    (low, high) positions, (low, high) weights and the points that lie outside the feature
    map (weight 0 everywhere)."""
    dtype = np.dtype(type(start))
    b = np.arange(bins, dtype=dtype)[:, None]
    g = np.arange(grid, dtype=dtype)[None, :]
    pos = start + b * bin_size + (g + dtype.type(0.5)) * bin_size / grid
    away = (pos < -1.0) | (pos > size)
    pos = np.maximum(pos, 0)
    low = pos.astype(np.int64)
    edge = low >= size - 1
    low = np.where(edge, size - 1, low)
    high = np.where(edge, size - 1, low + 1)
    pos = np.where(edge, low, pos).astype(dtype)
    frac = (pos - low).astype(np.float64)
    low, high = np.where(away, 0, low), np.where(away, 0, high)
    return low, high, 1.0 - frac, frac, away


def roi_align(
    x: np.ndarray,
    rois: np.ndarray,
    batch_indices: np.ndarray,
    out_size: tuple[int, int],
    sampling_ratio: int,
    spatial_scale: float,
    half_pixel: bool,
    mode: str,
) -> np.ndarray:
    """ONNX RoiAlign of ``x`` ``[N, C, H, W]`` (onnxruntime's algorithm, which the spec
    refers to): ``[R, C, out_h, out_w]``; ``mode`` "avg" averages the bilinear samples of a
    bin, "max" takes the largest weighted corner over them."""
    _, c, h, w = x.shape
    oh, ow = out_size
    out = np.zeros((rois.shape[0], c, oh, ow), np.float64)
    offset = 0.5 if half_pixel else 0.0
    real = rois.dtype.type
    for r, (roi, batch) in enumerate(zip(rois, batch_indices, strict=True)):
        x0, y0, x1, y1 = (real(v * spatial_scale - offset) for v in roi)
        roi_w, roi_h = x1 - x0, y1 - y0
        if not half_pixel:  # malformed boxes become 1 x 1
            roi_w, roi_h = max(roi_w, real(1)), max(roi_h, real(1))
        bin_h, bin_w = roi_h / oh, roi_w / ow
        gh = sampling_ratio if sampling_ratio > 0 else int(np.ceil(roi_h / oh))
        gw = sampling_ratio if sampling_ratio > 0 else int(np.ceil(roi_w / ow))
        if gh <= 0 or gw <= 0:
            continue
        ylo, yhi, wyl, wyh, yaway = _roi_axis(y0, bin_h, oh, gh, h)
        xlo, xhi, wxl, wxh, xaway = _roi_axis(x0, bin_w, ow, gw, w)
        ys, xs = (slice(None), slice(None), None, None), (None, None, slice(None), slice(None))
        valid = ~(yaway[ys] | xaway[xs])
        fm = x[int(batch)].astype(np.float64)
        corners = [
            fm[:, yi[ys], xi[xs]] * np.where(valid, wy[ys] * wx[xs], 0.0)
            for yi, wy in ((ylo, wyl), (yhi, wyh))
            for xi, wx in ((xlo, wxl), (xhi, wxh))
        ]  # each [C, oh, gh, ow, gw]
        if mode == "avg":
            out[r] = np.add.reduce(corners).sum(axis=(2, 4)) / (gh * gw)
        else:
            out[r] = np.maximum.reduce(corners).max(axis=(2, 4))
    return out.astype(x.dtype)


# ---- detection ------------------------------------------------------------------------------


def _box_edges(boxes: np.ndarray, center: bool) -> tuple[np.ndarray, ...]:
    """(y_min, x_min, y_max, x_max) of ``[n, 4]`` boxes in their element type: corners in
    any order (y1, x1, y2, x2) or, with ``center``, (x_centre, y_centre, width, height)."""
    if center:
        xc, yc, half_w, half_h = boxes[:, 0], boxes[:, 1], boxes[:, 2] / 2, boxes[:, 3] / 2
        return yc - half_h, xc - half_w, yc + half_h, xc + half_w
    y1, x1, y2, x2 = boxes.T
    return np.minimum(y1, y2), np.minimum(x1, x2), np.maximum(y1, y2), np.maximum(x1, x2)


def _overlapping(edges: tuple[np.ndarray, ...], i: int, others: list[int], iou: Any) -> bool:
    """Whether box ``i`` overlaps one of ``others`` by an IoU above ``iou`` (onnxruntime's
    rule: boxes that do not intersect or have no area never suppress)."""
    if not others:
        return False
    y0, x0, y1, x1 = edges
    j = np.asarray(others)
    ix = np.minimum(x1[i], x1[j]) - np.maximum(x0[i], x0[j])
    iy = np.minimum(y1[i], y1[j]) - np.maximum(y0[i], y0[j])
    inter = ix * iy
    area_i, area_j = (x1[i] - x0[i]) * (y1[i] - y0[i]), (x1[j] - x0[j]) * (y1[j] - y0[j])
    union = area_i + area_j - inter
    ok = (ix > 0) & (iy > 0) & (inter > 0) & (area_i > 0) & (area_j > 0) & (union > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return bool(np.any(ok & (inter / np.where(ok, union, 1) > iou)))


def non_max_suppression(
    boxes: np.ndarray,
    scores: np.ndarray,
    most: int,
    iou_max: Any,
    score_min: Any | None,
    center: bool,
) -> np.ndarray:
    """ONNX NonMaxSuppression of ``boxes`` ``[B, n, 4]`` scored ``[B, C, n]``: per batch
    and class, greedily by decreasing score (ties: the lower index first), the boxes above
    ``score_min`` (if given) that overlap no kept box by an IoU above ``iou_max``, at most
    ``most`` of them; ``[selected, 3]`` rows (batch, class, box)."""
    rows: list[tuple[int, int, int]] = []
    for b in range(boxes.shape[0]):
        edges = _box_edges(boxes[b], center)
        for c in range(scores.shape[1]):
            score = scores[b, c]
            order = np.argsort(-score, kind="stable")
            if score_min is not None:
                order = order[score[order] > score_min]
            kept: list[int] = []
            for i in order.tolist():
                if len(kept) >= most:
                    break
                if not _overlapping(edges, i, kept, iou_max):
                    kept.append(i)
            rows += [(b, c, i) for i in kept]
    return np.asarray(rows, np.int64).reshape(-1, 3)
