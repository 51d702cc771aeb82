"""The GM views an elementwise kernel reads its operands through, instead of ops.

Two kinds of view op in an elementwise kernel's body compute nothing there:

* a static split of a kernel input whose outputs the kernel reads (Phi-3's ``[gate |
  up]``): each output is an offset view of the input (:func:`~.matmul_views.split_sources`);
* a chain of reshapes, transposes and static slices from a kernel input to an elementwise
  operand that ``fuse-ops`` took in as an input view (:mod:`tilegraph.lowering.analysis.
  elementwise_views`): the operand is a strided view of the input;
* a chain of reshapes and transposes from the elementwise result to the value the kernel
  writes (an output view): the result is a strided view of the output.

:func:`view_sources` maps each such operand to a ``tile.strided_view`` of the kernel
argument, which the elementwise chain loads its tiles from
(:func:`~.elementwise.emit_vector_kernel`), and each such written value to its result,
stored through a view of the output argument; the view ops leave the body's op list.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.graph.data_movement import SplitOp
from tilegraph.lowering.analysis.elementwise_views import (
    ELEMENTWISE_VIEW_OPS,
    input_view,
    output_view,
)
from tilegraph.lowering.analysis.operand_views import VIEW_OPS, ViewChain
from tilegraph.lowering.analysis.shared_views import split_parts
from tilegraph.lowering.conversion.kernel_body import KernelBody
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.matmul_views import split_sources, view_of
from tilegraph.lowering.conversion.tiling.vector_ops import vector_lowering


def _view_ops(body: KernelBody) -> set[Operation]:
    return {op for op in body.ops if isinstance(op, ELEMENTWISE_VIEW_OPS)}


def input_views(body: KernelBody, ops: list[Operation]) -> Iterator[tuple[SSAValue, ViewChain]]:
    """(operand, its chain) for every operand of a non-view op of ``ops`` that a chain of
    the body's view ops makes out of a kernel input as a readable view (an elementwise
    kernel's, and a reduction's: :mod:`.reduction_prologue`)."""
    views = _view_ops(body)
    for op in ops:
        if op in views:
            continue
        for v in op.operands:
            chain = input_view(v, views) if v.owner in views else None
            if chain is not None and body.source(chain.base) is not None:
                yield v, chain


def _viewed_writes(body: KernelBody):
    """(written value, the result its chain starts from, the chain) for every value the
    kernel writes through an output view made by the body's view ops."""
    members = set(body.ops)
    for value, _ in body.writes:
        result = value
        while isinstance(result.owner, VIEW_OPS) and result.owner in members:
            result = result.owner.operands[0]
        chain: ViewChain | None = output_view(result) if result is not value else None
        if chain is not None and chain.base is value and set(chain.ops) <= members:
            yield value, result, chain


def _input_split(body: KernelBody, op: Operation) -> bool:
    """A split of a kernel input whose outputs are views of it (:func:`split_sources`)."""
    return (
        isinstance(op, SplitOp)
        and body.source(op.operands[0]) is not None
        and split_parts(op) is not None
    )


def reads_views(body: KernelBody) -> bool:
    """Whether ``body`` is an elementwise kernel reading operands through input views or
    writing its result through an output view: every op that is not on such a view's chain
    has a vector program, and some op is."""
    on_chains = {op for _, chain in input_views(body, body.ops) for op in chain.ops}
    on_chains |= {op for _, _, chain in _viewed_writes(body) for op in chain.ops}
    computed = [op for op in body.ops if op not in on_chains and not _input_split(body, op)]
    return bool(on_chains and computed) and all(
        isinstance(op, GraphOp) and vector_lowering(op) is not None for op in computed
    )


def view_sources(
    b: KernelBuilder, body: KernelBody
) -> tuple[list[Operation], dict[SSAValue, SSAValue], list[tuple[SSAValue, SSAValue]]]:
    """``body``'s ops without its view splits and views, each viewed operand -> the GM
    view of the kernel argument it is read from, and the kernel's writes (value, GM
    buffer) with each output view's value replaced by its result and a view of the
    output."""
    ops, sources = split_sources(b, body)
    chains = dict(input_views(body, ops))
    on_chains = {op for chain in chains.values() for op in chain.ops}
    for v, chain in chains.items():
        arg = body.source(chain.base)
        assert arg is not None
        sources[v] = view_of(b, arg, chain.view)
    viewed = {value: (result, chain) for value, result, chain in _viewed_writes(body)}
    writes: list[tuple[SSAValue, SSAValue]] = []
    for value, out_arg in body.writes:
        if value in viewed:
            result, chain = viewed[value]
            on_chains |= set(chain.ops)
            writes.append((result, view_of(b, out_arg, chain.view)))
        else:
            writes.append((value, out_arg))
    return [op for op in ops if op not in on_chains], sources, writes
