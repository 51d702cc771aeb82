"""A GatherElements whose result indexes a row gather: position / token-type ids looked up.

Hugging Face's RoBERTa-family exports (Data2VecText, X-MOD) pick each token's type id out
of a buffered id row (``buffered_token_type_ids.gather(1, position_ids)``: a
GatherElements) and look it up in the type-embedding table (a Gather along axis 0), and
``fuse-ops`` groups the two. The ids are the GatherElements' tile in UB, so the lookup
reads them there, on the scalar unit, instead of from GM — one kernel, no ids tensor in
GM::

    for o in 0 .. outer step O:                                     tile.parallel
      copy_flat data[o*axis_size*inner] -> table_ub (O, axis_size, inner)   MTE2
      copy_flat idx[o*n*inner]          -> idx_ub   (O, n, inner)           MTE2
      vtake table_ub, idx_ub -> ids_ub (O, n, inner)                (the GatherElements)
      for p in 0 .. min(O, outer - o), k in 0 .. n, i in 0 .. inner:
        %row = get_value ids_ub[p, k, i] {bound = rows}             S
        copy_flat lookup[%row * R] -> emb_ub[((p*n + k)*inner + i) * R]  (R, partial)  MTE2
      copy_flat emb_ub -> out[o*n*inner*R]   (O*n*inner*R, cut at the end)           MTE3

as the row gather's kernel (:mod:`.gather`) reads an index tile it loaded; the ids are
wrapped (a negative counts from the end) and checked against the table's rows as there.
Taken: a lookup along the first axis of a kernel input (an embedding table) whose rows
``R`` are a multiple of 32 B (each row DMA's UB address aligned), the GatherElements' ids
read by the lookup only. Else the reason is given and the lowering splits the group.
"""

from __future__ import annotations

from math import prod

from xdsl.ir import SSAValue

from tilegraph.dialects.graph.data_movement import GatherOp
from tilegraph.dialects.graph.indexing import GatherElementsOp
from tilegraph.dialects.tile import CopyFlatOp, GetValueOp, TakeOp
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody, is_row_major, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.gather import DMA_BLOCK_BYTES, tile_row_loop
from tilegraph.lowering.conversion.tiling.gather_ub import outer_tile_rows


def is_elements_lookup(body: KernelBody) -> bool:
    """A body of a GatherElements and a Gather reading its result as indices."""
    return (
        len(body.ops) == 2
        and isinstance(first := body.ops[0], GatherElementsOp)
        and isinstance(lookup := body.ops[1], GatherOp)
        and lookup.indices is first.output
    )


def emit_elements_lookup(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a GatherElements and the lookup of its ids (module docstring); returns why it
    cannot (None when emitted, or in dry-run mode when it would be)."""
    first, lookup = body.ops
    assert isinstance(first, GatherElementsOp) and isinstance(lookup, GatherOp)
    sources = [body.source(v) for v in (first.data, first.indices, lookup.data)]
    out = dict(body.writes).get(lookup.output)
    if any(s is None for s in sources) or out is None or len(body.writes) != 1:
        return "a lookup of gathered ids with operands computed inside the kernel"
    data, idx, table = (s for s in sources if s is not None)
    values = (first.data, first.indices, first.output, lookup.data, lookup.output)
    if not all(is_row_major(tensor_of(v)) for v in values):
        return "a lookup of gathered ids over a tensor that is not row-major"
    shape = tuple(int(d) for d in tensor_of(first.data).storage_shape)
    index_shape = tuple(int(d) for d in tensor_of(first.indices).storage_shape)
    axis = int(first.attr("axis")) % len(shape)
    if any(a != i for k, (a, i) in enumerate(zip(shape, index_shape, strict=True)) if k != axis):
        return "a gather_elements whose indices are smaller than the data off the axis"
    table_shape = tuple(int(d) for d in tensor_of(lookup.data).storage_shape)
    if int(lookup.attr("axis")) % len(table_shape) != 0:
        return "a lookup of gathered ids along an axis other than the table's first"
    ids, element = tensor_of(first.output).element_type, tensor_of(lookup.output).element_type
    row, eb = prod(table_shape[1:]), element_bytes(element)
    if (row * eb) % DMA_BLOCK_BYTES or row == 0:
        return f"a lookup of gathered ids into rows of {row * eb} B (not a multiple of 32)"
    outer, axis_size, inner = prod(shape[:axis]), shape[axis], prod(shape[axis + 1 :])
    count = index_shape[axis]
    if outer * count * inner == 0 or axis_size == 0:
        return "a lookup of gathered ids of an empty tensor"
    ib, xb = element_bytes(ids), element_bytes(tensor_of(first.indices).element_type)

    def ub_bytes(rows: int) -> int:
        picked = rows * count * inner
        sizes = [rows * axis_size * inner * ib, picked * xb, picked * ib, picked * row * eb]
        return sum(aligned_bytes(b.hw, "UB", n) for n in sizes)

    budget = b.ub_budget()
    if ub_bytes(1) > budget:
        return "a lookup of gathered ids whose axis slice and rows of one position do not fit UB"
    rows = outer_tile_rows(outer, count * inner * row, ub_bytes, budget, b.hw.vector_cores)
    if b.dry_run:
        return None
    _emit(b, (data, idx, table, out), (first, lookup), (outer, axis_size, inner, count, row), rows)
    return None


def _emit(
    b: KernelBuilder,
    gm: tuple[SSAValue, SSAValue, SSAValue, SSAValue],
    ops: tuple[GatherElementsOp, GatherOp],
    sizes: tuple[int, int, int, int, int],
    rows: int,
) -> None:
    """The loops of the module docstring: ``gm`` the GatherElements' data and indices, the
    table and the output; ``sizes`` ``(outer, axis_size, inner, count, row)``; tiles of
    ``rows`` outer positions."""
    data, idx, table, out = gm
    first, lookup = ops
    outer, axis_size, inner, count, row = sizes
    ids_type = tensor_of(first.output).element_type
    element = tensor_of(lookup.output).element_type
    table_rows = int(tensor_of(lookup.data).storage_shape[0])
    table_ub = b.buffer([rows, axis_size, inner], ids_type, "UB", "table_ub")
    idx_ub = b.buffer([rows, count, inner], tensor_of(first.indices).element_type, "UB", "idx_ub")
    ids_ub = b.buffer([rows, count, inner], ids_type, "UB", "ids_ub")
    emb_ub = b.buffer([rows * count * inner, row], element, "UB", "emb_ub")
    zero = b.index(0)
    with b.loop(outer, rows, "o", True) as o:
        picked_at = b.affine(o, count * inner)
        b.add(
            CopyFlatOp(
                data, b.affine(o, axis_size * inner), table_ub, zero, rows * axis_size * inner
            )
        )
        b.add(CopyFlatOp(idx, picked_at, idx_ub, zero, rows * count * inner))
        b.add(TakeOp(table_ub, idx_ub, ids_ub, 1))
        with tile_row_loop(b, o, rows, outer) as p, b.loop(count, 1, "k") as k:
            with b.loop(inner, 1, "i") as i:
                at = b.add_index(b.affine(p, count * inner), b.add_index(b.affine(k, inner), i))
                picked = b.add(GetValueOp(ids_ub, [p, k, i], table_rows)).results[0]
                picked.name_hint = "row"
                src = b.affine(picked, row)
                b.add(CopyFlatOp(table, src, emb_ub, b.affine(at, row), row, partial=True))
        b.add(CopyFlatOp(emb_ub, zero, out, b.affine(picked_at, row), rows * count * inner * row))
    b.tiles = -(-outer // rows)
