"""Mix kernels: a tiled cube kernel with a vector epilogue split into AIC and AIV functions.

On a decoupled preset (``HardwareModel.coupled`` False: 910B's AIC + AIV groups) the cube's
accumulator cannot reach UB: fixpipe writes L0C -> GM or L0C -> L1 only. ``tile-kernels``
first tiles a cube kernel as on a coupled core (``tile.fixpipe`` L0C -> UB, then the vector
chain), then :func:`split_mix_kernel` splits it, as AscendNPU-IR's
``insert-workspace-for-mix-cv`` and mix-kernel split do, into

* ``@k_mix_aic``: the kernel without its UB ops; the fixpipe into UB becomes a fixpipe into
  slot ``s`` of a GM *workspace*, between a wait for "slot ``s`` is free" and a set of
  "slot ``s`` is ready";
* ``@k_mix_aiv``: the kernel without its L1 / L0 ops; the fixpipe becomes a wait for
  "slot ``s`` is ready", a copy of the slot GM -> UB, and a set of "slot ``s`` is free".

Both keep the loops around the fixpipe (ops of the other unit and what only they used are
dropped), so group ``b``'s AIC and AIV instances visit the same tiles in the same order and
compute the same slot: the parity of the tile's position in the loop nest. The workspace
has :data:`WORKSPACE_SLOTS` slots (CV pipelining: the cube fills one slot while the vector
side drains the other). Flags (:mod:`tilegraph.dialects.tile.cross_core`): "ready" is
``READY_FLAG + s`` (AIC -> AIV), "free" ``FREE_FLAG + s`` (AIV -> AIC); the AIV sets both
"free" flags once at its start and the AIC waits for them once at its end, so every set is
waited for. The AIC side's flags are issued on FIX, the AIV side's on MTE2 — the pipes of
the workspace accesses they order, in program order with them.

A strategy with several hand-overs in both directions (the flash attention kernel,
:mod:`.attention`) writes them itself — the workspace argument, the copies through it and
the flags — in one function marked :data:`EXPLICIT_ATTR`; the split then only keeps each
unit's ops and its side of the flags.

The workspace is an extra GM argument of both functions (the last), allocated by the host
before each launch (``tile.alloc``; ``plan-memory`` places it in the GM workspace like any
intermediate tensor), of shape ``(2, *accumulator tile)``. The launch becomes a mix launch
(``tile.launch @k_mix_aic(...) {aiv = @k_mix_aiv, aiv_blocks = r}``, ``r`` the preset's
AIVs per group, :attr:`~tilegraph.hardware.HardwareModel.aiv_per_aic`).

Where the group has two AIVs (910B) the tiling has already shared the tile's epilogue out
between them (:mod:`.sub_blocks`: after the bridge, per share a ``tile.copy_flat`` of its
rows out of the whole tile on UB, then its epilogue, guarded by ``tile.sub_block_idx``).
The AIV part then waits for "ready" where the bridge was, each share's copy reads its rows
straight from the slot (GM -> UB), and "free" is set once after the copies: the AIC's waits
for "free" take one set from each AIV of the group (Ascend C's mode 2,
:mod:`tilegraph.dialects.tile.cross_core`), and its "ready" reaches both.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

from tilegraph.dialects.tile import (
    AllocOp,
    BlockIdxOp,
    BlockNumOp,
    CopyFlatOp,
    FixpipeOp,
    GetValueOp,
    LaunchOp,
    StridedViewOp,
    SubBlockIdxOp,
    SyncAllOp,
    SyncBlockSetOp,
    SyncBlockWaitOp,
    TileOp,
    memref_shape,
    scope_of,
    scoped_memref,
)
from tilegraph.dialects.tile.base import CUBE_SCOPES
from tilegraph.dialects.tile.cores import aivs_per_group
from tilegraph.dialects.tile.loop import insert_for_launch
from tilegraph.lowering.analysis.kernel_attrs import KERNEL_ATTR, LOOP_ID_ATTR, MIX_ATTR

WORKSPACE_SLOTS = 2
"""Slots of a mix kernel's workspace (AscendNPU-IR's default for CV pipelining)."""
READY_FLAG = 0
"""Cross-core flag ``READY_FLAG + slot``: the AIC wrote the slot (AIC -> AIV)."""
FREE_FLAG = 2
"""Cross-core flag ``FREE_FLAG + slot``: the AIV has read the slot (AIV -> AIC)."""
EXPLICIT_ATTR = "tile.mix_explicit"
"""On a tiled kernel whose strategy placed its own workspace hand-overs and cross-core
flags (the flash attention kernel, :mod:`.attention`): the split only sorts its ops by
unit (:func:`split_mix_kernel`)."""


class MixSplitError(ValueError):
    """The kernel has a shape the split does not handle (the message says which)."""


def _touches(op: Operation, scopes: frozenset[str]) -> bool:
    return any(isinstance(v.type, MemRefType) and scope_of(v) in scopes for v in op.operands) or (
        isinstance(op, AllocOp) and scope_of(op.result) in scopes
    )


def needs_split(fn: func.FuncOp) -> bool:
    """Whether a tiled kernel uses the cube's buffers and UB both."""
    scopes = {scope_of(op.result) for op in fn.walk() if isinstance(op, AllocOp)}
    return bool(scopes & CUBE_SCOPES) and "UB" in scopes


ALTERNATE_ATTR = "tile.mix_alternate"
"""On a tiled kernel whose consecutive hand-overs in one loop body take alternate workspace
slots (each counts as a tile of its own, :func:`_slot`): a recurrent step's gates. Opt-in:
unmarked kernels keep one slot per iteration of the loops around the fixpipe."""


def _bridges(fn: func.FuncOp) -> list[FixpipeOp]:
    return [op for op in fn.walk() if isinstance(op, FixpipeOp) and scope_of(op.dst) == "UB"]


def _enclosing_loops(op: Operation) -> list[scf.ForOp]:
    loops: list[scf.ForOp] = []
    parent = op.parent_op()
    while isinstance(parent, scf.ForOp):
        loops.append(parent)
        parent = parent.parent_op()
    return loops[::-1]


def _constant(value: SSAValue) -> int:
    owner = value.owner
    if not isinstance(owner, arith.ConstantOp) or not isinstance(owner.value, IntegerAttr):
        raise MixSplitError("a mix kernel's loops around its fixpipe need constant bounds")
    return owner.value.value.data


Rank = tuple[int, int]
"""A bridge's place among the bridges of its block (the ones one iteration runs in turn)
and their count."""


def _ranks(bridges: list[FixpipeOp], alternate: bool) -> dict[FixpipeOp, Rank]:
    """Each bridge's :data:`Rank` (taken before any is replaced): its place among its
    block's in a kernel marked :data:`ALTERNATE_ATTR`, else one slot per iteration."""
    if not alternate:
        return dict.fromkeys(bridges, (0, 1))
    siblings: dict[object, list[FixpipeOp]] = {}
    for bridge in bridges:
        siblings.setdefault(bridge.parent_block(), []).append(bridge)
    return {b: (group.index(b), len(group)) for group in siblings.values() for b in group}


def _slot(before: Operation, rank: Rank = (0, 1)) -> tuple[list[Operation], SSAValue]:
    """Ops computing the workspace slot of the tile ``before`` runs in: the parity of the
    tile's row-major position in the nest of loops around it, where the ``count``
    bridges of one loop body (``rank``: this one's place among them) each count as a tile
    of their own — consecutive hand-overs of one iteration (a recurrent step's gates)
    alternate the slots, so the cube fills one while the vector side drains the other."""
    ops: list[Operation] = []

    def const(v: int) -> SSAValue:
        ops.append(arith.ConstantOp(IntegerAttr(v, IndexType())))
        return ops[-1].results[0]

    position: SSAValue | None = None
    for loop in _enclosing_loops(before):
        lb, ub, step = (_constant(v) for v in (loop.lb, loop.ub, loop.step))
        trips = len(range(lb, ub, step))
        iteration: SSAValue = loop.body.block.args[0]
        if lb:
            ops.append(arith.SubiOp(iteration, const(lb)))
            iteration = ops[-1].results[0]
        if step != 1:
            ops.append(arith.DivUIOp(iteration, const(step)))
            iteration = ops[-1].results[0]
        if position is not None:
            ops.append(arith.MuliOp(position, const(trips)))
            ops.append(arith.AddiOp(ops[-1].results[0], iteration))
            iteration = ops[-1].results[0]
        position = iteration
    index, count = rank
    if count > 1 and position is None:
        position = const(index)
    elif count > 1:
        assert position is not None
        ops.append(arith.MuliOp(position, const(count)))
        ops.append(arith.AddiOp(ops[-1].results[0], const(index)))
        position = ops[-1].results[0]
    if position is None:
        return ops, const(0)
    ops.append(arith.RemUIOp(position, const(WORKSPACE_SLOTS)))
    slot = ops[-1].results[0]
    slot.name_hint = "ws_slot"
    return ops, slot


def workspace_type(acc: MemRefType, layout: str) -> MemRefType:
    """The workspace of a mix kernel whose accumulator tile on UB is ``acc``: one slot of
    that tile per leading index (an NC1HWC0 tile's N of 1 becomes the slot axis)."""
    shape = memref_shape(acc)
    slots = (
        [WORKSPACE_SLOTS * shape[0], *shape[1:]]
        if layout == "nc1hwc0"
        else [
            WORKSPACE_SLOTS,
            *shape,
        ]
    )
    return scoped_memref(slots, acc.element_type, "GM")


def add_workspace_argument(fn: func.FuncOp, memref: MemRefType) -> SSAValue:
    """Append the GM workspace argument ``memref`` to kernel ``fn`` (the last argument,
    which :func:`relaunch_mix` allocates)."""
    block = fn.body.block
    arg = block.insert_arg(memref, len(block.args))
    arg.name_hint = "workspace"
    fn.function_type = FunctionType.from_lists(
        [*fn.function_type.inputs.data, memref], list(fn.function_type.outputs.data)
    )
    return arg


def _erase_unit(fn: func.FuncOp, scopes: frozenset[str]) -> None:
    """Drop the tile ops touching ``scopes`` (the other unit's), then what became dead."""
    doomed = [op for op in fn.walk() if isinstance(op, TileOp) and _touches(op, scopes)]
    for op in reversed(doomed):
        if any(r.uses for r in op.results) and not isinstance(op, AllocOp):
            raise MixSplitError(f"'{op.name}' of the other unit has users")
    for op in reversed(doomed):
        if not isinstance(op, AllocOp):
            op.detach()
            op.erase(safe_erase=False)
    for op in doomed:
        if isinstance(op, AllocOp):
            op.detach()
            op.erase(safe_erase=False)
    _dead_code(fn)


def _is_dead(op: Operation) -> bool:
    if isinstance(op, scf.ForOp):
        body = [o for o in op.body.block.ops if not isinstance(o, scf.YieldOp)]
        return not body and not op.results
    pure = type(op).__module__.endswith(".arith") or isinstance(
        op, AllocOp | BlockIdxOp | BlockNumOp | SubBlockIdxOp | StridedViewOp | GetValueOp
    )  # a view of an operand the other part reads is dead here; so is a scalar read of GM
    # whose value only the other part's loads take (a run-time padding value)
    return pure and not any(r.uses for r in op.results)


def _dead_code(fn: func.FuncOp) -> None:
    changed = True
    while changed:
        changed = False
        for op in reversed(list(fn.walk())):
            if op is not fn and _is_dead(op):
                op.detach()
                op.erase(safe_erase=False)
                changed = True


def _drop_other_side_flags(fn: func.FuncOp, core: str) -> None:
    """Drop the cross-core flags the tiling placed itself (a recurrence's back edge, the
    AIV's store of a state the AIC reads) that belong to the other core: the sender of a
    mode's set and the receiver of its wait; an all-core barrier of the vector cores only
    (``tile.sync_all {cores = "aiv"}``) stays on the AIV."""
    sends = "aic_to_aiv" if core == "aic" else "aiv_to_aic"
    for op in list(fn.walk()):
        if isinstance(op, SyncBlockSetOp | SyncBlockWaitOp | SyncAllOp):
            if isinstance(op, SyncAllOp):
                mine = op.cores.data == "all" or core == "aiv"
            else:
                mine = (op.mode.data == sends) == isinstance(op, SyncBlockSetOp)
            if not mine:
                op.detach()
                op.erase()


def _aic_part(fn: func.FuncOp, ws_type: MemRefType, alternate: bool) -> None:
    _drop_other_side_flags(fn, "aic")
    ws = add_workspace_argument(fn, ws_type)
    bridges = _bridges(fn)
    ranks = _ranks(bridges, alternate)
    for bridge in bridges:
        slot_ops, slot = _slot(bridge, ranks[bridge])
        layout = bridge.layout.data
        offsets = list(bridge.offsets)
        offsets = [slot, *offsets[1:]] if layout == "nc1hwc0" else [slot, *offsets]
        out = FixpipeOp(
            bridge.src,
            ws,
            offsets,
            bridge.bias,
            deq=bridge.deq,
            layout=layout,
            relu=bridge.relu is not None and bool(bridge.relu.value.data),
            rows=None if bridge.rows is None else bridge.rows.value.data,
            cols=None if bridge.cols is None else bridge.cols.value.data,
            m=bridge.m,
            n=bridge.n,
        )
        Rewriter.replace_op(
            bridge,
            [
                *slot_ops,
                SyncBlockWaitOp(FREE_FLAG, "aiv_to_aic", "FIX", slot),
                out,
                SyncBlockSetOp(READY_FLAG, "aic_to_aiv", "FIX", slot),
            ],
            [],
        )
    _erase_unit(fn, frozenset(("UB",)))
    ret = fn.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    drain: list[Operation] = []
    for s in range(WORKSPACE_SLOTS):  # the AIV's last "free" sets, so none is left set
        drain.append(SyncBlockWaitOp(FREE_FLAG + s, "aiv_to_aic", "FIX"))
    fn.body.block.insert_ops_before(drain, ret)


def _top_level(op: Operation, block) -> Operation:
    """The op of ``block`` that is or contains ``op``."""
    while op.parent_block() is not block:
        parent = op.parent_op()
        assert parent is not None
        op = parent
    return op


def _aiv_shares(bridge: FixpipeOp, ws: SSAValue, copies: list[CopyFlatOp], rank: Rank) -> None:
    """The AIV's hand-over when the AIVs of a group share the tile (:mod:`.sub_blocks`):
    wait for "ready" where the bridge was, each share's copy reads its part of the slot,
    "free" is set once all copies (whichever ran) are issued."""
    slot_ops, slot = _slot(bridge, rank)
    size = arith.ConstantOp(IntegerAttr(prod(memref_shape(bridge.dst)), IndexType()))
    base = arith.MuliOp(slot, size.result)
    block = bridge.parent_block()
    assert block is not None
    Rewriter.replace_op(
        bridge,
        [*slot_ops, size, base, SyncBlockWaitOp(READY_FLAG, "aic_to_aiv", "MTE2", slot)],
        [],
    )
    reads: list[Operation] = []
    for copy in copies:
        start = arith.AddiOp(base.result, copy.src_offset)
        moved = CopyFlatOp(ws, start.result, copy.dst, copy.dst_offset, copy.count.value.data)
        Rewriter.replace_op(copy, [start, moved], [])
        reads.append(moved)
    order = {op: n for n, op in enumerate(block.ops)}
    last = max((_top_level(read, block) for read in reads), key=order.__getitem__)
    block.insert_op_after(SyncBlockSetOp(FREE_FLAG, "aiv_to_aic", "MTE2", slot), last)


def _aiv_part(fn: func.FuncOp, ws_type: MemRefType, alternate: bool) -> None:
    _drop_other_side_flags(fn, "aiv")
    ws = add_workspace_argument(fn, ws_type)
    bridges = _bridges(fn)
    ranks = _ranks(bridges, alternate)
    for bridge in bridges:
        acc = bridge.dst
        copies = [
            u.operation
            for u in acc.uses
            if isinstance(u.operation, CopyFlatOp) and u.operation.src is acc
        ]
        if copies:
            _aiv_shares(bridge, ws, copies, ranks[bridge])
            continue
        slot_ops, slot = _slot(bridge, ranks[bridge])
        count = prod(memref_shape(acc))
        size = arith.ConstantOp(IntegerAttr(count, IndexType()))
        start = arith.MuliOp(slot, size.result)
        zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
        Rewriter.replace_op(
            bridge,
            [
                *slot_ops,
                size,
                start,
                zero,
                SyncBlockWaitOp(READY_FLAG, "aic_to_aiv", "MTE2", slot),
                CopyFlatOp(ws, start.result, acc, zero.result, count),
                SyncBlockSetOp(FREE_FLAG, "aiv_to_aic", "MTE2", slot),
            ],
            [],
        )
    _erase_unit(fn, CUBE_SCOPES)
    entry = fn.body.block
    first = next((op for op in entry.ops if not isinstance(op, arith.ConstantOp | AllocOp)), None)
    assert first is not None
    start = [SyncBlockSetOp(FREE_FLAG + s, "aiv_to_aic", "MTE2") for s in range(WORKSPACE_SLOTS)]
    entry.insert_ops_before(start, first)


def _number_loops(fn: func.FuncOp) -> None:
    for ordinal, loop in enumerate(op for op in fn.walk() if isinstance(op, scf.ForOp)):
        loop.attributes[LOOP_ID_ATTR] = IntegerAttr(ordinal, 64)


def _replace_by_parts(fn: func.FuncOp, aic: func.FuncOp, aiv: func.FuncOp) -> None:
    aic.attributes[KERNEL_ATTR] = StringAttr("cube")
    aiv.attributes[KERNEL_ATTR] = StringAttr("vector")
    aic.attributes[MIX_ATTR] = StringAttr("aic")
    aiv.attributes[MIX_ATTR] = StringAttr("aiv")
    parent = fn.parent_block()
    assert parent is not None
    parent.insert_ops_before([aic, aiv], fn)
    fn.detach()
    fn.erase()


def _split_explicit(fn: func.FuncOp) -> tuple[func.FuncOp, func.FuncOp, MemRefType]:
    """The split of a kernel that placed its hand-overs itself (:data:`EXPLICIT_ATTR`):
    each part keeps its unit's ops and its side of the flags; the workspace is already
    the last argument."""
    ws_type = fn.function_type.inputs.data[-1]
    assert isinstance(ws_type, MemRefType) and scope_of(fn.body.block.args[-1]) == "GM"
    _number_loops(fn)
    name = fn.sym_name.data
    aic, aiv = fn.clone(), fn.clone()
    aic.sym_name = StringAttr(f"{name}_mix_aic")
    aiv.sym_name = StringAttr(f"{name}_mix_aiv")
    _drop_other_side_flags(aic, "aic")
    _erase_unit(aic, frozenset(("UB",)))
    _drop_other_side_flags(aiv, "aiv")
    _erase_unit(aiv, CUBE_SCOPES)
    _replace_by_parts(fn, aic, aiv)
    return aic, aiv, ws_type


def split_mix_kernel(fn: func.FuncOp) -> tuple[func.FuncOp, func.FuncOp, MemRefType]:
    """Split tiled kernel ``fn`` (replaced in its module) into its AIC and AIV functions;
    returns them and the workspace type. A kernel marked :data:`EXPLICIT_ATTR` (its
    tiling wrote the workspace hand-overs and their flags, and added the workspace as its
    last argument) is split by unit only. Raises :class:`MixSplitError`."""
    if fn.attributes.pop(EXPLICIT_ATTR, None) is not None:
        return _split_explicit(fn)
    bridges = _bridges(fn)
    if not bridges:
        raise MixSplitError("a kernel using cube buffers and UB with no fixpipe into UB")
    # several UB accumulators of one type (a recurrent kernel alternates two) share the
    # workspace: each bridge copies its slot into its own accumulator
    accs = {b.dst.type for b in bridges}
    layouts = {b.layout.data for b in bridges}
    if len(accs) != 1 or len(layouts) != 1:
        raise MixSplitError("a mix kernel whose fixpipes write UB buffers of several types")
    acc = next(iter(accs))
    assert isinstance(acc, MemRefType)
    ws_type = workspace_type(acc, next(iter(layouts)))
    alternate = fn.attributes.pop(ALTERNATE_ATTR, None) is not None
    _number_loops(fn)
    name = fn.sym_name.data
    aic, aiv = fn.clone(), fn.clone()
    aic.sym_name = StringAttr(f"{name}_mix_aic")
    aiv.sym_name = StringAttr(f"{name}_mix_aiv")
    _aic_part(aic, ws_type, alternate)
    _aiv_part(aiv, ws_type, alternate)
    _replace_by_parts(fn, aic, aiv)
    return aic, aiv, ws_type


def relaunch_mix(
    host_ops: Sequence[Operation],
    name: str,
    aic: str,
    aiv: func.FuncOp,
    ws_type: MemRefType,
    aiv_per_aic: int = 1,
) -> int:
    """Turn every launch of ``name`` among ``host_ops`` into a mix launch of ``aic`` /
    ``aiv`` (the AIVs per group :func:`~tilegraph.dialects.tile.cores.aivs_per_group`
    gives of the chip's ``aiv_per_aic``) with a workspace allocated just before it;
    returns how many."""
    per_group = aivs_per_group(aiv, aiv_per_aic)
    count = 0
    for op in list(host_ops):
        if not isinstance(op, LaunchOp) or op.callee.string_value() != name:
            continue
        alloc = AllocOp(ws_type)
        alloc.result.name_hint = "mix_workspace"
        alloc.location = op.location
        workspace = insert_for_launch([alloc], alloc.result, op)  # a device loop's: before it
        launch = LaunchOp(aic, [*op.args, workspace], op.block_count)
        launch.aiv = SymbolRefAttr(aiv.sym_name.data)
        launch.aiv_blocks = IntegerAttr(per_group * op.block_count, i64)
        launch.location = op.location
        block = op.parent_block()
        assert block is not None
        block.insert_ops_before([launch], op)
        op.detach()
        op.erase()
        count += 1
    return count
