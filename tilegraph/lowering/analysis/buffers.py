"""What a kernel's on-chip buffers are used for: accesses, and multi-buffer slots.

Shared by the passes and models that reason about buffers over time: ``plan-local-memory``
(addresses), ``multi-buffer`` (ping-pong slots), ``inject-sync`` (dependences between
pipes), the pipe-queue checker and the cycle model.

A buffer is the result of a ``tile.alloc`` at the kernel's entry. A buffer whose alloc
carries ``multi_buffer = n`` (n >= 2) has ``n`` slots: the iteration ``i`` (counted from 0)
of its *slot loop* — the innermost ``scf.for`` that encloses every use of the buffer —
uses slot ``i mod n``. Accesses to different slots do not depend on one another; that is
what lets the load of tile ``i + 1`` run while tile ``i`` is computed.

When buffers live (:func:`live_ranges`: positions in the kernel's entry block, a use in a
loop covering the whole loop) is what ``plan-local-memory`` shares bytes by, and what its
checker re-derives.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, i64
from xdsl.ir import Block, Operation, SSAValue

from tilegraph.dialects.tile import ON_CHIP, AllocOp, TileOp, scope_of
from tilegraph.dialects.tile.base import buffer_bytes
from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.kernel_attrs import kernel_unit

MULTI_BUFFER_ATTR = "multi_buffer"


def aligned_bytes(hw: HardwareModel, scope: str, nbytes: int) -> int:
    """``nbytes`` rounded up to the scope's address alignment (``hw.alignment``, 32 B when
    the scope has none): the size a buffer takes in its scope, for the tiling's budgets and
    the on-chip planner alike."""
    align = hw.alignment.get(scope, 32)
    return -(-nbytes // align) * align


def buffer_slots(buffer: SSAValue) -> int:
    """How many slots the buffer has (1 unless its alloc is marked ``multi_buffer``)."""
    alloc = buffer.owner
    if isinstance(alloc, AllocOp):
        marked = alloc.attributes.get(MULTI_BUFFER_ATTR)
        if isinstance(marked, IntegerAttr):
            return max(1, marked.value.data)
    return 1


def mark_multi_buffer(alloc: AllocOp, slots: int) -> None:
    alloc.attributes[MULTI_BUFFER_ATTR] = IntegerAttr(slots, i64)


def enclosing_loops(op: Operation) -> list[scf.ForOp]:
    """The ``scf.for`` ops around ``op``, outermost first."""
    loops: list[scf.ForOp] = []
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, scf.ForOp):
            loops.append(parent)
        parent = parent.parent_op()
    return loops[::-1]


def slot_loop(buffer: SSAValue) -> scf.ForOp | None:
    """The innermost loop enclosing every use of ``buffer`` (None: a use outside loops)."""
    common: list[scf.ForOp] | None = None
    for use in buffer.uses:
        loops = enclosing_loops(use.operation)
        if common is None:
            common = loops
        else:
            n = 0
            while n < min(len(common), len(loops)) and common[n] is loops[n]:
                n += 1
            common = common[:n]
    return common[-1] if common else None


ADDRESS_ATTR = "address"
ADDRESSES_ATTR = "addresses"
"""Set by ``plan-local-memory``: a buffer's byte address in its scope, one per slot."""


def placement(buffer: SSAValue) -> tuple[str, tuple[int, ...], int] | None:
    """(scope, address of each slot, bytes) of a planned on-chip buffer, else None."""
    alloc = buffer.owner
    if not isinstance(alloc, AllocOp):
        return None
    many = alloc.attributes.get(ADDRESSES_ATTR)
    one = alloc.attributes.get(ADDRESS_ATTR)
    if isinstance(many, DenseArrayBase):
        starts = tuple(int(v) for v in many.get_values())
    elif isinstance(one, IntegerAttr):
        starts = (one.value.data,)
    else:
        return None
    return scope_of(buffer), starts, buffer_bytes(buffer)


def may_alias(a: SSAValue, b: SSAValue) -> bool:
    """Whether two buffers may share bytes: the same value, or planned at overlapping
    addresses of one scope (any slots)."""
    if a is b:
        return True
    pa, pb = placement(a), placement(b)
    if pa is None or pb is None or pa[0] != pb[0]:
        return False
    return any(x < y + pb[2] and y < x + pa[2] for x in pa[1] for y in pb[1])


def accesses(op: Operation) -> tuple[tuple[SSAValue, ...], tuple[SSAValue, ...]]:
    """(buffers read, buffers written) by a tile op; nothing for other ops."""
    if not isinstance(op, TileOp):
        return (), ()
    written = op.written()
    return op.read(), (() if written is None else (written,))


def tile_ops(region_op: Operation) -> Iterator[TileOp]:
    """The tile ops inside ``region_op``, in program order."""
    for op in region_op.walk():
        if isinstance(op, TileOp):
            yield op


def tiled_kernels(module: Operation) -> list[func.FuncOp]:
    """The kernel functions of ``module`` that run on the cube or the vector unit."""
    return [
        fn
        for fn in module.walk()
        if isinstance(fn, func.FuncOp) and kernel_unit(fn) in ("cube", "vector")
    ]


def on_chip_buffers(fn: Operation) -> list[SSAValue]:
    """The on-chip buffers (L1, L0A, L0B, L0C, UB) ``fn`` allocates, in program order."""
    return [
        op.result for op in fn.walk() if isinstance(op, AllocOp) and scope_of(op.result) in ON_CHIP
    ]


def top_level_op(op: Operation, block: Block) -> Operation:
    """``op``'s ancestor (or ``op`` itself) whose parent block is ``block``."""
    while op.parent_block() is not block:
        parent = op.parent_op()
        if parent is None:
            raise ValueError(f"'{op.name}' is not nested in the given block")
        op = parent
    return op


def live_ranges(fn: func.FuncOp) -> dict[SSAValue, tuple[int, int]]:
    """When each on-chip buffer of kernel ``fn`` is live: a closed range of positions of
    the ops of ``fn``'s entry block.

    A use nested in a loop (or any region) counts at the position of the outermost op
    around it in the entry block: a buffer used anywhere in a loop is live across the whole
    loop, every iteration, since a later iteration may read what an earlier one left in it.
    A buffer is live from its first use to its last (not from its ``tile.alloc``: the
    allocations all sit at the entry); one never used is live at its alloc alone. Two
    buffers whose ranges do not meet may share bytes."""
    entry = fn.body.block
    position = {op: i for i, op in enumerate(entry.ops)}
    ranges: dict[SSAValue, tuple[int, int]] = {}
    for buffer in on_chip_buffers(fn):
        users = [use.operation for use in buffer.uses] or [buffer.owner]
        points = [position[top_level_op(user, entry)] for user in users]  # type: ignore[arg-type]
        ranges[buffer] = (min(points), max(points))
    return ranges
