"""``place-concat``: a concat runs no kernel; its producers write their results in place,
into the concat's output (GE's no-task concat).

After ``lower-graph-to-kernels`` a ``graph.concat`` that no fusion group absorbed is a
vector kernel of its own, which reads each input from GM and stores it at its offset in
the output::

    %a = tile.alloc : memref<1x1x8x8x16xf32, "GM">
    tile.launch @conv_a(%x, %wa, %a) : ...
    %b = tile.alloc : memref<1x2x8x8x16xf32, "GM">
    tile.launch @conv_b(%x, %wb, %b) : ...
    %c = tile.alloc : memref<1x3x8x8x16xf32, "GM">
    tile.launch @concat(%a, %b, %c) : ...

When each input is a contiguous run of the output, this pass gives each input the memory
of its run, so its producer writes it where the concat would have copied it::

    %c = tile.alloc : memref<1x3x8x8x16xf32, "GM">
    %a = tile.slice_view %c[0] : memref<1x3x8x8x16xf32, "GM"> to memref<1x1x8x8x16xf32, "GM">
    tile.launch @conv_a(%x, %wa, %a) : ...
    %b = tile.slice_view %c[1024] : memref<1x3x8x8x16xf32, "GM"> to memref<1x2x8x8x16xf32, "GM">
    tile.launch @conv_b(%x, %wb, %b) : ...

GE does the same (docs/tile-level.md, "Concats are placements", cites the source): its
fusion engine marks such a concat no-task with no-padding continuous inputs and an output
that reuses them.

**When** (the kernel). The callee's body is one ``tile.read`` of each input argument, one
``graph.concat`` of the reads (each once) and one ``tile.write`` of it to the last
argument, all arguments plain static GM memrefs of one element type. Its storage axis is
the concat axis when every tensor is stored as its origin (ND, NCHW: row-major), or C1 when
the tensors are NCHW stored as NC1HWC0 and every input's C is a multiple of C0 (GE's
condition; a C off the C0 grid has padding lanes between the inputs). Every storage dim
before that axis is 1 (batch 1 for a channel concat), so input ``i`` is the run of the
output's elements after those of inputs ``0..i-1``.

**When** (the host). The launch is a plain one in the host function's body, its output a
``tile.alloc``; each input is a ``tile.alloc`` that appears once among the concat's
arguments, is not returned, is written before the concat (by one launch, or through the
slices of an earlier placement: a concat of concats is one buffer), is written by no launch
after it, and is used by nothing but launches, ``tile.reshape_view`` / ``tile.slice_view``
aliases and the concat (a device loop may write its operands). Its readers, before or
after the concat, read the slice: the same bytes the copy held, as the output is written
by no one else.

**Refused** (the kernel stays), one statistic each: ``refused-argument`` (an input is a
function argument), ``refused-constant`` (a ``tile.constant``), ``refused-view`` (another
view), ``refused-repeated`` (an input given twice), ``refused-returned``,
``refused-writers`` (no writer, or several), ``refused-written-after``, ``refused-loop`` (a
use in a device loop or by another op), ``refused-output`` (the output is no
``tile.alloc``), ``refused-layout`` (a concat off the C0 grid or in
another storage format), ``refused-strided`` (a storage dim before the axis is not 1: the
runs are strided; placing them would need the producers to write through strides).

Downstream a slice is (part of) its source, as an alias is
(:func:`~tilegraph.dialects.tile.workspace.alias_base`): ``plan-memory`` gives the output
one place, born at its first producer and live to its last reader through any slice; a
slice's writer never writes in place over an input.

Statistics: ``placed`` (concat launches removed), ``kernels-removed`` (kernel functions no
launch runs any more), ``refused-<reason>`` (concat kernels kept, by the reasons above).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from tilegraph.dialects.graph.data_movement import ConcatOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import AllocOp, ConstantOp, LaunchOp, ReadOp, WriteOp
from tilegraph.dialects.tile.workspace import ReshapeViewOp, SliceViewOp
from tilegraph.formats.format import Format
from tilegraph.lowering.analysis.host_liveness import KernelFacts, host_functions
from tilegraph.lowering.transforms.alias_reshapes import (
    plain_gm,
    remove_unlaunched,
    row_major_tensor,
)
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import start_pass


def _storage_axis(concat: ConcatOp) -> int | str:
    """The storage axis the concat joins its inputs on, or ``"layout"`` when the inputs are
    not whole runs along one storage axis (see the module docstring)."""
    types = [v.type for v in (*concat.inputs, concat.concat_result)]
    if not all(isinstance(t, TensorType) and t.is_static for t in types):
        return "layout"
    tensors = [t for t in types if isinstance(t, TensorType)]
    axis = concat.attr("axis")
    assert isinstance(axis, int)
    rank = len(tensors[0].origin_shape)
    axis %= rank
    if all(row_major_tensor(t) for t in tensors):
        return axis
    five_hd = all(
        t.origin_format == Format.NCHW and t.storage_format == Format.NC1HWC0 for t in tensors
    )
    if five_hd and axis == 1:
        c0 = tensors[-1].storage_shape[-1]
        assert isinstance(c0, int)
        if all(isinstance(c := t.origin_shape[1], int) and c % c0 == 0 for t in tensors):
            return 1  # C1
    return "layout"


def concat_offsets(kernel: func.FuncOp) -> list[int] | str | None:
    """Where each input argument of a concat-only kernel starts in its output (elements):
    None when the kernel is no such kernel, the refusal reason when the runs are not
    contiguous (``"layout"``, ``"strided"``)."""
    if not kernel.body.blocks or len(kernel.body.block.args) < 2:
        return None
    *inputs, output = kernel.body.block.args
    if not all(plain_gm(a.type) for a in kernel.body.block.args):
        return None
    reads: dict[SSAValue, SSAValue] = {}  # read result -> argument
    concats: list[ConcatOp] = []
    writes: list[WriteOp] = []
    for op in kernel.body.block.ops:
        if isinstance(op, ReadOp) and op.buffer in inputs and op.buffer not in reads.values():
            reads[op.result] = op.buffer
        elif isinstance(op, ConcatOp):
            concats.append(op)
        elif isinstance(op, WriteOp):
            writes.append(op)
        elif not isinstance(op, func.ReturnOp):
            return None
    if len(concats) != 1 or len(writes) != 1 or len(reads) != len(inputs):
        return None
    concat, write = concats[0], writes[0]
    if write.buffer is not output or write.value is not concat.concat_result:
        return None
    if [reads.get(v) for v in concat.inputs] != inputs:
        return None  # each argument once, in order
    axis = _storage_axis(concat)
    if isinstance(axis, str):
        return axis
    out_shape = output.type.get_shape()  # type: ignore[attr-defined]
    if any(d != 1 for d in out_shape[:axis]):
        return "strided"
    offsets, start = [], 0
    for arg in inputs:
        assert isinstance(arg.type, MemRefType)
        offsets.append(start)
        start += prod(arg.type.get_shape())
    return offsets if start == prod(out_shape) else None


def _aliases(value: SSAValue) -> Iterator[SSAValue]:
    """``value`` and every host alias of it (``tile.reshape_view`` / ``tile.slice_view``
    chains): the values whose accesses touch its bytes."""
    yield value
    for use in value.uses:
        if isinstance(use.operation, ReshapeViewOp | SliceViewOp):
            yield from _aliases(use.operation.result)


@dataclass
class _Host:
    """One host function and the facts the placement asks of its launches."""

    fn: func.FuncOp
    facts: KernelFacts

    @property
    def block(self) -> Block:
        return self.fn.body.block

    def written(self, launch: LaunchOp) -> frozenset[int]:
        return self.facts.get(launch, self.fn)[1]

    def refusal(self, value: SSAValue, concat: LaunchOp) -> str | None:
        """Why the concat input ``value`` cannot become a slice of the output (None: it
        can; see the module docstring)."""
        owner = value.owner
        if not isinstance(owner, Operation):
            return "argument"
        if isinstance(owner, ConstantOp):
            return "constant"
        if not isinstance(owner, AllocOp):
            return "view"
        if list(concat.args).count(value) != 1:
            return "repeated"
        writers: list[Operation] = []
        for alias in _aliases(value):
            for use in alias.uses:
                user = use.operation
                if isinstance(user, ReshapeViewOp | SliceViewOp):
                    continue
                if user.parent_block() is not self.block:
                    return "loop"
                if isinstance(user, func.ReturnOp):
                    return "returned"
                if not isinstance(user, LaunchOp):
                    return "loop"
                if user is concat:
                    continue
                if use.index in self.written(user):
                    if concat.is_before_in_block(user):
                        return "written-after"
                    writers.append(user)
        # one writer of the whole, or the slices' writers of an earlier placement
        direct = [w for w in writers if any(a is value for a in w.operands)]
        sliced = any(isinstance(u.operation, SliceViewOp) for u in value.uses)
        return None if (len(direct) == 1 and not sliced) or (sliced and not direct) else "writers"

    def place(self, concat: LaunchOp, offsets: list[int]) -> None:
        """Give each input of ``concat`` its run of the output; remove the launch."""
        *inputs, output = concat.args
        allocs = [v.owner for v in inputs]
        assert all(isinstance(a, AllocOp) for a in allocs)
        first = min(allocs, key=self.block.get_operation_index)  # type: ignore[arg-type]
        out_alloc = output.owner
        assert isinstance(out_alloc, Operation) and isinstance(first, Operation)
        out_alloc.detach()
        self.block.insert_op_before(out_alloc, first)
        for value, alloc, offset in zip(inputs, allocs, offsets, strict=True):
            assert isinstance(value.type, MemRefType) and isinstance(alloc, AllocOp)
            view = SliceViewOp(output, offset, value.type)
            view.result.name_hint = value.name_hint
            view.location = alloc.location
            self.block.insert_op_before(view, alloc)
            value.replace_all_uses_with(view.result)
            alloc.detach()
            alloc.erase()
        concat.detach()
        concat.erase()


def place_concats(
    fn: func.FuncOp, kernels: dict[str, func.FuncOp], facts: KernelFacts
) -> tuple[list[str], dict[str, int]]:
    """Place ``fn``'s concats; (the callee of each launch removed, refusals by reason)."""
    host = _Host(fn, facts)
    placed: list[str] = []
    refused: dict[str, int] = {}
    for launch in [op for op in fn.body.block.ops if isinstance(op, LaunchOp)]:
        kernel = kernels.get(launch.callee.string_value())
        found = None if launch.is_mix or kernel is None else concat_offsets(kernel)
        if found is None:
            continue
        output = launch.args[-1]
        reason = found if isinstance(found, str) else None
        if reason is None and not isinstance(output.owner, AllocOp):
            reason = "output"
        for value in launch.args[:-1]:
            reason = reason or host.refusal(value, launch)
        if reason is not None:
            refused[reason] = refused.get(reason, 0) + 1
            continue
        assert isinstance(found, list)
        placed.append(launch.callee.string_value())
        host.place(launch, found)
    return placed, refused


@register_pass
@dataclass(frozen=True)
class PlaceConcatPass(ModulePass):
    """Concats whose inputs are contiguous runs of the output become placements: each
    producer writes into the output through a ``tile.slice_view``, the launch is gone."""

    name = "place-concat"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        kernels = {f.sym_name.data: f for f in op.ops if isinstance(f, func.FuncOp)}
        facts = KernelFacts.of(op)
        placed: list[str] = []
        for fn in host_functions(op):
            names, refused = place_concats(fn, kernels, facts)
            placed += names
            for reason, count in refused.items():
                stats.add(f"refused-{reason}", count)
        stats.add("placed", len(placed))
        stats.add("kernels-removed", remove_unlaunched(op, kernels, placed))
