"""GatherND on the vector core: the rows of :mod:`.gather`, each named by an index tuple.

``graph.gather_nd`` with ``batch_dims = 0`` and indices ``[..., K]`` copies, per index
tuple ``(i_0, ..., i_{K-1})``, the row ``data[i_0, ..., i_{K-1}, ...]`` — the elements of
the axes after the K addressed ones, contiguous in a row-major tensor. That is a gather
along the first axis of ``data`` viewed as ``[d_0 · ... · d_{K-1}, inner]`` at the row
``(((i_0 · d_1) + i_1) · d_2 + ...)``: the same tiles and DMAs as :mod:`.gather` (GE's
GatherNd runs on the AI core as its GatherV2 does), the index tile holding ``K`` values per
row, each read on the scalar unit and wrapped against its own axis (a negative index counts
from the end; outside ``[-d_k, d_k)`` is an ``IndexError`` of the executors). PyTorch's
``x[torch.arange(b), ids.argmax(-1)]`` (CLIP's pooling, a classifier's last-token pick)
exports as this op.

Compile-time indices (few, inlined in the kernel body) are combined at compile time and
their row DMAs unrolled.

Rows under one 32-byte DMA block (a pick of single elements) take a block slot each and
their tile is packed before its store, as :mod:`.gather`'s short rows.

Stays on the host (the reason is reported): ``batch_dims > 0``, tensors that are not
row-major.
"""

from __future__ import annotations

from math import prod

import numpy as np

from tilegraph.dialects.graph.base import constant_value
from tilegraph.dialects.graph.indexing import GatherNDOp
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.gather import (
    DMA_BLOCK_BYTES,
    emit_row_gather,
    plan_gather,
    too_many_unrolled_rows,
)
from tilegraph.lowering.conversion.tiling.gather_views import viewed_gather


def _constant_rows(op: GatherNDOp, depth: tuple[int, ...]) -> list[int] | str | None:
    """The flat rows compile-time index tuples name (negatives wrapped), None when the
    indices are run-time data, or why they cannot be used."""
    values = constant_value(op.indices)
    if values is None:
        return None
    tuples = np.asarray(values).reshape(-1, len(depth))
    sizes = np.asarray(depth)
    if ((tuples < -sizes) | (tuples >= sizes)).any():
        return f"a gather_nd index out of range for axes of {list(depth)}"
    wrapped = np.where(tuples < 0, tuples + sizes, tuples)
    return [int(np.ravel_multi_index(tuple(t), depth)) for t in wrapped]


def emit_gather_nd_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a lone ``graph.gather_nd`` as scalar reads and row DMAs; returns why it cannot
    (None when emitted)."""
    found = viewed_gather(body, GatherNDOp, "gather_nd")
    if isinstance(found, str):
        return found
    op, table, written = found.op, found.table, found.out
    assert isinstance(op, GatherNDOp)
    if int(op.attr("batch_dims")) != 0:
        return "a gather_nd with batch_dims"
    data_type, index_type = tensor_of(op.data), tensor_of(op.indices)
    shape = tuple(int(d) for d in data_type.storage_shape)
    index_shape = tuple(int(d) for d in index_type.storage_shape)
    depth = shape[: index_shape[-1]]
    inner = prod(shape[len(depth) :])
    count = prod(index_shape[:-1])
    if count == 0 or prod(shape) == 0:
        return "a gather_nd with an empty output"
    eb = element_bytes(data_type.element_type)
    indices = found.indices or _constant_rows(op, depth)
    if indices is None or isinstance(indices, str):
        return indices or "a gather_nd of indices computed inside the kernel"
    if isinstance(indices, list) and too_many_unrolled_rows(count, inner * eb):
        return (
            f"a gather_nd of {count} compile-time rows of {inner * eb} B (not a multiple of "
            f"{DMA_BLOCK_BYTES}: a tile each)"
        )
    plan = plan_gather(
        (prod(depth), inner),
        0,
        count,
        eb,
        len(depth) * element_bytes(index_type.element_type),
        b.ub_budget(),
        1 if isinstance(indices, list) else b.hw.vector_cores,
    )
    if isinstance(plan, str):
        return plan
    if b.dry_run:
        return None
    emit_row_gather(
        b,
        plan,
        table,
        written,
        indices,
        data_type.element_type,
        index_type.element_type,
        () if isinstance(indices, list) else depth,
    )
    return None
