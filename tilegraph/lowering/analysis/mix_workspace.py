"""A mix kernel's GM workspace, one region per core group: what ``split-cores`` does to the
workspace when it shares a mix kernel out over ``n`` core groups.

``tile-kernels`` gives a mix kernel (:mod:`tilegraph.lowering.conversion.tiling.mix`) a GM
workspace for *one* core group — its last argument, allocated by the host before each
launch: ``WORKSPACE_SLOTS`` accumulator tiles, or the flash attention kernel's three
regions. On the chip the core groups of a launch run at once, so a workspace shared by all
of them is a race: group 1's AIC overwrites the slot group 0's AIVs have not read yet. So
when ``split-cores`` gives a mix launch ``n`` groups, :func:`workspace_per_group` makes the
workspace ``n`` times the region, group-major, as AscendNPU-IR's kernels get theirs (its
compiler reports the workspace of one block; triton-ascend's launcher allocates
``workspace_size * blockNum`` bytes, ``ascend/backend/driver.py``):

* the workspace argument of both parts, and the ``tile.alloc`` before every launch, get a
  leading dim ``n`` times the region's (``(2, *tile)`` becomes ``(2n, *tile)``);
* every access of the workspace is offset by the group's region, computed from
  ``tile.block_idx`` in each part: its leading index by ``block * lead`` (``lead``: the
  region's leading dim), a flat offset (``tile.copy_flat``) by ``block * elements`` (the
  region's elements). Slots and flags stay the group's own: group ``b``'s slot ``s`` is
  workspace index ``b * lead + s``.

The AIC and AIV instances of group ``b`` answer ``tile.block_idx`` with ``b``, so both
compute the same region. The workspace ops this rewrites are those whose workspace operand
is followed by its leading (or flat) offset (:data:`WORKSPACE_ACCESSES`); any other use of
the workspace is a :class:`MixWorkspaceError` (a new strategy's access must be added here,
else its groups would share a region).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FunctionType, IndexType, IntegerAttr, MemRefType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

from tilegraph.dialects.tile import (
    AllocOp,
    BlockIdxOp,
    BlockNumOp,
    CopyFlatOp,
    CopyOp,
    FixpipeOp,
    LaunchOp,
    Nd2NzOp,
    memref_shape,
    scope_of,
    scoped_memref,
)
from tilegraph.dialects.tile.loop import outer_buffer, retype_buffer

WORKSPACE_ACCESSES = (FixpipeOp, CopyOp, Nd2NzOp, CopyFlatOp)
"""The ops a mix kernel reaches its workspace with; in each the workspace operand is
directly followed by the index of its leading dim (``copy_flat``: its flat offset)."""


class MixWorkspaceError(ValueError):
    """A mix kernel uses its workspace in a way :func:`workspace_per_group` cannot offset."""


def grown(region: MemRefType, groups: int) -> MemRefType:
    """The workspace of ``groups`` core groups, each with a ``region`` of its own."""
    lead, *rest = memref_shape(region)
    return scoped_memref([groups * lead, *rest], region.element_type, "GM")


def _block_index(fn: func.FuncOp) -> SSAValue:
    """The kernel's ``tile.block_idx`` at its entry (``split-cores`` put one there), or a
    new one."""
    entry = fn.body.block
    found = next((op for op in entry.ops if isinstance(op, BlockIdxOp)), None)
    if found is None:
        found = BlockIdxOp()
        found.result.name_hint = "block"
        first = entry.first_op
        assert first is not None
        entry.insert_op_before(found, first)
    return found.result


def _offset_accesses(fn: func.FuncOp, region: MemRefType) -> None:
    """Offset every access of ``fn``'s workspace (its last argument, still of type
    ``region``) by the running group's region."""
    workspace = fn.body.block.args[-1]
    block = _block_index(fn)
    lead = memref_shape(region)[0]
    bases: dict[int, SSAValue] = {}

    def base(per_group: int) -> SSAValue:
        """``block * per_group``, once per kernel, right after the block queries."""
        if per_group not in bases:
            size = arith.ConstantOp(IntegerAttr(per_group, IndexType()))
            start = arith.MuliOp(block, size.result)
            start.result.name_hint = "ws_region"
            anchor = block.owner
            assert isinstance(anchor, Operation)
            while isinstance(anchor.next_op, BlockIdxOp | BlockNumOp):  # after the queries
                anchor = anchor.next_op
            parent = anchor.parent_block()
            assert parent is not None
            parent.insert_ops_after([size, start], anchor)
            bases[per_group] = start.result
        return bases[per_group]

    for use in list(workspace.uses):
        op = use.operation
        if not isinstance(op, WORKSPACE_ACCESSES):
            raise MixWorkspaceError(
                f"@{fn.sym_name.data}: '{op.name}' uses the mix kernel's workspace; only "
                f"{', '.join(c.name for c in WORKSPACE_ACCESSES)} are offset per core group"
            )
        position = use.index + 1
        operands = list(op.operands)
        offset = operands[position]
        assert isinstance(offset.type, IndexType), op.name
        per_group = prod(memref_shape(region)) if isinstance(op, CopyFlatOp) else lead
        moved = arith.AddiOp(base(per_group), offset)
        moved.result.name_hint = "ws_at"
        parent = op.parent_block()
        assert parent is not None
        parent.insert_op_before(moved, op)
        operands[position] = moved.result
        op.operands = operands


def _retype_workspace(fn: func.FuncOp, memref: MemRefType) -> None:
    """Give ``fn``'s last argument (its workspace) type ``memref``."""
    workspace = fn.body.block.args[-1]
    Rewriter.replace_value_with_new_type(workspace, memref).name_hint = workspace.name_hint
    inputs = list(fn.function_type.inputs.data)
    fn.function_type = FunctionType.from_lists(
        [*inputs[:-1], memref], list(fn.function_type.outputs.data)
    )


def workspace_per_group(
    aic: func.FuncOp, aiv: func.FuncOp, launches: Sequence[LaunchOp], groups: int
) -> MemRefType:
    """Give each of the ``groups`` core groups of mix kernel ``aic`` / ``aiv`` (launched by
    ``launches``) a region of its own in the workspace (see the module docstring); returns
    the workspace's new type. Raises :class:`MixWorkspaceError`."""
    region = aic.function_type.inputs.data[-1]
    if not isinstance(region, MemRefType) or scope_of(region) != "GM":
        raise MixWorkspaceError(f"@{aic.sym_name.data}: its last argument is no GM workspace")
    whole = grown(region, groups)
    if groups == 1:
        return whole
    for part in (aic, aiv):
        _offset_accesses(part, region)
        _retype_workspace(part, whole)
    for launch in launches:
        alloc = outer_buffer(launch.args[-1]).owner  # a device loop's: passed in
        if not isinstance(alloc, AllocOp) or alloc.result.uses.get_length() != 1:
            raise MixWorkspaceError(
                f"mix launch of @{aic.sym_name.data}: its workspace is not an allocation of its own"
            )
        retype_buffer(launch.args[-1], whole)
    return whole
