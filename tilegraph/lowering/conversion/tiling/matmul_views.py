"""Matmul operands and results addressed as strided views of the kernel's GM arguments.

``fuse-ops`` puts a reshape / transpose chain that only re-indexes a matmul operand (the
attention head split ``[B,S,H·D] -> [B,H,S,D]``, K's extra transpose) into the matmul's
kernel as its prologue, and the chain that re-indexes its result (the head merge) as its
epilogue (:mod:`tilegraph.lowering.analysis.operand_views` decides what qualifies, for
both). This module turns such a chain into a ``tile.strided_view`` of the GM argument at
the kernel's entry, which the matmul's DMAs address like any ND operand:

* an operand: ``tile.nd2nz`` reads the (rows, cols) window of the view — for the head
  split, rows of ``D`` elements at a row stride of ``H·D`` from column offset ``h·D``; a
  view contiguous along its rows' dim instead (``Kᵀ``) is read as the transposed operand,
  held as ``(N, K)``, exactly as a ``transB`` Gemm's B;
* the result: ``tile.fixpipe`` (or the epilogue's store) writes the output tile into the
  view of the merged tensor, head ``h``'s columns at offset ``h·D``;
* a split on an operand's chain (GPT-2's Q, K, V) adds its output's offset to the view
  (``strided<[..], offset: N>``);
* an operand whose batch dims repeat (LLaMA's K / V of ``kv`` heads expanded to the
  query's ``kv·n_rep``: :attr:`~tilegraph.lowering.analysis.operand_views.StridedView.
  groups`) is viewed without the repeats, and its DMAs take head ``h // n_rep``
  (:func:`lead_offsets`): the repeated tensor is never written;
* an elementwise kernel's split (:func:`split_sources`): each output read from the
  split's input at its offset, the split itself computing nothing;
* elementwise ops after a reshape that only merges / splits the result's rows
  (:class:`RowsEpilogue`) run on the matmul's own tiles: the written tensor and their
  other GM operands are viewed in the matmul's 2-D result shape.

The tile ops stay honest: the view's strides are its memref type's layout, so the DMA's GM
runs (:func:`~tilegraph.dialects.tile.base.contiguous_run`) are the view's ``D``-element
bursts, which the cycle model costs at the misaligned rate when they are not multiples of
the preset's GM burst (:meth:`~tilegraph.hardware.HardwareModel.gm_efficiency`); and the
view's shape clips the window, so a tile's padding lanes are zeros, never a neighbouring
head's data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph.data_movement import SplitOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import StridedViewOp, memref_shape
from tilegraph.dialects.tile.workspace import strided_memref
from tilegraph.formats import Format
from tilegraph.lowering.analysis.operand_views import (
    OPERAND_VIEW_OPS,
    StridedView,
    ViewChain,
    operand_view,
    result_view,
)
from tilegraph.lowering.analysis.shared_views import rows_operand, rows_result, split_parts
from tilegraph.lowering.conversion.kernel_body import KernelBody
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder


def view_of(b: KernelBuilder, arg: SSAValue, view: StridedView) -> SSAValue:
    """A ``tile.strided_view`` of the GM argument ``arg`` at the kernel's entry (a view
    without repeats: a grouped one is read through :meth:`StridedView.stored`)."""
    assert not view.groups, "a strided memref cannot repeat a dim"
    memref = strided_memref(arg.type, view.shape, view.strides, view.offset)
    op = b.hoist(StridedViewOp(arg, memref))
    result = op.results[0]
    result.name_hint = f"{arg.name_hint or 'arg'}_view"
    return result


def split_sources(
    b: KernelBuilder, body: KernelBody
) -> tuple[list[Operation], dict[SSAValue, SSAValue]]:
    """``body``'s ops without the splits of a kernel input that are views of it
    (:func:`~tilegraph.lowering.analysis.shared_views.split_parts`), and each such
    split's output -> the input's GM argument viewed at that output's offset."""
    ops: list[Operation] = []
    sources: dict[SSAValue, SSAValue] = {}
    for op in body.ops:
        arg = body.source(op.operands[0]) if isinstance(op, SplitOp) else None
        parts = split_parts(op) if isinstance(op, SplitOp) and arg is not None else None
        if arg is None or parts is None:
            ops.append(op)
            continue
        for result, part in zip(op.results, parts, strict=True):
            sources[result] = view_of(b, arg, part)
    return ops, sources


def is_view_op(op: Operation) -> bool:
    """A graph op of an operand's view chain (reshapes, transposes, a split's outputs)."""
    return isinstance(op, OPERAND_VIEW_OPS)


def operand_chain(body: KernelBody, value: SSAValue) -> ViewChain | str | None:
    """The view chain inside the kernel that makes the matmul operand ``value`` (its ND
    form) out of a kernel input; None when ``value`` is not made by view ops, a reason
    when it is but the kernel cannot read it as a view."""
    if not is_view_op(value.owner):  # type: ignore[arg-type]
        return None
    chain = operand_view(value)
    if chain is not None and body.source(chain.base) is None and from_fractal(chain.base):
        # the chain is a view, but of a tensor GM holds in FRACTAL_NZ: the strided view
        # addresses a row-major buffer (fuse-ops gives such a conversion to the product
        # writing it: passes/fuse_views.py)
        return "a matmul operand re-indexed from a FRACTAL_NZ input converted in the kernel"
    if chain is None or body.source(chain.base) is None:
        return "a matmul operand re-indexed by a chain that is no strided view of an input"
    return chain


def from_fractal(value: SSAValue) -> bool:
    """``value`` is a FRACTAL_NZ tensor's conversion to ND (in a matmul's prologue: the
    start of an operand's view chain that :func:`operand_chain` refuses with its reason)."""
    owner = value.owner
    if not isinstance(owner, TransDataOp):
        return False
    t = owner.input.type
    return isinstance(t, TensorType) and t.storage_format == Format.FRACTAL_NZ


def operand_as_view(
    b: KernelBuilder, body: KernelBody, chain: ViewChain
) -> tuple[SSAValue, bool, tuple[int, ...]]:
    """(the GM view the matmul reads, whether it holds the operand transposed, the group
    factor of each of the view's dims, empty when none repeats): a matrix contiguous along
    its rows' dim is viewed with its last two dims swapped, so the view's last dim is
    always the unit-stride one the DMA bursts along."""
    arg = body.source(chain.base)
    assert arg is not None
    view = chain.view.swap_last() if chain.transposed else chain.view
    return view_of(b, arg, view.stored()), chain.transposed, view.groups


def lead_offsets(
    b: KernelBuilder,
    arg: SSAValue,
    ivs: Sequence[SSAValue],
    kept: int,
    groups: Sequence[int] = (),
) -> list[SSAValue]:
    """Offsets of the GM operand ``arg``'s dims before its last ``kept`` for the result's
    batch indices ``ivs`` (the trailing ones align): 0 on a broadcast dim (size 1), the
    index divided by the dim's group factor on a repeated one (``groups``: one per dim of
    ``arg``, empty when none repeats), else the index."""
    shape = memref_shape(arg)
    lead = shape[: len(shape) - kept]
    use = list(ivs)[len(ivs) - len(lead) :] if lead else []
    offsets: list[SSAValue] = []
    for axis, (size, iv) in enumerate(zip(lead, use, strict=True)):
        group = groups[axis] if groups else 1
        if size == 1:
            offsets.append(b.index(0))
        elif group == 1:
            offsets.append(iv)
        else:
            head = b.add(arith.DivUIOp(iv, b.index(group))).results[0]
            head.name_hint = "group"
            offsets.append(head)
    return offsets


def result_chain(
    body: KernelBody, anchor_value: SSAValue, ops: list[Operation]
) -> ViewChain | None:
    """The view chain that is exactly the epilogue ``ops`` after the matmul's ND result
    ``anchor_value`` and writes the kernel's output, else None."""
    if not ops or not all(is_view_op(op) for op in ops):
        return None
    chain = result_view(anchor_value)
    if chain is None or list(chain.ops) != ops:
        return None
    if len(body.writes) != 1 or body.writes[0][0] is not chain.base:
        return None
    return chain


@dataclass(frozen=True)
class RowsEpilogue:
    """Elementwise epilogue ops across a leading-axes reshape of the matmul's result
    (:func:`~tilegraph.lowering.analysis.shared_views.rows_result`), addressed in the
    matmul's own 2-D tile space."""

    ops: list[Operation]
    """The elementwise ops (the reshape dropped: its result is the accumulator's tile)."""
    reshaped: SSAValue
    """The reshape's result, which the ops read: an alias of the matmul's ND result."""
    out_arg: SSAValue
    """The written tensor's argument viewed in the matmul's result shape."""
    sources: dict[SSAValue, SSAValue]
    """Each GM input of the ops -> its argument viewed in the result's rows."""


def rows_epilogue(
    b: KernelBuilder, body: KernelBody, anchor: Operation, ops: list[Operation]
) -> RowsEpilogue | None:
    """The epilogue ``ops`` after the matmul ``anchor``'s ND result as elementwise ops on
    its tiles, when they start with its leading-axes reshape chain; else None."""
    chain = rows_result(anchor)
    if chain is None or list(chain.ops) != ops[: len(chain.ops)] or len(ops) == len(chain.ops):
        return None
    rest = ops[len(chain.ops) :]
    if any(is_view_op(op) for op in rest) or len(body.writes) != 1:
        return None
    rows = chain.view.shape
    reshaped = [int(d) for d in memref_shape(body.writes[0][1])]
    sources: dict[SSAValue, SSAValue] = {}
    produced = {r for op in rest for r in op.results} | {chain.base}
    for op in rest:
        for v in op.operands:
            arg = body.source(v)
            if v in produced or arg is None or v in sources:
                continue
            view = rows_operand(memref_shape(arg), reshaped, rows)
            if view is None:
                return None
            sources[v] = view_of(b, arg, view)
    out_arg = view_of(b, body.writes[0][1], StridedView.row_major(rows))
    return RowsEpilogue(rest, chain.base, out_arg, sources)
