"""Batched form of ``tile.copy``: the whole windows of a batch in one gather and one
scatter, the cut ones through the op's kernel (:mod:`.windows`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tilegraph.dialects.tile.base import memref_shape, scope_of
from tilegraph.dialects.tile.dma import CopyOp
from tilegraph.runtime.fast_executor.forms import batched_kernel
from tilegraph.runtime.fast_executor.windows import copy_cut_items, copy_whole_windows
from tilegraph.runtime.tile_interpreter.kernels import Kernel, kernel_of


@batched_kernel(CopyOp)
def batched_copy(op: CopyOp, batched: Sequence[bool]) -> Kernel | None:
    rank = len(memref_shape(op.src))
    src_batched, dst_batched = batched[0], batched[rank + 1]
    stores = scope_of(op.dst) == "GM"
    single = kernel_of(op)

    def run(src: np.ndarray, *rest: Any) -> tuple[()]:
        src_offsets, dst, dst_offsets = rest[:rank], rest[rank], rest[rank + 1 :]
        count = next(len(a) for a, m in zip((src, *rest), batched, strict=True) if m)
        item = src.shape[src_batched:] if stores else dst.shape[dst_batched:]
        cut = copy_whole_windows(
            count, item, src, src_offsets, src_batched, dst, dst_offsets, dst_batched
        )
        copy_cut_items(single, (src, *rest), batched, cut)
        return ()

    return run
