"""``lower-graph-to-kernels``: every fused group and every lone op becomes a kernel.

The graph function becomes a *host sequence*: GM buffers for the function's arguments,
``tile.constant`` for weights (their data already in storage layout), a ``tile.alloc`` per
kernel result and one ``tile.launch`` per kernel, in dataflow order. Each kernel is a
``func.func`` over GM memrefs (inputs, then outputs) whose body states what it computes with
the same graph ops between ``tile.read`` and ``tile.write`` (see
:mod:`tilegraph.lowering.conversion.kernel_body`) — runnable as is by the interpreter, and
the input of ``tile-kernels``.

Each kernel is marked with the unit that will run it (``tile.kernel = "cube" | "vector" |
"host"``), from the tiling strategies' verdict; a host kernel carries the reason
(``tile.host_reason``). The graph function's tensor signature is kept as ``tile.signature``
so that executors can lay inputs out and read outputs back in origin layout.

A fused group that no tiling strategy can run as one kernel is split into one kernel per op
(its intermediates then go through GM) rather than sent to the host whole. A matmul group
whose elementwise epilogue runs across a reshape of its result's rows (``fuse-ops``; the
epilogue tile does not fit a small preset's UB) is first split in two instead: the matmul
with its views up to the reshape, and the elementwise ops as one vector kernel
(``peeled-epilogues``). A claimed attention group the flash kernel refuses (a reason only
its tiling finds: several outputs, Q read transposed, ...) is first split back into the
three kernels it was claimed from: Q·Kᵀ with what the softmax reads, the softmax, and ·V
with the rest (``unclaimed-attention``); a part no strategy runs is split per op in turn.

A ``graph.loop`` whose trip count is known at compile time becomes a device loop, a
``tile.loop_launches`` of its body's kernels (:mod:`.loop_launches`); any other stays a
host kernel whose reason says why.

Zero-size tensors are decided before any strategy runs (:mod:`.graph_to_kernels_empty`):
a kernel whose results are all empty because an input is empty is no launch (its results
are empty GM allocations); one that reads an empty tensor and computes a non-empty one,
or makes an empty result from non-empty inputs (a NonZero that finds nothing), is a host
kernel.

Statistics: ``kernels``, ``cube-kernels``, ``vector-kernels``, ``host-kernels``,
``groups-whole``, ``split-groups``, ``peeled-epilogues``, ``unclaimed-attention``,
``device-loops``, ``empty-kernels`` (no launch: all results empty); and a remark per
group not lowered whole and per host kernel (:mod:`.graph_to_kernels_remarks`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import UNKNOWN_LOC, FunctionType, LocationAttr, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tilegraph.dialects.graph import ConstantOp, FusedOp, GraphOp
from tilegraph.dialects.graph.control_flow import LoopOp
from tilegraph.dialects.graph.provenance import locate
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import (
    AllocOp,
    LaunchOp,
    ReadOp,
    WriteOp,
    tensor_buffer_type,
)
from tilegraph.dialects.tile import ConstantOp as TileConstantOp
from tilegraph.formats.dims import UNKNOWN
from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.kernel_attrs import HOST_REASON_ATTR, KERNEL_ATTR, SIGNATURE_ATTR
from tilegraph.lowering.conversion.graph_to_kernels_empty import empty_host_reason, no_launch
from tilegraph.lowering.conversion.graph_to_kernels_operands import (
    compile_time_parameters,
    grid_indices,
    inlined_constant,
    read_as_data,
)
from tilegraph.lowering.conversion.graph_to_kernels_remarks import (
    remark_host_kernel,
    remark_split_group,
)
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import PassStatistics, start_pass

if TYPE_CHECKING:
    from tilegraph.lowering.conversion.tiling import KernelVerdict
from tilegraph.target import pin_target, target_of


class LoweringError(ValueError):
    """The graph cannot be lowered (symbolic shapes, an op outside the graph dialect)."""


def _buffer_type(value: SSAValue):
    t = value.type
    if not isinstance(t, TensorType):
        raise LoweringError(f"value %{value.name_hint or '?'} of type {t} is not a tensor")
    try:
        return tensor_buffer_type(t)
    except ValueError as e:
        where = f"%{value.name_hint}" if value.name_hint else "a value"
        why = (
            "a dim is known only at run time (a data-dependent size, such as a Loop's scan output)"
            if any(d == UNKNOWN for d in t.origin_shape)
            else "symbolic shapes are bound at run time by a Session (tilegraph.Session)"
        )
        raise LoweringError(f"{where}: {e}: {why}") from None


class _KernelNames:
    def __init__(self, module: ModuleOp):
        self.taken = {op.sym_name.data for op in module.walk() if isinstance(op, func.FuncOp)}

    def fresh(self, base: str) -> str:
        name, n = base, 1
        while name in self.taken:
            name = f"{base}_{n}"
            n += 1
        self.taken.add(name)
        return name


def _op_label(op: Operation) -> str:
    return op.name.split(".", 1)[-1]


def build_kernel(
    name: str,
    inputs: list[SSAValue],
    input_tensors: list[SSAValue],
    ops: list[Operation],
    outputs: list[SSAValue],
    constants: Sequence[tuple[SSAValue, ConstantOp]] = (),
    location: LocationAttr = UNKNOWN_LOC,
) -> func.FuncOp:
    """A kernel function computing ``outputs`` from ``inputs`` with clones of ``ops``.

    ``input_tensors[i]`` is the value ``ops`` read for ``inputs[i]`` (a fused body's block
    argument, or the outer value itself for a lone op). ``constants`` are (value read,
    constant) pairs cloned into the body instead of being passed in GM: axes and shapes
    that a kernel needs at compile time. The function and the ops of its body that are not
    clones, and its arguments, get ``location``: that of the graph op(s) the kernel
    implements."""
    in_types = [_buffer_type(v) for v in inputs]
    out_types = [_buffer_type(v) for v in outputs]
    block = Block(arg_types=[*in_types, *out_types])
    mapping: dict[SSAValue, SSAValue] = {}
    for inner, constant in constants:
        clone = constant.clone()
        clone.output.name_hint = inner.name_hint
        block.add_op(clone)
        mapping[inner] = clone.output
    for arg, inner, outer in zip(block.args[: len(inputs)], input_tensors, inputs, strict=True):
        arg.name_hint = outer.name_hint
        read = ReadOp(arg, inner.type)  # type: ignore[arg-type]
        read.result.name_hint = inner.name_hint
        block.add_op(read)
        mapping[inner] = read.result
    for op in ops:
        clone = op.clone(value_mapper=mapping)
        for old, new in zip(op.results, clone.results, strict=True):
            mapping[old] = new
            new.name_hint = old.name_hint
        block.add_op(clone)
    for i, value in enumerate(outputs):
        out_arg = block.args[len(inputs) + i]
        out_arg.name_hint = (value.name_hint or f"out{i}") + "_out"
        block.add_op(WriteOp(mapping.get(value, value), out_arg))
    block.add_op(func.ReturnOp())
    kernel = func.FuncOp(name, FunctionType.from_lists([*in_types, *out_types], []), Region(block))
    locate([kernel], location)
    for arg in block.args:
        arg.location = location
    return kernel


@dataclass(frozen=True)
class _Kernel:
    name: str
    inputs: list[SSAValue]
    input_tensors: list[SSAValue]
    ops: list[Operation]
    outputs: list[SSAValue]
    constants: list[tuple[SSAValue, ConstantOp]]
    location: LocationAttr
    """The graph op's (a fused group's: its members')."""

    @property
    def read(self) -> list[SSAValue]:
        """Every value it reads: from GM, then those cloned in as constants."""
        return [*self.inputs, *(inner for inner, _ in self.constants)]


def _kernel_of(
    op: Operation, names: _KernelNames, outer_of: Mapping[SSAValue, SSAValue] | None = None
) -> _Kernel:
    """The kernel of a fused group or a lone op. ``outer_of``: for a member of a group that
    is split, the group's operand behind each of its block arguments, so that a constant
    the group reads (a slice's bounds) is cloned into the member's kernel as it would be
    into the group's, not passed in GM where no strategy can read it."""
    if isinstance(op, FusedOp):
        body = op.body.block
        yielded = list(op.yield_op.operands)
        name = names.fresh(op.kernel_name.data)
        members = [m for m in body.ops if m is not op.yield_op]
        outer, inner = list(op.inputs), list(body.args)
        outputs: list[SSAValue] = yielded
    else:
        name = names.fresh(f"{_op_label(op)}_{len(names.taken)}")
        members, outer, inner = [op], list(op.operands), list(op.operands)
        outputs = list(op.results)
    return _assembled(name, members, outer, inner, outputs, outer_of, op.location)


def _kernel_of_ops(
    members: list[Operation],
    outputs: list[SSAValue],
    names: _KernelNames,
    outer_of: Mapping[SSAValue, SSAValue] | None,
    location: LocationAttr,
) -> _Kernel:
    """The kernel of a part of a group that is split (``members`` in program order): it
    reads what they use and do not compute, by value."""
    defined = {r for m in members for r in m.results}
    used = [v for m in members for v in m.operands if v not in defined]
    operands = list(dict.fromkeys(used))
    labels = list(dict.fromkeys(_op_label(m) for m in members))
    name = names.fresh("_".join(["fused", *labels[:4], str(len(names.taken))]))
    return _assembled(name, members, operands, operands, outputs, outer_of, location)


def _assembled(
    name: str,
    members: list[Operation],
    outer: Sequence[SSAValue],
    inner: Sequence[SSAValue],
    outputs: list[SSAValue],
    outer_of: Mapping[SSAValue, SSAValue] | None,
    location: LocationAttr,
) -> _Kernel:
    """A kernel's inputs: compile-time parameters and small constants cloned in, the rest
    read from GM."""
    outer_of = outer_of or {}
    parameters, grids = compile_time_parameters(members), grid_indices(members)
    inlined = [
        None
        if read_as_data(i, members) and i not in parameters
        else inlined_constant(outer_of.get(o, o), i in parameters, i in grids)
        for o, i in zip(outer, inner, strict=True)
    ]
    pairs = list(zip(outer, inner, inlined, strict=True))
    constants = [(i, c) for _, i, c in pairs if c is not None]
    kept = [(o, i) for o, i, c in pairs if c is None]
    return _Kernel(
        name, [o for o, _ in kept], [i for _, i in kept], members, outputs, constants, location
    )


def _classified(kernel: _Kernel, hw: HardwareModel) -> func.FuncOp:
    return _judged(kernel, hw)[0]


def _judged(kernel: _Kernel, hw: HardwareModel) -> tuple[func.FuncOp, KernelVerdict]:
    """The kernel function marked with its unit (and host reason), and the verdict of the
    strategy asked (none is asked of a kernel that touches a zero-size tensor: see
    :mod:`.graph_to_kernels_empty`)."""
    from tilegraph.lowering.conversion.tiling import KernelVerdict, kernel_verdict

    kernel_fn = build_kernel(
        kernel.name,
        kernel.inputs,
        kernel.input_tensors,
        kernel.ops,
        kernel.outputs,
        kernel.constants,
        kernel.location,
    )
    empty = empty_host_reason(kernel.inputs, kernel.ops, kernel.outputs)
    verdict = KernelVerdict("host", empty, "empty") if empty else kernel_verdict(kernel_fn, hw)
    kernel_fn.attributes[KERNEL_ATTR] = StringAttr(verdict.unit)
    if verdict.reason:
        kernel_fn.attributes[HOST_REASON_ATTR] = StringAttr(verdict.reason)
    return kernel_fn, verdict


def _is_host(kernel_fn: func.FuncOp) -> bool:
    unit = kernel_fn.attributes.get(KERNEL_ATTR)
    return isinstance(unit, StringAttr) and unit.data == "host"


def _launch(
    kernel_fn: func.FuncOp,
    kernel: _Kernel,
    results: Sequence[SSAValue],
    values: dict[SSAValue, SSAValue],
    host: Block,
    kernels: list[func.FuncOp],
    stats: PassStatistics,
) -> None:
    """Allocate the kernel's results in GM and launch it from the host sequence; a
    kernel whose results are all empty, made so by an empty input, is no launch
    (``empty-kernels``)."""
    if no_launch(kernel.read, results):
        stats.add("empty-kernels")
        _allocate(results, values, host, kernel.location)
        return
    unit = kernel_fn.attributes[KERNEL_ATTR]
    assert isinstance(unit, StringAttr)
    stats.add("kernels")
    stats.add(f"{unit.data}-kernels")
    if unit.data == "host":
        remark_host_kernel(stats, kernel_fn, kernel.ops)
    kernels.append(kernel_fn)
    args: list[SSAValue] = [values[v] for v in kernel.inputs]
    args.extend(_allocate(results, values, host, kernel.location))
    launch = LaunchOp(kernel.name, args)
    launch.location = kernel.location
    host.add_op(launch)


def _allocate(
    results: Sequence[SSAValue],
    values: dict[SSAValue, SSAValue],
    host: Block,
    location: LocationAttr,
) -> list[SSAValue]:
    """A GM allocation per kernel result, in the host sequence, standing for it."""
    allocs: list[SSAValue] = []
    for result in results:
        alloc = AllocOp(_buffer_type(result))
        alloc.location = location
        alloc.result.name_hint = result.name_hint
        host.add_op(alloc)
        values[result] = alloc.result
        allocs.append(alloc.result)
    return allocs


def _peeled(
    kernel: _Kernel,
    names: _KernelNames,
    outer_of: Mapping[SSAValue, SSAValue],
    hw: HardwareModel,
) -> list[tuple[_Kernel, func.FuncOp]] | None:
    """A matmul group with elementwise ops across its result's row reshape, as two kernels
    (the matmul up to the reshape, then the elementwise ops) when both run on a unit;
    else None."""
    from tilegraph.lowering.analysis.shared_views import rows_result

    anchors = [m for m in kernel.ops if isinstance(m, GraphOp) and m.FACTS.heavy]
    chain = rows_result(anchors[0]) if len(anchors) == 1 else None
    if chain is None or chain.ops[-1] not in kernel.ops:
        return None
    cut = kernel.ops.index(chain.ops[-1]) + 1
    if cut == len(kernel.ops):
        return None
    head, tail = kernel.ops[:cut], kernel.ops[cut:]
    parts = []
    for members, outputs in ((head, [chain.base]), (tail, kernel.outputs)):
        part = _kernel_of_ops(members, outputs, names, outer_of, kernel.location)
        parts.append((part, _classified(part, hw)))
    if any(_is_host(fn) for _, fn in parts):
        for part, _ in parts:
            names.taken.discard(part.name)
        return None
    return parts


def _unclaimed_attention(
    kernel: _Kernel,
    names: _KernelNames,
    outer_of: Mapping[SSAValue, SSAValue],
    hw: HardwareModel,
) -> list[tuple[_Kernel, func.FuncOp]] | None:
    """A claimed attention group as the three kernels it was claimed from (the softmax's
    operands' producers in the group, the softmax, the rest), each part that no strategy
    runs split per op; None when the group holds no attention pattern."""
    from tilegraph.lowering.analysis.attention_pattern import attention_in

    pattern = attention_in(kernel.ops)
    if pattern is None:
        return None
    members = set(kernel.ops)
    feeding: set[Operation] = set()
    pending = [v.owner for v in pattern.softmax.operands]
    while pending:
        op = pending.pop()
        if isinstance(op, Operation) and op in members and op not in feeding:
            feeding.add(op)
            pending.extend(v.owner for v in op.operands)
    probs = [pattern.softmax, *pattern.guard]  # the softmax with its NaN guard tail
    groups = [
        [op for op in kernel.ops if op in feeding],
        probs,
        [op for op in kernel.ops if op not in feeding and op not in probs],
    ]
    parts: list[tuple[_Kernel, func.FuncOp]] = []
    for group in groups:
        part, part_fn = _part_of(group, kernel, names, outer_of, hw)
        if _is_host(part_fn) and len(group) > 1:
            names.taken.discard(part.name)
            parts.extend(_runs(group, kernel, names, outer_of, hw))
        else:
            parts.append((part, part_fn))
    return parts


def _part_of(
    group: Sequence[Operation],
    kernel: _Kernel,
    names: _KernelNames,
    outer_of: Mapping[SSAValue, SSAValue],
    hw: HardwareModel,
) -> tuple[_Kernel, func.FuncOp]:
    """The kernel of ``group``, ops of the split ``kernel`` in program order, classified:
    it writes what the kernel outputs or an op outside the group reads."""
    inside = set(group)
    outputs: list[SSAValue] = [
        r
        for op in group
        for r in op.results
        if r in kernel.outputs or any(u.operation not in inside for u in r.uses)
    ]
    part = _kernel_of_ops(list(group), outputs, names, outer_of, kernel.location)
    return part, _classified(part, hw)


def _runs(
    ops: Sequence[Operation],
    kernel: _Kernel,
    names: _KernelNames,
    outer_of: Mapping[SSAValue, SSAValue],
    hw: HardwareModel,
) -> list[tuple[_Kernel, func.FuncOp]]:
    """The ops of a group that is split, as runs in program order, each the longest that
    a strategy still tiles from where the last one ended (an op no strategy runs is a host
    kernel of its own): when the global mean after them sends ConvNeXt's last epilogue to
    be split, its bias add and layer-scale multiply stay one vector kernel."""
    parts: list[tuple[_Kernel, func.FuncOp]] = []
    start = 0
    while start < len(ops):
        end = start + 1
        alone = _kernel_of(ops[start], names, outer_of)
        best = (alone, _classified(alone, hw))
        while not _is_host(best[1]) and end < len(ops):
            longer = _part_of(ops[start : end + 1], kernel, names, outer_of, hw)
            if _is_host(longer[1]):
                names.taken.discard(longer[0].name)
                break
            names.taken.discard(best[0].name)
            best, end = longer, end + 1
        parts.append(best)
        start = end
    return parts


def lower_function(
    fn: func.FuncOp, module: ModuleOp, names: _KernelNames, stats: PassStatistics
) -> None:
    """Rewrite one graph function into a host sequence, adding its kernels to ``module``."""
    old_block = fn.body.block
    signature = fn.function_type
    arg_types = [_buffer_type(a) for a in old_block.args]
    host = Block(arg_types=arg_types)
    values: dict[SSAValue, SSAValue] = {}
    for old, new in zip(old_block.args, host.args, strict=True):
        new.name_hint = old.name_hint
        values[old] = new
    kernels: list[func.FuncOp] = []
    for op in old_block.ops:
        if isinstance(op, func.ReturnOp):
            returned = [values[v] for v in op.operands]
            host.add_op(func.ReturnOp(*returned))
            continue
        if isinstance(op, ConstantOp):
            constant = TileConstantOp(op.value, _buffer_type(op.output))
            constant.location = op.location
            constant.result.name_hint = op.output.name_hint
            host.add_op(constant)
            values[op.output] = constant.result
            continue
        if not isinstance(op, GraphOp | FusedOp | TransDataOp):
            raise LoweringError(f"'{op.name}' cannot be lowered to kernels")
        inputs = op.inputs if isinstance(op, FusedOp) else op.operands
        if no_launch(inputs, op.results):  # nothing to compute: GE runs no task either
            stats.add("empty-kernels")
            _allocate(op.results, values, host, op.location)
            continue
        loop_reason = None
        if isinstance(op, LoopOp):
            from tilegraph.lowering.conversion.loop_launches import lower_loop

            lowered = lower_loop(
                op, module, values, lambda f, m: lower_function(f, m, names, stats), _buffer_type
            )
            if not isinstance(lowered, str):
                lowered.add_to(host, kernels, values)
                stats.add("device-loops")
                continue
            loop_reason = lowered
        kernel = _kernel_of(op, names)
        kernel_fn, verdict = _judged(kernel, target_of(module).hw)
        if loop_reason is not None:  # why the loop is no device loop, not "no lowering"
            kernel_fn.attributes[HOST_REASON_ATTR] = StringAttr(loop_reason)
        if isinstance(op, FusedOp) and _is_host(kernel_fn) and len(kernel.ops) > 1:
            # A group no strategy can tile is split: its ops become kernels of their own
            # (their intermediates go through GM), so that each may still run on a unit.
            names.taken.discard(kernel.name)
            for arg, outer in zip(op.body.block.args, op.inputs, strict=True):
                values[arg] = values[outer]
            outer_of: dict[SSAValue, SSAValue] = dict(
                zip(op.body.block.args, op.inputs, strict=True)
            )
            hw = target_of(module).hw
            parts = _peeled(kernel, names, outer_of, hw)
            action = "peeled-epilogue"
            if parts is not None:
                stats.add("peeled-epilogues")
            elif (parts := _unclaimed_attention(kernel, names, outer_of, hw)) is not None:
                stats.add(action := "unclaimed-attention")
            else:
                stats.add("split-groups")
                action, parts = "split", _runs(kernel.ops, kernel, names, outer_of, hw)
            refusal = (verdict.strategy, verdict.reason or "")
            fns = [fn for part, fn in parts if not no_launch(part.read, part.outputs)]
            remark_split_group(stats, kernel.name, kernel.ops, op.location, refusal, action, fns)
            for part, kernel_fn in parts:
                _launch(kernel_fn, part, part.outputs, values, host, kernels, stats)
            for result, inner in zip(op.results, kernel.outputs, strict=True):
                values[result] = values[inner]
            continue
        if isinstance(op, FusedOp) and not _is_host(kernel_fn):
            stats.add("groups-whole")
        _launch(kernel_fn, kernel, op.results, values, host, kernels, stats)
    for op in list(host.ops):  # a device loop's weights went into its body as constants
        if isinstance(op, TileConstantOp) and not op.result.uses:
            host.erase_op(op)
    result_types = [values[v].type for v in old_block.last_op.operands]  # type: ignore[union-attr]
    new_fn = func.FuncOp(
        fn.sym_name.data, FunctionType.from_lists(arg_types, result_types), Region(host)
    )
    new_fn.location = fn.location
    for old, new in zip(old_block.args, host.args, strict=True):
        new.location = old.location
    for key, value in fn.attributes.items():
        if key not in ("sym_name", "function_type"):
            new_fn.attributes[key] = value
    new_fn.attributes[SIGNATURE_ATTR] = signature
    rewriter = Rewriter()
    rewriter.replace_op(fn, [new_fn, *kernels])


@register_pass
@dataclass(frozen=True)
class LowerGraphToKernelsPass(ModulePass):
    """Turn fused groups and lone ops into kernels over GM buffers and a host sequence."""

    name = "lower-graph-to-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        pin_target(op, f"pass '{self.name}'")  # kernels are classified for the target's preset
        names = _KernelNames(op)
        for fn in [f for f in op.ops if isinstance(f, func.FuncOp)]:
            if SIGNATURE_ATTR in fn.attributes or fn.attributes.get(KERNEL_ATTR) is not None:
                continue  # already lowered
            if any(isinstance(t, TensorType) for t in fn.function_type.inputs.data) or any(
                isinstance(o, GraphOp | FusedOp) for o in fn.body.block.ops
            ):
                lower_function(fn, op, names, stats)
