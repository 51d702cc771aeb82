"""Multi-core kernels: which block (core) an instance of a kernel is, and how many run.

A ``tile.launch`` with ``blocks = n`` starts ``n`` instances of the kernel, one per core;
inside, ``tile.block_idx`` is the instance's index (0 .. n-1) and ``tile.block_num`` is
``n``. The ``split-cores`` pass uses them to give each block its share of a parallel
loop's iterations. The xDSL interpreter runs the blocks of a launch one after the other;
the cycle model runs them side by side on the preset's cores.

In a *mix launch* (:class:`~tilegraph.dialects.tile.host.LaunchOp` with an ``aiv``
function) a core group is one AIC and ``r`` AIVs (``aiv_blocks = r * blocks``; 910B: r = 2).
On both parts ``tile.block_idx`` is the *group* index and ``tile.block_num`` the group
count (``blocks``), so that an AIC and the AIVs of its group share out the work alike;
``tile.sub_block_idx`` tells the AIVs of one group apart (0 .. r-1). A group has ``r``
AIVs only where its AIV part asks which one it is (:func:`aivs_per_group`), else one
(Ascend C's ``KERNEL_TYPE_MIX_AIC_1_1`` beside ``_1_2``).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType
from xdsl.irdl import irdl_op_definition, result_def, traits_def
from xdsl.traits import Pure

from tilegraph.dialects.tile.base import TileOp


class BlockQueryOp(TileOp):
    """Base of the block queries: an index result, no operands."""

    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__(result_types=[IndexType()])


@irdl_op_definition
class BlockIdxOp(BlockQueryOp):
    """``%b = tile.block_idx``: the index of this kernel instance among its launch's blocks."""

    name = "tile.block_idx"


@irdl_op_definition
class BlockNumOp(BlockQueryOp):
    """``%n = tile.block_num``: how many blocks the launch runs."""

    name = "tile.block_num"


@irdl_op_definition
class SubBlockIdxOp(BlockQueryOp):
    """``%s = tile.sub_block_idx``: which of its group's AIVs this instance of a mix
    kernel's AIV part is: AIV instance ``v`` of a launch with ``aiv_blocks = r * blocks``
    is sub-block ``v % r`` of group ``v // r``. Ascend C's ``GetSubBlockIdx()`` (0 / 1 on the
    two AIVs of an A2 core group), AscendNPU-IR HIVM's ``hivm.get_sub_block_idx``. A scalar
    (pipe S) query like ``tile.block_idx``; only an AIV function may ask it (the AIC and a
    plain vector kernel's blocks have no group mates: ``verify-target`` rejects it there)."""

    name = "tile.sub_block_idx"


CORE_OPS = (BlockIdxOp, BlockNumOp, SubBlockIdxOp)


def aivs_per_group(aiv: func.FuncOp, aiv_per_aic: int) -> int:
    """The AIVs each core group of a mix launch of the AIV part ``aiv`` runs: the chip's
    ``aiv_per_aic`` where the part reads ``tile.sub_block_idx`` (its tiling shared each
    tile out between them), else 1 — AIVs that cannot tell themselves apart would all do
    the same work, and a part that updates GM in place (a recurrent layer's state, read
    and rewritten each step) would race with its twin."""
    if any(isinstance(op, SubBlockIdxOp) for op in aiv.walk()):
        return aiv_per_aic
    return 1
