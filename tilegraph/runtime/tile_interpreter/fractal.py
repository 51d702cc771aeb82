"""Semantics of the cube path's data movement (:mod:`tilegraph.dialects.tile.fractal`):
ND <-> NZ, fractal loads into L0A/L0B, img2col and fixpipe.

The fast executor's batched forms of ``load2d``, ``load3d`` and ``fixpipe`` are built from
the pieces here (:func:`load_fractals`, :func:`img2col`, :func:`fixpipe_tiles`), so a tile
and a batch of tiles run the same code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from tilegraph.dialects.graph.requantized_cube import requantize_accumulator
from tilegraph.dialects.tile.base import memref_element, memref_shape
from tilegraph.dialects.tile.dma import int_values
from tilegraph.dialects.tile.fixpipe import FixpipeOp
from tilegraph.dialects.tile.fractal import Load2dOp, Load3dOp, Nd2NzOp, Nz2NdOp
from tilegraph.runtime.tile_interpreter.dma import cast_into, window
from tilegraph.runtime.tile_interpreter.kernels import Kernel, tile_kernel


@tile_kernel(Nd2NzOp)
def nd2nz(op: Nd2NzOp) -> Kernel:
    c1, r1, r0, c0 = memref_shape(op.dst)[-4:]
    rank = len(memref_shape(op.src))
    given = (op.valid_rows is not None, op.valid_cols is not None)

    def run(src: np.ndarray, *rest: Any) -> tuple[()]:
        offsets, dst, valid = rest[:rank], rest[rank], iter(rest[rank + 1 :])
        batch = tuple(offsets[:-2])
        plane = np.zeros((r1 * r0, c1 * c0), dst.dtype)
        # the valid rows / columns only (Nd2NzParams nValue / dValue); the rest stays zero
        extent = tuple(
            min(int(next(valid)), whole) if has else whole
            for has, whole in zip(given, plane.shape, strict=True)
        )
        matrix = src[batch]
        found = window(extent, plane.shape, matrix.shape, (0, 0), offsets[-2:])
        if found is not None:
            plane[found[0]] = matrix[found[1]]
        dst[...] = plane.reshape(r1, r0, c1, c0).transpose(2, 0, 1, 3)
        return ()

    return run


def zero_past_valid_nz(op: Nd2NzOp, dst: np.ndarray, rows: Any, cols: Any) -> None:
    """The elements of a batch of NZ tiles ``dst`` (``(count, ..., C1, R1, 16, C0)``) past
    ``op``'s valid ``rows`` / ``cols`` (None: that axis whole; an int, or an array of one
    per tile) read as zero (:class:`Nd2NzOp`)."""
    c1, r1, r0, c0 = dst.shape[-4:]
    nz = dst.reshape(len(dst), c1, r1, r0, c0)
    for valid, positions in (
        (rows, np.arange(r1 * r0).reshape(1, 1, r1, r0, 1)),
        (cols, (np.arange(c1)[:, None] * c0 + np.arange(c0)).reshape(1, c1, 1, 1, c0)),
    ):
        if valid is not None:
            limit = np.broadcast_to(np.asarray(valid), (len(dst),)).reshape(-1, 1, 1, 1, 1)
            np.copyto(nz, 0, where=positions >= limit)
    if not np.shares_memory(nz, dst):
        dst[...] = nz.reshape(dst.shape)


@tile_kernel(Nz2NdOp)
def nz2nd(op: Nz2NdOp) -> Kernel:
    rank = len(memref_shape(op.dst))

    def run(src: np.ndarray, dst: np.ndarray, *offsets: int) -> tuple[()]:
        c1, r1, r0, c0 = src.shape[-4:]
        plane = src.reshape(c1, r1, r0, c0).transpose(1, 2, 0, 3).reshape(r1 * r0, c1 * c0)
        matrix = dst[tuple(offsets[: rank - 2])]
        found = window(plane.shape, plane.shape, matrix.shape, (0, 0), offsets[-2:])
        if found is not None:
            cast_into(matrix, found[1], plane[found[0]])
        return ()

    return run


def load_fractals(src: np.ndarray, i: int, j: int, dst: np.ndarray, mode: str) -> None:
    """``tile.load2d`` on the last four dims (leading dims: a batch of tiles)."""
    a, b = dst.shape[-4:-2]
    if mode in ("copy", "transpose_fractals"):
        part = src[..., i : i + a, j : j + b, :, :]
    else:
        part = np.swapaxes(src[..., i : i + b, j : j + a, :, :], -4, -3)
    if mode in ("transpose", "transpose_fractals"):
        part = np.swapaxes(part, -2, -1)
    if part.shape[-4:-2] != (a, b):  # the source ends inside: the rest reads as zero
        dst.fill(0)
    dst[..., : part.shape[-4], : part.shape[-3], :, :] = part


@tile_kernel(Load2dOp)
def load2d(op: Load2dOp) -> Kernel:
    mode = op.mode.data
    zero_past_valid = past_valid_zeroing(op)

    def run(src: np.ndarray, i: int, j: int, dst: np.ndarray, *valid: int) -> tuple[()]:
        load_fractals(src.reshape(src.shape[-4:]), i, j, dst, mode)
        zero_past_valid(dst, valid)
        return ()

    return run


def past_valid_zeroing(op: Load2dOp) -> Callable[[np.ndarray, Sequence[Any]], None]:
    """``zero(dst, extents)``: the fractals of ``dst`` past ``op``'s valid elements read as
    zero (:class:`Load2dOp`); ``extents`` are its ``valid`` / ``k`` operands' values, those
    it has, each an int or an array of one per leading batch index of ``dst``. The op's
    facts are read here, once: read on every call (a recurrent step's loads), the IR
    cost more than the zeroing."""
    axes = [
        (axis, size)
        for has, axis, size in (
            (op.valid is not None, op.ragged_axis, 16),
            (op.valid_k is not None, op.k_axis, None),  # K counted in K0 elements
        )
        if has
    ]

    def zero(dst: np.ndarray, extents: Sequence[Any]) -> None:
        for (axis, size), extent in zip(axes, extents, strict=True):
            fractal = dst.shape[-1] if size is None else size
            _zero_from(dst, dst.ndim - 4 + axis, -(-np.asarray(extent) // fractal))

    return zero


def _zero_from(dst: np.ndarray, axis: int, count: np.ndarray) -> None:
    """``dst``'s entries along ``axis`` from ``count`` on set to zero (``count`` 0-d, or one
    per leading index of ``dst``). Only the tiles with entries past their count are
    written, one distinct count at a time (in a batch of tiles, usually the last block's):
    the others are left untouched."""
    before = (slice(None),) * (axis - count.ndim)
    if count.ndim == 0:  # one extent for every tile: a single slice, no grouping
        if count < dst.shape[axis]:
            dst[(*before, slice(int(count), None))] = 0
        return
    for first in np.unique(count[count < dst.shape[axis]]).tolist():
        tiles = np.broadcast_to(count == first, dst.shape[: count.ndim])
        dst[(tiles, *before, slice(first, None))] = 0


def img2col_params(op: Load3dOp) -> tuple[int, ...]:
    """(kh, kw, sh, sw, dh, dw, pad_left, out_width, lane_group, channels) of a
    ``tile.load3d`` (``lane_group``: lanes of one kernel position, 4 in C04 mode)."""
    return (
        *int_values(op.kernel_shape),
        *int_values(op.strides),
        *int_values(op.dilations),
        op.pad_left.value.data,
        op.out_width.value.data,
        op.lane_group,
        op.channels.value.data,
    )


def img2col(params: tuple[int, ...], pad: int = 0) -> Callable[..., tuple[()]]:
    """``tile.load3d`` on a batch of tiles: ``run(src, k1_start, dst, *valid)`` with a
    leading batch dim on ``src`` and ``dst`` (the same ``k1_start`` and valid channels for
    every tile); ``params`` as :func:`img2col_params`, ``pad`` what the padding reads as."""
    group = params[-2]

    def run(src: np.ndarray, k1_start: int, dst: np.ndarray, *valid: int) -> tuple[()]:
        t = src.shape[0]
        p = (*params[:-1], int(valid[0])) if valid else params
        gather = img2col_rows(p, k1_start, src.shape[1:], dst.shape[1:])
        out = dst if dst.flags.c_contiguous else np.empty(dst.shape, dst.dtype)
        runs = out.reshape(t, -1, group)  # a view: one row of a kernel position's lanes
        rows = src.reshape(t, -1, group)
        if rows.dtype == out.dtype:
            np.take(rows, gather.rows, axis=1, out=runs, mode="clip")
        else:
            runs[...] = np.take(rows, gather.rows, axis=1, mode="clip")
        if gather.outside is not None:
            runs[:, gather.outside] = pad
        if gather.lanes is not None:
            out[:, :, gather.lanes[0], :, gather.lanes[1]] = 0
        if out is not dst:
            dst[...] = out
        return ()

    return run


@tile_kernel(Load3dOp)
def load3d(op: Load3dOp) -> Kernel:
    batched = img2col_padded(op)

    def run(src: np.ndarray, k1_start: int, dst: np.ndarray, *valid: int) -> tuple[()]:
        return batched(src[None], k1_start, dst[None], *valid)

    return run


def img2col_padded(op: Load3dOp) -> Callable[..., tuple[()]]:
    """:func:`img2col` of ``op`` with its padding: the compile-time one, or the run-time
    pad taken as the last argument (one value for the batch)."""
    params = img2col_params(op)
    if op.pad_scalar is None:
        return img2col(params, op.padding)

    def run(src: np.ndarray, k1_start: int, dst: np.ndarray, *rest: Any) -> tuple[()]:
        valid, pad = op.split_padding(rest)
        return img2col(params, int(pad))(src, k1_start, dst, *valid)

    return run


@dataclass(frozen=True)
class Img2colRows:
    """Where ``tile.load3d`` reads, in runs of ``lane_group`` lanes (a kernel position's
    channels: C0, or 4 in C04 mode): ``rows`` indexes the feature map's runs for each run of
    the destination, flat in its (M1, K1, 16, C0 / lane_group) order; ``outside``: the
    destination runs whose window lies outside the image or past the kernel (read as
    zero), or None; ``lanes``: (K1 positions, lanes) at or beyond the valid channels, or
    None."""

    rows: np.ndarray
    outside: np.ndarray | None
    lanes: tuple[np.ndarray, np.ndarray] | None


@lru_cache(maxsize=4096)
def img2col_rows(
    params: tuple[int, ...],
    k1_start: int,
    src_shape: tuple[int, ...],
    dst_shape: tuple[int, ...],
) -> Img2colRows:
    """The gather of ``tile.load3d`` (see :class:`Img2colRows`). Output pixel ``m`` is
    output row ``m // out_width``, column ``m % out_width``. K is cut in runs of
    ``lane_group`` lanes; run ``r`` of K (``r = k1 · C0 / lane_group + j``) is kernel
    position ``(c1, kh, kw)`` in FRACTAL_Z order (C0 lanes: one run per fractal) or, in C04
    mode, kernel position ``r`` = ``kh · Kw + kw`` of the only C1 (FRACTAL_Z_C04's order;
    runs past Kh · Kw are outside)."""
    kh, kw, sh, sw, dh, dw, pad_left, out_w, group, channels = params
    m1, k1_count, m0, c0 = dst_shape
    _, c1_in, h_win, width, _ = src_shape
    per_fractal = c0 // group
    pixel = np.arange(m1 * m0)
    oh, ow = pixel // out_w, pixel % out_w
    run = (k1_start + np.arange(k1_count))[:, None] * per_fractal + np.arange(per_fractal)
    run = run.reshape(-1)  # (K1 * per_fractal) runs, in (k1, j) order
    c1, rest = run // (kh * kw), run % (kh * kw)
    ih = oh[:, None] * sh + (rest // kw)[None, :] * dh
    iw = ow[:, None] * sw + (rest % kw)[None, :] * dw - pad_left
    inside = (c1 < c1_in)[None, :] & (ih < h_win) & (iw >= 0) & (iw < width)
    index = np.where(inside, (c1[None, :] * h_win + ih) * width + iw, 0)

    def zz(a: np.ndarray) -> np.ndarray:
        """(M, K1 * per_fractal) -> flat (M1, K1, 16, per_fractal), the destination's order."""
        a = a.reshape(m1, m0, k1_count, per_fractal).transpose(0, 2, 1, 3)
        return np.ascontiguousarray(a).reshape(-1)

    rows = zz(index)
    outside_at = zz(~inside)
    outside = np.flatnonzero(outside_at) if outside_at.any() else None
    lane = np.arange(group)
    lane_valid = (c1[:, None] * group + lane[None, :]) < channels  # (K1 * per_fractal, group)
    lanes = None
    if not lane_valid.all():
        k_at, lane_at = np.nonzero(~lane_valid.reshape(k1_count, c0))
        lanes = (k_at, lane_at)
    for array in (rows, outside, *(lanes or ())):
        if array is not None:
            array.flags.writeable = False
    return Img2colRows(rows, outside, lanes)


FixpipeTiles = Callable[[np.ndarray, np.ndarray | None, int, np.ndarray | None], np.ndarray]


def fixpipe_tiles(op: FixpipeOp) -> FixpipeTiles:
    """The accumulator tiles as they leave (bias, deq, ReLU, the destination layout): a
    function of (accumulators with leading batch dims, bias as (..., N1, 1, 1, 16) or
    None, destination width, deq scales shaped as the bias or None) -> tiles with the same
    leading dims (an ``nc1hwc0`` tile is ``cols`` wide when the op says so, else as wide as
    its destination). A deq scale multiplies the exact int32 sum in float64 (exact: 31 x
    24 bits), so the cast into the destination rounds the product once, as ONNX's
    DequantizeLinear of an int32 does. Into int8 ("requant") the sum is requantised as
    the graph level's ``graph.requant_conv2d`` does (:func:`requantize_accumulator`: the
    product in float32, ReLU, round half to even, the zero point, saturation), and an
    ``nc1hwc0`` tile pairs its fractals into C1 slices of 32 lanes."""
    layout = op.layout.data
    relu = op.relu is not None and op.relu.value.data != 0
    requant = str(memref_element(op.dst)) == "i8"
    zero_point = op.zero_point.value.data if op.zero_point is not None else 0
    rows = op.rows.value.data if op.rows is not None else 0
    cols = op.cols.value.data if op.cols is not None else None
    rank = len(memref_shape(op.dst))

    def tiles(
        src: np.ndarray, bias: np.ndarray | None, width: int, deq: np.ndarray | None = None
    ) -> np.ndarray:
        width = width if cols is None else cols
        lead = src.shape[:-4]
        n1, m1, m0, n0 = src.shape[-4:]
        acc = src
        if bias is not None:
            acc = acc + bias.astype(src.dtype, copy=False)
        if requant:
            assert deq is not None
            acc = requantize_accumulator(acc, deq, zero_point, relu)
        elif deq is not None:
            acc = acc.astype(np.float64) * deq.astype(np.float64)
        if relu and not requant:
            acc = np.maximum(acc, 0)
        if layout == "nd":
            # (..., N1, M1, M0, N0) -> (..., M1, M0, N1, N0): a transpose (moveaxis's
            # checks cost more than the move of one tile)
            order = (*range(len(lead)), len(lead) + 1, len(lead) + 2, len(lead), len(lead) + 3)
            tile = acc.transpose(order).reshape(*lead, m1 * m0, n1 * n0)
            return tile.reshape(*lead, *(1,) * (rank - 2), m1 * m0, n1 * n0)
        if layout == "nz":
            return acc.reshape(*lead, *(1,) * (rank - 4), n1, m1, m0, n0)
        tile = acc.reshape(*lead, n1, m1 * m0, n0)[..., : rows * width, :]
        if requant:
            return _c0_pairs(tile).reshape(*lead, 1, -(-n1 // 2), rows, width, 2 * n0)
        return tile.reshape(*lead, 1, n1, rows, width, n0)

    return tiles


def _c0_pairs(tile: np.ndarray) -> np.ndarray:
    """``(..., N1, P, 16)`` fractals as ``(..., ceil(N1 / 2), P, 2, 16)``: fractal ``n`` in
    lanes ``16·(n mod 2)`` on of slice ``n // 2`` (an odd last fractal's upper lanes 0)."""
    *lead, n1, pixels, n0 = tile.shape
    if n1 % 2:
        tile = np.concatenate([tile, np.zeros((*lead, 1, pixels, n0), tile.dtype)], axis=-3)
    pairs = tile.reshape(*lead, -(-n1 // 2), 2, pixels, n0)
    return np.moveaxis(pairs, -3, -2)


def fixpipe_valid(op: FixpipeOp, tile: np.ndarray, m: int | None, n: int | None) -> np.ndarray:
    """The part of a fixpipe ``tile`` (from :func:`fixpipe_tiles`) that its valid ``m`` x
    ``n`` elements leave (None: that axis whole): ``nd`` rows / columns, ``nz`` the
    fractals holding them."""
    if m is None and n is None:
        return tile
    if op.layout.data == "nz":
        mf, nf = op.valid_fractals(m, n)
        return tile[..., :nf, :mf, :, :]
    rows, cols = tile.shape[-2:]
    return tile[..., : rows if m is None else m, : cols if n is None else n]


@tile_kernel(FixpipeOp)
def fixpipe(op: FixpipeOp) -> Kernel:
    tiles = fixpipe_tiles(op)
    rank = len(memref_shape(op.dst))
    has_bias = op.bias is not None
    has_deq = op.deq is not None
    has_m, has_n = op.m is not None, op.n is not None

    def run(src: np.ndarray, dst: np.ndarray, *rest: Any) -> tuple[()]:
        offsets = rest[:rank]
        bias = rest[rank].reshape(src.shape[0], 1, 1, 16) if has_bias else None
        deq = rest[rank + has_bias].reshape(src.shape[0], 1, 1, 16) if has_deq else None
        valid = iter(rest[rank + has_bias + has_deq :])
        m = int(next(valid)) if has_m else None
        n = int(next(valid)) if has_n else None
        tile = fixpipe_valid(op, tiles(src, bias, dst.shape[3] if dst.ndim > 3 else 0, deq), m, n)
        found = window(tile.shape, tile.shape, dst.shape, [0] * rank, offsets)
        if found is not None:
            cast_into(dst, found[1], tile[found[0]])
        return ()

    return run
