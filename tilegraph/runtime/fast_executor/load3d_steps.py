"""The nest form of ``tile.load3d`` whose K start (or valid channels) varies along the
batch: the img2col of every K step of every tile of a nest in one gather.

Inside a K loop run as one (:mod:`.batching`), each step's ``load3d`` starts at its own
``k1_start``; without this form the batched img2col ran once per step
(:func:`~tilegraph.runtime.fast_executor.batching.per_index_value`). Here the steps' gathers
(:func:`~tilegraph.runtime.tile_interpreter.fractal.img2col_rows`, the kernel's own) are
laid side by side into one index over the flattened feature maps of the batch, kept per
call site for the index values and shapes it saw (they repeat from call to call), and the
pad and the invalid lanes are written through precomputed flat positions afterwards — the
kernel's order (gather, pad, lanes), so the bytes are the kernel's.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any

import numpy as np

from tilegraph.dialects.tile.fractal import Load3dOp
from tilegraph.dialects.tile.padding import declines_runtime_pad
from tilegraph.runtime.fast_executor.forms import nest_kernel
from tilegraph.runtime.tile_interpreter.fractal import img2col_params, img2col_rows
from tilegraph.runtime.tile_interpreter.kernels import Kernel

_PLANS_PER_SITE = 64
"""Gathers kept per call site (one per distinct set of index values and shapes)."""


class _Plan:
    """One batch's gather: ``index`` (count, runs) into the source's runs (in the order of
    the destination's bytes); ``pads`` / ``zeros``: index tuples into the destination
    (its runs viewed as ``(*batch, M1, K1, 16, K0 / group, group)`` / its elements) read
    as the pad / as zero, one per distinct K start (a few points' worth of ints each, not
    one per element)."""

    def __init__(self, index: np.ndarray, pads: list[Any], zeros: list[Any]):
        self.index, self.pads, self.zeros = index, pads, zeros


def _key(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return (value.shape, value.tobytes())
    return int(value)


def _storage_order(dst: np.ndarray) -> tuple[int, ...] | None:
    """The axis order in which a non-contiguous ``dst`` is a contiguous array with its last
    axis last (a transposed view: row-major slots), or None (contiguous, or not a
    transposition of contiguous bytes)."""
    if dst.flags.c_contiguous:
        return None
    order = tuple(sorted(range(dst.ndim), key=lambda i: -dst.strides[i]))
    if order[-1] != dst.ndim - 1 or not dst.transpose(order).flags.c_contiguous:
        return None
    return order


def _in_storage_order(
    plan: _Plan, shape: tuple[int, ...], order: tuple[int, ...], group: int
) -> _Plan:
    """``plan`` for a destination of ``shape`` whose bytes lie in axis ``order``
    (:func:`_storage_order`): its gather in the order of the bytes."""
    runs_shape = (*shape[:-1], shape[-1] // group)
    index = plan.index.reshape(runs_shape).transpose(order).reshape(plan.index.shape[0], -1)
    return _Plan(np.ascontiguousarray(index), plan.pads, plan.zeros)


@nest_kernel(Load3dOp)
def nest_load3d(
    op: Load3dOp, batched: Sequence[bool], rank: int, summed: int | None
) -> Kernel | None:
    """Operands (src, k1_start, dst, *valid) with ``rank`` leading batch dims where
    ``batched``; handles a varying ``k1_start`` or valid-channel count into a batched
    destination (else None: the flattened batched form does it)."""
    if not batched[2] or not (batched[1] or any(batched[3:])) or declines_runtime_pad(op, batched):
        return None
    params = img2col_params(op)
    group = params[-2]
    src_batched = batched[0]
    plans: dict[Any, _Plan] = {}

    def plan_for(src: np.ndarray, k1: Any, dst: np.ndarray, valid: Sequence[Any]) -> _Plan:
        batch = dst.shape[:rank]
        count = prod(batch)
        src_tile = src.shape[rank:] if src_batched else src.shape
        dst_tile = dst.shape[rank:]
        src_runs = prod(src_tile) // group
        tile_runs = prod(dst_tile) // group
        starts = np.broadcast_to(np.asarray(k1), batch).reshape(-1)
        channels = (
            np.broadcast_to(np.asarray(valid[0]), batch).reshape(-1)
            if valid
            else np.full(count, params[-1])
        )
        if src_batched:
            src_item = np.arange(prod(src.shape[:rank])).reshape(src.shape[:rank])
            items = np.broadcast_to(src_item, batch).reshape(-1)
        else:
            items = np.zeros(count, np.int64)
        index = np.empty((count, tile_runs), np.int64)
        pads: list[Any] = []
        zeros: list[Any] = []
        for start, valid_channels in set(zip(starts.tolist(), channels.tolist(), strict=True)):
            points = np.flatnonzero((starts == start) & (channels == valid_channels))
            gather = img2col_rows((*params[:-1], valid_channels), start, src_tile, dst_tile)
            rows = np.clip(gather.rows, 0, src_runs - 1)  # the kernel's take(mode="clip")
            index[points] = items[points, None] * src_runs + rows[None, :]
            at = tuple(c[:, None] for c in np.unravel_index(points, batch))
            if gather.outside is not None:
                runs_shape = (*dst_tile[:-1], dst_tile[-1] // group)
                outside = np.unravel_index(gather.outside, runs_shape)
                pads.append((*at, *(c[None, :] for c in outside)))
            if gather.lanes is not None:
                k_at, lane_at = (c[None, :] for c in gather.lanes)
                zeros.append((*at, slice(None), k_at, slice(None), lane_at))
        return _Plan(index, pads, zeros)

    def run(src: np.ndarray, k1: Any, dst: np.ndarray, *rest: Any) -> tuple[()]:
        valid, pad = op.split_padding(rest)
        order = _storage_order(dst)
        key = (src.shape, dst.shape, order, _key(k1), *(_key(v) for v in valid))
        plan = plans.get(key)
        if plan is None:
            plan = plan_for(src, k1, dst, valid)
            if order is not None:
                plan = _in_storage_order(plan, dst.shape, order, group)
            if len(plans) < _PLANS_PER_SITE:
                plans[key] = plan
        if order is None and not dst.flags.c_contiguous:
            out = np.empty(dst.shape, dst.dtype)
        else:  # the bytes of dst in their own order (row-major slots, .row_slots)
            out = dst if order is None else dst.transpose(order)
        runs = out.reshape(plan.index.shape[0], -1, group)
        source = src.reshape(-1, group)
        if source.dtype == out.dtype:
            np.take(source, plan.index, axis=0, out=runs, mode="clip")
        else:
            runs[...] = np.take(source, plan.index, axis=0, mode="clip")
        logical = dst if order is not None else out  # pads and zeros by logical index
        if plan.pads:
            runs_view = logical.reshape(*logical.shape[:-1], -1, group)
            for at in plan.pads:
                runs_view[at] = pad
        for at in plan.zeros:
            logical[at] = 0
        if order is None and out is not dst:
            dst[...] = out
        return ()

    return run
