"""GatherElements and ScatterElements on the vector core: whole axes through UB.

Both address single elements along one axis by a run-time index tensor of the data's rank.
Viewed as ``data[outer, axis_size, inner]`` and ``indices[outer, n, inner]`` (the
non-axis dims of the two equal), each outer position's axis slice and index rows are
contiguous in GM, so a tile of ``O`` outer positions is three flat DMAs and one vector op::

    for o in 0 .. outer step O:                                   tile.parallel
      copy_flat data[o*axis_size*inner]  -> table_ub (O, axis_size, inner)   MTE2
      copy_flat indices[o*n*inner]       -> idx_ub   (O, n, inner)           MTE2
      gather:  vtake table_ub, idx_ub -> rows_ub (O, n, inner)
               copy_flat rows_ub -> out[o*n*inner]                           MTE3
      scatter: copy_flat updates[o*n*inner] -> rows_ub (O, n, inner)         MTE2
               vput rows_ub, idx_ub -> table_ub  {axis = 1}
               copy_flat table_ub -> out[o*axis_size*inner]                  MTE3

(GE runs both as AI-core ops; Ascend C's ``Gather`` / ``Scatter`` take a UB offset
tensor, and a core without the vector scatter — Atlas A2 / A3 — scatters on its scalar
unit, which the cost model charges: :attr:`~tilegraph.hardware.HardwareModel.vector_scatter`.)
A negative index counts from the end; one outside ``[-axis_size, axis_size)`` is an
``IndexError`` of the executors, as the graph level raises. Among equal positions of a
scatter the last update in row-major order wins (numpy's order; ONNX leaves it undefined).
A scatter's ``reduction`` (add, mul, max, min) is ``vput``'s: equal positions combined one
after the other in row-major order, as the graph level (and onnxruntime) does, so float
sums round alike; no vector scatter combines, so the cost model charges it on the scalar
unit on every preset. The last tile of a ragged ``outer`` loads zeros past the tensors
(index 0, update 0 into the tile's padding rows, which are past the output) and its store
is cut at the output's end. ``O`` is as many outer positions as fit the kernel's UB budget,
shared over the vector cores.

A gather whose result is the indices of a row lookup (a token-type embedding of ids picked
by position: :mod:`.elements_lookup`) is one kernel with the lookup.

A gather's kernel may end with an elementwise tail (an attention bias summed from gathered
terms, :mod:`.elements_tail`): the tail runs on ``rows_ub`` and the kernel stores its
result instead.

When one outer position's axis slice and its index rows do not fit UB (a long axis: a
segment reduction over a flat tensor, a gather over a detector's anchors) the axis is cut
into blocks and the scalar unit moves each element into or out of the block its index
falls in (:mod:`.elements_blocks`).

A scatter of no updates (an empty index tensor) copies its data to the output.

Stays on the host (the reason is reported): indices smaller than the data in a dim other
than the axis, an axis block of one position and an index tile of one row that do not fit
UB, a gather with a tail whose slice does not fit, tensors that are not row-major.
"""

from __future__ import annotations

from math import prod

from xdsl.ir import SSAValue

from tilegraph.dialects.graph.indexing import GatherElementsOp, ScatterElementsOp
from tilegraph.dialects.tile import CopyFlatOp, PutOp, TakeOp
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody, is_row_major, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.elements_blocks import ElementsView, emit_block_elements
from tilegraph.lowering.conversion.tiling.elements_lookup import (
    emit_elements_lookup,
    is_elements_lookup,
)
from tilegraph.lowering.conversion.tiling.elements_tail import gather_tail
from tilegraph.lowering.conversion.tiling.gather_ub import outer_tile_rows
from tilegraph.lowering.conversion.tiling.scatter_ub import copy_over_cores

ELEMENT_OPS = (GatherElementsOp, ScatterElementsOp)


def _operands(
    body: KernelBody, op: GatherElementsOp | ScatterElementsOp, stored: SSAValue
) -> tuple[list[SSAValue], SSAValue] | str:
    """The GM sources of ``op``'s operands and the GM buffer of ``stored`` (its output, or
    its tail's last value), or why not."""
    values = [op.data, op.indices] + ([op.updates] if isinstance(op, ScatterElementsOp) else [])
    sources = [body.source(v) for v in values]
    written = dict(body.writes).get(stored)
    if any(s is None for s in sources) or written is None:
        return f"a {op.name} of a value computed inside the kernel"
    if not all(is_row_major(tensor_of(v)) for v in [*values, stored]):
        return f"a {op.name} of a tensor that is not row-major"
    return [s for s in sources if s is not None], written


def emit_elements_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a ``graph.gather_elements`` or ``graph.scatter_elements``, a gather maybe with
    an elementwise tail (:mod:`.elements_tail`; see the module docstring); returns why it
    cannot (None when emitted)."""
    if not body.ops or not isinstance(body.ops[0], ELEMENT_OPS):
        return "not a gather_elements / scatter_elements kernel"
    if is_elements_lookup(body):  # the ids index a table: looked up from UB
        return emit_elements_lookup(body, b)
    op = body.ops[0]
    scatter = isinstance(op, ScatterElementsOp)
    tail = None if scatter and len(body.ops) == 1 else gather_tail(body, op)
    if scatter and len(body.ops) > 1:
        return "a scatter_elements with ops after it"
    if isinstance(tail, str):
        return tail
    stored = op.output if tail is None else tail.ops[-1].results[0]
    found = _operands(body, op, stored)
    if isinstance(found, str):
        return found
    sources, out = found
    data_type, index_type = tensor_of(op.data), tensor_of(op.indices)
    shape = tuple(int(d) for d in data_type.storage_shape)
    index_shape = tuple(int(d) for d in index_type.storage_shape)
    axis = int(op.attr("axis")) % len(shape)
    if any(a != i for k, (a, i) in enumerate(zip(shape, index_shape, strict=True)) if k != axis):
        return f"a {op.name} whose indices are smaller than the data off the axis"
    outer, axis_size, inner = prod(shape[:axis]), shape[axis], prod(shape[axis + 1 :])
    count = index_shape[axis]
    if outer * axis_size * inner == 0 or (count * inner == 0 and not scatter):
        return f"a {op.name} of an empty tensor"
    if count * inner == 0:  # no updates: the output is the data, copied
        return copy_over_cores(
            b, sources[0], out, outer * axis_size * inner, data_type.element_type
        )
    eb, ib = element_bytes(data_type.element_type), element_bytes(index_type.element_type)

    def ub_bytes(rows: int) -> int:
        sizes = [rows * axis_size * inner * eb, rows * count * inner * eb]
        sizes.append(rows * count * inner * ib)
        extra = 0 if tail is None else tail.ub_bytes(b, rows * count * inner)
        return sum(aligned_bytes(b.hw, "UB", n) for n in sizes) + extra

    budget = b.ub_budget()
    if ub_bytes(1) > budget:  # the axis in blocks, each element moved by the scalar unit
        if tail is not None:
            return (
                f"a {op.name} with an elementwise tail whose axis slice ({axis_size} x "
                f"{inner}) and {count} index rows do not fit UB"
            )
        element, index_element = data_type.element_type, index_type.element_type
        view = ElementsView(outer, axis_size, inner, count, element, index_element)
        reduction = str(op.attr("reduction")) if scatter else "none"
        why = emit_block_elements(b, view, sources, out, None if reduction == "none" else reduction)
        return None if why is None else f"a {op.name} with {why}"
    rows = outer_tile_rows(outer, count * inner, ub_bytes, budget, b.hw.vector_cores)
    if b.dry_run:
        return None
    element = data_type.element_type
    table_ub = b.buffer([rows, axis_size, inner], element, "UB", "table_ub")
    rows_ub = b.buffer([rows, count, inner], element, "UB", "rows_ub")
    idx_ub = b.buffer([rows, count, inner], index_type.element_type, "UB", "idx_ub")
    zero = b.index(0)
    loaded = {} if tail is None else tail.allocate(b, [rows, count, inner])
    with b.loop(outer, rows, "o", True) as o:
        table_at, rows_at = b.affine(o, axis_size * inner), b.affine(o, count * inner)
        b.add(CopyFlatOp(sources[0], table_at, table_ub, zero, rows * axis_size * inner))
        b.add(CopyFlatOp(sources[1], rows_at, idx_ub, zero, rows * count * inner))
        if scatter:
            b.add(CopyFlatOp(sources[2], rows_at, rows_ub, zero, rows * count * inner))
            reduction = str(op.attr("reduction"))
            b.add(PutOp(rows_ub, idx_ub, table_ub, 1, None if reduction == "none" else reduction))
            b.add(CopyFlatOp(table_ub, zero, out, table_at, rows * axis_size * inner))
        else:
            b.add(TakeOp(table_ub, idx_ub, rows_ub, 1))
            result = rows_ub
            if tail is not None:
                result = tail.emit(b, rows_ub, op.output, loaded, rows_at, [rows, count, inner])
            b.add(CopyFlatOp(result, zero, out, rows_at, rows * count * inner))
    b.tiles = -(-outer // rows)
    return None
