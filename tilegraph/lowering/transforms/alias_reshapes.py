"""``alias-reshapes``: a launch of a kernel that only reshapes a row-major tensor becomes a
host-level alias, ``tile.reshape_view``; the kernel and its GM allocation disappear.

After ``lower-graph-to-kernels`` a ``graph.reshape`` / ``flatten`` / ``squeeze`` /
``unsqueeze`` that no fusion group absorbed is a vector kernel of its own, which copies its
input into a new GM buffer::

    %s = tile.alloc : memref<3x128xf32, "GM">
    tile.launch @reshape_2(%r, %s) : memref<3x16x8xf32, "GM">, memref<3x128xf32, "GM">

On a row-major tensor element ``i`` of the result is element ``i`` of the input, so the copy
is pointless. GE runs no task for these ops (they are no-task / deleted ops of its local
engine, docs/tile-level.md cites the source); this pass does the same::

    %s = tile.reshape_view %r : memref<3x16x8xf32, "GM"> to memref<3x128xf32, "GM">

**When.** The callee's body is one ``tile.read`` of its first argument, a chain of
reshape-family graph ops (``graph.constant`` shape operands aside) and one ``tile.write``
of the chain's end to its second argument, every tensor on the way row-major (storage
format and shape those of the origin: no fractal or C0 format, no ``layout.trans_data``),
both arguments plain static GM memrefs. The launch is a plain one (not a mix launch) whose
output is a host ``tile.alloc`` that the host only reads afterwards (launch inputs and
``func.return``; a device loop may write its operands, so a use there keeps the copy).

**Refused** (the copy stays):

* the output is returned and its source (through any aliases) is not a workspace buffer
  (a function argument or a ``tile.constant``) or is returned too: the caller owns each
  returned buffer and the arguments, so they must be distinct memory;
* the source (through any aliases) is written by a later launch or used by a device loop
  (the alias would see the new data where the copy kept the old one).

A view of a ``tile.constant`` is allowed (weights are never written: the second rule).
Downstream, an access through a view is an access of its source
(:func:`~tilegraph.dialects.tile.workspace.reshape_view_base`): ``plan-memory`` extends the
source's lifetime to the alias's last reader (and so never writes an in-place output over
it while the alias is read), the cycle model counts no launch and its L2 replay keys the
alias's accesses by the source.

Statistics: ``aliased`` (launches replaced by a view), ``kernels-removed`` (kernel
functions no launch runs any more).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp, NoneAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass

from tilegraph.dialects.graph import ConstantOp as GraphConstantOp
from tilegraph.dialects.graph.shape_ops import FlattenOp, ReshapeOp, SqueezeOp, UnsqueezeOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import AllocOp, LaunchOp, ReadOp, WriteOp, scope_of
from tilegraph.dialects.tile.workspace import ReshapeViewOp, reshape_view_base
from tilegraph.lowering.analysis.host_liveness import host_functions, written_arguments
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import start_pass

ALIASED_OPS = (ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp)
"""Graph ops that relabel the dims of a row-major tensor and nothing else (a transpose
moves elements: it is not one of them)."""


def row_major_tensor(t: Attribute) -> bool:
    """A static tensor stored as its origin: its bytes are its row-major elements."""
    return (
        isinstance(t, TensorType)
        and t.is_static
        and t.storage_format == t.origin_format
        and t.storage_shape == t.origin_shape
    )


def plain_gm(t: Attribute) -> bool:
    """A static GM memref with no layout (row-major)."""
    return (
        isinstance(t, MemRefType)
        and scope_of(t) == "GM"
        and isinstance(t.layout, NoneAttr)
        and all(d >= 0 for d in t.get_shape())
    )


def is_reshape_kernel(kernel: func.FuncOp) -> bool:
    """``kernel(%in, %out)`` reads ``%in``, reshapes it (reshape-family ops only, every
    tensor row-major) and writes the result to ``%out``: see the module docstring."""
    if not kernel.body.blocks or len(kernel.body.block.args) != 2:
        return False
    source, target = kernel.body.block.args
    if not (plain_gm(source.type) and plain_gm(target.type)):
        return False
    assert isinstance(source.type, MemRefType) and isinstance(target.type, MemRefType)
    if source.type.element_type != target.type.element_type or prod(
        source.type.get_shape()
    ) != prod(target.type.get_shape()):
        return False
    reads = [op for op in kernel.body.block.ops if isinstance(op, ReadOp)]
    writes = [op for op in kernel.body.block.ops if isinstance(op, WriteOp)]
    if len(reads) != 1 or len(writes) != 1 or reads[0].buffer is not source:
        return False
    if writes[0].buffer is not target:
        return False
    chain: set[SSAValue] = {reads[0].result}
    for op in kernel.body.block.ops:
        if isinstance(op, ALIASED_OPS):
            if op.operands[0] not in chain or not row_major_tensor(op.results[0].type):
                return False
            chain.add(op.results[0])
        elif not isinstance(op, GraphConstantOp | ReadOp | WriteOp | func.ReturnOp):
            return False
    return row_major_tensor(reads[0].result.type) and writes[0].value in chain


def _later_uses(value: SSAValue, after: Operation) -> list[tuple[Operation, int]]:
    """(user, operand index) of ``value``'s uses by ops of ``after``'s block after it, and
    by any op of another block (index -1: outside the host sequence)."""
    block = after.parent_block()
    found: list[tuple[Operation, int]] = []
    for use in value.uses:
        user = use.operation
        if user is after:
            continue
        if user.parent_block() is not block:
            found.append((user, -1))
        elif after.is_before_in_block(user):
            found.append((user, use.index))
    return found


@dataclass
class _Host:
    """One host function and what the rewrite asks of it."""

    fn: func.FuncOp
    kernels: dict[str, func.FuncOp]
    _written: dict[str, frozenset[int]]

    def written(self, launch: LaunchOp) -> frozenset[int]:
        """Argument positions the launch writes (all of them for an unknown callee)."""
        found: set[int] = set()
        for name in launch.callees():
            kernel = self.kernels.get(name)
            if kernel is None or not kernel.body.blocks:
                return frozenset(range(len(launch.args)))
            if name not in self._written:
                self._written[name] = written_arguments(kernel)
            found |= self._written[name]
        return frozenset(found)

    def only_read(self, value: SSAValue, after: Operation) -> bool:
        """After ``after``, ``value`` is only read: launch inputs and the return."""
        for user, index in _later_uses(value, after):
            if isinstance(user, func.ReturnOp) and index >= 0:
                continue
            if not isinstance(user, LaunchOp) or index < 0 or index in self.written(user):
                return False
        return True

    def returned(self, value: SSAValue) -> bool:
        """``value`` or an alias of it is returned by the host function."""
        ret = self.fn.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        return any(reshape_view_base(v) is value for v in ret.operands)

    def aliasable(self, launch: LaunchOp) -> bool:
        """The launch may become a ``tile.reshape_view`` (see the module docstring)."""
        kernel = self.kernels.get(launch.callee.string_value())
        if launch.is_mix or kernel is None or not is_reshape_kernel(kernel):
            return False
        source, output = launch.args
        if not isinstance(output.owner, AllocOp) or not self.only_read(output, launch):
            return False
        base = reshape_view_base(source)
        if not self.only_read(base, launch):
            return False
        # the caller owns every returned buffer: a returned alias needs a workspace source
        # that is not returned itself (not an argument, a constant or another result)
        return not self.returned(output) or (
            isinstance(base.owner, AllocOp) and not self.returned(base)
        )


def alias_reshapes(fn: func.FuncOp, kernels: dict[str, func.FuncOp]) -> list[str]:
    """Rewrite ``fn``'s aliasable reshape launches; the callee of each launch rewritten."""
    host = _Host(fn, kernels, {})
    rewritten: list[str] = []
    for launch in [op for op in fn.body.block.ops if isinstance(op, LaunchOp)]:
        if not host.aliasable(launch):
            continue
        source, output = launch.args
        alloc = output.owner
        assert isinstance(alloc, AllocOp) and isinstance(output.type, MemRefType)
        view = ReshapeViewOp(source, output.type)
        view.result.name_hint = output.name_hint
        view.location = alloc.location
        fn.body.block.insert_op_before(view, launch)
        output.replace_all_uses_with(view.result)
        rewritten.append(launch.callee.string_value())
        for gone in (launch, alloc):
            gone.detach()
            gone.erase()
    return rewritten


@register_pass
@dataclass(frozen=True)
class AliasReshapesPass(ModulePass):
    """Launches of reshape-only kernels on row-major tensors become host aliases."""

    name = "alias-reshapes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        kernels = {f.sym_name.data: f for f in op.ops if isinstance(f, func.FuncOp)}
        rewritten = [name for fn in host_functions(op) for name in alias_reshapes(fn, kernels)]
        stats.add("aliased", len(rewritten))
        stats.add("kernels-removed", remove_unlaunched(op, kernels, rewritten))


def remove_unlaunched(module: ModuleOp, kernels: dict[str, func.FuncOp], names: list[str]) -> int:
    """Erase the kernels among ``names`` that no launch of ``module`` runs any more (a
    rewrite removed their launches); how many were erased."""
    launched = {
        name
        for launch in module.walk()
        if isinstance(launch, LaunchOp)
        for name in launch.callees()
    }
    unused = set(names) - launched
    for name in unused:
        kernels[name].detach()
        kernels[name].erase()
    return len(unused)
