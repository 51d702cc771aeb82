"""A soft all-core barrier's GM workspace: a kernel argument the host allocates before each
launch, as a mix kernel's workspace is (:mod:`.mix_workspace`).

A kernel's strategy emits ``tile.sync_all {mode = "soft"}`` without a workspace (it does
not know its launch's arguments); once the kernel is tiled and its blocks are known,
``tile-kernels`` calls :func:`attach_barrier_workspace`, which

* appends a GM argument of :func:`~tilegraph.dialects.tile.barrier.soft_workspace_type`
  (``blocks x 32`` bytes of ``i32``: Ascend C's ``SyncAll`` needs at least cores x 32 bytes)
  to the kernel, named ``sync_workspace``, and makes it the workspace of every soft
  barrier of the kernel;
* gives every launch of the kernel a ``tile.alloc`` of it just before the launch (its
  last argument; :func:`allocate_launch_workspaces`, which allocates any GM workspace a
  strategy appended to its kernel the same way — the dynamic quantisation's partial
  extremes), which ``plan-memory`` places in the host's GM workspace like any buffer
  the launch writes: born and dead at that launch.

It runs before a mix split, so a mix kernel's own workspace stays its last argument.
:func:`barrier_workspace_bytes` is what the memory report counts of them.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, MemRefType, ModuleOp
from xdsl.ir import SSAValue

from tilegraph.dialects.tile import AllocOp, LaunchOp
from tilegraph.dialects.tile.barrier import SyncAllOp, soft_workspace_type
from tilegraph.dialects.tile.workspace import container_bytes

WORKSPACE_NAME = "sync_workspace"


def attach_barrier_workspace(module: ModuleOp, fn: func.FuncOp, blocks: int) -> bool:
    """Give ``fn``'s soft barriers that have none a GM workspace for ``blocks`` blocks, and
    every launch of ``fn`` in ``module`` its allocation (see the module docstring); False
    when ``fn`` has no such barrier."""
    barriers = [
        op
        for op in fn.walk()
        if isinstance(op, SyncAllOp) and op.mode.data == "soft" and op.workspace is None
    ]
    if not barriers:
        return False
    memref = soft_workspace_type(blocks)
    block = fn.body.block
    arg = block.insert_arg(memref, len(block.args))
    arg.name_hint = WORKSPACE_NAME
    fn.function_type = FunctionType.from_lists(
        [*fn.function_type.inputs.data, memref], list(fn.function_type.outputs.data)
    )
    for op in barriers:
        op.operands = [arg]
    allocate_launch_workspaces(module, fn)
    return True


def allocate_launch_workspaces(module: ModuleOp, fn: func.FuncOp) -> int:
    """Give every launch of ``fn`` in ``module`` a ``tile.alloc`` (just before it) of each
    trailing argument of ``fn`` the launch does not pass: the GM workspaces a kernel's
    strategy or :func:`attach_barrier_workspace` appended to it, born and dead at that
    launch. Returns the allocations added."""
    name = fn.sym_name.data
    args = fn.body.block.args
    added = 0
    for launch in [o for o in module.walk() if isinstance(o, LaunchOp)]:
        if launch.callee.string_value() != name or len(launch.args) >= len(args):
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
