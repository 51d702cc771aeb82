"""ScatterND on the vector core: GatherND's inverse, a slice DMA per index tuple.

``graph.scatter_nd`` with indices ``[..., K]`` and updates ``[..., *data.shape[K:]]``
copies ``data`` to the output, then, per index tuple ``(i_0, ..., i_{K-1})`` in row-major
order, writes the update slice ``updates[n]`` — the ``inner`` elements of the axes after
the K addressed ones, contiguous in a row-major tensor — at the output's row
``(((i_0 · d_1) + i_1) · d_2 + ...)`` of the ``[d_0 · ... · d_{K-1}, inner]`` view; with a
``reduction`` (add, mul, max, min) the output slice is loaded, combined with the update
on the vector unit and stored back. GE runs ScatterNd / ScatterNdUpdate / ScatterNdAdd as
AI-core ops; PyTorch's ``index_put_`` / ``index_add_`` (a MoE router's per-expert rows:
JetMoE) export as this op. The kernel, as Ascend C would write it::

    for c in 0 .. size(data) step C:
      copy_flat data[c] -> copy_ub; copy_flat copy_ub -> out[c]          MTE2, MTE3
    for t in 0 .. N step T:
      copy_flat indices[t*K]          -> idx_ub  (T, K)                  MTE2
      for j in 0 .. min(T, N - t):
        %row = (get_value idx_ub[j, k] {bound = d_k}) combined           S: GetValue
        for s in 0 .. inner step S:                                      (one trip: S = inner)
          copy_flat updates[(t+j)*inner + s] -> upd_ub (S)               MTE2
          none:      copy_flat upd_ub -> out[%row*inner + s]             MTE3
          reduction: copy_flat out[%row*inner + s] -> cur_ub             MTE2 (after MTE3)
                     v{add,mul,max,min} cur_ub, upd_ub -> cur_ub         V
                     copy_flat cur_ub -> out[%row*inner + s]             MTE3

Order: the tuples are applied one after the other on one core, so among equal tuples the
last update wins (``none``) and a reduction combines them in row-major order — numpy's
order and the graph level's (and onnxruntime's); ONNX leaves duplicates undefined for
``none``. That is why nothing is split over the cores: a slice could be written by any
tuple. ``inject-sync`` orders the stores to the output before the loads of it (an
MTE3 -> MTE2 flag on the output buffer). A negative index counts from the end; one outside
``[-d_k, d_k)`` is an ``IndexError`` of the executors, as GatherND's and the graph
level's. The slices' DMAs move exactly ``S`` elements (Ascend C's ``DataCopyPad`` on the
chips modelled), so a slice of any byte length writes no neighbour; a slice larger than
its share of UB is moved in chunks ``S`` that divide it. The cost is the model's for the
ops used: a DMA per slice (and chunk), a scalar read per index component.

Stays on the host (the reason is reported): tensors that are not row-major, operands
computed inside the kernel, tuples addressing every axis of a rank-0 slice set (``K`` of
0), a reduction on an element type without the vector op (64-bit integers), an empty
tensor.
"""

from __future__ import annotations

from math import prod

from xdsl.ir import SSAValue

from tilegraph.dialects.graph.indexing import ScatterNDOp
from tilegraph.dialects.tile import BINARY_OPS, CopyFlatOp
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody, is_row_major, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.gather import (
    DMA_BLOCK_BYTES,
    largest_divisor,
    tile_row_loop,
    tuple_row,
)

COMBINE = {"add": "vadd", "mul": "vmul", "max": "vmax", "min": "vmin"}
"""The vector op each ``reduction`` combines an output slice and its update with."""

REDUCIBLE = ("f32", "f16", "bf16", "i32", "i16")
"""Element types whose ``COMBINE`` ops the vector unit has (docs/hardware.md: no 64-bit
integer arithmetic on the vector unit)."""


def _operands(body: KernelBody) -> tuple[ScatterNDOp, list[SSAValue], SSAValue] | str:
    """The lone scatter_nd of ``body``, its operands' GM sources and its output's GM
    buffer; or why the kernel is not such a scatter."""
    if len(body.ops) != 1 or not isinstance(body.ops[0], ScatterNDOp):
        return "not a lone scatter_nd"
    op = body.ops[0]
    values = [op.data, op.indices, op.updates]
    sources = [body.source(v) for v in values]
    written = dict(body.writes).get(op.output)
    if any(s is None for s in sources) or written is None:
        return "a scatter_nd of a value computed inside the kernel"
    if not all(is_row_major(tensor_of(v)) for v in [*values, op.output]):
        return "a scatter_nd of a tensor that is not row-major"
    return op, [s for s in sources if s is not None], written


def emit_scatter_nd_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a lone ``graph.scatter_nd`` as a copy of the data, then scalar reads and slice
    DMAs (see the module docstring); returns why it cannot (None when emitted)."""
    found = _operands(body)
    if isinstance(found, str):
        return found
    op, (data, indices, updates), out = found
    data_type, index_type = tensor_of(op.data), tensor_of(op.indices)
    shape = tuple(int(d) for d in data_type.storage_shape)
    index_shape = tuple(int(d) for d in index_type.storage_shape)
    width = index_shape[-1]
    if width == 0:
        return "a scatter_nd of empty index tuples (the whole tensor replaced)"
    depth, inner, count = shape[:width], prod(shape[width:]), prod(index_shape[:-1])
    if prod(shape) == 0 or count == 0 or inner == 0:
        return "a scatter_nd of an empty tensor"
    element = data_type.element_type
    reduction = str(op.attr("reduction"))
    if reduction != "none" and str(element) not in REDUCIBLE:
        return f"a scatter_nd {reduction} on {element}"
    eb, ib = element_bytes(element), element_bytes(index_type.element_type)
    quarter = b.ub_budget() // 4  # data copy, index tile; the slices take half
    slice_room = 2 * quarter // (2 if reduction != "none" else 1)
    chunk = largest_divisor(inner, slice_room // eb)
    if chunk * eb < min(inner * eb, DMA_BLOCK_BYTES):
        return f"a scatter_nd slice of {inner} elements with no chunk that fits UB"
    rows = max(1, min(count, quarter // (width * ib)))
    copy = min(prod(shape), quarter // DMA_BLOCK_BYTES * DMA_BLOCK_BYTES // eb)
    if b.dry_run:
        return None
    zero = b.index(0)
    copy_ub = b.buffer([copy], element, "UB", "copy_ub")
    with b.loop(prod(shape), copy, "c") as c:  # the ragged last copy is cut at the end
        b.add(CopyFlatOp(data, c, copy_ub, zero, copy))
        b.add(CopyFlatOp(copy_ub, zero, out, c, copy))
    idx_ub = b.buffer([rows, width], index_type.element_type, "UB", "idx_ub")
    upd_ub = b.buffer([chunk], element, "UB", "upd_ub")
    cur_ub = b.buffer([chunk], element, "UB", "cur_ub") if reduction != "none" else None
    with b.loop(count, rows, "t") as t:  # in order, on one core: the last tuple wins
        b.add(CopyFlatOp(indices, b.affine(t, width), idx_ub, zero, rows * width))
        with tile_row_loop(b, t, rows, count) as j:
            row = tuple_row(b, idx_ub, j, depth)
            row.name_hint = "row"
            src_at, dst_at = b.affine(b.add_index(t, j), inner), b.affine(row, inner)
            with b.loop(inner, chunk, "s") as s:
                b.add(CopyFlatOp(updates, b.add_index(src_at, s), upd_ub, zero, chunk))
                at = b.add_index(dst_at, s)
                stored = upd_ub
                if cur_ub is not None:  # combined with what the output holds there now
                    b.add(CopyFlatOp(out, at, cur_ub, zero, chunk))
                    b.add(BINARY_OPS[COMBINE[reduction]](cur_ub, upd_ub, cur_ub))
                    stored = cur_ub
                b.add(CopyFlatOp(stored, zero, out, at, chunk))
    b.tiles = 1
    return None
