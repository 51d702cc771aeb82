"""The gather of a kernel body, seen through the reshape-like ops around it.

Every Hugging Face text model feeds its embedding ``Gather`` through a view of the ids
(``input_ids.view(-1, S)``: a ``Reshape``; GCN squeezes its edge index), and ``fuse-ops``
puts the view in the gather's group. A Reshape / Flatten / Squeeze / Unsqueeze of a
row-major tensor moves no bytes: the kernel reads the view's source in GM, flat, as the
gather would read the view (the row kernels of :mod:`.gather` / :mod:`.gather_nd` and
the UB kernel of :mod:`.gather_ub` address the index tensor, the table and the output by
flat offsets only). So a body of one gather and such view ops — chains from kernel inputs
to its table or indices, and from its result to the one value the kernel writes — is the
gather's kernel, its GM operands the chains' ends.

Refused (the reason is reported): a view of a tensor that is not row-major (its bytes are
not the view's), a view whose value is also used or written elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph.data_movement import GatherOp
from tilegraph.dialects.graph.indexing import GatherNDOp
from tilegraph.lowering.conversion.kernel_body import KernelBody, is_row_major, tensor_of
from tilegraph.lowering.conversion.tiling.reshape import SHAPE_ONLY

RowGatherOp = GatherOp | GatherNDOp


@dataclass(frozen=True)
class ViewedGather:
    """A body's gather ``op`` and the GM buffers its kernel addresses: the table, the
    index tensor (None when the indices are no kernel input: compile-time ones), the
    output — each the end of the view chain (if any) between it and the gather."""

    op: RowGatherOp
    table: SSAValue
    indices: SSAValue | None
    out: SSAValue


def _chain_back(value: SSAValue, members: set[Operation]) -> tuple[SSAValue, list[Operation]]:
    """The value the body's view ops make ``value`` out of, and those ops (last first)."""
    chain: list[Operation] = []
    while isinstance(value.owner, SHAPE_ONLY) and value.owner in members:
        chain.append(value.owner)
        value = value.owner.operands[0]
    return value, chain


def _gather_of(body: KernelBody, kind: type[RowGatherOp]) -> RowGatherOp | None:
    """The one ``kind`` op of a body whose other ops are all reshape-like, or None."""
    found = [op for op in body.ops if not isinstance(op, SHAPE_ONLY)]
    if len(found) != 1 or not isinstance(found[0], kind):
        return None
    return found[0]


def takes_gather(kind: type[RowGatherOp]) -> Callable[[KernelBody], bool]:
    """A strategy's ``takes``: a body that starts with a ``kind`` op (its kernel says why
    when it is not a lone one), or is one ``kind`` op among reshape-like ops."""
    return lambda body: (
        bool(body.ops) and (isinstance(body.ops[0], kind) or _gather_of(body, kind) is not None)
    )


def viewed_gather(body: KernelBody, kind: type[RowGatherOp], label: str) -> ViewedGather | str:
    """The ``kind`` op of ``body`` (alone, or among view ops on chains from kernel inputs
    to its table / indices and from its result to the value written) with the GM buffers
    its kernel reads and writes; or why the body is not such a gather."""
    op = _gather_of(body, kind)
    if op is None:
        return f"not a lone {label}"
    members = set(body.ops)
    table_src, table_chain = _chain_back(op.data, members)
    index_src, index_chain = _chain_back(op.indices, members)
    if len(body.writes) != 1:
        return f"a {label} kernel with {len(body.writes)} outputs"
    value, written = body.writes[0]
    result, out_chain = _chain_back(value, members)
    if result is not op.output:
        return f"a {label} kernel writing another value than its rows"
    views = [*table_chain, *index_chain, *out_chain]
    if len(views) != len(members) - 1 or set(views) != members - {op}:
        return f"a {label} with reshapes that are not views of its operands or result"
    if out_chain and not op.output.has_one_use():
        return f"a {label} whose rows are used besides their view"
    if any(not v.results[0].has_one_use() for v in (*table_chain, *index_chain, *out_chain[1:])):
        return f"a view of a {label} used besides it"
    tensors = [op.data, op.indices, op.output, *(v.operands[0] for v in views)]
    if not all(is_row_major(tensor_of(t)) for t in tensors):
        return f"a {label} of a tensor that is not row-major"
    table = body.source(table_src)
    if table is None:
        return f"a {label} of a value computed inside the kernel"
    indices = body.source(index_src)
    if index_chain and indices is None:
        return f"a {label} of indices viewed from a value computed inside the kernel"
    return ViewedGather(op, table, indices, written)
