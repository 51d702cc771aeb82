"""The host sequence of a lowered module read as launches and buffer lifetimes, and the
in-place rule: what ``plan-memory`` plans and its checker verifies.

A host function (``tile.signature``) is a straight line of ``tile.constant``, GM buffers
(``tile.alloc`` before planning, ``tile.view`` after), ``tile.launch @k(inputs...,
outputs...)``, device loops (``tile.loop_launches``: its launches are steps too, and every
buffer it touches lives across all of them), ``tile.reshape_view`` (an alias of a buffer:
its uses are uses of the source buffer, ``alias-reshapes``), ``tile.slice_view`` (a part
of a buffer, the same: ``place-concat``) and ``func.return``.
:func:`analyse_host` numbers the launches 0..L-1 (the return is point L) and gives each
buffer its lifetime: *born* at the launch that writes it first (an argument position the
callee writes: ``tile.write`` in a macro body, a tile op's destination in a tiled one),
*dead* after its last use; a returned buffer lives to L. A buffer of no bytes (an empty
tensor, which no launch writes) is born where it is defined.

:func:`in_place_pair` states when an output may take the exact place of an input: at a
launch of a single-output kernel of elementwise graph ops (fusion kinds ELEMWISE and
BROADCAST), for an input of the output's memref type whose last use is that launch
(see :mod:`tilegraph.lowering.transforms.plan_memory` for why that is safe).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp, StringAttr
from xdsl.ir import BlockArgument, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from tilegraph.dialects.graph import ConstantOp as GraphConstantOp
from tilegraph.dialects.graph import FusionKind, GraphOp, op_class
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.tile import LaunchOp, LoopLaunchesOp, TileOp, WriteOp
from tilegraph.dialects.tile.workspace import (
    ReshapeViewOp,
    SliceViewOp,
    StridedViewOp,
    container_bytes,
    gm_base,
)
from tilegraph.lowering.analysis.kernel_attrs import OPS_ATTR, SIGNATURE_ATTR

IN_PLACE_KINDS = frozenset({FusionKind.ELEMWISE, FusionKind.BROADCAST})


class MemoryPlanError(DiagnosticException, ValueError):
    """The host sequence cannot be planned, or a plan is wrong (the message says where).

    A diagnostic, so that ``tilegraph-opt --verify-diagnostics`` reports it and goes on
    with the next chunk of a split input."""


@dataclass(eq=False)
class Buffer:
    """A workspace tensor of the host sequence and its lifetime (launch indices)."""

    value: SSAValue
    memref: MemRefType
    size: int
    """Container bytes (unaligned)."""
    defined_at: int
    """Launches before its definition (where an unused buffer is placed)."""
    start: int | None = None
    end: int | None = None
    returned: bool = False

    @property
    def name(self) -> str:
        return f"%{self.value.name_hint or '?'}"

    @property
    def birth(self) -> int:
        return self.defined_at if self.start is None else self.start

    @property
    def death(self) -> int:
        return self.birth if self.end is None else self.end

    def live_at(self, point: int) -> bool:
        return self.birth <= point <= self.death


@dataclass(eq=False)
class Step:
    """One launch: the workspace buffers it reads and those it writes first."""

    index: int
    launch: LaunchOp
    callee: str
    in_place_kernel: bool
    """The callee is a single-output kernel of elementwise graph ops."""
    reads: list[Buffer] = field(default_factory=list)
    born: list[Buffer] = field(default_factory=list)

    def dying(self) -> list[Buffer]:
        """Inputs whose last use is this launch (and that are not returned)."""
        return [b for b in self.reads if b.death == self.index and not b.returned]


@dataclass
class HostSequence:
    """The straight-line host function read as launches and buffer lifetimes."""

    fn: func.FuncOp
    steps: list[Step]
    buffers: list[Buffer]

    @property
    def end(self) -> int:
        """The return point (after the last launch)."""
        return len(self.steps)

    def point(self, index: int) -> str:
        if index == self.end:
            return "func.return"
        return f"launch #{index} (@{self.steps[index].callee})"


def host_functions(module: ModuleOp) -> list[func.FuncOp]:
    """The lowered host functions (those with ``tile.signature``)."""
    return [f for f in module.ops if isinstance(f, func.FuncOp) and SIGNATURE_ATTR in f.attributes]


def host_function(module: ModuleOp, name: str | None = None) -> func.FuncOp:
    """The host function ``name``, else the only one, else ``@main``."""
    hosts = host_functions(module)
    if not hosts:
        raise MemoryPlanError(
            "plan-memory: the module has no lowered host function (a func.func with "
            "tile.signature); run lower-graph-to-kernels first"
        )
    if name is None and len(hosts) == 1:
        return hosts[0]
    wanted = name or "main"
    for fn in hosts:
        if fn.sym_name.data == wanted:
            return fn
    raise MemoryPlanError(f"plan-memory: no lowered host function @{wanted} in the module")


def kernel_op_names(kernel: func.FuncOp) -> list[str]:
    """The graph ops a kernel computes: ``tile.ops`` after tiling, else its macro body."""
    recorded = kernel.attributes.get(OPS_ATTR)
    if isinstance(recorded, StringAttr):
        return [name for name in recorded.data.split(",") if name]
    return [
        op.name
        for op in kernel.walk()
        if isinstance(op, GraphOp | TransDataOp) and not isinstance(op, GraphConstantOp)
    ]


def is_elementwise_kernel(kernel: func.FuncOp) -> bool:
    """Every op the kernel computes is elementwise (fusion kind ELEMWISE or BROADCAST)."""
    names = kernel_op_names(kernel)
    if not names:
        return False
    for name in names:
        try:
            kind = op_class(name).FACTS.fusion
        except KeyError:  # layout.trans_data, or an op of another dialect
            return False
        if kind not in IN_PLACE_KINDS:
            return False
    return True


def written_arguments(kernel: func.FuncOp) -> frozenset[int]:
    """Positions of the kernel arguments it writes (its outputs, in destination style)."""
    if not kernel.body.blocks:
        raise MemoryPlanError(
            f"plan-memory: @{kernel.sym_name.data} has no body; cannot tell which of its "
            "arguments it writes"
        )
    entry = kernel.body.block
    found: set[int] = set()
    for op in kernel.walk():
        target = op.buffer if isinstance(op, WriteOp) else None
        if target is None and isinstance(op, TileOp):
            target = op.written()
        if target is not None:
            target = gm_base(target)  # a matmul result written through a strided view
        if isinstance(target, BlockArgument) and target.block is entry:
            found.add(target.index)
    return frozenset(found)


@dataclass
class KernelFacts:
    """The module's functions by name, with the facts the planner asks of each (cached)."""

    functions: dict[str, func.FuncOp]
    _written: dict[str, frozenset[int]] = field(default_factory=dict)
    _in_place: dict[str, bool] = field(default_factory=dict)

    @classmethod
    def of(cls, module: ModuleOp) -> KernelFacts:
        return cls({f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)})

    def get(self, launch: LaunchOp, host: func.FuncOp) -> tuple[str, frozenset[int], bool]:
        """(callee name, argument positions it writes, whether it may write in place)."""
        name = launch.callee.string_value()
        for part in launch.callees():  # a mix launch: its AIC and AIV functions
            kernel = self.functions.get(part)
            if kernel is None:
                raise MemoryPlanError(
                    f"plan-memory: @{host.sym_name.data} launches @{part}, which is not a "
                    "function of the module"
                )
            if part not in self._written:
                written = self._written[part] = written_arguments(kernel)
                self._in_place[part] = len(written) == 1 and is_elementwise_kernel(kernel)
        if not launch.is_mix:
            return name, self._written[name], self._in_place[name]
        written = frozenset().union(*(self._written[p] for p in launch.callees()))
        return name, written, False


def analyse_host(
    fn: func.FuncOp, kernels: KernelFacts, is_buffer: Callable[[SSAValue], bool]
) -> HostSequence:
    """Read ``fn``'s launches and the lifetimes of the values ``is_buffer`` selects."""
    where = f"plan-memory: @{fn.sym_name.data}"
    buffers: dict[SSAValue, Buffer] = {}
    steps: list[Step] = []

    parts: set[SSAValue] = set()
    """Slices of a buffer (``tile.slice_view``): a launch writing one writes a part of it."""

    def launched(op: LaunchOp, args: Sequence[SSAValue], in_loop: bool) -> None:
        name, written, in_place_kernel = kernels.get(op, fn)
        # in a device loop no output takes an input's place: the next iteration reads it;
        # nor does a slice's writer (its output starts inside a buffer, not at an input)
        into_part = any(args[i] in parts for i in written if i < len(args))
        step = Step(len(steps), op, name, in_place_kernel and not in_loop and not into_part)
        for position, arg in enumerate(args):
            buffer = buffers.get(arg)
            if buffer is None:
                continue
            if position in written and buffer.start is None:
                buffer.start = step.index
                step.born.append(buffer)
            elif buffer.start is None:
                raise MemoryPlanError(
                    f"{where}: {buffer.name} is read by launch #{step.index} (@{name}) "
                    "before any launch writes it"
                )
            elif position not in written and buffer not in step.reads:
                step.reads.append(buffer)
            buffer.end = step.index
        steps.append(step)

    for op in fn.body.block.ops:
        if isinstance(op, LaunchOp):
            launched(op, op.args, False)
        elif isinstance(op, LoopLaunchesOp):
            # every buffer of a device loop lives across all of it: an iteration reads what
            # the one before wrote (states, counter and stacks are written by the loop)
            first = len(steps)
            used = [buffers[v] for v in op.operands if v in buffers]
            for buffer in used:
                if buffer.start is None:
                    buffer.start = first
            outer: dict[SSAValue, SSAValue] = dict(
                zip(op.body.block.args, op.operands, strict=True)
            )
            for launch in op.launches():
                launched(launch, [outer[a] for a in launch.args], True)
            for buffer in used:
                buffer.end = max(len(steps) - 1, first)
        elif isinstance(op, func.ReturnOp):
            for value in op.operands:
                buffer = buffers.get(value)
                if buffer is not None:
                    if buffer.start is None:
                        raise MemoryPlanError(
                            f"{where}: {buffer.name} is returned but no launch writes it"
                        )
                    buffer.returned = True
        elif isinstance(op, ReshapeViewOp | SliceViewOp | StridedViewOp) and op.src in buffers:
            # an alias is (part of) its source's bytes: a read through it is a read of the
            # source, which so lives to the alias's last reader; a write through a slice is
            # a write of the source (its first one is the source's birth)
            buffers[op.result] = buffers[op.src]
            if isinstance(op, SliceViewOp | StridedViewOp) or op.src in parts:
                parts.add(op.result)
        else:
            for value in op.operands:
                if value in buffers:
                    raise MemoryPlanError(
                        f"{where}: {buffers[value].name} is used by '{op.name}'; the host "
                        "sequence may only launch kernels on it and return it"
                    )
            for result in op.results:
                if is_buffer(result):
                    memref = result.type
                    assert isinstance(memref, MemRefType)
                    size = container_bytes(memref)
                    # an empty tensor has no bytes for a launch to write: it is whole
                    # where it is defined (a kernel with empty results runs no launch)
                    born = len(steps) if size == 0 else None
                    buffers[result] = Buffer(result, memref, size, len(steps), born)
    for buffer in buffers.values():
        if buffer.returned:
            buffer.end = len(steps)
    return HostSequence(fn, steps, list(dict.fromkeys(buffers.values())))


def in_place_pair(step: Step) -> tuple[Buffer, Buffer] | None:
    """(input, output) when the launch's output may take the place of an input: the first
    dying input of the output's memref type, at a single-output elementwise kernel."""
    if not step.in_place_kernel or len(step.born) != 1:
        return None
    output = step.born[0]
    for candidate in step.dying():
        if candidate.memref == output.memref:
            return candidate, output
    return None


def is_in_place_pair(step: Step, a: Buffer, b: Buffer) -> bool:
    """Whether ``a`` and ``b`` may coincide at ``step`` (either order): one is the output
    of a single-output elementwise kernel, the other a dying input of the same type."""
    if not step.in_place_kernel or a.memref != b.memref:
        return False
    dying = step.dying()
    return (a in dying and b in step.born) or (b in dying and a in step.born)
