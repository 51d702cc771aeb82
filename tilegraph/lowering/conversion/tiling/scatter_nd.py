"""ScatterND on the vector core: GatherND's inverse, a slice DMA per index tuple.

``graph.scatter_nd`` with indices ``[..., K]`` and updates ``[..., *data.shape[K:]]``
copies ``data`` to the output, then, per index tuple ``(i_0, ..., i_{K-1})`` in row-major
order, writes the update slice ``updates[n]`` — the ``inner`` elements of the axes after
the K addressed ones, contiguous in a row-major tensor — at the output's row
``(((i_0 · d_1) + i_1) · d_2 + ...)`` of the ``[d_0 · ... · d_{K-1}, inner]`` view. With a
``reduction`` the update is combined with the output's slice: by the DMA itself for add /
max / min of a type the chip's DMA combines (an atomic store, Ascend C's ``SetAtomicAdd``
/ ``Max`` / ``Min``: :attr:`~tilegraph.hardware.HardwareModel.dma_atomic_types`), else
(mul, or another type) the output's slice is loaded, combined with the update on the
vector unit and stored back. GE runs ScatterNd / ScatterNdUpdate / ScatterNdAdd as AI-core
ops; PyTorch's ``index_put_`` / ``index_add_`` (a MoE router's per-expert rows: JetMoE)
export as this op. The kernel, as Ascend C would write it::

    for c in 0 .. size(data) step C:
      copy_flat data[c] -> copy_ub; copy_flat copy_ub -> out[c]          MTE2, MTE3
    for t in 0 .. N step T:
      copy_flat indices[t*K]          -> idx_ub  (T, K)                  MTE2
      [whole slices: copy_flat updates[t*inner] -> upd_ub (T, inner)]    MTE2
      for j in 0 .. min(T, N - t):
        %row = (get_value idx_ub[j, k] {bound = d_k}) combined           S: GetValue
        whole:  copy_flat upd_ub[j*inner] -> out[%row*inner] {atomic?}   MTE3
        else, for s in 0 .. inner step S:
          copy_flat updates[(t+j)*inner + s] -> upd_ub (S)               MTE2
          none / atomic: copy_flat upd_ub -> out[%row*inner + s] {atomic?}     MTE3
          otherwise:     copy_flat out[%row*inner + s] -> cur_ub         MTE2 (after MTE3)
                         v{add,mul,max,min} cur_ub, upd_ub -> cur_ub     V
                         copy_flat cur_ub -> out[%row*inner + s]         MTE3

*Whole* slices — stored as they are or atomically, a multiple of 32 bytes (a DMA's UB
address is 32-byte aligned) and ``T`` of them fitting their share of UB — come in one load
per index tile (a tile's updates are contiguous in GM); others one by one, in chunks ``S``
that divide a slice larger than its share of UB.

Slices under a DMA block (``inner`` elements of fewer than 32 bytes: one element for a
full-index ``index_put``) do not take this path: they go through UB-resident blocks of the
output, the blocks over the cores (:mod:`.scatter_ub`); this kernel is their fallback
when not even a block of one row fits.

Order: the tuples are applied one after the other on one core, so among equal tuples the
last update wins (``none``) and a reduction combines them in row-major order — numpy's
order and the graph level's (and onnxruntime's); ONNX leaves duplicates undefined for
``none``. A slice could be written by any tuple, and a core owning a part of the output
would have to read every tuple to find its own (:mod:`.scatter_ub` does, where the scan is
cheap next to a DMA per slice); here, with a DMA per slice whichever core issues it, one
core applies them all. The stores queue on MTE3 behind the data's copy and each other, in
order; where a slice is loaded back, ``inject-sync`` orders each store to the output
before the next load of it (an MTE3 -> MTE2 flag on the output buffer): a GM round trip
per tuple. A negative
index counts from the end; one outside ``[-d_k, d_k)`` is an ``IndexError`` of the
executors, as GatherND's and the graph level's. The slices' DMAs move exactly their
elements (Ascend C's ``DataCopyPad`` on the chips modelled), so a slice of any byte length
writes no neighbour. The cost is the model's for the ops used: a DMA per slice (and
chunk), a scalar read per index component; an atomic store is charged as a plain one (no
figure of its own is published).

Stays on the host (the reason is reported): tensors that are not row-major, operands
computed inside the kernel, index tuples of length 0 (the whole tensor replaced), a
reduction on an element type without the vector op (64-bit integers), empty data. A scatter
of no tuples copies its data to the output (in chunks over the cores).
"""

from __future__ import annotations

from math import prod

from xdsl.ir import SSAValue

from tilegraph.dialects.graph.indexing import ScatterNDOp
from tilegraph.dialects.tile import BINARY_OPS, CopyFlatOp
from tilegraph.dialects.tile.base import element_bytes, memref_shape
from tilegraph.lowering.conversion.kernel_body import KernelBody, is_row_major, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.gather import (
    DMA_BLOCK_BYTES,
    largest_divisor,
    tile_row_loop,
    tuple_row,
)
from tilegraph.lowering.conversion.tiling.scatter_ub import (
    copy_over_cores,
    copy_through_ub,
    emit_ub_scatter,
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


def _slice_by_chunks(
    b: KernelBuilder,
    source: tuple[SSAValue, SSAValue],
    target: tuple[SSAValue, SSAValue],
    inner: int,
    upd_ub: SSAValue,
    cur_ub: SSAValue | None,
    op: ScatterNDOp,
) -> None:
    """One update slice of ``inner`` elements from ``source`` (updates, offset) to
    ``target`` (output, offset), chunk by chunk (``upd_ub``'s size): stored as it is (or
    atomically: ``atomic``), or, with ``cur_ub``, combined with the output's slice on the
    vector unit first."""
    zero, chunk = b.index(0), memref_shape(upd_ub)[0]
    reduction = str(op.attr("reduction"))
    atomic = None if cur_ub is not None or reduction == "none" else reduction
    with b.loop(inner, chunk, "s") as s:
        b.add(CopyFlatOp(source[0], b.add_index(source[1], s), upd_ub, zero, chunk))
        at = b.add_index(target[1], s)
        stored = upd_ub
        if cur_ub is not None:  # combined with what the output holds there now
            b.add(CopyFlatOp(target[0], at, cur_ub, zero, chunk))
            b.add(BINARY_OPS[COMBINE[reduction]](cur_ub, upd_ub, cur_ub))
            stored = cur_ub
        b.add(CopyFlatOp(stored, zero, target[0], at, chunk, atomic=atomic))


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
    if prod(shape) == 0:
        return "a scatter_nd of an empty tensor"
    element = data_type.element_type
    if count == 0:  # no updates: the output is the data, copied
        return copy_over_cores(b, data, out, prod(shape), element)
    reduction = str(op.attr("reduction"))
    if reduction != "none" and str(element) not in REDUCIBLE:
        return f"a scatter_nd {reduction} on {element}"
    eb, ib = element_bytes(element), element_bytes(index_type.element_type)
    if inner * eb < DMA_BLOCK_BYTES:  # a DMA per slice would move a few bytes: through UB
        operands = (data, indices, updates, out)
        args = (shape, width, count, element, index_type.element_type, reduction)
        if emit_ub_scatter(b, operands, *args) is None:
            return None
    # add / max / min of a type the DMA combines: stored atomically, nothing loaded back
    atomic = reduction in CopyFlatOp.ATOMIC_KINDS and str(element) in b.hw.dma_atomic_types
    loads_output = reduction != "none" and not atomic
    quarter = b.ub_budget() // 4  # data copy, index tile; the slices take half
    slice_room = 2 * quarter // (2 if loads_output else 1)
    chunk = largest_divisor(inner, slice_room // eb)
    if chunk * eb < min(inner * eb, DMA_BLOCK_BYTES):
        return f"a scatter_nd slice of {inner} elements with no chunk that fits UB"
    rows = max(1, min(count, quarter // (width * ib)))
    # whole 32-byte-aligned slices stored straight from UB: a tile's updates in one load
    whole = not loads_output and (inner * eb) % DMA_BLOCK_BYTES == 0 and chunk == inner
    if whole:
        rows = min(rows, slice_room // (inner * eb))
    copy = min(prod(shape), quarter // DMA_BLOCK_BYTES * DMA_BLOCK_BYTES // eb)
    if b.dry_run:
        return None
    zero = b.index(0)
    copy_through_ub(b, data, out, prod(shape), element, copy, False)  # then the tuples, in order
    idx_ub = b.buffer([rows, width], index_type.element_type, "UB", "idx_ub")
    upd_ub = b.buffer([rows, inner] if whole else [chunk], element, "UB", "upd_ub")
    cur_ub = b.buffer([chunk], element, "UB", "cur_ub") if loads_output else None
    combine = reduction if atomic else None
    with b.loop(count, rows, "t") as t:  # in order, on one core: the last tuple wins
        b.add(CopyFlatOp(indices, b.affine(t, width), idx_ub, zero, rows * width))
        if whole:  # the tile's update slices are contiguous in GM
            b.add(CopyFlatOp(updates, b.affine(t, inner), upd_ub, zero, rows * inner))
        with tile_row_loop(b, t, rows, count) as j:
            row = tuple_row(b, idx_ub, j, depth)
            row.name_hint = "row"
            dst_at = b.affine(row, inner)
            if whole:
                b.add(CopyFlatOp(upd_ub, b.affine(j, inner), out, dst_at, inner, atomic=combine))
            else:
                src_at = b.affine(b.add_index(t, j), inner)
                _slice_by_chunks(b, (updates, src_at), (out, dst_at), inner, upd_ub, cur_ub, op)
    b.tiles = 1
    return None
