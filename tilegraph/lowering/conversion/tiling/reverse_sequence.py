"""ReverseSequence on the vector core: a row gather whose rows are computed, not read.

``graph.reverse_sequence`` of ``x`` ``[T, B, ...]`` (``time_axis = 0``, ``batch_axis =
1``) or ``[B, T, ...]`` (the other way round) with lengths ``len[B]`` copies, per step
``t`` and batch entry ``b``, the *row* (the ``inner`` elements of the axes after the first
two, contiguous in a row-major tensor) of step::

    src(t, b) = len[b] - 1 - t   if t < len[b]
                t                otherwise

So it is :mod:`.gather`'s kernel over the ``T · B`` rows in order, the index of each row
computed on the scalar unit instead of read from an index tile::

    copy_flat lens -> lens_ub  (B)                      MTE2, once
    for r0 in 0 .. T·B step R:                          tile.parallel (split-cores)
      for j in 0 .. min(R, T·B - r0):
        (t, b) = divmod(r0 + j, B)    | (b, t) = divmod(r0 + j, T)
        %len = get_value lens_ub[b]                     S: LocalTensor::GetValue
        %src = select(t < min(%len, T), %len - 1 - t, t)
        copy_flat x[row(%src, b) * inner] -> rows_ub[j * inner] (inner, partial)   MTE2
      copy_flat rows_ub -> y[r0 * inner]   (R rows, cut at the end)                 MTE3

A length above ``T`` reverses all ``T`` steps (the graph level's slice does the same); a
negative one reverses none. The tiles, the chunking of a row larger than UB and the
unaligned-row rule are :func:`~.gather.plan_gather`'s. Compile-time lengths (a few,
inlined in the kernel body) give compile-time rows: the row DMAs are unrolled — unless
they are all one length (tf2onnx's ReverseV2 of whole sequences), which the scalar code
uses as a constant in the tile loop instead (an unrolled tile per row group needed more
flags than a pipe pair has on a small UB).

The cost is the cycle model's for these tile ops: a scalar read and a few index operations
per row, one MTE2 DMA per row and one MTE3 DMA per tile.

Rows under one 32-byte DMA block (a 2-D ``[T, B]`` input, a ``[T, B, 1]`` bool mask) with
compile-time lengths are a fixed permutation of the rows: picked through UB as
:mod:`.gather_ub` gathers short rows. Stays on the host (the reason is reported): short
rows with run-time lengths (a DMA per element), tensors that are not row-major, lengths computed
inside the kernel, more than :data:`UNROLLED_ROWS` compile-time rows.
"""

from __future__ import annotations

from math import prod

import numpy as np
from xdsl.dialects import arith
from xdsl.ir import SSAValue

from tilegraph.dialects.graph.base import constant_value
from tilegraph.dialects.graph.indexing import ReverseSequenceOp
from tilegraph.dialects.tile import CopyFlatOp, GetValueOp
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody, is_row_major, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.gather import (
    DMA_BLOCK_BYTES,
    RowOf,
    emit_row_gather,
    plan_gather,
)
from tilegraph.lowering.conversion.tiling.gather_ub import emit_ub_gather

UNROLLED_ROWS = 256
"""The most rows compile-time lengths unroll (each is a DMA in the kernel body)."""


def source_steps(lengths: np.ndarray, steps: int) -> np.ndarray:
    """``src[t, b]``: the step row ``(t, b)`` of the output copies (see the module
    docstring), for compile-time ``lengths``."""
    t = np.arange(steps)[:, None]
    n = np.minimum(np.asarray(lengths).reshape(1, -1), steps)
    return np.where(t < n, n - 1 - t, t)


def _flat_rows(src: np.ndarray, time_axis: int) -> list[int]:
    """The data rows the output rows copy, in the output's order."""
    steps, batch = src.shape
    if time_axis == 0:
        return [int(src[t, b]) * batch + b for t in range(steps) for b in range(batch)]
    return [b * steps + int(src[t, b]) for b in range(batch) for t in range(steps)]


def _row_function(
    b: KernelBuilder, lens: SSAValue | int, shape: tuple[int, int], time_axis: int
) -> RowOf:
    """The scalar code computing the data row of output row ``r`` (``shape``: the first two
    axes) from the lengths in ``lens`` (UB), or from one compile-time length for every
    entry (tf2onnx's ReverseV2 of a whole sequence: the lengths are all ``T``)."""
    steps = shape[time_axis]

    def row_of(r: SSAValue) -> SSAValue:
        second = b.index(shape[1])
        major = b.add(arith.FloorDivSIOp(r, second)).results[0]
        minor = b.add(arith.RemSIOp(r, second)).results[0]
        step, entry = (major, minor) if time_axis == 0 else (minor, major)
        if isinstance(lens, int):
            length = b.index(max(0, min(lens, steps)))
        else:
            length = b.add(GetValueOp(lens, [entry])).results[0]
            length = b.add(arith.MinSIOp(length, b.index(steps))).results[0]
        length.name_hint = "len"
        inside = b.add(arith.CmpiOp(step, length, "slt")).results[0]
        back = b.add(arith.SubiOp(b.affine(length, 1, -1), step)).results[0]
        src = b.add(arith.SelectOp(inside, back, step)).results[0]
        if time_axis == 0:
            return b.add_index(b.affine(src, shape[1]), entry)
        return b.add_index(b.affine(entry, steps), src)

    return row_of


def emit_reverse_sequence_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a lone ``graph.reverse_sequence`` as computed row DMAs; returns why it cannot
    (None when emitted)."""
    if len(body.ops) != 1 or not isinstance(body.ops[0], ReverseSequenceOp):
        return "not a lone reverse_sequence"
    op = body.ops[0]
    table, written = body.source(op.input), dict(body.writes).get(op.Y)
    if table is None or written is None:
        return "a reverse_sequence of a value computed inside the kernel"
    if not all(is_row_major(tensor_of(v)) for v in (op.input, op.Y)):
        return "a reverse_sequence of a tensor that is not row-major"
    data_type = tensor_of(op.input)
    shape = tuple(int(d) for d in data_type.storage_shape)
    time_axis = int(op.attr("time_axis"))
    inner, count = prod(shape[2:]), shape[0] * shape[1]
    eb = element_bytes(data_type.element_type)
    if inner * count == 0:
        return "a reverse_sequence with an empty output"
    lens = body.source(op.sequence_lens)
    if inner * eb < DMA_BLOCK_BYTES:
        return _short_rows(b, op, table, written, shape, time_axis, lens is not None)
    picked: list[int] | RowOf
    if lens is not None:
        picked = _row_function(b, lens, (shape[0], shape[1]), time_axis)
    else:
        values = constant_value(op.sequence_lens)
        if values is None:
            return "a reverse_sequence of lengths computed inside the kernel"
        flat = np.asarray(values).reshape(-1)
        if flat.size and (flat == flat[0]).all():  # one length: rows computed in a loop
            picked = _row_function(b, int(flat[0]), (shape[0], shape[1]), time_axis)
        elif count > UNROLLED_ROWS:
            return f"a reverse_sequence of compile-time lengths over {UNROLLED_ROWS} rows"
        else:
            picked = _flat_rows(source_steps(values, shape[time_axis]), time_axis)
    lens_type = tensor_of(op.sequence_lens).element_type
    batch = shape[1 - time_axis]
    lens_bytes = -(-batch * element_bytes(lens_type) // DMA_BLOCK_BYTES) * DMA_BLOCK_BYTES
    cores = b.hw.vector_cores if callable(picked) else 1  # compile-time rows: unrolled
    plan = plan_gather((count, inner), 0, count, eb, 0, b.ub_budget() - lens_bytes, cores)
    if isinstance(plan, str):
        return plan
    if b.dry_run:
        return None
    if lens is not None:  # the lengths into UB once: a scalar read of UB, not of GM, per row
        lens_ub = b.buffer([batch], lens_type, "UB", "lens_ub")
        b.add(CopyFlatOp(lens, b.index(0), lens_ub, b.index(0), batch))
        picked = _row_function(b, lens_ub, (shape[0], shape[1]), time_axis)
    emit_row_gather(b, plan, table, written, picked, data_type.element_type, lens_type)
    return None


def _short_rows(
    b: KernelBuilder,
    op: ReverseSequenceOp,
    table: SSAValue,
    written: SSAValue,
    shape: tuple[int, ...],
    time_axis: int,
    runtime_lengths: bool,
) -> str | None:
    """Rows under one DMA block with compile-time lengths: the reversal is a fixed
    permutation of the ``T · B`` rows, so :func:`~.gather_ub.emit_ub_gather` picks them
    through UB (the table in, a ``vpick``, the rows out) as a gather of short rows does
    (a tf2onnx bidirectional LSTM's ``[T, B, 1]`` bool mask). Run-time lengths would need
    the permutation computed per row on the scalar unit, a DMA per element: not done."""
    too_short = f"a reverse_sequence of rows under {DMA_BLOCK_BYTES} bytes"
    values = None if runtime_lengths else constant_value(op.sequence_lens)
    if values is None:
        return f"{too_short} with lengths known only at run time"
    count = shape[0] * shape[1]
    rows = _flat_rows(source_steps(values, shape[time_axis]), time_axis)
    data_type = tensor_of(op.input)
    return emit_ub_gather(
        b,
        table,
        written,
        rows,
        (count, prod(shape[2:])),
        0,
        count,
        data_type.element_type,
        tensor_of(op.sequence_lens).element_type,
    )
