"""A soft all-core barrier's workspaces: a GM kernel argument the host allocates and
zero-fills before each launch (as a mix kernel's workspace is allocated,
:mod:`.mix_workspace`), and a UB buffer of the kernel.

A kernel's strategy emits ``tile.sync_all {mode = "soft"}`` without workspaces (it does
not know its launch's arguments); once the kernel is tiled and its blocks are known,
``tile-kernels`` calls :func:`attach_barrier_workspace`, which

* appends a GM argument of :func:`~tilegraph.dialects.tile.barrier.soft_workspace_type`
  (``blocks x 32`` bytes of ``i32``: Ascend C's ``SyncAll`` needs at least cores x 32 bytes)
  to the kernel, named ``sync_workspace``, and makes it the GM workspace of every soft
  barrier of the kernel;
* allocates the UB workspace (``ubWorkspace``: as many bytes, each core's own) at the
  kernel's entry, ``sync_ub_workspace``, the second operand of every soft barrier, so the
  UB plan (``plan-local-memory``) reserves it beside the strategy's buffers;
* gives every launch of the kernel a ``tile.alloc`` of the GM workspace just before the
  launch (its last argument; :func:`allocate_launch_workspaces`, which allocates any GM
  workspace a strategy appended to its kernel the same way — the dynamic quantisation's
  partial extremes), which ``plan-memory`` places in the host's GM workspace like any
  buffer the launch writes: born and dead at that launch;
* marks the launch to zero-fill it first (:data:`~tilegraph.dialects.tile.barrier.ZERO_FILL_ATTR`,
  the argument's position): Ascend C requires the GM workspace zeroed when ``SyncAll`` runs, and its
  first way is the host's — the runtime clears the allocation (a memset task on the
  launch's stream, ``aclrtMemsetAsync``) before the kernel starts. Done in the kernel
  (its second way: every core zeroes the whole workspace first) a late core would clear
  an early core's arrival. Planned GM is shared over the launches, so without it a
  launch would find the previous user's bytes there — another launch's arrival counters.
  The executors clear the buffer before the launch; the cycle model charges the memset
  as one more task of the launch.

It runs before a mix split, so a mix kernel's own workspace stays its last argument.
:func:`barrier_workspace_bytes` is what the memory report counts of them.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, MemRefType, ModuleOp
from xdsl.ir import SSAValue

from tilegraph.dialects.tile import AllocOp, LaunchOp
from tilegraph.dialects.tile.barrier import SyncAllOp, mark_zero_filled, soft_workspace_type
from tilegraph.dialects.tile.workspace import container_bytes
from tilegraph.lowering.analysis.kernel_attrs import host_ops

WORKSPACE_NAME = "sync_workspace"
UB_WORKSPACE_NAME = "sync_ub_workspace"


def attach_barrier_workspace(module: ModuleOp, fn: func.FuncOp, blocks: int) -> bool:
    """Give ``fn``'s soft barriers that have none their workspaces for ``blocks`` blocks,
    and every launch of ``fn`` in ``module`` the GM one's allocation and zero fill (see
    the module docstring); False when ``fn`` has no such barrier."""
    barriers = [
        op
        for op in fn.walk()
        if isinstance(op, SyncAllOp) and op.mode.data == "soft" and op.workspace is None
    ]
    if not barriers:
        return False
    memref = soft_workspace_type(blocks)
    block = fn.body.block
    position = len(block.args)
    arg = block.insert_arg(memref, position)
    arg.name_hint = WORKSPACE_NAME
    fn.function_type = FunctionType.from_lists(
        [*fn.function_type.inputs.data, memref], list(fn.function_type.outputs.data)
    )
    local = AllocOp(soft_workspace_type(blocks, "UB"))
    local.result.name_hint = UB_WORKSPACE_NAME
    local.location = fn.location
    if block.first_op is None:
        block.add_op(local)
    else:
        block.insert_op_before(local, block.first_op)
    for op in barriers:
        op.operands = [arg, local.result]
    allocate_launch_workspaces(module, fn)
    for launch in _launches_of(module, fn):
        mark_zero_filled(launch, position)
    return True


def _launches_of(module: ModuleOp, fn: func.FuncOp) -> list[LaunchOp]:
    name = fn.sym_name.data
    return [
        o for o in host_ops(module) if isinstance(o, LaunchOp) and o.callee.string_value() == name
    ]


def allocate_launch_workspaces(module: ModuleOp, fn: func.FuncOp) -> int:
    """Give every launch of ``fn`` in ``module`` a ``tile.alloc`` (just before it) of each
    trailing argument of ``fn`` the launch does not pass: the GM workspaces a kernel's
    strategy or :func:`attach_barrier_workspace` appended to it, born and dead at that
    launch. Returns the allocations added."""
    args = fn.body.block.args
    added = 0
    for launch in _launches_of(module, fn):
        if len(launch.args) >= len(args):
            continue
        allocs = []
        for arg in args[len(launch.args) :]:
            assert isinstance(arg.type, MemRefType)
            alloc = AllocOp(arg.type)
            alloc.result.name_hint = arg.name_hint
            alloc.location = launch.location
            parent = launch.parent_block()
            assert parent is not None
            parent.insert_op_before(alloc, launch)
            allocs.append(alloc.result)
        launch.operands = [*launch.args, *allocs]
        added += len(allocs)
    return added


def is_barrier_workspace(value: SSAValue, module: ModuleOp) -> bool:
    """``value``, a host buffer, is passed to some launch at a position its callee uses as
    a soft barrier's workspace."""
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    for use in value.uses:
        launch = use.operation
        if not isinstance(launch, LaunchOp):
            continue
        for callee in launch.callees():
            fn = functions.get(callee)
            if fn is None or not fn.body.blocks or use.index >= len(fn.body.block.args):
                continue
            arg = fn.body.block.args[use.index]
            if any(isinstance(u.operation, SyncAllOp) for u in arg.uses):
                return True
    return False


def barrier_workspace_bytes(values: list[SSAValue], module: ModuleOp, alignment: int) -> int:
    """Aligned bytes of the soft barriers' workspaces among the host buffers ``values``."""
    return sum(
        -(-container_bytes(v.type) // alignment) * alignment
        for v in values
        if is_barrier_workspace(v, module)
    )
