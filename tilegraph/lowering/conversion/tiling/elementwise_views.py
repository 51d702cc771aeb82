"""The GM views an elementwise kernel reads its operands through, instead of ops.

Two kinds of view op in an elementwise kernel's body compute nothing there:

* a static split of a kernel input whose outputs the kernel reads (Phi-3's ``[gate |
  up]``): each output is an offset view of the input (:func:`~.matmul_views.split_sources`);
* a chain of reshapes, transposes and static slices from a kernel input to an elementwise
  operand that ``fuse-ops`` took in as an input view (:mod:`tilegraph.lowering.analysis.
  elementwise_views`): the operand is a strided view of the input.

:func:`view_sources` maps each such operand to a ``tile.strided_view`` of the kernel
argument, which the elementwise chain loads its tiles from
(:func:`~.elementwise.emit_vector_kernel`); the view ops leave the body's op list.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph import GraphOp
from tilegraph.lowering.analysis.elementwise_views import ELEMENTWISE_VIEW_OPS, input_view
from tilegraph.lowering.conversion.kernel_body import KernelBody
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.matmul_views import split_sources, view_of
from tilegraph.lowering.conversion.tiling.vector_ops import vector_lowering


def _view_ops(body: KernelBody) -> set[Operation]:
    return {op for op in body.ops if isinstance(op, ELEMENTWISE_VIEW_OPS)}


def _viewed_operands(body: KernelBody, ops: list[Operation]):
    """(operand, its chain) for every operand of a non-view op of ``ops`` that a chain of
    the body's view ops makes out of a kernel input as a readable view."""
    views = _view_ops(body)
    for op in ops:
        if op in views:
            continue
        for v in op.operands:
            chain = input_view(v, views) if v.owner in views else None
            if chain is not None and body.source(chain.base) is not None:
                yield v, chain


def reads_input_views(body: KernelBody) -> bool:
    """Whether ``body`` is an elementwise kernel reading operands through input views:
    every op that is not on such a view's chain has a vector program, and some op is."""
    on_chains = {op for _, chain in _viewed_operands(body, body.ops) for op in chain.ops}
    return bool(on_chains) and all(
        op in on_chains or (isinstance(op, GraphOp) and vector_lowering(op) is not None)
        for op in body.ops
    )


def view_sources(
    b: KernelBuilder, body: KernelBody
) -> tuple[list[Operation], dict[SSAValue, SSAValue]]:
    """``body``'s ops without its view splits and input views, and each viewed operand ->
    the GM view of the kernel argument it is read from."""
    ops, sources = split_sources(b, body)
    chains = dict(_viewed_operands(body, ops))
    on_chains = {op for chain in chains.values() for op in chain.ops}
    for v, chain in chains.items():
        arg = body.source(chain.base)
        assert arg is not None
        sources[v] = view_of(b, arg, chain.view)
    return [op for op in ops if op not in on_chains], sources
